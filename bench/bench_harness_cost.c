/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_harness_cost.c - what libdkbench's harness costs per sample, next
 * to what it must cost at most, measured side by side in one run; and how
 * fast its estimators are.
 *
 * 1. The per-sample overhead the fit's intercept absorbs: an empty body is
 *    measured R times by the harness (the real clock and counters, the
 *    default events where they open, the context-switch counter where the
 *    backend has one); the OLS intercept of each measure is its constant
 *    cost per sample. Beside it, in the same run: the cost of two
 *    dk_thread_sample calls on the same events plus two clock reads (the
 *    bound), measured directly. Target: the time intercept at most the
 *    bound. Also printed: the harness's whole cost per sample outside the
 *    timed window (reads, stop rule, bookkeeping), which delays the run but
 *    is in no measurement.
 * 2. The speed of the estimators on 100 samples: the OLS slope bootstrap
 *    (per resample and for the 10000 of a final estimate), Theil-Sen with
 *    Sen's interval (the time answer, and the stop rule's check).
 *
 * usage: bench-harness-cost [--rounds R]
 * Exit status 0 when the target is met, 1 when not, 2 when it cannot run.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "libdkbench/harness.h"
#include "dkbench.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void empty_body(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_clobber_memory(); }

/* ns for two dk_thread_sample calls and two clock reads, on the events the
 * harness counts (names[0..n), plus the switch counter if it opens). */
static double reads_cost(const char *const *names, size_t n, size_t calls, int *events_counted)
{
    dk_sampler *s = NULL;
    dk_thread *t = NULL;
    const char *all[DK_MAX_EVENTS];
    size_t k = 0;
    for (size_t i = 0; i < n && k < DK_MAX_EVENTS - 1; i++)
        all[k++] = names[i];
    all[k++] = "context-switches";
    *events_counted = 0;
    if (dk_sampler_open(&s, NULL) == 0) {
        if (dk_thread_open_names(s, all, k, &t) != 0 &&
            (k == 1 || dk_thread_open_names(s, all, k - 1, &t) != 0))
            t = NULL;
        if (t != NULL && dk_thread_start(t) != 0) {
            dk_thread_close(t);
            t = NULL;
        }
    }
    uint64_t v[DK_MAX_EVENTS];
    struct timespec ts;
    double best = INFINITY;
    for (int round = 0; round < 3; round++) {
        double t0 = now_ns();
        for (size_t i = 0; i < calls; i++) {
            clock_gettime(CLOCK_MONOTONIC, &ts);
            if (t != NULL)
                dk_thread_sample(t, v);
            if (t != NULL)
                dk_thread_sample(t, v);
            clock_gettime(CLOCK_MONOTONIC, &ts);
        }
        double per = (now_ns() - t0) / (double)calls;
        if (per < best)
            best = per;
    }
    if (t != NULL)
        *events_counted = (int)dk_thread_event_count(t);
    dk_thread_close(t);
    dk_sampler_close(s);
    return best;
}

