/*
 * median.h - the median of a sample, shared by the benchmark programs.
 */
#ifndef DKPERF_BENCH_MEDIAN_H
#define DKPERF_BENCH_MEDIAN_H

#include <stdlib.h>

static inline int dkb_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v in place. */
static inline double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, dkb_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* DKPERF_BENCH_MEDIAN_H */
