/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * processes.h - a benchmark measured in several fresh processes: the
 * program re-executes itself as a worker that measures one benchmark (or
 * one --compare group) and hands its results back on a pipe, and the
 * parent combines the workers' estimates with the process as the unit of
 * replication (doc/BENCH-STATISTICS.md §13). Internal to libdkbench.
 */
#ifndef DKPERF_BENCH_PROCESSES_H
#define DKPERF_BENCH_PROCESSES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "libdkbench/harness.h"

/* The variable that makes a re-executed program a worker:
 * "FD:FIRST:COUNT:INDEX:OF", the pipe to write to, the registry indices
 * to measure, and which of how many processes this one is. */
#define DKB_WORKER_ENV "DKBENCH_WORKER"
/* The first line a worker writes, before it measures anything: a program
 * that, run again, does not reach dk_bench_main never writes it. */
#define DKB_WORKER_HELLO "dkbench-worker 1\n"

/* The name of the first benchmark to measure, when given: the worker
 * looks it up among its own (another build may list them differently)
 * instead of trusting FIRST. */
#define DKB_WORKER_NAME_ENV "DKBENCH_WORKER_NAME"
/* What a worker writes after the hello, and nothing else, when it has no
 * benchmark of that name: the program that asked says so, once. */
#define DKB_WORKER_NO_SUCH_NAME "no such benchmark\n"

typedef struct dkb_worker {
    int fd;
    size_t first, count; /* positions first .. first + count - 1 of the chosen list */
    size_t index, of;    /* process index of `of` */
    char name[256];      /* DKB_WORKER_NAME_ENV, "" when not given */
} dkb_worker;

/* Whether this process is a worker: 1 (and *w filled), 0, or -1 after
 * dkb_last_error names what is wrong with the variable. The variables are
 * removed from the environment either way, so that nothing the benchmark
 * starts inherits them. */
int dkb_worker_from_env(dkb_worker *w);

/* The configuration of one worker's share: the time budget, warm-up bound
 * and minimum sampling time divided among `of` processes, the seed moved
 * by the process index. */
void dkb_worker_config(dkb_config *c, const dkb_worker *w);

/* The path this program can be re-executed by (the running executable's),
 * into buf; false when it cannot be found (dkb_last_error says why). */
bool dkb_self_exe(char *buf, size_t size);

/*
 * dkb_run_worker - run exe with argv (argv[0] included, NULL-terminated)
 * as worker w (its fd is chosen here), its stdin from /dev/null and its
 * stdout, stderr the program's, and read what it writes on the pipe into
 * *text (malloc'ed, NUL-terminated, *len bytes; NULL when it could not
 * be started) until it exits (not until the pipe's end: a child it left
 * may hold that). A signal noted in *stop (when stop is not NULL) is
 * passed on to it. Returns 0 when it exited with status 0;
 * else a DK_E* code and dkb_last_error says how it ended, with *text
 * what it wrote before; *signal_out is the signal that ended it, 0 if none.
 */
int dkb_run_worker(const char *exe, char *const *argv, const dkb_worker *w,
                   const volatile sig_atomic_t *stop, char **text, size_t *len, int *signal_out);

/*
 * dkb_combine_processes - the result of one benchmark from its n
 * processes' results per[0..n) (same name and measures): every sample of
 * every process, estimated as one set for the fit, the summary and the
 * outliers; then each measure's headline `slope` replaced by the mean of
 * the processes' estimates with its t interval (dkb_process_summarize), and
 * the estimates kept in proc and proc_half. A measure unavailable in any
 * process is unavailable. Returns 0, DK_EINVAL (results that do not match:
 * dkb_last_error says how), DK_ENOMEM.
 */
int dkb_combine_processes(const dkb_config *cfg, const dkb_result *per, size_t n, dkb_result *out);

/*
 * A body so slow that its first process alone takes more than
 * 1/procs of DKB_SLOW_BUDGETS times the budget (time and warm-up) runs in
 * as many processes as fit in them, DKB_MIN_PROCESSES at least, unless
 * the count is fixed (given by the user).
 */
#define DKB_SLOW_BUDGETS 3
#define DKB_MIN_PROCESSES 3

/*
 * dkb_measure_processes - measure the k benchmarks at positions first ..
 * first + k - 1 of the program's chosen list (one benchmark, or a --compare
 * group run interleaved) in procs worker processes of exe, one after the
 * other, and combine each benchmark's results into out[0..k). Stops early,
 * with out zeroed, when *stop becomes non-zero. Returns 0 or a DK_E* code
 * (out then freed; dkb_last_error says which process failed and how):
 * DK_ENOTSUP when the first process did not act as a worker (it never
 * said DKB_WORKER_HELLO): the program does not run dk_bench_main when run
 * again, and must be measured within its own process.
 */
int dkb_measure_processes(const dkb_config *cfg, const char *exe, char *const *argv, size_t first,
                          size_t k, size_t procs, bool fixed, const volatile sig_atomic_t *stop,
                          dkb_result *out);

/*
 * dkb_measure_shuffled - the n benchmarks at positions 0 .. n - 1 of the
 * chosen list, each in procs worker processes of exe as
 * dkb_measure_processes runs them (procs fixed), the n * procs processes
 * run in a random order drawn from cfg->seed
 * (--benchmark_enable_random_interleaving), then each benchmark's
 * combined into out[i]. Returns as dkb_measure_processes (out zeroed on
 * failure).
 */
int dkb_measure_shuffled(const dkb_config *cfg, const char *exe, char *const *argv, size_t n,
                         size_t procs, const volatile sig_atomic_t *stop, dkb_result *out);

/* An A/B comparison: this program against another build of it, run
 * alternately process by process. */
typedef struct dkb_ab {
    const char *self, *other; /* the executables */
    char *const *self_argv, *const *other_argv;
    const char *const *names; /* the chosen benchmarks' names, by position */
    size_t pairs;             /* processes of each; 0: as many as the change needs */
    double noise;
} dkb_ab;

/* Without a number of pairs, --ab runs pairs until every benchmark's time
 * change resolves half the noise threshold, at least DKB_AB_MIN_PAIRS and
 * for at most DKB_AB_BUDGET seconds a benchmark (or group). */
#define DKB_AB_MIN_PAIRS 20
#define DKB_AB_BUDGET 10.0

/*
 * dkb_measure_ab - as dkb_measure_processes, with ab->pairs processes of
 * this program (0: as above) and as many of the other, in pairs run one after the
 * other (which one first alternates), each benchmark found by name in the
 * other. out[g] gets this program's results compared with the other's
 * (dkb_compare_paired), other[g] the other's. Returns as
 * dkb_measure_processes: DK_ENOTSUP when either program does not act as a
 * worker (no pair can be run).
 */
int dkb_measure_ab(const dkb_config *cfg, const dkb_ab *ab, size_t first, size_t k,
                   const volatile sig_atomic_t *stop, dkb_result *out, dkb_result *other);

#endif /* DKPERF_BENCH_PROCESSES_H */
