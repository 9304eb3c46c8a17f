/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * cli.c - the command line and environment of a benchmark program
 * (dk_bench_main's options, the DKBENCH_* variables, the -e list) and its
 * messages on stderr; main.c runs what they ask. See cli.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/text.h"
#include "libdkbench/cli.h"

static const char usage[] =
    "usage: %s [options] [REGEX]\n"
    "Run the benchmarks whose name matches REGEX (POSIX extended; all by default).\n"
    "  --list                print the benchmark names and exit\n"
    "  -e, --events EV,...   events to count (default instructions,cycles,branches,branch-misses)\n"
    "  --time S              measurement budget per benchmark in seconds (0.2)\n"
    "  --warm-up S           warm-up bound per benchmark in seconds (0.08)\n"
    "  --samples N           exactly N samples per process, no adaptive stop\n"
    "  --processes N         measure each benchmark in N fresh processes (10); 1: in\n"
    "                        this process only (its interval then ignores placement)\n"
    "  --precision P         stop when every CI half-width <= P x estimate (0.01)\n"
    "  --noise P             changes within +-P count as noise (0.01)\n"
    "  --save-baseline NAME  save the results as baseline NAME\n"
    "  --baseline NAME       compare with baseline NAME\n"
    "  --ab PROGRAM          compare with another build of this program, run in pairs of\n"
    "                        processes side by side (--processes pairs; by default until\n"
    "                        the change resolves +-noise/2, 20 pairs to 10 s a benchmark);\n"
    "                        PROGRAM is a path (./old) or a build saved with --save-build\n"
    "  --save-build NAME     save this program's executable as build NAME (for --ab NAME)\n"
    "  --results-dir D       directory of the baselines (dkbench-results)\n"
    "  --json F, --csv F, --markdown F, --gbench-json F, --html F   write reports\n"
    "  -q, --quiet           no per-benchmark blocks\n"
    "  -v, --verbose         the fit, R^2 and outlier fences too\n"
    "  --seed N              bootstrap seed (1)\n"
    "  --compare             run each group's benchmarks interleaved, with ratios\n"
    "  --p-cores             macOS: ask for the performance cores (QoS user-interactive)\n"
    "  -h, --help            this help\n"
    "google benchmark's flags (--benchmark_x=VALUE; a true/false flag alone is true):\n"
    "  --benchmark_filter=RE     as REGEX; -RE: all but its matches; all: all\n"
    "  --benchmark_list_tests    as --list\n"
    "  --benchmark_repetitions=N N processes, one a repetition (as --processes N)\n"
    "  --benchmark_min_time=T    T (0.5, 0.5s) seconds of samples a process at most\n"
    "                            (precision may stop sooner); Nx: exactly N measured\n"
    "                            iterations a process, after its warm-up\n"
    "  --benchmark_enable_random_interleaving  every benchmark's processes in one\n"
    "                            random order (--seed)\n"
    "  --benchmark_out=F         google benchmark's layout in F, as\n"
    "  --benchmark_out_format=json|console|csv (json)\n"
    "  --benchmark_format=console|json|csv  google benchmark's layout on stdout\n"
    "                            instead of the blocks (its banner on stderr)\n"
    "  --benchmark_perf_counters=INSTRUCTIONS,CYCLES,...  the events counted, named so\n"
    "  --benchmark_report_aggregates_only, --benchmark_display_aggregates_only (the\n"
    "                            display's only): mean, median, stddev, cv alone\n"
    "  --benchmark_color=auto|true|false, --benchmark_counters_tabular: the table's\n"
    "  --benchmark_context, --benchmark_time_unit, --benchmark_min_warmup_time, --v:\n"
    "                            read, not honoured (said on stderr)\n"
    "Environment: DKBENCH_FILTER, DKBENCH_EVENTS, DKBENCH_TIME, DKBENCH_WARM_UP,\n"
    "DKBENCH_SAMPLES, DKBENCH_PROCESSES, DKBENCH_PRECISION, DKBENCH_NOISE, DKBENCH_OUTPUT_DIR, DKBENCH_SEED,\n"
    "DKBENCH_BASELINE, DKBENCH_SAVE_BASELINE, DKBENCH_QUIET=1, NO_COLOR; options win.\n";

static const char default_events[] = "instructions,cycles,branches,branch-misses";

void dkb_put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dk__vput_untrusted(stderr, fmt, ap);
    va_end(ap);
}

