/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench.h - what the parts of dkperf bench share (bench.c drives the runs,
 * bench_progress.c draws the progress line, bench_options.c parses the
 * command line, bench_output.c prints the results and writes the exports
 * and the baselines).
 *
 * dkperf bench runs each command many times, each run with process-scope
 * counters that start at its exec, as hyperfine -N does with time alone.
 */
#ifndef DKPERF_BENCH_H
#define DKPERF_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bench_params.h"
#include "cli.h"
#include "dkbench.h"

#define BENCH_MAX_RUNS 1000000
#define BENCH_MIN_RUNS 10      /* hyperfine's --min-runs default */
#define BENCH_DEFAULT_TIME 3.0 /* seconds: hyperfine's minimum benchmarking time */
/* libdkbench's results folder: one for dkbench programs and dkperf bench.
 * Baselines an older dkperf bench saved are in BENCH_OLD_DIR. */
#define BENCH_DEFAULT_DIR DK_BENCH_RESULTS_DIR /* libdkbench's */
#define BENCH_OLD_DIR "dkperf-bench-results"

typedef struct bench_options {
    char **events; /* owned: every -e list, split, in order; NULL when none */
    size_t nevents;
    long runs;       /* -r; 0: as many as --time asks, at least BENCH_MIN_RUNS */
    double min_time; /* --time, seconds */
    long warmup;     /* -w, 0 by default */
    const char *prepare;
    const char *setup, *cleanup; /* once before and once after each benchmark's runs */
    const char *export_json, *export_csv, *export_markdown;
    const char *save_baseline, *baseline;
    const char *results_dir;
    const char *shell; /* -S; NULL: the commands are split into words and exec'd (-N) */
    bool ignore_failure;
    bool show_output;
    bool no_progress; /* --no-progress: no progress line on a terminal */
    const char *backend;
    const char **commands; /* owned array; the strings are argv's */
    size_t ncommands;
    bench_param_opts params; /* -n, -P, -D, -L */
    bench_cases cases;       /* the benchmarks the commands and parameters make */
} bench_options;

/* One run of one command. */
typedef struct bench_run {
    double wall, user, sys; /* seconds */
    uint64_t max_rss;       /* bytes */
    int status;             /* exit status, 128 + signal when killed */
    uint64_t values[DK_MAX_EVENTS];
    bool counted[DK_MAX_EVENTS];
} bench_run;

/* An event as the first run found it. */
typedef struct bench_event {
    const char *name; /* as asked */
    char native[128];
    bool supported;
    bool time; /* its unit is ns: printed as a time */
    bool instructions;
    char why[1024];
} bench_event;

/*
 * One measure of a command as libdkbench estimated it (dk_bench_estimate),
 * times in seconds: the report's view, no statistics of its own. n 0: not
 * measured.
 */
typedef struct summary {
    size_t n;
    double mean, stddev, median, min, max;
    size_t mild, severe;   /* Tukey's outliers, both sides */
    dk_bench_estimate est; /* the estimate itself: its change against a baseline */
} summary;

typedef struct bench_command {
    const char *text;        /* its name: -n, else the command line */
    const bench_case *bcase; /* its command line and parameters */
    char name[256]; /* its benchmark's and baseline result's: text, unless repeated or long */
    char **argv;    /* owned: the words exec'd (NULL-terminated) */
    char **setup, **prepare, **cleanup; /* owned: their words; NULL when not given */
    bench_run *runs;
    size_t nruns, cap;
    summary wall, user, sys;
    summary ev[DK_MAX_EVENTS];
    /* Processes it started were still running after it exited (seen where
     * dkperf can adopt them: Linux); one group counting every process
     * dkperf starts then counts them in the runs that follow. */
    bool strays;
    bool stray_counted; /* processes left by an earlier run ran during one of its runs */
} bench_command;

typedef struct bench_report {
    const bench_options *o;
    const char *backend;
    char scope[128];
    bench_event ev[DK_MAX_EVENTS];
    size_t nev;
    bench_command *cmd;
    size_t ncmd;
} bench_report;

