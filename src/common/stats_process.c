/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stats_process.c - Student's t distribution and the tests whose unit is a
 * process: the summary of n processes' estimates and the change of their
 * means, unpaired (Welch) and paired (see stats.h and
 * doc/BENCH-STATISTICS.md). Closed forms, no resampling.
 */
#include <math.h>
#include <string.h>

#include "common/stats_internal.h"

/* ------------------------------------------------------------------ */
/* Student's t                                                         */
/* ------------------------------------------------------------------ */

/* ln(1 + x) without losing x when it is tiny (Goldberg's correction of
 * log(1 + x) by the rounding of 1 + x): log1p is not among the symbols
 * the macOS build may import. */
static double log1p_of(double x)
{
    double u = 1 + x;
    if (u == 1)
        return x;
    return log(u) * (x / (u - 1));
}

/* ln Gamma(a + 1/2) - ln Gamma(a), a > 0: raised by the recurrence
 * Gamma(z + 1) = z Gamma(z) to a >= 30, where Stirling's series of the
 * two (to z^-7, next term below 1e-17) is written as one difference, so
 * that no two large logarithms cancel (lgamma(5e6) is 7e7: its rounding
 * alone would cost 1e-8 of a t probability at df 1e7). */
static double lgamma_half_step(double a)
{
    double ratio = 1; /* prod (a + j) / (a + j + 1/2) */
    while (a < 30) {
        ratio *= a / (a + 0.5);
        a += 1;
    }
    double b = a + 0.5;
    /* (z - 1/2) ln z - z at b and at a: a ln(1 + 1/(2a)) + ln(a)/2 - 1/2. */
    double d = a * log1p_of(0.5 / a) + 0.5 * log(a) - 0.5;
    double ia = 1 / a, ib = 1 / b, ia2 = ia * ia, ib2 = ib * ib;
    d += (ib - ia) / 12 - (ib * ib2 - ia * ia2) / 360 + (ib * ib2 * ib2 - ia * ia2 * ia2) / 1260 -
         (ib * ib2 * ib2 * ib2 - ia * ia2 * ia2 * ia2) / 1680;
    return d + log(ratio);
}

/* ln B(a, 1/2) = ln Gamma(a) + ln sqrt(pi) - ln Gamma(a + 1/2). */
static double log_beta_half(double a)
{
    return 0.57236494292470008707 - lgamma_half_step(a); /* ln sqrt(pi) */
}

/* The continued fraction of I_x(a, b) (x^a y^b / (a B(a, b)) times it),
 * by the modified Lentz method; it converges fast for x < (a + 1) / (a +
 * b + 2). */
static double beta_fraction(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (fabs(d) < tiny)
        d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 1000000; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + aa * d;
        c = 1 + aa / c;
        if (fabs(d) < tiny)
            d = tiny;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + aa * d;
        c = 1 + aa / c;
        if (fabs(d) < tiny)
            d = tiny;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-16)
            break;
    }
    return h;
}

/* P(|T| > |t|) with df degrees of freedom, *inner set to P(|T| <= |t|);
 * each is computed directly where it is the small one, so neither loses
 * digits to 1 - the other. That is I_x(df/2, 1/2) with x = df / (df +
 * t^2), its complement I_y(1/2, df/2) with y = t^2 / (df + t^2). */
static double t_tails(double t, double df, double *inner)
{
    double a = df / 2, t2 = t * t;
    if (t2 == 0) {
        *inner = 0;
        return 1;
    }
    if (isinf(t)) {
        *inner = 1;
        return 0;
    }
    double r = t2 / df; /* y / x */
    double x = 1 / (1 + r), y = r / (1 + r);
    double ln_x = -log1p_of(r), ln_y = log(r) + ln_x;
    if (isinf(r)) { /* t^2 / df beyond a double: 1 / r is lost beside 1 */
        ln_x = log(df) - 2 * log(fabs(t));
        ln_y = 0;
        x = exp(ln_x);
        y = 1;
    }
    double lb = log_beta_half(a);
    if (x < (a + 1) / (a + 2.5)) {
        double outer = exp(a * ln_x + 0.5 * ln_y - lb) / a * beta_fraction(a, 0.5, x);
        *inner = 1 - outer;
        return outer;
    }
    double in = exp(0.5 * ln_y + a * ln_x - lb) / 0.5 * beta_fraction(0.5, a, y);
    *inner = in;
    return 1 - in;
}

