/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_maps.c - the address ranges of a recording's maps, per process
 * (report.h's rmaps), for the report model to find an address's image:
 * processes with the same maps share a key, and each key's maps are swept
 * once into sorted, disjoint ranges.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The map of ranges segs[first .. first + n) holding addr, or NULL. */
static const dkrec_map *seg_map(const rmaps *b, uint32_t first, uint32_t n, uint64_t addr)
{
    const rseg *s = b->segs + first;
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first range ending after addr */
        size_t mid = lo + (hi - lo) / 2;
        if (s[mid].hi <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && s[lo].lo <= addr ? &b->rec->maps[s[lo].map] : NULL;
}

const dkrec_map *rmaps_find(const rmaps *b, const rpidkey *k, uint64_t addr)
{
    const dkrec_map *m = k != NULL ? seg_map(b, k->seg, k->n_segs, addr) : NULL;
    return m != NULL ? m : seg_map(b, b->all_seg, b->n_all_segs, addr);
}

static int cmp_pid(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static const dkrec_map *order_maps;

/* Maps by pid, then in the order recorded. */
static int map_order(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = cmp_pid(&order_maps[x].pid, &order_maps[y].pid);
    return c != 0 ? c : (x < y ? -1 : x > y);
}

static uint64_t map_hash(uint64_t h, const dkrec_map *m)
{
    h = rmap_mix(rmap_mix(rmap_mix(h, m->start), m->len), m->pgoff);
    h = rmap_mix(rmap_hash_str(h, m->path), m->id_kind);
    for (size_t i = 0; i < m->id_len && i < DKREC_ID_MAX; i++)
        h = rmap_mix(h, m->id[i]);
    return h;
}

static bool same_map(const dkrec_map *a, const dkrec_map *b)
{
    return a->start == b->start && a->len == b->len && a->pgoff == b->pgoff &&
           a->id_kind == b->id_kind && a->id_len == b->id_len &&
           memcmp(a->id, b->id, a->id_len < DKREC_ID_MAX ? a->id_len : DKREC_ID_MAX) == 0 &&
           strcmp(a->path, b->path) == 0;
}

/* An end of a map's range in the sweep of make_segs. */
typedef struct edge {
    uint64_t at;
    uint32_t pos; /* the map's place in the list swept */
    bool open;
} edge;

static int edge_order(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Scratch of make_segs, for up to as many maps as the recording has. */
typedef struct sweep {
    edge *edges;
    uint32_t *heap; /* the places of the maps open, the latest on top */
    bool *closed;
} sweep;

static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
    size_t i = (*n)++;
    for (; i > 0 && h[(i - 1) / 2] < v; i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
    uint32_t v = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1] > h[c])
            c++;
        if (h[c] <= v)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = v;
}

/* The ranges of maps idx[0 .. n) (in the order recorded), appended to
 * b->segs: a sweep over their ends, the latest map open winning each
 * stretch, n log n. *first and *count: where they are. */
static void make_segs(rmaps *b, sweep *w, const uint32_t *idx, size_t n, uint32_t *first,
                      uint32_t *count)
{
    const dkrec_map *maps = b->rec->maps;
    size_t ne = 0, nh = 0;
    for (size_t i = 0; i < n; i++) {
        const dkrec_map *m = &maps[idx[i]];
        w->closed[i] = false;
        if (m->len == 0)
            continue;
        w->edges[ne++] = (edge){m->start, (uint32_t)i, true};
        w->edges[ne++] = (edge){m->start + m->len, (uint32_t)i, false};
    }
    qsort(w->edges, ne, sizeof *w->edges, edge_order);
    *first = (uint32_t)b->n_segs;
    for (size_t e = 0; e < ne;) {
        uint64_t at = w->edges[e].at;
        for (; e < ne && w->edges[e].at == at; e++) {
            if (w->edges[e].open)
                heap_push(w->heap, &nh, w->edges[e].pos);
            else
                w->closed[w->edges[e].pos] = true;
        }
        while (nh > 0 && w->closed[w->heap[0]])
            heap_pop(w->heap, &nh);
        if (nh == 0 || e == ne)
            continue;
        /* [at, the next end) is the top map's. */
        uint32_t map = idx[w->heap[0]];
        rseg *last = b->n_segs > *first ? &b->segs[b->n_segs - 1] : NULL;
        if (last != NULL && last->hi == at && last->map == map)
            last->hi = w->edges[e].at;
        else
            b->segs[b->n_segs++] = (rseg){at, w->edges[e].at, map};
    }
    *count = (uint32_t)(b->n_segs - *first);
}

/* b->keys: each pid with maps, keyed by its own pid or by that of the first
 * pid with the same maps, and its ranges. */
int rmaps_make(rmaps *b, const dkrec *r)
{
    memset(b, 0, sizeof *b);
    b->rec = r;
    size_t nm = r->n_maps ? r->n_maps : 1;
    uint32_t *order = calloc(nm, sizeof *order);
    b->keys = calloc(nm, sizeof *b->keys);
    /* A sweep of n maps makes at most 2n - 1 ranges: n for every pid's
     * own, as many for all of them. */
    b->segs = calloc(4 * nm, sizeof *b->segs);
    sweep w = {calloc(2 * nm, sizeof *w.edges), calloc(nm, sizeof *w.heap),
               calloc(nm, sizeof *w.closed)};
    rmap seen = {NULL, NULL, NULL, 0, 0}; /* hash of a list of maps -> its first pid's index */
    int rc = -1;
    if (order == NULL || b->keys == NULL || b->segs == NULL || w.edges == NULL || w.heap == NULL ||
        w.closed == NULL)
        goto out;
    for (size_t i = 0; i < r->n_maps; i++)
        order[i] = (uint32_t)i;
    make_segs(b, &w, order, r->n_maps, &b->all_seg, &b->n_all_segs);
    order_maps = r->maps;
    qsort(order, r->n_maps, sizeof *order, map_order);
    for (size_t i = 0; i < r->n_maps;) {
        rpidkey *k = &b->keys[b->n_keys];
        k->pid = r->maps[order[i]].pid;
        k->first = (uint32_t)i;
        uint64_t h = 0;
        for (; i < r->n_maps && r->maps[order[i]].pid == k->pid; i++)
            h = map_hash(h, &r->maps[order[i]]);
        k->n = (uint32_t)(i - k->first);
        k->key = (uint64_t)(uint32_t)k->pid;
        make_segs(b, &w, order + k->first, k->n, &k->seg, &k->n_segs);
        int64_t like = rmap_get(&seen, h, 0);
        if (like < 0) {
            if (rmap_put(&seen, h, 0, (uint32_t)b->n_keys) != 0)
                goto out;
        } else if (b->keys[like].n == k->n) {
            const rpidkey *o = &b->keys[like];
            bool same = true;
            for (uint32_t j = 0; same && j < k->n; j++)
                same = same_map(&r->maps[order[o->first + j]], &r->maps[order[k->first + j]]);
            if (same)
                k->key = o->key;
        }
        b->n_keys++;
    }
    rc = 0;
out:
    free(order);
    free(w.edges);
    free(w.heap);
    free(w.closed);
    rmap_free(&seen);
    return rc;
}

const rpidkey *rmaps_key(const rmaps *b, int32_t pid)
{
    return bsearch(&pid, b->keys, b->n_keys, sizeof *b->keys, cmp_pid);
}

void rmaps_free(rmaps *b)
{
    free(b->keys);
    free(b->segs);
    memset(b, 0, sizeof *b);
}