void dkb_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dk__vput_untrusted(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int bad(const char *prog, const char *what, const char *value, const char *expect)
{
    dkb_say("%s: %s '%s': %s (see --help)", prog, what, value, expect);
    return 2;
}

static int parse_double(const char *prog, const char *what, const char *v, double lo, double hi,
                        double *out)
{
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (errno != 0 || end == v || *end != '\0' || !(d >= lo && d <= hi)) {
        char expect[96];
        snprintf(expect, sizeof expect, "expected a number from %g to %g", lo, hi);
        return bad(prog, what, v, expect);
    }
    *out = d;
    return 0;
}

static int parse_u64(const char *prog, const char *what, const char *v, uint64_t lo, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long u = strtoull(v, &end, 10);
    /* Digits only: strtoull would skip blanks and take " -1" as 2^64 - 1. */
    if (errno != 0 || end == v || *end != '\0' || v[0] < '0' || v[0] > '9' || u < lo) {
        char expect[64];
        snprintf(expect, sizeof expect, "expected a whole number >= %llu", (unsigned long long)lo);
        return bad(prog, what, v, expect);
    }
    *out = u;
    return 0;
}

/* One setting, from an option or from its environment variable. */
static int apply(dkb_options *o, const char *prog, const char *what, const char *key, const char *v)
{
    uint64_t u;
    int rc = 0;
    if (strcmp(key, "time") == 0) {
        rc = parse_double(prog, what, v, 1e-6, 1e6, &o->cfg.time_budget);
    } else if (strcmp(key, "warm-up") == 0) {
        rc = parse_double(prog, what, v, 0, 1e6, &o->cfg.warmup_bound);
    } else if (strcmp(key, "samples") == 0) {
        if ((rc = parse_u64(prog, what, v, 2, &u)) == 0) {
            if (u > 1000000)
                return bad(prog, what, v, "at most 1000000 samples");
            o->cfg.samples = (size_t)u;
        }
    } else if (strcmp(key, "processes") == 0) {
        /* Digits only, then the range, in one message for every bad value. */
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (v[0] < '0' || v[0] > '9' || errno != 0 || *end != '\0' || n < 1 ||
            n > DKB_MAX_PROCESSES)
            return bad(prog, what, v,
                       "expected a whole number from 1 to " DKB_STR(DKB_MAX_PROCESSES));
        o->processes = (size_t)n;
        o->processes_given = true;
    } else if (strcmp(key, "precision") == 0) {
        rc = parse_double(prog, what, v, 1e-6, 1, &o->cfg.precision);
    } else if (strcmp(key, "noise") == 0) {
        rc = parse_double(prog, what, v, 0, 1, &o->noise);
    } else if (strcmp(key, "seed") == 0) {
        rc = parse_u64(prog, what, v, 0, &o->cfg.seed);
    } else if (strcmp(key, "events") == 0) {
        o->events = v;
        snprintf(o->events_from, sizeof o->events_from, "%s", what);
    } else if (strcmp(key, "filter") == 0) {
        o->filter = v;
        snprintf(o->filter_from, sizeof o->filter_from, "%s", what);
    } else if (strcmp(key, "results-dir") == 0) {
        o->results_dir = v;
    } else if (strcmp(key, "baseline") == 0) {
        o->baseline = v;
    } else if (strcmp(key, "save-baseline") == 0) {
        o->save_baseline = v;
    } else if (strcmp(key, "ab") == 0) {
        o->ab = v;
    } else if (strcmp(key, "save-build") == 0) {
        o->save_build = v;
    }
    return rc;
}

static const struct {
    const char *env, *key;
} env_keys[] = {
    {"DKBENCH_FILTER", "filter"},
    {"DKBENCH_EVENTS", "events"},
    {"DKBENCH_TIME", "time"},
    {"DKBENCH_WARM_UP", "warm-up"},
    {"DKBENCH_SAMPLES", "samples"},
    {"DKBENCH_PROCESSES", "processes"},
    {"DKBENCH_PRECISION", "precision"},
    {"DKBENCH_NOISE", "noise"},
    {"DKBENCH_OUTPUT_DIR", "results-dir"},
    {"DKBENCH_SEED", "seed"},
    {"DKBENCH_BASELINE", "baseline"},
    {"DKBENCH_SAVE_BASELINE", "save-baseline"},
};

/* Options that take a value: long name, short name, key (NULL: a file). */
static const struct {
    const char *lng, *shrt, *key;
} value_opts[] = {
    {"--events", "-e", "events"},
    {"--time", NULL, "time"},
    {"--warm-up", NULL, "warm-up"},
    {"--samples", NULL, "samples"},
    {"--processes", NULL, "processes"},
    {"--precision", NULL, "precision"},
    {"--noise", NULL, "noise"},
    {"--save-baseline", NULL, "save-baseline"},
    {"--baseline", NULL, "baseline"},
    {"--ab", NULL, "ab"},
    {"--save-build", NULL, "save-build"},
    {"--results-dir", NULL, "results-dir"},
    {"--seed", NULL, "seed"},
    {"--json", NULL, NULL},
    {"--csv", NULL, NULL},
    {"--markdown", NULL, NULL},
    {"--gbench-json", NULL, NULL},
    {"--html", NULL, NULL},
};

static const char **file_slot(dkb_options *o, const char *lng)
{
    if (strcmp(lng, "--json") == 0)
        return &o->json;
    if (strcmp(lng, "--csv") == 0)
        return &o->csv;
    if (strcmp(lng, "--markdown") == 0)
        return &o->markdown;
    if (strcmp(lng, "--gbench-json") == 0)
        return &o->gbench;
    return &o->html;
}

int dkb_options_parse(dkb_options *o, int argc, char **argv)
{
    const char *prog = argc > 0 && argv[0] ? argv[0] : "dkbench";
    memset(o, 0, sizeof *o);
    dkb_config_defaults(&o->cfg);
    o->noise = 0.01;
    o->processes = DKB_DEFAULT_PROCESSES;
    o->results_dir = DK_BENCH_RESULTS_DIR;
    o->events = default_events;
    snprintf(o->events_from, sizeof o->events_from, "events");
    snprintf(o->filter_from, sizeof o->filter_from, "the filter");
    for (size_t i = 0; i < sizeof env_keys / sizeof env_keys[0]; i++) {
        const char *v = getenv(env_keys[i].env);
        if (v != NULL && v[0] != '\0') {
            int rc = apply(o, prog, env_keys[i].env, env_keys[i].key, v);
            if (rc != 0)
                return rc;
        }
    }
    const char *q = getenv("DKBENCH_QUIET");
    o->quiet = q != NULL && strcmp(q, "1") == 0;
    bool filter_given = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf(usage, prog);
            return -1;
        }
        if (strcmp(a, "--list") == 0) {
            o->list = true;
            continue;
        }
        if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = true;
            continue;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            o->verbose = true;
            continue;
        }
        if (strcmp(a, "--compare") == 0) {
            o->compare = true;
            continue;
        }
        if (strcmp(a, "--p-cores") == 0) {
            o->p_cores = true;
            continue;
        }
        int gb = dkb_gbench_flag(o, prog, a);
        if (gb == 0)
            continue;
        if (gb != DKB_GBENCH_NOT_A_FLAG)
            return gb;
        bool matched = false;
        for (size_t k = 0; k < sizeof value_opts / sizeof value_opts[0] && !matched; k++) {
            const char *lng = value_opts[k].lng, *value = NULL;
            size_t len = strlen(lng);
            if (strcmp(a, lng) == 0 || (value_opts[k].shrt && strcmp(a, value_opts[k].shrt) == 0)) {
                if (i + 1 >= argc) {
                    dkb_say("%s: option %s needs a value (see --help)", prog, a);
                    return 2;
                }
                value = argv[++i];
            } else if (strncmp(a, lng, len) == 0 && a[len] == '=') {
                value = a + len + 1;
            } else {
                continue;
            }
            matched = true;
            if (value_opts[k].key == NULL) {
                *file_slot(o, lng) = value;
            } else {
                char what[64];
                snprintf(what, sizeof what, "option %s", lng);
                int rc = apply(o, prog, what, value_opts[k].key, value);
                if (rc != 0)
                    return rc;
            }
        }
        if (matched)
            continue;
        if (a[0] == '-' && a[1] != '\0') {
            dkb_say("%s: unknown option '%s' (see --help)", prog, a);
            return 2;
        }
        if (filter_given) {
            dkb_say("%s: one name filter only, got '%s' after '%s'", prog, a, o->filter);
            return 2;
        }
        o->filter = a;
        snprintf(o->filter_from, sizeof o->filter_from, "the filter");
        filter_given = true;
    }
    if (filter_given && o->gb.filter != NULL) {
        dkb_say("%s: one name filter only, got '%s' and --benchmark_filter=%s", prog, o->filter,
                o->gb.filter);
        return 2;
    }
    int rc = dkb_gbench_apply(o, prog);
    if (rc != 0)
        return rc;
    if (o->cfg.samples != 0 && o->cfg.samples > o->cfg.max_samples)
        o->cfg.max_samples = o->cfg.samples;
    /* External bodies: --samples runs, else the time budget's worth;
     * --benchmark_min_time=Nx: N runs, one iteration each. */
    o->cfg.runs = o->cfg.iterations != 0 ? (size_t)o->cfg.iterations : o->cfg.samples;
    o->cfg.run_time = o->cfg.time_budget;
    return 0;
}

int dkb_split_events(const char *prog, const char *what, const char *list, char *buf,
                     const char **names)
{
    int n = 0, rc;
    size_t pos = 0;
    dk_event_spec sp = {.size = sizeof sp};
    while ((rc = dk_event_list_next(list, &pos, &sp)) == 1) {
        if (sp.base_len != sp.len) {
            dkb_say("%s: %s: event '%.*s': a sampling period or frequency (/N, @HZ) has no "
                    "meaning here: every event is counted",
                    prog, what, (int)(sp.len > 64 ? 64 : sp.len), sp.text);
            return -1;
        }
        if (n == DK_MAX_EVENTS) {
            dkb_say("%s: %s: more than %d events", prog, what, DK_MAX_EVENTS);
            return -1;
        }
        buf[sp.offset + sp.len] = '\0'; /* its comma, or the end */
        names[n++] = buf + sp.offset;
    }
    if (rc < 0) {
        dkb_say("%s: %s: %s", prog, what, dk_last_error());
        return -1;
    }
    return n;
}
