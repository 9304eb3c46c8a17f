/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_sample_read.c - dk_sampling on perf_event, the reading side: records
 * decoded from the mmap'd rings (a record that wraps a ring's end copied
 * whole), merged oldest first across rings, handed out by drain; wait
 * polls the rings. See pe_sample.c for where the events are opened.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/perf_event/pe_sample.h"

/* ------------------------------------------------------------------------ */
/* Draining                                                                  */
/* ------------------------------------------------------------------------ */

/* Copy len bytes at position pos of the ring, across its end if need be. */
static void ring_copy(const ps_ring *r, uint64_t pos, void *dst, size_t len)
{
    size_t at = (size_t)(pos & (r->size - 1));
    size_t first = len < r->size - at ? len : (size_t)(r->size - at);
    memcpy(dst, r->data + at, first);
    if (first < len)
        memcpy((unsigned char *)dst + first, r->data, len - first);
}

/* The time of the record at r->pos (0 when it has none), for the merge. */
static uint64_t peek_time(const ps_state *st, const ps_ring *r, const struct perf_event_header *h)
{
    uint64_t t = 0;
    size_t off;
    if (h->type == PERF_RECORD_SAMPLE) {
        off = sizeof *h + 8; /* IDENTIFIER */
        if (st->sample_type & PERF_SAMPLE_IP)
            off += 8;
        if (st->sample_type & PERF_SAMPLE_TID)
            off += 8;
    } else {
        /* sample_id_all: ... TIME, [CPU], IDENTIFIER at the end. */
        size_t back = 16 + (st->sample_type & PERF_SAMPLE_CPU ? 8 : 0);
        if (h->size < sizeof *h + back)
            return 0;
        off = h->size - back;
    }
    if (off + 8 > h->size)
        return 0;
    ring_copy(r, r->pos + off, &t, sizeof t);
    return t;
}

/* A bounded reader of one record. */
typedef struct cursor {
    const unsigned char *at, *end;
    bool bad;
} cursor;

static uint64_t take64(cursor *c)
{
    uint64_t v = 0;
    if ((size_t)(c->end - c->at) < 8) {
        c->bad = true;
        return 0;
    }
    memcpy(&v, c->at, 8);
    c->at += 8;
    return v;
}

static void take32x2(cursor *c, uint32_t *a, uint32_t *b)
{
    uint32_t v[2] = {0, 0};
    if ((size_t)(c->end - c->at) < 8)
        c->bad = true;
    else
        memcpy(v, c->at, 8);
    c->at += c->bad ? 0 : 8;
    *a = v[0];
    *b = v[1];
}

/* A NUL-terminated string that ends inside the record (padded to 8). */
static const char *take_string(cursor *c)
{
    const unsigned char *nul = memchr(c->at, '\0', (size_t)(c->end - c->at));
    if (nul == NULL) {
        c->bad = true;
        return NULL;
    }
    const char *s = (const char *)c->at;
    size_t len = (size_t)(nul - c->at) + 1;
    c->at += (len + 7) & ~(size_t)7;
    if (c->at > c->end)
        c->at = c->end;
    return s;
}

/* The sample_id trailer of a non-sample record: time only. */
static uint64_t trailer_time(const ps_state *st, const unsigned char *rec, size_t size)
{
    size_t back = 16 + (st->sample_type & PERF_SAMPLE_CPU ? 8 : 0);
    uint64_t t = 0;
    if (size >= sizeof(struct perf_event_header) + back)
        memcpy(&t, rec + size - back, 8);
    return t;
}

/* Decode one record into *out. Returns 1 to deliver it, 0 when it is only
 * counted (or not ours to show). */
