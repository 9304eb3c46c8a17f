/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report.h - libdkbench's reports and baselines, one file per format.
 * Every function returns 0 or a negative DK_E* code with dkb_last_error()
 * naming the file or the problem (a write error included). Not installed.
 */
#ifndef DKPERF_BENCH_REPORT_H
#define DKPERF_BENCH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "libdkbench/model.h"

/* One block per benchmark, in the manner of Criterion, printed as each
 * finishes; color: ANSI colours (the caller decides: a terminal, no
 * NO_COLOR). verbose adds the fit, R^2, the outlier fences. */
int dkb_report_terminal(FILE *out, const dkb_run_info *run, const dkb_result *r, bool color,
                        bool verbose);

/* Files, for every result of a run. baseline[i], when not NULL, is the
 * baseline result of results[i] (same name), for the HTML overlay. */
int dkb_report_json(FILE *out, const dkb_run_info *run, const dkb_result *const *results, size_t n);
int dkb_report_csv(FILE *out, const dkb_run_info *run, const dkb_result *const *results, size_t n);
int dkb_report_markdown(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                        size_t n);
int dkb_report_gbench(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                      size_t n); /* google benchmark's --benchmark_format=json layout */
/* How google benchmark's layouts are written (dkb_report_gbench_view):
 * executable: argv[0] as given (NULL: no "executable" key, as google
 * benchmark when it has none); repetitions: how many were asked for (>= 2:
 * a result measured in processes is written one entry per process, then
 * the mean, median, stddev and cv aggregates); aggregates_only: the
 * aggregates alone; counters_tabular and color: the console's; names[i]
 * maps an event name to the name the user asked for (CYCLES for cycles).
 * date (NULL: now, local time) and sysroot (NULL: this machine's /proc and
 * /sys) are for tests. */
typedef struct dkb_gbench_name {
    const char *event, *as;
} dkb_gbench_name;
typedef struct dkb_gbench_view {
    const char *executable;
    size_t repetitions;
    bool aggregates_only, counters_tabular, color;
    const dkb_gbench_name *names;
    size_t n_names;
    const char *date, *sysroot;
} dkb_gbench_view;
int dkb_report_gbench_view(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                           size_t n, const dkb_gbench_view *view);
/* google benchmark's console table and CSV; the description of the
 * machine goes to err (NULL: out), as google benchmark writes it to stderr
 * for its display and into the file for --benchmark_out. */
int dkb_report_gbench_console(FILE *out, FILE *err, const dkb_run_info *run,
                              const dkb_result *const *results, size_t n,
                              const dkb_gbench_view *view);
int dkb_report_gbench_csv(FILE *out, FILE *err, const dkb_run_info *run,
                          const dkb_result *const *results, size_t n, const dkb_gbench_view *view);
/* Colour as google benchmark's --benchmark_color=auto decides it: out is a
 * terminal and TERM one it knows. */
bool dkb_gbench_color_auto(FILE *out);
int dkb_report_html(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                    const dkb_result *const *baseline, size_t n);

/* Baselines: <dir>/<name>.json in the JSON report's schema. load gives a
 * malloc'ed array of *n results (free each with dkb_result_free, then the
 * array); a missing file is DK_ENOENT-like (DK_EINVAL if no better code)
 * with a message naming the path. */
int dkb_baseline_save(const char *dir, const char *name, const dkb_run_info *run,
                      const dkb_result *const *results, size_t n);
int dkb_baseline_load(const char *dir, const char *name, dkb_result **out, size_t *n);
/* Before a run that saves baseline name in dir: the name is valid
 * (DK_EINVAL if not) and a file can be made in dir, which is created if
 * missing (*created says so: the caller removes it if the run saves
 * nothing). */
int dkb_baseline_check(const char *dir, const char *name, bool *created);
/* dir/name.json into out, after checking name (non-empty, no '/', not "."
 * or "..") and dir (non-empty); fn names the caller in the error. Returns
 * 0 or DK_EINVAL. */
int dkb__baseline_path(char *out, size_t size, const char *dir, const char *name, const char *fn);
/* A report's file, opened before anything is run so that a path that
 * cannot be written fails at once, not after every benchmark ran. Not
 * truncated until the report is written: a run cut short leaves a file it
 * found as it was, and removes one it made. */
typedef struct dkb_report_file {
    const char *option, *path, *what; /* "--json", the path, "JSON" */
    FILE *f;
    bool created;
    /* google benchmark's layouts ("google benchmark JSON", "... console",
     * "... CSV"): how (NULL: the defaults). */
    const dkb_gbench_view *view;
} dkb_report_file;
/* Open r's file (before anything runs). 0, or 1 after saying why. */
int dkb_open_report(const char *prog, dkb_report_file *r);
/* Close r's file; when keep is false, a file this run made is removed. */
void dkb_close_report(dkb_report_file *r, bool keep);
/* Write the report r->what of results rs (base: their baselines, for the
 * HTML overlay) to r's file and close it. 0, or 1 after saying why. */
int dkb_write_report(const char *prog, dkb_report_file *r, const dkb_run_info *run,
                     const dkb_result *const *rs, const dkb_result *const *base, size_t n);

/* A saved build (--save-build): dir/name.build, name checked as a
 * baseline's; and saving a copy of exe there, executable, through a
 * temporary file renamed onto it. Return 0 or DK_EINVAL, DK_EOS. */
int dkb_build_path(char *out, size_t size, const char *dir, const char *name);
int dkb_build_save(const char *dir, const char *name, const char *exe);
/* The reader behind dkb_baseline_load, on the len bytes of text already
 * read from path (which its errors name). */
int dkb__baseline_parse(const char *path, const char *text, size_t len, dkb_result **out,
                        size_t *n);

#endif /* DKPERF_BENCH_REPORT_H */
