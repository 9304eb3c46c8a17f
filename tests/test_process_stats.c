/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_process_stats.c - Student's t and the tests whose unit is a
 * process (src/common/stats_process.c): table values, hand-computed
 * summaries, and the calibration of the change tests on seeded synthetic
 * processes (deterministic, so never flaky).
 */
#include <math.h>

#include "common/error.h"
#include "common/stats.h"
#include "check.h"

#define PI 3.14159265358979323846

static double uniform01(dkb_rng *r) { return ((double)(dkb_rng_next(r) >> 11) + 1) * 0x1p-53; }

static double gauss(dkb_rng *r)
{
    double u1 = uniform01(r), u2 = uniform01(r);
    return sqrt(-2 * log(u1)) * cos(2 * PI * u2);
}

/* A process's estimate under a law seen on a real machine: one of two
 * modes (83.5 two times in three, 86.9 otherwise, as a frequency or a
 * placement decides per process), times a small jitter. */
static double bimodal(dkb_rng *r)
{
    double mode = dkb_rng_below(r, 3) < 2 ? 83.5 : 86.9;
    return mode * (1 + 0.002 * gauss(r));
}

TEST_CASE(t_quantile_matches_the_table)
{
    CHECK_NEAR(dkb_t_quantile(0.975, 1), 12.7062, 5e-5);
    CHECK_NEAR(dkb_t_quantile(0.975, 4), 2.7764, 5e-5);
    CHECK_NEAR(dkb_t_quantile(0.975, 9), 2.2622, 5e-5);
    CHECK_NEAR(dkb_t_quantile(0.975, 30), 2.0423, 5e-5);
    CHECK_NEAR(dkb_t_quantile(0.975, 1e7), 1.95996, 5e-6);
    /* Cauchy (df 1) in closed form, far in the tail too. */
    CHECK_NEAR(dkb_t_quantile(0.975, 1), tan(PI * 0.475), 1e-10 * 12.7);
    CHECK_NEAR(dkb_t_quantile(1e-9, 1) * -tan(PI * 1e-9), 1, 1e-10); /* -cot(pi p) */
    /* df 2 in closed form: t = (2p - 1) sqrt(2 / (4p(1 - p))). */
    double p = 0.9;
    CHECK_NEAR(dkb_t_quantile(p, 2), (2 * p - 1) * sqrt(2 / (4 * p * (1 - p))), 1e-12);
    CHECK(dkb_t_quantile(0.5, 3) == 0);
    CHECK(dkb_t_quantile(0.25, 4) == -dkb_t_quantile(0.75, 4)); /* 1 - 0.75 is exact */
    CHECK_NEAR(dkb_t_quantile(0.025, 4), -dkb_t_quantile(0.975, 4), 1e-13);
    CHECK(dkb_t_quantile(0.2, 7.5) < 0);
    CHECK(isnan(dkb_t_quantile(0, 3)) && isnan(dkb_t_quantile(1, 3)));
    CHECK(isnan(dkb_t_quantile(NAN, 3)) && isnan(dkb_t_quantile(0.5, 0)));
    CHECK(isnan(dkb_t_quantile(0.9, -1)) && isnan(dkb_t_quantile(0.9, NAN)));
}

