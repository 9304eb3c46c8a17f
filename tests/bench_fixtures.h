/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_fixtures.h - what the tests of libdkbench's reports, baselines and
 * changes share: results filled by hand with known values, the run they
 * belong to, and a folder of the case's own under $TMPDIR.
 */
#ifndef DKPERF_TEST_BENCH_FIXTURES_H
#define DKPERF_TEST_BENCH_FIXTURES_H

#include <stdio.h>

#include "libdkbench/model.h"

#define N 100
/* Every character a report must escape, and a non-ASCII one. */
#define NAME "grp/fib \"20\" <&> ,x|`*\n\t\xC2\xB5"

/* A text written by a report through an in-memory stream. */
typedef int (*render_fn)(FILE *, const dkb_run_info *, const dkb_result *const *, size_t);

/* n zeros (calloc'ed). */
double *doubles(size_t n);
/* A result of N samples: time 1000 ns per iteration (times scale), 2000
 * instructions, 1000 cycles (times scale), 400 branches, 8 branch misses;
 * cache-misses unavailable; three samples preempted. */
void sample(dkb_result *r, const char *name, double scale);
/* Two results; the second with an unmeasured time (no samples). */
void two_results(dkb_result *a, dkb_result *b);
/* A result of one exact-count measure and time on its own iteration
 * schedule: y = intercept + per_iter * x * (1 + wobble). */
void line_result(dkb_result *r, double step, double intercept, double per_iter, double wobble);
void run_info(dkb_run_info *run);
/* The whole file (malloc'ed; at most 1 MiB). */
char *slurp(const char *path);
/* A file in a folder of this case's own under $TMPDIR, removed by
 * cleanup() or, when a check fails first, at exit. */
const char *tmp_path(const char *file);
void cleanup(void);

#endif /* DKPERF_TEST_BENCH_FIXTURES_H */
