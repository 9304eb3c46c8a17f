/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * record_options.c - dkperf record's command line (see record.h).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "record.h"

void help_record(FILE *out)
{
    fputs("usage: dkperf record [-e EV[/PERIOD|@FREQ],...] [-F HZ] [-c N] [-g] [-a]\n"
          "                     [--off-cpu] [-p PID] [-o FILE] [--backend NAME]\n"
          "                     [--switch-output[=signal|SIZE|TIME]] [--switch-max-files N]\n"
          "                     [--pprof-dir DIR]\n"
          "                     [--] CMD [ARGS...]\n"
          "\n"
          "Run CMD and sample it: every N events of an event (its period), or HZ times a\n"
          "second; write the samples, the images they fell in and their identities to FILE\n"
          "for dkperf report.\n"
          "\n"
          "  -e, --event EV,...   events to sample on (default: cycles where the machine\n"
          "                       counts it, else cpu-clock); EV/N samples every N events,\n"
          "                       EV@HZ HZ times a second\n"
          "  -F, --freq HZ        samples a second for events without their own (default\n"
          "                       4000)\n"
          "  -c, --count N        one sample every N events, for events without their own\n"
          "  -g, --call-graph     record the user call chain of each sample (frame pointers),\n"
          "                       and the kernel's where the kernel gives it (Linux)\n"
          "  -a, --all-cpus       sample every CPU (while CMD runs, or until Ctrl-C)\n"
          "      --off-cpu        also where and how long each thread blocks: one sample\n"
          "                       per stretch off CPU, weighted by its ns, with its call\n"
          "                       chain (implies -g; Linux: the context-switches event,\n"
          "                       which needs perf_event_paranoid 1 or CAP_PERFMON)\n"
          "  -p, --pid PID        sample a running process until it exits or Ctrl-C\n"
          "  -o, --output FILE    the recording (default: dkperf.data)\n"
          "      --switch-output[=signal|SIZE|TIME]\n"
          "                       end FILE and start a new one on SIGUSR2 (signal, the\n"
          "                       default), past SIZE bytes (10M: B, K, M, G) or every TIME\n"
          "                       (30s: s, m, h, d); each ended file is renamed\n"
          "                       FILE.YYYYMMDDhhmmsscc, as perf names them; no sample falls\n"
          "                       between two files\n"
          "      --switch-max-files N  keep the N newest of those files (and the pprof\n"
          "                       files record wrote of them)\n"
          "      --pprof-dir DIR  with --switch-output: each ended file also as pprof\n"
          "                       (DIR/NAME.pb.gz), for an agent to ship to Pyroscope/Parca\n"
          "      --backend NAME   auto, kperf or perf_event\n"
          "\n"
          "Ctrl-C goes to CMD; the file is complete when dkperf record ends, and a record\n"
          "that is killed leaves a file that dkperf report reads up to the kill.\n"
          "Exit status: CMD's (127 not found, 126 not executable); 1 when sampling could\n"
          "not be set up or the file written; 2 for a usage error.\n",
          out);
}

