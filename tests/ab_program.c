/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The builds that check_bench_ab.py compares with --ab: one body, built
 * three times. AB_SLOWER=1 makes each body walk a dependency chain 1.2
 * times as long (the same work, more of it, nothing that could overlap),
 * so it takes 1.2 times as long; AB_DROP=1 leaves ab/second out. */
#include <dkbench.h>
#include <stdint.h>

#ifndef AB_SLOWER
#define AB_SLOWER 0
#endif
#ifndef AB_DROP
#define AB_DROP 0
#endif
#define STEPS (AB_SLOWER ? 600 : 500)

uint64_t ab_seed = 1; /* not static: the compiler cannot prove it constant */

/* Each step needs the one before: the time is STEPS multiply-adds' latency. */
static uint64_t chain(void)
{
    uint64_t x = ab_seed;
    for (int i = 0; i < STEPS; i++)
        x = x * 6364136223846793005u + 1442695040888963407u;
    return x;
}

static void first(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_do_not_optimize(chain()); }
DK_BENCHMARK_NAMED("ab/first", first)
#if !AB_DROP
static void second(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_do_not_optimize(chain() ^ 1); }
DK_BENCHMARK_NAMED("ab/second", second)
#endif

int main(int argc, char **argv) { return dk_bench_main(argc, argv); }
