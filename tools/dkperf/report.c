/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report.c - dkperf report: read a recording (tools/common/dkrec/dkrec.c),
 * symbolize it from the images on disk (symbols.c) and write the table,
 * folded stacks, speedscope JSON or an HTML flame graph (report_out.c,
 * report_stacks.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "options.h"
#include "report.h"

void help_report(FILE *out)
{
    fputs("usage: dkperf report [-i FILE]... [--stdio] [--sort sym|dso|comm|pid] [--children]\n"
          "                     [--folded] [--speedscope FILE] [--html FILE [--diff OLD]]\n"
          "                     [--pprof FILE] [--event EV] [--no-demangle]\n"
          "                     [--on-cpu | --off-cpu]\n"
          "\n"
          "Read a recording of dkperf record and report where its samples fell, by\n"
          "function, from the images on disk.\n"
          "\n"
          "  -i, --input FILE     the recording (default: dkperf.data); once per file to\n"
          "                       report several as one (the files of record\n"
          "                       --switch-output): each symbolized from its own maps,\n"
          "                       their samples merged, lost counts added up; they must\n"
          "                       record the same events\n"
          "      --stdio          the table of functions by self and children (total)\n"
          "                       samples per event, on standard output (the default)\n"
          "  -s, --sort KEY       table rows by sym (function and image), dso (image),\n"
          "                       comm (command) or pid; default sym\n"
          "      --children       order the rows by children (total) instead of self\n"
          "      --folded         folded stacks on standard output (comm;outer;...;inner N),\n"
          "                       the input of flame graph tools\n"
          "      --speedscope FILE  speedscope's JSON format (one profile per event)\n"
          "      --html FILE      a self-contained HTML flame graph (searchable; click to zoom)\n"
          "      --pprof FILE     pprof's gzipped profile.proto, for go tool pprof, Pyroscope\n"
          "                       and Parca (every event: its samples and their periods)\n"
          "      --diff OLD       with --html: a differential flame graph, widths from this\n"
          "                       recording, red where a frame's share of the samples grew\n"
          "                       since the recording OLD, blue where it shrank\n"
          "      --event EV       the event folded and drawn, by name or index (default: the\n"
          "                       first)\n"
          "      --no-demangle    C++ and Rust function names as the images hold them\n"
          "                       (mangled); by default they are demangled in every output\n"
          "      --on-cpu         only the samples of threads on a CPU\n"
          "      --off-cpu        only the samples of blocked threads (dkperf record\n"
          "                       --off-cpu), each weighted by the ns it stayed off CPU;\n"
          "                       by default both, the off-CPU ones under an [off-cpu]\n"
          "                       frame (blue in the flame graph)\n"
          "\n"
          "A recording cut short (dkperf record killed) is read up to its last whole chunk,\n"
          "with a warning. Exit status: 0, 1 when the file cannot be read or written, 2 for\n"
          "a usage error.\n",
          out);
}

/* The output file of --speedscope, --html or --pprof, written by fn. */
static int write_file(const char *opt, const char *path, const rprofile *p, int event,
                      int (*fn)(FILE *, const rprofile *, int))
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        cli_error("report", "%s %s: %s", opt, path, strerror(errno));
        return EXIT_SETUP;
    }
    int rc = fn(f, p, event);
    bool bad = ferror(f) != 0;
    errno = 0;
    if (fclose(f) != 0 || bad) {
        cli_error("report", "%s %s: cannot write it: %s", opt, path,
                  errno ? strerror(errno) : "write error");
        return EXIT_SETUP;
    }
    return rc != 0 ? EXIT_SETUP : 0;
}

/* The recording --diff names, for html_fn. */
static const rprofile *diff_old;

static int html_fn(FILE *f, const rprofile *p, int event)
{
    return report_html_diff(f, p, diff_old, event);
}

static int speedscope_fn(FILE *f, const rprofile *p, int event)
{
    (void)event;
    return report_speedscope(f, p);
}

static int pprof_fn(FILE *f, const rprofile *p, int event)
{
    (void)event;
    return report_pprof(f, p);
}

static void free_recs(dkrec **recs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dkrec_free(recs[i]);
    free(recs);
}

/* Reads each of inputs into recs and feeds it to p (started); 0, or the
 * exit status after an error line (p then freed). */
