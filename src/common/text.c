/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * text.c - UTF-8 decoding and the escaping of untrusted text; see text.h.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"

size_t dk__utf8_length(const unsigned char *p)
{
    unsigned lo = 0x80, hi = 0xbf;
    size_t len;
    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        len = 2;
    else if (p[0] == 0xe0)
        len = 3, lo = 0xa0; /* below: overlong */
    else if (p[0] == 0xed)
        len = 3, hi = 0x9f; /* above: surrogates */
    else if (p[0] >= 0xe1 && p[0] <= 0xef)
        len = 3;
    else if (p[0] == 0xf0)
        len = 4, lo = 0x90; /* below: overlong */
    else if (p[0] >= 0xf1 && p[0] <= 0xf3)
        len = 4;
    else if (p[0] == 0xf4)
        len = 4, hi = 0x8f; /* above: past U+10FFFF */
    else
        return 0; /* a continuation byte, C0/C1 (overlong), F5 and above */
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xbf)
            return 0;
    return len;
}

unsigned long dk__utf8_next(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    if (p[0] == 0)
        return 0;
    size_t len = dk__utf8_length(p);
    if (len == 0) {
        *s += 1;
        return 0xFFFD;
    }
    static const unsigned char lead_mask[5] = {0, 0x7f, 0x1f, 0x0f, 0x07};
    unsigned long cp = p[0] & lead_mask[len];
    for (size_t i = 1; i < len; i++)
        cp = (cp << 6) | (p[i] & 0x3f);
    *s += len;
    return cp;
}

bool dk__must_escape(unsigned long cp)
{
    /* C1 too: U+009B is CSI, as ESC [ is, to a terminal that reads UTF-8. */
    if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
        return true;
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

size_t dk__utf8_encode(unsigned long cp, unsigned char out[4])
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xc0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xe0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (unsigned char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (unsigned char)(0xf0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (unsigned char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The bytes at p that print as they are (0 when *p must be escaped). */
static size_t kept(const unsigned char *p)
{
    const char *s = (const char *)p;
    size_t len = dk__utf8_length(p);
    if (len == 0 || dk__must_escape(dk__utf8_next(&s)))
        return 0;
    return len;
}

void dk__put_untrusted(FILE *out, const char *s)
{
    if (s == NULL)
        s = "(null)";
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        size_t len = kept(p);
        if (len == 0) {
            fprintf(out, "\\x%02x", *p++);
            continue;
        }
        fwrite(p, 1, len, out);
        p += len;
    }
}

size_t dk__untrusted(char *buf, size_t size, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    if (s == NULL)
        s = "(null)";
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    bool cut = size == 0;
    while (*p != '\0') {
        size_t len = kept(p);
        char esc[4];
        const char *from = (const char *)p;
        size_t w = len;
        if (len == 0) {
            esc[0] = '\\', esc[1] = 'x', esc[2] = hex[*p >> 4], esc[3] = hex[*p & 15];
            from = esc, w = 4, len = 1;
        }
        if (!cut && n + w < size) {
            for (size_t i = 0; i < w; i++)
                buf[n + i] = from[i];
        } else if (!cut) {
            buf[n] = '\0';
            cut = true;
        }
        n += w;
        p += len;
    }
    if (!cut)
        buf[n] = '\0';
    return n;
}

void dk__vput_untrusted(FILE *out, const char *fmt, va_list ap)
{
    char small[1024], *text = small;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL)
        vsnprintf(text, (size_t)n + 1, fmt, again);
    va_end(again);
    /* Out of memory: the message cut at its first 1023 bytes. */
    dk__put_untrusted(out, n < 0 ? fmt : text != NULL ? text : small);
    if (text != small)
        free(text);
}

void dk__put_html(FILE *out, const char *s)
{
    /* Tab and newline as references: the text keeps them, and a page
     * printed raw holds none but its own. A reference to another control
     * is an error in HTML, and one to U+0080..U+009F is read as
     * Windows-1252: U+FFFD is their stand-in (for U+FFFE and U+FFFF too,
     * which XML forbids). */
    static const unsigned char fffd[] = {0xef, 0xbf, 0xbd};
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        const char *ref = *p == '&'    ? "&amp;"
                          : *p == '<'  ? "&lt;"
                          : *p == '>'  ? "&gt;"
                          : *p == '"'  ? "&quot;"
                          : *p == '\'' ? "&#39;"
                          : *p == '\t' ? "&#9;"
                          : *p == '\n' ? "&#10;"
                                       : NULL;
        if (ref != NULL) {
            fputs(ref, out);
            p++;
            continue;
        }
        const char *c = (const char *)p;
        size_t len = dk__utf8_length(p);
        unsigned long cp = len ? dk__utf8_next(&c) : 0xfffd;
        if (len == 0 || dk__must_escape(cp) || cp == 0xfffe || cp == 0xffff)
            fwrite(fffd, 1, sizeof fffd, out);
        else
            fwrite(p, 1, len, out);
        p += len ? len : 1; /* a byte that begins no character: one U+FFFD each */
    }
}

size_t dk__utf8_columns(const char *s)
{
    size_t cols = 0;
    while (dk__utf8_next(&s) != 0)
        cols++;
    return cols;
}

/* Whether one of chars is in prefix or s. */
static bool csv_holds(const char *prefix, const char *s, const char *chars)
{
    return (prefix != NULL && strpbrk(prefix, chars) != NULL) || strpbrk(s, chars) != NULL;
}

void dk__put_csv(FILE *out, const char *prefix, const char *s, bool escape)
{
    bool quote = csv_holds(prefix, s, ",\"") || (!escape && csv_holds(prefix, s, "\n\r"));
    if (quote)
        fputc('"', out);
    for (int part = prefix != NULL ? 0 : 1; part < 2; part++) {
        const char *p = part ? s : prefix;
        unsigned long cp;
        unsigned char b[4];
        while ((cp = dk__utf8_next(&p)) != 0) {
            size_t n = dk__utf8_encode(cp, b);
            if (cp == '"')
                fputc('"', out);
            if (!escape || !dk__must_escape(cp))
                fwrite(b, 1, n, out);
            else /* byte by byte, as dk__put_untrusted writes it */
                for (size_t i = 0; i < n; i++)
                    fprintf(out, "\\x%02x", b[i]);
        }
    }
    if (quote)
        fputc('"', out);
}
