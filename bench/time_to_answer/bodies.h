/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bodies.h - the two bodies timed by both harnesses: a chain of dependent
 * multiply-adds, so that the time per call is set by latency alone (about
 * 4 cycles a step) and no compiler can fold or vectorise it. The empty asm
 * after each step hides the value from the optimiser.
 */
#ifndef DK_TIME_TO_ANSWER_BODIES_H
#define DK_TIME_TO_ANSWER_BODIES_H

#include <stdint.h>

#define TTA_SHORT_STEPS 4 /* about 5 ns */
#define TTA_LONG_STEPS 80 /* about 100 ns */

static inline uint64_t tta_chain(uint64_t x, int steps)
{
    for (int i = 0; i < steps; i++) {
        x = x * 0x9E3779B97F4A7C15u + 1;
        __asm__("" : "+r"(x));
    }
    return x;
}

static inline uint64_t tta_short(uint64_t x) { return tta_chain(x, TTA_SHORT_STEPS); }
static inline uint64_t tta_long(uint64_t x) { return tta_chain(x, TTA_LONG_STEPS); }

#endif
