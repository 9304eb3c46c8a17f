/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkbench.h - micro-benchmarks measured with hardware counters.
 *
 * libdkbench runs a function many times, measures each sample with the
 * clock and with libdkperf's counters (instructions, cycles, branches,
 * branch-misses, ... where the machine has them), and reports the cost of
 * one iteration as the slope of a least-squares fit of measurement against
 * iteration count, with a bootstrap confidence interval. It stops as soon
 * as every estimate is precise enough or the time budget is spent.
 *
 *     #include <dkbench.h>
 *
 *     static void bm_sum(dk_bench *b)
 *     {
 *         DK_BENCH_LOOP(b)
 *             dk_bench_do_not_optimize(sum(v, n));
 *     }
 *     DK_BENCHMARK(bm_sum)
 *
 *     int main(int argc, char **argv) { return dk_bench_main(argc, argv); }
 *
 * Two forms of benchmark:
 *   - the loop form, void fn(dk_bench *b): the body sits in DK_BENCH_LOOP;
 *     the harness calls fn once per phase (warm-up, each measurement pass)
 *     and hands out iteration counts through dk_bench_next(). An iteration
 *     costs a decrement and a predictable branch, no call.
 *   - the function form, void fn(void *ctx, uint64_t iterations): fn runs
 *     its body `iterations` times; each call is one sample.
 *
 * Names: "group/name" puts a benchmark in a group (--compare runs the
 * members of a group interleaved and gives their ratios).
 *
 * Conventions as in dkperf.h: int-returning functions return 0 or a negative
 * DK_E* code (dkperf/error.h), and dk_bench_last_error() then names the
 * problem. Benchmarks run on the thread that calls dk_bench_main.
 */
#ifndef DKBENCH_H
#define DKBENCH_H

#include <stddef.h>
#include <stdint.h>

#include "dkperf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dk_bench dk_bench; /* the state of one benchmark being run */

typedef void (*dk_bench_loop_fn)(dk_bench *b);
typedef void (*dk_bench_iter_fn)(void *ctx, uint64_t iterations);
typedef void (*dk_bench_setup_fn)(void *arg);

/* ------------------------------------------------------------------------ */
/* Writing a benchmark                                                       */
/* ------------------------------------------------------------------------ */

/*
 * dk_bench_next - end the sample in progress (read the clock and the
 * counters), run the unmeasured per-sample setup, start the next sample
 * (read the counters and the clock) and return its iteration count.
 * Returns 0 when the phase is over: the loop form's function must then
 * return. DK_BENCH_LOOP calls it for you.
 */
DK_EXPORT uint64_t dk_bench_next(dk_bench *b);

/*
 * DK_BENCH_LOOP(b) statement - run statement as many times as the harness
 * asks. Between samples it calls dk_bench_next; within one, an iteration
 * costs a decrement and a branch. Use it once per benchmark function.
 */
#define DK_BENCH_LOOP(b)                                                  \
    for (uint64_t dk__n = dk_bench_next(b); dk__n != 0;                   \
         dk__n = dk__n - 1 != 0 ? dk__n - 1 : dk_bench_next(b))

/*
 * dk_bench_do_not_optimize(x) - make the compiler compute x and assume it
 * is used, without storing it anywhere (an empty asm statement that takes
 * x in a register or in memory, and clobbers memory). The fallback for
 * compilers without GNU asm passes !!(x) to an external function: there x
 * must be a scalar (number or pointer).
 *
 * dk_bench_clobber_memory() - make the compiler assume every memory
 * location may have been read and written: stores before it happen.
 */
#if defined(__GNUC__) || defined(__clang__)
#define dk_bench_do_not_optimize(x)                                       \
    do {                                                                  \
        __asm__ __volatile__("" : : "r,m"(x) : "memory");                 \
    } while (0)
#define dk_bench_clobber_memory() __asm__ __volatile__("" : : : "memory")
#else
#include <stdatomic.h>
DK_EXPORT void dk_bench_sink(int used);
#define dk_bench_do_not_optimize(x) dk_bench_sink(!!(x))
#define dk_bench_clobber_memory() atomic_signal_fence(memory_order_seq_cst)
#endif

/* The ctx given when the benchmark was registered (NULL by DK_BENCHMARK). */
DK_EXPORT void *dk_bench_context(const dk_bench *b);

/* The benchmark's full name, "group/name" or "name". */
DK_EXPORT const char *dk_bench_name(const dk_bench *b);

/*
 * dk_bench_set_setup - run fn(arg) before every sample, outside the
 * measurement (e.g. to refill a buffer the body consumes). Call it from
 * the benchmark function before DK_BENCH_LOOP; it holds for this phase.
 * fn NULL removes it.
 */
DK_EXPORT void dk_bench_set_setup(dk_bench *b, dk_bench_setup_fn fn, void *arg);

/*
 * dk_bench_set_bytes, dk_bench_set_elements - what one iteration processes,
 * to report a throughput (bytes/s or elements/s) beside the time. Call
 * before DK_BENCH_LOOP; the last call wins.
 */
DK_EXPORT void dk_bench_set_bytes(dk_bench *b, uint64_t bytes_per_iteration);
DK_EXPORT void dk_bench_set_elements(dk_bench *b, uint64_t elements_per_iteration);

/* ------------------------------------------------------------------------ */
/* Registering benchmarks                                                    */
/* ------------------------------------------------------------------------ */

