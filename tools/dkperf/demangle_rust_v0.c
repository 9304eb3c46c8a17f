/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * demangle_rust_v0.c - Rust v0 names for dkperf report (demangle.h), the
 * decoder of macOS, which has no libiberty; built on every platform so
 * that Linux tests compare it with libiberty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "demangle.h"

/*
 * Rust v0 names (_R...), as rustc's symbol-mangling-version=v0 writes them
 * (https://doc.rust-lang.org/rustc/symbol-mangling/v0.html), written out
 * as GNU libiberty's rust-demangle.c writes them without DMGL_VERBOSE: no
 * crate disambiguators, no type suffix on constants, the instantiating
 * crate dropped. The names come from untrusted images, and a backref can
 * repeat a path already written, so a name of n bytes could write 2^n:
 * the output, the depth and the steps are capped (as rustc-demangle caps
 * them) and a name past a cap stays mangled.
 */
#define V0_MAX_OUT (64u * 1024) /* bytes of output; real names are < 2 KiB */
#define V0_MAX_DEPTH 500u       /* nested paths, types and constants */
#define V0_MAX_STEPS (1u << 20) /* calls of the recursive readers */
#define V0_MAX_PUNYCODE 1024u   /* bytes of one punycode identifier */

struct v0 {
    const char *s; /* after "_R" */
    size_t n;      /* up to the end or a '.' suffix */
    size_t pos;
    unsigned depth, steps;
    bool skip; /* reading without writing (an impl's own path) */
    bool err;
    uint64_t bound; /* lifetimes bound by the binders around */
    char *out;
    size_t len, cap;
};

struct v0_ident {
    const char *ascii, *puny;
    size_t alen, plen;
};

static char v0_peek(const struct v0 *v) { return v->pos < v->n ? v->s[v->pos] : '\0'; }

static bool v0_eat(struct v0 *v, char c)
{
    if (v->pos < v->n && v->s[v->pos] == c) {
        v->pos++;
        return true;
    }
    return false;
}

static char v0_next(struct v0 *v)
{
    if (v->pos >= v->n) {
        v->err = true;
        return '\0';
    }
    return v->s[v->pos++];
}

static bool v0_digit(char c) { return c >= '0' && c <= '9'; }
static bool v0_lower(char c) { return c >= 'a' && c <= 'z'; }
static bool v0_upper(char c) { return c >= 'A' && c <= 'Z'; }

static void v0_put(struct v0 *v, const char *p, size_t k)
{
    if (v->err || v->skip)
        return;
    if (k > V0_MAX_OUT - v->len) {
        v->err = true;
        return;
    }
    if (v->len + k >= v->cap) {
        size_t cap = v->cap != 0 ? v->cap : 128;
        while (cap <= v->len + k)
            cap *= 2;
        char *o = realloc(v->out, cap);
        if (o == NULL) {
            v->err = true;
            return;
        }
        v->out = o;
        v->cap = cap;
    }
    memcpy(v->out + v->len, p, k);
    v->len += k;
}

static void v0_puts(struct v0 *v, const char *p) { v0_put(v, p, strlen(p)); }

static void v0_put_u64(struct v0 *v, uint64_t x, unsigned base)
{
    char b[24];
    size_t i = sizeof b;
    do {
        b[--i] = "0123456789abcdef"[x % base];
        x /= base;
    } while (x != 0);
    v0_put(v, b + i, sizeof b - i);
}

/* Entry into a recursive reader: false (and the name refused) past the
 * depth or step cap. Every entry is paired with v0_leave. */
static bool v0_enter(struct v0 *v)
{
    v->depth++;
    if (v->err || v->depth > V0_MAX_DEPTH || ++v->steps > V0_MAX_STEPS) {
        v->err = true;
        return false;
    }
    return true;
}

static void v0_leave(struct v0 *v) { v->depth--; }

/* <base-62-number>: "_" is 0, digits then "_" are their value plus 1. */
static uint64_t v0_base62(struct v0 *v)
{
    if (v0_eat(v, '_'))
        return 0;
    uint64_t x = 0;
    while (!v->err && !v0_eat(v, '_')) {
        char c = v0_next(v);
        unsigned d = v0_digit(c)   ? (unsigned)(c - '0')
                     : v0_lower(c) ? 10u + (unsigned)(c - 'a')
                     : v0_upper(c) ? 36u + (unsigned)(c - 'A')
                                   : 99u;
        if (d == 99u || x > (UINT64_MAX - d) / 62) {
            v->err = true;
            return 0;
        }
        x = x * 62 + d;
    }
    if (x == UINT64_MAX)
        v->err = true;
    return v->err ? 0 : x + 1;
}

