/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * compare.c - the headline estimate of a measure as a line, and the change
 * against a baseline computed on the same samples and the same line, so
 * that the change agrees with the estimate the reports print.
 */
#include "libdkbench/compare.h"
#include "common/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool theil_sen(const dkb_measure *m) { return strcmp(m->estimator, "Theil-Sen") == 0; }

bool dkb_sample_in_fit(const dkb_result *r, const dkb_measure *m, size_t i)
{
    if (!theil_sen(m) || r->preempted == NULL || m->n_fit == 0 || m->n_fit >= r->n_samples)
        return true;
    return r->preempted[i] == 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bool dkb_headline_line(const dkb_result *r, const dkb_measure *m, dkb_fit *line)
{
    if (!m->available || m->y == NULL || r->iterations == NULL || r->n_samples == 0 ||
        !isfinite(m->slope.point))
        return false;
    line->slope = m->slope.point;
    line->r2 = m->fit.r2;
    if (strcmp(m->estimator, "mean") == 0 || strcmp(m->estimator, "median") == 0) {
        line->intercept = 0;
        return true;
    }
    if (!theil_sen(m)) {
        line->intercept = m->fit.intercept;
        return isfinite(line->intercept);
    }
    double *res = malloc(r->n_samples * sizeof *res);
    if (res == NULL)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < r->n_samples; i++)
        if (dkb_sample_in_fit(r, m, i))
            res[k++] = m->y[i] - line->slope * r->iterations[i];
    /* A value that is not a number (null in a baseline file) has no place
     * in an order: no intercept then, rather than a sort of NaNs. */
    bool ok = k > 0;
    for (size_t i = 0; i < k; i++)
        ok = ok && isfinite(res[i]);
    if (ok) {
        qsort(res, k, sizeof *res, cmp_double);
        line->intercept = dkb_quantile_sorted(res, k, 0.5);
        ok = isfinite(line->intercept);
    }
    free(res);
    return ok;
}

double *dkb_change_values(const dkb_result *r, const dkb_measure *m, size_t *k)
{
    dkb_fit line;
    *k = 0;
    if (!dkb_headline_line(r, m, &line))
        return NULL;
    double *v = malloc((r->n_samples ? r->n_samples : 1) * sizeof *v);
    if (v == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < r->n_samples; i++)
        if (dkb_sample_in_fit(r, m, i) && r->iterations[i] > 0)
            v[n++] = (m->y[i] - line.intercept) / r->iterations[i];
    *k = n;
    return v;
}

static const dkb_measure *named(const dkb_result *r, const char *name)
{
    for (size_t i = 0; i < r->n_measures && i < DKB_MAX_MEASURES; i++)
        if (r->m[i].available && strcmp(r->m[i].name, name) == 0)
            return &r->m[i];
    return NULL;
}

size_t dkb_compare_baseline(dkb_result *r, const dkb_result *old, double noise, size_t resamples,
                            uint64_t seed)
{
    size_t compared = 0;
    for (size_t i = 0; i < r->n_measures && i < DKB_MAX_MEASURES; i++) {
        dkb_measure *m = &r->m[i];
        m->no_change[0] = '\0';
        if (!m->available)
            continue;
        const dkb_measure *om = named(old, m->name);
        if (om == NULL) {
            snprintf(m->no_change, sizeof m->no_change, "the baseline did not measure it");
            continue;
        }
        /* Both measured in several processes: the process is the unit,
         * and the test is of the processes' estimates (§13). */
        m->change_by_process = m->change_paired = false;
        if (r->n_processes >= 2 && old->n_processes >= 2 && m->procs.n >= 2 && om->procs.n >= 2 &&
            m->proc != NULL && om->proc != NULL) {
            if (dkb_change_processes(om->proc, om->procs.n, m->proc, m->procs.n, noise, 0.05,
                                     &m->change)) {
                m->has_change = m->change_by_process = true;
                m->baseline_slope = om->slope.point;
                compared++;
            } else {
                snprintf(m->no_change, sizeof m->no_change, "%s", dkb_last_error());
            }
            continue;
        }
        dkb_fit line;
        if (!dkb_headline_line(r, m, &line)) {
            snprintf(m->no_change, sizeof m->no_change, "this run has no estimate of it");
            continue;
        }
        if (!dkb_headline_line(old, om, &line)) {
            snprintf(m->no_change, sizeof m->no_change,
                     "the baseline has no estimate of it (fewer than 2 samples, or a null value)");
            continue;
        }
        size_t kn = 0, ko = 0;
        double *nv = dkb_change_values(r, m, &kn), *ov = dkb_change_values(old, om, &ko);
        if (nv == NULL || ov == NULL) {
            snprintf(m->no_change, sizeof m->no_change, "out of memory");
        } else if (theil_sen(m) || strcmp(m->estimator, "median") == 0
                       ? dkb_change_test_median(ov, ko, nv, kn, noise, 0.05, resamples, seed,
                                                &m->change)
                       : dkb_change_test(ov, ko, nv, kn, noise, 0.05, resamples, seed,
                                         &m->change)) {
            m->has_change = true;
            m->baseline_slope = om->slope.point;
            compared++;
        } else {
            /* The test's reason, without its function name. */
            const char *why = dkb_last_error();
            const char *colon = strstr(why, ": ");
            colon = strncmp(why, "dkb_change_test", 15) == 0 && colon != NULL ? colon + 2 : why;
            snprintf(m->no_change, sizeof m->no_change, "%s", colon);
        }
        free(nv);
        free(ov);
    }
    return compared;
}

size_t dkb_compare_paired(dkb_result *r, const dkb_result *other, double noise)
{
    size_t compared = 0;
    for (size_t i = 0; i < r->n_measures && i < DKB_MAX_MEASURES; i++) {
        dkb_measure *m = &r->m[i];
        m->no_change[0] = '\0';
        if (!m->available)
            continue;
        const dkb_measure *om = named(other, m->name);
        if (om == NULL)
            snprintf(m->no_change, sizeof m->no_change, "the other program did not measure it");
        else if (m->procs.n < 2 || om->procs.n != m->procs.n || m->proc == NULL || om->proc == NULL)
            snprintf(m->no_change, sizeof m->no_change, "no estimate of it in every process");
        else if (!dkb_change_paired(om->proc, m->proc, m->procs.n, noise, 0.05, &m->change))
            snprintf(m->no_change, sizeof m->no_change, "%s", dkb_last_error());
        else {
            m->has_change = m->change_by_process = m->change_paired = true;
            m->baseline_slope = om->slope.point;
            compared++;
        }
    }
    return compared;
}
