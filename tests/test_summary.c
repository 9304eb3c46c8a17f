/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_summary.c - the tools' JSON reader (tools/common/json.c). dkperf
 * bench's statistics are libdkbench's (test_bench_stats.c, test_bench_run.c).
 */
#include <string.h>

#include "check.h"
#include "json.h"


static json_value *parse(const char *text, char *why)
{
    return json_parse(text, strlen(text), why, 128);
}

TEST_CASE(json_reader)
{
    char why[128];
    json_value *v = parse(" {\"a\": [1, -2.5e1, true, null], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\"} ", why);
    CHECK(v != NULL);
    const json_value *a = json_get(v, "a");
    CHECK(a != NULL && a->kind == JSON_ARRAY && a->n == 4);
    CHECK(a->items[1].kind == JSON_NUMBER && a->items[1].number == -25);
    CHECK(a->items[2].kind == JSON_BOOL && a->items[2].boolean);
    CHECK(a->items[3].kind == JSON_NULL);
    CHECK_STR(json_get(v, "s")->string, "x\xc3\xa9\xf0\x9f\x98\x80\n");
    CHECK(json_get(v, "missing") == NULL);
    json_free(v);
    const char *bad[] = {"[1,]", "{\"a\" 1}", "[01]", "\"a\tb\"", "[1] x", "", "[1.]", "\"\\ud800\"",
                         "tru", "{\"a\":1,}", "[-]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = '\0';
        CHECK(parse(bad[i], why) == NULL);
        CHECK_CONTAINS(why, "at byte");
    }
    /* A NUL would cut the string where C reads it: "true\u0000 -x" would
     * match the command "true". Refused, as libdkbench's reader does. */
    why[0] = '\0';
    CHECK(parse("{\"command\": \"true\\u0000 -x\"}", why) == NULL);
    CHECK_CONTAINS(why, "NUL character in a string");
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    CHECK(parse(deep, why) == NULL);
    CHECK_CONTAINS(why, "nested too deep");
}

TEST_MAIN()