static bool t_args_bad(double v, double df) { return isnan(v) || !(df > 0); }

double dkb_t_cdf(double t, double df)
{
    if (t_args_bad(t, df))
        return NAN;
    double inner, outer = t_tails(t, df, &inner);
    return t > 0 ? 0.5 + inner / 2 : outer / 2;
}

/* The density of |T| at u >= 0 divided by 2: (1 + u^2/df)^(-(df+1)/2) /
 * (sqrt(df) B(df/2, 1/2)). */
static double t_density(double u, double df)
{
    return exp(-(df + 1) / 2 * log1p_of(u * u / df) - log_beta_half(df / 2)) / sqrt(df);
}

double dkb_t_quantile(double p, double df)
{
    if (t_args_bad(p, df) || !(p > 0 && p < 1))
        return NAN;
    if (p == 0.5)
        return 0;
    /* The lower tail q = P(T < -u) to reach: 1 - p is exact for p >= 1/2. */
    double q = p < 0.5 ? p : 1 - p, ln_q = log(q);
    double lo = 0, hi = 1, inner;
    while (t_tails(hi, df, &inner) / 2 > q) {
        lo = hi;
        hi *= 2;
        if (isinf(hi))
            return p < 0.5 ? -HUGE_VAL : HUGE_VAL; /* beyond a double */
    }
    /* Newton on ln P(T < -u) - ln q, which is close to linear even far in
     * the tail, kept inside the bracket [lo, hi] by bisection. */
    double u = hi;
    for (int i = 0; i < 400; i++) {
        double tail = t_tails(u, df, &inner) / 2;
        double g = log(tail) - ln_q;
        if (g > 0)
            lo = u;
        else
            hi = u;
        if (g == 0 || hi - lo <= 1e-15 * hi)
            break;
        double next = u + g * tail / t_density(u, df); /* g' = -density / tail */
        if (!(next > lo && next < hi))
            next = lo + (hi - lo) / 2;
        if (fabs(next - u) <= 1e-15 * u) {
            u = next;
            break;
        }
        u = next;
    }
    return p < 0.5 ? -u : u;
}

/* ------------------------------------------------------------------ */
/* Processes as the unit of replication                                */
/* ------------------------------------------------------------------ */

/* The half-width of a 95% interval of a normal estimate, in standard
 * errors: half / 1.959964 is the standard error it stands for. */
#define Z95 1.959964

/* The sum of squared deviations of v[0..n) from its mean m. */
static double squares_about(const double *v, size_t n, double m)
{
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - m) * (v[i] - m);
    return ss;
}

/* The sum of squared deviations of v[0..n) from its mean m, relative to
 * m (> 0). */
static double rel_squares(const double *v, size_t n, double m)
{
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - m) / m * ((v[i] - m) / m);
    return ss;
}

/* Yuen's 20% trimming (Wilcox, Introduction to Robust Estimation and
 * Hypothesis Testing, §4.4 and §5.3): g = floor(0.2 n) values cut from each
 * end of the sorted values, the mean of the h = n - 2g left, and the
 * square of its standard error, d = (n - 1) s_w^2 / (h (h - 1)), with s_w^2
 * the winsorized variance (the g lowest set to the next, the g highest to
 * the one before, divisor n - 1). With fewer than 5 values nothing is cut:
 * the mean and s^2 / n. */
typedef struct trimmed {
    double mean, d; /* the trimmed mean and its squared standard error */
    size_t h;       /* values kept: h - 1 degrees of freedom */
} trimmed;

/* Sorts v in place. Nothing is cut either when the kept values are all
 * equal while the others are not: their winsorized variance, 0, would
 * call a spread of values exact (p = 0, an interval of width 0). */
