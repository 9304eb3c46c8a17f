/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * text.h - UTF-8 and untrusted text, shared by libdkbench and the tools
 * (compiled into each, never into libdkperf; see CMakeLists.txt here).
 * Internal: hidden in every library it is part of.
 *
 * Untrusted text is any string that came from outside the program: a
 * recording's command, comm and image names, symbol names from an image, a
 * baseline's names. Printed raw, a control byte drives the terminal (ESC
 * starts an escape sequence: a title change, a screen clear; CR and newline
 * forge lines) and a byte that is not UTF-8 garbles what follows it. So
 * every such string passes through dk__put_untrusted or dk__untrusted on its
 * way to a terminal or a line-oriented text format.
 */
#ifndef DKPERF_COMMON_TEXT_H
#define DKPERF_COMMON_TEXT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The length of the well-formed UTF-8 sequence at p (1 to 4), or 0 when p
 * does not begin one: a stray continuation byte, an overlong form, a
 * surrogate, a code point above U+10FFFF, or a sequence cut short (by the
 * terminating NUL too, so p is never read past it). The NUL itself is 1. */
size_t dk__utf8_length(const unsigned char *p);

/* The next code point of s, advancing *s; a byte that does not begin a
 * well-formed sequence gives U+FFFD and advances by that one byte. Returns
 * 0 at the terminating NUL (and does not advance). */
unsigned long dk__utf8_next(const char **s);

/* Whether code point cp must not reach a terminal or a line of text as it
 * is: a control character (C0 with tab and newline, DEL, C1 U+0080 to
 * U+009F), or a format character that moves or breaks text around it:
 * the bidirectional marks, embeddings, overrides and isolates (U+061C,
 * U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), which make a
 * terminal or editor that implements bidi show the rest of a line in
 * another order than its bytes ("Trojan Source"), and the line and
 * paragraph separators U+2028 and U+2029. */
bool dk__must_escape(unsigned long cp);

/* Code point cp (at most U+10FFFF) as UTF-8 into out; returns 1 to 4. */
size_t dk__utf8_encode(unsigned long cp, unsigned char out[4]);

/* Write s to out with every byte of a code point dk__must_escape names and
 * every byte that is not well-formed UTF-8 written as \xNN (lower-case
 * hex, one per byte); other valid UTF-8 and printable ASCII are kept as
 * they are. NULL prints "(null)". */
void dk__put_untrusted(FILE *out, const char *s);

/* The same escaping into buf (size > 0: always NUL-terminated, cut only
 * between whole characters and escapes). Returns the length the whole
 * escaped text needs without the NUL, as snprintf does: the text was cut
 * when that is >= size. */
size_t dk__untrusted(char *buf, size_t size, const char *s);

/* vsnprintf(fmt, ap), then dk__put_untrusted of the result: for messages
 * that quote untrusted text, whose own words hold no control byte. */
void dk__vput_untrusted(FILE *out, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/* s as HTML or XML text (also inside a quoted attribute value): & < > " '
 * tab and newline as references; each other code point dk__must_escape
 * names and each byte that is not well-formed UTF-8 as U+FFFD, so that a
 * page printed raw shows no control and a browser no reordering, and the
 * file stays valid UTF-8. */
void dk__put_html(FILE *out, const char *s);

/* The columns s takes where one code point takes one: its code points
 * as dk__utf8_next reads them (a malformed byte one each). */
size_t dk__utf8_columns(const char *s);

/* prefix (NULL: none) then s as one CSV field (RFC 4180): quoted when it
 * holds a comma, a quote or a line break written as it is, quotes
 * doubled; each byte that is not well-formed UTF-8 as U+FFFD, so the file
 * stays UTF-8. With escape, each code point dk__must_escape names (line
 * breaks too) is written byte by byte as \xNN, as dk__put_untrusted
 * writes it: for a CSV read line by line as often as it is parsed. */
void dk__put_csv(FILE *out, const char *prefix, const char *s, bool escape);

#endif /* DKPERF_COMMON_TEXT_H */
