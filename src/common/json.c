/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * json.c - the strict JSON reader (see json.h): a tree of values with their
 * offsets, read in linear time into bounded memory.
 */
#define _POSIX_C_SOURCE 200809L
#include "common/json.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/text.h"

typedef struct jparser {
    const char *s;
    size_t len, pos;
    unsigned flags;
    int err;
    dk_json_error *e;
    uint64_t hkey[2]; /* of the member-name hash (key_hash) */
    size_t mem;       /* bytes of the tree so far, against DK_JSON_MAX_MEMORY */
} jparser;

void dk__json_free(dk_json *v)
{
    if (v == NULL)
        return;
    for (size_t i = 0; v->kids != NULL && i < v->n; i++)
        dk__json_free(&v->kids[i]);
    free(v->kids);
    free(v->str);
    free(v->key);
    v->kids = NULL;
    v->str = NULL;
    v->key = NULL;
    v->n = v->cap = 0;
}

/* Records the first problem; returns -1. */
static int fault(jparser *p, dk_json_fault f, size_t off, const char *what)
{
    if (p->err == 0) {
        p->err = -1;
        p->e->fault = f;
        p->e->off = off;
        snprintf(p->e->what, sizeof p->e->what, "%s", what);
    }
    return p->err;
}

static int jerr(jparser *p, size_t off, const char *what)
{
    return fault(p, DK_JSON_EBAD, off, what);
}

static int nomem(jparser *p) { return fault(p, DK_JSON_ENOMEM, p->pos, "out of memory"); }

static void skip_ws(jparser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static int parse_value(jparser *p, dk_json *v, int depth);

/* Counts bytes the tree is about to take; refuses past DK_JSON_MAX_MEMORY. */
static int take(jparser *p, size_t bytes)
{
    if (bytes > DK_JSON_MAX_MEMORY - p->mem)
        return fault(p, DK_JSON_EBIG, p->pos,
                     "more values than the reader holds (over 1 GiB in memory)");
    p->mem += bytes;
    return 0;
}

static int hex4(jparser *p, unsigned long *out)
{
    if (p->len - p->pos < 4)
        return jerr(p, p->pos, "truncated \\u escape");
    unsigned long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos + (size_t)i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned long)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned long)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned long)(c - 'A' + 10);
        else
            return jerr(p, p->pos + (size_t)i, "bad hex digit in \\u escape");
    }
    p->pos += 4;
    *out = v;
    return 0;
}

