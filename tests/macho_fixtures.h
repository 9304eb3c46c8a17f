/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * macho_fixtures.h - what test_macho.c and test_macho_fat.c share: the
 * fixtures and their truth files (what llvm-nm and llvm-objdump said), the
 * byte helpers that lay out broken images, and the checks of a slice read
 * against its truth.
 */
#ifndef DKPERF_TEST_MACHO_FIXTURES_H
#define DKPERF_TEST_MACHO_FIXTURES_H

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "check.h"
#include "macho.h"

#define CPU_ARM64 0x0100000cu
#define CPU_X86_64 0x01000007u

/* ---- files ---- */

typedef struct blob {
    uint8_t *data;
    size_t len;
} blob;

static inline blob load(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        DKT_FAIL("cannot open %s: %s", path, strerror(errno));
    blob b = {NULL, 0};
    size_t cap = 0;
    for (;;) {
        if (b.len == cap) {
            cap = cap ? cap * 2 : 65536;
            b.data = realloc(b.data, cap);
            CHECK(b.data != NULL);
        }
        size_t n = fread(b.data + b.len, 1, cap - b.len, f);
        if (n == 0)
            break;
        b.len += n;
    }
    CHECK(!ferror(f));
    fclose(f);
    return b;
}

static inline blob copy(blob b)
{
    blob c = {malloc(b.len ? b.len : 1), b.len};
    CHECK(c.data != NULL);
    memcpy(c.data, b.data, b.len);
    return c;
}

static inline char *temp_file(const void *data, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    char *path = malloc(1024);
    CHECK(path != NULL);
    snprintf(path, 1024, "%s/test_macho.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(len == 0 || write(fd, data, len) == (ssize_t)len);
    CHECK(close(fd) == 0);
    return path;
}

static inline uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void wr32be(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* ---- the truth files ---- */

typedef struct tsym {
    uint64_t addr;
    char type;
    char name[64];
} tsym;

typedef struct tslice {
    char arch[16];
    uint8_t uuid[16];
    uint64_t text;
    tsym syms[32];
    size_t nsyms;
} tslice;

static inline void parse_uuid(const char *text, uint8_t out[16])
{
    int k = 0;
    for (const char *p = text; *p && k < 32; p++) {
        if (*p == '-')
            continue;
        unsigned v;
        CHECK(sscanf(p, "%1x", &v) == 1);
        if (k % 2 == 0)
            out[k / 2] = (uint8_t)(v << 4);
        else
            out[k / 2] |= (uint8_t)v;
        k++;
    }
    CHECK_INT(k, ==, 32);
}

static inline size_t load_truth(const char *dir, const char *name, tslice *slices, size_t max)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.truth", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        DKT_FAIL("cannot open %s: %s", path, strerror(errno));
    char line[256];
    size_t n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char uuid[64], a[32], t[4], nm[64];
        if (strncmp(line, "slice ", 6) == 0) {
            CHECK(n < max);
            tslice *s = &slices[n++];
            memset(s, 0, sizeof *s);
            CHECK(sscanf(line, "slice %15s %63s %31s", s->arch, uuid, a) == 3);
            parse_uuid(uuid, s->uuid);
            s->text = strtoull(a, NULL, 16);
        } else if (strncmp(line, "sym ", 4) == 0) {
            CHECK(n > 0);
            tslice *s = &slices[n - 1];
            CHECK(s->nsyms < sizeof s->syms / sizeof s->syms[0]);
            CHECK(sscanf(line, "sym %31s %3s %63s", a, t, nm) == 3);
            tsym *y = &s->syms[s->nsyms++];
            y->addr = strtoull(a, NULL, 16);
            y->type = t[0];
            snprintf(y->name, sizeof y->name, "%s", nm);
        }
    }
    fclose(f);
    CHECK(n > 0);
    return n;
}

/* The name the reader gives: one leading underscore less. */
static inline const char *shown(const tsym *y) { return y->name[0] == '_' ? y->name + 1 : y->name; }

static inline bool is_text(char type) { return type == 'T' || type == 't'; }

/* Every symbol llvm-nm lists resolves to itself at its address (where
 * several share one, to the first external one), and every function at
 * its last byte too; the header and past the end resolve to nothing. */
static inline void check_slice(const macho_image *m, const tslice *t)
{
    CHECK(macho_uuid(m) != NULL);
    CHECK(memcmp(macho_uuid(m), t->uuid, 16) == 0);
    CHECK_U64(macho_text_vmaddr(m), ==, t->text);
    CHECK_U64(macho_cputype(m), ==, strcmp(t->arch, "x86_64") == 0 ? CPU_X86_64 : CPU_ARM64);
    size_t addresses = 0, functions = 0;
    for (size_t i = 0; i < t->nsyms; i++) {
        const tsym *y = &t->syms[i];
        if (strcmp(y->name, "__mh_execute_header") == 0) {
            CHECK(macho_lookup(m, y->addr, NULL) == NULL);
            continue;
        }
        if (i > 0 && t->syms[i - 1].addr == y->addr)
            continue;
        const tsym *want = y;
        for (size_t k = i; k < t->nsyms && t->syms[k].addr == y->addr; k++)
            if (t->syms[k].type >= 'A' && t->syms[k].type <= 'Z') {
                want = &t->syms[k];
                break;
            }
        uint64_t start = 0;
        CHECK_STR(macho_lookup(m, y->addr, &start), shown(want));
        CHECK_U64(start, ==, y->addr);
        addresses++;
        if (!is_text(y->type))
            continue;
        functions++;
        if (i + 1 < t->nsyms && is_text(t->syms[i + 1].type)) {
            start = 0;
            CHECK_STR(macho_lookup(m, t->syms[i + 1].addr - 1, &start), shown(want));
            CHECK_U64(start, ==, y->addr);
        }
    }
    CHECK_INT(functions, ==, 6); /* fixture.c's */
    CHECK_U64(macho_symbol_count(m), ==, addresses);
    CHECK(macho_lookup(m, 0, NULL) == NULL);
    CHECK(macho_lookup(m, UINT64_MAX, NULL) == NULL);
    CHECK(macho_lookup(m, t->syms[t->nsyms - 1].addr + 0x100000, NULL) == NULL);
}

static inline const tslice *slice_of(const tslice *s, size_t n, const char *arch)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s[i].arch, arch) == 0)
            return &s[i];
    DKT_FAIL("no slice %s in the truth file", arch);
}

/* The slice macho_open picks in a fat arm64 + x86_64 file, by its rule. */
static inline const char *host_pick(void)
{
#if defined(__x86_64__)
    return "x86_64";
#else
    return "arm64";
#endif
}

/* Open len bytes of d (copied to a buffer of exactly that size, so an
 * overread shows under ASan); returns the result, err holds the error. */
static inline int open_bytes(const uint8_t *d, size_t len, macho_image **m, char *err,
                             size_t errlen)
{
    uint8_t *c = malloc(len ? len : 1);
    CHECK(c != NULL);
    memcpy(c, d, len);
    err[0] = '\0';
    int rc = macho_open_buffer(c, len, "img", m, err, errlen);
    free(c);
    if (rc != 0) {
        CHECK(*m == NULL);
        CHECK(strncmp(err, "img: ", 5) == 0);
        CHECK(strchr(err, '\n') == NULL);
    } else {
        CHECK(*m != NULL);
    }
    return rc;
}


#endif /* DKPERF_TEST_MACHO_FIXTURES_H */
