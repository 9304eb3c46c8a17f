/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * compare.h - a measure's headline estimate as a line, and a result
 * compared with its baseline on the samples and line of that estimate.
 * Not installed.
 */
#ifndef DKPERF_BENCH_COMPARE_H
#define DKPERF_BENCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libdkbench/model.h"

/* Fewest unpreempted samples (on more than one iteration count) the time
 * estimate is computed from alone; with fewer it uses every sample. */
#define DKB_MIN_UNPREEMPTED 5

/* Whether sample i entered the headline estimate of m: for the Theil-Sen
 * time answer, the samples not preempted when n_fit says some were left
 * out; for every other estimator, every sample. */
bool dkb_sample_in_fit(const dkb_result *r, const dkb_measure *m, size_t i);

/* The line of m's headline estimate, measurement = intercept + slope *
 * iterations: slope = m->slope.point; the intercept of the OLS fit
 * ("OLS"), the median of yᵢ − slope·xᵢ over the samples used
 * ("Theil-Sen", as Sen's slope is usually completed), or 0 ("mean": flat
 * sampling cannot tell a per-sample cost from a per-iteration one;
 * "median": an external body's runs, one iteration each).
 * false when m has no estimate. */
bool dkb_headline_line(const dkb_result *r, const dkb_measure *m, dkb_fit *line);

/* The per-iteration values the change test compares: (yᵢ − intercept) / xᵢ
 * of the headline line, over the samples the headline used, so that two
 * runs with different iteration counts compare per-iteration costs, not
 * per-sample overheads spread over different counts. Returns a malloc'ed
 * array and its length in *k, or NULL (no estimate, out of memory). */
double *dkb_change_values(const dkb_result *r, const dkb_measure *m, size_t *k);

/* Compare every available measure of r with the measure of the same name
 * in old. When both were measured in several processes, on the processes'
 * estimates (dkb_change_processes: the process is the unit of
 * replication; change_by_process is set). Otherwise, within one process,
 * on dkb_change_values of both sides: dkb_change_test_median for
 * the Theil-Sen answer (time), whose median pair slope a minority of
 * disturbed samples does not move, and for the median of an external
 * body's runs; dkb_change_test (means) for the rest;
 * sets
 * has_change, change and baseline_slope where the test gives an answer.
 * Returns how many measures were compared. */
size_t dkb_compare_baseline(dkb_result *r, const dkb_result *old, double noise, size_t resamples,
                            uint64_t seed);

/* Compare every available measure of r with the measure of the same name
 * in other, both measured in the same number of processes run in pairs
 * (A/B): the paired test of the processes' estimates (dkb_change_paired),
 * change_by_process and change_paired set. Returns how many measures were
 * compared; a measure that could not be says why in no_change. */
size_t dkb_compare_paired(dkb_result *r, const dkb_result *other, double noise);

#endif /* DKPERF_BENCH_COMPARE_H */
