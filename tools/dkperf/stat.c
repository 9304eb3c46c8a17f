/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat.c - dkperf stat: run a command and report its counts, in the manner
 * of perf stat. The options are parsed in stat_options.c, the command run
 * in stat_run.c, the report printed by stat_print.c. The counts are
 * reported and the counters always released, whatever signal comes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "signals.h"
#include "stat.h"

/*
 * The -o file, opened before the counters are taken: open() of a FIFO
 * blocks until a reader comes, and a Ctrl-C then must find nothing held.
 * The report file is dkperf's, not the command's: it is closed on exec.
 */
static FILE *open_report(const char *path, bool append)
{
    int fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC) | O_CLOEXEC, 0666);
    FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (out == NULL) {
        int why = errno;
        if (fd >= 0)
            close(fd);
        cli_error("stat", "-o %s: %s", path,
                  why == ENOMEM ? "out of memory while opening the report file" : strerror(why));
    }
    return out;
}

int cmd_stat(int argc, char **argv)
{
    stat_options o;
    int rc = stat_parse_args(argc, argv, &o);
    if (rc != 0) {
        stat_options_free(&o);
        return rc < 0 ? 0 : rc;
    }

    FILE *out = stderr;
    if (o.output != NULL && (out = open_report(o.output, o.append)) == NULL) {
        stat_options_free(&o);
        return EXIT_SETUP;
    }

    /*
     * From before the counters are taken until they are given back, the
     * signals that would stop dkperf are caught: passed to the command while
     * it runs, remembered otherwise, and acted on once nothing is held.
     */
    signals_catch();
    dk_sampler *s = cli_open_sampler("stat", o.backend);
    report rep;
    memset(&rep, 0, sizeof rep);
    char **names = o.events;
    size_t n = o.nevents;
    char **defaults = NULL;
    size_t ndefaults = 0;
    if (s == NULL) {
        rc = EXIT_SETUP;
    } else if (n == 0) {
        dk_backend_caps caps = {.size = sizeof caps};
        (void)dk_sampler_caps(s, &caps);
        rc = split_event_list("stat", caps.stat_events, &defaults, &ndefaults);
        names = defaults;
        n = ndefaults;
    }
    /* Names no database knows are mistakes: refuse them before running anything. */
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = cli_check_event("stat", s, names[i], NULL);
    rep.n = n;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rep.names[i] = names[i];
    rep.runs = rc == 0 ? calloc((size_t)o.repeat, sizeof *rep.runs) : NULL;
    if (rc == 0 && rep.runs == NULL) {
        cli_error("stat", "out of memory while allocating %ld runs", o.repeat);
        rc = EXIT_SETUP;
    }

    int exec_failed = 0, interrupted = 0;
    rep.out = out;
    if (rc == 0 && o.npids > 0) { /* -p, -t: what is counted already runs */
        rc = stat_run_attach(s, &o, names, n, &rep, &rep.runs[0]);
        if (rc == 0)
            rep.nruns = 1;
    }
    for (long r = 0; rc == 0 && o.npids == 0 && signals_got() == 0 && r < o.repeat; r++) {
        rc = stat_run_once(s, &o, names, n, &rep, &rep.runs[rep.nruns], &exec_failed);
        if (rc != 0 || exec_failed)
            break;
        rep.nruns++;
        /* A command killed by a signal, or a Ctrl-C sent to dkperf, ends the repeats. */
        if (rep.signaled)
            break;
    }
    /* Give the counters back while the signals are still held. */
    char release_error[1024];
    int released = s != NULL ? cli_release_sampler(s, release_error, sizeof release_error) : 0;
    signals_restore();
    /* A run interrupted before its command ran ended quietly with 128 + signal. */
    if (rc > 128) {
        interrupted = rc;
        rc = 0;
    }
    /* A signal that reached dkperf while no command ran to take it. */
    if (interrupted == 0 && signals_pending() != 0)
        interrupted = 128 + signals_pending();

    /* perf stat -I -x and -j print the intervals alone, no totals. */
    bool intervals_only = o.interval_ms > 0 && (o.sep != NULL || o.jsonl);
    if (rc == 0 && !exec_failed && rep.nruns > 0 && !intervals_only) {
        if (stat_rows_print(out, &rep, &o, s))
            ; /* broken down by CPU, core or level */
        else if (o.json)
            stat_print_json(out, &rep, &o, s);
        else if (o.sep != NULL || o.jsonl)
            stat_print_perf(out, &rep, &o);
        else
            stat_print_human(out, &rep, &o, s);
    }
    if (released != 0) /* below the report, where it is seen */
        cli_error("stat", "%s", release_error);
    if (out != stderr) {
        bool bad = ferror(out) != 0;
        errno = 0;
        if (fclose(out) != 0 || bad) {
            cli_error("stat", "-o %s: cannot write the report: %s", o.output,
                      errno != 0 ? strerror(errno) : "write error");
            if (rc == 0)
                rc = EXIT_SETUP;
        }
    } else if (fflush(stderr) != 0 || ferror(stderr)) {
        rc = rc != 0 ? rc : EXIT_SETUP; /* the report is lost, and so would be a message */
    }
    free(rep.runs);
    stat_rows_free(&rep);
    free_event_list(defaults, ndefaults);
    stat_options_free(&o);
    dk_sampler_close(s);
    if (rc != 0)
        return rc;
    if (released != 0)
        return EXIT_SETUP;
    if (exec_failed)
        return exec_failed;
    if (interrupted)
        return interrupted;
    return rep.exit_status;
}
