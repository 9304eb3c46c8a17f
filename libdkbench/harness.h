/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * harness.h - libdkbench's measurement loop, between dkbench.h (what a
 * benchmark writes) and the statistics and reports. Not installed.
 *
 * Measurements come from a dkb_source: the real one opens a dk_sampler
 * and dk_threads (harness_source.c); tests give synthetic ones, so that
 * warm-up, sampling, passes and the stop rule are checked against known
 * truth without the OS.
 */
#ifndef DKPERF_BENCH_HARNESS_H
#define DKPERF_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libdkbench/model.h"
#include "dkbench.h"

/* Where the clock and the counters come from. Each pass of a benchmark
 * opens the source with the events it counts, samples it around every
 * sample, and closes it. */
typedef struct dkb_source_ops {
    /* Count names[0..n) on the calling thread from now on (n may be 0:
     * time only). Returns 0 or a DK_E* code with the reason in
     * dk_last_error() or dkb_last_error(); DK_ETOOMANY or DK_ECONFLICT
     * mean "not all at once". */
    int (*open)(void *self, const char *const *names, size_t n);
    /* ns: a monotonic clock; values[0..n): running totals of the open
     * events; levels, when not NULL, values split by performance level
     * (levels[l * n + i]). end: the end of a sample (the clock is read
     * first, then the counters; at a start, the other way round, so that
     * the counters hold the clock's reads in both cases). Returns 0 or a
     * DK_E* code. */
    int (*sample)(void *self, bool end, uint64_t *ns, uint64_t *values, uint64_t *levels);
    /* Stop counting what open started. */
    void (*close)(void *self);
    /* May be NULL. The context switches of the calling thread as of the
     * last sample call (read by that call, no cost of its own), or
     * UINT64_MAX when the backend cannot count them. A sample during which
     * the count moved included time when other threads ran. */
    uint64_t (*switches)(void *self);
} dkb_source_ops;

typedef struct dkb_source {
    const dkb_source_ops *ops;
    void *self;
    size_t counters; /* events one open can hold, 0 when unknown */
    size_t n_levels; /* > 1: sample can split by performance level */
    char level_name[DKB_MAX_LEVELS][16];
    char backend[32];
    char cpu[64];
    char cpu_model[128];       /* the CPU's name (dk_database_marketing_name), "" */
    char why_no_counters[512]; /* "" when hardware events may be counted */
    char notes[512];           /* what opening the counters did (dk_sampler_notes), "" */
} dkb_source;

/* The real source: a dk_sampler of the auto-detected backend. Returns 0 or
 * a DK_E* code; on failure *src is a time-only source (backend "none") whose
 * why_no_counters says why, so a run can go on with the clock alone. */
int dkb_source_open_dkperf(dkb_source *src);
void dkb_source_close_dkperf(dkb_source *src);

/* What one run is asked to do. */
typedef struct dkb_config {
    const char *const *events; /* requested events, n_events of them */
    size_t n_events;
    double time_budget;  /* seconds of measurement per benchmark */
    double warmup_bound; /* seconds of warm-up at most */
    size_t samples;      /* 0: adaptive, stop between min_samples and max_samples */
    size_t min_samples, max_samples;
    double min_time;  /* seconds of samples before the adaptive stop may fire */
    double precision; /* target CI half-width / estimate */
    uint64_t seed;
    size_t resamples; /* bootstrap resamples of the final estimates */
    /* External bodies (one run, one sample): exactly `runs` when not 0,
     * else as many as the first run says fill run_time seconds, from
     * min_runs to max_runs; warmup_runs unmeasured first. */
    size_t runs, min_runs, max_runs, warmup_runs;
    double run_time;
    /* Not 0: exactly this many iterations in the measured samples (split
     * over samples of 1d, 2d, ... iterations, the rest in the last), with
     * no adaptive stop; the warm-up is not counted in them. */
    uint64_t iterations;
} dkb_config;

void dkb_config_defaults(dkb_config *c);

/* One registered benchmark. */
typedef struct dkb_entry {
    char name[256];
    dk_bench_loop_fn loop;
    dk_bench_iter_fn iter;
    dk_bench_body_fn body; /* an external body: one run a sample (run.c) */
    void *ctx;
    size_t n_counters; /* the body's counters */
    char counters[DK_BENCH_MAX_COUNTERS][128];
} dkb_entry;

