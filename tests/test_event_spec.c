/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_event_spec.c - the event grammar of dkperf.h (dk_event_spec_parse,
 * dk_event_list_next): every form, every error with its position, lists,
 * and what the core and a group make of a spec.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dkperf.h"

static dk_event_spec parse_ok(const char *text)
{
    dk_event_spec sp = {.size = sizeof sp};
    int rc = dk_event_spec_parse(text, strlen(text), &sp);
    if (rc != 0)
        fprintf(stderr, "%s: %s\n", text, dk_last_error());
    CHECK_INT(rc, ==, 0);
    CHECK(sp.text == text);
    CHECK_U64(sp.len, ==, strlen(text));
    return sp;
}

/* text fails to parse, and the message names the position and the cause. */
static void parse_bad(const char *text, const char *position, const char *cause)
{
    dk_event_spec sp = {.size = sizeof sp};
    CHECK_INT(dk_event_spec_parse(text, strlen(text), &sp), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), position);
    CHECK_CONTAINS(dk_last_error(), cause);
    /* The library names no option of the tool. */
    CHECK(strstr(dk_last_error(), "-e") == NULL);
    CHECK(strstr(dk_last_error(), "dkperf ") == NULL);
}

TEST_CASE(names_with_and_without_modifiers)
{
    dk_event_spec sp = parse_ok("cycles");
    CHECK_INT(sp.kind, ==, DK_EVENT_SPEC_NAME);
    CHECK_U64(sp.event_len, ==, 6);
    CHECK_U64(sp.base_len, ==, 6);
    CHECK_INT(sp.modifiers, ==, 0);
    sp = parse_ok("INST_RETIRED.ANY");
    CHECK_U64(sp.event_len, ==, 16);
    sp = parse_ok("cycles:u");
    CHECK_U64(sp.event_len, ==, 6);
    CHECK_U64(sp.base_len, ==, 8);
    CHECK_INT(sp.modifiers, ==, DK_EVENT_MOD_USER);
    sp = parse_ok("instructions:k");
    CHECK_INT(sp.modifiers, ==, DK_EVENT_MOD_KERNEL);
    sp = parse_ok("branch-misses:uk");
    CHECK_INT(sp.modifiers, ==, DK_EVENT_MOD_USER | DK_EVENT_MOD_KERNEL);
    sp = parse_ok("cycles:ukh");
    CHECK_INT(sp.modifiers, ==, DK_EVENT_MOD_USER | DK_EVENT_MOD_KERNEL | DK_EVENT_MOD_HV);
    /* "ref-cycles" and "r" are names: not only hex digits after the r. */
    CHECK_INT(parse_ok("ref-cycles").kind, ==, DK_EVENT_SPEC_NAME);
    CHECK_INT(parse_ok("r").kind, ==, DK_EVENT_SPEC_NAME);
}

TEST_CASE(raw_events)
{
    dk_event_spec sp = parse_ok("r00c0");
    CHECK_INT(sp.kind, ==, DK_EVENT_SPEC_RAW);
    CHECK_U64(sp.raw, ==, 0xc0);
    sp = parse_ok("rffffffffffffffff");
    CHECK_U64(sp.raw, ==, UINT64_MAX);
    sp = parse_ok("r1A3:u");
    CHECK_INT(sp.kind, ==, DK_EVENT_SPEC_RAW);
    CHECK_U64(sp.raw, ==, 0x1a3);
    CHECK_U64(sp.event_len, ==, 4);
    CHECK_INT(sp.modifiers, ==, DK_EVENT_MOD_USER);
    parse_bad("r11112222333344445", "at position 18", "more than 64 bits");
}

TEST_CASE(pmu_events_keep_their_commas)
{
    dk_event_spec sp = parse_ok("cpu/event=0x3c,umask=0x1/");
    CHECK_INT(sp.kind, ==, DK_EVENT_SPEC_PMU);
    CHECK_U64(sp.pmu_len, ==, 3);
    CHECK_U64(sp.event_len, ==, 25);
    CHECK_INT(sp.modifiers, ==, 0);
    /* Modifiers right after the closing '/', or after a ':'. */
    sp = parse_ok("cpu/event=0x3c/u");
    CHECK_U64(sp.event_len, ==, 15);
    CHECK_INT(sp.modifiers, ==, DK_EVENT_MOD_USER);
    sp = parse_ok("cpu/event=0x3c/:k");
    CHECK_INT(sp.modifiers, ==, DK_EVENT_MOD_KERNEL);
    /* Terms that are not digits make terms, not a period. */
    CHECK_INT(parse_ok("msr/tsc/").kind, ==, DK_EVENT_SPEC_PMU);
    CHECK_INT(parse_ok("cycles/1000/").kind, ==, DK_EVENT_SPEC_PMU);
    parse_bad("cpu/event=0x3c,umask=0x1", "at position 4", "unbalanced '/'");
    parse_bad("cpu/event=0x3c/x", "at position 16", "unknown modifier 'x'");
}

