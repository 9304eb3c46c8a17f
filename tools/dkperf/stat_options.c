/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat_options.c - dkperf stat's options (see stat_options.h); the -e lists
 * and the helpers it shares with bench are in options.c.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "stat_options.h"

/* -p/-t's list: ids above 0, each once. */
static int parse_ids(const char *opt, const char *v, stat_options *o)
{
    free(o->pids);
    o->pids = NULL;
    o->npids = 0;
    size_t cap = 1;
    for (const char *p = v; *p != '\0'; p++)
        cap += *p == ',';
    if (cap > STAT_MAX_PIDS) {
        cli_error("stat", "%s %.32s: at most %d ids", opt, v, STAT_MAX_PIDS);
        return EXIT_USAGE;
    }
    o->pids = calloc(cap, sizeof *o->pids);
    if (o->pids == NULL) {
        cli_error("stat", "out of memory while reading %s", opt);
        return EXIT_SETUP;
    }
    const char *p = v;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);
        char num[24];
        long id = 0;
        bool ok = len > 0 && len < sizeof num;
        if (ok) {
            memcpy(num, p, len);
            num[len] = '\0';
            ok = opt_number(num, &id) && id > 0 && id <= 0x7fffffffL;
        }
        if (!ok) {
            cli_error("stat", "%s %.64s: give %s ids above 0, separated by commas", opt, v,
                      o->threads ? "thread" : "process");
            return EXIT_USAGE;
        }
        for (size_t k = 0; k < o->npids; k++)
            if (o->pids[k] == (int)id) {
                cli_error("stat", "%s %.64s: %ld is given twice (it would be counted twice)", opt,
                          v, id);
                return EXIT_USAGE;
            }
        o->pids[o->npids++] = (int)id;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    return 0;
}

/* -I's and --timeout's milliseconds. */
static bool parse_ms(const char *opt, const char *v, long *out)
{
    if (!opt_number(v, out) || *out < STAT_MIN_INTERVAL_MS || *out > STAT_MAX_INTERVAL_MS) {
        cli_error("stat",
                  "%s %.32s: give milliseconds from %d (shorter is dominated by the cost "
                  "of reading the counters) to %ld",
                  opt, v, STAT_MIN_INTERVAL_MS, STAT_MAX_INTERVAL_MS);
        return false;
    }
    return true;
}

