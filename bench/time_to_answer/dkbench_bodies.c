/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The two bodies of bodies.h as dkbench benchmarks, run with the harness's
 * defaults by time_to_answer.py. */
#include <dkbench.h>

#include "bodies.h"

static uint64_t state = 1;

static void body_short(dk_bench *b)
{
    uint64_t x = state;
    DK_BENCH_LOOP(b)
    {
        x = tta_short(x);
        dk_bench_do_not_optimize(x);
    }
    state = x;
}

static void body_long(dk_bench *b)
{
    uint64_t x = state;
    DK_BENCH_LOOP(b)
    {
        x = tta_long(x);
        dk_bench_do_not_optimize(x);
    }
    state = x;
}

DK_BENCHMARK_NAMED("body/short", body_short)
DK_BENCHMARK_NAMED("body/long", body_long)

int main(int argc, char **argv) { return dk_bench_main(argc, argv); }
