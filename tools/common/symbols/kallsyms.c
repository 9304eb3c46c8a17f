/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kallsyms.c - the kernel's symbol table from /proc/kallsyms (see
 * kallsyms.h): one pass over the text keeps the text symbols (types t, T,
 * w, W), their names copied into one arena; a sort by address makes each
 * lookup a binary search.
 */
#include "kallsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_MAX_LEN 1024 /* the kernel's KSYM_NAME_LEN is 512 */

typedef struct ksym {
    uint64_t addr;
    size_t name; /* offset in the arena */
} ksym;

struct kallsyms {
    ksym *syms;
    size_t n;
    char *arena;
    size_t n_all;     /* every symbol line read, text or not */
    bool any_nonzero; /* some address is not 0 */
};

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int by_addr(const void *a, const void *b)
{
    const ksym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    return x->name < y->name ? -1 : x->name > y->name; /* the first listed first */
}

int kallsyms_parse(const char *text, size_t len, const char *name, kallsyms **out, char *err,
                   size_t errlen)
{
    *out = NULL;
    if (len > KALLSYMS_MAX_BYTES) {
        snprintf(err, errlen, "%s: larger than %zu MiB, not read", name, KALLSYMS_MAX_BYTES >> 20);
        return -1;
    }
    kallsyms *k = calloc(1, sizeof *k);
    /* A symbol line is at least 4 bytes ("0 t x"), its name no longer than
     * the line: the text's size bounds both arrays. */
    size_t cap = len / 4 + 1;
    if (k == NULL || (k->syms = malloc(cap * sizeof *k->syms)) == NULL ||
        (k->arena = malloc(len + 1)) == NULL) {
        kallsyms_free(k);
        snprintf(err, errlen, "%s: out of memory", name);
        return -2;
    }
    size_t used = 0, line = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        line++;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *e = eol != NULL ? eol : end;
        const char *q = p;
        uint64_t addr = 0;
        int digits = 0;
        for (int h; q < e && (h = hexval(*q)) >= 0; q++, digits++) {
            if (digits >= 16)
                goto bad;
            addr = addr << 4 | (uint64_t)h;
        }
        if (digits == 0 || q + 3 > e || q[0] != ' ' || q[2] != ' ')
            goto bad;
        char type = q[1];
        const char *s = q + 3, *t = s;
        while (t < e && *t != ' ' && *t != '\t')
            t++;
        /* After the name: nothing, or "\t[module]". */
        if (t == s || (size_t)(t - s) > NAME_MAX_LEN)
            goto bad;
        for (const char *c = s; c < t; c++)
            if ((unsigned char)*c < 0x21 || *c == 0x7f)
                goto bad;
        k->n_all++;
        k->any_nonzero = k->any_nonzero || addr != 0;
        if (type == 't' || type == 'T' || type == 'w' || type == 'W') {
            k->syms[k->n].addr = addr;
            k->syms[k->n].name = used;
            k->n++;
            memcpy(k->arena + used, s, (size_t)(t - s));
            used += (size_t)(t - s);
            k->arena[used++] = '\0';
        }
        p = eol != NULL ? eol + 1 : end;
        continue;
    bad:
        snprintf(err, errlen, "%s: line %zu is not \"address type name\"", name, line);
        kallsyms_free(k);
        return -1;
    }
    if (k->n_all == 0) {
        snprintf(err, errlen, "%s: no symbols", name);
        kallsyms_free(k);
        return -1;
    }
    qsort(k->syms, k->n, sizeof *k->syms, by_addr);
    *out = k;
    return 0;
}

int kallsyms_read(const char *path, kallsyms **out, char *err, size_t errlen)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    /* procfs gives a size of 0: read to the end, growing, up to the cap. */
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    int rc = -1;
    while (buf != NULL) {
        if (len == cap) {
            if (cap > KALLSYMS_MAX_BYTES) {
                snprintf(err, errlen, "%s: larger than %zu MiB, not read", path,
                         KALLSYMS_MAX_BYTES >> 20);
                goto out;
            }
            char *b = realloc(buf, cap * 2);
            if (b == NULL)
                break; /* out of memory */
            buf = b;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            goto out;
        }
        if (got == 0) {
            rc = kallsyms_parse(buf, len, path, out, err, errlen);
            goto out;
        }
        len += (size_t)got;
    }
    snprintf(err, errlen, "%s: out of memory", path);
    rc = -2;
out:
    free(buf);
    close(fd);
    return rc;
}

bool kallsyms_hidden(const kallsyms *k) { return !k->any_nonzero; }

size_t kallsyms_count(const kallsyms *k) { return k->n; }

const char *kallsyms_lookup(const kallsyms *k, uint64_t addr, uint64_t *off)
{
    if (k == NULL || !k->any_nonzero)
        return NULL;
    size_t lo = 0, hi = k->n;
    while (lo < hi) { /* the first symbol above addr */
        size_t mid = lo + (hi - lo) / 2;
        if (k->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || k->syms[lo - 1].addr == 0)
        return NULL;
    /* Of the symbols at that address, the first listed. */
    size_t i = lo - 1;
    while (i > 0 && k->syms[i - 1].addr == k->syms[lo - 1].addr)
        i--;
    if (off != NULL)
        *off = addr - k->syms[i].addr;
    return k->arena + k->syms[i].name;
}

void kallsyms_free(kallsyms *k)
{
    if (k == NULL)
        return;
    free(k->syms);
    free(k->arena);
    free(k);
}
