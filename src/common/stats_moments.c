/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats_moments.c - running moments and the median (see stats.h).
 */
#include <math.h>
#include <stdlib.h>

#include "common/stats_internal.h"

void dkb_moments_init(dkb_moments *s)
{
    s->n = 0;
    s->sum = s->shift = s->mean = s->m2 = 0;
}

void dkb_moments_add(dkb_moments *s, double x)
{
    if (s->n == 0)
        s->shift = x;
    s->n++;
    s->sum += x;
    /* Shifted by the first sample, counts near 1e10 become small exact
     * numbers, and the running mean keeps their fractions. */
    double d = x - s->shift;
    double delta = d - s->mean;
    s->mean += delta / (double)s->n;
    /* delta and d - mean have one sign: each term is >= 0. */
    s->m2 += delta * (d - s->mean);
}

double dkb_moments_get(const dkb_moments *s, dkb_moment kind)
{
    double mean = s->n > 0 ? s->sum / (double)s->n : 0;
    double var = s->n > 1 ? s->m2 / (double)(s->n - 1) : 0;
    switch (kind) {
    case DKB_MOMENT_MEAN:
        return mean;
    case DKB_MOMENT_VARIANCE:
        return var;
    case DKB_MOMENT_STDDEV:
        return sqrt(var);
    case DKB_MOMENT_STDDEV_MEAN:
        return s->n > 0 ? sqrt(var / (double)s->n) : 0;
    case DKB_MOMENT_REL_STDDEV_MEAN:
        return s->n > 1 && mean > 0 ? sqrt(var / (double)s->n) / mean * 100 : 0;
    }
    return 0;
}

double dkb_median(double *v, size_t n)
{
    if (v != NULL && n > 0)
        qsort(v, n, sizeof *v, cmp_double);
    return dkb_quantile_sorted(v, n, 0.5);
}
