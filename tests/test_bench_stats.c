/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_stats.c - libdkbench's statistics (src/common/stats.h) on
 * synthetic samples whose truth is known: exact lines, Gaussian noise of a
 * known spread, hand-computed quartiles, shifts of a known size.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <time.h>

#include "common/error.h"
#include "common/stats.h"
#include "check.h"

#define PI 3.14159265358979323846

#define CHECK_DBL(a, op, b)                                                             \
    do {                                                                                \
        double a__ = (a), b__ = (b);                                                    \
        if (!(a__ op b__))                                                              \
            DKT_FAIL("CHECK failed: %s %s %s (%.17g vs %.17g)", #a, #op, #b, a__, b__); \
    } while (0)

/* Uniform in (0, 1], then a standard normal by Box-Muller. */
static double uniform01(dkb_rng *r) { return ((double)(dkb_rng_next(r) >> 11) + 1) * 0x1p-53; }

static double gauss(dkb_rng *r)
{
    double u1 = uniform01(r), u2 = uniform01(r);
    return sqrt(-2 * log(u1)) * cos(2 * PI * u2);
}

static bool all_zero(const void *p, size_t size)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < size; i++)
        if (c[i] != 0)
            return false;
    return true;
}

/* Criterion's linear sampling: iteration counts d, 2d, ..., n*d, with a
 * per-sample constant cost (the counter reads) and Gaussian noise. */
static void linear_samples(dkb_rng *r, size_t n, double d, double intercept, double slope,
                           double sigma, double *x, double *y)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = d * (double)(i + 1);
        y[i] = intercept + slope * x[i] + sigma * gauss(r);
    }
}

/* Per-iteration values around `mean` with relative noise `rel`. */
static void noisy_values(dkb_rng *r, size_t n, double mean, double rel, double *v)
{
    for (size_t i = 0; i < n; i++)
        v[i] = mean * (1 + rel * gauss(r));
}

/* ------------------------------------------------------------------ */

TEST_CASE(rng_is_xoshiro256ss_seeded_by_splitmix64)
{
    /* splitmix64's first output from 0 is a published reference value. */
    dkb_rng r;
    dkb_rng_seed(&r, 0);
    CHECK_U64(r.s[0], ==, 0xe220a8397b1dcdafu);
    /* xoshiro256**: the output is rotl(s[1] * 5, 7) * 9 of the state before the step. */
    uint64_t s1 = r.s[1] * 5;
    uint64_t expect = ((s1 << 7) | (s1 >> 57)) * 9;
    CHECK_U64(dkb_rng_next(&r), ==, expect);

    dkb_rng a, b;
    dkb_rng_seed(&a, 42);
    dkb_rng_seed(&b, 42);
    for (int i = 0; i < 1000; i++)
        CHECK_U64(dkb_rng_next(&a), ==, dkb_rng_next(&b));
    dkb_rng_seed(&b, 43);
    CHECK(dkb_rng_next(&a) != dkb_rng_next(&b));

    /* dkb_rng_below: in range and even (each of 10 bins within 4% of
     * 10000 draws: about 4 standard deviations). */
    size_t bins[10] = {0};
    for (int i = 0; i < 100000; i++) {
        size_t k = dkb_rng_below(&a, 10);
        CHECK_U64(k, <, 10);
        bins[k]++;
    }
    for (int i = 0; i < 10; i++) {
        CHECK_U64(bins[i], >, 9600);
        CHECK_U64(bins[i], <, 10400);
    }
    CHECK_U64(dkb_rng_below(&a, 1), ==, 0);
    CHECK_U64(dkb_rng_below(&a, 0), ==, 0);
    /* Above 2^32 (the masked path), still in range and reaching the top half. */
    size_t big = ((size_t)1 << 40) + 3, high = 0;
    for (int i = 0; i < 1000; i++) {
        size_t k = dkb_rng_below(&a, big);
        CHECK_U64(k, <, big);
        high += k >= big / 2;
    }
    CHECK_U64(high, >, 400);
    CHECK_U64(high, <, 600);
}

TEST_CASE(quantile_is_r_type_7)
{
    const double v[] = {1, 2, 4, 8};
    CHECK_DBL(dkb_quantile_sorted(v, 4, 0), ==, 1);
    CHECK_DBL(dkb_quantile_sorted(v, 4, 1), ==, 8);
    CHECK_DBL(dkb_quantile_sorted(v, 4, 0.5), ==, 3);     /* h = 1.5 */
    CHECK_DBL(dkb_quantile_sorted(v, 4, 0.25), ==, 1.75); /* h = 0.75 */
    CHECK_DBL(dkb_quantile_sorted(v, 4, 0.75), ==, 5);    /* h = 2.25 */
    CHECK_DBL(dkb_quantile_sorted(v, 1, 0.3), ==, 1);
    CHECK(isnan(dkb_quantile_sorted(v, 0, 0.5)));
    CHECK(isnan(dkb_quantile_sorted(v, 4, -0.1)));
    CHECK(isnan(dkb_quantile_sorted(v, 4, 1.1)));
    CHECK(isnan(dkb_quantile_sorted(v, 4, NAN)));
    CHECK(isnan(dkb_quantile_sorted(NULL, 4, 0.5)));
}

TEST_CASE(median_ci_brackets_the_median_of_the_runs)
{
    /* Median of 7: the 4th smallest, 12; every resample's median is one of
     * the values, so the interval's ends are values too. */
    const double v[] = {15, 11, 12, 40, 10, 13, 12};
    dkb_interval ci, again;
    CHECK(dkb_median_ci(v, 7, 2000, 1, 0.95, &ci));
    CHECK(ci.point == 12);
    CHECK(ci.lo >= 10 && ci.lo <= 12 && ci.hi >= 12 && ci.hi <= 15);
    CHECK(dkb_median_ci(v, 7, 2000, 1, 0.95, &again));
    CHECK(again.lo == ci.lo && again.hi == ci.hi); /* the seed decides */
    /* Even counts: the mean of the two middle values. */
    CHECK(dkb_median_ci(v, 6, 100, 1, 0.95, &ci) && ci.point == 12.5);
    CHECK(!dkb_median_ci(v, 1, 100, 1, 0.95, &ci));
    CHECK_CONTAINS(dkb_last_error(), "at least 2");
    const double bad[] = {1, NAN, 3};
    CHECK(!dkb_median_ci(bad, 3, 100, 1, 0.95, &ci));
    CHECK_CONTAINS(dkb_last_error(), "not finite");
}

