/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_fixtures.c - the results, run and temporary folder of
 * test_bench_reports.c, test_bench_baseline.c and test_bench_change.c
 * (see bench_fixtures.h).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_fixtures.h"
#include "check.h"

double *doubles(size_t n)
{
    double *d = calloc(n, sizeof *d);
    CHECK(d != NULL);
    return d;
}

static void measure(dkb_result *r, size_t j, const char *name, double per_iter, double intercept)
{
    dkb_measure *m = &r->m[j];
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->unit, sizeof m->unit, "%s", j == 0 ? "ns" : "");
    m->available = true;
    m->y = doubles(r->n_samples);
    m->outlier_class = calloc(r->n_samples, 1);
    CHECK(m->outlier_class != NULL);
    for (size_t i = 0; i < r->n_samples; i++) {
        /* A small deterministic wobble, and three high outliers. */
        double wobble = 1 + 0.002 * ((double)((i * 7) % 5) - 2);
        m->y[i] = intercept + per_iter * r->iterations[i] * wobble;
    }
    m->y[10] *= 1.3, m->y[40] *= 1.3, m->y[70] *= 2.5;
    m->outlier_class[10] = m->outlier_class[40] = DKB_OUTLIER_HIGH_MILD;
    m->outlier_class[70] = DKB_OUTLIER_HIGH_SEVERE;
    m->fit = (dkb_fit){per_iter, intercept, 0.9987};
    m->slope = (dkb_interval){per_iter, per_iter * 0.99, per_iter * 1.01};
    m->per_iter = (dkb_summary){per_iter * 1.02,
                                per_iter,
                                per_iter * 0.01,
                                per_iter * 0.05,
                                per_iter * 0.99,
                                per_iter * 2.5,
                                {per_iter * 1.02, per_iter * 1.0, per_iter * 1.04}};
    m->outliers = (dkb_outliers){
        0, 0, 2, 1, per_iter * 0.9, per_iter * 0.95, per_iter * 1.05, per_iter * 1.1};
    snprintf(m->estimator, sizeof m->estimator, "%s", j == 0 ? "Theil-Sen" : "OLS");
    m->ols_slope = (dkb_interval){per_iter * 1.001, per_iter * 0.98, per_iter * 1.02};
    m->n_fit = j == 0 ? r->n_samples - 3 : r->n_samples;
}

/* A result of N samples: time 1000 ns per iteration, 2000 instructions,
 * 1000 cycles, 400 branches, 8 branch misses; cache-misses unavailable. */
void sample(dkb_result *r, const char *name, double scale)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->group, sizeof r->group, "grp");
    r->n_samples = N;
    r->iterations = doubles(N);
    for (size_t i = 0; i < N; i++)
        r->iterations[i] = 10.0 * (double)(i + 1);
    r->n_measures = 6;
    measure(r, 0, "time", 1000 * scale, 500);
    measure(r, 1, "instructions", 2000, 40);
    measure(r, 2, "cycles", 1000 * scale, 30);
    measure(r, 3, "branches", 400, 4);
    measure(r, 4, "branch-misses", 8, 1);
    snprintf(r->m[5].name, sizeof r->m[5].name, "cache-misses");
    snprintf(r->m[5].why, sizeof r->m[5].why,
             "no counter left, it is measured in the next pass only on M1");
    r->m[0].has_change = true;
    r->m[0].change = (dkb_change){{-0.052, -0.063, -0.041}, 0.001, DKB_IMPROVED, 0};
    r->m[0].baseline_slope = 1052;
    r->passes = 1;
    r->throughput_kind = DKB_THROUGHPUT_BYTES;
    r->throughput_per_iter = 4096;
    snprintf(r->stop_reason, sizeof r->stop_reason, "precision reached: CI half-width 0.9%% < 1%%");
    r->warmup_s = 1.5;
    r->measure_s = 3.25;
    r->n_levels = 2;
    snprintf(r->level_name[0], sizeof r->level_name[0], "P");
    snprintf(r->level_name[1], sizeof r->level_name[1], "E");
    r->level_cycle_share[0] = 0.92;
    r->level_cycle_share[1] = 0.08;
    r->moved_levels = true;
    /* Three samples preempted (left out of the time answer: n_fit above). */
    r->switches_counted = true;
    r->preempted = calloc(N, 1);
    CHECK(r->preempted != NULL);
    r->preempted[5] = r->preempted[50] = r->preempted[95] = 1;
    r->n_preempted = 3;
}

void run_info(dkb_run_info *run)
{
    memset(run, 0, sizeof *run);
    snprintf(run->backend, sizeof run->backend, "kperf");
    snprintf(run->cpu, sizeof run->cpu, "Apple M1 <\"Firestorm\">");
    snprintf(run->date, sizeof run->date, "2026-01-02T03:04:05Z");
    snprintf(run->host, sizeof run->host, "host&1");
    run->seed = 0xFFFFFFFFFFFFFFF1ull;
    run->noise_threshold = 0.01;
    run->target_precision = 0.01;
    snprintf(run->baseline, sizeof run->baseline, "main");
}

char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    char *buf = malloc(1 << 20);
    CHECK(buf != NULL);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static char tmpdir[512];

void cleanup(void)
{
    char cmd[600];
    if (tmpdir[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        tmpdir[0] = 0;
        CHECK(system(cmd) == 0);
    }
}

/* A file in a folder of this case's own under $TMPDIR, removed by the case
 * or, when a check fails first, at exit. */
const char *tmp_path(const char *file)
{
    static char path[600];
    static bool registered;
    if (tmpdir[0] == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/dkb-reports-XXXXXX", t != NULL && *t ? t : "/tmp");
        CHECK(mkdtemp(tmpdir) != NULL);
        if (!registered)
            atexit(cleanup);
        registered = true;
    }
    snprintf(path, sizeof path, "%s/%s", tmpdir, file);
    return path;
}

/* Two results; the second with an unmeasured time (no samples). */
void two_results(dkb_result *a, dkb_result *b)
{
    sample(a, NAME, 1.0);
    sample(b, "grp/empty", 1.0);
    dkb_result_free(b);
    b->n_samples = 0;
    b->n_measures = 1;
    b->m[0].n_fit = 0;
    b->n_preempted = 0;
    b->m[0].available = false;
    snprintf(b->m[0].why, sizeof b->m[0].why, "the benchmark returned before one iteration");
}

/* A result of one exact-count measure and time on its own iteration
 * schedule: yᵢ = intercept + per_iter · xᵢ · (1 + wobbleᵢ). */
void line_result(dkb_result *r, double step, double intercept, double per_iter, double wobble)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "line");
    r->n_samples = 40;
    r->iterations = doubles(r->n_samples);
    r->n_measures = 2;
    for (size_t j = 0; j < 2; j++) {
        dkb_measure *m = &r->m[j];
        snprintf(m->name, sizeof m->name, "%s", j == 0 ? "time" : "instructions");
        m->available = true;
        m->y = doubles(r->n_samples);
        for (size_t i = 0; i < r->n_samples; i++) {
            r->iterations[i] = step * (double)(i + 1);
            double w = j == 0 ? wobble * ((double)((i * 7) % 5) - 2) : 0;
            m->y[i] = intercept + per_iter * r->iterations[i] * (1 + w);
        }
        m->fit = (dkb_fit){per_iter, intercept, 1};
        m->slope = (dkb_interval){per_iter, per_iter, per_iter};
        m->n_fit = r->n_samples;
        snprintf(m->estimator, sizeof m->estimator, "%s", j == 0 ? "Theil-Sen" : "OLS");
    }
}