/* A string at p->pos (its opening quote); *out is malloc'ed UTF-8. */
static int parse_string(jparser *p, char **out)
{
    size_t start = p->pos++;
    /* The decoded text is never longer than the encoded one. */
    size_t end = p->pos;
    while (end < p->len && p->s[end] != '"') {
        if (p->s[end] == '\\')
            end++;
        end++;
    }
    if (end >= p->len)
        return jerr(p, start, "unterminated string");
    if (take(p, end - p->pos + 1) != 0)
        return p->err;
    char *buf = malloc(end - p->pos + 1);
    if (buf == NULL)
        return nomem(p);
    size_t o = 0;
    while (p->s[p->pos] != '"') {
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c < 0x20) {
            free(buf);
            return jerr(p, p->pos, "control character in a string");
        }
        if (c == '\\') {
            char e = p->s[++p->pos];
            p->pos++;
            unsigned long cp;
            switch (e) {
            case '"':
                buf[o++] = '"';
                break;
            case '\\':
                buf[o++] = '\\';
                break;
            case '/':
                buf[o++] = '/';
                break;
            case 'b':
                buf[o++] = '\b';
                break;
            case 'f':
                buf[o++] = '\f';
                break;
            case 'n':
                buf[o++] = '\n';
                break;
            case 'r':
                buf[o++] = '\r';
                break;
            case 't':
                buf[o++] = '\t';
                break;
            case 'u':
                if (hex4(p, &cp) != 0) {
                    free(buf);
                    return p->err;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned long lo;
                    if (p->len - p->pos < 6 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                        free(buf);
                        return jerr(p, p->pos, "lone high surrogate in \\u escape");
                    }
                    p->pos += 2;
                    if (hex4(p, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF) {
                        free(buf);
                        return jerr(p, p->pos, "bad low surrogate in \\u escape");
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    free(buf);
                    return jerr(p, p->pos - 6, "lone low surrogate in \\u escape");
                }
                if (cp == 0) { /* C strings end there: the rest would be lost unseen */
                    free(buf);
                    return jerr(p, p->pos - 6, "NUL character in a string");
                }
                /* \uXXXX is 6 bytes, its UTF-8 at most 4 */
                o += dk__utf8_encode(cp, (unsigned char *)buf + o);
                break;
            default:
                free(buf);
                return jerr(p, p->pos - 1, "unknown escape in a string");
            }
            continue;
        }
        if (c < 0x80) {
            buf[o++] = (char)c;
            p->pos++;
            continue;
        }
        /* Validate one UTF-8 sequence (its bytes all lie before the quote). */
        const char *q = p->s + p->pos;
        char tmp[5] = {0};
        size_t avail = end - p->pos < 4 ? end - p->pos : 4;
        memcpy(tmp, q, avail);
        const char *t = tmp;
        unsigned long cp = dk__utf8_next(&t);
        if (cp == 0xFFFD && !(avail >= 3 && memcmp(tmp, "\xEF\xBF\xBD", 3) == 0)) {
            free(buf);
            return jerr(p, p->pos, "invalid UTF-8 in a string");
        }
        memcpy(buf + o, q, (size_t)(t - tmp));
        o += (size_t)(t - tmp);
        p->pos += (size_t)(t - tmp);
    }
    p->pos++;
    buf[o] = 0;
    *out = buf;
    return 0;
}

static int parse_number(jparser *p, dk_json *v)
{
    size_t i = p->pos;
    const char *s = p->s;
    if (i < p->len && s[i] == '-')
        i++;
    if (i < p->len && s[i] == '0')
        i++;
    else if (i < p->len && s[i] >= '1' && s[i] <= '9')
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    else
        return jerr(p, p->pos, "expected a value");
    if (i < p->len && s[i] == '.') {
        i++;
        if (!(i < p->len && s[i] >= '0' && s[i] <= '9'))
            return jerr(p, i, "expected a digit after the decimal point");
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (!(i < p->len && s[i] >= '0' && s[i] <= '9'))
            return jerr(p, i, "expected a digit in the exponent");
        while (i < p->len && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    /* The whole token, however long (0.000...1 with many digits is JSON):
     * on the stack when short, as every number %.17g writes is. */
    char small[64], *tmp = small;
    size_t n = i - p->pos;
    if (n >= sizeof small && (tmp = malloc(n + 1)) == NULL)
        return nomem(p);
    memcpy(tmp, s + p->pos, n);
    tmp[n] = 0;
    v->type = DK_JSON_NUM;
    v->num = strtod(tmp, NULL);
    if (tmp != small)
        free(tmp);
    /* A number too small for a double (1e-400) is 0, as it is to others. */
    if (!isfinite(v->num))
        return jerr(p, p->pos, "number out of range");
    p->pos = i;
    return 0;
}

/* Room for one more of v's kids or nums (*items, of size bytes each),
 * counted against the tree's bound. */
static int room(jparser *p, dk_json *v, void **items, size_t size)
{
    if (v->n < v->cap)
        return 0;
    size_t cap = v->cap ? v->cap * 2 : 8;
    if (take(p, (cap - v->cap) * size) != 0)
        return p->err;
    void *a = realloc(*items, cap * size);
    if (a == NULL)
        return nomem(p);
    *items = a;
    v->cap = cap;
    return 0;
}

static int add_kid(jparser *p, dk_json *v, dk_json **kid)
{
    if (room(p, v, (void **)&v->kids, sizeof *v->kids) != 0)
        return p->err;
    *kid = &v->kids[v->n++];
    memset(*kid, 0, sizeof **kid);
    return 0;
}

static bool literal(jparser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos >= n && memcmp(p->s + p->pos, word, n) == 0) {
        p->pos += n;
        return true;
    }
    return false;
}

/* The member names of one object, for the duplicate check: an object
 * may hold any number of members, so a name is looked up in a hash table
 * (open addressing, indices + 1 into the object's kids) once the object is
 * past a few members, not compared with every earlier one. The hash is
 * keyed afresh for each text: with a fixed one, a file of names chosen to
 * share a few slots makes every lookup walk them all, and the reading
 * quadratic again. */
typedef struct keyset {
    size_t *slot;
    size_t cap; /* 0 or a power of two */
} keyset;

#define KEYSET_MIN 16

/* A random key for the hash: /dev/urandom, or where it cannot be read
 * the clock, the pid and an address (ASLR), which a file cannot know. */
static void hash_key(uint64_t key[2])
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t got;
        do
            got = read(fd, key, 2 * sizeof *key);
        while (got < 0 && errno == EINTR);
        close(fd);
        if (got == (ssize_t)(2 * sizeof *key))
            return;
    }
    struct timespec ts = {0};
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    x ^= (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)&ts;
    for (int i = 0; i < 2; i++) { /* splitmix64 */
        uint64_t z = (x += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        key[i] = z ^ (z >> 31);
    }
}

static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

#define SIPROUND                                                  \
    do {                                                          \
        v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32); \
        v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;                    \
        v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;                    \
        v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32); \
    } while (0)

