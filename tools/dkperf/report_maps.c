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

static int cmp_pid(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
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

static const dkrec_comm *order_comms;

/* Exec records by pid, then in file order. */
static int exec_order(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = cmp_pid(&order_comms[x].pid, &order_comms[y].pid);
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

/* The elementary ranges [coords[j], coords[j + 1]) of the leaves of a
 * tree of t->size leaves: node v's children are 2v and 2v + 1, leaf j is
 * node size + j. */
typedef struct tree {
    const uint64_t *coords;
    uint32_t n_coords, size;
    const uint32_t *off; /* node v's maps: items[off[v] .. off[v + 1]), by place */
    const uint32_t *items;
} tree;

/* The end of map m's range, the top of the address space when it wraps. */
static uint64_t map_end(const dkrec_map *m)
{
    return m->start + m->len < m->start ? UINT64_MAX : m->start + m->len;
}

/* The first coordinate not below addr. */
static uint32_t coord_at(const uint64_t *c, uint32_t n, uint64_t addr)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (c[mid] < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Runs body with v each of the O(log n) nodes that cover leaves [l, r)
 * exactly (a tree of size leaves). */
#define FOR_COVER(size, l, r, v, body)                                                 \
    for (uint32_t l_ = (l) + (size), r_ = (r) + (size); l_ < r_; l_ >>= 1, r_ >>= 1) { \
        if (l_ & 1) {                                                                  \
            uint32_t v = l_++;                                                         \
            body;                                                                      \
        }                                                                              \
        if (r_ & 1) {                                                                  \
            uint32_t v = --r_;                                                         \
            body;                                                                      \
        }                                                                              \
    }

/* Room for n more elements of size bytes in *a (room for *cap, len used). */
static int reserve(void **a, size_t len, size_t n, size_t *cap, size_t size)
{
    if (len + n <= *cap)
        return 0;
    size_t c = *cap ? *cap : 256;
    while (c < len + n)
        c *= 2;
    void *q = realloc(*a, c * size);
    if (q == NULL)
        return -1;
    *a = q;
    *cap = c;
    return 0;
}

/* Key k's tree of its maps (order[k->first ..], in the order recorded:
 * their places), and which of them replace part of an earlier one: each
 * such map starts a generation of the process's maps (gen_at, repl). A
 * map is stored in the O(log n) nodes covering its range, so that the
 * maps holding an address are on the path from its leaf to the root. */
static int make_tree(rmaps *b, rpidkey *k, const uint32_t *order, uint32_t **scratch,
                     size_t *scratch_cap)
{
    const dkrec_map *maps = b->rec->maps;
    uint32_t n = k->n;
    if (reserve((void **)&b->coords, b->n_coords, 2 * (size_t)n, &b->cap_coords,
                sizeof *b->coords) != 0)
        return -1;
    uint64_t *c = b->coords + b->n_coords;
    uint32_t nc = 0;
    for (uint32_t i = 0; i < n; i++) {
        const dkrec_map *m = &maps[order[i]];
        if (m->len == 0)
            continue;
        c[nc++] = m->start;
        c[nc++] = map_end(m);
    }
    qsort(c, nc, sizeof *c, cmp_u64);
    uint32_t w = 0;
    for (uint32_t i = 0; i < nc; i++)
        if (w == 0 || c[w - 1] != c[i])
            c[w++] = c[i];
    nc = w;
    uint32_t leaves = nc > 1 ? nc - 1 : 1, size = 1;
    while (size < leaves)
        size *= 2;
    k->coord = (uint32_t)b->n_coords;
    k->n_coords = nc;
    k->size = size;
    b->n_coords += nc;
    /* off: 2 * size + 1 entries; scratch: a cursor, then a minimum, per node. */
    if (reserve((void **)&b->off, b->n_off, 2 * (size_t)size + 1, &b->cap_off, sizeof *b->off) !=
            0 ||
        reserve((void **)scratch, 0, 2 * (size_t)size, scratch_cap, sizeof **scratch) != 0)
        return -1;
    k->off = (uint32_t)b->n_off;
    b->n_off += 2 * (size_t)size + 1;
    uint32_t *off = b->off + k->off, *cur = *scratch;
    memset(cur, 0, 2 * (size_t)size * sizeof *cur);
    for (uint32_t i = 0; i < n; i++) {
        const dkrec_map *m = &maps[order[i]];
        if (m->len == 0)
            continue;
        FOR_COVER(size, coord_at(c, nc, m->start), coord_at(c, nc, map_end(m)), v, cur[v]++);
    }
    size_t base = b->n_items, total = 0;
    for (uint32_t v = 0; v < 2 * size; v++) {
        off[v] = (uint32_t)(base + total);
        total += cur[v];
        cur[v] = off[v];
    }
    off[2 * size] = (uint32_t)(base + total);
    if (base + total > UINT32_MAX ||
        reserve((void **)&b->items, b->n_items, total, &b->cap_items, sizeof *b->items) != 0)
        return -1;
    b->n_items += total;
    for (uint32_t i = 0; i < n; i++) {
        const dkrec_map *m = &maps[order[i]];
        if (m->len == 0)
            continue;
        FOR_COVER(size, coord_at(c, nc, m->start), coord_at(c, nc, map_end(m)), v,
                  b->items[cur[v]++] = i);
    }
    /* cur: the least place stored in each subtree. Map i replaces part of
     * an earlier one when a map of a smaller place overlaps it: one stored
     * under a node covering part of i's range, or above a leaf of it. */
    for (uint32_t v = 2 * size; v-- > 1;) {
        uint32_t least = off[v] < off[v + 1] ? b->items[off[v]] : UINT32_MAX;
        if (v < size) {
            least = cur[2 * v] < least ? cur[2 * v] : least;
            least = cur[2 * v + 1] < least ? cur[2 * v + 1] : least;
        }
        cur[v] = least;
    }
    k->repl = (uint32_t)b->n_repl;
    uint32_t gen = 0;
    for (uint32_t i = 0; i < n; i++) {
        const dkrec_map *m = &maps[order[i]];
        uint32_t least = UINT32_MAX;
        if (m->len > 0) {
            uint32_t l = coord_at(c, nc, m->start), r = coord_at(c, nc, map_end(m));
            FOR_COVER(size, l, r, v, least = cur[v] < least ? cur[v] : least);
            for (uint32_t v = l + size; v >= 1 && least >= i; v >>= 1)
                if (off[v] < off[v + 1] && b->items[off[v]] < least)
                    least = b->items[off[v]];
            for (uint32_t v = r - 1 + size; v >= 1 && least >= i; v >>= 1)
                if (off[v] < off[v + 1] && b->items[off[v]] < least)
                    least = b->items[off[v]];
        }
        if (least < i) {
            b->repl[b->n_repl++] = i;
            gen++;
        }
        b->gen_at[k->first + i] = gen;
    }
    k->n_repl = (uint32_t)(b->n_repl - k->repl);
    return 0;
}

/* The first place of key k's maps recorded at or after map record at. */
static uint32_t place_at(const rmaps *b, const rpidkey *k, size_t at)
{
    const uint32_t *o = b->order + k->first;
    uint32_t lo = 0, hi = k->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (o[mid] < at)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Key k's exec records, and its generations: its replacing maps and its
 * execs merged in file order (an exec before a map recorded after it),
 * each starting one. An exec ends the maps before it: from there on, a
 * sample's image is one recorded after the exec, and before the next. */
static void make_gens(rmaps *b, rpidkey *k)
{
    const dkrec *r = b->rec;
    size_t lo = 0, hi = b->n_execs;
    while (lo < hi) { /* the pid's first exec */
        size_t mid = lo + (hi - lo) / 2;
        if (r->comms[b->execs[mid]].pid < k->pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    k->exec = (uint32_t)lo;
    while (hi < b->n_execs && r->comms[b->execs[hi]].pid == k->pid)
        hi++;
    k->n_exec = (uint32_t)(hi - lo);
    k->gen = (uint32_t)b->n_gens;
    const uint32_t *repl = b->repl + k->repl;
    uint32_t i = 0, j = 0, floor = 0;
    bool execd = false;
    for (;;) {
        uint32_t next_exec =
            j < k->n_exec ? place_at(b, k, r->comms[b->execs[k->exec + j]].first_map) : k->n;
        uint32_t next_repl = i < k->n_repl ? repl[i] : k->n;
        b->gens[b->n_gens++] = (rgen){floor, next_repl, next_exec, execd};
        if (j < k->n_exec && (i == k->n_repl || next_exec <= next_repl)) {
            floor = next_exec;
            execd = true;
            j++;
        } else if (i < k->n_repl) {
            i++;
        } else {
            break;
        }
    }
}

/* b->keys: each pid with maps, keyed by its own pid or by that of the first
 * pid with the same maps (and no exec), its tree and its generations. */
int rmaps_make(rmaps *b, const dkrec *r)
{
    memset(b, 0, sizeof *b);
    b->rec = r;
    size_t nm = r->n_maps ? r->n_maps : 1;
    b->order = calloc(nm, sizeof *b->order);
    b->keys = calloc(nm, sizeof *b->keys);
    b->gen_at = calloc(nm, sizeof *b->gen_at);
    b->repl = calloc(nm, sizeof *b->repl);
    /* A sweep of n maps makes at most 2n - 1 ranges. */
    b->segs = calloc(2 * nm, sizeof *b->segs);
    size_t ne = 0;
    for (size_t c = 0; c < r->n_comms; c++)
        ne += r->comms[c].exec;
    b->execs = calloc(ne ? ne : 1, sizeof *b->execs);
    /* A generation per replacing map and exec, and one per key. */
    b->gens = calloc(2 * nm + ne, sizeof *b->gens);
    sweep w = {calloc(2 * nm, sizeof *w.edges), calloc(nm, sizeof *w.heap),
               calloc(nm, sizeof *w.closed)};
    rmap seen = {0}; /* hash of a list of maps -> its first pid's index */
    uint32_t *scratch = NULL;
    size_t scratch_cap = 0;
    uint32_t *order = b->order;
    int rc = -1;
    if (order == NULL || b->keys == NULL || b->segs == NULL || b->gen_at == NULL ||
        b->repl == NULL || w.edges == NULL || w.heap == NULL || w.closed == NULL ||
        b->execs == NULL || b->gens == NULL)
        goto out;
    for (size_t c = 0; c < r->n_comms; c++)
        if (r->comms[c].exec)
            b->execs[b->n_execs++] = (uint32_t)c;
    order_comms = r->comms;
    qsort(b->execs, b->n_execs, sizeof *b->execs, exec_order);
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
        if (make_tree(b, k, order + k->first, &scratch, &scratch_cap) != 0)
            goto out;
        make_gens(b, k);
        /* A pid that execs has generations of its own: a key of its own. */
        int64_t like = k->n_exec > 0 ? INT64_MAX : rmap_get(&seen, h, 0);
        if (like < 0) {
            if (rmap_put(&seen, h, 0, (uint32_t)b->n_keys) != 0)
                goto out;
        } else if (like != INT64_MAX && b->keys[like].n == k->n) {
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
    free(scratch);
    free(w.edges);
    free(w.heap);
    free(w.closed);
    rmap_free(&seen);
    return rc;
}

/* The generation of key k after its maps up to map record map_rec - 1. */
static uint32_t map_gen(const rmaps *b, const rpidkey *k, uint32_t map_rec)
{
    if (map_rec == 0)
        return 0;
    /* Its place among k's maps, which are in the order recorded. */
    const uint32_t *o = b->order + k->first;
    uint32_t lo = 0, hi = k->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (o[mid] < map_rec - 1)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == k->n || o[lo] != map_rec - 1)
        return 0; /* not one of the pid's: none in force */
    return b->gen_at[k->first + lo];
}

uint32_t rmaps_gen(const rmaps *b, const rpidkey *k, uint32_t map_rec, uint32_t exec_rec)
{
    if (k == NULL)
        return 0;
    /* Its replacing maps passed, and its execs: in file order, so that
     * both counted are the generations before the sample's. */
    const uint32_t *x = b->execs + k->exec;
    uint32_t lo = 0, hi = k->n_exec;
    while (exec_rec > 0 && lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (x[mid] <= exec_rec - 1)
            lo = mid + 1;
        else
            hi = mid;
    }
    return map_gen(b, k, map_rec) + lo;
}

/* The map of generation gen of key k's maps holding addr: of those in
 * force (recorded before the generation's end, and since its exec), the
 * latest; else the first recorded after (a map the recorder wrote after a
 * sample it covers), before the next exec; NULL when none holds it. */
static const dkrec_map *tree_map(const rmaps *b, const rpidkey *k, uint32_t gen, uint64_t addr)
{
    const uint64_t *c = b->coords + k->coord;
    uint32_t j = coord_at(c, k->n_coords, addr);
    if (j < k->n_coords && c[j] == addr)
        j++;
    if (j == 0 || j >= k->n_coords)
        return NULL; /* below the first map, or past the last */
    const rgen *g = &b->gens[k->gen + gen];
    uint32_t end = g->hi < g->ceil ? g->hi : g->ceil;
    uint32_t before = UINT32_MAX, after = UINT32_MAX;
    const uint32_t *off = b->off + k->off;
    for (uint32_t v = j - 1 + k->size; v >= 1; v >>= 1) {
        const uint32_t *it = b->items + off[v];
        uint32_t lo = 0, hi = off[v + 1] - off[v];
        while (lo < hi) { /* the first place at or past end */
            uint32_t mid = lo + (hi - lo) / 2;
            if (it[mid] < end)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && it[lo - 1] >= g->lo && (before == UINT32_MAX || it[lo - 1] > before))
            before = it[lo - 1];
        if (lo < off[v + 1] - off[v] && it[lo] < after && it[lo] < g->ceil)
            after = it[lo];
    }
    uint32_t pos = before != UINT32_MAX ? before : after;
    return pos != UINT32_MAX ? &b->rec->maps[b->order[k->first + pos]] : NULL;
}

const dkrec_map *rmaps_find(const rmaps *b, const rpidkey *k, uint32_t gen, uint64_t addr)
{
    const dkrec_map *m = k != NULL ? tree_map(b, k, gen, addr) : NULL;
    if (m == NULL && k != NULL && b->gens[k->gen + gen].execd)
        return NULL; /* after an exec, the pid's own maps only */
    return m != NULL ? m : seg_map(b, b->all_seg, b->n_all_segs, addr);
}

const rpidkey *rmaps_key(const rmaps *b, int32_t pid)
{
    return bsearch(&pid, b->keys, b->n_keys, sizeof *b->keys, cmp_pid);
}

void rmaps_free(rmaps *b)
{
    free(b->keys);
    free(b->segs);
    free(b->order);
    free(b->coords);
    free(b->off);
    free(b->items);
    free(b->gen_at);
    free(b->repl);
    free(b->execs);
    free(b->gens);
    memset(b, 0, sizeof *b);
}
