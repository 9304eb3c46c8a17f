/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_raw.c - a recording's samples counted as they stream past (see
 * report.h's rraws): one entry per distinct (event, pid, comm record,
 * stack, kernel stack, flags), so that report's memory grows with the
 * distinct stacks, not with the samples.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"

static bool same_key(const rraw *x, const rraw *y)
{
    return x->node == y->node && x->pid == y->pid && x->event == y->event &&
           x->comm_rec == y->comm_rec && x->map_rec == y->map_rec && x->exec_rec == y->exec_rec &&
           x->knode == y->knode && x->flags == y->flags;
}

/* Inline and cheap: it runs once a sample. The stack node, what differs
 * most, goes into the low bits that pick the slot. */
static inline size_t key_hash(const rraw *k)
{
    uint64_t h = ((uint64_t)k->knode << 32 | k->node) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)(uint32_t)k->pid << 32 | k->event) * 0xc2b2ae3d27d4eb4full;
    h ^= ((uint64_t)k->flags << 32 | k->comm_rec) * 0x165667b19e3779f9ull;
    h ^= ((uint64_t)k->exec_rec << 32 | k->map_rec) * 0xd6e8feb86659fd93ull;
    return (size_t)(h ^ (h >> 32));
}

static uint64_t entry_hash(const void *ctx, size_t i) { return key_hash((const rraw *)ctx + i); }

/* Room for one more entry, the slots at most half full. */
static int make_room(rraws *a)
{
    if (a->n == a->cap) {
        size_t c = a->cap ? a->cap * 2 : 256;
        rraw *v = realloc(a->v, c * sizeof *v);
        if (v == NULL)
            return -1;
        a->v = v;
        a->cap = c;
    }
    return rslots_room(&a->idx, a->n, entry_hash, a->v);
}

int rraws_add(void *ctx, const dkrec *r, const dkrec_rsample *s)
{
    rraws *a = ctx;
    /* The comm records that came before this sample: each its pid's
     * latest. */
    for (; a->comms_seen < r->n_comms && r->comms[a->comms_seen].first_sample <= a->n_read;
         a->comms_seen++) {
        int32_t pid = r->comms[a->comms_seen].pid;
        if (rmap_put(&a->pid_comm, (uint32_t)pid, 0, (uint32_t)a->comms_seen) != 0)
            goto oom;
        /* An exec ends the pid's maps before it: its later samples are
         * of another generation of them. */
        if (r->comms[a->comms_seen].exec &&
            rmap_put(&a->pid_comm, (uint32_t)pid, 2, (uint32_t)a->comms_seen) != 0)
            goto oom;
        if (pid == a->last_pid)
            a->last_valid = false;
    }
    /* And the map records: a sample resolves against its pid's maps as
     * they stood (an image replaced later keeps its samples' names). */
    for (; a->maps_seen < r->n_maps && r->maps[a->maps_seen].first_sample <= a->n_read;
         a->maps_seen++) {
        int32_t pid = r->maps[a->maps_seen].pid;
        if (rmap_put(&a->pid_comm, (uint32_t)pid, 1, (uint32_t)a->maps_seen) != 0)
            goto oom;
        if (pid == a->last_pid)
            a->last_valid = false;
    }
    /* The recording's span, whichever samples the filter keeps. */
    if (a->n_read++ == 0 || s->time_ns < a->time_lo)
        a->time_lo = s->time_ns;
    if (s->time_ns > a->time_hi)
        a->time_hi = s->time_ns;
    bool off_cpu = (s->flags & DKREC_SAMPLE_OFF_CPU) != 0;
    a->n_off_cpu += off_cpu;
    if (off_cpu ? a->on_cpu_only : a->off_cpu_only)
        return 0;
    if (!a->last_valid || s->pid != a->last_pid) {
        int64_t c = rmap_get(&a->pid_comm, (uint32_t)s->pid, 0);
        int64_t m = rmap_get(&a->pid_comm, (uint32_t)s->pid, 1);
        int64_t x = rmap_get(&a->pid_comm, (uint32_t)s->pid, 2);
        a->last_pid = s->pid;
        a->last_comm = (uint32_t)(c + 1);
        a->last_map = (uint32_t)(m + 1);
        a->last_exec = (uint32_t)(x + 1);
        a->last_valid = true;
    }
    a->n_samples++;
    rraw k = {.event = s->event,
              .pid = s->pid,
              .comm_rec = a->last_comm,
              .map_rec = a->last_map,
              .exec_rec = a->last_exec,
              .node = s->node,
              .knode = s->knode,
              .flags = s->flags};
    uint64_t w = s->period ? s->period : 1;
    /* Runs of samples of one stack are common: the last entry first. */
    if (a->n > 0 && same_key(&a->v[a->last], &k)) {
        a->v[a->last].count++;
        a->v[a->last].weight += w;
        return 0;
    }
    size_t h = key_hash(&k);
    if (a->idx.nslots > 0) {
        for (size_t j = rslots_first(&a->idx, h); a->idx.slot1[j] != 0;
             j = rslots_next(&a->idx, j)) {
            rraw *e = &a->v[a->idx.slot1[j] - 1];
            if (same_key(e, &k)) {
                e->count++;
                e->weight += w;
                a->last = a->idx.slot1[j] - 1;
                return 0;
            }
        }
    }
    if (a->n >= UINT32_MAX - 1 || make_room(a) != 0)
        goto oom;
    size_t j = rslots_first(&a->idx, h);
    while (a->idx.slot1[j] != 0)
        j = rslots_next(&a->idx, j);
    k.count = 1;
    k.weight = w;
    a->v[a->n] = k;
    a->idx.slot1[j] = (uint32_t)++a->n;
    a->last = a->n - 1;
    return 0;
oom:
    cli_error("report", "%s: out of memory while counting %llu samples", a->path,
              (unsigned long long)a->n_read);
    return -2;
}