TEST_CASE(t_cdf_inverts_the_quantile)
{
    static const double dfs[] = {0.5, 1, 2.5, 3, 7.3, 29.5, 100, 1e4};
    static const double ps[] = {1e-8, 0.001, 0.025, 0.3, 0.5, 0.7, 0.975, 0.999};
    for (size_t i = 0; i < sizeof dfs / sizeof dfs[0]; i++)
        for (size_t j = 0; j < sizeof ps / sizeof ps[0]; j++)
            CHECK_NEAR(dkb_t_cdf(dkb_t_quantile(ps[j], dfs[i]), dfs[i]) / ps[j], 1, 1e-10);
    /* Closed forms: Cauchy, and df 2's P = 1/2 + t / (2 sqrt(2 + t^2)). */
    CHECK_NEAR(dkb_t_cdf(3, 1), 0.5 + atan(3) / PI, 1e-14);
    CHECK_NEAR(dkb_t_cdf(-1e200, 1) / (1 / (PI * 1e200)), 1, 1e-10);
    CHECK_NEAR(dkb_t_cdf(-0.7, 2), 0.5 - 0.7 / (2 * sqrt(2 + 0.49)), 1e-14);
    /* Fractional df lies between its integer neighbours. */
    CHECK(dkb_t_cdf(-2, 3) > dkb_t_cdf(-2, 3.5) && dkb_t_cdf(-2, 3.5) > dkb_t_cdf(-2, 4));
    CHECK(dkb_t_cdf(0, 5) == 0.5);
    CHECK(dkb_t_cdf(INFINITY, 5) == 1 && dkb_t_cdf(-INFINITY, 5) == 0);
    CHECK_NEAR(dkb_t_cdf(1.3, 6) + dkb_t_cdf(-1.3, 6), 1, 1e-15);
    CHECK(isnan(dkb_t_cdf(NAN, 3)) && isnan(dkb_t_cdf(1, 0)) && isnan(dkb_t_cdf(1, NAN)));
}

TEST_CASE(process_summary_by_hand)
{
    /* mean 10, deviations -2 0 2 0: s^2 = 8/3. */
    const double est[] = {8, 10, 12, 10};
    dkb_process_summary s;
    CHECK(dkb_process_summarize(est, NULL, 4, 0.95, &s));
    CHECK_INT(s.n, ==, 4);
    CHECK_NEAR(s.ci.point, 10, 1e-15);
    CHECK_NEAR(s.stddev, sqrt(8.0 / 3), 1e-14);
    double w = 3.182446305284263 * sqrt(8.0 / 3) / 2; /* t(0.975, 3) s / sqrt(4) */
    CHECK_NEAR(s.ci.lo, 10 - w, 1e-12);
    CHECK_NEAR(s.ci.hi, 10 + w, 1e-12);
    /* Two such runs: Welch's t on 2n - 2 = 6 degrees of freedom,
     * t(0.975, 6) sqrt(2) s / (sqrt(4) 10). */
    CHECK_NEAR(s.resolution, exp(2.446911851144969 * sqrt(2.0) * sqrt(8.0 / 3) / 20) - 1, 1e-12);
    /* Without halves nothing is known within a process: all between. */
    CHECK(s.within_var == 0 && s.between_share == 1);
    /* Halves of 1.959964 * 1 and * sqrt(3): within variances 1 and 3. */
    const double half[] = {1.959964, 1.959964 * sqrt(3), 1.959964, 1.959964 * sqrt(3)};
    CHECK(dkb_process_summarize(est, half, 4, 0.95, &s));
    CHECK_NEAR(s.within_var, 2, 1e-12);
    CHECK_NEAR(s.between_share, (8.0 / 3 - 2) / (8.0 / 3), 1e-12);
    /* More spread within than between: no share between. */
    const double wide[] = {10, 10, 10, 10};
    CHECK(dkb_process_summarize(est, wide, 4, 0.95, &s) && s.between_share == 0);
    /* A confidence of 0.5: t(0.75, 3). */
    CHECK(dkb_process_summarize(est, NULL, 4, 0.5, &s));
    CHECK_NEAR(s.ci.hi - 10, 0.7648923284 * sqrt(8.0 / 3) / 2, 1e-9);
    /* Equal estimates: width 0, share 0. */
    const double same[] = {5, 5, 5};
    CHECK(dkb_process_summarize(same, NULL, 3, 0.95, &s));
    CHECK(s.ci.lo == 5 && s.ci.hi == 5 && s.stddev == 0 && s.between_share == 0);
    CHECK(s.resolution == 0);
    /* A mean of 0: no relative change to resolve. */
    const double around0[] = {-1, 1};
    CHECK(dkb_process_summarize(around0, NULL, 2, 0.95, &s) && isnan(s.resolution));
}

