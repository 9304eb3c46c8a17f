/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * clock.c - the monotonic clock (see clock.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "common/clock.h"

#include <time.h>

uint64_t dk__monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
