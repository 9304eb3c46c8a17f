/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * record.h - dkperf record's options (record_options.c), apart from the
 * command itself (record.c) so that the parser can be fuzzed.
 */
#ifndef DKPERF_RECORD_H
#define DKPERF_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <dkperf.h>

#define RECORD_MAX_FREQ DK_EVENT_SPEC_MAX_FREQ /* as for EV@HZ */

typedef struct record_event {
    char *name;      /* without its /period or @freq */
    uint64_t period; /* 0: freq */
    uint64_t freq;
} record_event;

typedef struct record_options {
    record_event *events;
    size_t nevents;
    long freq;   /* -F, 0 when not given */
    long period; /* -c, 0 when not given */
    bool callgraph, all_cpus, off_cpu;
    /* --switch-output: a new file on SIGUSR2, past switch_bytes, or every
     * switch_ns; each finished one renamed OUTPUT.<time>. */
    enum { SWITCH_NONE, SWITCH_SIGNAL, SWITCH_SIZE, SWITCH_TIME } switch_mode;
    uint64_t switch_bytes, switch_ns;
    long switch_max_files; /* --switch-max-files, 0: keep every file */
    const char *pprof_dir; /* --pprof-dir: each finished file also as pprof there */
    long pid;              /* -p, 0 when not given */
    const char *output;
    const char *backend;
    char **cmd; /* NULL with -p or -a alone */
} record_options;

/* --switch-output (record_switch.c). signal: right after signals_catch,
 * SIGUSR2 then asks for a switch. check: before -o is opened, refuses a
 * -o that is not a regular file and a --pprof-dir that cannot be written
 * (0 or an exit status after an error line). init: once the file's first
 * records are written. due: whether to switch now. now: ends the file on
 * *fd as OUTPUT.<time> and goes on in a new OUTPUT (*fd replaced); last:
 * renames the ended, closed file the same way. Both say the file's name,
 * drop the oldest beyond --switch-max-files and write --pprof-dir's file.
 * A rename, an open or a pprof file that fails is said, the recording goes
 * on and failed is set (exit status 1); they return a writer's error
 * (negative errno) only. */
typedef struct dkrec_writer dkrec_writer;
typedef struct record_switch {
    const record_options *o;
    uint64_t next_ns;    /* SWITCH_TIME: when the window ends */
    uint64_t base_bytes; /* what the file started with (SWITCH_SIZE counts past it) */
    uint64_t samples;    /* in the files ended so far */
    size_t files;        /* ended so far */
    char **kept;         /* --switch-max-files: the ended files, oldest first */
    char **kept_pprof;   /* the pprof file of each that record wrote, or NULL */
    size_t nkept;
    bool failed; /* something was said that makes the exit status 1 */
} record_switch;
void record_switch_signal(const record_options *o);
int record_switch_check(const record_options *o);
void record_switch_init(record_switch *sw, const record_options *o, const dkrec_writer *w);
bool record_switch_due(record_switch *sw, const dkrec_writer *w);
int record_switch_now(record_switch *sw, dkrec_writer *w, int *fd);
int record_switch_last(record_switch *sw, dkrec_writer *w);
void record_switch_free(record_switch *sw);

/* Parses argv (argv[0] is "record"). Returns 0, -1 after printing help, or
 * an exit status after one error line; free o with record_options_free in
 * every case. */
int record_parse_args(int argc, char **argv, record_options *o);
void record_options_free(record_options *o);

int cmd_record(int argc, char **argv);
void help_record(FILE *out);

#endif /* DKPERF_RECORD_H */
