/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_gbench_flags_program.c - a dkbench program for
 * check_bench_gbench_flags.py: three quick benchmarks whose body, when
 * GBF_LOG names a file, appends its name to it once per process, so that
 * the order the processes ran in can be read back.
 */
#include <dkbench.h>
#include <stdio.h>
#include <stdlib.h>

unsigned v[64]; /* not static: the compiler cannot prove it constant */

static unsigned sum(void)
{
    unsigned s = 0;
    for (int i = 0; i < 64; i++)
        s += v[i] * 3 + 1;
    return s;
}

static void body(dk_bench *b)
{
    static int logged;
    const char *log = getenv("GBF_LOG");
    if (log != NULL && !logged++) {
        FILE *f = fopen(log, "a");
        if (f != NULL) {
            fprintf(f, "%s\n", dk_bench_name(b));
            fclose(f);
        }
    }
    DK_BENCH_LOOP(b) dk_bench_do_not_optimize(sum());
}

DK_BENCHMARK_NAMED("BM_one", body)
DK_BENCHMARK_NAMED("BM_two", body)
DK_BENCHMARK_NAMED("BM_three", body)

int main(int argc, char **argv) { return dk_bench_main(argc, argv); }
