/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * flood_pids.c - pids for the performance sweep's recording whose keys
 * share hash slots: N pids (1 to 2^31 - 1) whose (pid, 1), hashed by the
 * fixed mix dkperf report's tables once took their slots from (the low
 * bits of tools/dkperf/report_rmap.c's rmap_mix), land in the first 256
 * slots of a table of up to 2^20: each lookup then walks the pids before
 * it, and reading the recording is quadratic. Searched for here (about
 * 4096 pids each), too slowly for the sweep's Python. One pid a line on
 * standard output.
 *
 * usage: flood_pids N
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t fixed_mix(uint64_t a, uint64_t b)
{
    uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 31);
}

int main(int argc, char **argv)
{
    long n = argc == 2 ? atol(argv[1]) : 0;
    if (n <= 0 || n > 400000) {
        fprintf(stderr, "usage: flood_pids N (1 to 400000)\n");
        return 2;
    }
    long found = 0;
    for (uint64_t p = 1; p < 0x80000000u && found < n; p++)
        if ((fixed_mix(p, 1) & ((1u << 20) - 1)) < 256) {
            printf("%llu\n", (unsigned long long)p);
            found++;
        }
    return found == n && fflush(stdout) == 0 ? 0 : 1;
}