TEST_CASE(periods_and_frequencies)
{
    dk_event_spec sp = parse_ok("cycles/100000");
    CHECK_INT(sp.kind, ==, DK_EVENT_SPEC_NAME);
    CHECK_U64(sp.base_len, ==, 6);
    CHECK_U64(sp.period, ==, 100000);
    CHECK_U64(sp.freq, ==, 0);
    sp = parse_ok("cpu-clock@999");
    CHECK_U64(sp.freq, ==, 999);
    CHECK_U64(sp.period, ==, 0);
    sp = parse_ok("cycles:u/+0050");
    CHECK_U64(sp.base_len, ==, 8);
    CHECK_U64(sp.period, ==, 50);
    sp = parse_ok("cpu/event=0x3c/u/1000");
    CHECK_U64(sp.base_len, ==, 16);
    CHECK_U64(sp.period, ==, 1000);
    sp = parse_ok("cpu/event=0x3c//7");
    CHECK_U64(sp.period, ==, 7);
    sp = parse_ok("timer@1000000");
    CHECK_U64(sp.freq, ==, DK_EVENT_SPEC_MAX_FREQ);
    sp = parse_ok("cycles/9223372036854775807");
    CHECK_U64(sp.period, ==, DK_EVENT_SPEC_MAX_PERIOD);
    parse_bad("cycles/0", "at position 8", "the period must be a positive integer");
    parse_bad("cycles/-1", "at position 8", "the period must be a positive integer");
    parse_bad("cycles/9223372036854775808", "at position 8", "the period is out of range");
    parse_bad("cycles/99999999999999999999999", "at position 8", "out of range");
    parse_bad("cycles@0", "at position 8", "the frequency must be a positive integer");
    parse_bad("cycles@1000001", "at position 8", "the frequency is out of range");
    parse_bad("cycles@", "at position 8", "the frequency after '@'");
    parse_bad("cycles@12x", "at position 10", "'x' in the frequency");
    parse_bad("cycles:u/abc", "at position 9", "starts a period");
    /* A '/' and a digit that never closes is a period with a bad byte, not
     * pmu terms: the message points at the byte ("unbalanced '/'" would
     * send the user looking for a PMU). */
    parse_bad("cycles/1e9999", "at position 9", "'e' in the period (digits only");
    parse_bad("cycles/0x1000", "at position 9", "'x' in the period");
    parse_bad("cycles/-5k", "at position 10", "'k' in the period");
    parse_bad("cycles/+", "at position 8", "the period after '/' must be a positive integer");
}

TEST_CASE(errors_say_what_and_where)
{
    parse_bad("", "at position 1", "an empty event");
    parse_bad(":u", "at position 1", "no event name before ':'");
    parse_bad("/1000", "at position 1", "no event name before '/'");
    parse_bad("cycles:", "at position 7", "nothing follows the ':'");
    parse_bad("cycles:q", "at position 8", "unknown modifier 'q'");
    parse_bad("cycles:u:k", "at position 9", "a second ':'");
    parse_bad("cycles:\x01", "at position 8", "byte 0x01");
    parse_bad("a,b", "at position 2", "one event at a time");
    /* A long spec is cut short in the message; the cause still comes. */
    char longname[300];
    memset(longname, 'x', 200);
    memcpy(longname + 200, ":q", 3);
    parse_bad(longname, "at position 202", "unknown modifier 'q'");
    CHECK_CONTAINS(dk_last_error(), "...");
    CHECK_U64(strlen(dk_last_error()), <, 200);
    /* A NUL ends the text. */
    dk_event_spec sp = {.size = sizeof sp};
    CHECK_INT(dk_event_spec_parse("cycles\0:q", 9, &sp), ==, 0);
    CHECK_U64(sp.len, ==, 6);
    CHECK_INT(dk_event_spec_parse(NULL, 0, &sp), ==, DK_EINVAL);
}

/* The specs of list, in order, as "text|text|...", or "ERR: message". */
static void split(const char *list, char *out, size_t size)
{
    size_t pos = 0, used = 0;
    dk_event_spec sp = {.size = sizeof sp};
    int rc;
    out[0] = '\0';
    while ((rc = dk_event_list_next(list, &pos, &sp)) == 1) {
        CHECK(sp.text == list + sp.offset);
        used += (size_t)snprintf(out + used, size - used, "%s%.*s", used ? "|" : "", (int)sp.len,
                                 sp.text);
    }
    if (rc != 0)
        snprintf(out, size, "ERR: %s", dk_last_error());
}

