/*
 * stat_options.c - dkperf stat's options and -e lists (see stat_options.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "stat_options.h"

void help_stat(FILE *out)
{
    fputs("usage: dkperf stat [-e EV[,EV...]] [-r N] [-x SEP | --json] [-o FILE] [-a]\n"
          "                   [--backend NAME] [--] CMD [ARGS...]\n"
          "\n"
          "Run CMD and report its counts, then exit as CMD did.\n"
          "\n"
          "  -e, --events EV,...  events to count: portable names (instructions, cycles,\n"
          "                       branches, branch-misses, ...), native names or aliases,\n"
          "                       and on Linux rNNNN and pmu/term=value,.../[uk] (a comma\n"
          "                       between two '/' belongs to the event); may be repeated;\n"
          "                       default: instructions, cycles, branches, branch-misses\n"
          "                       (and task-clock, context-switches, page-faults on Linux)\n"
          "  -r, --repeat N       run CMD N times; report the means and their spread\n"
          "  -x, --field-separator SEP\n"
          "                       one line per event, fields separated by SEP (CSV)\n"
          "      --json           one JSON object\n"
          "  -o, --output FILE    write the report to FILE instead of standard error\n"
          "  -a, --all-cpus       count every CPU, not only CMD (macOS: needed for events\n"
          "                       other than instructions and cycles)\n"
          "      --backend NAME   auto, kperf, selfcounts or perf_event\n"
          "\n"
          "Exit status: CMD's (128+N when signal N ended it; 127 not found, 126 not\n"
          "executable); 2 for a usage error; 1 when the counters could not be set up,\n"
          "read or given back, or the report could not be written; 128+N when signal N\n"
          "reached dkperf while no command was running.\n",
          out);
}

void free_event_list(char **names, size_t n)
{
    if (names == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static int append_name(const char *start, size_t len, char ***names, size_t *n)
{
    /* Grow one at a time: DK_MAX_EVENTS bounds the list. */
    char **grown = realloc(*names, (*n + 1) * sizeof *grown);
    if (grown == NULL) {
        cli_error("stat", "out of memory while splitting the -e list");
        return EXIT_SETUP;
    }
    *names = grown;
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        cli_error("stat", "out of memory while splitting the -e list");
        return EXIT_SETUP;
    }
    memcpy(copy, start, len);
    copy[len] = '\0';
    grown[(*n)++] = copy;
    return 0;
}

int split_event_list(const char *list, char ***names, size_t *n)
{
    const char *start = list;
    bool in_terms = false; /* between the two '/' of pmu/terms/ */
    for (const char *p = list;; p++) {
        if (*p == '/') {
            in_terms = !in_terms;
            continue;
        }
        if (*p != '\0' && (*p != ',' || in_terms))
            continue;
        size_t len = (size_t)(p - start);
        if (in_terms) {
            cli_error("stat",
                      "-e '%s': unbalanced '/' in '%.*s' (write pmu/term=value,.../ with a "
                      "closing '/')",
                      list, (int)len, start);
            return EXIT_USAGE;
        }
        if (len == 0) {
            cli_error("stat", "-e '%s': an empty event name (give names separated by commas)",
                      list);
            return EXIT_USAGE;
        }
        if (*n == DK_MAX_EVENTS) {
            cli_error("stat", "-e: more than %d events", DK_MAX_EVENTS);
            return EXIT_USAGE;
        }
        int rc = append_name(start, len, names, n);
        if (rc != 0)
            return rc;
        if (*p == '\0')
            return 0;
        start = p + 1;
    }
}

static bool is_number(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return false;
    *out = v;
    return true;
}

/*
 * Whether argv[*i] is the option; its value is attached ("-x,",
 * "--events=a,b") or the next argument. *value is NULL for a missing one
 * (after an error line).
 */
static bool takes(int argc, char **argv, int *i, const char *short_name, const char *long_name,
                  const char **value)
{
    const char *a = argv[*i];
    size_t slen = short_name != NULL ? strlen(short_name) : 0, llen = strlen(long_name);
    *value = NULL;
    if (short_name != NULL && strncmp(a, short_name, slen) == 0 && a[slen] != '\0') {
        *value = a + slen;
        return true;
    }
    if (strncmp(a, long_name, llen) == 0 && a[llen] == '=') {
        *value = a + llen + 1;
        return true;
    }
    if ((short_name == NULL || strcmp(a, short_name) != 0) && strcmp(a, long_name) != 0)
        return false;
    if (*i + 1 >= argc)
        cli_error("stat", "%s needs a value (see dkperf help stat)", a);
    else
        *value = argv[++*i];
    return true;
}

static bool is_opt(const char *a, const char *short_name, const char *long_name)
{
    return (short_name != NULL && strcmp(a, short_name) == 0) || strcmp(a, long_name) == 0;
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
        if (takes(argc, argv, &i, "-e", "--events", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            int rc = split_event_list(v, &o->events, &o->nevents); /* -e may be repeated */
            if (rc != 0)
                return rc;
        } else if (takes(argc, argv, &i, "-r", "--repeat", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            if (!is_number(v, &o->repeat) || o->repeat < 1 || o->repeat > STAT_MAX_RUNS) {
                cli_error("stat", "-r %s: give a number of runs from 1 to %d", v, STAT_MAX_RUNS);
                return EXIT_USAGE;
            }
        } else if (takes(argc, argv, &i, "-x", "--field-separator", &v)) {
            if ((o->sep = v) == NULL)
                return EXIT_USAGE;
        } else if (takes(argc, argv, &i, "-o", "--output", &v)) {
            if ((o->output = v) == NULL)
                return EXIT_USAGE;
        } else if (takes(argc, argv, &i, NULL, "--backend", &v)) {
            if ((o->backend = v) == NULL)
                return EXIT_USAGE;
        } else if (is_opt(a, NULL, "--json")) {
            o->json = true;
        } else if (is_opt(a, "-a", "--all-cpus")) {
            o->all_cpus = true;
        } else if (is_opt(a, "-h", "--help")) {
            help_stat(stdout);
            return -1;
        } else {
            cli_error("stat", "unknown option %s (see dkperf help stat)", a);
            return EXIT_USAGE;
        }
    }
    if (i >= argc) {
        cli_error("stat", "no command to run (usage: dkperf stat [options] [--] CMD [ARGS...])");
        return EXIT_USAGE;
    }
    o->cmd = argv + i;
    if (o->sep != NULL) {
        if (o->sep[0] == '\0' || strpbrk(o->sep, "0123456789.\n\"") != NULL) {
            cli_error("stat", "-x '%s': the separator must be non-empty and hold no digit, '.', "
                              "quote or newline",
                      o->sep);
            return EXIT_USAGE;
        }
        if (o->json) {
            cli_error("stat", "-x and --json cannot be used together");
            return EXIT_USAGE;
        }
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
    memset(o, 0, sizeof *o);
}
