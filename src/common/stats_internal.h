/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats_internal.h - what the files of the statistics module share: the
 * generator's inner steps, the argument checks and small helpers. Not for
 * use outside stats*.c.
 */
#ifndef DKPERF_COMMON_STATS_INTERNAL_H
#define DKPERF_COMMON_STATS_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/stats.h"

/* Consecutive degenerate resamples (every drawn x equal, a baseline mean
 * of zero) tolerated before giving up; each has probability <= 3/4 when
 * the input itself is valid, so reaching this means a broken generator. */
#define DKB_MAX_REDRAWS 1000

/* The interval of dkb_change_test (the header: 95% unless passed). */
#define DKB_CHANGE_CONFIDENCE 0.95

/* §7's verdict of a change whose rel, p_value and resolution are set:
 * improved or regressed when significant and the whole interval is past
 * the noise threshold, within noise when significant and the interval is
 * inside it; unresolved when the test could not have told a change of the
 * threshold (resolution > noise) and either is not significant or has an
 * interval reaching both past and inside the threshold; else no change
 * (not significant) or within noise (significant). The bootstrap tests
 * compute no resolution (0): their verdicts are §7's. */
static inline dkb_verdict dkb__verdict(const dkb_change *c, double noise, double significance)
{
    if (c->p_value >= significance)
        return c->resolution > noise ? DKB_UNRESOLVED : DKB_NO_CHANGE;
    if (c->rel.hi < -noise)
        return DKB_IMPROVED;
    if (c->rel.lo > noise)
        return DKB_REGRESSED;
    if (c->rel.lo >= -noise && c->rel.hi <= noise)
        return DKB_WITHIN_NOISE;
    return c->resolution > noise ? DKB_UNRESOLVED : DKB_WITHIN_NOISE;
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t rng_next(dkb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, n) without modulo bias: Lemire's multiply-and-reject on
 * the high 32 bits for n < 2^32 (every sample count), masked rejection
 * above. 0 when n is 0. */
static inline size_t rng_below(dkb_rng *r, size_t n)
{
    if (n == 0)
        return 0;
    if (((uint64_t)n >> 32) == 0) {
        uint32_t n32 = (uint32_t)n;
        uint64_t m = (rng_next(r) >> 32) * n32;
        uint32_t low = (uint32_t)m;
        if (low < n32) {
            uint32_t threshold = (0u - n32) % n32; /* 2^32 mod n */
            while (low < threshold) {
                m = (rng_next(r) >> 32) * n32;
                low = (uint32_t)m;
            }
        }
        return (size_t)(m >> 32);
    }
    uint64_t limit = (uint64_t)n - 1, mask = limit;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    uint64_t v;
    do
        v = rng_next(r) & mask;
    while (v > limit);
    return (size_t)v;
}

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static inline bool all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

/* The mean as v[0] plus the mean offset from it: exactly v[0] when every
 * value is equal, and no large running sum. */
static inline double mean_of(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 1; i < n; i++)
        s += v[i] - v[0];
    return v[0] + s / (double)n;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n doubles, or NULL when the count overflows or memory is short. */
static inline double *alloc_doubles(const char *fn, size_t n)
{
    double *p = n <= SIZE_MAX / sizeof(double) ? malloc(n * sizeof(double)) : NULL;
    if (p == NULL)
        dkb_fail(DK_ENOMEM, "%s: out of memory for %zu values of its bootstrap", fn, n);
    return p;
}

/* Room for a bootstrap: n values (the copies of its inputs) and the
 * resamples replicates after them, or NULL with the error set. A count
 * past what memory can hold is named, not wrapped into a small malloc. */
static inline double *alloc_bootstrap(const char *fn, size_t n, size_t resamples)
{
    if (n > SIZE_MAX / sizeof(double) || resamples > SIZE_MAX / sizeof(double) - n) {
        dkb_fail(DK_ENOMEM, "%s: %zu values and %zu resamples do not fit in memory", fn, n,
                 resamples);
        return NULL;
    }
    return alloc_doubles(fn, n + resamples);
}

/* Sort the bootstrap replicates and take the percentile interval. */
static inline void percentile_ci(double *boot, size_t b, double confidence, double *lo, double *hi)
{
    qsort(boot, b, sizeof *boot, cmp_double);
    *lo = dkb_quantile_sorted(boot, b, (1 - confidence) / 2);
    *hi = dkb_quantile_sorted(boot, b, (1 + confidence) / 2);
}

/* The checks every bootstrap shares; false with the error detail set. */
static inline bool bootstrap_args(const char *fn, size_t resamples, double confidence)
{
    if (resamples == 0) {
        dkb_fail(DK_EINVAL, "%s: 0 resamples; the bootstrap needs at least 1 (10000 is usual)", fn);
        return false;
    }
    if (!(confidence > 0 && confidence < 1)) {
        dkb_fail(DK_EINVAL, "%s: confidence %g is not strictly between 0 and 1 (e.g. 0.95)", fn,
                 confidence);
        return false;
    }
    return true;
}

static inline bool values_args(const char *fn, const char *what, const double *v, size_t n,
                               size_t at_least)
{
    if (n < at_least) {
        dkb_fail(DK_EINVAL, "%s: %zu %s; at least %zu are needed", fn, n, what, at_least);
        return false;
    }
    if (v == NULL) {
        dkb_fail(DK_EINVAL, "%s: the %s array is NULL", fn, what);
        return false;
    }
    if (!all_finite(v, n)) {
        dkb_fail(DK_EINVAL, "%s: the %s include a NaN or an infinity", fn, what);
        return false;
    }
    return true;
}

/* The k-th smallest of v[0..n) (0-based), moving v's elements so that
 * those before k are no larger and those after no smaller (Wirth's
 * selection, expected O(n)). */
static inline double select_kth(double *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;
    while (lo < hi) {
        double pivot = v[kk];
        ptrdiff_t i = lo, j = hi;
        do {
            while (v[i] < pivot)
                i++;
            while (pivot < v[j])
                j--;
            if (i <= j) {
                double t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < kk)
            lo = i;
        if (kk < i)
            hi = j;
    }
    return v[kk];
}

/* The median of v[0..n) (n >= 1), moving v's elements. */
static inline double median_inplace(double *v, size_t n)
{
    double med = select_kth(v, n, n / 2);
    if (n % 2 == 0) /* and the largest of the lower half */
        med = (med + select_kth(v, n / 2, n / 2 - 1)) / 2;
    return med;
}

/* The median of one resample of sorted[0..n), drawn as how many times
 * each element is drawn (count, n of them): a walk up the sorted values
 * finds it in about the time the draws take, where a selection among the
 * drawn values took about 6 times as long (10^5 values a side). */
static inline double resample_median(dkb_rng *rng, const double *sorted, size_t n, size_t *count)
{
    memset(count, 0, n * sizeof *count);
    for (size_t i = 0; i < n; i++)
        count[rng_below(rng, n)]++;
    /* The (n/2)-th smallest, 0-based; for an even n, the one before and
     * the mean of the two. */
    size_t k = n % 2 ? n / 2 : n / 2 - 1, seen = 0, j = 0;
    while (seen + count[j] <= k)
        seen += count[j++];
    double med = sorted[j];
    if (n % 2 == 0) {
        while (seen + count[j] <= k + 1)
            seen += count[j++];
        med = (med + sorted[j]) / 2;
    }
    return med;
}

#endif /* DKPERF_COMMON_STATS_INTERNAL_H */
