/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * json_write.c - the JSON writer's strings, numbers and members (see
 * json.h).
 */
#include "common/json.h"

#include <math.h>

#include "common/text.h"

void dk__json_string(FILE *out, const char *s)
{
    if (s == NULL) {
        fputs("null", out);
        return;
    }
    unsigned long cp;
    unsigned char b[4];
    fputc('"', out);
    /* dk__utf8_next gives U+FFFD for each byte that is not well-formed. */
    while ((cp = dk__utf8_next(&s)) != 0) {
        switch (cp) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (dk__must_escape(cp)) /* C1 and bidi too (common/text.h) */
                fprintf(out, "\\u%04lx", cp);
            else
                fwrite(b, 1, dk__utf8_encode(cp, b), out);
        }
    }
    fputc('"', out);
}

void dk__json_number(FILE *out, double v)
{
    if (!isfinite(v))
        fputs("null", out);
    else if (v == floor(v) && fabs(v) < 1e15)
        fprintf(out, "%.0f", v);
    else
        fprintf(out, "%.17g", v); /* exact round trip */
}

void dk__json_key(FILE *out, const char *sep, const char *k, const char *colon)
{
    fputs(sep, out);
    dk__json_string(out, k);
    fputs(colon, out);
}

void dk__json_number_member(FILE *out, const char *sep, const char *k, const char *colon, double v)
{
    dk__json_key(out, sep, k, colon);
    dk__json_number(out, v);
}

void dk__json_string_member(FILE *out, const char *sep, const char *k, const char *colon,
                            const char *v)
{
    dk__json_key(out, sep, k, colon);
    dk__json_string(out, v);
}