TEST_CASE(ols_recovers_an_exact_line)
{
    double x[100], y[100];
    for (int i = 0; i < 100; i++) {
        x[i] = i + 1;
        y[i] = 3 + 7 * x[i]; /* 7 counts per iteration, 3 for the reads */
    }
    dkb_fit f;
    CHECK(dkb_ols(x, y, 100, &f));
    CHECK_DBL(f.slope, ==, 7);
    CHECK_DBL(f.intercept, ==, 3);
    CHECK_DBL(f.r2, ==, 1);

    /* Not representable exactly: within rounding. */
    for (int i = 0; i < 100; i++) {
        x[i] = 1000.0 * (i + 1);
        y[i] = 41.3 + 2.37 * x[i];
    }
    CHECK(dkb_ols(x, y, 100, &f));
    CHECK_NEAR(f.slope, 2.37, 2.37 * 1e-13);
    CHECK_NEAR(f.intercept, 41.3, 1e-6);
    CHECK_NEAR(f.r2, 1, 1e-12);

    /* Constant y: slope 0, and the fit is perfect. */
    const double xc[] = {1, 2, 3}, yc[] = {5, 5, 5};
    CHECK(dkb_ols(xc, yc, 3, &f));
    CHECK_DBL(f.slope, ==, 0);
    CHECK_DBL(f.intercept, ==, 5);
    CHECK_DBL(f.r2, ==, 1);

    /* Two points: the line through them. */
    const double x2[] = {10, 20}, y2[] = {15, 35};
    CHECK(dkb_ols(x2, y2, 2, &f));
    CHECK_DBL(f.slope, ==, 2);
    CHECK_DBL(f.intercept, ==, -5);
}

TEST_CASE(ols_r2_of_a_hand_computed_fit)
{
    /* x = 1..4, y = 1, 3, 2, 4: Sxx = 5, Sxy = 4, Syy = 5, slope 0.8,
     * intercept 2.5 - 0.8 * 2.5 = 0.5, R^2 = 16 / 25. */
    const double x[] = {1, 2, 3, 4}, y[] = {1, 3, 2, 4};
    dkb_fit f;
    CHECK(dkb_ols(x, y, 4, &f));
    CHECK_NEAR(f.slope, 0.8, 1e-15);
    CHECK_NEAR(f.intercept, 0.5, 1e-15);
    CHECK_NEAR(f.r2, 0.64, 1e-15);
}

TEST_CASE(slope_ci_of_exact_counts_has_no_width)
{
    /* Exact instruction counts: every resample fits the same line. */
    double x[50], y[50];
    for (int i = 0; i < 50; i++) {
        x[i] = 4 * (i + 1);
        y[i] = 120 + 9 * x[i];
    }
    dkb_interval ci;
    CHECK(dkb_slope_ci(x, y, 50, 2000, 1, 0.95, &ci));
    CHECK_DBL(ci.point, ==, 9);
    CHECK_DBL(ci.lo, ==, 9);
    CHECK_DBL(ci.hi, ==, 9);
}

TEST_CASE(slope_ci_on_noisy_data_holds_the_truth)
{
    dkb_rng r;
    dkb_rng_seed(&r, 7);
    double x[100], y[100];
    /* 250 ns per iteration, 900 ns of reads, 1% noise on the largest sample. */
    linear_samples(&r, 100, 10, 900, 250, 2500, x, y);
    dkb_interval ci;
    CHECK(dkb_slope_ci(x, y, 100, 10000, 3, 0.95, &ci));
    CHECK_DBL(ci.lo, <, 250);
    CHECK_DBL(ci.hi, >, 250);
    CHECK_DBL(ci.lo, <, ci.point);
    CHECK_DBL(ci.point, <, ci.hi);
    /* The standard error of the slope is sigma / sqrt(Sxx) = 2500 /
     * sqrt(100 * 833.25 * 100) ~ 0.87: a 95% interval ~ 3.4 wide. */
    CHECK_DBL(ci.hi - ci.lo, >, 2.5);
    CHECK_DBL(ci.hi - ci.lo, <, 4.5);
    dkb_fit f;
    CHECK(dkb_ols(x, y, 100, &f));
    CHECK_DBL(f.slope, ==, ci.point);
    CHECK_NEAR(f.intercept, 900, 4 * 2500 / sqrt(100.0) * 2);
}

/* The fraction of `trials` seeded data sets whose 95% slope interval holds
 * the true slope. */
static double slope_coverage(size_t n, size_t trials, size_t resamples, uint64_t seed)
{
    dkb_rng r;
    dkb_rng_seed(&r, seed);
    double x[200], y[200];
    size_t covered = 0;
    for (size_t t = 0; t < trials; t++) {
        linear_samples(&r, n, 3, 500, 12.5, 40, x, y);
        dkb_interval ci;
        CHECK(dkb_slope_ci(x, y, n, resamples, seed + t, 0.95, &ci));
        covered += ci.lo <= 12.5 && 12.5 <= ci.hi;
    }
    return (double)covered / (double)trials;
}

TEST_CASE(slope_ci_covers_the_truth_95_percent_of_the_time)
{
    double c = slope_coverage(100, 1000, 1000, 2024);
    fprintf(stderr, "slope coverage: %.3f\n", c);
    CHECK_DBL(c, >=, 0.93);
    CHECK_DBL(c, <=, 0.97);
}

static double mean_coverage(size_t n, size_t trials, size_t resamples, uint64_t seed)
{
    dkb_rng r;
    dkb_rng_seed(&r, seed);
    double v[200];
    size_t covered = 0;
    for (size_t t = 0; t < trials; t++) {
        noisy_values(&r, n, 80, 0.05, v);
        dkb_summary s;
        CHECK(dkb_summarize(v, n, resamples, seed + t, 0.95, &s));
        covered += s.mean_ci.lo <= 80 && 80 <= s.mean_ci.hi;
    }
    return (double)covered / (double)trials;
}

TEST_CASE(mean_ci_covers_the_truth_95_percent_of_the_time)
{
    double c = mean_coverage(100, 1000, 1000, 99);
    fprintf(stderr, "mean coverage: %.3f\n", c);
    CHECK_DBL(c, >=, 0.93);
    CHECK_DBL(c, <=, 0.97);
}

TEST_CASE(summary_of_hand_computed_values)
{
    const double v[] = {4, 100, 1, 3, 2};
    dkb_summary s;
    CHECK(dkb_summarize(v, 5, 1000, 5, 0.95, &s));
    CHECK_DBL(s.mean, ==, 22);
    CHECK_DBL(s.median, ==, 3);
    CHECK_DBL(s.mad, ==, 1); /* |v - 3| = 1, 97, 2, 0, 1 */
    CHECK_NEAR(s.stddev, sqrt(7610.0 / 4), 1e-12);
    CHECK_DBL(s.min, ==, 1);
    CHECK_DBL(s.max, ==, 100);
    CHECK_DBL(s.mean_ci.point, ==, 22);
    CHECK_DBL(s.mean_ci.lo, >=, 1);
    CHECK_DBL(s.mean_ci.lo, <, 22);
    CHECK_DBL(s.mean_ci.hi, >, 22);
    CHECK_DBL(s.mean_ci.hi, <=, 100);

    /* Constant values: everything is that value, exactly. */
    const double c[] = {0.1, 0.1, 0.1};
    CHECK(dkb_summarize(c, 3, 100, 5, 0.95, &s));
    CHECK_DBL(s.mean, ==, 0.1);
    CHECK_DBL(s.mean_ci.lo, ==, 0.1);
    CHECK_DBL(s.mean_ci.hi, ==, 0.1);
    CHECK_DBL(s.stddev, ==, 0);
    CHECK_DBL(s.mad, ==, 0);
}

