/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat_options.h - dkperf stat's command line, parsed without running
 * anything: the options and the -e event lists. Nothing here exits, forks
 * or opens a sampler, so the parser can be called on any input (the fuzz
 * targets in tests/fuzz do).
 */
#ifndef DKPERF_STAT_OPTIONS_H
#define DKPERF_STAT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"

#define STAT_MAX_RUNS 100000

typedef struct stat_options {
    char **events; /* owned: every -e list, split, in order; NULL when none */
    size_t nevents;
    long repeat;         /* -r, 1 by default */
    const char *sep;     /* -x, or NULL */
    bool json;           /* --json (ours: one object) */
    bool jsonl;          /* -j, --json-output: perf stat's JSON lines */
    const char *output;  /* -o, or NULL */
    bool append;         /* --append: add to the -o file */
    bool all_cpus;       /* -a */
    const char *backend; /* --backend, checked against the known names, or NULL */
    char **cmd;          /* CMD [ARGS...]: points into argv, NULL-terminated as argv is;
                            NULL when attaching (-p, -t) */
    long interval_ms;    /* -I, 0 when not given */
    long timeout_ms;     /* --timeout, 0 when not given */
    int *pids;           /* owned: the -p process ids or -t thread ids, NULL when none */
    size_t npids;
    bool threads; /* pids are -t thread ids */
    int aggr;     /* STAT_AGGR_*: -A, --per-core, --per-level */
    int *cpus;    /* -C: owned, ascending, no CPU twice; NULL: every CPU */
    size_t ncpus;
    const char *cpu_text; /* -C as given */
} stat_options;

/* How counts of system scope are broken down (-A, --per-core, --per-level). */
enum { STAT_AGGR_TOTAL = 0, STAT_AGGR_CPU, STAT_AGGR_CORE, STAT_AGGR_LEVEL };

/* Largest CPU number -C takes. */
#define STAT_CPU_MAX 8191

/* -I's and --timeout's shortest time: below it a reading costs too much of
 * the interval (perf stat's minimum too), on every backend. */
#define STAT_MIN_INTERVAL_MS 10
#define STAT_MAX_INTERVAL_MS 86400000L /* a day */
#define STAT_MAX_PIDS 64

/*
 * Parse argv[1..argc-1] (argv[0] is "stat"; argv[argc] must be NULL).
 * Returns 0; -1 after printing the help to standard output (--help); or
 * an exit status (EXIT_USAGE, EXIT_SETUP when out of memory) after one
 * "dkperf stat: ..." line on standard error. Whatever it returns, *o is
 * set and stat_options_free releases it.
 */
int stat_parse_args(int argc, char **argv, stat_options *o);

/* Free what stat_parse_args allocated; *o is zeroed. NULL is ignored. */
void stat_options_free(stat_options *o);

/* dkperf help stat. */
void help_stat(FILE *out);

#endif /* DKPERF_STAT_OPTIONS_H */
