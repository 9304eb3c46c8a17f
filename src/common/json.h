/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * json.h - the one JSON reader and writer of libdkbench and the tools
 * (compiled into each, never into libdkperf; see CMakeLists.txt here).
 * Internal: hidden in every library it is part of.
 *
 * The reader is strict (RFC 8259): UTF-8 checked (by dk__utf8_next, as
 * every text check here), no duplicate member names, no NUL in a string
 * (a C string would end there and hide the rest), no trailing data. It is
 * made for files an attacker may have written: it reads in time linear in
 * the text (member names are looked up in a table keyed afresh for each
 * text, so no choice of names makes it quadratic), nests at most
 * DK_JSON_MAX_DEPTH deep and keeps its tree under DK_JSON_MAX_MEMORY.
 * Each value keeps its byte offset, for messages that point at it.
 */
#ifndef DKPERF_COMMON_JSON_H
#define DKPERF_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define DK_JSON_MAX_DEPTH 32
/* The tree of a text's values: a value takes sizeof(dk_json) however few
 * bytes it fills ("[]," is three), so a bound on the text alone would let
 * it take tens of times its size. */
#define DK_JSON_MAX_MEMORY ((size_t)1 << 30)

typedef enum dk_json_type {
    DK_JSON_NULL,
    DK_JSON_BOOL,
    DK_JSON_NUM,
    DK_JSON_STR,
    DK_JSON_ARR,
    DK_JSON_OBJ
} dk_json_type;

typedef struct dk_json {
    dk_json_type type;
    bool b;
    size_t off; /* byte offset of the value in the text */
    double num;
    union {
        char *str;    /* DK_JSON_STR: NUL-terminated UTF-8, escapes decoded */
        double *nums; /* DK_JSON_ARR of numbers and nulls only (NaN), in place
                        * of kids, with DK_JSON_PACK_NUMBERS */
    };
    char *key;            /* the name of an object's member */
    struct dk_json *kids; /* DK_JSON_ARR, DK_JSON_OBJ: the n values */
    size_t n, cap;        /* of kids, or of nums */
} dk_json;

/* dk__json_parse flags. An array of numbers and nulls alone (samples) is
 * kept as n doubles (nums, null as NaN, kids NULL): a dk_json is eight
 * times larger, and such arrays are most of a baseline. */
#define DK_JSON_PACK_NUMBERS 1u

typedef enum dk_json_fault {
    DK_JSON_EBAD = 1, /* the text is not JSON, or nests too deep */
    DK_JSON_EBIG,     /* its tree would pass DK_JSON_MAX_MEMORY */
    DK_JSON_ENOMEM    /* out of memory: no fault of the text */
} dk_json_fault;

typedef struct dk_json_error {
    dk_json_fault fault;
    size_t off;    /* the byte offset of the problem */
    char what[96]; /* the problem, without the offset */
} dk_json_error;

/* Parse text[0..len) into *root (zeroed first; free it with dk__json_free
 * whatever the outcome). Returns 0, or -1 with *err set. */
int dk__json_parse(const char *text, size_t len, unsigned flags, dk_json *root, dk_json_error *err);

/* Frees what v holds (not v itself); nothing for NULL. */
void dk__json_free(dk_json *v);

/* The member called k of obj, or NULL (also when obj is not an object). */
const dk_json *dk__json_get(const dk_json *obj, const char *k);

/* The offset of an array's first value (of a packed array's numbers). */
size_t dk__json_first_off(const char *text, size_t len, const dk_json *arr);

/* ---- the writer ---- */

/* s as a JSON string with its quotes, or null for NULL. Each code point
 * dk__must_escape names (control, C1, bidi) is escaped as \u00XX, so JSON
 * printed to a terminal drives it no more than text does (common/text.h);
 * each byte that is not well-formed UTF-8 becomes U+FFFD (as UTF-8), so
 * the text stays UTF-8. */
void dk__json_string(FILE *out, const char *s);

/* v as a JSON number: an integer below 1e15 without a fraction, else
 * %.17g (an exact round trip); null when it is not finite, for which
 * JSON has no number. */
void dk__json_number(FILE *out, double v);

/* One member of an object: sep (what stands before it: "" or "{" for the
 * first, "," or ", " after another, or a line break and indent), the name
 * k as a JSON string, and colon, ":" or ": " as the document is laid out;
 * the _number and _string forms write the value after it. */
void dk__json_key(FILE *out, const char *sep, const char *k, const char *colon);
void dk__json_number_member(FILE *out, const char *sep, const char *k, const char *colon, double v);
void dk__json_string_member(FILE *out, const char *sep, const char *k, const char *colon,
                            const char *v);

#endif /* DKPERF_COMMON_JSON_H */
