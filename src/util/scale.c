/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * scale.c - the estimate of a time-shared counter. Public (dk_scale_count),
 * and here at the bottom because the backends scale what they read.
 */
#include "util/util.h"

uint64_t dk_scale_count(uint64_t count, uint64_t enabled, uint64_t running)
{
    if (running == 0)
        return 0;
    if (running >= enabled)
        return count;
    /* count * enabled / running, without overflowing 64 bits */
    uint64_t quot = count / running, rem = count % running;
    return quot * enabled + (uint64_t)((unsigned __int128)rem * enabled / running);
}
