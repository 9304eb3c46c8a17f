/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * model.h - what one run of libdkbench measured and estimated: the data
 * the harness fills, the reports print and the baselines store. Not
 * installed; built on the public dkperf.h only.
 */
#ifndef DKPERF_BENCH_MODEL_H
#define DKPERF_BENCH_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/stats.h"
#include "dkperf.h"

/* Time (always measure 0) and up to DK_MAX_EVENTS events. */
#define DKB_MAX_MEASURES (1 + DK_MAX_EVENTS)
#define DKB_MAX_LEVELS 4

typedef enum dkb_throughput_kind {
    DKB_THROUGHPUT_NONE = 0,
    DKB_THROUGHPUT_BYTES,
    DKB_THROUGHPUT_ELEMENTS
} dkb_throughput_kind;

/* One measured quantity of one benchmark: time or one event. */
typedef struct dkb_measure {
    char name[128]; /* "time", "instructions", "branch-misses", ... */
    char unit[16];  /* "ns" for time, "" for counts */
    bool available; /* false: not measured; why says why */
    char why[512];
    bool multiplexed; /* never true: passes are used instead; kept for honesty in reports */
    double *y;        /* per sample: the total over that sample (n_samples values) */
    /* Estimates (valid when available and n_samples >= 2). */
    dkb_fit fit;          /* y = intercept + slope * iterations */
    dkb_interval slope;   /* per-iteration estimate with its bootstrap CI */
    dkb_summary per_iter; /* of y[i] / iterations[i] */
    dkb_outliers outliers;
    unsigned char *outlier_class; /* per sample, DKB_OUTLIER_* */
    /* Against a baseline (has_change). */
    bool has_change;
    dkb_change change;
    double baseline_slope;
    /* The change compares the processes' estimates (true) or, where one
     * side was measured in one process, the samples (false). */
    bool change_by_process;
    bool change_paired; /* ... in pairs run side by side (A/B) */
    /* After a comparison, why this measure has no change ("" otherwise):
     * not in the baseline, no estimate on one side, or the test refused. */
    char no_change[256];
    /* Which estimator gave `slope`: "OLS" (the fit's slope with its
     * bootstrap CI), "Theil-Sen" (time: the median pair slope with Sen's
     * interval, robust to preempted samples) or "mean" (flat sampling:
     * the mean per-iteration value). ols_slope: the OLS slope with its
     * bootstrap CI whatever the estimator (zero when flat). */
    char estimator[16];
    dkb_interval ols_slope;
    /* Samples `slope` was computed from: for time, those not preempted, or
     * every sample when too few of them are left (see dkb_estimate). */
    size_t n_fit;
    /* Measured in several processes (the result's n_processes >= 2): each
     * process's own estimate and the half-width of its interval (malloc'ed,
     * n_processes each), and their summary, whose interval is `slope`'s. */
    double *proc, *proc_half;
    dkb_process_summary procs;
} dkb_measure;

/* One benchmark's result. */
typedef struct dkb_result {
    char name[256];  /* "group/name" when grouped */
    char group[256]; /* the part of name before its first '/'; "" when not grouped */
    size_t n_samples;
    double *iterations; /* per sample */
    size_t n_measures;  /* measure 0 is time */
    dkb_measure m[DKB_MAX_MEASURES];
    size_t passes; /* > 1 when the events did not fit the counters at once */
    dkb_throughput_kind throughput_kind;
    double throughput_per_iter; /* bytes or elements per iteration */
    char stop_reason[160];      /* "precision reached: ..." or "time budget spent: ..." */
    double warmup_s, measure_s; /* wall time of warm-up and of measurement */
    /* CPU performance levels (P/E) where the backend splits counts. */
    size_t n_levels;
    char level_name[DKB_MAX_LEVELS][16];
    double level_cycle_share[DKB_MAX_LEVELS]; /* fraction of cycles per level */
    bool moved_levels;                        /* ran on more than one level */
    /* Samples during which the thread was switched out (the backend counts
     * context switches: switches_counted): shown with every other sample,
     * left out of the time estimate (their time includes other threads').
     * preempted[i] is 1 for such a sample; NULL when not counted. */
    bool switches_counted;
    unsigned char *preempted;
    size_t n_preempted;
    /* A baseline was compared with, and it has no result of this name. */
    bool not_in_baseline;
    /* The processes the estimates come from (processes.c): n >= 2, the
     * process is the unit (each measure's proc); 1, measured within one
     * process, one_process says why; 0, an external body, whose every run
     * is a process of its own. */
    size_t n_processes;
    char one_process[160];
    /* n >= 2: each process's iterations, the sum over its samples
     * (malloc'ed, n_processes values; NULL otherwise). */
    double *proc_iterations;
} dkb_result;

/* What is common to every result of one run. */
typedef struct dkb_run_info {
    char backend[32];          /* dk_sampler_backend() or "none" (time only) */
    char cpu[64];              /* the chip or CPU name */
    char cpu_model[128];       /* the CPU's marketing name ("Apple M1"), "" when unknown */
    char why_no_counters[512]; /* said once when hardware events are unavailable */
    char date[32];             /* ISO 8601, UTC */
    char host[64];
    uint64_t seed;
    double noise_threshold;  /* e.g. 0.01 */
    double target_precision; /* CI half-width target, e.g. 0.01 */
    char baseline[64];       /* compared against, "" if none */
} dkb_run_info;

void dkb_result_free(dkb_result *r); /* frees the arrays, not r */

#endif /* DKPERF_BENCH_MODEL_H */