static bool all_digits(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* A number as written after '/' or '@': an optional sign, then digits. */
static bool signed_digits(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    return all_digits(s);
}

typedef enum { NUM_OK, NUM_NOT_POSITIVE, NUM_TOO_LARGE } num_check;

/* A whole number from 1 to max, or why not. */
static num_check positive(const char *s, uint64_t max, uint64_t *out)
{
    bool minus = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    while (*s == '0' && s[1] != '\0')
        s++; /* leading zeros do not make a number larger */
    if (minus || strcmp(s, "0") == 0)
        return NUM_NOT_POSITIVE;
    if (strlen(s) > 19)
        return NUM_TOO_LARGE;
    uint64_t v = strtoull(s, NULL, 10);
    if (v > max)
        return NUM_TOO_LARGE;
    *out = v;
    return NUM_OK;
}

/* The value v of option opt (-F, -c), a whole number from 1 to max, into
 * *out; false with the error said ("the frequency is out of range (1 to
 * N samples a second)"). */
static bool positive_option(const char *opt, const char *v, uint64_t max, const char *what,
                            const char *unit, uint64_t *out)
{
    num_check c = signed_digits(v) ? positive(v, max, out) : NUM_NOT_POSITIVE;
    if (c == NUM_OK)
        return true;
    cli_error("record", "%s %s: the %s %s (1 to %" PRIu64 " %s)", opt, v, what,
              c == NUM_TOO_LARGE ? "is out of range" : "must be a positive integer", max, unit);
    return false;
}

/* --switch-output's mode, as perf's: "signal", or a whole number and one
 * unit, of size (B, K, M, G) or of time (s, m, h, d): case tells "10M"
 * (bytes) from "10m" (minutes), as there. */
static bool switch_output_option(const char *v, record_options *o)
{
    static const struct {
        char unit;
        bool time;
        uint64_t scale;
    } units[] = {{'B', false, 1},        {'K', false, 1u << 10}, {'M', false, 1u << 20},
                 {'G', false, 1u << 30}, {'s', true, 1},         {'m', true, 60},
                 {'h', true, 3600},      {'d', true, 86400}};
    if (strcmp(v, "signal") == 0) {
        o->switch_mode = SWITCH_SIGNAL;
        return true;
    }
    size_t n = 0;
    uint64_t num = 0;
    while (v[n] >= '0' && v[n] <= '9' && n < 10)
        num = num * 10 + (uint64_t)(v[n++] - '0');
    if (n > 0 && n < 10 && num > 0 && v[n] != '\0' && v[n + 1] == '\0')
        for (size_t k = 0; k < sizeof units / sizeof *units; k++)
            if (units[k].unit == v[n]) {
                /* Ten years, or a pebibyte: past that a number is a slip. */
                if (num * units[k].scale > (units[k].time ? 315360000ull : 1ull << 50))
                    break;
                if (units[k].time) {
                    o->switch_mode = SWITCH_TIME;
                    o->switch_ns = num * units[k].scale * 1000000000ull;
                } else {
                    o->switch_mode = SWITCH_SIZE;
                    o->switch_bytes = num * units[k].scale;
                }
                return true;
            }
    cli_error("record",
              "--switch-output=%.64s: give signal, a size (a whole number and B, K, M or G: "
              "10M; at most 1 PiB) or a time (a whole number and s, m, h or d: 30s; at most "
              "10 years)",
              v);
    return false;
}

/* The events of one -e list, as libdkperf's grammar reads them (EV,
 * EV/PERIOD, EV@FREQ, pmu/terms/), appended to o->events. */
static int split_events(record_options *o, const char *list)
{
    size_t pos = 0;
    dk_event_spec sp = {.size = sizeof sp};
    int rc;
    while ((rc = dk_event_list_next(list, &pos, &sp)) == 1) {
        if (o->nevents == DK_MAX_EVENTS) {
            cli_error("record", "-e: more than %d events", DK_MAX_EVENTS);
            return EXIT_USAGE;
        }
        char *name = malloc(sp.base_len + 1);
        record_event *grown = name != NULL ? realloc(o->events, (o->nevents + 1) * sizeof *grown)
                                           : NULL;
        if (grown == NULL) {
            cli_error("record", "out of memory while reading -e");
            free(name);
            return EXIT_SETUP;
        }
        memcpy(name, sp.text, sp.base_len);
        name[sp.base_len] = '\0';
        o->events = grown;
        o->events[o->nevents++] = (record_event){name, sp.period, sp.freq};
    }
    return rc < 0 ? event_list_error("record") : 0;
}

int record_parse_args(int argc, char **argv, record_options *o)
{
    memset(o, 0, sizeof *o);
    o->output = "dkperf.data";
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i], *v;
        long n;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (opt_takes("record", argc, argv, &i, "-e", "--event", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            int rc = split_events(o, v);
            if (rc != 0)
                return rc;
        } else if (opt_takes("record", argc, argv, &i, "-F", "--freq", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            uint64_t f = 0;
            if (!positive_option("-F", v, RECORD_MAX_FREQ, "frequency", "samples a second", &f))
                return EXIT_USAGE;
            o->freq = (long)f;
        } else if (opt_takes("record", argc, argv, &i, "-c", "--count", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            uint64_t c_period = 0;
            if (!positive_option("-c", v, LONG_MAX, "period", "events", &c_period))
                return EXIT_USAGE;
            o->period = (long)c_period;
        } else if (opt_takes("record", argc, argv, &i, "-p", "--pid", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            if (!opt_number(v, &n) || n < 1 || n > 0x7fffffffL) {
                cli_error("record", "-p %s: give the id of a running process", v);
                return EXIT_USAGE;
            }
            o->pid = n;
        } else if (opt_takes("record", argc, argv, &i, "-o", "--output", &v)) {
            if ((o->output = v) == NULL)
                return EXIT_USAGE;
            if (v[0] == '\0') {
                cli_error("record", "-o: an empty file name");
                return EXIT_USAGE;
            }
        } else if (opt_takes("record", argc, argv, &i, NULL, "--backend", &v)) {
            if ((o->backend = v) == NULL)
                return EXIT_USAGE;
            if (cli_backend_kind(v) < 0) {
                cli_error("record", "--backend %s: not a backend (auto, kperf, perf_event)", v);
                return EXIT_USAGE;
            }
        } else if (opt_is(a, "-g", "--call-graph")) {
            o->callgraph = true;
        } else if (opt_is(a, "-a", "--all-cpus")) {
            o->all_cpus = true;
        } else if (strcmp(a, "--switch-output") == 0) {
            o->switch_mode = SWITCH_SIGNAL;
        } else if (strncmp(a, "--switch-output=", 16) == 0) {
            if (!switch_output_option(a + 16, o))
                return EXIT_USAGE;
        } else if (opt_takes("record", argc, argv, &i, NULL, "--switch-max-files", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            uint64_t m = 0;
            if (!positive_option("--switch-max-files", v, 1000000, "number", "files", &m))
                return EXIT_USAGE;
            o->switch_max_files = (long)m;
        } else if (opt_takes("record", argc, argv, &i, NULL, "--pprof-dir", &v)) {
            if ((o->pprof_dir = v) == NULL)
                return EXIT_USAGE;
            if (v[0] == '\0') {
                cli_error("record", "--pprof-dir: an empty directory name");
                return EXIT_USAGE;
            }
        } else if (opt_is(a, NULL, "--off-cpu")) {
            o->off_cpu = o->callgraph = true;
        } else if (opt_is(a, "-h", "--help")) {
            help_record(stdout);
            return -1;
        } else {
            cli_error("record", "unknown option %s (see dkperf help record)", a);
            return EXIT_USAGE;
        }
    }
    if ((o->switch_max_files || o->pprof_dir != NULL) && o->switch_mode == SWITCH_NONE) {
        cli_error("record", "%s: only with --switch-output",
                  o->pprof_dir != NULL ? "--pprof-dir" : "--switch-max-files");
        return EXIT_USAGE;
    }
    if (o->freq && o->period) {
        cli_error("record", "-F and -c cannot be used together (give one)");
        return EXIT_USAGE;
    }
    if (i < argc)
        o->cmd = argv + i;
    if (o->pid && o->cmd != NULL) {
        cli_error("record", "-p and a command cannot be used together (give one)");
        return EXIT_USAGE;
    }
    if (o->pid && o->all_cpus) {
        cli_error("record", "-p and -a cannot be used together (give one)");
        return EXIT_USAGE;
    }
    if (o->cmd == NULL && !o->pid && !o->all_cpus) {
        cli_error("record", "no command to run (usage: dkperf record [options] [--] CMD "
                            "[ARGS...], or -p PID, or -a)");
        return EXIT_USAGE;
    }
    return 0;
}

void record_options_free(record_options *o)
{
    if (o == NULL)
        return;
    for (size_t i = 0; i < o->nevents; i++)
        free(o->events[i].name);
    free(o->events);
    memset(o, 0, sizeof *o);
}