static int report_inputs(rprofile *p, const char **inputs, size_t n, const rprofile_opts *opts,
                         dkrec **recs, char *err, size_t errlen)
{
    uint64_t n_off_cpu = 0;
    for (size_t i = 0; i < n; i++) {
        rraws raws;
        int rrc = rprofile_read(inputs[i], opts, &recs[i], &raws, err, errlen);
        if (rrc == -2) {
            rprofile_free(p);
            return EXIT_SETUP;
        }
        if (rrc != 0) {
            if (errno == ENOENT && strstr(err, "No such file") != NULL)
                cli_error("report", "%s (record one with dkperf record, or name it with -i)", err);
            else
                cli_error("report", "%s", err);
            rprofile_free(p);
            return EXIT_SETUP;
        }
        const dkrec *rec = recs[i];
        if (!rec->complete)
            cli_error("report",
                      "warning: %s is incomplete: %s; reporting the %zu samples before it",
                      inputs[i], rec->tail_note, rec->n_samples);
        n_off_cpu += raws.n_off_cpu;
        int frc = rprofile_feed(p, rec, &raws, inputs[i]);
        rraws_free(&raws);
        if (frc != 0)
            return EXIT_SETUP;
    }
    rprofile_finish(p);
    if (opts->off_cpu_only && n_off_cpu == 0)
        cli_error("report",
                  "warning: %s %s no off-CPU samples (record them with dkperf record "
                  "--off-cpu)",
                  p->path, n > 1 ? "have" : "has");
    return 0;
}

/* report with the recordings' names in inputs (room for argc), one per
 * -i. */