TEST_CASE(process_summary_rejects_bad_input)
{
    const double est[] = {8, 10, NAN};
    const double half[] = {1, -1, 1};
    dkb_process_summary s;
    CHECK(!dkb_process_summarize(est, NULL, 1, 0.95, &s));
    CHECK_CONTAINS(dkb_last_error(), "1 estimates; at least 2");
    CHECK(s.n == 0 && s.ci.point == 0);
    CHECK(!dkb_process_summarize(NULL, NULL, 3, 0.95, &s));
    CHECK_CONTAINS(dkb_last_error(), "array is NULL");
    CHECK(!dkb_process_summarize(est, NULL, 3, 0.95, &s));
    CHECK_CONTAINS(dkb_last_error(), "NaN or an infinity");
    CHECK(!dkb_process_summarize(est, half, 2, 0.95, &s));
    CHECK_CONTAINS(dkb_last_error(), "half-width -1 of process 1");
    CHECK(!dkb_process_summarize(est, NULL, 2, 1, &s));
    CHECK_CONTAINS(dkb_last_error(), "confidence 1 is not strictly between 0 and 1");
    CHECK(!dkb_process_summarize(est, NULL, 2, 0, &s));
    CHECK_CONTAINS(dkb_last_error(), "confidence 0 is not");
    const double huge[] = {-1e308, 1e308};
    CHECK(!dkb_process_summarize(huge, NULL, 2, 0.95, &s));
    CHECK_CONTAINS(dkb_last_error(), "not finite");
    CHECK(!dkb_process_summarize(est, NULL, 2, 0.95, NULL));
}

enum { TRIALS = 2000, SIDE = 10 };

/* Null trials of dkb_change_processes on processes drawn by law (a
 * normal noise of 1% when bimodal is false): how many had p < 0.05, and
 * how many were called improved or regressed under a 1% threshold. */
static void null_trials(bool law_bimodal, uint64_t seed, size_t *significant, size_t *called)
{
    dkb_rng r;
    dkb_rng_seed(&r, seed);
    *significant = *called = 0;
    for (int t = 0; t < TRIALS; t++) {
        double o[SIDE], w[SIDE];
        for (int i = 0; i < SIDE; i++) {
            o[i] = law_bimodal ? bimodal(&r) : 100 * (1 + 0.01 * gauss(&r));
            w[i] = law_bimodal ? bimodal(&r) : 100 * (1 + 0.01 * gauss(&r));
        }
        dkb_change c;
        if (!dkb_change_processes(o, SIDE, w, SIDE, 0.01, 0.05, &c)) {
            DKT_FAIL("trial %d: %s", t, dkb_last_error());
            return;
        }
        *significant += c.p_value < 0.05;
        *called += c.verdict == DKB_IMPROVED || c.verdict == DKB_REGRESSED;
    }
}

TEST_CASE(change_processes_is_calibrated_under_the_null)
{
    size_t sig, called;
    null_trials(false, 11, &sig, &called);
    CHECK_INT(sig, >=, TRIALS * 3 / 100);
    CHECK_INT(sig, <=, TRIALS * 7 / 100);
    CHECK_INT(called, <=, TRIALS * 5 / 100);
    null_trials(true, 12, &sig, &called);
    CHECK_INT(sig, <=, TRIALS * 8 / 100);
    CHECK_INT(called, <=, TRIALS * 5 / 100);
}

TEST_CASE(change_processes_finds_a_shift_and_says_when_it_cannot)
{
    dkb_rng r;
    dkb_rng_seed(&r, 21);
    size_t regressed = 0;
    for (int t = 0; t < 500; t++) {
        double o[SIDE], w[SIDE];
        for (int i = 0; i < SIDE; i++) {
            o[i] = bimodal(&r);
            w[i] = 1.05 * bimodal(&r);
        }
        dkb_change c;
        CHECK(dkb_change_processes(o, SIDE, w, SIDE, 0.01, 0.05, &c));
        regressed += c.verdict == DKB_REGRESSED;
    }
    CHECK_INT(regressed, >=, 475);
    /* A 0.2% shift under 2% noise: too small to see, and the test says
     * that it could not have seen a change of the 1% threshold. */
    size_t unresolved = 0;
    for (int t = 0; t < 500; t++) {
        double o[SIDE], w[SIDE];
        for (int i = 0; i < SIDE; i++) {
            o[i] = 100 * (1 + 0.02 * gauss(&r));
            w[i] = 100.2 * (1 + 0.02 * gauss(&r));
        }
        dkb_change c;
        CHECK(dkb_change_processes(o, SIDE, w, SIDE, 0.01, 0.05, &c));
        if (c.verdict == DKB_UNRESOLVED) {
            unresolved++;
            /* Not significant, or significant with an interval reaching
             * both inside and past the threshold. */
            CHECK(c.resolution > 0.01);
            CHECK(c.p_value >= 0.05 || (c.rel.lo <= 0.01 && c.rel.hi > 0.01) ||
                  (c.rel.lo < -0.01 && c.rel.hi >= -0.01));
        }
        CHECK(c.rel.lo < c.rel.point && c.rel.point < c.rel.hi);
    }
    CHECK_INT(unresolved, >=, 400);
}

