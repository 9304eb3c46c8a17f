/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * gbench_cli.c - google benchmark's command line (its 1.7 flags, and the
 * "0.5s" / "100x" forms of --benchmark_min_time of later releases) in a
 * dkbench program, spelled and checked as google benchmark does, so that
 * its tools (compare.py) can drive the program. See cli.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "libdkbench/cli.h"

enum kind { K_BOOL, K_INT, K_DOUBLE, K_STRING, K_KVPAIRS, K_MIN_TIME };

/* Every flag google benchmark 1.7.1 defines. */
static const struct {
    const char *name;
    enum kind kind;
} flags[] = {
    {"benchmark_list_tests", K_BOOL},
    {"benchmark_filter", K_STRING},
    {"benchmark_min_time", K_MIN_TIME},
    {"benchmark_min_warmup_time", K_DOUBLE},
    {"benchmark_repetitions", K_INT},
    {"benchmark_enable_random_interleaving", K_BOOL},
    {"benchmark_report_aggregates_only", K_BOOL},
    {"benchmark_display_aggregates_only", K_BOOL},
    {"benchmark_format", K_STRING},
    {"benchmark_out", K_STRING},
    {"benchmark_out_format", K_STRING},
    {"benchmark_color", K_STRING},
    {"benchmark_counters_tabular", K_BOOL},
    {"benchmark_perf_counters", K_STRING},
    {"benchmark_context", K_KVPAIRS},
    {"benchmark_time_unit", K_STRING},
    {"v", K_INT},
};

/* google benchmark's truthy words: one alphanumeric character but 0, f, F,
 * n, N; or any longer word but false, no, off (in any case). */
static bool truthy(const char *v)
{
    if (v[0] != '\0' && v[1] == '\0')
        return ((v[0] >= '0' && v[0] <= '9') || ((v[0] | 0x20) >= 'a' && (v[0] | 0x20) <= 'z')) &&
               strchr("0fFnN", v[0]) == NULL;
    return v[0] == '\0' ||
           !(strcasecmp(v, "false") == 0 || strcasecmp(v, "no") == 0 || strcasecmp(v, "off") == 0);
}

/* Its messages for a value it cannot read, then exit status 1 (the flag
 * is left over, an unrecognized one). */
static int bad_value(const char *prog, const char *name, const char *v, const char *expect,
                     const char *more)
{
    dkb_say("%s: error: the value of flag --%s is expected to be %s, but actually has value "
            "\"%s\"%s",
            prog, name, expect, v, more);
    return 1;
}

static int parse_int(const char *prog, const char *name, const char *v, int *out)
{
    char *end;
    errno = 0;
    long l = strtol(v, &end, 10);
    if (*end != '\0')
        return bad_value(prog, name, v, "a 32-bit integer", ".");
    if (errno != 0 || l < INT32_MIN || l > INT32_MAX)
        return bad_value(prog, name, v, "a 32-bit integer", ", which overflows.");
    *out = (int)l;
    return 0;
}

static int parse_double(const char *prog, const char *name, const char *v, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (*end != '\0' || end == v)
        return bad_value(prog, name, v, "a double", ".");
    *out = d;
    return 0;
}

/* The least --time takes (cli.c). */
#define DKB_GBENCH_LEAST_TIME 1e-6

/* --benchmark_min_time: seconds ("0.5" as 1.7 reads it, "0.5s"), or an
 * iteration count ("100x"). */
