/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_summary.c - dkperf bench's statistics (tools/common/summary.c),
 * against hand-computed values.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "common/stats.h"
#include "summary.h"

#define CLOSE(a, b) CHECK(fabs((double)(a) - (double)(b)) < 1e-9)

TEST_CASE(quantiles_and_tukey_fences)
{
    /* Sorted: q1 = 3 + 0.75 (4 - 3) = 3.75, q3 = 9 + 0.25 (10 - 9) = 9.25,
     * IQR 5.5: mild beyond 17.5, severe beyond 25.75: 20 is mild, 100 severe. */
    const double v[12] = {100, 5, 1, 9, 2, 20, 3, 10, 4, 8, 6, 7};
    summary s;
    CHECK(summary_of(v, 12, &s) == 0);
    CHECK(s.n == 12);
    CLOSE(s.q1, 3.75);
    CLOSE(s.q3, 9.25);
    CLOSE(s.median, 6.5);
    CLOSE(s.min, 1);
    CLOSE(s.max, 100);
    CLOSE(s.mean, 175.0 / 12);
    CHECK(s.mild == 1);
    CHECK(s.severe == 1);
    CHECK(v[0] == 100); /* the input is left as it was */
    const double low[12] = {-100, 5, 1, 9, 2, 20, 3, 10, 4, 8, 6, 7};
    CHECK(summary_of(low, 12, &s) == 0);
    CHECK(s.severe == 1 && s.mild == 1); /* below the lower fence counts too */
    const double flat[4] = {3, 3, 3, 3};
    CHECK(summary_of(flat, 4, &s) == 0);
    CHECK(s.mild == 0 && s.severe == 0 && s.stddev == 0);
    CHECK(summary_of(NULL, 0, &s) == 0);
    CHECK(s.n == 0 && s.mean == 0);
    const double sorted[5] = {1, 2, 3, 4, 5};
    CLOSE(dkb_quantile_sorted(sorted, 5, 0.1), 1.4);
    CLOSE(dkb_quantile_sorted(sorted, 5, 1), 5);
    CLOSE(dkb_quantile_sorted(sorted, 5, 0), 1);
}

TEST_CASE(ratio_propagates_relative_errors)
{
    summary a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.mean = 2, a.stddev = 0.2, b.mean = 6, b.stddev = 0.3;
    double sigma, r = summary_ratio(&a, &b, &sigma);
    CLOSE(r, 3);
    CLOSE(sigma, 3 * sqrt(0.01 + 0.0025));
    a.mean = 0;
    CHECK(summary_ratio(&a, &b, &sigma) == 0 && sigma == 0);
}

TEST_CASE(change_needs_two_standard_errors_and_one_percent)
{
    summary base, now;
    memset(&base, 0, sizeof base);
    memset(&now, 0, sizeof now);
    base.n = now.n = 10;
    base.mean = 100, base.stddev = now.stddev = 1;
    double pct;
    now.mean = 100.5; /* 2 SE = 2 sqrt(0.2) = 0.89 */
    CHECK(summary_change(&base, &now, &pct) == SUMMARY_WITHIN_NOISE);
    CLOSE(pct, 0.5);
    now.mean = 103;
    CHECK(summary_change(&base, &now, &pct) == SUMMARY_INCREASED);
    CLOSE(pct, 3);
    now.mean = 97;
    CHECK(summary_change(&base, &now, &pct) == SUMMARY_DECREASED);
    /* Far beyond the noise but under 1%: not a change. */
    base.stddev = now.stddev = 0.001;
    now.mean = 100.9;
    CHECK(summary_change(&base, &now, &pct) == SUMMARY_WITHIN_NOISE);
    now.mean = 101.1;
    CHECK(summary_change(&base, &now, &pct) == SUMMARY_INCREASED);
}

TEST_MAIN()