static int report_run(int argc, char **argv, const char **inputs)
{
    size_t n_inputs = 0;
    const char *speedscope = NULL, *html = NULL, *pprof = NULL, *event_arg = NULL, *diff = NULL;
    report_sort sort = SORT_SYM;
    bool stdio_table = false, folded = false, by_children = false;
    rprofile_opts opts = {false};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (opt_takes("report", argc, argv, &i, "-i", "--input", &v)) {
            if ((inputs[n_inputs++] = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("report", argc, argv, &i, "-s", "--sort", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            if (strcmp(v, "sym") == 0)
                sort = SORT_SYM;
            else if (strcmp(v, "dso") == 0)
                sort = SORT_DSO;
            else if (strcmp(v, "comm") == 0)
                sort = SORT_COMM;
            else if (strcmp(v, "pid") == 0)
                sort = SORT_PID;
            else {
                cli_error("report", "--sort %s: sort by sym, dso, comm or pid", v);
                return EXIT_USAGE;
            }
        } else if (opt_takes("report", argc, argv, &i, NULL, "--speedscope", &v)) {
            if ((speedscope = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("report", argc, argv, &i, NULL, "--html", &v)) {
            if ((html = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("report", argc, argv, &i, NULL, "--pprof", &v)) {
            if ((pprof = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("report", argc, argv, &i, NULL, "--diff", &v)) {
            if ((diff = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("report", argc, argv, &i, NULL, "--event", &v)) {
            if ((event_arg = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_is(a, NULL, "--stdio")) {
            stdio_table = true;
        } else if (opt_is(a, NULL, "--folded")) {
            folded = true;
        } else if (opt_is(a, NULL, "--children")) {
            by_children = true;
        } else if (opt_is(a, NULL, "--no-demangle")) {
            opts.no_demangle = true;
        } else if (opt_is(a, NULL, "--on-cpu")) {
            opts.on_cpu_only = true;
        } else if (opt_is(a, NULL, "--off-cpu")) {
            opts.off_cpu_only = true;
        } else if (opt_is(a, "-h", "--help")) {
            help_report(stdout);
            return 0;
        } else {
            cli_error("report", "unknown %s %s (see dkperf help report)",
                      a[0] == '-' ? "option" : "argument", a);
            return EXIT_USAGE;
        }
    }
    if (!folded && speedscope == NULL && html == NULL && pprof == NULL)
        stdio_table = true;
    if (opts.on_cpu_only && opts.off_cpu_only) {
        cli_error("report", "--on-cpu and --off-cpu leave nothing together: give one (neither "
                            "shows both)");
        return EXIT_USAGE;
    }
    if (folded && stdio_table) {
        cli_error("report", "--folded and --stdio both write to standard output: give one");
        return EXIT_USAGE;
    }

    if (diff != NULL && html == NULL) {
        cli_error("report", "--diff %s draws a differential flame graph: give --html FILE too",
                  diff);
        return EXIT_USAGE;
    }

    if (n_inputs == 0)
        inputs[n_inputs++] = "dkperf.data";
    /* One file named twice (or through a link) would count twice. */
    for (size_t i = 1; i < n_inputs; i++)
        for (size_t j = 0; j < i; j++) {
            struct stat a, b;
            if (stat(inputs[i], &a) == 0 && stat(inputs[j], &b) == 0 && a.st_dev == b.st_dev &&
                a.st_ino == b.st_ino) {
                cli_error("report",
                          "-i %s and -i %s are the same file: its samples would count twice",
                          inputs[j], inputs[i]);
                return EXIT_USAGE;
            }
        }
    char err[512];
    /* Each recording read in one pass, its samples counted as they are
     * read, then fed to the one model; their tables stay for the
     * outputs. */
    dkrec **recs = calloc(n_inputs, sizeof *recs);
    rprofile p;
    if (recs == NULL || rprofile_start(&p, &opts) != 0) {
        if (recs == NULL)
            cli_error("report", "out of memory");
        free(recs);
        return EXIT_SETUP;
    }
    int rc = report_inputs(&p, inputs, n_inputs, &opts, recs, err, sizeof err);
    if (rc != 0) {
        rprofile_free(&p);
        free_recs(recs, n_inputs);
        return rc;
    }
    int event = 0;
    if (event_arg != NULL) {
        long k;
        event = -1;
        for (size_t e = 0; e < p.n_events; e++)
            if (strcmp(p.events[e].name, event_arg) == 0)
                event = (int)e;
        if (event < 0 && opt_number(event_arg, &k) && k >= 0 && (size_t)k < p.n_events)
            event = (int)k;
        if (event < 0) {
            cli_error("report",
                      "--event %s: %s has no such event (it has %zu; see dkperf report "
                      "--stdio)",
                      event_arg, p.path, p.n_events);
            rprofile_free(&p);
            free_recs(recs, n_inputs);
            return EXIT_USAGE;
        }
    }
    /* Off-CPU ns of a count event are an event of their own: said, as
     * they are not drawn with its counts. */
    bool off_ev = p.n_events > 1 &&
                  strcmp(p.events[p.n_events - 1].name, REPORT_OFF_CPU_EVENT) == 0;
    if (p.n_events > 1 && event_arg == NULL && (folded || html != NULL))
        cli_error("report",
                  "note: %s holds %zu events; folded stacks and the flame graph show "
                  "the first, %s (choose with --event%s)",
                  p.path, p.n_events, p.events[0].name,
                  off_ev ? "; the off-CPU ns, not counts, are --event " REPORT_OFF_CPU_EVENT : "");
    /* Once per report, whatever the output: a flame graph of addresses
     * says nothing of why. */
    if (p.missing_reader != NULL)
        cli_error("report", "note: %s", p.missing_reader);
    if (p.missing_demangler != NULL)
        cli_error("report", "note: %s", p.missing_demangler);
    if (p.kernel_note[0] != '\0')
        cli_error("report", "note: %s", p.kernel_note);
    if (p.n_cut > 0)
        cli_error("report",
                  "note: %llu samples have a call chain deeper than %u frames: cut to its "
                  "innermost %u, as perf report's --max-stack",
                  (unsigned long long)p.n_cut, REPORT_MAX_STACK, REPORT_MAX_STACK);
    /* The recording to compare with, of the event drawn. */
    dkrec *orec = NULL;
    rprofile op;
    diff_old = NULL;
    if (diff != NULL) {
        const char *ename = p.n_events > 0 ? p.events[event].name : "";
        bool has = false;
        rraws oraws = {0};
        int orc = rprofile_read(diff, &opts, &orec, &oraws, err, sizeof err);
        if (orc == -1) {
            cli_error("report", "--diff %s", err);
        } else if (orc == 0) {
            /* Of a count event, offcpu-time is the model's own. */
            has = strcmp(ename, REPORT_OFF_CPU_EVENT) == 0;
            for (size_t e = 0; e < orec->n_events; e++)
                has = has || strcmp(orec->events[e].name, ename) == 0;
            if (!has)
                cli_error("report",
                          "--diff %s: it records no %s: compare recordings of the same events",
                          diff, ename);
        }
        if (has && rprofile_build_raws(&op, orec, &oraws, diff, &opts) != 0)
            has = false;
        rraws_free(&oraws);
        if (!has) {
            dkrec_free(orec);
            rprofile_free(&p);
            free_recs(recs, n_inputs);
            return EXIT_SETUP;
        }
        diff_old = &op;
    }
    if (stdio_table && report_stdio(stdout, &p, sort, by_children) != 0)
        rc = EXIT_SETUP;
    if (rc == 0 && folded && report_folded(stdout, &p, event) != 0)
        rc = EXIT_SETUP;
    if (rc == 0 && speedscope != NULL)
        rc = write_file("--speedscope", speedscope, &p, event, speedscope_fn);
    if (rc == 0 && html != NULL)
        rc = write_file("--html", html, &p, event, html_fn);
    if (rc == 0 && pprof != NULL)
        rc = write_file("--pprof", pprof, &p, event, pprof_fn);
    if (diff_old != NULL)
        rprofile_free(&op);
    dkrec_free(orec);
    rprofile_free(&p);
    free_recs(recs, n_inputs);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    if (inputs == NULL) {
        cli_error("report", "out of memory");
        return EXIT_SETUP;
    }
    int rc = report_run(argc, argv, inputs);
    free(inputs);
    return rc;
}