/* a empty, to count the samples o keeps. */
static void rraws_init(rraws *a, const char *path, const rprofile_opts *o)
{
    memset(a, 0, sizeof *a);
    a->path = path;
    a->on_cpu_only = o != NULL && o->on_cpu_only;
    a->off_cpu_only = o != NULL && o->off_cpu_only;
}

int rraws_of(rraws *a, const dkrec *r, const char *path, const rprofile_opts *o)
{
    rraws_init(a, path, o);
    for (size_t i = 0; i < r->n_samples; i++)
        if (rraws_add(a, r, &r->samples[i]) != 0) {
            rraws_free(a);
            return -1;
        }
    return 0;
}

int rprofile_read(const char *path, const rprofile_opts *o, dkrec **rec, rraws *a, char *err,
                  size_t errlen)
{
    rraws_init(a, path, o);
    int rc = dkrec_stream_file(path, rraws_add, a, rec, err, errlen);
    if (rc != 0)
        rraws_free(a);
    return rc == 0 ? 0 : rc == -2 ? -2 : -1;
}

void rraws_free(rraws *a)
{
    free(a->v);
    rslots_free(&a->idx);
    rmap_free(&a->pid_comm);
    memset(a, 0, sizeof *a);
}

/* Events in name order, equal names in the recording's order: a sort
 * key, so that matching two lists is O(n log n), never n * m. */
typedef struct ev_key {
    const char *name;
    size_t at;
} ev_key;

static int ev_key_order(const void *a, const void *b)
{
    const ev_key *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : (x->at > y->at) - (x->at < y->at);
}

static ev_key *ev_keys(const dkrec *r)
{
    ev_key *k = calloc(r->n_events ? r->n_events : 1, sizeof *k);
    if (k == NULL)
        return NULL;
    for (size_t e = 0; e < r->n_events; e++)
        k[e] = (ev_key){r->events[e].name, e};
    qsort(k, r->n_events, sizeof *k, ev_key_order);
    return k;
}

int report_match_events(const dkrec *first, const char *first_path, const dkrec *rec,
                        const char *path, uint32_t *to)
{
    ev_key *a = ev_keys(first), *b = ev_keys(rec);
    int rc = a == NULL || b == NULL ? -2 : 0;
    for (size_t i = 0; rc == 0 && (i < first->n_events || i < rec->n_events); i++) {
        int c = i == first->n_events ? 1 : i == rec->n_events ? -1 : strcmp(a[i].name, b[i].name);
        if (c != 0 && i < first->n_events && i < rec->n_events) {
            cli_error("report",
                      "%s records %s where %s records %s: merge recordings of the same events",
                      path, b[i].name, first_path, a[i].name);
            rc = -1;
        } else if (c > 0) {
            cli_error("report",
                      "%s records %s, which %s does not (as often): merge recordings of the "
                      "same events",
                      path, b[i].name, first_path);
            rc = -1;
        } else if (c < 0) {
            cli_error("report",
                      "%s records no %s, which %s does (or not as often): merge recordings of "
                      "the same events",
                      path, a[i].name, first_path);
            rc = -1;
        } else {
            to[b[i].at] = (uint32_t)a[i].at;
        }
    }
    free(a);
    free(b);
    return rc;
}
