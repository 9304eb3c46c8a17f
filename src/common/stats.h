/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats.h - the one statistics module of libdkbench and the tools (compiled
 * into each, never into libdkperf): pure computation on arrays, no I/O, no
 * allocation visible to the caller, deterministic for a given seed. Every
 * formula is written out in doc/BENCH-STATISTICS.md. Not installed.
 *
 * Conventions: x[i] is the iteration count of sample i, y[i] the total
 * measured over that sample (nanoseconds or an event count); a
 * per-iteration value is y[i] / x[i]. Intervals are 95% unless a
 * confidence is passed. Functions return false when the input cannot give
 * an answer (too few samples, all x equal, a NaN or an infinity, ...), and
 * leave *out zeroed; dkb_last_error() (common/error.h) then says why. The
 * fewest samples: 2 for dkb_ols, dkb_summarize, dkb_ratio and each side of
 * dkb_change_test; 3 for dkb_slope_ci (two points always fit exactly, so
 * their interval would be a width of 0 that says nothing); 1 for dkb_tukey.
 */
#ifndef DKPERF_COMMON_STATS_H
#define DKPERF_COMMON_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A point estimate with its confidence interval. */
typedef struct dkb_interval {
    double point, lo, hi;
} dkb_interval;

/* A small, fast PRNG (xoshiro256**) seeded by splitmix64: reruns with the
 * same seed resample the same way. */
typedef struct dkb_rng {
    uint64_t s[4];
} dkb_rng;
void dkb_rng_seed(dkb_rng *r, uint64_t seed);
uint64_t dkb_rng_next(dkb_rng *r);
size_t dkb_rng_below(dkb_rng *r, size_t n); /* uniform in [0, n), n > 0 */

/* Ordinary least squares of y = intercept + slope * x, with R^2. */
typedef struct dkb_fit {
    double slope, intercept, r2;
} dkb_fit;
bool dkb_ols(const double *x, const double *y, size_t n, dkb_fit *out);

/* The slope with a bootstrap confidence interval: resample (x, y) pairs
 * with replacement `resamples` times, refit, take the percentile interval. */
bool dkb_slope_ci(const double *x, const double *y, size_t n, size_t resamples, uint64_t seed,
                  double confidence, dkb_interval *out);

/* A robust slope for samples with rare large positive errors (a sample
 * that includes a preemption): the Theil-Sen estimator, the median of the
 * slopes of every pair with different x, with Sen's distribution-free
 * interval (limits at ranks (N -+ z sqrt(Var S)) / 2 of the N sorted pair
 * slopes, Var S Kendall's with ties in x), no resampling. *intercept, when
 * not NULL, gets the median of y - slope x. At most 65536 samples. */
bool dkb_theil_sen(const double *x, const double *y, size_t n, double confidence, dkb_interval *out,
                   double *intercept);

/* Location and spread of per-iteration values v[0..n). */
typedef struct dkb_summary {
    double mean, median, mad, stddev, min, max; /* mad: median absolute deviation, unscaled */
    dkb_interval mean_ci;                       /* bootstrap of the mean */
} dkb_summary;
bool dkb_summarize(const double *v, size_t n, size_t resamples, uint64_t seed, double confidence,
                   dkb_summary *out);

/* The median of v[0..n) with its bootstrap percentile interval (the
 * values resampled with replacement, the median of each resample). The
 * headline of an external body's runs (one run, one sample). */
bool dkb_median_ci(const double *v, size_t n, size_t resamples, uint64_t seed, double confidence,
                   dkb_interval *out);

/* Tukey's fences on v: mild outside [Q1 - 1.5 IQR, Q3 + 1.5 IQR], severe
 * outside [Q1 - 3 IQR, Q3 + 3 IQR]. Outliers are counted, never dropped.
 * class_of, when not NULL, gets one of DKB_OUTLIER_* per sample. */
enum {
    DKB_OUTLIER_NONE = 0,
    DKB_OUTLIER_LOW_MILD,
    DKB_OUTLIER_LOW_SEVERE,
    DKB_OUTLIER_HIGH_MILD,
    DKB_OUTLIER_HIGH_SEVERE
};
typedef struct dkb_outliers {
    size_t low_severe, low_mild, high_mild, high_severe;
    double fence_low_severe, fence_low_mild, fence_high_mild, fence_high_severe;
} dkb_outliers;
bool dkb_tukey(const double *v, size_t n, dkb_outliers *out, unsigned char *class_of);

