/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats_change.c - the change of a measure against a baseline (of the
 * means and of the medians) and the ratio of interleaved alternatives
 * (see stats.h and doc/BENCH-STATISTICS.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats_internal.h"

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
static inline void resample_sums(dkb_rng *rng, const double *c, size_t n, double *sum, double *sq)
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
        dkb_fail(DK_EINVAL, "%s: noise threshold %g is not a finite fraction >= 0 (e.g. 0.01)", fn,
                 noise);
        return false;
    }
    if (!(significance > 0 && significance < 1)) {
        dkb_fail(DK_EINVAL, "%s: significance %g is not strictly between 0 and 1 (e.g. 0.05)", fn,
                 significance);
        return false;
    }
    return true;
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
    out->resolution = 0; /* not computed by the bootstrap tests */
    out->verdict = dkb__verdict(out, noise, significance);
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
        dkb_fail(DK_EINVAL,
                 "%s: the baseline mean is %g; a relative change needs a positive "
                 "baseline",
                 fn, m_old);
        return false;
    }
    double *buf = alloc_bootstrap(fn, n_old + n_new, resamples); /* both sides are in memory */
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
    double *buf = alloc_bootstrap(fn, n_old + n_new, resamples); /* both sides are in memory */
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
        dkb_fail(DK_EINVAL,
                 "%s: the baseline median is %g; a relative change needs a "
                 "positive baseline",
                 fn, m_old);
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
                dkb_fail(DK_EINVAL,
                         "%s: %d baseline resamples in a row had a median of 0 or "
                         "less",
                         fn, DKB_MAX_REDRAWS);
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
    case DKB_UNRESOLVED:
        return "unresolved";
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
    double *buf = alloc_bootstrap(fn, n, resamples);
    if (buf == NULL)
        return false;
    size_t *count = malloc(n * sizeof *count); /* n < SIZE_MAX / 8: buf holds n doubles */
    bool ok = false;
    if (count == NULL) {
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
