/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli.h - the command line of a benchmark program (cli.c), read by
 * dk_bench_main (main.c). Internal to libdkbench.
 */
#ifndef DKPERF_BENCH_CLI_H
#define DKPERF_BENCH_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "libdkbench/harness.h"
#include "libdkbench/report.h"

/* Processes a benchmark is measured in by default, and at most. */
#define DKB_DEFAULT_PROCESSES 10
#define DKB_MAX_PROCESSES 1000
#define DKB_STR2(x) #x
#define DKB_STR(x) DKB_STR2(x)

/* google benchmark's flags (gbench_cli.c), as it spells them: for the run
 * and for the reporters. */
typedef struct dkb_gbench_flags {
    bool list_tests, random_interleaving, report_aggregates_only, display_aggregates_only,
        counters_tabular;
    const char *filter;        /* NULL: not given; "all" and "" mean all */
    int repetitions;           /* 0: not given */
    double min_time;           /* seconds a repetition, 0: not given */
    uint64_t min_iters;        /* --benchmark_min_time=Nx, 0: not given */
    const char *format;        /* console (default), json, csv */
    const char *out;           /* --benchmark_out, NULL: none */
    const char *out_format;    /* json (default), console, csv */
    const char *color;         /* auto (default), or a truthy or falsy word */
    const char *perf_counters; /* as given, NULL: not given */
    /* --benchmark_perf_counters mapped to events: events (a list for -e,
     * in events_buf) and each one's name as the user wrote it. */
    char events_buf[1024], labels_buf[1024];
    const char *labels[DK_MAX_EVENTS], *event_of[DK_MAX_EVENTS];
    size_t n_labels;
    /* Flags that were given but cannot be honoured (said by
     * dkb_gbench_notes). */
    bool context, time_unit, min_warmup_time, verbosity;
} dkb_gbench_flags;

typedef struct dkb_options {
    dkb_config cfg;
    const char *filter;
    char filter_from[64], events_from[64]; /* named in their errors: "DKBENCH_FILTER", ... */
    const char *events;
    bool list, quiet, verbose, compare, p_cores;
    double noise;
    size_t processes; /* --processes: fresh processes per benchmark, 1: this one */
    bool processes_given;
    const char *ab, *save_build; /* --ab PROGRAM, --save-build NAME */
    const char *save_baseline, *baseline, *results_dir;
    const char *json, *csv, *markdown, *gbench, *html;
    bool filter_negated; /* --benchmark_filter=-REGEX: all but its matches */
    dkb_gbench_flags gb;
} dkb_options;

/* Fills *o from the DKBENCH_* environment, then argv (options win).
 * Returns 0; -1 after printing --help on stdout; 2 after saying what is
 * wrong with an option or a variable. */
int dkb_options_parse(dkb_options *o, int argc, char **argv);

/* One argument, when it is one of google benchmark's flags (--benchmark_*
 * or --v): 0 when it was taken, DKB_GBENCH_NOT_A_FLAG when it is not one
 * of them; -1 to stop with status 0 and any other value to stop with that
 * status, after saying why (google benchmark's message and exit status). */
#define DKB_GBENCH_NOT_A_FLAG (-2)
int dkb_gbench_flag(dkb_options *o, const char *prog, const char *arg);

/* After every argument: google benchmark's flags applied to o (filter,
 * repetitions as processes, min_time as the budget or an iteration count,
 * perf counters as the events). Returns as dkb_gbench_flag. */
int dkb_gbench_apply(dkb_options *o, const char *prog);

/* Say, one line each, which google benchmark flags given are not honoured
 * and what happens instead (by the program, not by its workers). */
void dkb_gbench_notes(const dkb_options *o, const char *prog);

/* --benchmark_color: whether to colour, given what "auto" would mean. */
bool dkb_gbench_color(const dkb_options *o, bool auto_color);

/* How google benchmark's layouts are written for this run: to a file, or
 * on stdout (display: --benchmark_display_aggregates_only and the colour
 * apply). names: room for DK_MAX_EVENTS, the perf counters' names. */
void dkb_gbench_view_of(const dkb_options *o, const char *argv0, bool display,
                        dkb_gbench_name *names, dkb_gbench_view *v);

/* --ab PROGRAM: the other program, a path or a saved build, into path;
 * and what it cannot be combined with. 0, or the exit status after saying
 * why. */
int dkb_ab_check(const char *prog, const dkb_options *o, char *path, size_t size);

/* Split a list of events into names (pointing into buf, a copy of list)
 * with libdkperf's event grammar, as dkperf -e reads it. Returns the
 * count, or -1 after saying why (prog: what 'list': ...). */
int dkb_split_events(const char *prog, const char *what, const char *list, char *buf,
                     const char **names);

/* Messages on stderr are escaped as a whole (common/text.h): they quote
 * benchmark names, baseline files, their names and library messages, any of
 * which may hold terminal escapes; their own words hold no control byte.
 * dkb_put writes part of a line, dkb_say a whole one. */
void dkb_put(const char *fmt, ...) DKB_PRINTF(1, 2);
void dkb_say(const char *fmt, ...) DKB_PRINTF(1, 2);

#endif /* DKPERF_BENCH_CLI_H */