/* A significant change whose interval reaches from inside the noise
 * threshold to well past it does not say "within noise": it cannot be
 * resolved here. A narrow one that touches the threshold is within noise. */
TEST_CASE(a_significant_change_wider_than_the_threshold_is_unresolved)
{
    const double o[] = {100, 101, 99, 100.5, 99.5}, w[] = {103.5, 111, 101.5, 107, 103};
    dkb_change c;
    CHECK(dkb_change_processes(o, 5, w, 5, 0.01, 0.05, &c));
    CHECK(c.p_value < 0.05);
    CHECK(c.rel.lo < 0.01 && c.rel.hi > 0.01);
    CHECK(c.resolution > 0.01);
    CHECK_INT(c.verdict, ==, DKB_UNRESOLVED);
    const double w2[] = {100.9, 101.0, 101.1, 100.95, 101.05},
                 o2[] = {100, 100.05, 99.95, 100.02, 99.98};
    CHECK(dkb_change_processes(o2, 5, w2, 5, 0.01, 0.05, &c));
    CHECK(c.p_value < 0.05 && c.resolution <= 0.01);
    CHECK(c.rel.lo <= 0.01 && c.rel.hi > 0.01);
    CHECK_INT(c.verdict, ==, DKB_WITHIN_NOISE);
}

TEST_CASE(change_processes_by_hand)
{
    /* Means 10 and 11, variances 2 and 4: v = 2/(2*100), 4/(3*121). */
    const double o[] = {9, 11}, w[] = {9, 11, 13};
    dkb_change c;
    CHECK(dkb_change_processes(o, 2, w, 3, 0.01, 0.05, &c));
    double vo = 2.0 / 200, vn = 4.0 / 363, se2 = vo + vn;
    double df = se2 * se2 / (vo * vo / 1 + vn * vn / 2), d = log(1.1);
    double half = dkb_t_quantile(0.975, df) * sqrt(se2);
    CHECK_NEAR(c.rel.point, 0.1, 1e-14);
    CHECK_NEAR(c.rel.lo, exp(d - half) - 1, 1e-12);
    CHECK_NEAR(c.rel.hi, exp(d + half) - 1, 1e-12);
    CHECK_NEAR(c.resolution, exp(half) - 1, 1e-12);
    CHECK_NEAR(c.p_value, 2 * dkb_t_cdf(-d / sqrt(se2), df), 1e-14);
    CHECK(c.verdict == DKB_UNRESOLVED);
    /* One side exact: the df of the other side's term, n - 1 = 2. */
    const double exact[] = {10, 10};
    CHECK(dkb_change_processes(exact, 2, w, 3, 0.01, 0.05, &c));
    CHECK_NEAR(c.resolution, exp(dkb_t_quantile(0.975, 2) * sqrt(vn)) - 1, 1e-12);
}