TEST_CASE(tukey_matches_hand_computed_fences)
{
    /* 1..8 and 30 and -20, n = 10. Sorted: -20 1 2 3 4 5 6 7 8 30.
     * Q1: h = 2.25 -> 2 + 0.25 = 2.25; Q3: h = 6.75 -> 6 + 0.75 = 6.75;
     * IQR 4.5: mild fences -4.5, 13.5; severe -11.25, 20.25. */
    const double v[] = {30, 1, 2, 3, 4, 5, 6, 7, 8, -20};
    unsigned char cls[10];
    dkb_outliers o;
    CHECK(dkb_tukey(v, 10, &o, cls));
    CHECK_DBL(o.fence_low_mild, ==, -4.5);
    CHECK_DBL(o.fence_high_mild, ==, 13.5);
    CHECK_DBL(o.fence_low_severe, ==, -11.25);
    CHECK_DBL(o.fence_high_severe, ==, 20.25);
    CHECK_U64(o.high_severe, ==, 1);
    CHECK_U64(o.low_severe, ==, 1);
    CHECK_U64(o.high_mild, ==, 0);
    CHECK_U64(o.low_mild, ==, 0);
    CHECK_INT(cls[0], ==, DKB_OUTLIER_HIGH_SEVERE);
    CHECK_INT(cls[9], ==, DKB_OUTLIER_LOW_SEVERE);
    for (int i = 1; i < 9; i++)
        CHECK_INT(cls[i], ==, DKB_OUTLIER_NONE);

    /* Mild only: 20 lies between 13.5 and 20.25, -10 between -11.25 and -4.5. */
    const double w[] = {20, 1, 2, 3, 4, 5, 6, 7, 8, -10};
    CHECK(dkb_tukey(w, 10, &o, cls));
    CHECK_U64(o.high_mild, ==, 1);
    CHECK_U64(o.low_mild, ==, 1);
    CHECK_U64(o.high_severe + o.low_severe, ==, 0);
    CHECK_INT(cls[0], ==, DKB_OUTLIER_HIGH_MILD);
    CHECK_INT(cls[9], ==, DKB_OUTLIER_LOW_MILD);

    /* Without class_of. */
    CHECK(dkb_tukey(w, 10, &o, NULL));
    CHECK_U64(o.high_mild, ==, 1);
}

TEST_CASE(tukey_with_ties_and_few_values)
{
    unsigned char cls[8];
    dkb_outliers o;
    /* All equal: IQR 0, every fence on the value, nothing strictly outside. */
    const double same[] = {5, 5, 5, 5, 5, 5};
    CHECK(dkb_tukey(same, 6, &o, cls));
    CHECK_DBL(o.fence_low_severe, ==, 5);
    CHECK_DBL(o.fence_high_severe, ==, 5);
    CHECK_U64(o.low_severe + o.low_mild + o.high_mild + o.high_severe, ==, 0);

    /* 0 0 0 1: Q1 0, Q3 0.25, IQR 0.25; mild fence 0.625, severe 1.0:
     * 1 sits on the severe fence, so it is mild (outside means beyond). */
    const double t4[] = {0, 1, 0, 0};
    CHECK(dkb_tukey(t4, 4, &o, cls));
    CHECK_DBL(o.fence_high_mild, ==, 0.625);
    CHECK_DBL(o.fence_high_severe, ==, 1);
    CHECK_U64(o.high_mild, ==, 1);
    CHECK_U64(o.high_severe, ==, 0);
    CHECK_INT(cls[1], ==, DKB_OUTLIER_HIGH_MILD);

    /* Ties in the bulk: 2 2 2 2 2 2 9 -> Q1 = Q3 = 2, IQR 0: 9 is severe. */
    const double t7[] = {2, 2, 9, 2, 2, 2, 2};
    CHECK(dkb_tukey(t7, 7, &o, cls));
    CHECK_U64(o.high_severe, ==, 1);
    CHECK_INT(cls[2], ==, DKB_OUTLIER_HIGH_SEVERE);

    /* Fewer than 4 values can never fall outside type-7 fences. */
    const double t3[] = {1, 2, 1000};
    CHECK(dkb_tukey(t3, 3, &o, cls));
    CHECK_DBL(o.fence_high_mild, ==, 501 + 1.5 * 499.5); /* Q1 1.5, Q3 501 */
    CHECK_U64(o.high_mild + o.high_severe + o.low_mild + o.low_severe, ==, 0);
    const double t2[] = {1, 1e9};
    CHECK(dkb_tukey(t2, 2, &o, cls));
    CHECK_U64(o.high_mild + o.high_severe + o.low_mild + o.low_severe, ==, 0);
    const double t1[] = {3};
    CHECK(dkb_tukey(t1, 1, &o, cls));
    CHECK_DBL(o.fence_low_severe, ==, 3);
    CHECK_DBL(o.fence_high_severe, ==, 3);
    CHECK_INT(cls[0], ==, DKB_OUTLIER_NONE);
}

typedef bool (*change_fn)(const double *, size_t, const double *, size_t, double, double, size_t,
                          uint64_t, dkb_change *);

/* n = 50 per side, 2% relative noise, a shift of `shift`: the verdicts
 * over 20 seeds, counted by kind, of the mean test or (test) another. */
static void change_verdicts_of(change_fn test, double shift, size_t counts[4])
{
    memset(counts, 0, 4 * sizeof *counts);
    for (uint64_t seed = 1; seed <= 20; seed++) {
        dkb_rng r;
        dkb_rng_seed(&r, 1000 + seed);
        double old_v[50], new_v[50];
        noisy_values(&r, 50, 100, 0.02, old_v);
        noisy_values(&r, 50, 100 * (1 + shift), 0.02, new_v);
        dkb_change c;
        CHECK(test(old_v, 50, new_v, 50, 0.01, 0.05, 5000, seed, &c));
        CHECK_DBL(c.rel.lo, <=, c.rel.point);
        CHECK_DBL(c.rel.point, <=, c.rel.hi);
        counts[c.verdict]++;
    }
}

static void change_verdicts(double shift, size_t counts[4])
{
    change_verdicts_of(dkb_change_test, shift, counts);
}

TEST_CASE(change_test_flags_a_five_percent_shift)
{
    size_t k[4];
    change_verdicts(0.05, k);
    CHECK_U64(k[DKB_REGRESSED], ==, 20);
    change_verdicts(-0.05, k);
    CHECK_U64(k[DKB_IMPROVED], ==, 20);

    /* One in detail: the relative change and its interval hold 5%. */
    dkb_rng r;
    dkb_rng_seed(&r, 77);
    double old_v[50], new_v[50];
    noisy_values(&r, 50, 100, 0.02, old_v);
    noisy_values(&r, 50, 105, 0.02, new_v);
    dkb_change c;
    CHECK(dkb_change_test(old_v, 50, new_v, 50, 0.01, 0.05, 10000, 9, &c));
    CHECK_DBL(c.rel.lo, <, 0.05);
    CHECK_DBL(c.rel.hi, >, 0.05);
    CHECK_DBL(c.rel.lo, >, 0.01);
    CHECK_DBL(c.p_value, <, 0.001);
    CHECK_INT(c.verdict, ==, DKB_REGRESSED);
    CHECK_STR(dkb_verdict_name(c.verdict), "regressed");
}