int main(int argc, char **argv)
{
    long rounds = 9;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = strtol(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: bench-harness-cost [--rounds R]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 100) {
        fprintf(stderr, "bench-harness-cost: --rounds from 1 to 100\n");
        return 2;
    }
    static const char *const events[] = {"instructions", "cycles", "branches", "branch-misses"};
    dkb_source src;
    dkb_source_open_dkperf(&src); /* on failure a time-only source, which is measured */
    dkb_plan plan;
    if (dkb_plan_events(&src, events, 4, &plan) != 0) {
        fprintf(stderr, "bench-harness-cost: planning the events: %s\n", dkb_last_error());
        dkb_source_close_dkperf(&src);
        return 2;
    }
    const char *open_names[DK_MAX_EVENTS];
    size_t n_open = 0;
    for (size_t i = 0; i < plan.n; i++)
        if (plan.available[i] && plan.pass_of[i] == 0)
            open_names[n_open++] = plan.name[i];
    dkb_config cfg;
    dkb_config_defaults(&cfg);
    dkb_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.name, sizeof e.name, "empty");
    e.loop = empty_body;

    double *icpt = calloc((size_t)rounds * (1 + DK_MAX_EVENTS), sizeof *icpt);
    double *outside = calloc((size_t)rounds, sizeof *outside);
    double *reads = calloc((size_t)rounds, sizeof *reads);
    if (icpt == NULL || outside == NULL || reads == NULL) {
        fprintf(stderr, "bench-harness-cost: out of memory\n");
        free(icpt), free(outside), free(reads);
        dkb_source_close_dkperf(&src);
        return 2;
    }
    int counted = 0, rc = 0;
    bool switches = false;
    size_t nm = 1;
    /* Alternate the two measurements round by round, so both see the
     * same machine. */
    for (long r = 0; r < rounds && rc == 0; r++) {
        dkb_result res;
        if (dkb_measure_one(&cfg, &src, &plan, &e, &res) != 0) {
            fprintf(stderr, "bench-harness-cost: measuring: %s\n", dkb_last_error());
            rc = 2;
            break;
        }
        nm = res.n_measures;
        switches = res.switches_counted;
        double in_window = 0;
        for (size_t i = 0; i < res.n_samples; i++)
            in_window += res.m[0].y[i];
        outside[r] = (res.measure_s * 1e9 - in_window) / (double)res.n_samples;
        for (size_t m = 0; m < res.n_measures; m++)
            icpt[m * (size_t)rounds + (size_t)r] =
                res.m[m].available && res.m[m].y != NULL ? res.m[m].fit.intercept : NAN;
        /* Time: the intercept of the line the time answer is, Theil-Sen's
         * on the samples not preempted (OLS's would carry the spikes). */
        double *xs = malloc(2 * res.n_samples * sizeof *xs);
        size_t k = 0;
        for (size_t i = 0; xs != NULL && i < res.n_samples; i++)
            if (res.preempted == NULL || !res.preempted[i]) {
                xs[k] = res.iterations[i];
                xs[res.n_samples + k++] = res.m[0].y[i];
            }
        dkb_interval ts;
        double a;
        if (xs != NULL && dkb_theil_sen(xs, xs + res.n_samples, k, 0.95, &ts, &a))
            icpt[r] = a;
        free(xs);
        dkb_result_free(&res);
        reads[r] = reads_cost(open_names, n_open, 2000, &counted);
    }
    if (rc == 0) {
        printf("Harness cost per sample, %ld rounds alternated (medians), backend %s%s\n", rounds,
               src.backend, switches ? ", context switches counted" : "");
        double bound = median(reads, (size_t)rounds);
        double t_icpt = median(icpt, (size_t)rounds);
        printf("  time fit's intercept (what it absorbs per sample): %8.1f ns (Theil-Sen's line, "
               "unpreempted samples)\n",
               t_icpt);
        printf("  two dk_thread_sample (%d event%s) + two clock reads: %8.1f ns\n", counted,
               counted == 1 ? "" : "s", bound);
        for (size_t m = 1; m < nm; m++) {
            double *v = icpt + m * (size_t)rounds;
            if (isnan(v[0]))
                continue;
            printf("  %s fit's intercept: %.1f per sample\n", plan.name[m - 1],
                   median(v, (size_t)rounds));
        }
        printf("  outside the timed window (reads, stop rule, bookkeeping): %.1f ns per sample\n",
               median(outside, (size_t)rounds));
        /* A cost is not negative: an intercept below minus the reads' cost
         * is the fit failing to resolve it (load), not a cheap harness. */
        bool resolved = t_icpt >= -bound;
        bool met = resolved && t_icpt <= bound;
        printf("target: intercept at most the two reads' cost: %s (%.2f of it)\n",
               met        ? "met"
               : resolved ? "MISSED"
                          : "NOT RESOLVED (negative beyond the reads' cost)",
               t_icpt / bound);
        rc = met ? 0 : 1;
    }

    /* The estimators' speed on 100 samples of a noisy line. */
    if (rc != 2) {
        double x[100], y[100];
        dkb_rng g;
        dkb_rng_seed(&g, 5);
        for (size_t i = 0; i < 100; i++) {
            x[i] = 400.0 * (double)(i + 1);
            y[i] = 30 + 98.7 * x[i] * (1 + 0.01 * ((double)(dkb_rng_next(&g) >> 11) * 0x1p-53));
        }
        dkb_interval ci;
        double t0 = now_ns();
        bool ok = dkb_slope_ci(x, y, 100, 10000, 1, 0.95, &ci);
        double boot = now_ns() - t0;
        int reps = 200;
        t0 = now_ns();
        for (int i = 0; i < reps && ok; i++)
            ok = dkb_theil_sen(x, y, 100, 0.95, &ci, NULL);
        double ts = (now_ns() - t0) / reps;
        if (!ok) {
            fprintf(stderr, "bench-harness-cost: an estimator failed: %s\n", dkb_last_error());
            rc = 2;
        } else {
            printf("Estimators on 100 samples\n");
            printf("  OLS slope bootstrap: %.1f ns per resample, %.2f ms for 10000\n", boot / 10000,
                   boot * 1e-6);
            printf("  Theil-Sen with Sen's interval (4950 pair slopes): %.1f us\n", ts * 1e-3);
        }
    }
    free(icpt), free(outside), free(reads);
    dkb_source_close_dkperf(&src);
    return rc;
}