TEST_CASE(change_processes_of_exact_values)
{
    const double a[] = {1000, 1000, 1000}, b[] = {1000, 1000}, c2[] = {1020, 1020};
    dkb_change c;
    CHECK(dkb_change_processes(a, 3, b, 2, 0.01, 0.05, &c));
    CHECK(c.p_value == 1 && c.verdict == DKB_NO_CHANGE && c.resolution == 0);
    CHECK(c.rel.point == 0 && c.rel.lo == 0 && c.rel.hi == 0);
    CHECK(dkb_change_processes(a, 3, c2, 2, 0.01, 0.05, &c));
    CHECK(c.p_value == 0 && c.verdict == DKB_REGRESSED && c.resolution == 0);
    CHECK_NEAR(c.rel.lo, 0.02, 1e-14);
    CHECK(c.rel.lo == c.rel.hi);
    CHECK(dkb_change_processes(c2, 2, a, 3, 0.01, 0.05, &c) && c.verdict == DKB_IMPROVED);
    CHECK(dkb_change_processes(a, 3, c2, 2, 0.05, 0.05, &c) && c.verdict == DKB_WITHIN_NOISE);
    CHECK(dkb_change_paired(b, b, 2, 0.01, 0.05, &c));
    CHECK(c.p_value == 1 && c.verdict == DKB_NO_CHANGE && c.resolution == 0);
    CHECK(dkb_change_paired(b, c2, 2, 0.01, 0.05, &c));
    CHECK(c.p_value == 0 && c.verdict == DKB_REGRESSED);
}

TEST_CASE(change_paired_cancels_drift_common_to_a_pair)
{
    dkb_rng r;
    dkb_rng_seed(&r, 31);
    size_t paired_found = 0, unpaired_found = 0;
    for (int t = 0; t < 200; t++) {
        double o[SIDE], w[SIDE];
        for (int k = 0; k < SIDE; k++) {
            double drift = 1 + 0.2 * uniform01(&r); /* the machine, up to 20% slower */
            o[k] = 100 * drift * (1 + 0.003 * gauss(&r));
            w[k] = 102 * drift * (1 + 0.003 * gauss(&r));
        }
        dkb_change c;
        CHECK(dkb_change_paired(o, w, SIDE, 0.01, 0.05, &c));
        paired_found += c.verdict == DKB_REGRESSED;
        CHECK(dkb_change_processes(o, SIDE, w, SIDE, 0.01, 0.05, &c));
        unpaired_found += c.verdict == DKB_REGRESSED;
    }
    CHECK_INT(paired_found, >=, 190);
    CHECK_INT(unpaired_found, <=, 20); /* the drift hides it from the unpaired test */
}

/* A few pairs whose baseline process landed 40% slower (a placement some
 * processes get) do not turn a 2% slowdown into a speed-up: the paired
 * test trims 20% of the log ratios from each end. */
TEST_CASE(change_paired_is_not_moved_by_a_few_slow_processes)
{
    dkb_rng r;
    dkb_rng_seed(&r, 41);
    enum { N = 100 };
    double o[N], w[N];
    for (int k = 0; k < N; k++) {
        o[k] = 100 * (1 + 0.005 * gauss(&r)) * (k < 8 ? 1.4 : 1);
        w[k] = 102 * (1 + 0.005 * gauss(&r));
    }
    dkb_change c;
    CHECK(dkb_change_paired(o, w, N, 0.01, 0.05, &c));
    CHECK(c.rel.point > 0.015 && c.rel.point < 0.025);
    CHECK_INT(c.verdict, ==, DKB_REGRESSED);
    /* Four pairs: nothing trimmed, the paired t test of the mean. */
    const double a[] = {100, 101, 99, 100}, b[] = {102, 103, 101, 102.5};
    CHECK(dkb_change_paired(a, b, 4, 0.01, 0.05, &c));
    double l[4], m = 0, ss = 0;
    for (int k = 0; k < 4; k++)
        m += (l[k] = log(b[k] / a[k])) / 4;
    for (int k = 0; k < 4; k++)
        ss += (l[k] - m) * (l[k] - m);
    CHECK_NEAR(c.rel.point, exp(m) - 1, 1e-12);
    CHECK_NEAR(c.resolution, exp(dkb_t_quantile(0.975, 3) * sqrt(ss / 3 / 4)) - 1, 1e-12);
}

/* Pairs whose kept log ratios tie while the cut ones do not are no exact
 * values: the test keeps every pair (the paired t test), and its interval
 * has the spread of the pairs. Equal ratios throughout stay exact. */
