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
 * Processes: dk_bench_main measures each benchmark in several fresh
 * processes of the program (--processes, 10), because where a process
 * lands in memory moves a time by more than one process's interval shows.
 * It re-executes the program's executable with the arguments it was given
 * and DKBENCH_WORKER set; main must reach dk_bench_main with them each
 * time (registering the same benchmarks), and it then measures its share
 * and returns. A program that does not is measured within its own
 * process, and says so.
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

/* The one folder of saved baselines, for dkbench programs and dkperf bench
 * alike, relative to the working directory (--results-dir changes it). */
#define DK_BENCH_RESULTS_DIR "dkbench-results"

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
#define DK_BENCH_LOOP(b)                                \
    for (uint64_t dk__n = dk_bench_next(b); dk__n != 0; \
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
#define dk_bench_do_not_optimize(x)                       \
    do {                                                  \
        __asm__ __volatile__("" : : "r,m"(x) : "memory"); \
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
#define DK_BENCHMARK_NAMED(name, fn)                                                       \
    __attribute__((constructor)) static void DK__BENCH_CAT(dk__bench_reg_, __LINE__)(void) \
    {                                                                                      \
        dk_bench__register_at_load(name, fn, NULL, NULL);                                  \
    }
#define DK_BENCHMARK_FN(name, fn, ctx)                                                     \
    __attribute__((constructor)) static void DK__BENCH_CAT(dk__bench_reg_, __LINE__)(void) \
    {                                                                                      \
        dk_bench__register_at_load(name, NULL, fn, ctx);                                   \
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
/* External bodies: one run of a process (or anything) is one sample         */
/* ------------------------------------------------------------------------ */

/*
 * A body that cannot run in a loop, a command run as a process above all:
 * each call runs it once and says what the run measured. Its measures are
 * "time" (the wall time, in ns), "user-time" and "system-time" (CPU time,
 * ns), "max-rss" (bytes) and the counters named at registration. Each run
 * is one sample of one iteration; the headline estimate of every measure
 * is the median of the runs with a bootstrap 95% interval, and a change
 * against a baseline is the bootstrap test of the medians (a p-value, and
 * a verdict against the noise threshold), doc/BENCH-STATISTICS.md.
 *
 * A struct given to libdkbench starts with its size, set by the caller to
 * sizeof the struct it was compiled with: a later libdkbench reads the
 * members it knows of, and refuses a larger struct whose extra bytes are
 * not zero, or a size above 4096 bytes (DK_EINVAL).
 */
#define DK_BENCH_MAX_COUNTERS 32 /* counters one body may report */

typedef struct dk_bench_body_run {
    size_t size; /* set by libdkbench: the size of the struct it passes */
    /* In: where this run stands. */
    int warmup;     /* 1: a warm-up run, not measured */
    size_t index;   /* from 0, among the warm-up runs or the measured runs */
    size_t planned; /* runs of that kind planned so far: final after the first measured run */
    /* Out: what the run measured (zeroed before each call). */
    double wall_s, user_s, system_s;              /* seconds */
    uint64_t max_rss;                             /* bytes; 0 when unknown */
    uint64_t counters[DK_BENCH_MAX_COUNTERS];     /* in the order of registration */
    unsigned char counted[DK_BENCH_MAX_COUNTERS]; /* 1 when counters[i] holds a count */
} dk_bench_body_run;

/* One run: fill run's outputs and return 0, or return a negative DK_E*
 * code (optionally after dk_bench_fail) to end the benchmark: the harness
 * then stops with that code. */
typedef int (*dk_bench_body_fn)(void *ctx, dk_bench_body_run *run);

typedef struct dk_bench_body {
    size_t size;      /* sizeof(dk_bench_body) */
    const char *name; /* as for dk_bench_register; copied */
    dk_bench_body_fn run;
    void *ctx;
    const char *const *counters; /* the names of the counters a run reports (copied) */
    size_t n_counters;           /* at most DK_BENCH_MAX_COUNTERS */
} dk_bench_body;

/*
 * dk_bench_register_body - add an external body. Returns 0, or DK_EINVAL
 * (NULL body, name or run, a bad size, a name as dk_bench_register refuses,
 * too many counters, an empty counter name or one of 128 bytes or more, or
 * one given twice), DK_ENOMEM.
 */
DK_EXPORT int dk_bench_register_body(const dk_bench_body *body);

/*
 * dk_bench_fail - for a body's callback: record why the run failed, for
 * dk_bench_last_error, and return code (a negative DK_E* code).
 */
DK_EXPORT int dk_bench_fail(int code, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ------------------------------------------------------------------------ */
/* Running from a program (without argv)                                     */
/* ------------------------------------------------------------------------ */

typedef struct dk_bench_results dk_bench_results; /* the results of one dk_bench_run */

typedef struct dk_bench_options {
    size_t size;      /* sizeof(dk_bench_options) */
    const char *name; /* run only the benchmark of this name; NULL: every one */
    /* External bodies: exactly `runs` runs when not 0, else as many as the
     * first run says fill min_time seconds, at least min_runs and at most
     * max_runs (hyperfine's rule); warmup_runs unmeasured runs first. */
    size_t runs, min_runs, max_runs, warmup_runs;
    double min_time;
    double noise;              /* changes within +-noise are noise (0.01) */
    uint64_t seed;             /* bootstrap seed (1) */
    const char *results_dir;   /* where baselines are (NULL: DK_BENCH_RESULTS_DIR) */
    const char *baseline;      /* compare with this baseline; NULL: none */
    const char *save_baseline; /* save as this baseline when every benchmark ran */
    /* Called as each benchmark's result is complete (compared with the
     * baseline); a non-zero return ends the run with that code. NULL: none. */
    int (*on_result)(void *arg, const dk_bench_results *results, size_t index);
    void *arg;
} dk_bench_options;

/* The defaults (runs 0, min_runs 10, max_runs 1000000, warmup_runs 0,
 * min_time 3 s, noise 0.01, seed 1), with size set. */
DK_EXPORT void dk_bench_options_init(dk_bench_options *o);

/*
 * dk_bench_run - run the registered benchmarks (or the one named), each
 * compared with the baseline when one is named, and save the results as a
 * baseline when asked and every benchmark ran. Loop and function forms run
 * with dk_bench_main's defaults (time budget, events). The baseline is read
 * and the results directory checked before anything runs. Nothing is
 * printed and no signal disposition changes. *out gets the results of the
 * benchmarks that ran, even on failure (free with dk_bench_results_free).
 * Returns 0, or DK_EINVAL (bad options, no benchmark of that name, a
 * baseline that cannot be read: dk_bench_last_error says why; a baseline
 * an older dkperf bench saved says so), DK_EOS (a file), DK_ENOMEM, or the
 * code a body or on_result returned.
 */
DK_EXPORT int dk_bench_run(const dk_bench_options *o, dk_bench_results **out);

DK_EXPORT size_t dk_bench_results_count(const dk_bench_results *r);
DK_EXPORT const char *dk_bench_results_name(const dk_bench_results *r, size_t index);
DK_EXPORT void dk_bench_results_free(dk_bench_results *r);
/* The names of the baseline's results, in its order (0 and NULL without a
 * baseline, or past the end): those that did not run are named this way. */
DK_EXPORT size_t dk_bench_results_baseline_count(const dk_bench_results *r);
DK_EXPORT const char *dk_bench_results_baseline_name(const dk_bench_results *r, size_t index);

/* A change against the baseline (the values of dkb_verdict). */
typedef enum dk_bench_verdict {
    DK_BENCH_NO_CHANGE = 0, /* p >= 0.05 */
    DK_BENCH_WITHIN_NOISE,  /* significant, and the interval inside +-noise, or overlapping
                               it while the spread resolves changes of +-noise */
    DK_BENCH_IMPROVED,      /* significant, the interval below -noise */
    DK_BENCH_REGRESSED,     /* significant, the interval above +noise */
    DK_BENCH_UNRESOLVED     /* the spread between processes is wider than +-noise, and the
                               change is not significant, or its interval reaches both
                               inside and past the threshold: "cannot be resolved here" */
} dk_bench_verdict;

/* One measure of one result: its samples' summary and headline estimate
 * (per iteration; for an external body, per run), and its change. */
typedef struct dk_bench_estimate {
    size_t size;                           /* sizeof(dk_bench_estimate), set by the caller */
    const char *unit;                      /* "ns", "B" or "" (a count) */
    size_t n;                              /* samples */
    double point, lo, hi;                  /* headline estimate and its 95% interval */
    const char *estimator;                 /* "median", "Theil-Sen", "OLS" or "mean" */
    double mean, stddev, median, min, max; /* of the per-iteration values; stddev n - 1 */
    size_t mild, severe;                   /* Tukey's outliers, both sides */
    int has_change;                        /* 1: compared with the baseline */
    double change, change_lo, change_hi;   /* relative: 0.1 is +10% */
    double p_value;
    dk_bench_verdict verdict;
    const char *no_change; /* why there is no change, "" when there is one or no baseline */
    /* Added after no_change (a caller whose size ends at no_change gets the
     * members before it): 1 when a baseline was given and it has no result
     * of this name, the fact behind that no_change, which a caller should
     * test rather than the text. */
    int not_in_baseline;
    /* Added after not_in_baseline (same rule as above). The processes the
     * estimate comes from: >= 2, each benchmark measured in that many
     * fresh processes and the interval of their mean; 1, within one
     * process (dk_bench_run measures in the calling process: its interval
     * does not hold the spread between processes); 0, an external body,
     * whose every run is a process. between_share: the part of the spread
     * of the processes' estimates that is between processes (NaN with
     * fewer than 2). resolution: the smallest relative change the change
     * test could call significant (0 when not computed). change_by_process:
     * 1 when the change compares processes' estimates. A caller built
     * before these were added never sees DK_BENCH_UNRESOLVED (it gets
     * DK_BENCH_NO_CHANGE). */
    size_t processes;
    double between_share;
    double resolution;
    int change_by_process;
} dk_bench_estimate;

/*
 * dk_bench_results_estimate - the estimate of measure (e.g. "time",
 * "instructions") of result index. Strings point into r. Returns 0,
 * DK_EINVAL (NULL argument, bad size, index out of range), DK_ENOEVENT
 * (no such measure), DK_EUNAVAILABLE (the measure was not measured: a
 * counter not counted in every run; dk_bench_last_error says why).
 */
DK_EXPORT int dk_bench_results_estimate(const dk_bench_results *r, size_t index,
                                        const char *measure, dk_bench_estimate *out);

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
 *   --samples N           exactly N samples a process (no adaptive stop)
 *   --processes N         measure each benchmark in N fresh processes of
 *                         this program (10), re-executed with the same
 *                         arguments: the interval and the change test
 *                         hold the spread between processes
 *                         (doc/BENCH-STATISTICS.md §13); 1: in this one
 *   --precision P         stop when every CI half-width <= P x estimate (0.01)
 *   --noise P             changes within +-P are noise (0.01)
 *   --save-baseline NAME  save the results as baseline NAME
 *   --baseline NAME       compare with baseline NAME
 *   --ab PROGRAM          compare with another build of this program, run
 *                         in pairs of processes side by side; PROGRAM is
 *                         a path (./old) or a build saved with --save-build
 *   --save-build NAME     save this program's executable as build NAME
 *   --results-dir D       where baselines go (dkbench-results, the one
 *                         results folder of libdkbench and dkperf bench)
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
 * DKBENCH_NOISE, DKBENCH_PROCESSES, DKBENCH_OUTPUT_DIR (the results
 * directory), DKBENCH_SEED,
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
