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
    const char *export_json, *export_csv, *export_markdown;
    const char *save_baseline, *baseline;
    const char *results_dir;
    const char *shell; /* -S; NULL: the commands are split into words and exec'd (-N) */
    bool ignore_failure;
    bool show_output;
    const char *backend;
    char **commands; /* after --: points into argv */
    size_t ncommands;
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
    const char *text; /* as given */
    char **argv;      /* owned: the words exec'd (NULL-terminated) */
    bench_run *runs;
    size_t nruns, cap;
    summary wall, user, sys;
    summary ev[DK_MAX_EVENTS];
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

/* Fill the summaries of every command from its runs. Returns 0 or -1 (out of memory). */
int bench_summarize(bench_report *r);

/* The report on out; with a baseline (parsed JSON root, may be NULL). */
struct json_value;
void bench_print(FILE *out, const bench_report *r, const struct json_value *baseline);

/* Exports: return 0, or EXIT_SETUP after a line naming the file. */
int bench_export_json(const bench_report *r, const char *path);
int bench_export_csv(const bench_report *r, const char *path);
int bench_export_markdown(const bench_report *r, const char *path);
/* <dir>/<name>.json, creating dir. */
int bench_save_baseline(const bench_report *r, const char *dir, const char *name);
/* Parse <dir>/<name>.json; NULL after a line naming the file and the problem. */
struct json_value *bench_load_baseline(const char *dir, const char *name);

#endif /* DKPERF_BENCH_H */
