/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_stats.c - the running moments of repeated runs and the median
 * (src/common/stats_moments.c), against a two-pass reference computed in
 * long double; the bootstraps' refusal of more resamples than memory holds.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "common/error.h"
#include "common/stats.h"

typedef struct reference {
    long double mean, variance, rel_stddev_mean;
} reference;

static reference two_pass(const double *v, size_t n)
{
    reference r = {0, 0, 0};
    for (size_t i = 0; i < n; i++)
        r.mean += v[i];
    r.mean /= (long double)n;
    for (size_t i = 0; i < n; i++)
        r.variance += (v[i] - r.mean) * (v[i] - r.mean);
    r.variance /= (long double)(n - 1);
    r.rel_stddev_mean = sqrtl(r.variance / (long double)n) / r.mean * 100;
    return r;
}

/* The textbook one-pass formula, from a sum and a sum of squares. */
static double naive_variance(const double *v, size_t n)
{
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        sum += v[i];
        sq += v[i] * v[i];
    }
    return (sq - sum * sum / (double)n) / (double)(n - 1);
}

static dkb_moments of(const double *v, size_t n)
{
    dkb_moments s;
    dkb_moments_init(&s);
    for (size_t i = 0; i < n; i++)
        dkb_moments_add(&s, v[i]);
    return s;
}