/* Name command k's benchmark (its name in baselines): its text, or for a
 * command given a second time or one of 256 bytes or more, its text cut
 * on a character and its place, "CMD #2". */
void bench_name_command(bench_report *rep, size_t k);

/* dkperf bench and dkperf help bench. */
int cmd_bench(int argc, char **argv);
void help_bench(FILE *out);

/* Parse argv (argv[0] is "bench"). Returns 0, -1 after --help, or an exit
 * status after one line on standard error; bench_options_free always. */
int bench_parse_args(int argc, char **argv, bench_options *o);
void bench_options_free(bench_options *o);

/*
 * Split a command string into words as a POSIX shell would without its
 * expansions: blanks separate, '...' keeps everything, "..." keeps all but
 * \" \\ \$ \`, a backslash outside quotes keeps the next character.
 * Returns a malloc'd NULL-terminated array (free with bench_free_words), or
 * NULL with why set ("an unterminated quote", "no words", "out of memory").
 */
char **bench_split_words(const char *s, const char **why);
void bench_free_words(char **words);

/* The words a command (what: "command", "--prepare") runs as: split
 * (-N), or SHELL -c CMD. NULL after a line naming it. */
char **bench_command_words(const bench_options *o, const char *what, const char *text);

/* A zeroed slot for the next run of cmd (cmd->nruns is not moved).
 * Returns 0, or EXIT_SETUP after a line (out of memory). */
int bench_add_run(bench_command *cmd, bench_run **slot);

/* Fill the summaries of command k from result index of res. */
void bench_summarize_command(bench_report *r, size_t k, const dk_bench_results *res, size_t index);

/* A time of t seconds in the unit the report chooses for it ("301.2 ms"). */
const char *bench_fmt_time(double t, char *buf, size_t size);

/* The progress line on standard error (bench_progress.c): on when that
 * is a terminal and neither --no-progress nor --show-output was given. */
typedef struct bench_progress {
    bool on;
    uint64_t at; /* when it was last drawn (dk__monotonic_ns); 0: not yet */
} bench_progress;

/* Draw run i of n of cmd (a warm-up run with warmup) over the last line,
 * at most ten times a second; bench_progress_clear erases it, so that
 * what follows starts a line of its own. */
void bench_progress_draw(bench_progress *p, const bench_report *rep, const bench_command *cmd,
                         bool warmup, long i, long n);
void bench_progress_clear(void);

/* The report on out, command by command as each finishes (the block of
 * command k, with its baseline comparison when --baseline was given),
 * then the end: with complete (every command ran) the commands missing on
 * either side of the baseline (base: the results, which name the
 * baseline's) and the comparisons; always the backend, the scope and why
 * events were not supported. */
void bench_print_command(FILE *out, const bench_report *r, size_t k);
void bench_print_end(FILE *out, const bench_report *r, const dk_bench_results *base, bool complete);

/* An export file (kind 0 JSON, 1 CSV, 2 Markdown). */
typedef struct bench_export {
    const char *option, *path; /* path NULL: not asked; "-": standard output */
    unsigned kind;
    FILE *f;
    bool created; /* the file did not exist before */
} bench_export;

/* Open every asked export before the first run, so that a file that
 * cannot be written ends dkperf before the benchmark rather than after
 * it. Returns 0, EXIT_USAGE after a line naming two exports to one file,
 * or EXIT_SETUP after a line naming the file; bench_exports_finish always. */
int bench_exports_open(bench_export *x, size_t n);
/* Write r (its commands that ran; NULL or none: nothing, and a file that
 * was made for it is removed) to each open export and close it. Returns 0
 * or EXIT_SETUP after a line naming the file (standard output's errors are
 * said by main). */
int bench_exports_finish(bench_export *x, size_t n, const bench_report *r);

/* Before a run with --baseline NAME in the default results folder: when
 * the baseline is not there but an older dkperf bench's folder holds it,
 * say how to use it. Returns 0 or EXIT_SETUP after that line. */
int bench_check_old_baseline(const bench_options *o);

#endif /* DKPERF_BENCH_H */
