/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_text.c - the common layer's UTF-8 decoding and untrusted-text
 * escaping (src/common/text.h), byte by byte.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/text.h"
#include "common/unavailable.h"

/* dk__put_untrusted of s, as a string (malloc'ed). */
static char *put(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    dk__put_untrusted(f, s);
    CHECK(fclose(f) == 0);
    return buf;
}

/* Both forms give want for s, and the buffer form says its length. */
static void escapes(const char *s, const char *want)
{
    char *got = put(s);
    CHECK_STR(got, want);
    free(got);
    char buf[256];
    CHECK_INT((int)dk__untrusted(buf, sizeof buf, s), ==, (int)strlen(want));
    CHECK_STR(buf, want);
}

TEST_CASE(control_bytes_are_escaped)
{
    escapes("\x1b]0;TITLE\x07", "\\x1b]0;TITLE\\x07");
    escapes("a\tb\nc\rd", "a\\x09b\\x0ac\\x0dd");
    escapes("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
    escapes("\xc2\x9b"
            "2J \xc2\x80\xc2\x9f",
            "\\xc2\\x9b2J \\xc2\\x80\\xc2\\x9f");
}

/* Format characters that reorder the rest of a line on a terminal or in an
 * editor that implements bidi ("Trojan Source"), or break it: each byte
 * escaped, as for a control. */
TEST_CASE(bidi_and_line_separators_are_escaped)
{
    escapes("a\xe2\x80\xae"
            "cba",
            "a\\xe2\\x80\\xaecba");                             /* RLO */
    escapes("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", /* LRE RLE PDF LRO */
            "\\xe2\\x80\\xaa\\xe2\\x80\\xab\\xe2\\x80\\xac\\xe2\\x80\\xad");
    escapes("\xe2\x81\xa6x\xe2\x81\xa9", "\\xe2\\x81\\xa6x\\xe2\\x81\\xa9"); /* LRI, PDI */
    escapes("\xe2\x81\xa7\xe2\x81\xa8", "\\xe2\\x81\\xa7\\xe2\\x81\\xa8");   /* RLI, FSI */
    escapes("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c",
            "\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xd8\\x9c"); /* LRM RLM ALM */
    escapes("1\xe2\x80\xa8"
            "2\xe2\x80\xa9"
            "3",
            "1\\xe2\\x80\\xa82\\xe2\\x80\\xa93"); /* LS, PS */
    /* Their neighbours are ordinary text: ZWJ (emoji), en dash, NNBSP, U+206A. */
    escapes("\xe2\x80\x8d\xe2\x80\x93\xe2\x80\xaf\xe2\x81\xaa\xe2\x80\xa7",
            "\xe2\x80\x8d\xe2\x80\x93\xe2\x80\xaf\xe2\x81\xaa\xe2\x80\xa7");
    /* Non-characters are valid UTF-8 and print as they are. */
    escapes("\xef\xbf\xbe\xef\xb7\x90\xf4\x8f\xbf\xbf", "\xef\xbf\xbe\xef\xb7\x90\xf4\x8f\xbf\xbf");
}

TEST_CASE(invalid_utf8_is_escaped_byte_by_byte)
{
    escapes("\xff", "\\xff");
    escapes("\xc0\xaf", "\\xc0\\xaf");                   /* overlong '/' */
    escapes("\xe0\x80\xaf", "\\xe0\\x80\\xaf");          /* overlong, 3 bytes */
    escapes("\xed\xa0\x80", "\\xed\\xa0\\x80");          /* a surrogate */
    escapes("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
    escapes("\xe2\x82", "\\xe2\\x82");                   /* cut short by the end */
    escapes("\x80x", "\\x80x");                          /* a stray continuation */
}

TEST_CASE(printable_text_and_valid_utf8_are_kept)
{
    escapes("", "");
    escapes("main [libc.so.6+0x1f] a\\b 'q' \"", "main [libc.so.6+0x1f] a\\b 'q' \"");
    escapes("\xc2\xa0\xc2\xb5s \xe2\x82\xac \xf0\x9f\x94\xa5 \xef\xbf\xbd \xf4\x8f\xbf\xbf",
            "\xc2\xa0\xc2\xb5s \xe2\x82\xac \xf0\x9f\x94\xa5 \xef\xbf\xbd \xf4\x8f\xbf\xbf");
    char *got = put(NULL);
    CHECK_STR(got, "(null)");
    free(got);
}

TEST_CASE(buffer_form_cuts_between_whole_escapes)
{
    char buf[8];
    /* "ab\x1b\xe2\x82\xac": a, b, then a 4-byte escape: 6 bytes, then the euro sign. */
    CHECK_INT((int)dk__untrusted(buf, sizeof buf, "ab\x1b\xe2\x82\xac"), ==, 9);
    CHECK_STR(buf, "ab\\x1b");
    CHECK_INT((int)dk__untrusted(buf, 4, "ab\x1b"), ==, 6);
    CHECK_STR(buf, "ab");
    CHECK_INT((int)dk__untrusted(NULL, 0, "\x07"), ==, 4);
}

TEST_CASE(utf8_decoding)
{
    const char *s = "a\xc2\xb5\xe2\x82\xac\xf0\x9f\x94\xa5\xff\xed\xa0\x80";
    unsigned long want[] = {'a', 0xb5, 0x20ac, 0x1f525, 0xfffd, 0xfffd, 0xfffd, 0xfffd, 0};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_U64((uint64_t)dk__utf8_next(&s), ==, (uint64_t)want[i]);
    CHECK_INT((int)dk__utf8_length((const unsigned char *)"\xf4\x8f\xbf\xbf"), ==, 4);
    CHECK_INT((int)dk__utf8_length((const unsigned char *)"\xf4\x90\x80\x80"), ==, 0);
    CHECK_INT((int)dk__utf8_length((const unsigned char *)"\xe0\xa0\x80"), ==, 3);
    CHECK_INT((int)dk__utf8_length((const unsigned char *)"\xc2"), ==, 0);
    CHECK(dk__must_escape(0x1b) && dk__must_escape(0x7f) && dk__must_escape(0x9f));
    CHECK(dk__must_escape(0x202e) && dk__must_escape(0x2066) && dk__must_escape(0x2028));
    CHECK(!dk__must_escape(' ') && !dk__must_escape(0xa0) && !dk__must_escape(0x7e));
    CHECK(!dk__must_escape(0x200d) && !dk__must_escape(0x2027) && !dk__must_escape(0x206a));
    unsigned char b[4];
    CHECK_INT((int)dk__utf8_encode(0x10ffff, b), ==, 4);
    CHECK(memcmp(b, "\xf4\x8f\xbf\xbf", 4) == 0);
    CHECK_INT((int)dk__utf8_encode(0x7ff, b), ==, 2);
    CHECK(memcmp(b, "\xdf\xbf", 2) == 0);
}

/* dk__put_unavailable of the n events, as a string (malloc'ed). */
static char *unavailable(size_t n, const char *const *names, const char *const *why,
                         size_t want_lines)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    CHECK_INT((int)dk__put_unavailable(f, n, names, why, "> ", "\n", dk__put_untrusted), ==,
              (int)want_lines);
    CHECK(fclose(f) == 0);
    return buf;
}

TEST_CASE(unavailable_events_are_said_once_per_reason)
{
    /* The events of one reason on one line, whatever event each message
     * names; another reason on its own line; available events (NULL or
     * "") and repeated names (one benchmark after another) not again. */
    const char *names[] = {"instructions", "task-clock", "cycles", "l1d", "cycles", "x"};
    const char *why[] = {"event instructions is not supported here: no PMU",
                         NULL,
                         "DK_EUNAVAILABLE: event cpu-cycles is not supported here: no PMU",
                         "event L1D_MISS needs root",
                         "event cpu-cycles is not supported here: no PMU",
                         ""};
    char *got = unavailable(6, names, why, 2);
    CHECK_STR(got, "> instructions, cycles: not supported here: no PMU\n> l1d: needs root\n");
    free(got);
    /* Names from a file are escaped; a reason without the lead stays whole. */
    const char *odd[] = {"a\x1b[2J"}, *odd_why[] = {"event"};
    got = unavailable(1, odd, odd_why, 1);
    CHECK_STR(got, "> a\\x1b[2J: event\n");
    free(got);
    got = unavailable(1, odd, (const char *const[]){NULL}, 0);
    CHECK_STR(got, "");
    free(got);
    CHECK_STR(dk__why_shared("DK_EPERM: event x was refused"), "was refused");
    CHECK_STR(dk__why_shared("DK_: event x"), "DK_: event x");
    /* The name as asked, then the native one it stands for. */
    CHECK_STR(dk__why_shared("DK_EUNAVAILABLE: event cycles (cpu-cycles) is not supported here"),
              "not supported here");
    CHECK_STR(dk__why_shared("event x (a b) is odd"), "(a b) is odd");
}

/* dk__put_csv of prefix and s, as a string (malloc'ed). */
static char *csv(const char *prefix, const char *s, bool escape)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    dk__put_csv(f, prefix, s, escape);
    CHECK(fclose(f) == 0);
    return buf;
}

