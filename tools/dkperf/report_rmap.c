/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_rmap.c - the report model's open-addressing hash map of two
 * 64-bit keys to a 32-bit value (report.h's rmap), and its hash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

uint64_t rmap_mix(uint64_t a, uint64_t b)
{
    uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 31);
}

uint64_t rmap_hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

int64_t rmap_get(const rmap *m, uint64_t a, uint64_t b)
{
    if (m->cap == 0)
        return -1;
    size_t j = (size_t)rmap_mix(a, b) & (m->cap - 1);
    while (m->val1[j] != 0) {
        if (m->ka[j] == a && m->kb[j] == b)
            return (int64_t)m->val1[j] - 1;
        j = (j + 1) & (m->cap - 1);
    }
    return -1;
}

int rmap_put(rmap *m, uint64_t a, uint64_t b, uint32_t v)
{
    if ((m->n + 1) * 2 >= m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 1024;
        rmap g = {calloc(cap, sizeof *g.ka), calloc(cap, sizeof *g.kb), calloc(cap, sizeof *g.val1),
                  cap, 0};
        if (g.ka == NULL || g.kb == NULL || g.val1 == NULL) {
            rmap_free(&g);
            return -1;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->val1[i] == 0)
                continue;
            size_t j = (size_t)rmap_mix(m->ka[i], m->kb[i]) & (cap - 1);
            while (g.val1[j] != 0)
                j = (j + 1) & (cap - 1);
            g.ka[j] = m->ka[i];
            g.kb[j] = m->kb[i];
            g.val1[j] = m->val1[i];
        }
        g.n = m->n;
        rmap_free(m);
        *m = g;
    }
    size_t j = (size_t)rmap_mix(a, b) & (m->cap - 1);
    while (m->val1[j] != 0) {
        if (m->ka[j] == a && m->kb[j] == b) {
            m->val1[j] = v + 1;
            return 0;
        }
        j = (j + 1) & (m->cap - 1);
    }
    m->ka[j] = a;
    m->kb[j] = b;
    m->val1[j] = v + 1;
    m->n++;
    return 0;
}

void rmap_free(rmap *m)
{
    free(m->ka);
    free(m->kb);
    free(m->val1);
    memset(m, 0, sizeof *m);
}