static int decode(dk_sampling *p, ps_state *st, const unsigned char *rec, size_t size,
                  dk_sample *out, uint64_t *values)
{
    struct perf_event_header h;
    memcpy(&h, rec, sizeof h);
    cursor c = {rec + sizeof h, rec + size, false};
    memset(out, 0, sizeof *out);
    switch (h.type) {
    case PERF_RECORD_SAMPLE: {
        uint64_t type = st->sample_type;
        size_t ev = dk__ps_event_of(st, take64(&c));
        out->kind = DK_SAMPLE_KIND_SAMPLE;
        out->event = ev == SIZE_MAX ? 0 : ev;
        if (type & PERF_SAMPLE_IP)
            out->ip = take64(&c);
        if (type & PERF_SAMPLE_TID) {
            uint32_t pid, tid;
            take32x2(&c, &pid, &tid);
            out->pid = (int)pid;
            out->tid = tid;
        }
        out->time_ns = take64(&c);
        if (type & PERF_SAMPLE_CPU) {
            uint32_t cpu, res;
            take32x2(&c, &cpu, &res);
            out->cpu = cpu;
        }
        if (type & PERF_SAMPLE_PERIOD)
            out->period = take64(&c);
        if (type & PERF_SAMPLE_READ) {
            uint64_t nr = take64(&c);
            for (size_t i = 0; i < p->n; i++)
                values[i] = 0;
            for (uint64_t i = 0; i < nr && !c.bad; i++) {
                uint64_t value = take64(&c);
                size_t e = dk__ps_event_of(st, take64(&c));
                if (e < p->n)
                    values[e] += value;
            }
            out->values = values;
            out->n_values = p->n;
        }
        uint16_t mode = h.misc & PERF_RECORD_MISC_CPUMODE_MASK;
        out->user = mode == PERF_RECORD_MISC_USER || mode == PERF_RECORD_MISC_GUEST_USER;
        if (type & PERF_SAMPLE_CALLCHAIN) {
            uint64_t nr = take64(&c);
            if (nr > (uint64_t)(c.end - c.at) / 8) {
                c.bad = true;
                nr = 0;
            }
            uint64_t context = 0;
            size_t n = 0, nk = 0;
            for (uint64_t i = 0; i < nr; i++) {
                uint64_t ip = take64(&c);
                if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
                    context = ip;
                    continue;
                }
                if (context == (uint64_t)PERF_CONTEXT_USER && n < st->max_stack)
                    st->frames[n++] = ip;
                else if (context == (uint64_t)PERF_CONTEXT_KERNEL && nk < st->max_stack)
                    st->kernel_frames[nk++] = ip;
            }
            out->frames = st->frames;
            out->n_frames = n;
            out->kernel_frames = st->kernel_frames;
            out->n_kernel_frames = nk;
            /* The kernel stops at max_stack entries: a chain that long may
             * have been cut; a shorter one ended where the frames did. */
            out->truncated = n >= st->max_stack;
        }
        if (c.bad)
            return 0;
        if (ev == PS_OFF_CPU_EVENT) {
            /* Delivered at its switch-in; one that cannot be kept is lost. */
            if (dk__ps_offcpu_blocked(st, out) != 0)
                dk__stat_add(&p->stats.lost, 1);
            return 0;
        }
        dk__stat_add(&p->stats.samples, 1);
        return 1;
    }
    case PERF_RECORD_MMAP2:
    case PERF_RECORD_MMAP: {
        uint32_t pid, tid;
        take32x2(&c, &pid, &tid);
        out->kind = DK_SAMPLE_KIND_MAP;
        out->pid = (int)pid;
        out->tid = tid;
        out->map_start = take64(&c);
        out->map_len = take64(&c);
        out->map_pgoff = take64(&c);
        if (h.type == PERF_RECORD_MMAP2) {
            (void)take64(&c); /* maj, min */
            (void)take64(&c); /* ino */
            (void)take64(&c); /* ino_generation */
            (void)take64(&c); /* prot, flags */
        }
        out->user = (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER;
        out->map_path = take_string(&c);
        out->time_ns = trailer_time(st, rec, size);
        return c.bad ? 0 : 1;
    }
    case PERF_RECORD_COMM: {
        uint32_t pid, tid;
        take32x2(&c, &pid, &tid);
        out->kind = DK_SAMPLE_KIND_COMM;
        out->pid = (int)pid;
        out->tid = tid;
        out->comm = take_string(&c);
        out->exec = (h.misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
        out->time_ns = trailer_time(st, rec, size);
        return c.bad ? 0 : 1;
    }
    case PERF_RECORD_EXIT: {
        uint32_t pid, ppid, tid, ptid;
        take32x2(&c, &pid, &ppid);
        take32x2(&c, &tid, &ptid);
        out->kind = DK_SAMPLE_KIND_EXIT;
        out->pid = (int)pid;
        out->tid = tid;
        out->time_ns = take64(&c);
        if (st->blocked != NULL)
            dk__ps_offcpu_exit(st, tid);
        return c.bad ? 0 : 1;
    }
    case PERF_RECORD_SWITCH: {
        /* sample_id_all: TID, TIME, [CPU], IDENTIFIER (TID with off-CPU). */
        size_t back = 24 + (st->sample_type & PERF_SAMPLE_CPU ? 8 : 0);
        uint32_t ids[2];
        if (!(st->sample_type & PERF_SAMPLE_TID) || size < sizeof h + back)
            return 0;
        memcpy(ids, rec + size - back, sizeof ids);
        if (dk__ps_offcpu_switch(st, h.misc, ids[1], trailer_time(st, rec, size), out) == 0)
            return 0;
        dk__stat_add(&p->stats.samples, 1);
        return 1;
    }
    case PERF_RECORD_LOST: {
        (void)take64(&c); /* id */
        uint64_t lost = take64(&c);
        if (!c.bad)
            dk__stat_add(&p->stats.lost, lost);
        return 0;
    }
    case PERF_RECORD_LOST_SAMPLES: {
        uint64_t lost = take64(&c);
        if (!c.bad)
            dk__stat_add(&p->stats.lost, lost);
        return 0;
    }
    case PERF_RECORD_THROTTLE:
        dk__stat_add(&p->stats.throttled, 1);
        return 0;
    case PERF_RECORD_UNTHROTTLE:
        dk__stat_add(&p->stats.unthrottled, 1);
        return 0;
    default: /* FORK and others: not part of dk_sample */
        return 0;
    }
}

static uint64_t load_head(const ps_ring *r)
{
    return __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
}

/* Relaxed: only drains write it, under the drain lock, and a waiter only
 * compares it. */
static uint64_t load_tail(const ps_ring *r)
{
    return __atomic_load_n(&r->page->data_tail, __ATOMIC_RELAXED);
}

static void store_tail(ps_ring *r, uint64_t tail)
{
    __atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
}

int dk__pe_sampling_drain(dk_sampling *p, dk_sample_fn fn, void *ctx)
{
    ps_state *st = p->impl;
    pthread_mutex_lock(&st->drain_lock);
    /* Read before the heads: a stop seen here has all it ends in them. */
    uint64_t stopped = __atomic_load_n(&st->stopped_ns, __ATOMIC_ACQUIRE);
    for (size_t r = 0; r < st->nrings; r++) {
        ps_ring *ring = &st->rings[r];
        ring->head = load_head(ring);
        ring->pos = load_tail(ring); /* ours: written only here */
    }
    uint64_t values[DK_MAX_EVENTS];
    long delivered = 0;
    int rc = 0;
    /* The images mapped before sampling began, first. */
    /* Published by the first start, which may run in another thread. */
    size_t nmaps = __atomic_load_n(&st->nmaps, __ATOMIC_ACQUIRE);
    while (st->maps_sent < nmaps && rc == 0) {
        const ps_map *m = &st->maps[st->maps_sent++];
        dk_sample x;
        memset(&x, 0, sizeof x);
        x.kind = DK_SAMPLE_KIND_MAP;
        x.pid = st->maps_pid;
        x.tid = (uint64_t)st->maps_pid;
        x.time_ns = st->maps_time;
        x.user = true;
        x.map_start = m->start;
        x.map_len = m->len;
        x.map_pgoff = m->pgoff;
        x.map_path = m->path;
        rc = fn(ctx, &x);
        delivered++;
    }
    for (; rc == 0;) {
        /* The ring whose next record is oldest. */
        ps_ring *best = NULL;
        struct perf_event_header best_h = {0, 0, 0};
        uint64_t best_t = 0;
        for (size_t r = 0; r < st->nrings; r++) {
            ps_ring *ring = &st->rings[r];
            if (ring->pos >= ring->head)
                continue;
            struct perf_event_header h;
            ring_copy(ring, ring->pos, &h, sizeof h);
            if (h.size < sizeof h || h.size > ring->head - ring->pos || (h.size & 7) != 0) {
                /* Not a record: give the rest of this ring up rather than
                 * read garbage (never seen from a working kernel). */
                ring->pos = ring->head;
                store_tail(ring, ring->pos);
                continue;
            }
            uint64_t t = peek_time(st, ring, &h);
            if (best == NULL || t < best_t) {
                best = ring;
                best_h = h;
                best_t = t;
            }
        }
        if (stopped != 0 && (best == NULL || best_t > stopped)) {
            /* Nothing older left: the threads still blocked at the stop. */
            dk_sample sample;
            if (dk__ps_offcpu_stopped(st, stopped, &sample)) {
                dk__stat_add(&p->stats.samples, 1);
                rc = fn(ctx, &sample);
                if (delivered < INT_MAX)
                    delivered++;
                continue;
            }
            __atomic_compare_exchange_n(&st->stopped_ns, &stopped, 0, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE);
            stopped = 0;
        }
        if (best == NULL)
            break;
        const unsigned char *rec;
        size_t at = (size_t)(best->pos & (best->size - 1));
        if (at + best_h.size <= best->size) {
            rec = best->data + at;
        } else {
            ring_copy(best, best->pos, st->scratch, best_h.size);
            rec = st->scratch;
        }
        dk_sample sample;
        int deliver = decode(p, st, rec, best_h.size, &sample, values);
        int got = deliver ? fn(ctx, &sample) : 0;
        best->pos += best_h.size;
        store_tail(best, best->pos);
        if (deliver && delivered < INT_MAX)
            delivered++;
        if (got != 0) {
            rc = got;
            break;
        }
    }
    pthread_mutex_unlock(&st->drain_lock);
    return rc != 0 ? rc : (int)delivered;
}

static bool any_ready(ps_state *st)
{
    for (size_t r = 0; r < st->nrings; r++)
        if (load_head(&st->rings[r]) != load_tail(&st->rings[r]))
            return true;
    return false;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The rings' poll, by one thread at a time (under wait_lock): their
 * pollfds, and which targets have exited, are shared. */
static int poll_rings(ps_state *st, int timeout_ms, int64_t deadline)
{
    int rc = 0;
    for (;;) {
        if (any_ready(st)) {
            rc = 1;
            break;
        }
        size_t live = 0;
        for (size_t r = 0; r < st->nrings; r++)
            live += st->polls[r].fd >= 0;
        if (live == 0) {
            /* Every ring's first target has exited; threads and children
             * that inherited its events may still write: sleep out the
             * timeout and look again (no timeout: nothing to wait for). */
            if (timeout_ms >= 0) {
                int64_t rest = deadline - now_ms();
                if (rest > 0)
                    (void)poll(NULL, 0, rest > INT_MAX ? INT_MAX : (int)rest);
                rc = any_ready(st) ? 1 : 0;
            }
            break;
        }
        int left = -1;
        if (timeout_ms >= 0) {
            int64_t rest = deadline - now_ms();
            left = rest > 0 ? (rest > INT_MAX ? INT_MAX : (int)rest) : 0;
        }
        int got = poll(st->polls, st->nrings, left);
        if (got < 0) {
            if (errno != EINTR)
                rc = dk__fail_os(DK_EOS, errno, "dk_sampling_wait: poll failed");
            break;
        }
        if (got == 0) {
            rc = any_ready(st) ? 1 : 0;
            break;
        }
        for (size_t r = 0; r < st->nrings; r++) {
            if (st->polls[r].revents & POLLIN) {
                rc = any_ready(st) ? 1 : 0; /* a wakeup from records drained since */
            } else if (st->polls[r].revents & (POLLHUP | POLLERR | POLLNVAL)) {
                st->polls[r].fd = -1; /* its target exited: poll the others */
            }
        }
        if (rc == 1)
            break;
    }
    return rc;
}

/* Longest sleep between two looks of a wait while another thread's wait
 * polls the rings, in ms. */
#define WAIT_SLICE_MS 20

int dk__pe_sampling_wait(dk_sampling *p, int timeout_ms)
{
    ps_state *st = p->impl;
    int64_t deadline = timeout_ms >= 0 ? now_ms() + timeout_ms : 0;
    for (;;) {
        /* Tried, not waited for: the thread that polls may do so for
         * long; this one looks at the rings every slice meanwhile, and
         * polls them itself once that thread is done. */
        if (pthread_mutex_trylock(&st->wait_lock) == 0) {
            int rc = poll_rings(st, timeout_ms, deadline);
            pthread_mutex_unlock(&st->wait_lock);
            return rc;
        }
        if (any_ready(st))
            return 1;
        int left = WAIT_SLICE_MS;
        if (timeout_ms >= 0) {
            int64_t rest = deadline - now_ms();
            if (rest <= 0)
                return 0;
            left = rest < WAIT_SLICE_MS ? (int)rest : WAIT_SLICE_MS;
        }
        if (poll(NULL, 0, left) < 0)
            return 0; /* EINTR */
    }
}
