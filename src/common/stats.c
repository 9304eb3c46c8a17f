/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats.c - the statistics of libdkbench and the tools (see stats.h): the
 * generator, quantiles, the slopes (OLS with a bootstrap interval,
 * Theil-Sen), the summary and Tukey's fences; the change tests and the
 * ratio are in stats_change.c. Every formula, and why it is this one, is in
 * doc/BENCH-STATISTICS.md.
 *
 * The bootstraps allocate their buffers once, before resampling, and keep
 * per-resample work to running sums over values centered on the full
 * sample's mean: no allocation and no cancellation inside the loops.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats_internal.h"

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

uint64_t dkb_rng_next(dkb_rng *r) { return rng_next(r); }

size_t dkb_rng_below(dkb_rng *r, size_t n) { return rng_below(r, n); }

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

static bool pairs_args(const char *fn, const double *x, const double *y, size_t n, size_t at_least)
{
    if (!values_args(fn, "samples", x, n, at_least) || !values_args(fn, "samples", y, n, at_least))
        return false;
    for (size_t i = 1; i < n; i++)
        if (x[i] != x[0])
            return true;
    dkb_fail(DK_EINVAL,
             "%s: every sample has the same iteration count (%g); a slope needs "
             "at least two different counts",
             fn, x[0]);
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
    double *buf = alloc_bootstrap(fn, 2 * n, resamples); /* x and y are 2n doubles */
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
                dkb_fail(DK_EINVAL, "%s: %d resamples in a row had a single iteration count", fn,
                         DKB_MAX_REDRAWS);
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
                               4.374664141464968e+00,  2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                               3.754408661907416e+00};
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

bool dkb_theil_sen(const double *x, const double *y, size_t n, double confidence, dkb_interval *out,
                   double *intercept)
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
    double *buf = alloc_bootstrap(fn, 2 * n, resamples); /* sorted, deviations */
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
    double *sorted = alloc_bootstrap(fn, n, resamples);
    if (sorted == NULL)
        return false;
    size_t *count = malloc(n * sizeof *count);
    if (count == NULL) {
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
