/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * estimate.c - libdkbench's estimates of a benchmark's samples: the
 * per-iteration summary and outliers, the OLS slope and, for time, the
 * Theil-Sen slope of the samples no preemption touched; see harness.h.
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"
#include "libdkbench/compare.h"
#include "libdkbench/harness.h"

/* Fewest unpreempted samples the time answer is computed from alone. With
 * n distinct x, Sen's interval is at widest the two extreme pair slopes,
 * which miss the truth with probability 2/n!: 1/3 at n = 3, 1/12 at n = 4,
 * so a "95%" interval from 3 or 4 samples is not one; 5 give 98.3%. */
#define MIN_UNPREEMPTED DKB_MIN_UNPREEMPTED

/* The time samples the time estimate uses: those during which the thread
 * was not switched out, copied to xs, ts; returns how many, or 0 when they
 * are too few for a slope with a 95% interval (then every sample is used). */
size_t dkb_unpreempted(const double *x, const double *t, const unsigned char *pre, size_t n,
                       double *xs, double *ts)
{
    size_t k = 0;
    bool varied = false;
    for (size_t i = 0; i < n; i++)
        if (pre == NULL || !pre[i]) {
            varied |= k > 0 && x[i] != xs[0];
            xs[k] = x[i];
            ts[k++] = t[i];
        }
    return k >= MIN_UNPREEMPTED && varied ? k : 0;
}

int dkb_estimate(const dkb_config *cfg, const double *x, size_t n, bool flat, bool robust,
                 const unsigned char *preempted, dkb_measure *m)
{
    if (n == 0)
        return 0;
    double *v = malloc(n * sizeof *v);
    m->outlier_class = calloc(n, 1);
    if (v == NULL || m->outlier_class == NULL) {
        free(v);
        return dkb_fail(DK_ENOMEM, "out of memory estimating %s", m->name);
    }
    for (size_t i = 0; i < n; i++)
        v[i] = m->y[i] / x[i];
    dkb_summarize(v, n, cfg->resamples, cfg->seed, 0.95, &m->per_iter);
    dkb_tukey(v, n, &m->outliers, m->outlier_class);
    if (flat || !dkb_ols(x, m->y, n, &m->fit)) {
        m->slope = m->per_iter.mean_ci;
        m->n_fit = n;
        snprintf(m->estimator, sizeof m->estimator, "mean");
        free(v);
        return 0;
    }
    if (!dkb_slope_ci(x, m->y, n, cfg->resamples, cfg->seed, 0.95, &m->ols_slope))
        m->ols_slope.point = m->ols_slope.lo = m->ols_slope.hi = m->fit.slope;
    m->slope = m->ols_slope;
    m->n_fit = n;
    snprintf(m->estimator, sizeof m->estimator, "OLS");
    /* Time: a sample that includes a preemption or an interrupt is late by
     * up to milliseconds, and one such sample moves the OLS slope; the
     * median of the pair slopes is not moved by less than 29% of them. */
    if (robust) {
        /* v (n values) and one more array of n: the unpreempted samples. */
        double *xs = malloc(n * sizeof *xs);
        if (xs == NULL) {
            free(v);
            return dkb_fail(DK_ENOMEM, "out of memory estimating %s", m->name);
        }
        size_t k = dkb_unpreempted(x, m->y, preempted, n, xs, v);
        dkb_interval ts;
        if (k > 0 ? dkb_theil_sen(xs, v, k, 0.95, &ts, NULL)
                  : dkb_theil_sen(x, m->y, n, 0.95, &ts, NULL)) {
            m->slope = ts;
            m->n_fit = k > 0 ? k : n;
            snprintf(m->estimator, sizeof m->estimator, "Theil-Sen");
        }
        free(xs);
    }
    free(v);
    return 0;
}

int dkb_estimate_all(const dkb_config *cfg, dkb_result *r, bool flat)
{
    for (size_t i = 0; i < r->n_measures; i++) {
        dkb_measure *m = &r->m[i];
        if (!m->available || m->y == NULL)
            continue;
        int rc = dkb_estimate(cfg, r->iterations, r->n_samples, flat, i == 0,
                              r->n_preempted ? r->preempted : NULL, m);
        if (rc != 0)
            return rc;
    }
    return 0;
}
