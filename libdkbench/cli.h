/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli.h - the command line of a benchmark program (cli.c), read by
 * dk_bench_main (main.c). Internal to libdkbench.
 */
#ifndef DKPERF_BENCH_CLI_H
#define DKPERF_BENCH_CLI_H

#include <stdbool.h>

#include "common/error.h"
#include "libdkbench/harness.h"

/* Processes a benchmark is measured in by default, and at most. */
#define DKB_DEFAULT_PROCESSES 10
#define DKB_MAX_PROCESSES 1000
#define DKB_STR2(x) #x
#define DKB_STR(x) DKB_STR2(x)

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
} dkb_options;

/* Fills *o from the DKBENCH_* environment, then argv (options win).
 * Returns 0; -1 after printing --help on stdout; 2 after saying what is
 * wrong with an option or a variable. */
int dkb_options_parse(dkb_options *o, int argc, char **argv);

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