TEST_CASE(lists_split_on_commas_outside_terms)
{
    char got[512];
    split("cycles", got, sizeof got);
    CHECK_STR(got, "cycles");
    split("task-clock,cpu/event=0x3c,umask=1/u,cycles:u/1000,r3c@10", got, sizeof got);
    CHECK_STR(got, "task-clock|cpu/event=0x3c,umask=1/u|cycles:u/1000|r3c@10");
    split("cycles/1000,instructions", got, sizeof got);
    CHECK_STR(got, "cycles/1000|instructions");
    split("", got, sizeof got);
    CHECK_STR(got, "ERR: an empty event list (give names separated by commas)");
    split(",cycles", got, sizeof got);
    CHECK_STR(got, "ERR: an empty event at position 1 (give names separated by commas)");
    split("a,,b", got, sizeof got);
    CHECK_STR(got, "ERR: an empty event at position 3 (give names separated by commas)");
    split("a,b,", got, sizeof got);
    CHECK_STR(got, "ERR: an empty event at position 5, after the last comma (give names "
                   "separated by commas)");
    /* Positions count from the start of the list. */
    split("task-clock,cycles:z", got, sizeof got);
    CHECK_STR(got, "ERR: event 'cycles:z' at position 19: unknown modifier 'z' (u: user mode, "
                   "k: kernel mode, h: hypervisor)");
    split("task-clock,cpu/event=0x3c,umask=1", got, sizeof got);
    CHECK_STR(got, "ERR: event 'cpu/event=0x3c,umask=1' at position 15: unbalanced '/': the "
                   "terms opened here have no closing '/' (write pmu/term=value,.../)");
    split("task-clock,x/y,cycles", got, sizeof got);
    CHECK_CONTAINS(got, "event 'x/y,cycles' at position 13: unbalanced '/'");
    split("cycles/10k,instructions", got, sizeof got);
    CHECK_STR(got, "ERR: event 'cycles/10k' at position 10: 'k' in the period (digits only, 1 "
                   "to 9223372036854775807 events)");
    split("cycles/0,instructions", got, sizeof got);
    CHECK_STR(got, "ERR: event 'cycles/0' at position 8: the period must be a positive integer "
                   "(1 to 9223372036854775807 events)");
    size_t pos = 0;
    dk_event_spec sp = {.size = sizeof sp};
    CHECK_INT(dk_event_list_next(NULL, &pos, &sp), ==, DK_EINVAL);
}

TEST_CASE(a_long_list_splits_whole)
{
    /* 100000 specs of every form: each is read, none is lost. */
    const char *forms[] = {"cycles", "cpu/event=0x3c,umask=1/u", "r3c:k", "timer@100", "cycles/7"};
    size_t n = 100000, cap = n * 32, used = 0;
    char *list = malloc(cap);
    CHECK(list != NULL);
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(list + used, cap - used, "%s%s", i ? "," : "", forms[i % 5]);
    size_t pos = 0, count = 0;
    dk_event_spec sp = {.size = sizeof sp};
    while (dk_event_list_next(list, &pos, &sp) == 1) {
        CHECK_U64(sp.len, ==, strlen(forms[count % 5]));
        count++;
    }
    CHECK_U64(count, ==, n);
    free(list);
}

TEST_CASE(the_caller_says_the_size_of_its_struct)
{
    /* No size, or one short of the first version's fields: refused, and
     * nothing is written. */
    dk_event_spec sp;
    memset(&sp, 0xa5, sizeof sp);
    sp.size = 0;
    CHECK_INT(dk_event_spec_parse("cycles", 6, &sp), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "set it to sizeof(dk_event_spec)");
    CHECK_U64(sp.len, ==, (size_t)0xa5a5a5a5a5a5a5a5u);
    size_t pos = 0;
    sp.size = sizeof sp - 1;
    CHECK_INT(dk_event_list_next("cycles", &pos, &sp), ==, DK_EINVAL);
    CHECK_U64(pos, ==, 0);
    /* A larger struct (a newer header): filled as far as this library
     * knows, the rest untouched, and the size written says how far. */
    struct {
        dk_event_spec sp;
        unsigned char more[16];
    } big;
    memset(&big, 0x5a, sizeof big);
    big.sp.size = sizeof big;
    CHECK_INT(dk_event_spec_parse("cycles@99", 9, &big.sp), ==, 0);
    CHECK_U64(big.sp.size, ==, sizeof big.sp);
    CHECK_U64(big.sp.freq, ==, 99);
    CHECK_INT(big.more[0], ==, 0x5a);
    CHECK_INT(big.more[15], ==, 0x5a);
}

TEST_MAIN()