static void csv_is(const char *prefix, const char *s, bool escape, const char *want)
{
    char *got = csv(prefix, s, escape);
    CHECK_STR(got, want);
    free(got);
}

TEST_CASE(csv_fields_are_quoted_as_rfc_4180_says)
{
    csv_is(NULL, "plain", false, "plain");
    csv_is(NULL, "", false, "");
    csv_is(NULL, "a,b", false, "\"a,b\"");
    csv_is(NULL, "say \"hi\"", true, "\"say \"\"hi\"\"\"");
    /* The prefix is part of the field: quoted with it, whole. */
    csv_is("parameter_", "n", false, "parameter_n");
    csv_is("parameter_", "a,b", true, "\"parameter_a,b\"");
    /* A line break is quoted as it is, or escaped for a file read line by line. */
    csv_is(NULL, "a\nb", false, "\"a\nb\"");
    csv_is(NULL, "a\nb", true, "a\\x0ab");
    csv_is(NULL, "\x1b[2J", true, "\\x1b[2J");
    csv_is(NULL, "\x1b", false, "\x1b");
    /* Bytes that are not UTF-8 are U+FFFD either way; text is kept. */
    csv_is(NULL, "a\xff\xC3\xA9", false, "a\xEF\xBF\xBD\xC3\xA9");
    csv_is(NULL, "a\xff", true, "a\xEF\xBF\xBD");
}

TEST_CASE(columns_count_code_points)
{
    CHECK_U64(dk__utf8_columns(""), ==, 0);
    CHECK_U64(dk__utf8_columns("abc"), ==, 3);
    CHECK_U64(dk__utf8_columns("h\xC3\xA9llo \xE2\x82\xAC"), ==, 7);
    CHECK_U64(dk__utf8_columns("\xF0\x9F\x98\x80"), ==, 1);
    /* A malformed byte takes a column, as dk__utf8_next reads it. */
    CHECK_U64(dk__utf8_columns("a\xff"
                               "b"),
              ==, 3);
}

TEST_MAIN()