/* Add an entry (dk_bench_register*): name copied, one of loop, iter or the
 * body's run set. Returns 0, DK_EINVAL, DK_ENOMEM (dkb_last_error says). */
int dkb_registry_add(const dkb_entry *e);

/* The registry (dk_bench_register*). */
size_t dkb_registry_count(void);
const dkb_entry *dkb_registry_at(size_t i);
const char *dkb_registry_load_error(void); /* "" unless a load-time registration failed */
void dkb_registry_clear(void);

/* The event plan of a run: which requested events are available, why the
 * others are not, and how the available ones are split into passes. */
typedef struct dkb_plan {
    size_t n; /* requested events */
    const char *name[DK_MAX_EVENTS];
    bool available[DK_MAX_EVENTS];
    char why[DK_MAX_EVENTS][512];
    size_t pass_of[DK_MAX_EVENTS]; /* for available events */
    size_t passes;                 /* >= 1 (time alone is one pass) */
} dkb_plan;

/* Find which events open and split them into passes that each open at
 * once (never multiplexed). Returns 0, DK_EINVAL (more than DK_MAX_EVENTS
 * events). */
int dkb_plan_events(dkb_source *src, const char *const *events, size_t n, dkb_plan *plan);

/*
 * dkb_measure_one - warm up, sample and estimate one benchmark into *out
 * (zeroed first; free with dkb_result_free). Returns 0, DK_ENOMEM, or the
 * source's error (the result is then freed).
 */
int dkb_measure_one(const dkb_config *cfg, dkb_source *src, const dkb_plan *plan,
                    const dkb_entry *e, dkb_result *out);

/*
 * dkb_measure_interleaved - the entries e[0..k) run in turn, sample by
 * sample, on the same iteration counts (time, then each later pass replayed interleaved);
 * out[0..k) are filled as by dkb_measure_one. Returns as dkb_measure_one.
 */
int dkb_measure_interleaved(const dkb_config *cfg, dkb_source *src, const dkb_plan *plan,
                            const dkb_entry *e, size_t k, dkb_result *out);

/*
 * dkb_measure_body - the runs of an external body (e->body) into *out, as
 * cfg's runs, min_runs, max_runs, warmup_runs and run_time say: measures
 * time, user-time, system-time (ns), max-rss (B) and the body's counters,
 * each run one sample of one iteration; every estimate is the median of
 * the runs with a bootstrap interval (estimator "median"). A counter not
 * counted in every run is unavailable. Returns 0, DK_ENOMEM, DK_EINVAL (a
 * run gave a value that is not a measurement), or the body's code (out is
 * then freed).
 */
int dkb_measure_body(const dkb_config *cfg, const dkb_entry *e, dkb_result *out);

/* The estimates dkb_measure_body gives, of every available measure of r
 * (samples of one iteration each). Returns 0 or DK_ENOMEM. */
int dkb_estimate_runs(const dkb_config *cfg, dkb_result *r);

/* What every result of a run shares: the source's backend and CPU (src
 * NULL: "none"), the date, the host. */
void dkb_run_info_fill(dkb_run_info *run, const dkb_config *cfg, double noise, const char *baseline,
                       const dkb_source *src);

/* Estimates of one measure from its samples (fit, CI, summary, outliers);
 * flat: every sample has the same iteration count, the slope is the mean
 * per-iteration value; robust: the slope is Theil-Sen's (time), else the
 * OLS fit's, from the samples not marked in preempted (NULL: none
 * marked) when at least 5 with two iteration counts remain;
 * m->estimator says which, m->n_fit from how many samples. Returns 0 or DK_ENOMEM. */
int dkb_estimate(const dkb_config *cfg, const double *x, size_t n, bool flat, bool robust,
                 const unsigned char *preempted, dkb_measure *m);

/* dkb_estimate of every available measure of r from its samples
 * (r->iterations, time robust). Returns 0 or DK_ENOMEM. */
int dkb_estimate_all(const dkb_config *cfg, dkb_result *r, bool flat);

/* The samples (x, t) during which the thread was not switched out (pre[i]
 * 0, or pre NULL), copied to xs, ts; returns how many, or 0 when they are
 * too few for a slope with a 95% interval (then every sample is used). */
size_t dkb_unpreempted(const double *x, const double *t, const unsigned char *pre, size_t n,
                       double *xs, double *ts);

#endif /* DKPERF_BENCH_HARNESS_H */
