/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * json.c - a small strict JSON reader (see json.h).
 */
#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64

typedef struct parser {
    const char *p, *start, *end;
    char *why;
    size_t why_size;
    bool failed;
} parser;

static void fail(parser *ps, const char *what)
{
    if (!ps->failed)
        snprintf(ps->why, ps->why_size, "%s at byte %zu", what, (size_t)(ps->p - ps->start));
    ps->failed = true;
}

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static void release(json_value *v)
{
    if (v == NULL)
        return;
    free(v->string);
    for (size_t i = 0; i < v->n; i++) {
        release(&v->items[i]);
        if (v->keys != NULL)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    memset(v, 0, sizeof *v);
}

void json_free(json_value *v)
{
    release(v);
    free(v);
}

static bool literal(parser *ps, const char *word)
{
    size_t len = strlen(word);
    if ((size_t)(ps->end - ps->p) < len || memcmp(ps->p, word, len) != 0)
        return false;
    ps->p += len;
    return true;
}

static int hex4(parser *ps, unsigned *out)
{
    if (ps->end - ps->p < 4)
        return -1;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = ps->p[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    ps->p += 4;
    *out = v;
    return 0;
}

static size_t utf8(unsigned cp, char *out)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A string after its opening quote; the decoded text is never longer. */
static char *string(parser *ps)
{
    char *out = malloc((size_t)(ps->end - ps->p) + 1);
    size_t len = 0;
    if (out == NULL) {
        fail(ps, "out of memory");
        return NULL;
    }
    for (;;) {
        if (ps->p >= ps->end) {
            fail(ps, "unterminated string");
            break;
        }
        unsigned char c = (unsigned char)*ps->p++;
        if (c == '"') {
            out[len] = '\0';
            return out;
        }
        if (c < 0x20) {
            fail(ps, "raw control character in a string");
            break;
        }
        if (c != '\\') {
            out[len++] = (char)c;
            continue;
        }
        if (ps->p >= ps->end) {
            fail(ps, "unterminated escape");
            break;
        }
        char e = *ps->p++;
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *k = e != '\0' ? strchr(from, e) : NULL;
        if (k != NULL) {
            out[len++] = to[k - from];
            continue;
        }
        unsigned cp, lo;
        if (e != 'u' || hex4(ps, &cp) != 0) {
            fail(ps, "bad escape in a string");
            break;
        }
        if (cp >= 0xd800 && cp < 0xdc00) {
            if (!literal(ps, "\\u") || hex4(ps, &lo) != 0 || lo < 0xdc00 || lo >= 0xe000) {
                fail(ps, "unpaired surrogate in a string");
                break;
            }
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xdc00 && cp < 0xe000) {
            fail(ps, "unpaired surrogate in a string");
            break;
        }
        if (cp == 0) { /* C strings end there: the rest would be lost unseen */
            fail(ps, "NUL character in a string");
            break;
        }
        len += utf8(cp, out + len); /* \uXXXX is 6 bytes, its UTF-8 at most 4 */
    }
    free(out);
    return NULL;
}

static void number(parser *ps, json_value *v)
{
    const char *s = ps->p;
    if (s < ps->end && *s == '-')
        s++;
    if (s >= ps->end || !(*s >= '0' && *s <= '9')) {
        fail(ps, "bad number");
        return;
    }
    if (*s == '0' && s + 1 < ps->end && s[1] >= '0' && s[1] <= '9') {
        fail(ps, "number with a leading zero");
        return;
    }
    /* The whole token, however long (0.000...1 with many digits is JSON). */
    char small[64], *buf = small;
    size_t len = 0;
    while (ps->p + len < ps->end && *(ps->p + len) != '\0' &&
           strchr("+-0123456789.eE", *(ps->p + len)) != NULL)
        len++;
    if (len >= sizeof small && (buf = malloc(len + 1)) == NULL) {
        fail(ps, "out of memory");
        return;
    }
    memcpy(buf, ps->p, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    v->kind = JSON_NUMBER;
    v->number = strtod(buf, &end);
    if (*end != '\0' || buf[len - 1] == '.' || strstr(buf, ".e") != NULL ||
        strstr(buf, ".E") != NULL)
        fail(ps, "bad number");
    else if (errno == ERANGE && (v->number > 1 || v->number < -1))
        fail(ps, "number out of range (beyond 1.8e308)");
    /* A number too small for a double (1e-400) is 0, as it is to others. */
    if (buf != small)
        free(buf);
    ps->p += len;
}

static void value(parser *ps, json_value *v, int depth);

static void container(parser *ps, json_value *v, int depth, bool object)
{
    char close = object ? '}' : ']';
    v->kind = object ? JSON_OBJECT : JSON_ARRAY;
    size_t cap = 0;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return;
    }
    for (;;) {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 4;
            json_value *items = realloc(v->items, cap * sizeof *items);
            if (items == NULL) {
                fail(ps, "out of memory");
                return;
            }
            v->items = items;
            if (object) {
                char **keys = realloc(v->keys, cap * sizeof *keys);
                if (keys == NULL) {
                    fail(ps, "out of memory");
                    return;
                }
                v->keys = keys;
            }
        }
        json_value *item = &v->items[v->n];
        memset(item, 0, sizeof *item);
        char *key = NULL;
        skip_ws(ps);
        if (object) {
            if (ps->p >= ps->end || *ps->p != '"') {
                fail(ps, "expected a member name");
                return;
            }
            ps->p++;
            if ((key = string(ps)) == NULL)
                return;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                fail(ps, "expected ':'");
                return;
            }
            ps->p++;
            v->keys[v->n] = key;
        }
        v->n++;
        value(ps, item, depth + 1);
        if (ps->failed)
            return;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return;
        }
        fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
        return;
    }
}

static void value(parser *ps, json_value *v, int depth)
{
    if (depth > JSON_MAX_DEPTH) {
        fail(ps, "nested too deep");
        return;
    }
    skip_ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "unexpected end of the text");
        return;
    }
    char c = *ps->p;
    if (c == '{' || c == '[') {
        ps->p++;
        container(ps, v, depth, c == '{');
    } else if (c == '"') {
        ps->p++;
        v->kind = JSON_STRING;
        v->string = string(ps);
    } else if (literal(ps, "true") || literal(ps, "false")) {
        v->kind = JSON_BOOL;
        v->boolean = c == 't';
    } else if (literal(ps, "null")) {
        v->kind = JSON_NULL;
    } else {
        number(ps, v);
    }
}

json_value *json_parse(const char *text, size_t len, char *why, size_t why_size)
{
    parser ps = {text, text, text + len, why, why_size, false};
    json_value *root = calloc(1, sizeof *root);
    if (root == NULL) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    value(&ps, root, 0);
    skip_ws(&ps);
    if (!ps.failed && ps.p != ps.end)
        fail(&ps, "text after the value");
    if (ps.failed) {
        json_free(root);
        return NULL;
    }
    return root;
}

const json_value *json_get(const json_value *v, const char *key)
{
    if (v == NULL || v->kind != JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}