/* Change of the mean per-iteration value from a baseline (old) to now
 * (new), as a relative change new/old - 1 with a bootstrap CI (each sample
 * resampled on its own), and a two-sided p-value of Welch's t statistic by
 * bootstrap under the null (both samples shifted to the pooled mean), as
 * Criterion does. Lower is better for every measure (time, counts). */
typedef enum dkb_verdict {
    DKB_NO_CHANGE = 0, /* p >= significance */
    DKB_WITHIN_NOISE,  /* significant, but the CI overlaps +-noise */
    DKB_IMPROVED,      /* significant, CI entirely below -noise */
    DKB_REGRESSED,     /* significant, CI entirely above +noise */
    DKB_UNRESOLVED     /* resolution > noise, and p >= significance or the CI reaches both
                          inside and past +-noise (the process tests only) */
} dkb_verdict;
typedef struct dkb_change {
    dkb_interval rel; /* new/old - 1 */
    double p_value;
    dkb_verdict verdict;
    /* The smallest relative change the test could call significant at
     * this spread (the half-width of rel on the log scale, exp(t SE) - 1);
     * 0 when the test does not compute one (the bootstrap tests). */
    double resolution;
} dkb_change;
bool dkb_change_test(const double *old_v, size_t n_old, const double *new_v, size_t n_new,
                     double noise, double significance, size_t resamples, uint64_t seed,
                     dkb_change *out);
/* The same test on medians (§7): the change of the medians, med(new) /
 * med(old) - 1, its bootstrap interval, and the p-value of the difference
 * of the medians by bootstrap under the null (each side centred on its own
 * median). A median is not moved by a minority of disturbed values, as a
 * mean is: this is the test of the Theil-Sen answer. It needs at least
 * DKB_MEDIAN_CHANGE_MIN values on each side. */
#define DKB_MEDIAN_CHANGE_MIN 5
bool dkb_change_test_median(const double *old_v, size_t n_old, const double *new_v, size_t n_new,
                            double noise, double significance, size_t resamples, uint64_t seed,
                            dkb_change *out);
/* Student's t distribution with df > 0 degrees of freedom (fractional
 * df allowed, as Welch's test gives): P(T <= t), and the quantile of p in
 * (0, 1). NaN for a NaN argument, df <= 0 or p outside (0, 1). */
double dkb_t_cdf(double t, double df);
double dkb_t_quantile(double p, double df);

/* One benchmark measured in n separate processes, the unit of replication
 * (doc/BENCH-STATISTICS.md §13): est[j] is process j's estimate, half[j]
 * the half-width of its 95% interval within that process (half may be
 * NULL: unknown). */
typedef struct dkb_process_summary {
    size_t n;             /* processes */
    dkb_interval ci;      /* mean of est, +- t(1 - (1 - c)/2, n - 1) s / sqrt(n) */
    double stddev;        /* s: of the processes' estimates (divisor n - 1) */
    double within_var;    /* mean (half[j] / 1.959964)^2: variance within a process */
    double between_share; /* max(0, s^2 - within_var) / s^2: 0 when s is 0 */
    /* The smallest relative change a comparison of two such sets (n
     * processes each, this spread) could call significant at 1 - c:
     * exp(t(1 - (1 - c)/2, 2n - 2) sqrt(2) s / (sqrt(n) |mean|)) - 1; NaN
     * when the mean is 0. */
    double resolution;
} dkb_process_summary;
/* Needs n >= 2 finite estimates (and finite, non-negative halves). */
bool dkb_process_summarize(const double *est, const double *half, size_t n, double confidence,
                           dkb_process_summary *out);

