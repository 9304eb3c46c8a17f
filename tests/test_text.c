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
    escapes("\xc2\x9b" "2J \xc2\x80\xc2\x9f", "\\xc2\\x9b2J \\xc2\\x80\\xc2\\x9f");
}

TEST_CASE(invalid_utf8_is_escaped_byte_by_byte)
{
    escapes("\xff", "\\xff");
    escapes("\xc0\xaf", "\\xc0\\xaf");                /* overlong '/' */
    escapes("\xe0\x80\xaf", "\\xe0\\x80\\xaf");       /* overlong, 3 bytes */
    escapes("\xed\xa0\x80", "\\xed\\xa0\\x80");       /* a surrogate */
    escapes("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
    escapes("\xe2\x82", "\\xe2\\x82");                /* cut short by the end */
    escapes("\x80x", "\\x80x");                       /* a stray continuation */
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
    CHECK(dk__is_control(0x1b) && dk__is_control(0x7f) && dk__is_control(0x9f));
    CHECK(!dk__is_control(' ') && !dk__is_control(0xa0) && !dk__is_control(0x7e));
}

TEST_MAIN()