/* An optional tagged <base-62-number> ("s" disambiguator, "G" binder):
 * 0 when absent, else its value plus 1. */
static uint64_t v0_opt62(struct v0 *v, char tag)
{
    if (!v0_eat(v, tag))
        return 0;
    uint64_t x = v0_base62(v);
    return x == UINT64_MAX ? (v->err = true, 0) : x + 1;
}

static struct v0_ident v0_ident(struct v0 *v)
{
    struct v0_ident id = {NULL, NULL, 0, 0};
    bool puny = v0_eat(v, 'u');
    char c = v0_next(v);
    if (!v0_digit(c)) {
        v->err = true;
        return id;
    }
    size_t len = (size_t)(c - '0');
    if (c != '0')
        while (v0_digit(v0_peek(v)) && len <= v->n)
            len = len * 10 + (size_t)(v0_next(v) - '0');
    v0_eat(v, '_'); /* the separator before an identifier that starts with a digit or '_' */
    if (len > v->n - v->pos) {
        v->err = true;
        return id;
    }
    id.ascii = v->s + v->pos;
    id.alen = len;
    v->pos += len;
    if (puny) {
        /* The ASCII characters, '_', then the insertions of the others. */
        size_t u = len;
        while (u > 0 && id.ascii[u - 1] != '_')
            u--;
        id.puny = id.ascii + u;
        id.plen = len - u;
        id.alen = u > 0 ? u - 1 : 0;
        if (id.plen == 0)
            v->err = true;
    }
    return id;
}

static bool v0_ident_empty(const struct v0_ident *id) { return id->alen == 0 && id->puny == NULL; }

/* A punycode identifier (RFC 3492 with '_' for '-'), as UTF-8. */
static void v0_put_punycode(struct v0 *v, const struct v0_ident *id)
{
    if (v->skip || v->err)
        return;
    if (id->alen + id->plen > V0_MAX_PUNYCODE) {
        v->err = true;
        return;
    }
    uint32_t cp[V0_MAX_PUNYCODE];
    size_t k = 0;
    for (; k < id->alen; k++)
        cp[k] = (unsigned char)id->ascii[k];
    uint64_t i = 0, c = 0x80, bias = 72;
    bool first = true;
    for (size_t p = 0; p < id->plen;) {
        uint64_t delta = 0, w = 1;
        for (uint64_t t, d, kk = 36;; kk += 36) {
            if (p >= id->plen) {
                v->err = true;
                return;
            }
            char ch = id->puny[p++];
            d = v0_lower(ch)   ? (uint64_t)(ch - 'a')
                : v0_digit(ch) ? 26u + (uint64_t)(ch - '0')
                               : 99u;
            t = kk <= bias ? 1 : kk - bias >= 26 ? 26 : kk - bias;
            if (d == 99u || d * w > 0x10ffffu * (V0_MAX_PUNYCODE + 1u)) {
                v->err = true;
                return;
            }
            delta += d * w;
            if (d < t)
                break;
            w *= 36 - t;
        }
        k++;
        i += delta;
        c += i / k;
        i %= k;
        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) {
            v->err = true;
            return;
        }
        memmove(cp + i + 1, cp + i, (k - 1 - (size_t)i) * sizeof *cp);
        cp[i++] = (uint32_t)c;
        /* Bias adaptation. */
        delta = first ? delta / 700 : delta / 2;
        first = false;
        delta += delta / k;
        uint64_t kk = 0;
        for (; delta > (35 * 26) / 2; kk += 36)
            delta /= 35;
        bias = kk + (36 * delta) / (delta + 38);
    }
    for (size_t j = 0; j < k; j++) {
        unsigned char b[4];
        v0_put(v, (const char *)b, dk__utf8_encode(cp[j], b));
    }
}

static void v0_put_ident(struct v0 *v, const struct v0_ident *id)
{
    if (id->puny != NULL)
        v0_put_punycode(v, id);
    else
        v0_put(v, id->ascii, id->alen);
}

/* Lifetime lt: 0 is '_, else counted back from the last one bound (1);
 * the bound ones are 'a, 'b, ... in the order they were bound. */
static void v0_lifetime(struct v0 *v, uint64_t lt)
{
    v0_puts(v, "'");
    if (lt == 0) {
        v0_puts(v, "_");
        return;
    }
    if (lt > v->bound) {
        v->err = true;
        return;
    }
    uint64_t d = v->bound - lt;
    if (d < 26) {
        char c = (char)('a' + d);
        v0_put(v, &c, 1);
    } else {
        v0_puts(v, "_");
        v0_put_u64(v, d, 10);
    }
}

