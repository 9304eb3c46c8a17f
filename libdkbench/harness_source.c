/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * harness_source.c - the harness's real measurements: CLOCK_MONOTONIC and
 * a dk_thread of the events of one pass, through dkperf.h alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "libdkbench/harness.h"
#include "common/clock.h"

/* Counted beside the events of every pass, where the backend can: a
 * sample during which it moved included other threads' time. */
static const char SWITCHES_EVENT[] = "context-switches";

typedef struct dkperf_source {
    dk_sampler *s;
    dk_thread *t;
    size_t n;             /* the pass's events */
    bool counts_switches; /* the thread counts n + 1 events, the last the switches */
    bool no_switches;     /* the backend refused the switches event once: not tried again */
    uint64_t switches;
    size_t levels;
    bool multiplexing; /* the backend may time-share counters: check each open */
} dkperf_source;

static void src_close(void *self)
{
    dkperf_source *p = self;
    dk_thread_close(p->t);
    p->t = NULL;
    p->n = 0;
    p->counts_switches = false;
    p->switches = UINT64_MAX;
}

/* The pass's events and the switch counter in one thread; false (nothing
 * open, the error cleared) when the backend will not count them together. */
static bool open_with_switches(dkperf_source *p, const char *const *names, size_t n)
{
    if (p->s == NULL || p->no_switches || n + 1 > DK_MAX_EVENTS || p->levels > 1)
        return false;
    const char *all[DK_MAX_EVENTS];
    for (size_t i = 0; i < n; i++)
        all[i] = names[i];
    all[n] = SWITCHES_EVENT;
    if (dk_thread_open_names(p->s, all, n + 1, &p->t) != 0) {
        p->t = NULL;
        p->no_switches = n == 0; /* refused alone: the backend has no such event */
        return false;
    }
    if (dk_thread_start(p->t) != 0) {
        dk_thread_close(p->t);
        p->t = NULL;
        return false;
    }
    p->counts_switches = true;
    p->switches = 0; /* counted; the first sample reads the total */
    return true;
}

/* A time-shared group counts only part of the time: refuse it as "too many"
 * so that the planner splits it into passes. Busy for ~0.2 ms so that the
 * kernel has scheduled the group at least once. */
static int refuse_multiplexed(dkperf_source *p, const char *const *names, size_t n)
{
    uint64_t v[DK_MAX_EVENTS];
    dk_reading info;
    uint64_t end = dk__monotonic_ns() + 200000;
    while (dk__monotonic_ns() < end) {
    }
    int rc = dk_thread_read(p->t, v, &info);
    if (rc != 0)
        return rc;
    if (info.multiplexed)
        return dkb_fail(DK_ETOOMANY,
                        "%zu events from %s on were time-shared by the kernel "
                        "(multiplexed); they are measured in separate passes",
                        n, names[0]);
    return 0;
}

static int src_open(void *self, const char *const *names, size_t n)
{
    dkperf_source *p = self;
    src_close(p);
    if (n == 0) {
        open_with_switches(p, names, 0);
        return 0;
    }
    if (p->s == NULL)
        return dkb_fail(DK_EUNAVAILABLE, "no counters: the clock alone is measured");
    /* With the switch counter if the group takes it without time-sharing;
     * else the events alone, as they would be without it. */
    if (open_with_switches(p, names, n)) {
        if (!p->multiplexing || refuse_multiplexed(p, names, n + 1) == 0) {
            p->n = n;
            return 0;
        }
        src_close(p);
    }
    int rc = dk_thread_open_names(p->s, names, n, &p->t);
    if (rc != 0) {
        p->t = NULL;
        return dkb_fail(rc, "%s", dk_last_error());
    }
    rc = dk_thread_start(p->t);
    if (rc == 0 && p->multiplexing && n > 1)
        rc = refuse_multiplexed(p, names, n);
    if (rc != 0) {
        if (dkb_last_error()[0] == '\0' || rc != DK_ETOOMANY)
            dkb_fail(rc, "%s", dk_last_error());
        src_close(p);
        return rc;
    }
    p->n = n;
    return 0;
}

