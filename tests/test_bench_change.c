/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_change.c - libdkbench's change against a baseline: of the
 * per-iteration cost, not moved by disturbed or preempted samples, and
 * not computed from too few values or from a null one.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "libdkbench/compare.h"
#include "libdkbench/model.h"
#include "bench_fixtures.h"
#include "check.h"

/* Two runs of the same code on different iteration counts: a per-sample
 * cost (the counter reads) spread over fewer iterations is not a change
 * of the per-iteration cost. */
TEST_CASE(change_is_of_the_per_iteration_cost_not_the_per_sample_cost)
{
    dkb_result old, cur;
    line_result(&old, 10, 50000, 2000, 0.002);
    line_result(&cur, 37, 50000, 2000, 0.002);
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 1000, 7), ==, 2);
    const dkb_measure *ins = &cur.m[1];
    CHECK(ins->has_change);
    /* Exact counts on the same line: no change at all. */
    CHECK(ins->change.rel.point == 0);
    CHECK_INT(ins->change.verdict, ==, DKB_NO_CHANGE);
    CHECK(ins->baseline_slope == 2000);
    CHECK(fabs(cur.m[0].change.rel.point) < 0.002);
    CHECK(cur.m[0].change.verdict != DKB_REGRESSED && cur.m[0].change.verdict != DKB_IMPROVED);
    /* A real 5% increase of the per-iteration cost is found. */
    dkb_result slower;
    line_result(&slower, 37, 50000, 2100, 0.002);
    dkb_compare_baseline(&slower, &old, 0.01, 1000, 7);
    CHECK_INT(slower.m[1].change.verdict, ==, DKB_REGRESSED);
    CHECK(fabs(slower.m[1].change.rel.point - 0.05) < 1e-9);
    CHECK_INT(slower.m[0].change.verdict, ==, DKB_REGRESSED);
    dkb_result_free(&old);
    dkb_result_free(&cur);
    dkb_result_free(&slower);
}

/* Samples a disturbance moved that were not seen as preempted (the backend
 * does not count switches, or an interrupt or the host took the time): the
 * Theil-Sen answer ignores them, and so must the change of that answer.
 * The same code run twice, the baseline with 4 of its 40 samples late by
 * 0.2 to 0.8 ms, is no change, not a 30% improvement. */
TEST_CASE(change_of_time_is_not_moved_by_disturbed_samples_the_answer_ignores)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    for (size_t i = 1; i < old.n_samples; i += 10)
        old.m[0].y[i] += 2e5 * (double)(1 + i % 4);
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 1000, 7), ==, 2);
    CHECK(fabs(cur.m[0].change.rel.point) < 0.01);
    CHECK(cur.m[0].change.verdict != DKB_IMPROVED && cur.m[0].change.verdict != DKB_REGRESSED);
    /* And the other way round: disturbed samples in the new run. */
    dkb_result_free(&cur);
    line_result(&cur, 10, 300, 50, 0.002);
    dkb_result clean;
    line_result(&clean, 10, 300, 50, 0.002);
    CHECK_INT(dkb_compare_baseline(&old, &clean, 0.01, 1000, 7), ==, 2);
    CHECK(fabs(old.m[0].change.rel.point) < 0.01);
    CHECK(old.m[0].change.verdict != DKB_IMPROVED && old.m[0].change.verdict != DKB_REGRESSED);
    /* A real 5% slower body is still found. */
    dkb_result slower;
    line_result(&slower, 10, 300, 52.5, 0.002);
    for (size_t i = 1; i < slower.n_samples; i += 10)
        slower.m[0].y[i] += 2e5 * (double)(1 + i % 4);
    CHECK_INT(dkb_compare_baseline(&slower, &clean, 0.01, 1000, 7), ==, 2);
    CHECK(fabs(slower.m[0].change.rel.point - 0.05) < 0.005);
    CHECK_INT(slower.m[0].change.verdict, ==, DKB_REGRESSED);
    dkb_result_free(&old);
    dkb_result_free(&cur);
    dkb_result_free(&clean);
    dkb_result_free(&slower);
}

/* A third of the new run's samples made 20% slower by a neighbour, none
 * seen as preempted: the Theil-Sen answer (a median of pair slopes) is
 * not moved by them, and the change of that answer, of medians, is not
 * either. The means differ by about 7%; severe fences do not help here,
 * as a third of the values widens them. The instruction counts (OLS,
 * means) are exact and equal: no change. */
/* Every third sample's time above the intercept (300) made 20% longer. */
static void slow_every_third(dkb_result *r)
{
    for (size_t i = 0; i < r->n_samples; i += 3)
        r->m[0].y[i] = 300 + (r->m[0].y[i] - 300) * 1.2;
}