/*
 * dk_bench_register - add a loop-form benchmark named name ("group/name"
 * or "name"; copied) with a context for dk_bench_context.
 * dk_bench_register_fn - add a function-form benchmark: fn(ctx, k) runs
 * the body k times.
 * Benchmarks run in the order registered. Both return 0, or DK_EINVAL (NULL
 * name or fn, an empty name or one of 256 bytes or more, a name already
 * registered), DK_ENOMEM.
 */
DK_EXPORT int dk_bench_register(const char *name, dk_bench_loop_fn fn, void *ctx);
DK_EXPORT int dk_bench_register_fn(const char *name, dk_bench_iter_fn fn, void *ctx);

/*
 * Registration at load time, for compilers with constructors (GCC, Clang):
 *   DK_BENCHMARK(fn)                  loop form, named "fn"
 *   DK_BENCHMARK_NAMED("group/n", fn) loop form, named
 *   DK_BENCHMARK_FN("group/n", fn, ctx) function form
 * A registration that fails there is reported by dk_bench_main (exit 2).
 * Elsewhere the macros expand to nothing: call dk_bench_register* from main
 * before dk_bench_main.
 */
#define DK__BENCH_CAT2(a, b) a##b
#define DK__BENCH_CAT(a, b) DK__BENCH_CAT2(a, b)
#if defined(__GNUC__) || defined(__clang__)
#define DK_BENCHMARK_NAMED(name, fn)                                      \
    __attribute__((constructor)) static void DK__BENCH_CAT(dk__bench_reg_, __LINE__)(void) \
    {                                                                     \
        dk_bench__register_at_load(name, fn, NULL, NULL);                 \
    }
#define DK_BENCHMARK_FN(name, fn, ctx)                                    \
    __attribute__((constructor)) static void DK__BENCH_CAT(dk__bench_reg_, __LINE__)(void) \
    {                                                                     \
        dk_bench__register_at_load(name, NULL, fn, ctx);                  \
    }
#else
#define DK_BENCHMARK_NAMED(name, fn)
#define DK_BENCHMARK_FN(name, fn, ctx)
#endif
#define DK_BENCHMARK(fn) DK_BENCHMARK_NAMED(#fn, fn)

/* For the macros above: registers, and remembers a failure for
 * dk_bench_main to report. */
DK_EXPORT void dk_bench__register_at_load(const char *name, dk_bench_loop_fn loop,
                                          dk_bench_iter_fn iter, void *ctx);

/* ------------------------------------------------------------------------ */
/* Running                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * dk_bench_main - the standard command line: run the registered benchmarks
 * whose name matches, print a block per benchmark on stdout, write the
 * files asked for. `prog --help` lists:
 *
 *   [REGEX]               run only benchmarks whose name matches (POSIX ERE)
 *   --list                print the names and exit
 *   -e, --events EV,...   events to count (default: instructions,cycles,
 *                         branches,branch-misses; those not available here
 *                         are reported once, with the reason)
 *   --time S              measurement budget per benchmark (0.2); a
 *                         body slower than S/20 per iteration still
 *                         takes 20 samples of one iteration
 *   --warm-up S           warm-up bound per benchmark (0.08)
 *   --samples N           exactly N samples (no adaptive stop)
 *   --precision P         stop when every CI half-width <= P x estimate (0.01)
 *   --noise P             changes within +-P are noise (0.01)
 *   --save-baseline NAME  save the results as baseline NAME
 *   --baseline NAME       compare with baseline NAME
 *   --results-dir D       where baselines go (dkbench-results)
 *   --json F, --csv F, --markdown F, --gbench-json F, --html F
 *   -q, --quiet           no per-benchmark blocks
 *   -v, --verbose         the fit, R^2 and outlier fences too
 *   --seed N              bootstrap seed (1)
 *   --compare             run the benchmarks of each group interleaved and
 *                         give the ratio of each to the group's first
 *   --p-cores             on macOS, ask for the performance cores (QoS
 *                         user-interactive); elsewhere a no-op, said once
 *
 * Environment (an option given wins): DKBENCH_FILTER, DKBENCH_EVENTS,
 * DKBENCH_TIME, DKBENCH_WARM_UP, DKBENCH_SAMPLES, DKBENCH_PRECISION,
 * DKBENCH_NOISE, DKBENCH_OUTPUT_DIR (the results directory), DKBENCH_SEED,
 * DKBENCH_BASELINE, DKBENCH_SAVE_BASELINE, DKBENCH_QUIET=1, NO_COLOR.
 *
 * Signals (dkperf.h, "Signals and exit"): while the counters are held, a
 * signal whose default action would end the program (SIGINT, SIGTERM,
 * SIGHUP, SIGUSR1, SIGALRM, ...) ends the benchmark under way, the counters
 * are given back, and the program then ends by that signal, with no report;
 * SIGPIPE and SIGXFSZ are ignored meanwhile, so a write that fails is
 * reported. A signal the program handles or ignores itself is left alone.
 *
 * Returns the process exit status: 0, 1 when a benchmark or an output
 * failed (the reason is on stderr), 2 for a bad option or environment
 * value (one line on stderr naming it).
 */
DK_EXPORT int dk_bench_main(int argc, char **argv);

/* The detail of the calling thread's last libdkbench failure ("" if none). */
DK_EXPORT const char *dk_bench_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DKBENCH_H */
