/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A benchmark program built against an installed libdkbench. */
#include <dkbench.h>

static void empty(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_clobber_memory(); }
DK_BENCHMARK(empty)

int main(int argc, char **argv) { return dk_bench_main(argc, argv); }
