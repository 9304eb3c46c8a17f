/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* hw.h - helpers for the tests that run on a real Mac. */
#ifndef DKPERF_HW_H
#define DKPERF_HW_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define HW_CHECK(cond)                                                               \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

/* A loop of n iterations, each with one conditional branch. */
static inline uint64_t hw_spin(uint64_t n)
{
    volatile uint64_t sink = 0;
    for (uint64_t i = 0; i < n; i++)
        sink += i & 1;
    return sink;
}

#endif
