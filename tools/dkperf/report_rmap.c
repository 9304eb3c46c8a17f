/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_rmap.c - the report model's open-addressing index (report.h's
 * rslots), its map of two 64-bit keys to a 32-bit value (rmap) on it, and
 * their hashes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

uint64_t rmap_mix(uint64_t a, uint64_t b)
{
    uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 31);
}

uint64_t rmap_hash_str(uint64_t h, const char *s)
{
    /* Keyed too: strings with one FNV hash from the basis (a recording's
     * names can be made so) differ from a secret start. */
    if (rslots_mul == 0)
        rslots_seed();
    h ^= rslots_key;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

uint64_t rslots_key, rslots_mul;

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The secret of rslots_slot: from the clock, the pid and where the stack
 * and this code lie (address-space randomization); not a recording's. */
void rslots_seed(void)
{
    struct timespec ts = {0, 0};
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t s = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    s ^= (uint64_t)(uintptr_t)&ts ^ (uint64_t)(uintptr_t)&splitmix << 7 ^ (uint64_t)getpid() << 40;
    rslots_key = splitmix(&s);
    rslots_mul = splitmix(&s) | 1u;
}

int rslots_room(rslots *x, size_t n, uint64_t (*hash)(const void *ctx, size_t i), const void *ctx)
{
    if ((n + 1) * 2 < x->nslots)
        return 0;
    if (rslots_mul == 0)
        rslots_seed();
    size_t ns = x->nslots ? x->nslots * 2 : 1024;
    uint32_t *sl = calloc(ns, sizeof *sl);
    if (sl == NULL)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t j = rslots_slot(hash(ctx, i), ns);
        while (sl[j] != 0)
            j = (j + 1) & (ns - 1);
        sl[j] = (uint32_t)i + 1;
    }
    free(x->slot1);
    x->slot1 = sl;
    x->nslots = ns;
    return 0;
}

void rslots_free(rslots *x)
{
    free(x->slot1);
    memset(x, 0, sizeof *x);
}

static uint64_t item_hash(const void *ctx, size_t i)
{
    const rmap_item *it = (const rmap_item *)ctx + i;
    return rmap_mix(it->a, it->b);
}

int64_t rmap_get(const rmap *m, uint64_t a, uint64_t b)
{
    if (m->n == 0)
        return -1;
    for (size_t j = rslots_first(&m->idx, rmap_mix(a, b)); m->idx.slot1[j] != 0;
         j = rslots_next(&m->idx, j)) {
        const rmap_item *it = &m->items[m->idx.slot1[j] - 1];
        if (it->a == a && it->b == b)
            return it->v;
    }
    return -1;
}

int rmap_put(rmap *m, uint64_t a, uint64_t b, uint32_t v)
{
    if (m->n >= UINT32_MAX - 1 || rslots_room(&m->idx, m->n, item_hash, m->items) != 0)
        return -1;
    size_t j = rslots_first(&m->idx, rmap_mix(a, b));
    for (; m->idx.slot1[j] != 0; j = rslots_next(&m->idx, j)) {
        rmap_item *it = &m->items[m->idx.slot1[j] - 1];
        if (it->a == a && it->b == b) {
            it->v = v;
            return 0;
        }
    }
    if (m->n == m->cap) {
        size_t c = m->cap ? m->cap * 2 : 512;
        rmap_item *q = realloc(m->items, c * sizeof *q);
        if (q == NULL)
            return -1;
        m->items = q;
        m->cap = c;
    }
    m->items[m->n] = (rmap_item){a, b, v};
    m->idx.slot1[j] = (uint32_t)++m->n;
    return 0;
}

void rmap_free(rmap *m)
{
    free(m->items);
    rslots_free(&m->idx);
    memset(m, 0, sizeof *m);
}