static void trim(double *v, size_t n, trimmed *t)
{
    qsort(v, n, sizeof *v, cmp_double);
    size_t g = (size_t)floor(0.2 * (double)n);
    if (v[g] == v[n - g - 1] && v[0] != v[n - 1])
        g = 0;
    size_t h = n - 2 * g;
    /* Sums about the median, so that equal values give exactly 0. */
    double c = v[n / 2], sum = 0, wsum = 0, ss = 0;
    for (size_t i = g; i < n - g; i++)
        sum += v[i] - c;
    for (size_t i = 0; i < n; i++)
        wsum += (i < g ? v[g] : i >= n - g ? v[n - g - 1] : v[i]) - c;
    double wmean = wsum / (double)n;
    for (size_t i = 0; i < n; i++) {
        double e = (i < g ? v[g] : i >= n - g ? v[n - g - 1] : v[i]) - c - wmean;
        ss += e * e;
    }
    t->mean = c + sum / (double)h;
    t->d = ss / (double)h / (double)(h - 1);
    t->h = h;
}

static bool level_arg(const char *fn, const char *what, double level, const char *example)
{
    if (level > 0 && level < 1)
        return true;
    dkb_fail(DK_EINVAL, "%s: %s %g is not strictly between 0 and 1 (e.g. %s)", fn, what, level,
             example);
    return false;
}

bool dkb_process_summarize(const double *est, const double *half, size_t n, double confidence,
                           dkb_process_summary *out)
{
    static const char fn[] = "dkb_process_summarize";
    if (out == NULL)
        return false;
    memset(out, 0, sizeof *out);
    if (!values_args(fn, "estimates", est, n, 2) ||
        !level_arg(fn, "confidence", confidence, "0.95"))
        return false;
    double within = 0;
    if (half != NULL) {
        for (size_t j = 0; j < n; j++) {
            if (!(half[j] >= 0) || !isfinite(half[j])) {
                dkb_fail(DK_EINVAL,
                         "%s: the half-width %g of process %zu is not a finite value >= 0", fn,
                         half[j], j);
                return false;
            }
            double se = half[j] / Z95;
            within += se * se;
        }
        within /= (double)n;
    }
    double mean = mean_of(est, n), var = squares_about(est, n, mean) / (double)(n - 1);
    double s = sqrt(var),
           w = dkb_t_quantile(1 - (1 - confidence) / 2, (double)(n - 1)) * s / sqrt((double)n);
    if (!isfinite(var) || !isfinite(within) || !isfinite(mean - w) || !isfinite(mean + w)) {
        dkb_fail(DK_EINVAL, "%s: the spread of the estimates is not finite (values too large)", fn);
        return false;
    }
    out->n = n;
    out->ci = (dkb_interval){mean, mean - w, mean + w};
    out->stddev = s;
    out->within_var = within;
    out->between_share = var > 0 ? (var > within ? (var - within) / var : 0) : 0;
    /* What Welch's test of two such runs would resolve (its degrees of
     * freedom with equal spreads and counts). */
    double se2 = sqrt(2.0) * s / sqrt((double)n) / fabs(mean);
    out->resolution =
        mean != 0 ? exp(dkb_t_quantile(1 - (1 - confidence) / 2, 2.0 * (double)(n - 1)) * se2) - 1
                  : NAN;
    return true;
}

/* The checks both process tests share; clears *out. */
static bool process_change_args(const char *fn, const double *old_est, size_t n_old,
                                const double *new_est, size_t n_new, double noise,
                                double significance, dkb_change *out)
{
    if (out == NULL)
        return false;
    memset(out, 0, sizeof *out);
    if (!values_args(fn, "baseline estimates", old_est, n_old, 2) ||
        !values_args(fn, "new estimates", new_est, n_new, 2) ||
        !level_arg(fn, "significance", significance, "0.05"))
        return false;
    if (!(noise >= 0) || !isfinite(noise)) {
        dkb_fail(DK_EINVAL, "%s: noise threshold %g is not a finite fraction >= 0 (e.g. 0.01)", fn,
                 noise);
        return false;
    }
    return true;
}

/* The answer of a t test of a difference d of logarithms with standard
 * error se and df degrees of freedom: the interval exp(d +- t se) - 1, the
 * two-sided p-value, the resolution and the verdict (§7's table, with
 * DKB_UNRESOLVED when an insignificant test could not have seen a change
 * of the noise threshold). point is the relative change itself. */
