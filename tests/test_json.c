/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_json.c - the common layer's JSON reader and writer (src/common/json.h),
 * which libdkbench's baselines and reports and dkperf's JSON share.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/json.h"

/* Parses text; on failure *why gets "WHAT at byte N". */
static int parse(const char *text, unsigned flags, dk_json *root, char *why, size_t size)
{
    dk_json_error e;
    int rc = dk__json_parse(text, strlen(text), flags, root, &e);
    if (rc != 0)
        snprintf(why, size, "%s at byte %zu", e.what, e.off);
    return rc;
}

/* Whether text is refused, with why naming want. */
static void refused(const char *text, const char *want)
{
    dk_json v;
    char why[160] = "";
    CHECK(parse(text, 0, &v, why, sizeof why) != 0);
    CHECK_CONTAINS(why, want);
    dk__json_free(&v);
}

TEST_CASE(reader_values)
{
    dk_json v;
    char why[160];
    CHECK(parse(" {\"a\": [1, -2.5e1, true, null], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\\/\"} ", 0,
                &v, why, sizeof why) == 0);
    const dk_json *a = dk__json_get(&v, "a");
    CHECK(a != NULL && a->type == DK_JSON_ARR && a->n == 4 && a->kids != NULL);
    CHECK(a->kids[1].type == DK_JSON_NUM && a->kids[1].num == -25);
    CHECK(a->kids[2].type == DK_JSON_BOOL && a->kids[2].b);
    CHECK(a->kids[3].type == DK_JSON_NULL);
    CHECK(a->off == 7 && a->kids[1].off == 11);
    CHECK_STR(dk__json_get(&v, "s")->str, "x\xc3\xa9\xf0\x9f\x98\x80\n/");
    CHECK(dk__json_get(&v, "missing") == NULL);
    CHECK(dk__json_get(a, "a") == NULL); /* not an object */
    dk__json_free(&v);
    dk__json_free(NULL);
}