/* An optional binder: "for<'a, 'b> ", its lifetimes counted in v->bound
 * (the caller restores it). */
static void v0_binder(struct v0 *v)
{
    uint64_t n = v0_opt62(v, 'G');
    if (n == 0)
        return;
    if (n > V0_MAX_OUT) {
        /* More than the output could name (and a skipped binder writes
         * nothing to stop a count of 2^64 at the cap). */
        v->err = true;
        return;
    }
    v0_puts(v, "for<");
    for (uint64_t i = 0; i < n && !v->err; i++) {
        if (i > 0)
            v0_puts(v, ", ");
        v->bound++;
        v0_lifetime(v, 1);
    }
    v0_puts(v, "> ");
}

/* A backref: the position (from after "_R") of an earlier path, type or
 * constant, strictly before the tag at so reading always moves back. */
static bool v0_backref(struct v0 *v, size_t at, size_t *to)
{
    uint64_t x = v0_base62(v);
    if (v->err || x >= at) {
        v->err = true;
        return false;
    }
    *to = (size_t)x;
    return true;
}

static void v0_path(struct v0 *v, bool in_value);
static void v0_type(struct v0 *v);
static void v0_const(struct v0 *v);

/* Reads what fn reads at position to, then comes back. A skipped part is
 * not followed: nothing of it is written. */
#define V0_FOLLOW(v, to, call)       \
    do {                             \
        if (!(v)->skip) {            \
            size_t back_ = (v)->pos; \
            (v)->pos = (to);         \
            call;                    \
            (v)->pos = back_;        \
        }                            \
    } while (0)

static void v0_generic_args(struct v0 *v)
{
    for (size_t i = 0; !v->err && !v0_eat(v, 'E'); i++) {
        if (i > 0)
            v0_puts(v, ", ");
        if (v0_eat(v, 'L'))
            v0_lifetime(v, v0_base62(v));
        else if (v0_eat(v, 'K'))
            v0_const(v);
        else
            v0_type(v);
    }
}

static void v0_path(struct v0 *v, bool in_value)
{
    if (!v0_enter(v))
        goto out;
    size_t at = v->pos, to;
    char tag = v0_next(v);
    uint64_t dis;
    struct v0_ident name;
    switch (tag) {
    case 'C':
        v0_opt62(v, 's');
        name = v0_ident(v);
        v0_put_ident(v, &name);
        break;
    case 'N': {
        char ns = v0_next(v);
        if (!v0_lower(ns) && !v0_upper(ns)) {
            v->err = true;
            break;
        }
        v0_path(v, in_value);
        dis = v0_opt62(v, 's');
        name = v0_ident(v);
        if (v0_upper(ns)) {
            /* closures, shims: {closure#0}, {shim:vtable#0} */
            v0_puts(v, "::{");
            v0_puts(v, ns == 'C' ? "closure" : ns == 'S' ? "shim" : "");
            if (ns != 'C' && ns != 'S')
                v0_put(v, &ns, 1);
            if (!v0_ident_empty(&name)) {
                v0_puts(v, ":");
                v0_put_ident(v, &name);
            }
            v0_puts(v, "#");
            v0_put_u64(v, dis, 10);
            v0_puts(v, "}");
        } else if (!v0_ident_empty(&name)) {
            v0_puts(v, "::");
            v0_put_ident(v, &name);
        }
        break;
    }
    case 'M':
    case 'X':
    case 'Y':
        if (tag != 'Y') {
            /* The impl's own path is not written, only its self type. */
            v0_opt62(v, 's');
            bool skip = v->skip;
            v->skip = true;
            v0_path(v, in_value);
            v->skip = skip;
        }
        v0_puts(v, "<");
        v0_type(v);
        if (tag != 'M') {
            v0_puts(v, " as ");
            v0_path(v, false);
        }
        v0_puts(v, ">");
        break;
    case 'I':
        v0_path(v, in_value);
        if (in_value)
            v0_puts(v, "::");
        v0_puts(v, "<");
        v0_generic_args(v);
        v0_puts(v, ">");
        break;
    case 'B':
        if (v0_backref(v, at, &to))
            V0_FOLLOW(v, to, v0_path(v, in_value));
        break;
    default:
        v->err = true;
    }
out:
    v0_leave(v);
}

