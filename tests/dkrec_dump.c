/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkrec_dump.c - what the tests of record --switch-output check of each
 * file, read by the recording's one reader (tools/common/dkrec): one line
 * per file given,
 *
 *   PATH samples N first FIRST_NS last LAST_NS maxgap GAP_NS lost L complete C comms N execs E
 *
 * GAP_NS being the longest time between two samples in a row of the file.
 *
 * With --split, FILE's samples written anew into WHOLE, and split into A
 * (the first half) and B (the rest), as record --switch-output would have
 * written them: each file with its own stack nodes, B starting with the
 * map and comm records before its samples again and its events listed in
 * reverse order; lost and throttled counts of 2 and 1 more in A, 3 and 4
 * in B, their sums in WHOLE. For the test that report -i A -i B equals
 * report -i WHOLE.
 *
 * usage: dkrec_dump FILE...   Exit status 1 when a file cannot be read.
 *        dkrec_dump --split FILE WHOLE A B
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dkrec.h"

/* The addresses of the stack ending in node, innermost first, into buf. */
static size_t frames_of(const dkrec *r, uint32_t node, uint64_t *buf, size_t size)
{
    size_t n = 0;
    for (; node != 0 && n < size; node = r->nodes[node].parent)
        buf[n++] = r->nodes[node].addr;
    return n;
}

/* Writes r's samples [lo, hi) to path, with r's meta, events (reversed:
 * index e as n - 1 - e), the map and comm records before lo first and the
 * rest where they came, then lost + lost_more, throttled + thr_more. */
static int write_part(const dkrec *r, const char *path, size_t lo, size_t hi, bool reverse,
                      uint64_t lost, uint64_t thr)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    dkrec_writer *w = NULL;
    if (fd < 0 || dkrec_writer_open(fd, &w) != 0) {
        perror(path);
        if (fd >= 0)
            close(fd);
        return 1;
    }
    static uint64_t fr[4096], kfr[4096];
    int bad = 0;
    for (size_t i = 0; i + 1 < r->n_meta; i += 2)
        bad |= dkrec_write_meta(w, r->meta[i], r->meta[i + 1]);
    for (size_t e = 0; e < r->n_events; e++) {
        size_t k = reverse ? r->n_events - 1 - e : e;
        bad |= dkrec_write_event(w, (uint32_t)e, r->events[k].name, r->events[k].period,
                                 r->events[k].freq);
    }
    size_t m = 0, c = 0;
    for (size_t i = lo; i <= hi; i++) {
        /* Maps and names in the order read: an exec ends the maps before it. */
        for (;;) {
            bool mm = m < r->n_maps && (r->maps[m].first_sample <= i || i == hi);
            bool cm = c < r->n_comms && (r->comms[c].first_sample <= i || i == hi);
            if (cm && (!mm || r->comms[c].first_map <= m)) {
                const dkrec_comm *x = &r->comms[c++];
                bad |= (x->exec ? dkrec_write_exec : dkrec_write_comm)(w, x->pid, x->tid, x->comm);
            } else if (mm) {
                const dkrec_map *x = &r->maps[m++];
                bad |= dkrec_write_map(w, x->pid, x->start, x->len, x->pgoff, x->path, x->id_kind,
                                       x->id, x->id_len);
            } else {
                break;
            }
        }
        if (i == hi)
            break;
        const dkrec_rsample *s = &r->samples[i];
        dkrec_sample o = {.event = reverse ? (uint32_t)(r->n_events - 1 - s->event) : s->event,
                          .pid = s->pid,
                          .tid = s->tid,
                          .cpu = s->cpu,
                          .time_ns = s->time_ns,
                          .period = s->period,
                          .flags = s->flags,
                          .frames = fr,
                          .kernel_frames = kfr};
        o.n_frames = frames_of(r, s->node, fr, 4096);
        o.n_kernel_frames = frames_of(r, s->knode, kfr, 4096);
        bad |= dkrec_write_sample(w, &o);
    }
    bad |= dkrec_write_stats(w, r->lost + lost, r->throttled + thr, r->unthrottled);
    bad |= dkrec_finish(w);
    dkrec_writer_free(w);
    bad |= close(fd);
    if (bad != 0)
        fprintf(stderr, "dkrec_dump: %s: cannot write it\n", path);
    return bad != 0;
}

static int split(const char *in, const char *whole, const char *a, const char *b)
{
    char err[512];
    dkrec *r = NULL;
    if (dkrec_read_file(in, &r, err, sizeof err) != 0) {
        fprintf(stderr, "dkrec_dump: %s\n", err);
        return 1;
    }
    size_t half = r->n_samples / 2;
    int rc = write_part(r, whole, 0, r->n_samples, false, 5, 5) |
             write_part(r, a, 0, half, false, 2, 1) |
             write_part(r, b, half, r->n_samples, true, 3, 4);
    dkrec_free(r);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    if (argc == 6 && strcmp(argv[1], "--split") == 0)
        return split(argv[2], argv[3], argv[4], argv[5]);
    for (int i = 1; i < argc; i++) {
        char err[512];
        dkrec *r = NULL;
        if (dkrec_read_file(argv[i], &r, err, sizeof err) != 0) {
            fprintf(stderr, "dkrec_dump: %s\n", err);
            rc = 1;
            continue;
        }
        uint64_t first = 0, last = 0, gap = 0;
        for (size_t k = 0; k < r->n_samples; k++) {
            uint64_t t = r->samples[k].time_ns;
            if (k == 0)
                first = t;
            else if (t > last && t - last > gap)
                gap = t - last;
            last = t;
        }
        size_t execs = 0;
        for (size_t k = 0; k < r->n_comms; k++)
            execs += r->comms[k].exec;
        printf("%s samples %zu first %" PRIu64 " last %" PRIu64 " maxgap %" PRIu64 " lost %" PRIu64
               " complete %d comms %zu execs %zu\n",
               argv[i], r->n_samples, first, last, gap, r->lost, r->complete ? 1 : 0, r->n_comms,
               execs);
        dkrec_free(r);
    }
    return rc;
}
