/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * summary.c - the summary of a series of measurements (see summary.h).
 */
#include "summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int summary_of(const double *v, size_t n, summary *s)
{
    memset(s, 0, sizeof *s);
    if (n == 0)
        return 0;
    double *sorted = malloc(n * sizeof *sorted);
    if (sorted == NULL)
        return -1;
    memcpy(sorted, v, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    dkb_moments st;
    dkb_moments_init(&st);
    for (size_t i = 0; i < n; i++)
        dkb_moments_add(&st, v[i]);
    s->n = n;
    s->mean = dkb_moments_get(&st, DKB_MOMENT_MEAN);
    s->stddev = dkb_moments_get(&st, DKB_MOMENT_STDDEV);
    s->min = sorted[0];
    s->max = sorted[n - 1];
    s->median = dkb_quantile_sorted(sorted, n, 0.5);
    s->q1 = dkb_quantile_sorted(sorted, n, 0.25);
    s->q3 = dkb_quantile_sorted(sorted, n, 0.75);
    double iqr = s->q3 - s->q1;
    for (size_t i = 0; i < n; i++) {
        double x = sorted[i];
        if (x < s->q1 - 3 * iqr || x > s->q3 + 3 * iqr)
            s->severe++;
        else if (x < s->q1 - 1.5 * iqr || x > s->q3 + 1.5 * iqr)
            s->mild++;
    }
    free(sorted);
    return 0;
}

double summary_ratio(const summary *a, const summary *b, double *sigma)
{
    *sigma = 0;
    if (a->mean <= 0)
        return 0;
    double r = b->mean / a->mean;
    double ra = a->stddev / a->mean;
    double rb = b->mean != 0 ? b->stddev / b->mean : 0;
    *sigma = fabs(r) * sqrt(ra * ra + rb * rb);
    return r;
}

summary_verdict summary_change(const summary *base, const summary *now, double *percent)
{
    double diff = now->mean - base->mean;
    *percent = base->mean != 0 ? diff / base->mean * 100 : 0;
    double var = 0;
    if (base->n > 0)
        var += base->stddev * base->stddev / (double)base->n;
    if (now->n > 0)
        var += now->stddev * now->stddev / (double)now->n;
    if (fabs(diff) <= 2 * sqrt(var) || fabs(diff) <= 0.01 * fabs(base->mean))
        return SUMMARY_WITHIN_NOISE;
    return diff > 0 ? SUMMARY_INCREASED : SUMMARY_DECREASED;
}