void help_stat(FILE *out)
{
    fputs("usage: dkperf stat [-e EV[,EV...]] [-r N] [-x SEP | -j | --json] [-o FILE] [-a]\n"
          "                   [-A | --per-core | --per-level] [-C CPUS]\n"
          "                   [-I MS] [--timeout MS] [--backend NAME] [--] CMD [ARGS...]\n"
          "       dkperf stat [options] -p PID[,PID...] | -t TID[,TID...]\n"
          "\n"
          "Run CMD and report its counts, then exit as CMD did; or count running\n"
          "processes or threads until Ctrl-C, --timeout or their exit.\n"
          "\n"
          "  -e, --events EV,...  events to count: portable names (instructions, cycles,\n"
          "                       branches, branch-misses, ...), native names or aliases,\n"
          "                       and on Linux rNNNN and pmu/term=value,.../[uk] (a comma\n"
          "                       between two '/' belongs to the event); may be repeated;\n"
          "                       default: instructions, cycles, branches, branch-misses\n"
          "                       (and task-clock, context-switches, page-faults on Linux)\n"
          "  -r, --repeat N       run CMD N times; report the means and their spread\n"
          "  -x, --field-separator SEP\n"
          "                       one line per event, fields separated by SEP, in\n"
          "                       perf stat's layout (value, unit, event[, spread],\n"
          "                       run time, percent running, metric, metric unit)\n"
          "  -j, --json-output    perf stat's JSON lines: one object per event (per\n"
          "                       row, per interval), perf-stat(1)'s keys\n"
          "      --json           one JSON object of dkperf's own schema (more detail)\n"
          "  -o, --output FILE    write the report to FILE instead of standard error\n"
          "      --append         with -o: add the report to FILE's end\n"
          "  -a, --all-cpus       count every CPU, not only CMD (macOS: needed for events\n"
          "                       other than instructions and cycles)\n"
          "  -A, --no-aggr        with -a: one row per CPU (\"CPU3\")\n"
          "      --per-core       with -a: one row per physical core (\"S0-C1\": package 0,\n"
          "                       core 1), its CPUs summed\n"
          "      --per-level      one row per CPU performance level (P and E cores; Linux\n"
          "                       hybrid: cpu_core P, cpu_atom E; else one level, \"all\");\n"
          "                       with -a from each CPU's counters; without -a CMD's own\n"
          "                       split (macOS 12+: instructions and cycles, no root needed)\n"
          "  -C, --cpu CPUS       count only these CPUs (\"0,2-3\"); implies -a\n"
          "      --backend NAME   auto, kperf, selfcounts or perf_event\n"
          "  -I, --interval-print MS\n"
          "                       also print each MS milliseconds' counts (at least 10)\n"
          "                       while counting, the seconds since the start first; with\n"
          "                       --json one object per interval, each on one line;\n"
          "                       totals only: -A's rows etc. come once, at the end\n"
          "  -p, --pid PID,...    count these running processes (all their threads and\n"
          "                       the threads and processes they start) instead of CMD;\n"
          "                       macOS: their instructions and cycles only\n"
          "                       (proc_pid_rusage); for other events count every\n"
          "                       CPU instead (-a, root)\n"
          "                       with -a (or -C): every CPU while they run, any event,\n"
          "                       with -A, --per-core or --per-level rows\n"
          "  -t, --tid TID,...    count these threads alone (Linux only); -t takes no\n"
          "                       -a, -C, -A, --per-core, --per-level or -r\n"
          "      --timeout MS     stop after MS milliseconds (at least 10); a CMD still\n"
          "                       running is sent SIGTERM\n"
          "\n"
          "On a Mac with P and E cores, stat on CMD also shows how CMD's instructions and\n"
          "cycles split between them (rows \"P\" and \"E\" below the totals).\n"
          "\n"
          "Exit status: CMD's (128+N when signal N ended it; 127 not found, 126 not\n"
          "executable); 2 for a usage error; 1 when the counters could not be set up,\n"
          "read or given back, or the report could not be written; 128+N when signal N\n"
          "reached dkperf while no command was running. With -p or -t: 0 at the timeout\n"
          "or when every one has exited, 128+N when signal N (Ctrl-C) ended the count.\n",
          out);
}

/* -C CPUS: numbers and ranges ("0,2-3"), in any order; kept ascending,
 * each CPU once. */
static int parse_cpus(const char *text, stat_options *o)
{
    free(o->cpus);
    o->cpus = NULL;
    o->ncpus = 0;
    o->cpu_text = text;
    unsigned char *seen = calloc(STAT_CPU_MAX + 1, 1);
    if (seen == NULL) {
        cli_error("stat", "out of memory while reading -C %s", text);
        return EXIT_SETUP;
    }
    const char *p = text;
    size_t n = 0;
    for (;;) {
        long lo, hi;
        char *end;
        if (*p < '0' || *p > '9' || (lo = strtol(p, &end, 10)) > STAT_CPU_MAX)
            goto bad;
        p = end;
        hi = lo;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9' || (hi = strtol(p, &end, 10)) > STAT_CPU_MAX || hi < lo)
                goto bad;
            p = end;
        }
        for (long c = lo; c <= hi; c++)
            if (!seen[c]) {
                seen[c] = 1;
                n++;
            }
        if (*p == '\0')
            break;
        if (*p++ != ',')
            goto bad;
    }
    o->cpus = malloc(n * sizeof *o->cpus);
    if (o->cpus == NULL) {
        free(seen);
        cli_error("stat", "out of memory while reading -C %s", text);
        return EXIT_SETUP;
    }
    for (long c = 0; c <= STAT_CPU_MAX; c++)
        if (seen[c])
            o->cpus[o->ncpus++] = (int)c;
    free(seen);
    return 0;
