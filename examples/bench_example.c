/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Two ways to sum an array. Run `bench_example --save-baseline before`, then
 * `bench_example --baseline before` to see the changes against the first run. */
#include <dkbench.h>

unsigned v[1024]; /* not static: the compiler cannot prove it constant */

static unsigned sum_forward(void)
{
    unsigned s = 0;
    for (int i = 0; i < 1024; i++)
        s += v[i] * 3 + 1;
    return s;
}

static unsigned sum_strided(void)
{
    unsigned s = 0;
    for (int k = 0; k < 16; k++)
        for (int i = k; i < 1024; i += 16)
            s += v[i] * 3 + 1;
    return s;
}

static void forward(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_do_not_optimize(sum_forward()); }
static void strided(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_do_not_optimize(sum_strided()); }
DK_BENCHMARK_NAMED("sum/forward", forward)
DK_BENCHMARK_NAMED("sum/strided", strided)

int main(int argc, char **argv) { return dk_bench_main(argc, argv); }