TEST_CASE(change_of_time_is_not_moved_by_a_disturbed_third_of_the_samples)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    slow_every_third(&cur);
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 2000, 7), ==, 2);
    fprintf(stderr, "time change %.4f [%.4f, %.4f] %s\n", cur.m[0].change.rel.point,
            cur.m[0].change.rel.lo, cur.m[0].change.rel.hi,
            dkb_verdict_name(cur.m[0].change.verdict));
    CHECK(fabs(cur.m[0].change.rel.point) < 0.01);
    CHECK(cur.m[0].change.verdict != DKB_IMPROVED && cur.m[0].change.verdict != DKB_REGRESSED);
    CHECK_INT(cur.m[1].change.verdict, ==, DKB_NO_CHANGE);
    /* A real 5% slower body, disturbed alike, is still found. */
    dkb_result slower;
    line_result(&slower, 10, 300, 52.5, 0.002);
    slow_every_third(&slower);
    CHECK_INT(dkb_compare_baseline(&slower, &old, 0.01, 2000, 7), ==, 2);
    CHECK(fabs(slower.m[0].change.rel.point - 0.05) < 0.01);
    CHECK_INT(slower.m[0].change.verdict, ==, DKB_REGRESSED);
    dkb_result_free(&old);
    dkb_result_free(&cur);
    dkb_result_free(&slower);
}

/* Runs of 3 samples (--samples 3): a median's bootstrap of so few values
 * is too narrow to test, so the time is not compared and the reason says
 * how many values there were; the instructions (means) still are. */
TEST_CASE(change_of_time_needs_five_values_a_side)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    old.n_samples = cur.n_samples = 3;
    old.m[0].n_fit = old.m[1].n_fit = cur.m[0].n_fit = cur.m[1].n_fit = 3;
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 1000, 7), ==, 1);
    CHECK(!cur.m[0].has_change);
    CHECK_STR(cur.m[0].no_change, "3 baseline values; at least 5 are needed");
    CHECK(cur.m[1].has_change);
    dkb_result_free(&old);
    dkb_result_free(&cur);
}

/* The time answer leaves preempted samples out; so does its change. */
TEST_CASE(change_of_time_leaves_out_the_preempted_samples)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    cur.switches_counted = true;
    cur.preempted = calloc(cur.n_samples, 1);
    CHECK(cur.preempted != NULL);
    for (size_t i = 3; i < cur.n_samples; i += 8) {
        cur.preempted[i] = 1;
        cur.n_preempted++;
        cur.m[0].y[i] += 2e6; /* 2 ms switched out */
    }
    cur.m[0].n_fit = cur.n_samples - cur.n_preempted;
    dkb_fit line;
    CHECK(dkb_headline_line(&cur, &cur.m[0], &line));
    CHECK(fabs(line.intercept - 300) < 5);
    CHECK(line.slope == 50);
    size_t k = 0;
    double *v = dkb_change_values(&cur, &cur.m[0], &k);
    CHECK(v != NULL);
    CHECK_INT(k, ==, cur.n_samples - cur.n_preempted);
    free(v);
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 1000, 7), ==, 2);
    CHECK(fabs(cur.m[0].change.rel.point) < 0.002);
    CHECK(cur.m[0].change.verdict != DKB_REGRESSED);
    /* Every sample counts when too few were left clean (n_fit = all); the
     * 2 ms ones, an eighth of them, move the medians the change compares
     * as little as they move the median slope, so the change still follows
     * the answer. */
    cur.m[0].n_fit = cur.n_samples;
    CHECK(dkb_sample_in_fit(&cur, &cur.m[0], 3));
    dkb_compare_baseline(&cur, &old, 0.01, 1000, 7);
    CHECK(fabs(cur.m[0].change.rel.point) < 0.01);
    dkb_result_free(&old);
    dkb_result_free(&cur);
}

/* A baseline value that is not a number (null in the file): the time
 * answer's line has no intercept, and no change is computed from it. */
TEST_CASE(a_null_time_value_gives_no_headline_line)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    old.m[0].y[7] = NAN;
    dkb_fit line;
    CHECK(!dkb_headline_line(&old, &old.m[0], &line));
    CHECK(dkb_headline_line(&cur, &cur.m[0], &line));
    dkb_compare_baseline(&cur, &old, 0.01, 1000, 7);
    CHECK(!cur.m[0].has_change);
    CHECK_CONTAINS(cur.m[0].no_change, "null value");
    dkb_result_free(&old);
    dkb_result_free(&cur);
}
