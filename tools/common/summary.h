/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * summary.h - the summary of one series of measurements as hyperfine and
 * Criterion.rs report it: mean and standard deviation (Welford), median,
 * extremes, quartiles (dkb_quantile_sorted) and Tukey's outliers, from the
 * statistics of common/stats.h; the ratio of two means with its propagated
 * error; and the change of a mean against a baseline.
 * Pure computation: no output, no allocation but the sorted copy.
 */
#ifndef DKPERF_TOOLS_SUMMARY_H
#define DKPERF_TOOLS_SUMMARY_H

#include <stddef.h>

typedef struct summary {
    size_t n;
    double mean, stddev; /* sample standard deviation (n - 1); 0 below two samples */
    double median, min, max;
    double q1, q3;       /* quartiles, linear interpolation between order statistics */
    size_t mild, severe; /* outside 1.5 x IQR of the quartiles but inside 3 x; outside 3 x */
} summary;

/*
 * Summarize v[0..n-1] (left unchanged). Returns 0, or -1 when out of memory
 * for the sorted copy (*s is then zeroed). n == 0 gives a zeroed summary.
 */
int summary_of(const double *v, size_t n, summary *s);

/*
 * How many times larger b's mean is than a's, with its error propagated
 * from the two standard deviations as hyperfine does:
 * r = b/a, sigma_r = r sqrt((sa/a)^2 + (sb/b)^2). Returns r, sets *sigma;
 * 0 (and *sigma 0) when a's mean is not positive.
 */
double summary_ratio(const summary *a, const summary *b, double *sigma);

typedef enum summary_verdict {
    SUMMARY_WITHIN_NOISE, /* the change is not both above 2 standard errors and 1% */
    SUMMARY_INCREASED,    /* the mean rose beyond both */
    SUMMARY_DECREASED,    /* the mean fell beyond both */
} summary_verdict;

/*
 * The change from a baseline's mean to now's: *percent = (now - base) / base
 * x 100 (0 when base's mean is 0). A change counts when |now - base| exceeds
 * both 2 standard errors of the difference, 2 sqrt(sb^2/nb + sn^2/nn), and
 * 1% of the baseline's mean.
 */
summary_verdict summary_change(const summary *base, const summary *now, double *percent);

#endif /* DKPERF_TOOLS_SUMMARY_H */