TEST_CASE(change_test_does_not_flag_a_half_percent_shift)
{
    size_t k[4];
    change_verdicts(0.005, k);
    CHECK_U64(k[DKB_REGRESSED] + k[DKB_IMPROVED], ==, 0);
    CHECK_U64(k[DKB_NO_CHANGE] + k[DKB_WITHIN_NOISE], ==, 20);
    change_verdicts(-0.005, k);
    CHECK_U64(k[DKB_REGRESSED] + k[DKB_IMPROVED], ==, 0);
    /* The same shift is real, and seen as such, without a noise threshold
     * once the noise is small: 0.5% on 0.1% noise. */
    dkb_rng r;
    dkb_rng_seed(&r, 5);
    double old_v[50], new_v[50];
    noisy_values(&r, 50, 100, 0.001, old_v);
    noisy_values(&r, 50, 100.5, 0.001, new_v);
    dkb_change c;
    CHECK(dkb_change_test(old_v, 50, new_v, 50, 0.01, 0.05, 5000, 1, &c));
    CHECK_INT(c.verdict, ==, DKB_WITHIN_NOISE);
    CHECK(dkb_change_test(old_v, 50, new_v, 50, 0.001, 0.05, 5000, 1, &c));
    CHECK_INT(c.verdict, ==, DKB_REGRESSED);
}

/* The fraction of null trials (no shift) with p < 0.05. */
static double null_rejections_of(change_fn test, size_t n_old, double rel_old, size_t n_new,
                                 double rel_new, uint64_t seed)
{
    dkb_rng r;
    dkb_rng_seed(&r, seed);
    double old_v[100], new_v[100];
    size_t below = 0;
    for (uint64_t t = 0; t < 200; t++) {
        noisy_values(&r, n_old, 100, rel_old, old_v);
        noisy_values(&r, n_new, 100, rel_new, new_v);
        dkb_change c;
        CHECK(test(old_v, n_old, new_v, n_new, 0.01, 0.05, 1000, seed + t, &c));
        CHECK_DBL(c.p_value, >, 0);
        CHECK_DBL(c.p_value, <=, 1);
        below += c.p_value < 0.05;
    }
    return (double)below / 200;
}

static double null_rejections(size_t n_old, double rel_old, size_t n_new, double rel_new,
                              uint64_t seed)
{
    return null_rejections_of(dkb_change_test, n_old, rel_old, n_new, rel_new, seed);
}

TEST_CASE(change_test_p_value_is_uniform_under_the_null)
{
    double f = null_rejections(50, 0.02, 50, 0.02, 11);
    fprintf(stderr, "null, equal sizes: %.3f below 0.05\n", f);
    CHECK_DBL(f, >=, 0.02);
    CHECK_DBL(f, <=, 0.09);
    /* Welch: unequal sizes and spreads. */
    f = null_rejections(30, 0.01, 80, 0.04, 12);
    fprintf(stderr, "null, unequal sizes and spreads: %.3f below 0.05\n", f);
    CHECK_DBL(f, >=, 0.02);
    CHECK_DBL(f, <=, 0.09);
}

TEST_CASE(change_test_on_exact_counts)
{
    /* No spread at all: equal means are no change, different ones are a
     * certain change, with p at its floor 1 / (resamples + 1). */
    const double a[] = {12, 12, 12, 12}, b[] = {13, 13, 13}, z[] = {0, 0, 24, 0, 24, 0};
    dkb_change c;
    CHECK(dkb_change_test(a, 4, a, 4, 0.01, 0.05, 999, 1, &c));
    CHECK_INT(c.verdict, ==, DKB_NO_CHANGE);
    CHECK_DBL(c.p_value, ==, 1);
    CHECK_DBL(c.rel.point, ==, 0);
    CHECK(dkb_change_test(a, 4, b, 3, 0.01, 0.05, 999, 1, &c));
    CHECK_INT(c.verdict, ==, DKB_REGRESSED);
    CHECK_DBL(c.p_value, ==, 1.0 / 1000);
    CHECK_NEAR(c.rel.lo, 1.0 / 12, 1e-15);
    CHECK_NEAR(c.rel.hi, 1.0 / 12, 1e-15);
    CHECK(dkb_change_test(b, 3, a, 4, 0.01, 0.05, 999, 1, &c));
    CHECK_INT(c.verdict, ==, DKB_IMPROVED);
    CHECK_STR(dkb_verdict_name(c.verdict), "improved");
    /* A baseline of mostly zeros (a rare event): resamples of zeros only
     * are drawn again, and the answer is finite. */
    CHECK(dkb_change_test(z, 6, a, 4, 0.01, 0.05, 2000, 1, &c));
    CHECK(isfinite(c.rel.lo) && isfinite(c.rel.hi));
    CHECK_DBL(c.rel.point, ==, 0.5); /* 12 / 8 - 1 */
    CHECK_STR(dkb_verdict_name(DKB_NO_CHANGE), "no change");
    CHECK_STR(dkb_verdict_name(DKB_WITHIN_NOISE), "within noise");
}

TEST_CASE(median_change_test_flags_a_five_percent_shift_not_a_half_percent)
{
    size_t k[4];
    change_verdicts_of(dkb_change_test_median, 0.05, k);
    CHECK_U64(k[DKB_REGRESSED], ==, 20);
    change_verdicts_of(dkb_change_test_median, -0.05, k);
    CHECK_U64(k[DKB_IMPROVED], ==, 20);
    change_verdicts_of(dkb_change_test_median, 0.005, k);
    CHECK_U64(k[DKB_REGRESSED] + k[DKB_IMPROVED], ==, 0);
    change_verdicts_of(dkb_change_test_median, -0.005, k);
    CHECK_U64(k[DKB_REGRESSED] + k[DKB_IMPROVED], ==, 0);
    /* The point is the ratio of the medians: 101 / 100 - 1 with odd n. */
    const double o[] = {90, 100, 130, 95, 120}, w[] = {101, 10, 500, 5, 700};
    dkb_change c;
    CHECK(dkb_change_test_median(o, 5, w, 5, 0.01, 0.05, 999, 1, &c));
    CHECK_NEAR(c.rel.point, 0.01, 1e-12);
    CHECK_DBL(c.rel.lo, <=, c.rel.point);
    CHECK_DBL(c.rel.point, <=, c.rel.hi);
    /* and of the middle pair's means with even n: 105 / 100 - 1. */
    const double o6[] = {98, 102, 50, 400, 20, 500}, w6[] = {104, 106, 1, 9999, 2, 8888};
    CHECK(dkb_change_test_median(o6, 6, w6, 6, 0.01, 0.05, 999, 1, &c));
    CHECK_NEAR(c.rel.point, 0.05, 1e-12);
}