static int parse_min_time(dkb_gbench_flags *g, const char *prog, const char *v)
{
    size_t len = strlen(v);
    char num[64];
    if (len == 0) { /* 1.7 reads "" as 0 */
        g->min_time = DKB_GBENCH_LEAST_TIME;
        g->min_iters = 0;
        return 0;
    }
    if (len >= sizeof num)
        return bad_value(prog, "benchmark_min_time", v, "seconds (0.5, 0.5s) or iterations (100x)",
                         ".");
    memcpy(num, v, len + 1);
    char last = num[len - 1];
    if (last == 'x') {
        num[len - 1] = '\0';
        char *end;
        errno = 0;
        unsigned long long n = strtoull(num, &end, 10);
        if (num[0] < '0' || num[0] > '9' || *end != '\0' || errno != 0 || n < 1)
            return bad_value(prog, "benchmark_min_time", v, "a whole number of iterations >= 1",
                             ".");
        g->min_iters = n;
        g->min_time = 0;
        return 0;
    }
    if (last == 's')
        num[len - 1] = '\0';
    double d;
    char *end;
    errno = 0;
    d = strtod(num, &end);
    if (end == num || *end != '\0' || errno != 0 || !(d <= 1e6))
        return bad_value(prog, "benchmark_min_time", v,
                         "a number of seconds (0.5, 0.5s) or of iterations (100x)", ".");
    /* 0 or less: google benchmark's one-iteration smoke run; here the
     * least time --time takes (the fewest samples the harness needs). */
    g->min_time = d > DKB_GBENCH_LEAST_TIME ? d : DKB_GBENCH_LEAST_TIME;
    g->min_iters = 0;
    return 0;
}

/* What flag() returns besides an exit status. */
enum { TAKEN = 1000, NOT_OURS };

static int flag(dkb_options *o, const char *prog, const char *arg)
{
    dkb_gbench_flags *g = &o->gb;
    if (strncmp(arg, "--", 2) != 0 ||
        (strncmp(arg + 2, "benchmark_", 10) != 0 && strncmp(arg + 2, "v=", 2) != 0))
        return NOT_OURS;
    const char *body = arg + 2;
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++) {
        const char *name = flags[k].name;
        size_t len = strlen(name);
        if (strncmp(body, name, len) != 0)
            continue;
        const char *v;
        if (body[len] == '=')
            v = body + len + 1;
        else if (body[len] == '\0' && flags[k].kind == K_BOOL)
            v = "";
        else
            continue;
        int rc = 0, i = 0;
        double d = 0;
        switch (flags[k].kind) {
        case K_BOOL: {
            bool t = truthy(v);
            if (k == 0)
                g->list_tests = t;
            else if (strcmp(name, "benchmark_enable_random_interleaving") == 0)
                g->random_interleaving = t;
            else if (strcmp(name, "benchmark_report_aggregates_only") == 0)
                g->report_aggregates_only = t;
            else if (strcmp(name, "benchmark_display_aggregates_only") == 0)
                g->display_aggregates_only = t;
            else
                g->counters_tabular = t;
            return TAKEN;
        }
        case K_MIN_TIME:
            return (rc = parse_min_time(g, prog, v)) != 0 ? rc : TAKEN;
        case K_INT:
            if ((rc = parse_int(prog, name, v, &i)) != 0)
                return rc;
            if (name[0] == 'v') {
                g->verbosity = true;
            } else if (i < 1 || i > DKB_MAX_PROCESSES) {
                /* Each repetition is a process of its own. */
                dkb_say("%s: error: --benchmark_repetitions=%s: expected 1 to %d repetitions, "
                        "each measured in a process of its own",
                        prog, v, DKB_MAX_PROCESSES);
                return 1;
            } else {
                g->repetitions = i;
            }
            return TAKEN;
        case K_DOUBLE: /* benchmark_min_warmup_time */
            if ((rc = parse_double(prog, name, v, &d)) != 0)
                return rc;
            g->min_warmup_time = true;
            return TAKEN;
        case K_KVPAIRS:
            g->context = true;
            return TAKEN;
        case K_STRING:
            break;
        }
        if (strcmp(name, "benchmark_filter") == 0)
            g->filter = v;
        else if (strcmp(name, "benchmark_format") == 0)
            g->format = v;
        else if (strcmp(name, "benchmark_out") == 0)
            g->out = v;
        else if (strcmp(name, "benchmark_out_format") == 0)
            g->out_format = v;
        else if (strcmp(name, "benchmark_color") == 0)
            g->color = v;
        else if (strcmp(name, "benchmark_perf_counters") == 0)
            g->perf_counters = v;
        else if (strcmp(name, "benchmark_time_unit") == 0)
            g->time_unit = v[0] != '\0' && strcmp(v, "ns") != 0; /* ns: what is reported */
        if (strcmp(name, "benchmark_time_unit") == 0 && v[0] != '\0' && strcmp(v, "ns") != 0 &&
            strcmp(v, "us") != 0 && strcmp(v, "ms") != 0 && strcmp(v, "s") != 0) {
            /* google benchmark prints its usage and exits with 0. */
            dkb_say("%s: --benchmark_time_unit=%s: expected ns, us, ms or s", prog, v);
            return -1;
        }
        return TAKEN;
    }
    dkb_say("%s: error: unrecognized command-line flag: %s", prog, arg);
    return 1;
}

