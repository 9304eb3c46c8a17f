/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat.h - what the parts of dkperf stat share: the runs and the report
 * (stat.c drives them, stat_run.c runs the command, stat_print.c prints).
 */
#ifndef DKPERF_STAT_H
#define DKPERF_STAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "stat_options.h"

/* One run's counts and times. */
typedef struct run {
    uint64_t values[DK_MAX_EVENTS];
    dk_reading info[DK_MAX_EVENTS];
    uint64_t elapsed_ns, user_ns, system_ns;
} run;

/* The roles derived metrics need. */
enum { ROLE_NONE, ROLE_INSTRUCTIONS, ROLE_CYCLES, ROLE_BRANCHES, ROLE_MISSES, ROLE_CLOCK };

typedef struct report {
    size_t n;
    const char *names[DK_MAX_EVENTS]; /* as asked */
    char native[DK_MAX_EVENTS][128];  /* copies: the group is closed after each run */
    const char *unit[DK_MAX_EVENTS];  /* owned by the sampler's database */
    bool supported[DK_MAX_EVENTS];
    char why[DK_MAX_EVENTS][1024]; /* as long as dk_last_error() can be */
    int role[DK_MAX_EVENTS];
    run *runs;
    size_t nruns;
    int exit_status;
    bool signaled; /* the last run's command was killed by a signal */
    char scope[128];
    struct stat_rows *rows; /* per-CPU and per-level counts (stat_rows.c), or NULL */
    FILE *out;              /* where -I prints each interval as it ends */
    bool attached;          /* -p or -t: no command ran */
    char notes[512];        /* what ended the attached count: "process 123 exited after 1.204 s" */
} report;

/* -I: what the last interval printed ended at (stat_interval.c). */
typedef struct stat_interval {
    uint64_t last[DK_MAX_EVENTS]; /* the running totals then */
    dk_reading last_info[DK_MAX_EVENTS];
    uint64_t last_ns; /* since the start */
    size_t printed;
} stat_interval;

/* Move iv on to since_ns (since the counting began) with the readings
 * info of n events: each one's enabled and running time over the interval,
 * the interval's span in *span_ns; returns since_ns in seconds. */
double stat_interval_advance(stat_interval *iv, size_t n, uint64_t since_ns, const dk_reading *info,
                             uint64_t *enabled, uint64_t *running, uint64_t *span_ns);

/* Whether a counter whose running totals are info ran over an interval in
 * which it ran running ns: perf's "<not counted>" otherwise (a command's
 * counters run only while it is on a CPU). A backend that gives no times
 * (time_enabled 0) counts whenever it counted at all. */
bool stat_interval_counted(const dk_reading *info, uint64_t running);

/*
 * Print the interval from iv's last one to since_ns (since the counting
 * began), whose running totals are values and info, in o's format (human,
 * CSV or one JSON line), and flush it; iv moves on. Each interval's counts
 * are the difference of two running totals, so the intervals add up to the
 * total (scaled counts that shrink print 0 until they have grown back).
 */
void stat_interval_print(FILE *out, const report *rep, const stat_options *o, stat_interval *iv,
                         uint64_t since_ns, const uint64_t *values, const dk_reading *info);

/*
 * -p or -t: count the running processes or threads in o until a signal
 * (Ctrl-C), --timeout or the exit of every one of them; -I prints
 * intervals meanwhile. Returns 0 with the counts in *out and rep filled,
 * or EXIT_SETUP after one line saying why (nothing is left open), or
 * 128 + signal when interrupted before counting began.
 */
int stat_run_attach(dk_sampler *s, const stat_options *o, char **names, size_t n, report *rep,
                    run *out);

/*
 * One run: fork the command held before exec, open the counters on it (or
 * every CPU), let it exec, wait, read, reap; the first run fills the
 * report's event facts. Returns 0, or the exit status dkperf must end with
 * on a setup failure (128 + signal when interrupted before the command
 * ran); *exec_failed is set (127, 126) when the command could not run.
 */
int stat_run_once(dk_sampler *s, const stat_options *o, char **names, size_t n, report *rep,
                  run *out, int *exec_failed);

/* The report as perf stat prints it, and as --json (ours). */
void stat_print_human(FILE *out, const report *rep, const stat_options *o, dk_sampler *s);
/* "\n Performance counter stats for 'CMD'" or "... for process id '1,2'", no newline. */
void stat_print_title(FILE *out, const report *rep, const stat_options *o);
/* Why events were not supported: one line per reason, naming its events. */
void stat_print_unavailable(FILE *out, const report *rep);
void stat_print_json(FILE *out, const report *rep, const stat_options *o, dk_sampler *s);