TEST_CASE(median_change_test_p_value_is_uniform_under_the_null)
{
    double f = null_rejections_of(dkb_change_test_median, 50, 0.02, 50, 0.02, 21);
    fprintf(stderr, "null, equal sizes: %.3f below 0.05\n", f);
    CHECK_DBL(f, >=, 0.02);
    CHECK_DBL(f, <=, 0.09);
    f = null_rejections_of(dkb_change_test_median, 30, 0.01, 80, 0.04, 22);
    fprintf(stderr, "null, unequal sizes and spreads: %.3f below 0.05\n", f);
    CHECK_DBL(f, >=, 0.02);
    CHECK_DBL(f, <=, 0.09);
}

/* A third of the new samples disturbed (+20%, as a busy neighbour makes
 * them): the means differ by about 7% and the mean test calls it a
 * regression; the medians, like the Theil-Sen answer, barely move. */
TEST_CASE(median_change_is_not_moved_by_a_disturbed_third)
{
    dkb_rng r;
    dkb_rng_seed(&r, 31);
    double old_v[60], new_v[60];
    noisy_values(&r, 60, 100, 0.005, old_v);
    noisy_values(&r, 60, 100, 0.005, new_v);
    for (size_t i = 0; i < 60; i += 3)
        new_v[i] *= 1.2;
    dkb_change mean, med;
    CHECK(dkb_change_test(old_v, 60, new_v, 60, 0.01, 0.05, 5000, 3, &mean));
    CHECK(dkb_change_test_median(old_v, 60, new_v, 60, 0.01, 0.05, 5000, 3, &med));
    fprintf(stderr, "mean change %.4f (%s), median change %.4f [%.4f, %.4f] (%s)\n", mean.rel.point,
            dkb_verdict_name(mean.verdict), med.rel.point, med.rel.lo, med.rel.hi,
            dkb_verdict_name(med.verdict));
    CHECK_INT(mean.verdict, ==, DKB_REGRESSED);
    CHECK(med.verdict == DKB_NO_CHANGE || med.verdict == DKB_WITHIN_NOISE);
    CHECK_DBL(fabs(med.rel.point), <, 0.01);
    CHECK_DBL(med.rel.hi, <, 0.02);
}

/* A median's bootstrap with few values on a side is too narrow: with 2 (a
 * resample's median is one of 3 values) a third of null trials fell below
 * 0.05 and a tenth read as regressed or improved; with 3 or 4 beside 50,
 * about a tenth fell below 0.05. The test refuses fewer than 5 and says
 * so; from 5 on it does not exceed its level, beside many values too
 * (the lower bound of 200 trials is too loose to check here). */
TEST_CASE(median_change_test_refuses_too_few_values_and_holds_its_level_from_five)
{
    double v[50];
    for (size_t i = 0; i < 50; i++)
        v[i] = 100 + (double)(i % 7);
    dkb_change c;
    CHECK(!dkb_change_test_median(v, 2, v, 50, 0.01, 0.05, 999, 1, &c));
    CHECK_CONTAINS(dkb_last_error(), "dkb_change_test_median: 2 baseline values; at least 5");
    CHECK(!dkb_change_test_median(v, 50, v, 4, 0.01, 0.05, 999, 1, &c));
    CHECK_CONTAINS(dkb_last_error(), "4 new values; at least 5");
    CHECK(dkb_change_test_median(v, 5, v, 5, 0.01, 0.05, 999, 1, &c));
    double f = null_rejections_of(dkb_change_test_median, 5, 0.02, 50, 0.02, 41);
    fprintf(stderr, "null, 5 beside 50: %.3f below 0.05\n", f);
    CHECK_DBL(f, <=, 0.09);
    f = null_rejections_of(dkb_change_test_median, 5, 0.02, 5, 0.02, 42);
    fprintf(stderr, "null, 5 beside 5: %.3f below 0.05\n", f);
    CHECK_DBL(f, <=, 0.09);
}

/* The resampled medians have an exact distribution when the new values
 * are all equal (their resamples' median never moves): of 6 values 10..60
 * it is (10, 15, ..., 60) with cumulative probabilities 0.0087, 0.0349,
 * 0.1160, ..., 0.8840, 0.9651, 0.9913, 1 (all 6^6 resamples counted); of 5
 * values 10..50 it is 10..50 with 0.0579, 0.3174, 0.6826, 0.9421, 1. So
 * the interval of 50 / med* - 1 and the p-value of |med* - med| >= |50 -
 * med| are known: even and odd counts, the walk up the sorted values. */
TEST_CASE(median_change_test_resamples_have_the_exact_distribution_of_a_median)
{
    const double even[] = {60, 10, 40, 30, 20, 50}, odd[] = {30, 50, 10, 40, 20};
    const double fifty[] = {50, 50, 50, 50, 50};
    dkb_change c;
    CHECK(dkb_change_test_median(even, 6, fifty, 5, 0.01, 0.05, 20000, 5, &c));
    CHECK_NEAR(c.rel.point, 50.0 / 35 - 1, 1e-12);
    CHECK_NEAR(c.rel.lo, 50.0 / 55 - 1, 1e-12);          /* the 97.5% quantile of med*: 55 */
    CHECK_NEAR(c.rel.hi, 50.0 / 15 - 1, 1e-12);          /* the 2.5% quantile: 15 */
    CHECK_NEAR(c.p_value, 0.1160 + (1 - 0.8840), 0.012); /* med* <= 20 or >= 50 */
    CHECK(dkb_change_test_median(odd, 5, fifty, 5, 0.01, 0.05, 20000, 5, &c));
    CHECK_NEAR(c.rel.point, 50.0 / 30 - 1, 1e-12);
    CHECK_NEAR(c.rel.lo, 0, 1e-12); /* 50 / 50 - 1 */
    CHECK_NEAR(c.rel.hi, 50.0 / 10 - 1, 1e-12);
    CHECK_NEAR(c.p_value, 2 * 0.0579, 0.01); /* med* = 10 or 50 */
}