TEST_CASE(change_paired_of_tied_middle_ratios_is_not_exact)
{
    const double o[] = {100, 100, 100, 100, 100}, w[] = {90, 102, 102, 102, 150};
    dkb_change c;
    CHECK(dkb_change_paired(o, w, 5, 0.01, 0.05, &c));
    double l[5], m = 0, ss = 0;
    for (int k = 0; k < 5; k++)
        m += (l[k] = log(w[k] / o[k])) / 5;
    for (int k = 0; k < 5; k++)
        ss += (l[k] - m) * (l[k] - m);
    CHECK(c.p_value > 0.05 && c.resolution > 0.1);
    CHECK_NEAR(c.rel.point, exp(m) - 1, 1e-12);
    CHECK_NEAR(c.resolution, exp(dkb_t_quantile(0.975, 4) * sqrt(ss / 4 / 5)) - 1, 1e-12);
    const double same[] = {102, 102, 102, 102, 102};
    CHECK(dkb_change_paired(o, same, 5, 0.01, 0.05, &c));
    CHECK(c.p_value == 0 && c.resolution == 0 && c.verdict == DKB_REGRESSED);
}

TEST_CASE(change_tests_reject_bad_input)
{
    const double ok[] = {10, 11, 12}, one[] = {10}, nan_[] = {10, NAN}, inf_[] = {INFINITY, 1};
    const double neg[] = {-10, -11}, zero_pair[] = {10, 0};
    dkb_change c;
    CHECK(!dkb_change_processes(one, 1, ok, 3, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "1 baseline estimates; at least 2");
    CHECK(!dkb_change_processes(ok, 3, one, 1, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "1 new estimates; at least 2");
    CHECK(!dkb_change_processes(nan_, 2, ok, 3, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "NaN or an infinity");
    CHECK(!dkb_change_processes(ok, 3, inf_, 2, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "new estimates include a NaN or an infinity");
    CHECK(!dkb_change_processes(neg, 2, ok, 3, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "needs both positive");
    CHECK(!dkb_change_processes(ok, 3, neg, 2, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "-10.5 (new)");
    CHECK(!dkb_change_processes(ok, 3, ok, 3, 0.01, 0, &c));
    CHECK_CONTAINS(dkb_last_error(), "significance 0 is not strictly between 0 and 1");
    CHECK(!dkb_change_processes(ok, 3, ok, 3, 0.01, 1.5, &c));
    CHECK_CONTAINS(dkb_last_error(), "significance 1.5");
    CHECK(!dkb_change_processes(ok, 3, ok, 3, -0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "noise threshold -0.01");
    CHECK(!dkb_change_processes(ok, 3, ok, 3, NAN, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "noise threshold nan");
    CHECK(c.p_value == 0 && c.verdict == DKB_NO_CHANGE && c.resolution == 0);
    const double tiny[] = {1e-300, 2e-300}, huge[] = {1e300, 2e300};
    CHECK(!dkb_change_processes(tiny, 2, huge, 2, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "not finite");
    CHECK(!dkb_change_processes(ok, 3, ok, 3, 0.01, 0.05, NULL));

    CHECK(!dkb_change_paired(one, one, 1, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "dkb_change_paired: 1 baseline estimates; at least 2");
    CHECK(!dkb_change_paired(ok, nan_, 2, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "NaN or an infinity");
    CHECK(!dkb_change_paired(ok, zero_pair, 2, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "pair 1 is (11, 0); a ratio needs positive values");
    CHECK(!dkb_change_paired(neg, ok, 2, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "pair 0 is (-10, 10)");
    CHECK(!dkb_change_paired(ok, ok, 3, 0.01, 1, &c));
    CHECK_CONTAINS(dkb_last_error(), "significance 1 is not");
    CHECK(!dkb_change_paired(ok, ok, 3, -1, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "noise threshold -1");
    CHECK(!dkb_change_paired(NULL, ok, 3, 0.01, 0.05, &c));
    CHECK_CONTAINS(dkb_last_error(), "array is NULL");
}

TEST_MAIN()
