/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli.h - what the dkperf commands share. The tool uses only dkperf.h.
 */
#ifndef DKPERF_CLI_H
#define DKPERF_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <dkperf.h>

#define CLI_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

/* Exit statuses of dkperf's own failures (stat otherwise exits as CMD did). */
#define EXIT_USAGE 2
#define EXIT_SETUP 1

/* Print "dkperf <command>: <message>" to stderr. */
void cli_error(const char *command, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Whether a progress line (dkperf bench on a terminal) is on standard
 * error, its cursor at its end: cli_error erases it first, so that the
 * message starts a line of its own. */
extern bool cli_progress_shown;

/* Open a sampler from --backend (NULL: automatic); on failure print the
 * library's sentence and return NULL. */
dk_sampler *cli_open_sampler(const char *command, const char *backend);
/* As cli_open_sampler, with dk_sampler_options.flags (DK_SAMPLER_*). */
dk_sampler *cli_open_sampler_flags(const char *command, const char *backend, unsigned flags);

/*
 * Look an event name up before anything runs. Returns 0 when a database
 * knows it (*unavailable, when not NULL, then says whether this machine
 * lacks it, with dk_last_error() saying why), or an exit status after one
 * line: EXIT_USAGE for a name no database knows (with a pointer to dkperf
 * list) or a spec that does not parse, EXIT_SETUP for what this machine
 * cannot do or out of memory.
 */
int cli_check_event(const char *command, dk_sampler *s, const char *name, bool *unavailable);

/* ev (from dk_sampler_resolve, which does not probe it) with its supported
 * flag found, as the database hands it out; NULL stays NULL. */
const dk_database_event *cli_event_probed(const dk_sampler *s, const dk_database_event *ev);

/*
 * Give the sampler's counters back (dk_sampler_release) before closing it.
 * Returns 0, or EXIT_SETUP with why set to one line that says what is left
 * behind and how to restore it.
 */
int cli_release_sampler(dk_sampler *s, char *why, size_t size);

/* cli_release_sampler, then dk_sampler_close; prints the line on failure.
 * Returns rc, or EXIT_SETUP when rc is 0 and the release failed. */
int cli_close_sampler(const char *command, dk_sampler *s, int rc);

/* Check that standard output was written in full (as coreutils'
 * close_stdout); on failure print "dkperf: write error on standard output:
 * ..." and return rc, or EXIT_SETUP when rc is 0. */
int cli_close_stdout(int rc);

/* Parse a backend name for --backend; -1 when unknown. */
int cli_backend_kind(const char *name);

/*
 * The options info and list share: --json, --backend NAME, --help, and up
 * to one positional argument (*positional, NULL when none; only when
 * positional is not NULL). Returns 0, -1 after printing help, or an exit
 * status after an error line.
 */
int cli_simple_options(const char *command, int argc, char **argv, void (*help)(FILE *), bool *json,
                       const char **backend, const char **positional);


/* 1234567 -> "1,234,567" into buf. */
const char *fmt_count(uint64_t v, char *buf, size_t size);
/* 1234.5678 -> "1,234.57" (decimals digits) into buf. */
const char *fmt_fixed(double v, int decimals, char *buf, size_t size);

int cmd_info(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_stat(int argc, char **argv);
void help_info(FILE *out);
void help_list(FILE *out);
void help_stat(FILE *out);

#endif /* DKPERF_CLI_H */