TEST_CASE(median_change_test_on_exact_counts_and_bad_input)
{
    const double a[] = {12, 12, 12, 12, 12}, b[] = {13, 13, 13, 13, 13};
    const double zeros[] = {0, 0, 0, 0, 0}, with_nan[] = {1, NAN, 3, 4, 5};
    dkb_change c;
    CHECK(dkb_change_test_median(a, 5, a, 5, 0.01, 0.05, 999, 1, &c));
    CHECK_INT(c.verdict, ==, DKB_NO_CHANGE);
    CHECK_DBL(c.p_value, ==, 1);
    CHECK(dkb_change_test_median(a, 5, b, 5, 0.01, 0.05, 999, 1, &c));
    CHECK_INT(c.verdict, ==, DKB_REGRESSED);
    CHECK_DBL(c.p_value, ==, 1.0 / 1000);
    CHECK_NEAR(c.rel.lo, 1.0 / 12, 1e-15);
    CHECK_NEAR(c.rel.hi, 1.0 / 12, 1e-15);
    CHECK(!dkb_change_test_median(zeros, 5, a, 5, 0.01, 0.05, 100, 1, &c));
    CHECK_CONTAINS(dkb_last_error(), "dkb_change_test_median: the baseline median is 0");
    CHECK(!dkb_change_test_median(a, 1, a, 5, 0.01, 0.05, 100, 1, &c));
    CHECK_CONTAINS(dkb_last_error(), "1 baseline values; at least 5");
    CHECK(!dkb_change_test_median(a, 5, with_nan, 5, 0.01, 0.05, 100, 1, &c));
    CHECK_CONTAINS(dkb_last_error(), "NaN");
    CHECK(!dkb_change_test_median(a, 5, a, 5, 0.01, 0.05, 0, 1, &c));
    CHECK(!dkb_change_test_median(a, 5, a, 5, 0.01, 0.05, 100, 1, NULL));
    /* A baseline whose resamples often have a median of 0 or less: those
     * are drawn again, and the answer is finite. */
    const double mostly_zero[] = {0, 0, 0, 24, 24, 24, 24};
    CHECK(dkb_change_test_median(mostly_zero, 7, a, 5, 0.01, 0.05, 2000, 1, &c));
    CHECK(isfinite(c.rel.lo) && isfinite(c.rel.hi));
}

TEST_CASE(ratio_recovers_a_known_ratio)
{
    /* Exact: b = 1.25 a in every pair. */
    double a[60], b[60];
    for (int i = 0; i < 60; i++) {
        a[i] = 100 + i;
        b[i] = 1.25 * a[i];
    }
    dkb_interval ci;
    CHECK(dkb_ratio(a, b, 60, 2000, 1, 0.95, &ci));
    CHECK_NEAR(ci.point, 1.25, 1e-12);
    CHECK_NEAR(ci.lo, 1.25, 1e-12);
    CHECK_NEAR(ci.hi, 1.25, 1e-12);

    /* Paired drift (the machine slows down for both alike) and 3% noise
     * of each alternative: the interval holds 1.25 and is narrow. */
    dkb_rng r;
    dkb_rng_seed(&r, 3);
    for (int i = 0; i < 60; i++) {
        double drift = 1 + 0.3 * sin(i / 5.0);
        a[i] = 200 * drift * exp(0.03 * gauss(&r));
        b[i] = 250 * drift * exp(0.03 * gauss(&r));
    }
    CHECK(dkb_ratio(a, b, 60, 10000, 2, 0.95, &ci));
    CHECK_DBL(ci.lo, <, 1.25);
    CHECK_DBL(ci.hi, >, 1.25);
    CHECK_DBL(ci.lo, <=, ci.point);
    CHECK_DBL(ci.point, <=, ci.hi);
    CHECK_DBL(ci.hi / ci.lo, <, 1.05);

    /* The median of an even count: log-ratios 0, ln 2, ln 4, ln 8 give
     * exp(1.5 ln 2) = 2^1.5. */
    const double one[] = {1, 1, 1, 1}, pow2[] = {8, 1, 4, 2};
    CHECK(dkb_ratio(one, pow2, 4, 1000, 1, 0.95, &ci));
    CHECK_NEAR(ci.point, pow(2, 1.5), 1e-12);
    CHECK_DBL(ci.lo, >=, 1 - 1e-12);
    CHECK_DBL(ci.hi, <=, 8 + 1e-12);

    /* Two pairs, log-ratios 0 and ln 4: a resample's median is 0, ln 2 or
     * ln 4 with probabilities 1/4, 1/2, 1/4, so the 20% interval (the 40th
     * to 60th percentiles) is exactly the middle one: a ratio of 2. */
    const double b2[] = {1, 4};
    CHECK(dkb_ratio(one, b2, 2, 10000, 1, 0.2, &ci));
    CHECK_NEAR(ci.point, 2, 1e-12);
    CHECK_NEAR(ci.lo, 2, 1e-12);
    CHECK_NEAR(ci.hi, 2, 1e-12);
}

TEST_CASE(ratio_coverage_of_the_median)
{
    /* The median log-ratio's percentile interval on symmetric noise (where
     * the median equals the true ratio): near 95% over 400 trials. The
     * median's bootstrap is coarse on small n, so the band is wider. */
    dkb_rng r;
    dkb_rng_seed(&r, 17);
    double a[100], b[100];
    size_t covered = 0;
    for (uint64_t t = 0; t < 400; t++) {
        for (int i = 0; i < 100; i++) {
            a[i] = 50 * exp(0.05 * gauss(&r));
            b[i] = 75 * exp(0.05 * gauss(&r));
        }
        dkb_interval ci;
        CHECK(dkb_ratio(a, b, 100, 1000, t, 0.95, &ci));
        covered += ci.lo <= 1.5 && 1.5 <= ci.hi;
    }
    fprintf(stderr, "ratio coverage: %.3f\n", covered / 400.0);
    CHECK_U64(covered, >=, 400 * 90 / 100);
    CHECK_U64(covered, <=, 400 * 99 / 100);
}

TEST_CASE(same_seed_same_answers)
{
    dkb_rng r;
    dkb_rng_seed(&r, 8);
    double x[40], y[40], v[40], w[40];
    linear_samples(&r, 40, 5, 100, 3, 20, x, y);
    noisy_values(&r, 40, 10, 0.05, v);
    noisy_values(&r, 40, 10.3, 0.05, w);

    dkb_interval s1, s2, s3;
    CHECK(dkb_slope_ci(x, y, 40, 3000, 123, 0.95, &s1));
    CHECK(dkb_slope_ci(x, y, 40, 3000, 123, 0.95, &s2));
    CHECK(memcmp(&s1, &s2, sizeof s1) == 0);
    CHECK(dkb_slope_ci(x, y, 40, 3000, 124, 0.95, &s3));
    CHECK(s3.lo != s1.lo || s3.hi != s1.hi);

    dkb_summary m1, m2, m3;
    CHECK(dkb_summarize(v, 40, 3000, 5, 0.9, &m1));
    CHECK(dkb_summarize(v, 40, 3000, 5, 0.9, &m2));
    CHECK(memcmp(&m1, &m2, sizeof m1) == 0);
    CHECK(dkb_summarize(v, 40, 3000, 6, 0.9, &m3));
    CHECK(m3.mean_ci.lo != m1.mean_ci.lo || m3.mean_ci.hi != m1.mean_ci.hi);

    dkb_change c1, c2, c3;
    CHECK(dkb_change_test(v, 40, w, 40, 0.01, 0.05, 3000, 77, &c1));
    CHECK(dkb_change_test(v, 40, w, 40, 0.01, 0.05, 3000, 77, &c2));
    CHECK(memcmp(&c1, &c2, sizeof c1) == 0);
    CHECK(dkb_change_test(v, 40, w, 40, 0.01, 0.05, 3000, 78, &c3));
    CHECK(c3.rel.lo != c1.rel.lo || c3.p_value != c1.p_value);

    dkb_interval r1, r2, r3;
    CHECK(dkb_ratio(v, w, 40, 3000, 9, 0.95, &r1));
    CHECK(dkb_ratio(v, w, 40, 3000, 9, 0.95, &r2));
    CHECK(memcmp(&r1, &r2, sizeof r1) == 0);
    CHECK(dkb_ratio(v, w, 40, 3000, 10, 0.95, &r3));
    CHECK(r3.lo != r1.lo || r3.hi != r1.hi);
}