int dkb_gbench_flag(dkb_options *o, const char *prog, const char *arg)
{
    int rc = flag(o, prog, arg);
    return rc == TAKEN ? 0 : rc == NOT_OURS ? DKB_GBENCH_NOT_A_FLAG : rc;
}

/* google benchmark's perf counter names (libpfm's generic ones, in any
 * case) and the events they are here; any other name is an event of
 * libdkperf's own. */
static const char *const perf_names[][2] = {
    {"instructions", "instructions"},
    {"cycles", "cycles"},
    {"cpu-cycles", "cycles"},
    {"branches", "branches"},
    {"branch-instructions", "branches"},
    {"branch-misses", "branch-misses"},
    {"cache-references", "cache-references"},
    {"cache-misses", "cache-misses"},
    {"bus-cycles", "bus-cycles"},
    {"ref-cycles", "ref-cycles"},
    {"stalled-cycles-frontend", "stalled-cycles-frontend"},
    {"stalled-cycles-backend", "stalled-cycles-backend"},
};

/* --benchmark_perf_counters as events (g->events_buf) and labels. */
static int map_perf_counters(dkb_gbench_flags *g, const char *prog)
{
    const char *list = g->perf_counters;
    size_t len = strlen(list);
    if (len >= sizeof g->labels_buf) {
        dkb_say("%s: --benchmark_perf_counters: the list is longer than %zu bytes", prog,
                sizeof g->labels_buf - 1);
        return 1;
    }
    memcpy(g->labels_buf, list, len + 1);
    size_t at = 0;
    g->n_labels = 0;
    for (char *s = g->labels_buf; *s != '\0' || g->n_labels == 0;) {
        char *comma = strchr(s, ',');
        if (comma != NULL)
            *comma = '\0';
        if (*s == '\0' || g->n_labels == DK_MAX_EVENTS) {
            dkb_say("%s: --benchmark_perf_counters=%s: %s", prog, list,
                    *s == '\0' ? "an empty counter name" : "more counters than can be counted");
            return 1;
        }
        const char *ev = s;
        for (size_t k = 0; k < sizeof perf_names / sizeof perf_names[0]; k++)
            if (strcasecmp(s, perf_names[k][0]) == 0)
                ev = perf_names[k][1];
        at += (size_t)snprintf(g->events_buf + at, sizeof g->events_buf - at, "%s%s",
                               g->n_labels ? "," : "", ev);
        if (at >= sizeof g->events_buf) {
            dkb_say("%s: --benchmark_perf_counters: the list is too long", prog);
            return 1;
        }
        g->event_of[g->n_labels] = ev;
        g->labels[g->n_labels++] = s;
        if (comma == NULL)
            break;
        s = comma + 1;
    }
    return 0;
}

static bool is_format(const char *v)
{
    return strcmp(v, "console") == 0 || strcmp(v, "json") == 0 || strcmp(v, "csv") == 0;
}

