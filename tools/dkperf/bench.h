/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench.h - what the parts of dkperf bench share (bench.c drives the runs,
 * bench_options.c parses the command line, bench_report.c prints the
 * report, the exports and the baselines).
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
#include "summary.h"

#define BENCH_MAX_RUNS 1000000
#define BENCH_MIN_RUNS 10          /* hyperfine's --min-runs default */
#define BENCH_DEFAULT_TIME 3.0     /* seconds: hyperfine's minimum benchmarking time */
#define BENCH_DEFAULT_DIR "dkperf-bench-results"

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
    int status;             /* exit status, 128 + signal when killed */
    uint64_t values[DK_MAX_EVENTS];
    bool counted[DK_MAX_EVENTS];
} bench_run;

/* An event as the first run found it. */
typedef struct bench_event {
    const char *name; /* as asked */
    char native[128];
    bool supported;
    bool time;        /* its unit is ns: printed as a time */
    bool instructions;
    char why[1024];
} bench_event;

typedef struct bench_command {
    const char *text; /* its name: -n, else the command line */
    const bench_case *bcase; /* its command line and parameters */
    char **argv;      /* owned: the words exec'd (NULL-terminated) */
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

/* Fill the summaries of command k from its runs. Returns 0 or -1 (out of memory). */
int bench_summarize_command(bench_report *r, size_t k);

/* A time of t seconds in the unit the report chooses for it ("301.2 ms"). */
const char *bench_fmt_time(double t, char *buf, size_t size);

/* The report on out, command by command as each finishes (the block of
 * command k, with its baseline comparison when baseline, a parsed JSON
 * root, is not NULL), then the end: with complete (every command ran) the
 * commands missing on either side of the baseline and the comparisons;
 * always the backend, the scope and why events were not supported. */
struct dk_json;
void bench_print_command(FILE *out, const bench_report *r, size_t k,
                         const struct dk_json *baseline);
void bench_print_end(FILE *out, const bench_report *r, const struct dk_json *baseline,
                     bool complete);

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

/* --save-baseline: <dir>/<name>.json, written to a file beside it that
 * replaces it only when the benchmark completes. begin creates dir and the
 * file (0, or EXIT_USAGE / EXIT_SETUP after a line); finish writes r and
 * renames, or with r NULL removes what begin made (the results directory
 * too, when begin made it and it is still empty). */
typedef struct bench_baseline_file {
    const char *name;
    const char *dir;  /* the results directory, when begin made it */
    char path[4096], tmp[4096];
    FILE *f;
} bench_baseline_file;
int bench_baseline_begin(bench_baseline_file *b, const char *dir, const char *name);
int bench_baseline_finish(bench_baseline_file *b, const bench_report *r);

/* Parse <dir>/<name>.json; NULL after a line naming the file and the problem. */
struct dk_json *bench_load_baseline(const char *dir, const char *name);

#endif /* DKPERF_BENCH_H */
