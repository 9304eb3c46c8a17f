/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * demangle.c - function names demangled for dkperf report (demangle.h).
 * Linux: GNU libiberty's cplus_demangle, as binutils and perf use it, which
 * reads C++ and Rust legacy names (the legacy one, hash and all, is C++'s
 * with escapes of its own); Rust v0 names, on every system, through our
 * bounded decoder (demangle_rust_v0.c). macOS: the system's __cxa_demangle, looked up
 * at run time in libc++abi so that dkperf links no C++ runtime, and a
 * decoder of Rust legacy names of our own (__cxa_demangle leaves their hash
 * and escapes), and one of Rust v0 names (demangle_rust_v0.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "demangle.h"

#if defined(DKPERF_HAVE_LIBIBERTY)
#include <libiberty/demangle.h>
#elif defined(__APPLE__)
#include <dlfcn.h>
#include <pthread.h>
#endif

bool demangle_mangled(const char *name)
{
    return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

/* Whether s starts with 16 lower-case hex digits. */
static bool hash16(const char *s)
{
    for (int i = 0; i < 16; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* rustc's escapes of the characters a symbol cannot hold. */
static const struct {
    const char *esc;
    char c;
} rust_escapes[] = {{"$SP$", '@'}, {"$BP$", '*'}, {"$RF$", '&'}, {"$LT$", '<'},
                    {"$GT$", '>'}, {"$LP$", '('}, {"$RP$", ')'}, {"$C$", ','}};

#define N_RUST_ESCAPES (sizeof rust_escapes / sizeof *rust_escapes)

/* The character of the escape p[0 .. len) ("$LT$", "$u20$"), UTF-8 into
 * out (4 bytes or fewer: no more than the escape takes); its length, or 0
 * for an escape rustc does not write. */
static size_t rust_escape(const char *p, size_t len, char *out)
{
    for (size_t k = 0; k < N_RUST_ESCAPES; k++)
        if (strlen(rust_escapes[k].esc) == len && memcmp(rust_escapes[k].esc, p, len) == 0) {
            out[0] = rust_escapes[k].c;
            return 1;
        }
    if (len < 4 || len > 9 || p[1] != 'u')
        return 0;
    unsigned long cp = 0;
    for (size_t h = 2; h + 1 < len; h++) {
        char c = p[h];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return 0;
        cp = cp * 16 + (unsigned long)d;
    }
    if (cp == 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return dk__utf8_encode(cp, (unsigned char *)out);
}

char *demangle_rust_legacy(const char *mangled, const char *cxx)
{
    size_t m = strlen(mangled), n = strlen(cxx);
    if (m < 24 || strncmp(mangled, "_ZN", 3) != 0 || mangled[m - 1] != 'E' ||
        strncmp(mangled + m - 20, "17h", 3) != 0 || !hash16(mangled + m - 17))
        return NULL;
    if (n < 19 || strncmp(cxx + n - 19, "::h", 3) != 0 || !hash16(cxx + n - 16))
        return NULL;
    n -= 19;
    /* Every escape and ".." decodes to no more bytes than it takes. */
    char *out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    bool seg = true; /* at the start of a path segment */
    for (size_t i = 0; i < n;) {
        const char *p = cxx + i;
        bool at_seg = seg;
        seg = false;
        if (at_seg && p[0] == '_' && i + 1 < n && p[1] == '$') {
            i++; /* rustc's '_' before a segment that starts with '$' */
        } else if (i + 1 < n && ((p[0] == ':' && p[1] == ':') || (p[0] == '.' && p[1] == '.'))) {
            out[o++] = ':';
            out[o++] = ':';
            i += 2;
            seg = p[0] == ':';
        } else if (p[0] == '$') {
            /* An escape: up to the next '$', within the name. */
            const char *end = memchr(p + 1, '$', n - i - 1);
            size_t len = end != NULL ? (size_t)(end - p) + 1 : 0;
            size_t w = len != 0 ? rust_escape(p, len, out + o) : 0;
            if (w == 0) {
                free(out);
                return NULL;
            }
            o += w;
            i += len;
        } else {
            out[o++] = *p;
            i++;
        }
    }
    out[o] = '\0';
    return out;
}

#if defined(DKPERF_HAVE_LIBIBERTY)

const char *demangle_reader(void) { return "GNU libiberty"; }

const char *demangle_missing(void) { return NULL; }

char *demangle(const char *name)
{
    if (!demangle_mangled(name))
        return NULL;
    /* Rust v0 through our decoder, which gives libiberty's text for
     * rustc's names but is bounded: libiberty 20230104 counts through a
     * binder of 2^62 lifetimes in a part it skips, a hang on a hostile
     * image's name. */
    if (name[1] == 'R')
        return demangle_rust_v0(name);
    /* The parameters and qualifiers too: overloads stay apart. The style
     * is libiberty's automatic one, which tries Rust before C++. */
    return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

#elif defined(__APPLE__)

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn cxa_demangle;

/* libc++abi is part of every macOS (libc++ re-exports it); never unloaded. */
static void cxa_load(void)
{
    void *h = dlopen("/usr/lib/libc++abi.dylib", RTLD_LAZY | RTLD_LOCAL);
    if (h != NULL)
        cxa_demangle = (cxa_demangle_fn)(uintptr_t)dlsym(h, "__cxa_demangle");
}

const char *demangle_reader(void)
{
    pthread_once(&cxa_once, cxa_load);
    return cxa_demangle != NULL ? "libc++abi's __cxa_demangle" : NULL;
}

const char *demangle_missing(void)
{
    return demangle_reader() == NULL ? "libc++abi's __cxa_demangle was not found: C++ and Rust "
                                       "legacy names are shown mangled"
                                     : NULL;
}

char *demangle(const char *name)
{
    if (name[0] == '_' && name[1] == 'R')
        return demangle_rust_v0(name);
    if (name[0] != '_' || name[1] != 'Z' || demangle_reader() == NULL)
        return NULL;
    int status = -1;
    char *s = cxa_demangle(name, NULL, NULL, &status);
    if (status != 0) {
        free(s);
        return NULL;
    }
    /* A Rust legacy name is an Itanium one with a hash and escapes. */
    char *rust = demangle_rust_legacy(name, s);
    if (rust != NULL) {
        free(s);
        return rust;
    }
    return s;
}

#else

const char *demangle_reader(void) { return NULL; }

const char *demangle_missing(void)
{
    return "this dkperf was built without GNU libiberty: C++ and Rust legacy names are shown "
           "mangled (install libiberty-dev, then build it again)";
}

char *demangle(const char *name)
{
    return name[0] == '_' && name[1] == 'R' ? demangle_rust_v0(name) : NULL;
}

#endif