static bool process_verdict(const char *fn, double point, double d, double se, double df,
                            double noise, double significance, dkb_change *out)
{
    double half = 0;
    if (!(se >= 0) || !isfinite(se) || !isfinite(d)) {
        dkb_fail(DK_EINVAL, "%s: the spread of the estimates is not finite (values too large)", fn);
        return false;
    }
    if (se > 0) {
        half = dkb_t_quantile(1 - significance / 2, df) * se;
        out->p_value = 2 * dkb_t_cdf(-fabs(d / se), df);
    } else { /* no spread: the values are exact */
        out->p_value = d == 0 ? 1 : 0;
    }
    out->rel = (dkb_interval){point, exp(d - half) - 1, exp(d + half) - 1};
    out->resolution = exp(half) - 1;
    if (!isfinite(out->rel.point) || !isfinite(out->rel.lo) || !isfinite(out->rel.hi) ||
        !isfinite(out->resolution) || isnan(out->p_value)) {
        memset(out, 0, sizeof *out);
        dkb_fail(DK_EINVAL, "%s: the relative change is not finite (values too large)", fn);
        return false;
    }
    out->verdict = dkb__verdict(out, noise, significance);
    return true;
}

bool dkb_change_processes(const double *old_est, size_t n_old, const double *new_est, size_t n_new,
                          double noise, double significance, dkb_change *out)
{
    static const char fn[] = "dkb_change_processes";
    if (!process_change_args(fn, old_est, n_old, new_est, n_new, noise, significance, out))
        return false;
    double m_old = mean_of(old_est, n_old), m_new = mean_of(new_est, n_new);
    if (!(m_old > 0) || !(m_new > 0)) {
        dkb_fail(DK_EINVAL,
                 "%s: the means are %g (baseline) and %g (new); a change of logarithms needs "
                 "both positive",
                 fn, m_old, m_new);
        return false;
    }
    /* Each mean's variance on the log scale (delta method: Var ln m =
     * Var m / m^2), of the deviations relative to the mean, which no
     * square of a large value overflows. */
    double v_old = rel_squares(old_est, n_old, m_old) / (double)(n_old - 1) / (double)n_old;
    double v_new = rel_squares(new_est, n_new, m_new) / (double)(n_new - 1) / (double)n_new;
    double se2 = v_old + v_new, df = 1;
    if (se2 > 0) { /* Welch-Satterthwaite, as shares so no square underflows */
        double f_old = v_old / se2, f_new = v_new / se2;
        df = 1 / (f_old * f_old / (double)(n_old - 1) + f_new * f_new / (double)(n_new - 1));
    }
    return process_verdict(fn, m_new / m_old - 1, log(m_new) - log(m_old), sqrt(se2), df, noise,
                           significance, out);
}

bool dkb_change_paired(const double *old_est, const double *new_est, size_t n, double noise,
                       double significance, dkb_change *out)
{
    static const char fn[] = "dkb_change_paired";
    if (!process_change_args(fn, old_est, n, new_est, n, noise, significance, out))
        return false;
    for (size_t k = 0; k < n; k++) {
        if (!(old_est[k] > 0) || !(new_est[k] > 0)) {
            dkb_fail(DK_EINVAL, "%s: pair %zu is (%g, %g); a ratio needs positive values", fn, k,
                     old_est[k], new_est[k]);
            return false;
        }
    }
    /* Yuen's paired test, the trimmed mean of the log ratios: over the
     * hundreds of pairs --ab runs, a few processes that landed 20% to 50%
     * slower (1 to 3 in 100 here, more in some minutes than others) moved
     * the mean by 2%, one way or the other, and the 20% trimmed mean not. */
    double *l = malloc(n * sizeof *l);
    if (l == NULL) {
        dkb_fail(DK_ENOMEM, "%s: out of memory", fn);
        return false;
    }
    for (size_t k = 0; k < n; k++)
        l[k] = log(new_est[k]) - log(old_est[k]);
    trimmed t;
    trim(l, n, &t);
    free(l);
    return process_verdict(fn, exp(t.mean) - 1, t.mean, sqrt(t.d), (double)(t.h - 1), noise,
                           significance, out);
}
