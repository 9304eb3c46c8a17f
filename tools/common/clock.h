/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * clock.h - the monotonic clock the tools time runs with.
 */
#ifndef DKPERF_TOOLS_CLOCK_H
#define DKPERF_TOOLS_CLOCK_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC: only differences mean anything. */
uint64_t monotonic_ns(void);

#endif /* DKPERF_TOOLS_CLOCK_H */