TEST_CASE(unanswerable_inputs_are_refused)
{
    const double x[] = {1, 2, 3, 4}, y[] = {2, 4, 6, 9}, same[] = {5, 5, 5, 5};
    const double with_nan[] = {1, NAN, 3, 4}, with_inf[] = {1, 2, INFINITY, 4};
    const double with_zero[] = {1, 0, 3, 4}, with_neg[] = {1, 2, -3, 4};
    dkb_fit f;
    dkb_interval ci;
    dkb_summary s;
    dkb_outliers o;
    dkb_change c;

    /* *out is zeroed on every refusal (it starts as garbage here). */
#define REFUSED(call, out)                    \
    do {                                      \
        memset(&(out), 0xa5, sizeof(out));    \
        CHECK(!(call));                       \
        CHECK(all_zero(&(out), sizeof(out))); \
        CHECK(dkb_last_error()[0] != '\0');   \
    } while (0)

    /* Too few. */
    REFUSED(dkb_ols(x, y, 0, &f), f);
    REFUSED(dkb_ols(x, y, 1, &f), f);
    REFUSED(dkb_slope_ci(x, y, 0, 100, 1, 0.95, &ci), ci);
    REFUSED(dkb_slope_ci(x, y, 1, 100, 1, 0.95, &ci), ci);
    REFUSED(dkb_slope_ci(x, y, 2, 100, 1, 0.95, &ci), ci);
    CHECK_CONTAINS(dkb_last_error(), "dkb_slope_ci: 2 samples; at least 3");
    REFUSED(dkb_summarize(x, 0, 100, 1, 0.95, &s), s);
    REFUSED(dkb_summarize(x, 1, 100, 1, 0.95, &s), s);
    REFUSED(dkb_tukey(x, 0, &o, NULL), o);
    REFUSED(dkb_change_test(x, 1, y, 4, 0.01, 0.05, 100, 1, &c), c);
    REFUSED(dkb_change_test(x, 4, y, 1, 0.01, 0.05, 100, 1, &c), c);
    REFUSED(dkb_ratio(x, y, 1, 100, 1, 0.95, &ci), ci);
    REFUSED(dkb_ratio(x, y, 0, 100, 1, 0.95, &ci), ci);

    /* Two is enough where the header says so. */
    CHECK(dkb_ols(x, y, 2, &f));
    CHECK(dkb_summarize(x, 2, 100, 1, 0.95, &s));
    CHECK(dkb_change_test(x, 2, y, 2, 0.01, 0.05, 100, 1, &c));
    CHECK(dkb_ratio(x, y, 2, 100, 1, 0.95, &ci));
    /* Three with two iteration counts: resamples of one count are redrawn
     * (1.4 three times, centered on 3.7666..., leaves 3 Sxx - Sx^2 at
     * 7e-15, not 0: only the redraw keeps such slopes out). Every other
     * resample has a slope between 18 / 7.1 and 20 / 7.1. */
    const double x3[] = {1.4, 1.4, 8.5}, y3[] = {10, 12, 30};
    CHECK(dkb_slope_ci(x3, y3, 3, 1000, 1, 0.95, &ci));
    CHECK_DBL(ci.lo, >=, 18 / 7.1 - 1e-9);
    CHECK_DBL(ci.hi, <=, 20 / 7.1 + 1e-9);

    /* All x equal. */
    REFUSED(dkb_ols(same, y, 4, &f), f);
    CHECK_CONTAINS(dkb_last_error(), "same iteration count");
    REFUSED(dkb_slope_ci(same, y, 4, 100, 1, 0.95, &ci), ci);

    /* NaN and infinity, in any argument. */
    REFUSED(dkb_ols(with_nan, y, 4, &f), f);
    CHECK_CONTAINS(dkb_last_error(), "NaN");
    REFUSED(dkb_ols(x, with_inf, 4, &f), f);
    REFUSED(dkb_slope_ci(x, with_nan, 4, 100, 1, 0.95, &ci), ci);
    REFUSED(dkb_slope_ci(with_inf, y, 4, 100, 1, 0.95, &ci), ci);
    REFUSED(dkb_summarize(with_nan, 4, 100, 1, 0.95, &s), s);
    REFUSED(dkb_summarize(with_inf, 4, 100, 1, 0.95, &s), s);
    REFUSED(dkb_tukey(with_nan, 4, &o, NULL), o);
    REFUSED(dkb_tukey(with_inf, 4, &o, NULL), o);
    REFUSED(dkb_change_test(with_nan, 4, y, 4, 0.01, 0.05, 100, 1, &c), c);
    REFUSED(dkb_change_test(x, 4, with_inf, 4, 0.01, 0.05, 100, 1, &c), c);
    REFUSED(dkb_ratio(with_nan, y, 4, 100, 1, 0.95, &ci), ci);
    REFUSED(dkb_ratio(x, with_inf, 4, 100, 1, 0.95, &ci), ci);

    /* Values a ratio or a relative change cannot take. */
    REFUSED(dkb_ratio(with_zero, y, 4, 100, 1, 0.95, &ci), ci);
    REFUSED(dkb_ratio(x, with_neg, 4, 100, 1, 0.95, &ci), ci);
    CHECK_CONTAINS(dkb_last_error(), "positive");
    const double zeros[] = {0, 0, 0, 0};
    REFUSED(dkb_change_test(zeros, 4, y, 4, 0.01, 0.05, 100, 1, &c), c);
    CHECK_CONTAINS(dkb_last_error(), "baseline mean");

    /* Parameters. */
    REFUSED(dkb_slope_ci(x, y, 4, 0, 1, 0.95, &ci), ci);
    REFUSED(dkb_slope_ci(x, y, 4, 100, 1, 0, &ci), ci);
    REFUSED(dkb_slope_ci(x, y, 4, 100, 1, 1, &ci), ci);
    REFUSED(dkb_summarize(x, 4, 100, 1, NAN, &s), s);
    REFUSED(dkb_ratio(x, y, 4, 100, 1, 1.5, &ci), ci);
    REFUSED(dkb_change_test(x, 4, y, 4, -0.01, 0.05, 100, 1, &c), c);
    REFUSED(dkb_change_test(x, 4, y, 4, NAN, 0.05, 100, 1, &c), c);
    REFUSED(dkb_change_test(x, 4, y, 4, 0.01, 0, 100, 1, &c), c);
    REFUSED(dkb_change_test(x, 4, y, 4, 0.01, 0.05, 0, 1, &c), c);
    REFUSED(dkb_ols(NULL, y, 4, &f), f);
    REFUSED(dkb_tukey(NULL, 4, &o, NULL), o);
    CHECK(!dkb_ols(x, y, 4, NULL));
    CHECK(!dkb_slope_ci(x, y, 4, 100, 1, 0.95, NULL));
    CHECK(!dkb_summarize(x, 4, 100, 1, 0.95, NULL));
    CHECK(!dkb_tukey(x, 4, NULL, NULL));
    CHECK(!dkb_change_test(x, 4, y, 4, 0.01, 0.05, 100, 1, NULL));
    CHECK(!dkb_ratio(x, y, 4, 100, 1, 0.95, NULL));
#undef REFUSED
}

