/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * clock.c - the library's monotonic clock, for the backends' times (the
 * perf_event rings' clock, kperf groups' enabled time).
 */
#include <time.h>

#include "util/util.h"

uint64_t dk__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