/* The type of a one-letter tag, or NULL. */
static const char *v0_basic(char tag)
{
    static const char tags[] = "bceuaslxnihtmyojfdzpv";
    static const char *const names[] = {"bool", "char",  "str",   "()",  "i8",  "i16", "i32",
                                        "i64",  "i128",  "isize", "u8",  "u16", "u32", "u64",
                                        "u128", "usize", "f32",   "f64", "!",   "_",   "..."};
    const char *t = tag != '\0' ? strchr(tags, tag) : NULL;
    return t != NULL ? names[t - tags] : NULL;
}

/* The path of a dyn type's trait, its <...> left open (true) when it has
 * generic arguments, for the associated types to follow in them. */
static bool v0_path_open(struct v0 *v)
{
    bool open = false;
    if (!v0_enter(v))
        goto out;
    size_t at = v->pos, to;
    if (v0_eat(v, 'B')) {
        if (v0_backref(v, at, &to))
            V0_FOLLOW(v, to, open = v0_path_open(v));
    } else if (v0_eat(v, 'I')) {
        v0_path(v, false);
        v0_puts(v, "<");
        open = true;
        v0_generic_args(v);
    } else {
        v0_path(v, false);
    }
out:
    v0_leave(v);
    return open;
}

/* A trait of a dyn type: dyn Iterator<Item = u8>. */
static void v0_dyn_trait(struct v0 *v)
{
    bool open = v0_path_open(v);
    while (!v->err && v0_eat(v, 'p')) {
        v0_puts(v, open ? ", " : "<");
        open = true;
        struct v0_ident name = v0_ident(v);
        v0_put_ident(v, &name);
        v0_puts(v, " = ");
        v0_type(v);
    }
    if (open)
        v0_puts(v, ">");
}

/* fn types: for<'a> unsafe extern "C" fn(&'a u8) -> u8. */
static void v0_fn_type(struct v0 *v)
{
    v0_binder(v);
    if (v0_eat(v, 'U'))
        v0_puts(v, "unsafe ");
    if (v0_eat(v, 'K')) {
        struct v0_ident abi = {"C", NULL, 1, 0};
        if (!v0_eat(v, 'C')) {
            abi = v0_ident(v);
            if (abi.alen == 0 || abi.puny != NULL)
                v->err = true;
        }
        /* rustc wrote the ABI's '-' as '_'. */
        v0_puts(v, "extern \"");
        for (size_t i = 0; i < abi.alen; i++)
            v0_put(v, abi.ascii[i] == '_' ? "-" : abi.ascii + i, 1);
        v0_puts(v, "\" ");
    }
    v0_puts(v, "fn(");
    for (size_t i = 0; !v->err && !v0_eat(v, 'E'); i++) {
        if (i > 0)
            v0_puts(v, ", ");
        v0_type(v);
    }
    v0_puts(v, ")");
    if (!v0_eat(v, 'u')) {
        v0_puts(v, " -> ");
        v0_type(v);
    }
}

static void v0_type(struct v0 *v)
{
    if (!v0_enter(v))
        goto out;
    size_t at = v->pos, to;
    uint64_t bound = v->bound;
    char tag = v0_next(v);
    const char *basic = v0_basic(tag);
    if (basic != NULL) {
        v0_puts(v, basic);
        goto out;
    }
    switch (tag) {
    case 'R':
    case 'Q':
        v0_puts(v, "&");
        if (v0_eat(v, 'L')) {
            uint64_t lt = v0_base62(v);
            if (lt != 0) {
                v0_lifetime(v, lt);
                v0_puts(v, " ");
            }
        }
        if (tag == 'Q')
            v0_puts(v, "mut ");
        v0_type(v);
        break;
    case 'P':
    case 'O':
        v0_puts(v, tag == 'P' ? "*const " : "*mut ");
        v0_type(v);
        break;
    case 'A':
    case 'S':
        v0_puts(v, "[");
        v0_type(v);
        if (tag == 'A') {
            v0_puts(v, "; ");
            v0_const(v);
        }
        v0_puts(v, "]");
        break;
    case 'T': {
        size_t i = 0;
        v0_puts(v, "(");
        for (; !v->err && !v0_eat(v, 'E'); i++) {
            if (i > 0)
                v0_puts(v, ", ");
            v0_type(v);
        }
        v0_puts(v, i == 1 ? ",)" : ")");
        break;
    }
    case 'F':
        v0_fn_type(v);
        v->bound = bound;
        break;
    case 'D':
        v0_puts(v, "dyn ");
        v0_binder(v);
        for (size_t i = 0; !v->err && !v0_eat(v, 'E'); i++) {
            if (i > 0)
                v0_puts(v, " + ");
            v0_dyn_trait(v);
        }
        v->bound = bound;
        if (!v0_eat(v, 'L')) {
            v->err = true;
            break;
        }
        uint64_t lt = v0_base62(v);
        if (lt != 0) {
            v0_puts(v, " + ");
            v0_lifetime(v, lt);
        }
        break;
    case 'B':
        if (v0_backref(v, at, &to))
            V0_FOLLOW(v, to, v0_type(v));
        break;
    default:
        /* A path names the type. */
        v->pos = at;
        v0_path(v, false);
    }
out:
    v0_leave(v);
}