TEST_CASE(reader_refuses_what_is_not_json)
{
    const char *bad[] = {"[1,]",    "{\"a\" 1}",   "[01]",   "\"a\tb\"",   "[1] x", "",
                         "[1.]",    "\"\\ud800\"", "tru",    "{\"a\":1,}", "[-]",   "[1e]",
                         "\"\\x\"", "{1:2}",       "[\"a\"", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        refused(bad[i], " at byte ");
    refused("[1] x", "data after the end of the document at byte 4");
    refused("{\"a\":1,\"a\":2}", "duplicate member name at byte 7");
    /* A NUL would cut the string where C reads it: "true\u0000 -x" would
     * match the command "true". */
    refused("{\"command\": \"true\\u0000 -x\"}", "NUL character in a string");
    /* The text is UTF-8: a stray continuation byte, an overlong form, a
     * surrogate and a sequence cut short are refused where they start. */
    refused("[\"ab\x80\"]", "invalid UTF-8 in a string at byte 4");
    refused("[\"\xC0\xAF\"]", "invalid UTF-8 in a string at byte 2");
    refused("[\"\xED\xA0\x80\"]", "invalid UTF-8 in a string at byte 2");
    refused("[\"\xE2\x82\"]", "invalid UTF-8 in a string at byte 2");
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    refused(deep, "nested too deeply");
}

/* Duplicate names are found past the size where the reader hashes them. */
TEST_CASE(reader_refuses_duplicates_among_many_members)
{
    size_t n = 1000;
    char *t = malloc(n * 16 + 64), *p = t;
    p += sprintf(p, "{");
    for (size_t i = 0; i < n; i++)
        p += sprintf(p, "%s\"k%zu\":%zu", i ? "," : "", i, i);
    sprintf(p, ",\"k517\":0}");
    char want[64];
    snprintf(want, sizeof want, "duplicate member name at byte %zu", (size_t)(p + 1 - t));
    refused(t, want);
    sprintf(p, ",\"k1000\":0}");
    dk_json v;
    char why[160];
    CHECK(parse(t, 0, &v, why, sizeof why) == 0);
    CHECK(v.n == n + 1 && dk__json_get(&v, "k999")->num == 999);
    dk__json_free(&v);
    free(t);
}

/* A number is JSON however many digits it has, and reads as strtod does;
 * one beyond a double is refused, one below its smallest is 0. */
TEST_CASE(reader_numbers_of_any_length)
{
    char t[300];
    snprintf(t, sizeof t, "[2.%0200d5, 1e-400, -0]", 0);
    dk_json v;
    char why[160];
    CHECK(parse(t, 0, &v, why, sizeof why) == 0);
    CHECK(v.n == 3 && v.kids[0].num == 2 && v.kids[1].num == 0 && v.kids[2].num == 0);
    dk__json_free(&v);
    refused("[1e309]", "number out of range at byte 1");
}

/* With DK_JSON_PACK_NUMBERS an array of numbers and nulls is n doubles
 * (null: NaN); a value of another kind after them makes it values again. */
TEST_CASE(reader_packs_arrays_of_numbers)
{
    const char *t = "{\"x\": [1, null, -3e2], \"y\": [ 4, \"s\"], \"z\": []}";
    dk_json v;
    char why[160];
    CHECK(parse(t, DK_JSON_PACK_NUMBERS, &v, why, sizeof why) == 0);
    const dk_json *x = dk__json_get(&v, "x"), *y = dk__json_get(&v, "y");
    CHECK(x->kids == NULL && x->nums != NULL && x->n == 3);
    CHECK(x->nums[0] == 1 && isnan(x->nums[1]) && x->nums[2] == -300);
    CHECK(dk__json_first_off(t, strlen(t), x) == 7);
    CHECK(y->kids != NULL && y->n == 2 && y->kids[0].type == DK_JSON_NUM && y->kids[0].num == 4);
    CHECK(y->kids[0].off == 30 && y->kids[1].type == DK_JSON_STR);
    CHECK(dk__json_get(&v, "z")->n == 0);
    dk__json_free(&v);
    /* Without the flag every value is a dk_json. */
    CHECK(parse(t, 0, &v, why, sizeof why) == 0);
    x = dk__json_get(&v, "x");
    CHECK(x->kids != NULL && x->kids[1].type == DK_JSON_NULL && x->kids[2].num == -300);
    dk__json_free(&v);
}

/* What the writer makes of s (string) or of v (!string), as a string
 * (malloc'ed). */
static char *written(bool string, const char *s, double v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (string)
        dk__json_string(f, s);
    else
        dk__json_number(f, v);
    CHECK(fclose(f) == 0);
    return buf;
}

static void writes(const char *s, const char *want)
{
    char *got = written(true, s, 0);
    CHECK_STR(got, want);
    /* What is written reads back as the text (U+FFFD for bad bytes). */
    if (s != NULL) {
        dk_json v;
        char why[160];
        CHECK(parse(got, 0, &v, why, sizeof why) == 0);
        CHECK(v.type == DK_JSON_STR);
        dk__json_free(&v);
    }
    free(got);
}

TEST_CASE(writer_strings)
{
    writes(NULL, "null");
    writes("", "\"\"");
    writes("a\"b\\c/", "\"a\\\"b\\\\c/\"");
    writes("\n\r\t\b\f\x01\x1f\x7f", "\"\\n\\r\\t\\u0008\\u000c\\u0001\\u001f\\u007f\"");
    /* C1 and the bidirectional controls are escaped; other text is kept. */
    writes("\xC2\x9B"
           "1m \xE2\x80\xAE"
           "x \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80",
           "\"\\u009b1m \\u202ex \xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"");
    /* Each byte that is not well-formed UTF-8 is one U+FFFD. */
    writes("a\xff"
           "b\xC0\xAF\xE2\x82",
           "\"a\xEF\xBF\xBD"
           "b\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST_CASE(writer_numbers)
{
    const struct {
        double v;
        const char *want;
    } cases[] = {{0, "0"},
                 {-3, "-3"},
                 {123456789012345, "123456789012345"},
                 {1e15, "1000000000000000"},
                 {1e17, "1e+17"},
                 {0.1, "0.10000000000000001"},
                 {-2.5, "-2.5"},
                 {NAN, "null"},
                 {INFINITY, "null"},
                 {-INFINITY, "null"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = written(false, NULL, cases[i].v);
        CHECK_STR(got, cases[i].want);
        free(got);
    }
    /* %.17g reads back to the same double. */
    char *got = written(false, NULL, 1.0 / 3);
    CHECK(strtod(got, NULL) == 1.0 / 3);
    free(got);
}

/* Members as both documents lay them out: compact and with spaces. */
TEST_CASE(writer_members)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    dk__json_string_member(f, "{", "name", ":", "a\"b");
    dk__json_number_member(f, ",", "n", ":", 2.5);
    dk__json_number_member(f, ", ", "nan", ": ", NAN);
    dk__json_key(f, ", ", "k\ny", ": ");
    fputs("[]}", f);
    CHECK(fclose(f) == 0);
    CHECK_STR(buf, "{\"name\":\"a\\\"b\",\"n\":2.5, \"nan\": null, \"k\\ny\": []}");
    /* What is written is JSON, and reads back. */
    dk_json v;
    char why[160];
    CHECK(parse(buf, 0, &v, why, sizeof why) == 0);
    CHECK(v.type == DK_JSON_OBJ);
    dk__json_free(&v);
    free(buf);
}

TEST_MAIN()
