/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* The bodies of change_calibration.py: examples/bench_example.c's two (the
 * same code, with the array's length a parameter) and one written to be
 * layout-sensitive. Built three times: calib-bodies, calib-bodies-slow with
 * -DCALIB_SLOWER=5 and calib-bodies-2pct with -DCALIB_SLOWER=2, where each
 * body does more of its own work (more elements, more lines): the same code
 * made 5% or 2% slower whatever it costs, with no other work that could
 * overlap with it. */
#include <dkbench.h>
#include <stdint.h>
#include <string.h>

#ifndef CALIB_SLOWER
#define CALIB_SLOWER 0
#endif
/* CALIB_SLOWER is the percentage. The slow builds' sizes give 1.05 and
 * 1.02 times the time here, measured (see doc/BENCHMARKS.md): the time does
 * not grow in step with the size, and N_STR off a multiple of 16 or N_FWD
 * off one of 4 changes the code, not only the work (1038 made sum/forward 4
 * times slower). -D overrides them, to calibrate anew. */
#if CALIB_SLOWER == 5
#define SIZE_FWD 1064
#define SIZE_STR 1056
#define SIZE_LINES 134
#elif CALIB_SLOWER == 2
#define SIZE_FWD 1040
#define SIZE_STR 1040
#define SIZE_LINES 130
#elif CALIB_SLOWER == 0
#define SIZE_FWD 1024
#define SIZE_STR 1024
#define SIZE_LINES 128
#else
#error "CALIB_SLOWER is 0, 2 or 5 (percent)"
#endif
#ifndef N_FWD
#define N_FWD SIZE_FWD
#endif
#ifndef N_STR
#define N_STR SIZE_STR
#endif
#ifndef LINES
#define LINES SIZE_LINES
#endif

unsigned v[N_FWD > N_STR ? N_FWD : N_STR]; /* not static: the compiler cannot prove it constant */

static unsigned sum_forward(void)
{
    unsigned s = 0;
    for (int i = 0; i < N_FWD; i++)
        s += v[i] * 3 + 1;
    return s;
}

static unsigned sum_strided(void)
{
    unsigned s = 0;
    for (int k = 0; k < 16; k++)
        for (int i = k; i < N_STR; i += 16)
            s += v[i] * 3 + 1;
    return s;
}

static void forward(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_do_not_optimize(sum_forward()); }
static void strided(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_do_not_optimize(sum_strided()); }
DK_BENCHMARK_NAMED("sum/forward", forward)
DK_BENCHMARK_NAMED("sum/strided", strided)

/* layout/stack-split adds one to a 64-bit word of each of LINES cache lines
 * of a buffer on the stack, 12 bytes past a 16-byte boundary. Linux moves
 * the stack by a random multiple of 16 bytes at each exec, so in about one
 * process in four the words straddle two cache lines and every load and
 * store is split (other placement effects, not traced, add further modes:
 * about 104, 110 and 118 ns were seen). The time is fixed for the life of a
 * process and changes between processes (104 to 122 ns here, each process's
 * interval about +-0.6%), as code and data placement do to real bodies. */
#define AT 12 /* a word's offset in its line: it straddles when the line is at 48 mod 64 */

uint64_t calib_flat[4 * LINES]; /* aligned work beside the split one */

static void rmw_lines(unsigned char *p)
{
    for (int i = 0; i < LINES; i++) {
        uint64_t x;
        memcpy(&x, p + 64 * i, sizeof x);
        x++;
        memcpy(p + 64 * i, &x, sizeof x);
    }
}

static uint64_t sum_flat(void)
{
    uint64_t s = 0;
    for (int i = 0; i < 4 * LINES; i++)
        s += calib_flat[i] ^ (uint64_t)i;
    return s;
}

static void split(dk_bench *b)
{
    _Alignas(16) unsigned char buf[64 * (LINES + 1)];
    memset(buf, 0, sizeof buf);
    unsigned char *p = buf + AT;
    DK_BENCH_LOOP(b)
    {
        dk_bench_do_not_optimize(p); /* the compiler must not keep the words in registers */
        rmw_lines(p);
        dk_bench_do_not_optimize(sum_flat());
    }
}
DK_BENCHMARK_NAMED("layout/stack-split", split)

int main(int argc, char **argv) { return dk_bench_main(argc, argv); }
