/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_gbench_internal.h - what google benchmark's three layouts (JSON in
 * report_gbench.c, console and CSV in report_gbench_text.c) share: the
 * entries a run gives, in order, and the date as google benchmark writes it.
 */
#ifndef DKPERF_BENCH_REPORT_GBENCH_INTERNAL_H
#define DKPERF_BENCH_REPORT_GBENCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "libdkbench/report.h"

typedef struct dkb__gb_counter {
    const char *name;
    double v;
    bool rate;   /* bytes_per_second, items_per_second: "/s" on the console */
    bool binary; /* bytes_per_second: scaled by 1024 on the console (kIs1024) */
} dkb__gb_counter;

/* One entry of google benchmark's output: an iteration (one process, or
 * the whole result) or an aggregate of the processes. */
typedef struct dkb__gb_entry {
    const dkb_result *r;
    size_t family, instance, reps;
    const char *aggregate; /* "mean", "median", "stddev", "cv"; NULL: an iteration */
    bool percentage;       /* cv: time and counters are ratios */
    size_t index;          /* the repetition's */
    double iterations, time;
    const dkb__gb_counter *c; /* in name order */
    size_t nc;
} dkb__gb_entry;

/* Calls emit for every entry of results, in google benchmark's order;
 * first is true for the very first. 0, or DK_ENOMEM. */
typedef void (*dkb__gb_emit)(void *arg, const dkb__gb_entry *e, bool first);
int dkb__gbench_walk(const dkb_result *const *results, size_t n, const dkb_gbench_view *v,
                     dkb__gb_emit emit, void *arg);

/* Now, local time, RFC 3339 with its offset (view->date when set). */
void dkb__gbench_date(const dkb_gbench_view *v, char *buf, size_t size);

#endif /* DKPERF_BENCH_REPORT_GBENCH_INTERNAL_H */