/* The hex digits of a constant up to its '_': their count, the value of
 * the last 16 in *value. */
static size_t v0_hex(struct v0 *v, uint64_t *value)
{
    size_t k = 0;
    *value = 0;
    while (!v->err && !v0_eat(v, '_')) {
        char c = v0_next(v);
        unsigned d = v0_digit(c)            ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? 10u + (unsigned)(c - 'a')
                                            : 99u;
        if (d == 99u) {
            v->err = true;
            return 0;
        }
        *value = *value << 4 | d;
        k++;
    }
    return k;
}

static void v0_const_uint(struct v0 *v)
{
    uint64_t x;
    size_t start = v->pos, k = v0_hex(v, &x);
    if (v->err || k == 0) {
        v->err = true;
    } else if (k > 16) {
        /* Past 64 bits: the digits as they are. */
        v0_puts(v, "0x");
        v0_put(v, v->s + start, k);
    } else {
        v0_put_u64(v, x, 10);
    }
}

static void v0_const_char(struct v0 *v)
{
    uint64_t x;
    size_t k = v0_hex(v, &x);
    if (v->err || k == 0 || k > 8) {
        v->err = true;
        return;
    }
    /* libiberty's rendering: printable ASCII but ' ' and '~' as it is,
     * quotes and backslashes unescaped. */
    v0_puts(v, "'");
    if (x == '\t' || x == '\r' || x == '\n') {
        v0_puts(v, x == '\t' ? "\\t" : x == '\r' ? "\\r" : "\\n");
    } else if (x > ' ' && x < '~') {
        char c = (char)x;
        v0_put(v, &c, 1);
    } else {
        v0_puts(v, "\\u{");
        v0_put_u64(v, x, 16);
        v0_puts(v, "}");
    }
    v0_puts(v, "'");
}

static void v0_const(struct v0 *v)
{
    if (!v0_enter(v))
        goto out;
    size_t at = v->pos, to;
    uint64_t x;
    if (v0_eat(v, 'B')) {
        if (v0_backref(v, at, &to))
            V0_FOLLOW(v, to, v0_const(v));
        goto out;
    }
    switch (v0_next(v)) {
    case 'p':
        v0_puts(v, "_");
        break;
    case 'a':
    case 's':
    case 'l':
    case 'x':
    case 'n':
    case 'i':
        if (v0_eat(v, 'n'))
            v0_puts(v, "-");
        /* fallthrough */
    case 'h':
    case 't':
    case 'm':
    case 'y':
    case 'o':
    case 'j':
        v0_const_uint(v);
        break;
    case 'b':
        if (v0_hex(v, &x) != 1 || x > 1)
            v->err = true;
        v0_puts(v, x == 1 ? "true" : "false");
        break;
    case 'c':
        v0_const_char(v);
        break;
    default:
        v->err = true;
    }
out:
    v0_leave(v);
}

char *demangle_rust_v0(const char *mangled)
{
    if (mangled[0] != '_' || mangled[1] != 'R' || !v0_upper(mangled[2]))
        return NULL;
    struct v0 v = {.s = mangled + 2};
    /* [_0-9a-zA-Z] up to the end or a '.' suffix (".llvm.123"), ignored. */
    for (; v.s[v.n] != '\0' && v.s[v.n] != '.'; v.n++) {
        char c = v.s[v.n];
        if (c != '_' && !v0_digit(c) && !v0_lower(c) && !v0_upper(c))
            return NULL;
    }
    v0_path(&v, true);
    if (!v.err && v.pos < v.n) {
        /* The instantiating crate: read, not written. */
        v.skip = true;
        v0_path(&v, false);
        v.skip = false;
    }
    v0_put(&v, "", 1);
    if (v.err || v.pos != v.n) {
        free(v.out);
        return NULL;
    }
    return v.out;
}
