/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * error.h - the error detail of libdkbench and of the common layer's
 * statistics, as libdkperf's: a failing function returns a negative DK_E*
 * code (dkperf/error.h) or false and leaves a sentence that names the
 * problem for dkb_last_error() (libdkbench's dk_bench_last_error()). Per
 * thread; success leaves it unchanged. Not installed.
 */
#ifndef DKPERF_COMMON_ERROR_H
#define DKPERF_COMMON_ERROR_H

#include "dkperf/error.h"

#if defined(__GNUC__) || defined(__clang__)
#define DKB_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define DKB_PRINTF(fmt, args)
#endif

/* Record the sentence and return code. */
int dkb_fail(int code, const char *fmt, ...) DKB_PRINTF(2, 3);
/* The last sentence recorded on this thread ("" when none). */
const char *dkb_last_error(void);

#endif /* DKPERF_COMMON_ERROR_H */