/* SipHash-1-3 of a name under key (as hash tables of untrusted keys use). */
static size_t key_hash(const uint64_t key[2], const char *k)
{
    const unsigned char *c = (const unsigned char *)k;
    size_t len = strlen(k);
    uint64_t v0 = key[0] ^ 0x736f6d6570736575u, v1 = key[1] ^ 0x646f72616e646f6du;
    uint64_t v2 = key[0] ^ 0x6c7967656e657261u, v3 = key[1] ^ 0x7465646279746573u;
    for (size_t i = 0;; i += 8) {
        uint64_t m = 0;
        size_t left = len - i < 8 ? len - i : 8;
        for (size_t j = 0; j < left; j++)
            m |= (uint64_t)c[i + j] << (8 * j);
        if (left < 8)
            m |= (uint64_t)len << 56;
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
        if (left < 8)
            break;
    }
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return (size_t)(v0 ^ v1 ^ v2 ^ v3);
}

static void keyset_put(const jparser *p, keyset *ks, const dk_json *obj, size_t i)
{
    size_t at = key_hash(p->hkey, obj->kids[i].key) & (ks->cap - 1);
    while (ks->slot[at] != 0)
        at = (at + 1) & (ks->cap - 1);
    ks->slot[at] = i + 1;
}

/* Whether obj already has a member named k. */
static bool keyset_has(const jparser *p, const keyset *ks, const dk_json *obj, const char *k)
{
    if (ks->cap == 0) {
        for (size_t i = 0; i < obj->n; i++)
            if (strcmp(obj->kids[i].key, k) == 0)
                return true;
        return false;
    }
    for (size_t at = key_hash(p->hkey, k) & (ks->cap - 1); ks->slot[at] != 0;
         at = (at + 1) & (ks->cap - 1))
        if (strcmp(obj->kids[ks->slot[at] - 1].key, k) == 0)
            return true;
    return false;
}

/* Records obj's last member; the table is built once the object has
 * KEYSET_MIN members and kept at most half full. */
static int keyset_add(jparser *p, keyset *ks, const dk_json *obj)
{
    if (obj->n < KEYSET_MIN)
        return 0;
    if (obj->n * 2 > ks->cap) {
        size_t cap = ks->cap ? ks->cap * 2 : 4 * KEYSET_MIN;
        size_t *slot = calloc(cap, sizeof *slot);
        if (slot == NULL)
            return nomem(p);
        free(ks->slot);
        ks->slot = slot;
        ks->cap = cap;
        for (size_t i = 0; i < obj->n; i++)
            keyset_put(p, ks, obj, i);
        return 0;
    }
    keyset_put(p, ks, obj, obj->n - 1);
    return 0;
}

size_t dk__json_first_off(const char *text, size_t len, const dk_json *arr)
{
    size_t i = arr->off + 1;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
        i++;
    return i;
}

/* Adds num to arr's numbers (DK_JSON_PACK_NUMBERS). */
static int add_num(jparser *p, dk_json *arr, double num)
{
    if (room(p, arr, (void **)&arr->nums, sizeof *arr->nums) != 0)
        return p->err;
    arr->nums[arr->n++] = num;
    return 0;
}

/* Turns arr's numbers into values, for a value of another kind after them.
 * Their offsets are the first one's: a caller names a number of such an
 * array only when it is first (where an object was wanted). */