int dkb_gbench_apply(dkb_options *o, const char *prog)
{
    dkb_gbench_flags *g = &o->gb;
    /* google benchmark prints its usage and exits with 0 on these. */
    const char *which[] = {"benchmark_format", "benchmark_out_format"};
    const char *vals[] = {g->format, g->out_format};
    for (int k = 0; k < 2; k++)
        if (vals[k] != NULL && !is_format(vals[k])) {
            dkb_say("%s: --%s=%s: expected console, json or csv", prog, which[k], vals[k]);
            return -1;
        }
    if (g->color != NULL && g->color[0] == '\0') {
        dkb_say("%s: --benchmark_color=: expected auto, or a true or false word", prog);
        return -1;
    }
    if (g->filter != NULL) {
        const char *f = g->filter;
        o->filter_negated = f[0] == '-';
        f += o->filter_negated;
        /* "all" is all only unnegated: google benchmark reads -all as
         * all but the names that hold "all". */
        o->filter = !o->filter_negated && strcmp(f, "all") == 0 ? NULL : f;
        snprintf(o->filter_from, sizeof o->filter_from, "--benchmark_filter");
    }
    if (g->list_tests)
        o->list = true;
    if (g->repetitions != 0) {
        if (o->processes_given && o->processes != (size_t)g->repetitions) {
            dkb_say("%s: --benchmark_repetitions=%d and --processes %zu: each repetition is "
                    "a process of its own; give one of them",
                    prog, g->repetitions, o->processes);
            return 2;
        }
        o->processes = (size_t)g->repetitions;
        o->processes_given = true;
    }
    /* Each process gets time_budget / processes (dkb_worker_config): a
     * repetition's time is the process's share. */
    if (g->min_time > 0) {
        o->cfg.time_budget = g->min_time * (double)(o->processes >= 2 ? o->processes : 1);
        o->cfg.run_time = o->cfg.time_budget;
    }
    if (g->min_iters != 0)
        o->cfg.iterations = g->min_iters;
    if (g->perf_counters != NULL && g->perf_counters[0] != '\0') {
        if (map_perf_counters(g, prog) != 0)
            return 1;
        o->events = g->events_buf;
        snprintf(o->events_from, sizeof o->events_from, "--benchmark_perf_counters");
    }
    if (g->format != NULL)
        o->quiet = true; /* stdout holds google benchmark's layout */
    return 0;
}

void dkb_gbench_notes(const dkb_options *o, const char *prog)
{
    const dkb_gbench_flags *g = &o->gb;
    if (g->context)
        dkb_say("%s: --benchmark_context: not honoured: the report's context holds what "
                "dkbench measures of the machine only",
                prog);
    if (g->time_unit)
        dkb_say("%s: --benchmark_time_unit: not honoured: times are reported in ns", prog);
    if (g->min_warmup_time)
        dkb_say("%s: --benchmark_min_warmup_time: not honoured: the warm-up runs until the "
                "time per iteration settles, --warm-up seconds at most",
                prog);
    if (g->verbosity)
        dkb_say("%s: --v: not honoured: no log is written (-v shows the fit and outliers)", prog);
}

bool dkb_gbench_color(const dkb_options *o, bool auto_color)
{
    const char *c = o->gb.color;
    if (c == NULL || strcmp(c, "auto") == 0)
        return auto_color;
    return truthy(c);
}

void dkb_gbench_view_of(const dkb_options *o, const char *argv0, bool display,
                        dkb_gbench_name *names, dkb_gbench_view *v)
{
    const dkb_gbench_flags *g = &o->gb;
    memset(v, 0, sizeof *v);
    v->executable = argv0;
    v->repetitions = g->repetitions > 0 ? (size_t)g->repetitions : 0;
    /* display_aggregates_only is for the display, report_ for both. */
    v->aggregates_only = g->report_aggregates_only || (display && g->display_aggregates_only);
    v->counters_tabular = g->counters_tabular;
    v->color = display && dkb_gbench_color(o, dkb_gbench_color_auto(stdout));
    for (size_t i = 0; i < g->n_labels; i++) {
        names[i].event = g->event_of[i];
        names[i].as = g->labels[i];
    }
    v->names = names;
    v->n_names = g->n_labels;
}
