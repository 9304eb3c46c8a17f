/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_params.h - dkperf bench's list of benchmarks as hyperfine builds
 * it: the commands, their -n names, the -P/-D scan and the -L lists, and
 * the concrete benchmarks they expand to, {NAME} substituted in the
 * command, its name, --setup, --cleanup and --prepare (bench_params.c).
 */
#ifndef DKPERF_BENCH_PARAMS_H
#define DKPERF_BENCH_PARAMS_H

#include <stddef.h>
#include <stdio.h>

#define BENCH_MAX_CASES 100000 /* hyperfine's bound on a scan's values */

/* The options as given (pointers into argv). */
typedef struct bench_param_opts {
    const char *scan[3]; /* -P NAME MIN MAX; scan[0] NULL: none */
    const char *step;    /* -D */
    const char **lists;  /* -L NAME VALUES, in order: lists[2k], lists[2k + 1] */
    size_t nlists;
    const char **names; /* -n, in order */
    size_t nnames;
} bench_param_opts;

/* One benchmark: a command with one value of each parameter. */
typedef struct bench_case {
    char *command;                   /* the command line, {NAME} substituted */
    char *name;                      /* -n NAME substituted, else the command line */
    char *setup, *cleanup, *prepare; /* substituted; NULL when not given */
    const char **params;             /* the parameter names, sorted (as hyperfine's exports) */
    char **values;                   /* one per name */
    size_t nparams;
    char *unused; /* "n = 1, m = x": the parameters not in the command; NULL: none */
} bench_case;

typedef struct bench_cases {
    bench_case *c;
    size_t n;
    const char **params; /* the names the cases point to */
} bench_cases;

/* If argv[*i] is -n, -P, -D or -L (or a long form), take it and its
 * values: 0, or EXIT_USAGE after one line. -1: not one of them. */
int bench_params_option(int argc, char **argv, int *i, bench_param_opts *p);
void bench_params_free(bench_param_opts *p);

/* Expand the commands into benchmarks, in hyperfine's order (the commands
 * vary fastest, then each parameter in the order given). Returns 0, or
 * EXIT_USAGE (a bad range, a name count that does not fit, a parameter
 * used nowhere) or EXIT_SETUP (out of memory) after one line. */
int bench_params_expand(const bench_param_opts *p, const char *const *commands, size_t ncommands,
                        const char *setup, const char *cleanup, const char *prepare,
                        bench_cases *out);
void bench_cases_free(bench_cases *cs);

/* {"a": "x", "n": "1"}: a benchmark's parameters, values as strings. */
void bench_case_json(FILE *f, const bench_case *c);

#endif /* DKPERF_BENCH_PARAMS_H */