/* ------------------------------------------------------------------ */
/* Theil-Sen: the time answer's robust slope                          */
/* ------------------------------------------------------------------ */

TEST_CASE(theil_sen_recovers_an_exact_line_and_its_intercept)
{
    double x[30], y[30];
    for (size_t i = 0; i < 30; i++) {
        x[i] = 7.0 * (double)(i + 1);
        y[i] = 123 + 4.25 * x[i];
    }
    dkb_interval ci;
    double a;
    CHECK(dkb_theil_sen(x, y, 30, 0.95, &ci, &a));
    CHECK_DBL(ci.point, ==, 4.25);
    CHECK_DBL(ci.lo, ==, 4.25);
    CHECK_DBL(ci.hi, ==, 4.25);
    CHECK_NEAR(a, 123, 1e-9);
    /* One sample far off moves neither estimate. */
    y[17] += 1e6;
    CHECK(dkb_theil_sen(x, y, 30, 0.95, &ci, &a));
    CHECK_DBL(ci.point, ==, 4.25);
    CHECK_NEAR(a, 123, 1e-9);
}

TEST_CASE(theil_sen_of_hand_computed_pairs)
{
    /* Pair slopes of (1,1) (2,3) (3,2) (4,8): 2, 0.5, 7/3, -1, 2.5, 6;
     * sorted -1 0.5 2 7/3 2.5 6: the median is (2 + 7/3) / 2. */
    const double x[] = {1, 2, 3, 4}, y[] = {1, 3, 2, 8};
    dkb_interval ci;
    double a;
    CHECK(dkb_theil_sen(x, y, 4, 0.95, &ci, &a));
    CHECK_NEAR(ci.point, (2 + 7.0 / 3) / 2, 1e-12);
    /* n = 4: Var S = 4*3*13/18, C = 1.96 sqrt(Var S) = 5.47; ranks
     * floor(0.26) and ceil(6.74): the limits are the extremes. */
    CHECK_DBL(ci.lo, ==, -1);
    CHECK_DBL(ci.hi, ==, 6);
    /* Ties in x: the tied pair gives no slope. */
    const double xt[] = {1, 1, 2, 3}, yt[] = {0, 2, 2, 3};
    CHECK(dkb_theil_sen(xt, yt, 4, 0.95, &ci, NULL));
    /* slopes 2, 1.5, 0, 0.5, 1: median 1 */
    CHECK_DBL(ci.point, ==, 1);
    dkb_interval bad;
    const double same[] = {2, 2, 2};
    CHECK(!dkb_theil_sen(same, y, 3, 0.95, &bad, NULL));
    CHECK(all_zero(&bad, sizeof bad));
    CHECK(!dkb_theil_sen(x, y, 2, 0.95, &bad, NULL));
    CHECK(!dkb_theil_sen(x, y, 4, 1, &bad, NULL));
}

/* Linear samples whose errors are Gaussian, plus, with probability
 * `p_spike`, a positive spike of `spike` (a sample that included a
 * preemption). */
static void preempted_samples(dkb_rng *r, size_t n, double d, double intercept, double slope,
                              double sigma, double p_spike, double spike, double *x, double *y)
{
    for (size_t i = 0; i < n; i++) {
        x[i] = d * (double)(i + 1);
        y[i] = intercept + slope * x[i] + sigma * gauss(r);
        if (uniform01(r) <= p_spike)
            y[i] += spike * (0.5 + uniform01(r));
    }
}

/* Coverage of the Theil-Sen interval, and of the OLS bootstrap's on the
 * same data for comparison (*ols_coverage when not NULL). */
static double theil_sen_coverage(size_t n, size_t trials, double p_spike, double spike,
                                 uint64_t seed, double *ols_coverage)
{
    dkb_rng r;
    dkb_rng_seed(&r, seed);
    double x[200], y[200];
    size_t covered = 0, ols_covered = 0;
    for (size_t t = 0; t < trials; t++) {
        preempted_samples(&r, n, 3, 500, 12.5, 40, p_spike, spike, x, y);
        dkb_interval ci;
        CHECK(dkb_theil_sen(x, y, n, 0.95, &ci, NULL));
        covered += ci.lo <= 12.5 && 12.5 <= ci.hi;
        if (ols_coverage != NULL) {
            CHECK(dkb_slope_ci(x, y, n, 200, seed + t, 0.95, &ci));
            ols_covered += ci.lo <= 12.5 && 12.5 <= ci.hi;
        }
    }
    if (ols_coverage != NULL)
        *ols_coverage = (double)ols_covered / (double)trials;
    return (double)covered / (double)trials;
}

TEST_CASE(theil_sen_ci_covers_the_truth_95_percent_of_the_time)
{
    double c = theil_sen_coverage(100, 1000, 0, 0, 2024, NULL);
    fprintf(stderr, "Theil-Sen coverage, Gaussian noise: %.3f\n", c);
    CHECK_DBL(c, >=, 0.93);
    CHECK_DBL(c, <=, 0.97);
}

TEST_CASE(theil_sen_ci_keeps_its_coverage_under_preemption_spikes)
{
    /* 5% of samples carry a spike of 100 to 300 sigma (a few ms on a
     * sample of a few ms): the OLS bootstrap's interval is pulled and
     * widened by them, the Theil-Sen interval still holds the truth 95%
     * of the time, and at 40 samples too (where the stop rule often ends). */
    double ols;
    double c = theil_sen_coverage(100, 1000, 0.05, 4000, 77, &ols);
    fprintf(stderr,
            "preemption-like noise, 100 samples: Theil-Sen coverage %.3f, OLS bootstrap "
            "%.3f\n",
            c, ols);
    CHECK_DBL(c, >=, 0.93);
    CHECK_DBL(c, <=, 0.97);
    c = theil_sen_coverage(40, 1000, 0.05, 4000, 78, NULL);
    fprintf(stderr, "preemption-like noise, 40 samples: Theil-Sen coverage %.3f\n", c);
    CHECK_DBL(c, >=, 0.93);
    CHECK_DBL(c, <=, 0.97);
}


TEST_MAIN()
