/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * util.h - helpers shared by the tests.
 */
#ifndef DKPERF_TEST_UTIL_H
#define DKPERF_TEST_UTIL_H

#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static inline uint64_t dkt_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Keep the calling thread busy until it has used ms of CPU time. */
static inline uint64_t dkt_burn_cpu_ms(double ms)
{
    volatile uint64_t sink = 0;
    uint64_t start = dkt_thread_cpu_ns(), goal = start + (uint64_t)(ms * 1e6);
    while (dkt_thread_cpu_ns() < goal)
        for (int i = 0; i < 10000; i++)
            sink += (uint64_t)i * 2654435761u;
    return sink;
}

static inline void dkt_sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000),
                          (long)((ms - (double)(long)(ms / 1000) * 1000) * 1e6)};
    nanosleep(&ts, NULL);
}

/* The build directory (for the variant roots of the simulated frameworks). */
static inline const char *dkt_build_dir(void)
{
    const char *b = getenv("DKPERF_SIM_BUILD");
    if (b == NULL)
        DKT_FAIL("DKPERF_SIM_BUILD is not set: run this test through ctest");
    return b;
}

/* Whether this test runs under valgrind: its code runs translated, not at
 * its own addresses, and other processes' /proc entries (exe, cmdline,
 * comm, registers) show valgrind, which rewrites only the asking
 * process's own. */
static inline bool dkt_under_valgrind(void)
{
    const char *pre = getenv("LD_PRELOAD");
    return pre != NULL && strstr(pre, "vgpreload") != NULL;
}

#endif /* DKPERF_TEST_UTIL_H */