static int src_sample(void *self, bool end, uint64_t *ns, uint64_t *values, uint64_t *levels)
{
    dkperf_source *p = self;
    int rc = 0;
    /* With the switch counter, the totals are read into v and the pass's
     * copied out; the copy is outside the clock's reads. */
    uint64_t v[DK_MAX_EVENTS];
    uint64_t *into = p->counts_switches ? v : values;
    if (end)
        *ns = dk__monotonic_ns();
    if (p->t != NULL) {
        if (end) {
            rc = dk_thread_sample(p->t, into);
            if (rc == 0 && levels != NULL)
                rc = dk_thread_sample_perf_levels(p->t, levels, p->levels);
        } else {
            if (levels != NULL)
                rc = dk_thread_sample_perf_levels(p->t, levels, p->levels);
            if (rc == 0)
                rc = dk_thread_sample(p->t, into);
        }
    }
    if (!end)
        *ns = dk__monotonic_ns();
    if (rc == 0 && p->counts_switches) {
        for (size_t i = 0; i < p->n; i++)
            values[i] = v[i];
        p->switches = v[p->n];
    }
    if (rc != 0)
        return dkb_fail(rc, "%s", dk_last_error());
    return 0;
}

static uint64_t src_switches(void *self)
{
    const dkperf_source *p = self;
    return p->counts_switches ? p->switches : UINT64_MAX;
}

static const dkb_source_ops dkperf_ops = {src_open, src_sample, src_close, src_switches};

int dkb_source_open_dkperf(dkb_source *src)
{
    memset(src, 0, sizeof *src);
    dkperf_source *p = calloc(1, sizeof *p);
    if (p == NULL)
        return dkb_fail(DK_ENOMEM, "out of memory opening the counters");
    src->ops = &dkperf_ops;
    src->self = p;
    snprintf(src->backend, sizeof src->backend, "none");
    int rc = dk_sampler_open(&p->s, NULL);
    if (rc != 0) {
        p->s = NULL;
        snprintf(src->why_no_counters, sizeof src->why_no_counters,
                 "no counters could be opened (%s: %s); the clock alone is measured",
                 dk_error_name(rc), dk_last_error());
        return dkb_fail(rc, "%s", src->why_no_counters);
    }
    snprintf(src->backend, sizeof src->backend, "%s", dk_sampler_backend(p->s));
    snprintf(src->notes, sizeof src->notes, "%s", dk_sampler_notes(p->s));
    const dk_database *db = dk_sampler_database(p->s);
    const char *cpu = db ? dk_database_name(db) : NULL;
    snprintf(src->cpu, sizeof src->cpu, "%s",
             cpu && cpu[0] ? cpu : dk_cpu_name(dk_sampler_cpu(p->s)));
    const char *model = db ? dk_database_marketing_name(db) : NULL;
    snprintf(src->cpu_model, sizeof src->cpu_model, "%s", model ? model : "");
    dk_backend_caps caps;
    memset(&caps, 0, sizeof caps);
    caps.size = sizeof caps;
    if (dk_sampler_caps(p->s, &caps) == 0) {
        src->counters = caps.counters;
        p->multiplexing = caps.multiplexing;
    }
    size_t levels = dk_sampler_perf_levels(p->s);
    if (levels > 1 && levels <= DKB_MAX_LEVELS) {
        p->levels = levels;
        src->n_levels = levels;
        for (size_t l = 0; l < levels; l++) {
            const char *name = dk_sampler_perf_level_name(p->s, l);
            snprintf(src->level_name[l], sizeof src->level_name[l], "%s", name ? name : "?");
        }
    }
    return 0;
}

void dkb_source_close_dkperf(dkb_source *src)
{
    if (src == NULL || src->self == NULL)
        return;
    dkperf_source *p = src->self;
    src_close(p);
    dk_sampler_close(p->s);
    free(p);
    src->self = NULL;
}
