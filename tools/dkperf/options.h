/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * options.h - the command-line parsing dkperf stat and dkperf bench share:
 * options with values, flags, whole numbers and -e event lists. Messages
 * name the command they were given to ("dkperf stat: ...", "dkperf bench:
 * ..."). Nothing here exits, forks or opens a sampler, so the parsers can be
 * called on any input (the fuzz targets in tests/fuzz do).
 */
#ifndef DKPERF_OPTIONS_H
#define DKPERF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <dkperf.h>

/*
 * Whether argv[*i] is the option short_name (may be NULL) or long_name;
 * its value is attached ("-x,", "--events=a,b") or the next argument, and
 * *i then moves past it. *value is NULL for a missing one, after a
 * "dkperf <command>: ... needs a value" line.
 */
bool opt_takes(const char *command, int argc, char **argv, int *i, const char *short_name,
               const char *long_name, const char **value);

/* Whether a is the flag short_name (may be NULL) or long_name. */
bool opt_is(const char *a, const char *short_name, const char *long_name);

/* Whether s is a whole decimal number that fits a long; *out is set only
 * then. */
bool opt_number(const char *s, long *out);

/*
 * Append the events of one -e list to *names (a malloc'd array of *n
 * malloc'd strings, NULL and 0 at first), as libdkperf's event grammar
 * reads the list (dk_event_list_next): separated by commas, except inside
 * a pmu/term=value,.../ event. Returns 0, or after one
 * "dkperf <command>: -e: ..." line on standard error EXIT_USAGE (a spec
 * that does not parse, a period or frequency, more than DK_MAX_EVENTS
 * events in all) or EXIT_SETUP (out of memory). On failure the names
 * appended so far stay in *names, for the caller to free.
 */
int split_event_list(const char *command, const char *list, char ***names, size_t *n);

/* After dk_event_list_next failed: one "dkperf <command>: -e: <why>" line
 * with the library's reason (the spec and the position in it). Returns
 * EXIT_USAGE. */
int event_list_error(const char *command);

/* Free an array split_event_list built. */
void free_event_list(char **names, size_t n);

#endif /* DKPERF_OPTIONS_H */