static int nums_to_kids(jparser *p, dk_json *arr)
{
    if (take(p, arr->cap * sizeof *arr->kids) != 0)
        return p->err;
    dk_json *k = calloc(arr->cap, sizeof *k);
    if (k == NULL)
        return nomem(p);
    size_t off = dk__json_first_off(p->s, p->len, arr);
    for (size_t i = 0; i < arr->n; i++) {
        k[i].type = isnan(arr->nums[i]) ? DK_JSON_NULL : DK_JSON_NUM;
        k[i].num = arr->nums[i];
        k[i].off = off;
    }
    free(arr->nums);
    arr->nums = NULL;
    arr->kids = k;
    return 0;
}

/* An object or array at p->pos (its opening bracket). */
static int parse_members(jparser *p, dk_json *v, int depth, keyset *ks)
{
    bool obj = p->s[p->pos] == '{';
    char close = obj ? '}' : ']';
    v->type = obj ? DK_JSON_OBJ : DK_JSON_ARR;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    for (;;) {
        dk_json *kid = NULL;
        char *k = NULL;
        skip_ws(p);
        if (obj) {
            if (p->pos >= p->len)
                return jerr(p, p->pos, "unexpected end of file (truncated?)");
            if (p->s[p->pos] != '"')
                return jerr(p, p->pos, "expected a member name in quotes");
            size_t koff = p->pos;
            if (parse_string(p, &k) != 0)
                return p->err;
            if (keyset_has(p, ks, v, k)) {
                free(k);
                return jerr(p, koff, "duplicate member name");
            }
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(k);
                return jerr(p, p->pos,
                            p->pos >= p->len ? "unexpected end of file (truncated?)"
                                             : "expected ':' after a member name");
            }
            p->pos++;
        } else if ((p->flags & DK_JSON_PACK_NUMBERS) && v->kids == NULL && p->pos < p->len &&
                   (p->s[p->pos] == '-' || (p->s[p->pos] >= '0' && p->s[p->pos] <= '9') ||
                    p->s[p->pos] == 'n')) {
            dk_json num = {0}; /* a number or null: nothing to free */
            if (parse_value(p, &num, depth + 1) != 0 ||
                add_num(p, v, num.type == DK_JSON_NULL ? NAN : num.num) != 0)
                return p->err;
            goto next;
        } else if (v->nums != NULL && nums_to_kids(p, v) != 0) {
            return p->err;
        }
        if (add_kid(p, v, &kid) != 0) {
            free(k);
            return p->err;
        }
        kid->key = k;
        if (obj && keyset_add(p, ks, v) != 0)
            return p->err;
        if (parse_value(p, kid, depth + 1) != 0)
            return p->err;
    next:
        skip_ws(p);
        if (p->pos >= p->len)
            return jerr(p, p->pos, "unexpected end of file (truncated?)");
        if (p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->s[p->pos] == close) {
            p->pos++;
            return 0;
        }
        return jerr(p, p->pos, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(jparser *p, dk_json *v, int depth)
{
    skip_ws(p);
    v->off = p->pos;
    if (p->pos >= p->len)
        return jerr(p, p->pos, "unexpected end of file (truncated?)");
    if (depth > DK_JSON_MAX_DEPTH)
        return jerr(p, p->pos, "nested too deeply");
    char c = p->s[p->pos];
    if (c == '{' || c == '[') {
        keyset ks = {0};
        int rc = parse_members(p, v, depth, &ks);
        free(ks.slot);
        return rc;
    }
    if (c == '"') {
        v->type = DK_JSON_STR;
        return parse_string(p, &v->str);
    }
    if (literal(p, "true")) {
        v->type = DK_JSON_BOOL;
        v->b = true;
        return 0;
    }
    if (literal(p, "false")) {
        v->type = DK_JSON_BOOL;
        return 0;
    }
    if (literal(p, "null")) {
        v->type = DK_JSON_NULL;
        return 0;
    }
    return parse_number(p, v);
}

int dk__json_parse(const char *text, size_t len, unsigned flags, dk_json *root, dk_json_error *err)
{
    jparser p = {.s = text, .len = len, .flags = flags, .e = err};
    memset(root, 0, sizeof *root);
    memset(err, 0, sizeof *err);
    hash_key(p.hkey);
    if (parse_value(&p, root, 0) != 0)
        return p.err;
    skip_ws(&p);
    if (p.pos != p.len)
        return jerr(&p, p.pos, "data after the end of the document");
    return 0;
}

const dk_json *dk__json_get(const dk_json *obj, const char *k)
{
    if (obj == NULL || obj->type != DK_JSON_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->kids[i].key, k) == 0)
            return &obj->kids[i];
    return NULL;
}
