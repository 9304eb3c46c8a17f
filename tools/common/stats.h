/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats.h - the statistics of repeated measurements: pure computation,
 * shared by dkperf stat and the benchmark programs.
 *
 * Samples are added one at a time (Welford's online update, as perf's
 * util/stat.c does, on samples shifted by the first one): the spread is
 * computed from each sample's distance to the running mean, never as a
 * difference of two large sums, so counts near 1e10 that differ by a few
 * units keep their spread, and the variance is never negative.
 */
#ifndef DKPERF_TOOLS_STATS_H
#define DKPERF_TOOLS_STATS_H

#include <stddef.h>

typedef struct stats {
    size_t n;
    double sum;   /* exact for integer samples while below 2^53 */
    double shift; /* the first sample */
    double mean;  /* running mean of the samples minus shift */
    double m2;    /* sum of squared distances to the mean */
} stats;

typedef enum stats_kind {
    STATS_MEAN,            /* sum / n; 0 without samples */
    STATS_VARIANCE,        /* sample variance (n - 1); 0 below two samples */
    STATS_STDDEV,          /* sample standard deviation */
    STATS_STDDEV_MEAN,     /* standard deviation of the mean: stddev / sqrt(n) */
    STATS_REL_STDDEV_MEAN, /* STATS_STDDEV_MEAN / mean in percent, perf stat's
                            * "( +- x% )"; 0 when the mean is not positive */
} stats_kind;

#define STATS_INIT {0, 0, 0, 0, 0}

void stats_init(stats *s);
void stats_add(stats *s, double x);
double stats_get(const stats *s, stats_kind kind);

/* The median of v[0..n-1], which it sorts in place; 0 when n is 0. */
double stats_median(double *v, size_t n);

#endif /* DKPERF_TOOLS_STATS_H */
