/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats.c - the statistics of libdkbench (see stats.h). Every formula, and
 * why it is this one, is in doc/BENCH-STATISTICS.md.
 *
 * The bootstraps allocate their buffers once, before resampling, and keep
 * per-resample work to running sums over values centered on the full
 * sample's mean: no allocation and no cancellation inside the loops.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/error.h"
#include "bench/stats.h"

/* Consecutive degenerate resamples (every drawn x equal, a baseline mean
 * of zero) tolerated before giving up; each has probability <= 3/4 when
 * the input itself is valid, so reaching this means a broken generator. */
#define DKB_MAX_REDRAWS 1000

/* The interval of dkb_change_test (the header: 95% unless passed). */
#define DKB_CHANGE_CONFIDENCE 0.95

/* ------------------------------------------------------------------ */
/* The generator: xoshiro256** seeded by splitmix64                    */
/* ------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

void dkb_rng_seed(dkb_rng *r, uint64_t seed)
{
    /* splitmix64 is a bijection of its counter, so at most one of the four
     * words can be zero: the state is never the forbidden all-zero one. */
    uint64_t x = seed;
    for (size_t i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
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

uint64_t dkb_rng_next(dkb_rng *r) { return rng_next(r); }

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

size_t dkb_rng_below(dkb_rng *r, size_t n) { return rng_below(r, n); }

/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

static bool all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

/* The mean as v[0] plus the mean offset from it: exactly v[0] when every
 * value is equal, and no large running sum. */
static double mean_of(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 1; i < n; i++)
        s += v[i] - v[0];
    return v[0] + s / (double)n;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* n doubles, or NULL when the count overflows or memory is short. */
static double *alloc_doubles(const char *fn, size_t n)
{
    double *p = n <= SIZE_MAX / sizeof(double) ? malloc(n * sizeof(double)) : NULL;
    if (p == NULL)
        dkb_fail(DK_ENOMEM, "%s: out of memory for %zu values of its bootstrap", fn, n);
    return p;
}

/* Sort the bootstrap replicates and take the percentile interval. */
static void percentile_ci(double *boot, size_t b, double confidence, double *lo, double *hi)
{
    qsort(boot, b, sizeof *boot, cmp_double);
    *lo = dkb_quantile_sorted(boot, b, (1 - confidence) / 2);
    *hi = dkb_quantile_sorted(boot, b, (1 + confidence) / 2);
}

/* The checks every bootstrap shares; false with the error detail set. */
static bool bootstrap_args(const char *fn, size_t resamples, double confidence)
{
    if (resamples == 0) {
        dkb_fail(DK_EINVAL, "%s: 0 resamples; the bootstrap needs at least 1 (10000 is usual)",
                 fn);
        return false;
    }
    if (!(confidence > 0 && confidence < 1)) {
        dkb_fail(DK_EINVAL, "%s: confidence %g is not strictly between 0 and 1 (e.g. 0.95)", fn,
                 confidence);
        return false;
    }
    return true;
}

static bool values_args(const char *fn, const char *what, const double *v, size_t n,
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

/* ------------------------------------------------------------------ */
/* Quantile                                                            */
/* ------------------------------------------------------------------ */

double dkb_quantile_sorted(const double *sorted, size_t n, double q)
{
    if (sorted == NULL || n == 0 || !(q >= 0 && q <= 1))
        return NAN;
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)h;
    if (lo >= n - 1)
        return sorted[n - 1];
    double frac = h - (double)lo;
    return frac == 0 ? sorted[lo] : sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* ------------------------------------------------------------------ */
/* Linear regression                                                   */
/* ------------------------------------------------------------------ */

static bool pairs_args(const char *fn, const double *x, const double *y, size_t n,
                       size_t at_least)
{
    if (!values_args(fn, "samples", x, n, at_least) || !values_args(fn, "samples", y, n, at_least))
        return false;
    for (size_t i = 1; i < n; i++)
        if (x[i] != x[0])
            return true;
    dkb_fail(DK_EINVAL, "%s: every sample has the same iteration count (%g); a slope needs "
                        "at least two different counts", fn, x[0]);
    return false;
}

bool dkb_ols(const double *x, const double *y, size_t n, dkb_fit *out)
{
    if (out == NULL)
        return false;
    memset(out, 0, sizeof *out);
    if (!pairs_args("dkb_ols", x, y, n, 2))
        return false;
    double mx = mean_of(x, n), my = mean_of(y, n);
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = x[i] - mx, dy = y[i] - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if (!(sxx > 0) || !isfinite(sxx) || !isfinite(sxy) || !isfinite(syy)) {
        dkb_fail(DK_EINVAL, "dkb_ols: the sums of squares are not finite and positive (values "
                            "too large or too close together)");
        return false;
    }
    double slope = sxy / sxx;
    double r2 = syy > 0 ? sxy * sxy / (sxx * syy) : 1; /* constant y: fitted exactly */
    out->slope = slope;
    out->intercept = my - slope * mx;
    out->r2 = r2 > 1 ? 1 : r2;
    return true;
}

bool dkb_slope_ci(const double *x, const double *y, size_t n, size_t resamples, uint64_t seed,
                  double confidence, dkb_interval *out)
{
    static const char fn[] = "dkb_slope_ci";
    if (out == NULL)
        return false;
    memset(out, 0, sizeof *out);
    if (!pairs_args(fn, x, y, n, 3) || !bootstrap_args(fn, resamples, confidence))
        return false;
    dkb_fit fit;
    if (!dkb_ols(x, y, n, &fit))
        return false;
    if (resamples > SIZE_MAX / sizeof(double) - 2 * n) {
        dkb_fail(DK_ENOMEM, "%s: %zu resamples do not fit in memory", fn, resamples);
        return false;
    }
    double *buf = alloc_doubles(fn, 2 * n + resamples);
    if (buf == NULL)
        return false;
    bool ok = false;
    double *xc = buf, *yc = buf + n, *boot = buf + 2 * n;
    /* The slope does not change when x and y are shifted: center them. */
    double mx = mean_of(x, n), my = mean_of(y, n), dn = (double)n;
    for (size_t i = 0; i < n; i++) {
        xc[i] = x[i] - mx;
        yc[i] = y[i] - my;
    }
    dkb_rng rng;
    dkb_rng_seed(&rng, seed);
    size_t redraws = 0;
    for (size_t b = 0; b < resamples;) {
        size_t j = rng_below(&rng, n);
        double x0 = xc[j], sx = x0, sy = yc[j], sxx = x0 * x0, sxy = x0 * yc[j];
        bool varied = false;
        for (size_t i = 1; i < n; i++) {
            j = rng_below(&rng, n);
            double xi = xc[j], yi = yc[j];
            sx += xi;
            sy += yi;
            sxx += xi * xi;
            sxy += xi * yi;
            varied |= xi != x0;
        }
        /* n Sxx - Sx^2 rather than Sxx - Sx^2 / n: exact for exact counts. */
        double d = dn * sxx - sx * sx;
        if (!varied || !(d > 0)) { /* every x drawn equal: no slope; draw again */
            if (++redraws > DKB_MAX_REDRAWS) {
                dkb_fail(DK_EINVAL, "%s: %d resamples in a row had a single iteration count",
                         fn, DKB_MAX_REDRAWS);
                goto out;
            }
            continue;
        }
        redraws = 0;
        boot[b++] = (dn * sxy - sx * sy) / d;
    }
    percentile_ci(boot, resamples, confidence, &out->lo, &out->hi);
    out->point = fit.slope;
    ok = isfinite(out->lo) && isfinite(out->hi);
    if (!ok) {
        dkb_fail(DK_EINVAL, "%s: the resampled slopes are not finite (values too large)", fn);
        memset(out, 0, sizeof *out);
    }
out:
    free(buf);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Robust slope: Theil-Sen with Sen's distribution-free interval        */
/* ------------------------------------------------------------------ */

/* The k-th smallest of v[0..n) (0-based), moving v's elements so that
 * those before k are no larger and those after no smaller (Wirth's
 * selection, expected O(n)). */
static double select_kth(double *v, size_t n, size_t k)
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
static double median_inplace(double *v, size_t n)
{
    double med = select_kth(v, n, n / 2);
    if (n % 2 == 0) /* and the largest of the lower half */
        med = (med + select_kth(v, n / 2, n / 2 - 1)) / 2;
    return med;
}

/* The standard normal quantile (Acklam's rational approximation, relative
 * error below 1.2e-9), for p in (0, 1). */
static double normal_quantile(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    if (p < 0.02425) {
        double q = sqrt(-2 * log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - 0.02425)
        return -normal_quantile(1 - p);
    double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

bool dkb_theil_sen(const double *x, const double *y, size_t n, double confidence,
                   dkb_interval *out, double *intercept)
{
    static const char fn[] = "dkb_theil_sen";
    if (out == NULL)
        return false;
    memset(out, 0, sizeof *out);
    if (intercept != NULL)
        *intercept = 0;
    if (!pairs_args(fn, x, y, n, 3))
        return false;
    if (!(confidence > 0 && confidence < 1)) {
        dkb_fail(DK_EINVAL, "%s: confidence %g is not strictly between 0 and 1 (e.g. 0.95)", fn,
                 confidence);
        return false;
    }
    if (n > 65536) {
        dkb_fail(DK_EINVAL, "%s: %zu samples; its pairwise slopes are counted for at most 65536",
                 fn, n);
        return false;
    }
    size_t pairs = n * (n - 1) / 2;
    double *s = alloc_doubles(fn, pairs > n ? pairs : n);
    if (s == NULL)
        return false;
    /* Pairs with equal x give no slope; ties in x also shrink the variance
     * of Kendall's S: sum over groups of t equal x of t(t-1)(2t+5). */
    size_t m = 0;
    double ties = 0;
    for (size_t i = 0; i < n; i++) {
        size_t same = 0;
        for (size_t j = i + 1; j < n; j++) {
            if (x[j] == x[i]) {
                same++;
                continue;
            }
            s[m++] = (y[j] - y[i]) / (x[j] - x[i]);
        }
        bool first = true; /* count each tie group once, at its first member */
        for (size_t j = 0; j < i && first; j++)
            first = x[j] != x[i];
        if (first && same > 0) {
            double t = (double)(same + 1);
            ties += t * (t - 1) * (2 * t + 5);
        }
    }
    double dn = (double)n;
    double var_s = (dn * (dn - 1) * (2 * dn + 5) - ties) / 18;
    double cz = normal_quantile((1 + confidence) / 2) * sqrt(var_s);
    double dm = (double)m;
    /* Ranks (1-based) of the limits: (m - C)/2 and (m + C)/2 + 1, rounded
     * outwards so the interval is never shorter than the rule says. */
    double rlo = floor((dm - cz) / 2), rhi = ceil((dm + cz) / 2 + 1);
    size_t klo = rlo < 1 ? 0 : (size_t)rlo - 1;
    size_t khi = rhi > dm ? m - 1 : (size_t)rhi - 1;
    double med = median_inplace(s, m);
    out->point = med;
    out->lo = select_kth(s, m, klo);
    out->hi = select_kth(s, m, khi);
    if (intercept != NULL) { /* the median of y - slope x */
        for (size_t i = 0; i < n; i++)
            s[i] = y[i] - med * x[i];
        *intercept = median_inplace(s, n);
    }
    free(s);
    bool ok = isfinite(out->point) && isfinite(out->lo) && isfinite(out->hi);
    if (!ok) {
        dkb_fail(DK_EINVAL, "%s: the pairwise slopes are not finite (values too large)", fn);
        memset(out, 0, sizeof *out);
    }
    return ok;
}

/* ------------------------------------------------------------------ */
/* Summary                                                             */
/* ------------------------------------------------------------------ */

bool dkb_summarize(const double *v, size_t n, size_t resamples, uint64_t seed, double confidence,
                   dkb_summary *out)
{
    static const char fn[] = "dkb_summarize";
    if (out == NULL)
        return false;
    memset(out, 0, sizeof *out);
    if (!values_args(fn, "values", v, n, 2) || !bootstrap_args(fn, resamples, confidence))
        return false;
    if (resamples > SIZE_MAX / sizeof(double) - 2 * n) {
        dkb_fail(DK_ENOMEM, "%s: %zu resamples do not fit in memory", fn, resamples);
        return false;
    }
    double *buf = alloc_doubles(fn, 2 * n + resamples);
    if (buf == NULL)
        return false;
    double *sorted = buf, *dev = buf + n, *boot = buf + 2 * n;
    memcpy(sorted, v, n * sizeof *v);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    double mean = mean_of(v, n), median = dkb_quantile_sorted(sorted, n, 0.5);
    for (size_t i = 0; i < n; i++)
        dev[i] = fabs(v[i] - median);
    qsort(dev, n, sizeof *dev, cmp_double);
    double mad = dkb_quantile_sorted(dev, n, 0.5);

    /* Deviations from the mean: the variance, then the bootstrap. */
    double ss = 0;
    for (size_t i = 0; i < n; i++) {
        dev[i] = v[i] - mean;
        ss += dev[i] * dev[i];
    }
    dkb_rng rng;
    dkb_rng_seed(&rng, seed);
    double inv_n = 1 / (double)n;
    for (size_t b = 0; b < resamples; b++) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += dev[rng_below(&rng, n)];
        boot[b] = mean + s * inv_n;
    }
    percentile_ci(boot, resamples, confidence, &out->mean_ci.lo, &out->mean_ci.hi);
    out->mean_ci.point = mean;
    out->mean = mean;
    out->median = median;
    out->mad = mad;
    out->stddev = sqrt(ss / (double)(n - 1));
    out->min = sorted[0];
    out->max = sorted[n - 1];
    free(buf);
    if (!isfinite(out->stddev) || !isfinite(out->mean_ci.lo) || !isfinite(out->mean_ci.hi)) {
        memset(out, 0, sizeof *out);
        dkb_fail(DK_EINVAL, "%s: the spread is not finite (values too large)", fn);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Tukey's fences                                                      */
/* ------------------------------------------------------------------ */

bool dkb_tukey(const double *v, size_t n, dkb_outliers *out, unsigned char *class_of)
{
    static const char fn[] = "dkb_tukey";
    if (out == NULL)
        return false;
    memset(out, 0, sizeof *out);
    if (!values_args(fn, "values", v, n, 1))
        return false;
    double *sorted = alloc_doubles(fn, n);
    if (sorted == NULL)
        return false;
    memcpy(sorted, v, n * sizeof *v);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    double q1 = dkb_quantile_sorted(sorted, n, 0.25), q3 = dkb_quantile_sorted(sorted, n, 0.75);
    free(sorted);
    double iqr = q3 - q1;
    dkb_outliers o = {
        .fence_low_severe = q1 - 3 * iqr,
        .fence_low_mild = q1 - 1.5 * iqr,
        .fence_high_mild = q3 + 1.5 * iqr,
        .fence_high_severe = q3 + 3 * iqr,
    };
    if (!isfinite(o.fence_low_severe) || !isfinite(o.fence_high_severe)) {
        dkb_fail(DK_EINVAL, "%s: the fences are not finite (values too large)", fn);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = DKB_OUTLIER_NONE;
        if (v[i] < o.fence_low_severe) {
            c = DKB_OUTLIER_LOW_SEVERE;
            o.low_severe++;
        } else if (v[i] < o.fence_low_mild) {
            c = DKB_OUTLIER_LOW_MILD;
            o.low_mild++;
        } else if (v[i] > o.fence_high_severe) {
            c = DKB_OUTLIER_HIGH_SEVERE;
            o.high_severe++;
        } else if (v[i] > o.fence_high_mild) {
            c = DKB_OUTLIER_HIGH_MILD;
            o.high_mild++;
        }
        if (class_of != NULL)
            class_of[i] = c;
    }
    *out = o;
    return true;
}

/* ------------------------------------------------------------------ */
/* Change against a baseline                                           */
/* ------------------------------------------------------------------ */

/* Welch's t of a difference d with squared standard error se2. With no
 * spread at all, equal means are no evidence (0) and different ones are
 * certain (+-inf). */
static double welch_t(double d, double se2)
{
    if (se2 > 0)
        return d / sqrt(se2);
    return d == 0 ? 0 : d > 0 ? INFINITY : -INFINITY;
}

/* One resample of c[0..n) (values centered on their mean): the sum and the
 * sum of squares. */
static inline void resample_sums(dkb_rng *rng, const double *c, size_t n, double *sum,
                                 double *sq)
{
    double s = 0, q = 0;
    for (size_t i = 0; i < n; i++) {
        double x = c[rng_below(rng, n)];
        s += x;
        q += x * x;
    }
    *sum = s;
    *sq = q;
}

static double variance_of_sums(double s, double q, size_t n)
{
    double v = (q - s * s / (double)n) / (double)(n - 1);
    return v > 0 ? v : 0;
}

/* The checks both change tests share, with at least at_least values on
 * each side; clears *out. */
static bool change_args(const char *fn, const double *old_v, size_t n_old, const double *new_v,
                        size_t n_new, size_t at_least, double noise, double significance,
                        size_t resamples, dkb_change *out)
{
    if (out == NULL)
        return false;
    memset(out, 0, sizeof *out);
    if (!values_args(fn, "baseline values", old_v, n_old, at_least) ||
        !values_args(fn, "new values", new_v, n_new, at_least) ||
        !bootstrap_args(fn, resamples, DKB_CHANGE_CONFIDENCE))
        return false;
    if (!(noise >= 0) || !isfinite(noise)) {
        dkb_fail(DK_EINVAL, "%s: noise threshold %g is not a finite fraction >= 0 (e.g. 0.01)",
                 fn, noise);
        return false;
    }
    if (!(significance > 0 && significance < 1)) {
        dkb_fail(DK_EINVAL, "%s: significance %g is not strictly between 0 and 1 (e.g. 0.05)",
                 fn, significance);
        return false;
    }
    return true;
}

/* Room for both sides' values and the replicates (n_old + n_new +
 * resamples doubles), or NULL with the error set. */
static double *change_buffer(const char *fn, size_t n_old, size_t n_new, size_t resamples)
{
    if (n_old > SIZE_MAX / sizeof(double) - n_new ||
        resamples > SIZE_MAX / sizeof(double) - n_old - n_new) {
        dkb_fail(DK_ENOMEM, "%s: %zu resamples do not fit in memory", fn, resamples);
        return NULL;
    }
    return alloc_doubles(fn, n_old + n_new + resamples);
}

/* The verdict of a change whose interval and p-value are set (§7 of
 * doc/BENCH-STATISTICS.md); false, *out cleared, when they are not finite. */
static bool change_verdict(const char *fn, double noise, double significance, dkb_change *out)
{
    if (!isfinite(out->rel.point) || !isfinite(out->rel.lo) || !isfinite(out->rel.hi)) {
        memset(out, 0, sizeof *out);
        dkb_fail(DK_EINVAL, "%s: the relative change is not finite (values too large)", fn);
        return false;
    }
    if (out->p_value >= significance)
        out->verdict = DKB_NO_CHANGE;
    else if (out->rel.hi < -noise)
        out->verdict = DKB_IMPROVED;
    else if (out->rel.lo > noise)
        out->verdict = DKB_REGRESSED;
    else
        out->verdict = DKB_WITHIN_NOISE;
    return true;
}

bool dkb_change_test(const double *old_v, size_t n_old, const double *new_v, size_t n_new,
                     double noise, double significance, size_t resamples, uint64_t seed,
                     dkb_change *out)
{
    static const char fn[] = "dkb_change_test";
    if (!change_args(fn, old_v, n_old, new_v, n_new, 2, noise, significance, resamples, out))
        return false;
    double m_old = mean_of(old_v, n_old), m_new = mean_of(new_v, n_new);
    if (!(m_old > 0)) {
        dkb_fail(DK_EINVAL, "%s: the baseline mean is %g; a relative change needs a positive "
                            "baseline", fn, m_old);
        return false;
    }
    double *buf = change_buffer(fn, n_old, n_new, resamples);
    if (buf == NULL)
        return false;
    bool ok = false;
    double *co = buf, *cn = buf + n_old, *rel = buf + n_old + n_new;
    double qo = 0, qn = 0;
    for (size_t i = 0; i < n_old; i++) {
        co[i] = old_v[i] - m_old;
        qo += co[i] * co[i];
    }
    for (size_t i = 0; i < n_new; i++) {
        cn[i] = new_v[i] - m_new;
        qn += cn[i] * cn[i];
    }
    double t_obs = welch_t(m_new - m_old, qo / (double)(n_old - 1) / (double)n_old +
                                              qn / (double)(n_new - 1) / (double)n_new);
    double abs_t = fabs(t_obs);

    dkb_rng rng;
    dkb_rng_seed(&rng, seed);
    size_t hits = 0, redraws = 0;
    for (size_t b = 0; b < resamples;) {
        double so, sqo, sn, sqn;
        resample_sums(&rng, co, n_old, &so, &sqo);
        double mo = m_old + so / (double)n_old;
        if (!(mo > 0)) { /* a baseline resample of zeros: no relative change */
            if (++redraws > DKB_MAX_REDRAWS) {
                dkb_fail(DK_EINVAL, "%s: %d baseline resamples in a row had a mean of 0", fn,
                         DKB_MAX_REDRAWS);
                goto out;
            }
            continue;
        }
        redraws = 0;
        resample_sums(&rng, cn, n_new, &sn, &sqn);
        rel[b++] = (m_new + sn / (double)n_new) / mo - 1;
        /* The same draws from both samples shifted to a common mean: the
         * difference of the means is that of the offsets alone. */
        double t = welch_t(sn / (double)n_new - so / (double)n_old,
                           variance_of_sums(so, sqo, n_old) / (double)n_old +
                               variance_of_sums(sn, sqn, n_new) / (double)n_new);
        hits += fabs(t) >= abs_t;
    }
    percentile_ci(rel, resamples, DKB_CHANGE_CONFIDENCE, &out->rel.lo, &out->rel.hi);
    out->rel.point = m_new / m_old - 1;
    out->p_value = (double)(hits + 1) / ((double)resamples + 1);
    ok = change_verdict(fn, noise, significance, out);
out:
    free(buf);
    return ok;
}

/* The median of one resample of sorted[0..n), drawn as how many times
 * each element is drawn (count, n of them): a walk up the sorted values
 * finds it in about the time the draws take, where a selection among the
 * drawn values took about 6 times as long (10^5 values a side). */
static double resample_median(dkb_rng *rng, const double *sorted, size_t n, size_t *count)
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

bool dkb_median_ci(const double *v, size_t n, size_t resamples, uint64_t seed, double confidence,
                   dkb_interval *out)
{
    static const char fn[] = "dkb_median_ci";
    memset(out, 0, sizeof *out);
    if (v == NULL || n < 2) {
        dkb_fail(DK_EINVAL, "%s: %zu values; the interval needs at least 2", fn, n);
        return false;
    }
    if (!bootstrap_args(fn, resamples, confidence))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) {
            dkb_fail(DK_EINVAL, "%s: value %zu is not finite", fn, i);
            return false;
        }
    if (resamples > SIZE_MAX / sizeof(double) - n) {
        dkb_fail(DK_ENOMEM, "%s: %zu values and %zu resamples do not fit in memory", fn, n,
                 resamples);
        return false;
    }
    double *sorted = malloc((n + resamples) * sizeof *sorted);
    size_t *count = malloc(n * sizeof *count);
    if (sorted == NULL || count == NULL) {
        dkb_fail(DK_ENOMEM, "%s: out of memory for %zu values", fn, n);
        free(sorted);
        free(count);
        return false;
    }
    double *boot = sorted + n;
    memcpy(sorted, v, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    dkb_rng rng;
    dkb_rng_seed(&rng, seed);
    for (size_t b = 0; b < resamples; b++)
        boot[b] = resample_median(&rng, sorted, n, count);
    out->point = dkb_quantile_sorted(sorted, n, 0.5);
    percentile_ci(boot, resamples, confidence, &out->lo, &out->hi);
    free(sorted);
    free(count);
    return true;
}

bool dkb_change_test_median(const double *old_v, size_t n_old, const double *new_v, size_t n_new,
                            double noise, double significance, size_t resamples, uint64_t seed,
                            dkb_change *out)
{
    static const char fn[] = "dkb_change_test_median";
    /* The bootstrap of a median of fewer than 5 values is too narrow: with
     * 2 on a side (a median that is their mean, drawn as one of 3 values)
     * a third of tests of equal medians fell below 0.05, with 3 or 4
     * beside 50 about a tenth. */
    if (!change_args(fn, old_v, n_old, new_v, n_new, DKB_MEDIAN_CHANGE_MIN, noise, significance,
                     resamples, out))
        return false;
    double *buf = change_buffer(fn, n_old, n_new, resamples);
    if (buf == NULL)
        return false;
    size_t n_max = n_old > n_new ? n_old : n_new;
    size_t *count = malloc(n_max * sizeof *count); /* n_max * 8 fits: change_buffer checked */
    if (count == NULL) {
        dkb_fail(DK_ENOMEM, "%s: out of memory for the counts of %zu values", fn, n_max);
        free(buf);
        return false;
    }
    bool ok = false;
    double *co = buf, *cn = co + n_old, *rel = cn + n_new;
    memcpy(co, old_v, n_old * sizeof *co);
    memcpy(cn, new_v, n_new * sizeof *cn);
    double m_old = median_inplace(co, n_old), m_new = median_inplace(cn, n_new);
    if (!(m_old > 0)) {
        dkb_fail(DK_EINVAL, "%s: the baseline median is %g; a relative change needs a "
                            "positive baseline", fn, m_old);
        goto out;
    }
    /* Each side centred on its own median: the null of equal medians,
     * spreads as they are. */
    for (size_t i = 0; i < n_old; i++)
        co[i] -= m_old;
    for (size_t i = 0; i < n_new; i++)
        cn[i] -= m_new;
    qsort(co, n_old, sizeof *co, cmp_double);
    qsort(cn, n_new, sizeof *cn, cmp_double);
    double d_obs = fabs(m_new - m_old);
    dkb_rng rng;
    dkb_rng_seed(&rng, seed);
    size_t hits = 0, redraws = 0;
    for (size_t b = 0; b < resamples;) {
        double so = resample_median(&rng, co, n_old, count);
        if (!(m_old + so > 0)) {
            if (++redraws > DKB_MAX_REDRAWS) {
                dkb_fail(DK_EINVAL, "%s: %d baseline resamples in a row had a median of 0 or "
                                    "less", fn, DKB_MAX_REDRAWS);
                goto out;
            }
            continue;
        }
        redraws = 0;
        double sn = resample_median(&rng, cn, n_new, count);
        rel[b++] = (m_new + sn) / (m_old + so) - 1;
        /* The same draws shifted to a common median: their difference is
         * that of the offsets alone. */
        hits += fabs(sn - so) >= d_obs;
    }
    percentile_ci(rel, resamples, DKB_CHANGE_CONFIDENCE, &out->rel.lo, &out->rel.hi);
    out->rel.point = m_new / m_old - 1;
    out->p_value = (double)(hits + 1) / ((double)resamples + 1);
    ok = change_verdict(fn, noise, significance, out);
out:
    free(buf);
    free(count);
    return ok;
}

const char *dkb_verdict_name(dkb_verdict v)
{
    switch (v) {
    case DKB_NO_CHANGE:
        return "no change";
    case DKB_WITHIN_NOISE:
        return "within noise";
    case DKB_IMPROVED:
        return "improved";
    case DKB_REGRESSED:
        return "regressed";
    }
    return "unknown verdict";
}

/* ------------------------------------------------------------------ */
/* Interleaved ratio                                                   */
/* ------------------------------------------------------------------ */

bool dkb_ratio(const double *a, const double *b, size_t n, size_t resamples, uint64_t seed,
               double confidence, dkb_interval *out)
{
    static const char fn[] = "dkb_ratio";
    if (out == NULL)
        return false;
    memset(out, 0, sizeof *out);
    if (!values_args(fn, "pairs", a, n, 2) || !values_args(fn, "pairs", b, n, 2) ||
        !bootstrap_args(fn, resamples, confidence))
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!(a[i] > 0) || !(b[i] > 0)) {
            dkb_fail(DK_EINVAL, "%s: pair %zu is (%g, %g); a ratio needs positive values", fn, i,
                     a[i], b[i]);
            return false;
        }
    }
    if (resamples > SIZE_MAX / sizeof(double) - n) {
        dkb_fail(DK_ENOMEM, "%s: %zu resamples do not fit in memory", fn, resamples);
        return false;
    }
    double *buf = alloc_doubles(fn, n + resamples);
    size_t *count = malloc(n * sizeof *count); /* n < SIZE_MAX / 8: buf holds n doubles */
    bool ok = false;
    if (buf == NULL || count == NULL) {
        dkb_fail(DK_ENOMEM, "%s: out of memory for the bootstrap of %zu pairs", fn, n);
        goto out;
    }
    double *lr = buf, *boot = buf + n;
    for (size_t i = 0; i < n; i++)
        lr[i] = log(b[i]) - log(a[i]);
    qsort(lr, n, sizeof *lr, cmp_double);
    double median = dkb_quantile_sorted(lr, n, 0.5);

    /* The median of a resample of sorted values is the value at the median
     * of the drawn indices: count the draws, walk to the middle ones. */
    size_t k1 = (n - 1) / 2, k2 = n / 2;
    dkb_rng rng;
    dkb_rng_seed(&rng, seed);
    for (size_t r = 0; r < resamples; r++) {
        memset(count, 0, n * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[rng_below(&rng, n)]++;
        size_t cum = 0, i = 0;
        while ((cum += count[i]) <= k1)
            i++;
        size_t i1 = i;
        while (cum <= k2)
            cum += count[++i];
        boot[r] = i == i1 ? lr[i1] : 0.5 * (lr[i1] + lr[i]);
    }
    double lo, hi;
    percentile_ci(boot, resamples, confidence, &lo, &hi);
    out->point = exp(median);
    out->lo = exp(lo);
    out->hi = exp(hi);
    ok = isfinite(out->point) && isfinite(out->lo) && isfinite(out->hi) && out->lo > 0;
    if (!ok) {
        memset(out, 0, sizeof *out);
        dkb_fail(DK_EINVAL, "%s: the ratio is out of the range of a double", fn);
    }
out:
    free(count);
    free(buf);
    return ok;
}