bad:
    free(seen);
    cli_error("stat",
              "-C %s: give CPU numbers (0 to %d) and ranges separated by commas, "
              "e.g. -C 0,2-3",
              text, STAT_CPU_MAX);
    return EXIT_USAGE;
}

int stat_parse_args(int argc, char **argv, stat_options *o)
{
    memset(o, 0, sizeof *o);
    o->repeat = 1;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (opt_takes("stat", argc, argv, &i, "-e", "--events", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            int rc = split_event_list("stat", v, &o->events, &o->nevents); /* -e may be repeated */
            if (rc != 0)
                return rc;
        } else if (opt_takes("stat", argc, argv, &i, "-r", "--repeat", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            if (!opt_number(v, &o->repeat) || o->repeat < 1 || o->repeat > STAT_MAX_RUNS) {
                cli_error("stat", "-r %s: give a number of runs from 1 to %d", v, STAT_MAX_RUNS);
                return EXIT_USAGE;
            }
        } else if (opt_takes("stat", argc, argv, &i, "-x", "--field-separator", &v)) {
            if ((o->sep = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("stat", argc, argv, &i, "-o", "--output", &v)) {
            if ((o->output = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("stat", argc, argv, &i, NULL, "--backend", &v)) {
            if ((o->backend = v) == NULL)
                return EXIT_USAGE;
        } else if (opt_takes("stat", argc, argv, &i, "-I", "--interval-print", &v)) {
            if (v == NULL || !parse_ms("-I", v, &o->interval_ms))
                return EXIT_USAGE;
        } else if (opt_takes("stat", argc, argv, &i, NULL, "--timeout", &v)) {
            if (v == NULL || !parse_ms("--timeout", v, &o->timeout_ms))
                return EXIT_USAGE;
        } else if (opt_takes("stat", argc, argv, &i, "-p", "--pid", &v) ||
                   opt_takes("stat", argc, argv, &i, "-t", "--tid", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            bool tid = a[1] == 't' || strncmp(a, "--tid", 5) == 0;
            if (o->npids > 0 && tid != o->threads) {
                cli_error("stat", "-p and -t cannot be used together");
                return EXIT_USAGE;
            }
            o->threads = tid;
            int rc = parse_ids(tid ? "-t" : "-p", v, o);
            if (rc != 0)
                return rc;
        } else if (opt_is(a, NULL, "--append")) {
            o->append = true;
        } else if (opt_is(a, NULL, "--json")) {
            o->json = true;
        } else if (opt_is(a, "-j", "--json-output")) {
            o->jsonl = true;
        } else if (opt_is(a, "-a", "--all-cpus")) {
            o->all_cpus = true;
        } else if (opt_is(a, "-A", "--no-aggr") || opt_is(a, NULL, "--per-core") ||
                   opt_is(a, NULL, "--per-level")) {
            int aggr = a[1] == 'A' || strcmp(a, "--no-aggr") == 0 ? STAT_AGGR_CPU
                       : strcmp(a, "--per-core") == 0             ? STAT_AGGR_CORE
                                                                  : STAT_AGGR_LEVEL;
            if (o->aggr != STAT_AGGR_TOTAL && o->aggr != aggr) {
                cli_error("stat", "-A, --per-core and --per-level exclude each other: give one");
                return EXIT_USAGE;
            }
            o->aggr = aggr;
        } else if (opt_takes("stat", argc, argv, &i, "-C", "--cpu", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            int rc = parse_cpus(v, o);
            if (rc != 0)
                return rc;
        } else if (opt_is(a, "-h", "--help")) {
            help_stat(stdout);
            return -1;
        } else {
            cli_error("stat", "unknown option %s (see dkperf help stat)", a);
            return EXIT_USAGE;
        }
    }
    const char *ids = o->threads ? "-t" : "-p";
    if (o->npids > 0) {
        /* Attached: what is counted is already running. */
        if (i < argc) {
            cli_error("stat", "%s counts what already runs: give no command (%s) with it", ids,
                      argv[i]);
            return EXIT_USAGE;
        }
        if (o->threads && (o->all_cpus || o->cpus != NULL)) {
            cli_error("stat",
                      "-t and %s cannot be used together: %s counts CPUs, -t these "
                      "threads (-p PID -a counts every CPU while processes run)",
                      o->all_cpus ? "-a" : "-C", o->all_cpus ? "-a" : "-C");
            return EXIT_USAGE;
        }
        /* Whole processes or threads are not split by CPU: refused rather
         * than ignored (-a -p splits every CPU's counts instead). By level
         * they are where the OS splits them (macOS: P and E cores). */
        if (!o->all_cpus && o->cpus == NULL && o->aggr != STAT_AGGR_TOTAL &&
            (o->aggr != STAT_AGGR_LEVEL || o->threads)) {
            cli_error("stat",
                      "%s cannot be used with %s: %s counts whole %s, not split by "
                      "%s%s",
                      o->aggr == STAT_AGGR_CPU    ? "-A"
                      : o->aggr == STAT_AGGR_CORE ? "--per-core"
                                                  : "--per-level",
                      ids, ids, o->threads ? "threads" : "processes",
                      o->aggr == STAT_AGGR_LEVEL ? "level" : "CPU",
                      o->threads ? "" : " (add -a to count every CPU while they run)");
            return EXIT_USAGE;
        }
        if (o->repeat != 1) {
            cli_error("stat", "-r repeats a command: it cannot be used with %s", ids);
            return EXIT_USAGE;
        }
    } else if (i >= argc) {
        cli_error("stat", "no command to run (usage: dkperf stat [options] [--] CMD [ARGS...], "
                          "or -p PID to count a running process)");
        return EXIT_USAGE;
    } else {
        o->cmd = argv + i;
    }
    if (o->interval_ms > 0 && o->repeat != 1) {
        cli_error("stat", "-I and -r cannot be used together");
        return EXIT_USAGE;
    }
    if (o->sep != NULL) {
        if (o->sep[0] == '\0' || strpbrk(o->sep, "0123456789.\n\"") != NULL) {
            cli_error("stat",
                      "-x '%s': the separator must be non-empty and hold no digit, '.', "
                      "quote or newline",
                      o->sep);
            return EXIT_USAGE;
        }
        if (o->json || o->jsonl) {
            cli_error("stat", "-x and %s cannot be used together", o->json ? "--json" : "-j");
            return EXIT_USAGE;
        }
    }
    if (o->append && o->output == NULL) {
        cli_error("stat", "--append adds to the -o file: give -o FILE");
        return EXIT_USAGE;
    }
    if (o->json && o->jsonl) {
        cli_error("stat", "-j (perf's JSON lines) and --json (one object) exclude each other");
        return EXIT_USAGE;
    }
    if (o->cpus != NULL)
        o->all_cpus = true; /* as perf: a CPU list counts those CPUs, whatever runs there */
    if ((o->aggr == STAT_AGGR_CPU || o->aggr == STAT_AGGR_CORE) && !o->all_cpus) {
        cli_error("stat", "%s breaks down the counts of every CPU: add -a (or -C CPUS)",
                  o->aggr == STAT_AGGR_CPU ? "-A" : "--per-core");
        return EXIT_USAGE;
    }
    if (o->backend != NULL && cli_backend_kind(o->backend) < 0) {
        cli_error("stat", "--backend %s: not a backend (auto, kperf, selfcounts, perf_event)",
                  o->backend);
        return EXIT_USAGE;
    }
    return 0;
}

void stat_options_free(stat_options *o)
{
    if (o == NULL)
        return;
    free_event_list(o->events, o->nevents);
    free(o->cpus);
    free(o->pids);
    memset(o, 0, sizeof *o);
}