/* The change from n_old processes' estimates to n_new others' (each side
 * at least 2): Welch's t test of the two means on the log scale (delta
 * method), d = ln(mean(new) / mean(old)), SE^2 = s_old^2 / (n_old
 * mean(old)^2) + s_new^2 / (n_new mean(new)^2), Welch-Satterthwaite
 * degrees of freedom; rel = exp(d +- t SE) - 1 with t the 1 - sig/2
 * quantile, p two-sided from t = d / SE. Both means must be positive.
 * With SE = 0 (exact counts): p = 1 for equal means, 0 otherwise, rel of
 * width 0. Verdicts as dkb_change_test's, except that where
 * out->resolution > noise an insignificant change, or a significant one
 * whose interval reaches both inside and past +-noise, is DKB_UNRESOLVED. */
bool dkb_change_processes(const double *old_est, size_t n_old, const double *new_est, size_t n_new,
                          double noise, double significance, dkb_change *out);
/* The same for n pairs run side by side in time (old_est[k] beside
 * new_est[k], n >= 2, every value positive): Yuen's paired test of
 * l_k = ln(new_est[k] / old_est[k]): d the 20% trimmed mean of the l_k
 * (floor(0.2 n) cut from each end), SE^2 = (n - 1) s_w^2 / (h (h - 1))
 * with s_w^2 their winsorized variance and h = n - 2 floor(0.2 n) kept,
 * df h - 1 (the paired t test when n < 5, or when the kept l_k are equal
 * and the others not). Drift common to a pair cancels,
 * and a few pairs with a process that landed far slower do not move d. */
bool dkb_change_paired(const double *old_est, const double *new_est, size_t n, double noise,
                       double significance, dkb_change *out);

/* "no change", "within noise", "improved", "regressed", "unresolved": also the words the
 * JSON and CSV files write, and a baseline's verdicts are read back by. */
const char *dkb_verdict_name(dkb_verdict v);

/* Interleaved comparison of alternatives run on the same iteration counts:
 * the ratio b/a of per-iteration values, paired by sample, as the median
 * of the per-pair log-ratios with a bootstrap CI, exponentiated. */
bool dkb_ratio(const double *a, const double *b, size_t n, size_t resamples, uint64_t seed,
               double confidence, dkb_interval *out);

/* The one quantile of libdkbench and the tools: quantile q in [0, 1] of
 * sorted v, sorted[h] + (h - floor(h)) (sorted[h+1] - sorted[h]) with
 * h = (n - 1) q (linear interpolation, R type 7, numpy's default). Without
 * values there is no quantile: NaN when n is 0 (or sorted is NULL), as
 * when q is outside [0, 1]; a caller that shows 0 for none says so. */
double dkb_quantile_sorted(const double *sorted, size_t n, double q);
/* The median of v[0..n), which it sorts in place: dkb_quantile_sorted(v,
 * n, 0.5), so NaN when n is 0. */
double dkb_median(double *v, size_t n);

/* Running moments of samples added one at a time (Welford's online
 * update, as perf's util/stat.c does, on samples shifted by the first
 * one): the spread is computed from each sample's distance to the running
 * mean, never as a difference of two large sums, so counts near 1e10 that
 * differ by a few units keep their spread, and the variance is never
 * negative. */
typedef struct dkb_moments {
    size_t n;
    double sum;   /* exact for integer samples while below 2^53 */
    double shift; /* the first sample */
    double mean;  /* running mean of the samples minus shift */
    double m2;    /* sum of squared distances to the mean */
} dkb_moments;

typedef enum dkb_moment {
    DKB_MOMENT_MEAN,            /* sum / n; 0 without samples */
    DKB_MOMENT_VARIANCE,        /* sample variance (n - 1); 0 below two samples */
    DKB_MOMENT_STDDEV,          /* sample standard deviation */
    DKB_MOMENT_STDDEV_MEAN,     /* standard deviation of the mean: stddev / sqrt(n) */
    DKB_MOMENT_REL_STDDEV_MEAN, /* DKB_MOMENT_STDDEV_MEAN / mean in percent, perf
                                 * stat's "( +- x% )"; 0 when the mean is not
                                 * positive */
} dkb_moment;

void dkb_moments_init(dkb_moments *s);
void dkb_moments_add(dkb_moments *s, double x);
double dkb_moments_get(const dkb_moments *s, dkb_moment kind);

#endif /* DKPERF_COMMON_STATS_H */
