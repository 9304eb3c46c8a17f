/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats.c - the statistics of repeated measurements (see stats.h).
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

void stats_init(stats *s)
{
    s->n = 0;
    s->sum = s->shift = s->mean = s->m2 = 0;
}

void stats_add(stats *s, double x)
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

double stats_get(const stats *s, stats_kind kind)
{
    double mean = s->n > 0 ? s->sum / (double)s->n : 0;
    double var = s->n > 1 ? s->m2 / (double)(s->n - 1) : 0;
    switch (kind) {
    case STATS_MEAN:
        return mean;
    case STATS_VARIANCE:
        return var;
    case STATS_STDDEV:
        return sqrt(var);
    case STATS_STDDEV_MEAN:
        return s->n > 0 ? sqrt(var / (double)s->n) : 0;
    case STATS_REL_STDDEV_MEAN:
        return s->n > 1 && mean > 0 ? sqrt(var / (double)s->n) / mean * 100 : 0;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double stats_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