#define CHECK_CLOSE(got, want, rel)                                                           \
    do {                                                                                      \
        long double g_ = (got), w_ = (want);                                                  \
        if (!(fabsl(g_ - w_) <= (rel)*fabsl(w_)))                                             \
            DKT_FAIL("CHECK failed: %s close to %s (%.12Lg vs %.12Lg)", #got, #want, g_, w_); \
    } while (0)

static void check_against_reference(const double *v, size_t n)
{
    dkb_moments s = of(v, n);
    reference r = two_pass(v, n);
    CHECK_INT(s.n, ==, n);
    CHECK_CLOSE(dkb_moments_get(&s, DKB_MOMENT_MEAN), r.mean, 1e-15L);
    CHECK_CLOSE(dkb_moments_get(&s, DKB_MOMENT_VARIANCE), r.variance, 1e-9L);
    CHECK_CLOSE(dkb_moments_get(&s, DKB_MOMENT_STDDEV), sqrtl(r.variance), 1e-9L);
    CHECK_CLOSE(dkb_moments_get(&s, DKB_MOMENT_STDDEV_MEAN), sqrtl(r.variance / (long double)n),
                1e-9L);
    CHECK_CLOSE(dkb_moments_get(&s, DKB_MOMENT_REL_STDDEV_MEAN), r.rel_stddev_mean, 1e-9L);
}

/* dkperf stat -r 10 of a command counting 1.2e10 events, +-500 a run. */
TEST_CASE(large_counts_keep_their_spread)
{
    static const int delta[10] = {500, -500, 400, -400, 300, -300, 200, -200, 100, -100};
    double v[10];
    for (size_t i = 0; i < 10; i++)
        v[i] = 12e9 + delta[i];
    /* The data is hard: the one-pass formula is more than 10% off here. */
    reference r = two_pass(v, 10);
    CHECK(fabsl(naive_variance(v, 10) - r.variance) > 0.1L * r.variance);
    check_against_reference(v, 10);
    /* sqrt(1100000 / 9 / 10) / 1.2e10 * 100 */
    dkb_moments s = of(v, 10);
    CHECK_CLOSE(dkb_moments_get(&s, DKB_MOMENT_REL_STDDEV_MEAN), 9.2128466398761e-7L, 1e-9L);
}

/* Counts so close that the one-pass variance comes out negative. */
TEST_CASE(nearly_equal_counts_never_give_a_negative_variance)
{
    const double v[5] = {50000000000.0, 50000000002.0, 50000000002.0, 50000000002.0, 50000000000.0};
    CHECK(naive_variance(v, 5) < 0); /* the case the old formula printed as +- 0.00% */
    dkb_moments s = of(v, 5);
    CHECK(dkb_moments_get(&s, DKB_MOMENT_VARIANCE) > 0);
    check_against_reference(v, 5);
    CHECK_CLOSE(dkb_moments_get(&s, DKB_MOMENT_VARIANCE), 1.2L, 1e-9L);
}

TEST_CASE(small_samples)
{
    dkb_moments s;
    dkb_moments_init(&s);
    for (int k = DKB_MOMENT_MEAN; k <= DKB_MOMENT_REL_STDDEV_MEAN; k++)
        CHECK(dkb_moments_get(&s, (dkb_moment)k) == 0);
    dkb_moments_add(&s, 42);
    CHECK(dkb_moments_get(&s, DKB_MOMENT_MEAN) == 42);
    CHECK(dkb_moments_get(&s, DKB_MOMENT_STDDEV) == 0);
    CHECK(dkb_moments_get(&s, DKB_MOMENT_REL_STDDEV_MEAN) == 0);
    const double v[8] = {2, 4, 4, 4, 5, 5, 7, 9};
    s = of(v, 8);
    CHECK(dkb_moments_get(&s, DKB_MOMENT_MEAN) == 5);
    CHECK_CLOSE(dkb_moments_get(&s, DKB_MOMENT_VARIANCE), 32.0L / 7, 1e-15L);
    check_against_reference(v, 8);
    /* No relative spread of a mean that is not positive. */
    const double z[3] = {-1, 0, 1};
    s = of(z, 3);
    CHECK(dkb_moments_get(&s, DKB_MOMENT_STDDEV) == 1);
    CHECK(dkb_moments_get(&s, DKB_MOMENT_REL_STDDEV_MEAN) == 0);
}

TEST_CASE(median)
{
    double odd[5] = {9, 1, 5, 3, 7}, even[4] = {4, 1, 3, 2}, one[1] = {6};
    CHECK(dkb_median(odd, 5) == 5);
    CHECK(dkb_median(even, 4) == 2.5);
    CHECK(dkb_median(one, 1) == 6);
    /* No values, no median: NaN, as every quantile of none (stats.h). */
    CHECK(isnan(dkb_median(NULL, 0)));
    CHECK(isnan(dkb_quantile_sorted(odd, 0, 0.5)));
    CHECK(odd[0] == 1 && odd[4] == 9); /* sorted in place */
}

/* A resample count past what memory can hold is refused by every bootstrap
 * with one message naming the values and the resamples, not an overflowed
 * allocation. */
TEST_CASE(resamples_past_memory_are_refused_naming_both_counts)
{
    const double x[] = {1, 2, 3, 4}, y[] = {2, 4, 6, 9}, five[] = {1, 2, 3, 4, 5};
    const size_t huge = SIZE_MAX / sizeof(double) - 3;
    char want[128];
    dkb_interval ci;
    dkb_summary s;
    dkb_change c;
#define TOO_MANY(call, values)                                                           \
    do {                                                                                 \
        CHECK(!(call));                                                                  \
        snprintf(want, sizeof want, "%zu values and %zu resamples do not fit in memory", \
                 (size_t)(values), huge);                                                \
        CHECK_CONTAINS(dkb_last_error(), want);                                          \
    } while (0)
    TOO_MANY(dkb_slope_ci(x, y, 4, huge, 1, 0.95, &ci), 8);
    TOO_MANY(dkb_summarize(x, 4, huge, 1, 0.95, &s), 8);
    TOO_MANY(dkb_median_ci(x, 4, huge, 1, 0.95, &ci), 4);
    TOO_MANY(dkb_change_test(x, 4, y, 3, 0.01, 0.05, huge, 1, &c), 7);
    TOO_MANY(dkb_change_test_median(five, 5, five, 5, 0.01, 0.05, huge, 1, &c), 10);
    TOO_MANY(dkb_ratio(x, y, 4, huge, 1, 0.95, &ci), 4);
#undef TOO_MANY
}

TEST_MAIN()
