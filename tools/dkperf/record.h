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
    long pid; /* -p, 0 when not given */
    const char *output;
    const char *backend;
    char **cmd; /* NULL with -p or -a alone */
} record_options;

/* Parses argv (argv[0] is "record"). Returns 0, -1 after printing help, or
 * an exit status after one error line; free o with record_options_free in
 * every case. */
int record_parse_args(int argc, char **argv, record_options *o);
void record_options_free(record_options *o);

int cmd_record(int argc, char **argv);
void help_record(FILE *out);

#endif /* DKPERF_RECORD_H */
