/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * clock.h - the one monotonic clock of libdkbench and the tools (compiled
 * into each, never into libdkperf; see CMakeLists.txt here). Internal.
 */
#ifndef DKPERF_COMMON_CLOCK_H
#define DKPERF_COMMON_CLOCK_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC (on macOS too, where it does not stop
 * while the machine sleeps less than CLOCK_UPTIME_RAW does): only
 * differences mean anything. */
uint64_t dk__monotonic_ns(void);

#endif /* DKPERF_COMMON_CLOCK_H */