/*
 * Event i's derived metric from the counts v[] (means, a row's or an
 * interval's) of the events ok[] says were counted, over elapsed ns:
 * value and unit ("CPUs utilized", "insn per cycle", "M/sec", ...), or
 * false when it has none.
 */
bool stat_metric(const report *rep, const double *v, const bool *ok, size_t i, double elapsed,
                 double *value, const char **unit);

/* One event's line in perf stat's -x and -j forms (stat_perf.c). */
typedef struct stat_line {
    size_t i;          /* the event */
    double interval;   /* -I: seconds since the start; < 0 without */
    const char *label; /* a row's: "CPU3", "S0-C1", "P"; NULL for the totals */
    int cpu;           /* -A: the CPU's number */
    size_t cpus;       /* a row's CPUs (shown for --per-core, --per-level) */
    bool ok;           /* counted; otherwise "<not counted>" or "<not supported>" */
    double value;      /* count (ns for events in ns) */
    double rel;        /* -r: the relative spread in percent (0 for a row, as perf) */
    uint64_t run_ns;   /* the counters' run time */
    double pcnt;       /* percent of the time enabled they ran */
    bool has_metric;
    double metric;
    const char *metric_unit;
} stat_line;

void stat_perf_line(FILE *out, const report *rep, const stat_options *o, const stat_line *l);
/* The totals as perf stat -x SEP or -j prints them (one line per event). */
void stat_print_perf(FILE *out, const report *rep, const stat_options *o);

/*
 * Per-CPU and per-level breakdowns (stat_rows.c). stat_rows_open checks a
 * run's group against -C and the breakdown asked for (first run: sets up
 * rep->rows); stat_rows_capture adds a run's rows (and with -C makes the
 * run's totals those of the listed CPUs). Both return 0, or the exit
 * status after one "dkperf stat: ..." line.
 */
int stat_rows_open(dk_group *g, const stat_options *o, report *rep);
int stat_rows_capture(dk_group *g, const stat_options *o, report *rep, run *out);
/* With -C, replace values (a reading of the whole group, as -I takes
 * between intervals) by the sums of the listed CPUs, so that the intervals
 * count what the totals count. Returns 0, or the exit status after one
 * "dkperf stat: ..." line. */
int stat_rows_restrict(dk_group *g, const stat_options *o, report *rep, uint64_t *values);
/* Print the report broken down by CPU, core or level (-a with -A,
 * --per-core, --per-level); false when there is no such breakdown and the
 * plain report is to be printed. */
bool stat_rows_print(FILE *out, const report *rep, const stat_options *o, dk_sampler *s);
/* What the plain reports add: a process's split by level (human; CSV with
 * --per-level), and in JSON the rows and levels ("rows", "levels"). */
void stat_rows_human_levels(FILE *out, const report *rep);
void stat_rows_csv_levels(FILE *out, const report *rep, const stat_options *o);
void stat_rows_json(FILE *out, const report *rep, const stat_options *o);
void stat_rows_free(report *rep);
/* -I with -a and a breakdown (-A, --per-core, --per-level): each interval
 * prints the rows, not the totals. stat_rows_read takes the per-CPU
 * reading (0, or the exit status after one line); stat_rows_interval_print
 * prints the rows of the interval ending at since_ns from the last reading,
 * as stat_interval_print does the totals (info: the totals' times). */
bool stat_rows_per_interval(const report *rep);
/* -p without -a: the processes' split by performance level (--per-level, or
 * by default where there are P and E cores), from groups g[0..ng):
 * stat_rows_open_attached sets it up (0, or the exit status after one
 * line); stat_rows_note_levels takes group k's split at each reading of it
 * (one that fails keeps the last); stat_rows_capture_attached adds up the
 * last ones at the end. */
int stat_rows_open_attached(dk_group *const *g, size_t ng, const stat_options *o, report *rep);
void stat_rows_note_levels(report *rep, size_t k, dk_group *g);
void stat_rows_capture_attached(report *rep);
int stat_rows_read(dk_group *g, report *rep);
void stat_rows_interval_print(FILE *out, const report *rep, const stat_options *o,
                              stat_interval *iv, uint64_t since_ns, const dk_reading *info);

#endif /* DKPERF_STAT_H */
