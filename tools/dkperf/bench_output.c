/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_output.c - what dkperf bench prints and exports: its results,
 * the comparison with a baseline, the JSON, CSV and Markdown exports (see
 * bench.h and the BENCH section of dkperf(1) for the JSON schema).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "common/text.h"
#include "common/unavailable.h"
#include "common/json.h"

#define BENCH_SCHEMA "dkperf-bench/1" /* the exports' schema */

int bench_add_run(bench_command *cmd, bench_run **slot)
{
    if (cmd->nruns == cmd->cap) {
        size_t cap = cmd->cap ? 2 * cmd->cap : 16;
        bench_run *runs = realloc(cmd->runs, cap * sizeof *runs);
        if (runs == NULL) {
            cli_error("bench", "out of memory for %zu runs of '%s'", cap, cmd->text);
            return EXIT_SETUP;
        }
        cmd->runs = runs;
        cmd->cap = cap;
    }
    *slot = &cmd->runs[cmd->nruns];
    memset(*slot, 0, sizeof **slot);
    return 0;
}

/* The estimate of measure, in the report's units (scale: 1e-9 for a time
 * libdkbench keeps in ns); n 0 when it was not measured. */
static void summary_from(const dk_bench_results *res, size_t index, const char *measure,
                         double scale, summary *s)
{
    memset(s, 0, sizeof *s);
    s->est.size = sizeof s->est;
    if (dk_bench_results_estimate(res, index, measure, &s->est) != 0) {
        memset(&s->est, 0, sizeof s->est);
        return;
    }
    s->n = s->est.n;
    s->mean = s->est.mean * scale;
    s->stddev = s->est.stddev * scale;
    s->median = s->est.median * scale;
    s->min = s->est.min * scale;
    s->max = s->est.max * scale;
    s->mild = s->est.mild;
    s->severe = s->est.severe;
}

void bench_summarize_command(bench_report *r, size_t k, const dk_bench_results *res, size_t index)
{
    bench_command *c = &r->cmd[k];
    summary_from(res, index, "time", 1e-9, &c->wall);
    summary_from(res, index, "user-time", 1e-9, &c->user);
    summary_from(res, index, "system-time", 1e-9, &c->sys);
    for (size_t e = 0; e < r->nev; e++)
        summary_from(res, index, r->ev[e].name, 1, &c->ev[e]);
}

/*
 * How many times larger b's mean is than a's, with the error propagated
 * from the two standard deviations as hyperfine does: r = b/a,
 * sigma_r = r sqrt((sa/a)^2 + (sb/b)^2), from libdkbench's means and
 * deviations. Returns r, sets *sigma; 0 (and *sigma 0) when a's mean is
 * not positive.
 */
static double ratio_of(const summary *a, const summary *b, double *sigma)
{
    *sigma = 0;
    if (a->mean <= 0)
        return 0;
    double r = b->mean / a->mean;
    double ra = a->stddev / a->mean;
    double rb = b->mean != 0 ? b->stddev / b->mean : 0;
    *sigma = fabs(r) * sqrt(ra * ra + rb * rb);
    return r;
}

/* ---- formatting ---- */

/* The unit hyperfine would choose for a time of about t seconds. */
static double time_scale(double t, const char **unit)
{
    if (t < 1e-6) {
        *unit = "ns";
        return 1e9;
    }
    if (t < 1e-3) {
        *unit = "µs";
        return 1e6;
    }
    if (t < 1) {
        *unit = "ms";
        return 1e3;
    }
    *unit = "s";
    return 1;
}

static const char *fmt_time(double t, double scale, const char *unit, char *buf, size_t size)
{
    snprintf(buf, size, "%.1f %s", t * scale, unit);
    return buf;
}

const char *bench_fmt_time(double t, char *buf, size_t size)
{
    const char *unit;
    double scale = time_scale(t, &unit);
    return fmt_time(t, scale, unit, buf, size);
}

/* A count, or for an event in ns a time in the unit of ref (ns). */
static const char *fmt_value(const bench_event *e, double v, double ref, int decimals, char *buf,
                             size_t size)
{
    if (e->time) {
        const char *unit;
        double scale = time_scale(ref * 1e-9, &unit);
        return fmt_time(v * 1e-9, scale, unit, buf, size);
    }
    /* Counts in the thousands and above need no fraction to be read. */
    return fmt_fixed(v, ref >= 1000 ? 0 : decimals, buf, size);
}

/* Print s padded to width columns (UTF-8: one column a code point). */
static void cell(FILE *out, const char *s, int width)
{
    size_t cols = dk__utf8_columns(s);
    fputs(s, out);
    fputs(cols < (size_t)width ? "" : "  ", out); /* a wide cell still has its gap */
    for (; cols < (size_t)width; cols++)
        fputc(' ', out);
}

static void outliers_cell(FILE *out, const summary *s)
{
    fprintf(out, "%zu mild, %zu severe", s->mild, s->severe);
}

static void time_row(FILE *out, const char *label, const summary *s)
{
    const char *unit;
    double scale = time_scale(s->mean, &unit);
    char a[64], b[64], c[64], row[192];
    fputs("  ", out);
    cell(out, label, 16);
    if (s->n == 1) { /* one run: its value; no spread, no outliers to speak of */
        fprintf(out, "%s\n", fmt_time(s->mean, scale, unit, a, sizeof a));
        return;
    }
    snprintf(row, sizeof row, "%s ± %s", fmt_time(s->mean, scale, unit, a, sizeof a),
             fmt_time(s->stddev, scale, unit, b, sizeof b));
    cell(out, row, 26);
    cell(out, fmt_time(s->median, scale, unit, a, sizeof a), 14);
    snprintf(row, sizeof row, "%s … %s", fmt_time(s->min, scale, unit, b, sizeof b),
             fmt_time(s->max, scale, unit, c, sizeof c));
    cell(out, row, 26);
    outliers_cell(out, s);
    fputc('\n', out);
}

static void event_row(FILE *out, const bench_event *e, const summary *s)
{
    char a[64], b[64], c[64], row[192];
    fputs("  ", out);
    cell(out, e->name, 16);
    if (!e->supported) {
        fputs("<not supported>\n", out);
        return;
    }
    if (s->n == 0) {
        fputs("<not counted>\n", out);
        return;
    }
    if (s->n == 1) {
        fprintf(out, "%s\n", fmt_value(e, s->mean, s->mean, 1, a, sizeof a));
        return;
    }
    snprintf(row, sizeof row, "%s ± %s", fmt_value(e, s->mean, s->mean, 1, a, sizeof a),
             fmt_value(e, s->stddev, s->mean, 1, b, sizeof b));
    cell(out, row, 26);
    cell(out, fmt_value(e, s->median, s->mean, 1, a, sizeof a), 14);
    snprintf(row, sizeof row, "%s … %s", fmt_value(e, s->min, s->mean, 0, b, sizeof b),
             fmt_value(e, s->max, s->mean, 0, c, sizeof c));
    cell(out, row, 26);
    outliers_cell(out, s);
    fputc('\n', out);
}

/* ---- baselines ---- */

static const char *verdict_word(dk_bench_verdict v)
{
    return v == DK_BENCH_REGRESSED      ? "regressed"
           : v == DK_BENCH_IMPROVED     ? "improved"
           : v == DK_BENCH_WITHIN_NOISE ? "within noise"
           : v == DK_BENCH_UNRESOLVED   ? "unresolved"
                                        : "no change";
}

/* libdkbench's change of the median against the baseline's, with its
 * interval and p-value, or why there is none. */
static void change_row(FILE *out, const char *label, const summary *now)
{
    fputs("    ", out);
    cell(out, label, 16);
    const dk_bench_estimate *e = &now->est;
    if (!e->has_change) {
        fputs("not compared: ", out);
        dk__put_untrusted(out,
                          e->no_change != NULL && e->no_change[0] ? e->no_change : "no estimate");
        fputc('\n', out);
        return;
    }
    fprintf(out, "%+.1f%% [%+.1f%%, %+.1f%%]  p = %.3f  %s\n", 100 * e->change, 100 * e->change_lo,
            100 * e->change_hi, e->p_value, verdict_word(e->verdict));
}

static void print_baseline(FILE *out, const bench_report *r, const bench_command *c)
{
    fprintf(out, "  Baseline '%s':", r->o->baseline);
    if (c->wall.est.not_in_baseline) {
        fputs(" no result for this command\n", out);
        return;
    }
    fputc('\n', out);
    change_row(out, "wall time", &c->wall);
    for (size_t e = 0; e < r->nev; e++) {
        if (!r->ev[e].supported || c->ev[e].n == 0)
            continue;
        change_row(out, r->ev[e].name, &c->ev[e]);
    }
}

/* A name (-n, a command line, parameter values: any bytes), escaped as
 * untrusted text, then the report's own words. */
static void put_name(FILE *out, const char *name, const char *then)
{
    dk__put_untrusted(out, name);
    fputs(then, out);
}

/* The commands of one side that the other lacks: a comparison that covers
 * fewer commands than it seems to would mislead. */
static void print_unmatched(FILE *out, const bench_report *r, const dk_bench_results *base)
{
    size_t nb = dk_bench_results_baseline_count(base);
    bool any = false;
    for (size_t k = 0; k < r->ncmd; k++) {
        bool found = false;
        for (size_t i = 0; i < nb && !found; i++)
            found = strcmp(dk_bench_results_baseline_name(base, i), r->cmd[k].name) == 0;
        if (found)
            continue;
        if (any)
            fputs(", '", out);
        else
            fprintf(out, "\nNot in baseline '%s': '", r->o->baseline);
        put_name(out, r->cmd[k].text, "'");
        any = true;
    }
    if (any)
        fputc('\n', out);
    bool first = true;
    for (size_t i = 0; i < nb; i++) {
        const char *name = dk_bench_results_baseline_name(base, i);
        bool ran = false;
        for (size_t k = 0; k < r->ncmd && !ran; k++)
            ran = strcmp(r->cmd[k].name, name) == 0;
        if (ran)
            continue;
        if (first)
            fprintf(out, "%sIn baseline '%s' but not run: '", any ? "" : "\n", r->o->baseline);
        else
            fputs(", '", out);
        dk__put_untrusted(out, name);
        fputc('\'', out);
        first = false;
    }
    if (!first)
        fputc('\n', out);
}

/* ---- the report ---- */

static void print_comparisons(FILE *out, const bench_report *r)
{
    size_t best = 0;
    for (size_t k = 1; k < r->ncmd; k++)
        if (r->cmd[k].wall.mean < r->cmd[best].wall.mean)
            best = k;
    fputs("\nSummary\n  '", out);
    put_name(out, r->cmd[best].text, "' ran\n");
    for (size_t k = 0; k < r->ncmd; k++) {
        if (k == best)
            continue;
        double sigma, ratio = ratio_of(&r->cmd[best].wall, &r->cmd[k].wall, &sigma);
        if (r->cmd[best].wall.n < 2 || r->cmd[k].wall.n < 2) /* one run has no spread */
            fprintf(out, "    %.2f times faster than '", ratio);
        else
            fprintf(out, "    %.2f ± %.2f times faster than '", ratio, sigma);
        put_name(out, r->cmd[k].text, "'\n");
    }
    for (size_t e = 0; e < r->nev; e++) {
        if (!r->ev[e].instructions || !r->ev[e].supported)
            continue;
        bool all = true;
        for (size_t k = 0; k < r->ncmd; k++)
            all = all && r->cmd[k].ev[e].n > 0 && r->cmd[k].ev[e].mean > 0;
        if (!all)
            continue;
        best = 0;
        for (size_t k = 1; k < r->ncmd; k++)
            if (r->cmd[k].ev[e].mean < r->cmd[best].ev[e].mean)
                best = k;
        fputs("  '", out);
        put_name(out, r->cmd[best].text, "' retired\n");
        for (size_t k = 0; k < r->ncmd; k++) {
            if (k == best)
                continue;
            double sigma, ratio = ratio_of(&r->cmd[best].ev[e], &r->cmd[k].ev[e], &sigma);
            if (r->cmd[best].ev[e].n < 2 || r->cmd[k].ev[e].n < 2)
                fprintf(out, "    %.2f times fewer %s than '", ratio, r->ev[e].name);
            else
                fprintf(out, "    %.2f ± %.2f times fewer %s than '", ratio, sigma, r->ev[e].name);
            put_name(out, r->cmd[k].text, "'\n");
        }
        break;
    }
}

void bench_print_command(FILE *out, const bench_report *r, size_t k)
{
    const bench_command *c = &r->cmd[k];
    if (k > 0)
        fputc('\n', out);
    /* As hyperfine: the parameters the command line does not show. */
    fprintf(out, "Benchmark %zu: ", k + 1);
    if (c->bcase != NULL && c->bcase->unused != NULL) {
        put_name(out, c->text, " (");
        put_name(out, c->bcase->unused, ")\n");
    } else {
        put_name(out, c->text, "\n");
    }
    fputs("  ", out);
    cell(out, "", 16);
    if (c->nruns == 1) {
        fputs("value\n", out);
    } else {
        cell(out, "mean ± σ", 26);
        cell(out, "median", 14);
        cell(out, "min … max", 26);
        fputs("outliers\n", out);
    }
    time_row(out, "wall time", &c->wall);
    for (size_t e = 0; e < r->nev; e++)
        event_row(out, &r->ev[e], &c->ev[e]);
    const char *unit;
    double scale = time_scale(c->user.mean > c->sys.mean ? c->user.mean : c->sys.mean, &unit);
    char a[64], b[64];
    if (c->nruns == 1)
        fprintf(out, "  1 run; user %s, system %s\n",
                fmt_time(c->user.mean, scale, unit, a, sizeof a),
                fmt_time(c->sys.mean, scale, unit, b, sizeof b));
    else
        fprintf(out, "  %zu runs; user %s, system %s (means)\n", c->nruns,
                fmt_time(c->user.mean, scale, unit, a, sizeof a),
                fmt_time(c->sys.mean, scale, unit, b, sizeof b));
    /* With -i, failed runs are measured too: say so, as hyperfine warns. */
    size_t failed = 0;
    int first = 0;
    for (size_t i = 0; i < c->nruns; i++)
        if (c->runs[i].status != 0 && failed++ == 0)
            first = c->runs[i].status;
    if (failed > 0)
        fprintf(out,
                "  warning: %zu of %zu runs exited non-zero (the first with status %d), "
                "ignored with -i\n",
                failed, c->nruns, first);
    if (c->strays)
        fputs("  warning: it left processes running after it exited; the counts of the runs "
              "that followed include them\n",
              out);
    else if (c->stray_counted)
        fputs("  warning: processes an earlier command left running ran during its runs; its "
              "counts include them\n",
              out);
    if (r->o->baseline != NULL)
        print_baseline(out, r, c);
    fflush(out);
}

void bench_print_end(FILE *out, const bench_report *r, const dk_bench_results *baseline,
                     bool complete)
{
    if (r->ncmd == 0)
        return;
    if (complete && baseline != NULL)
        print_unmatched(out, r, baseline);
    if (complete && r->ncmd > 1)
        print_comparisons(out, r);
    fprintf(out, "\nCounted with the %s backend; the first run: %s.\n", r->backend, r->scope);
    /* Each reason once, naming its events. */
    const char *names[DK_MAX_EVENTS], *why[DK_MAX_EVENTS];
    for (size_t e = 0; e < r->nev; e++) {
        names[e] = r->ev[e].name;
        why[e] = r->ev[e].supported ? NULL : r->ev[e].why;
    }
    dk__put_unavailable(out, r->nev, names, why, "", "\n", dk__put_untrusted);
}

/* ---- exports ---- */

static void json_summary(FILE *f, const summary *s)
{
    static const char *const names[] = {"mean", "stddev", "median", "min", "max"};
    const double v[] = {s->mean, s->stddev, s->median, s->min, s->max};
    for (size_t j = 0; j < 5; j++)
        dk__json_number_member(f, j ? ", " : "", names[j], ": ", v[j]);
    fprintf(f, ", \"outliers\": {\"mild\": %zu, \"severe\": %zu}", s->mild, s->severe);
}

/* libdkbench's change of a median against the baseline, null when none. */
static void json_change(FILE *f, const summary *s)
{
    const dk_bench_estimate *e = &s->est;
    if (!e->has_change) {
        fputs("null", f);
        return;
    }
    dk__json_number_member(f, "{", "relative", ": ", e->change);
    dk__json_number_member(f, ", ", "lo", ": ", e->change_lo);
    dk__json_number_member(f, ", ", "hi", ": ", e->change_hi);
    dk__json_number_member(f, ", ", "p_value", ": ", e->p_value);
    fprintf(f, ", \"verdict\": \"%s\"}", verdict_word(e->verdict));
}

static void write_json(FILE *f, const bench_report *r)
{
    fprintf(f, "{\n  \"schema\": \"%s\"", BENCH_SCHEMA);
    dk__json_string_member(f, ",\n  ", "backend", ": ", r->backend);
    dk__json_string_member(f, ",\n  ", "scope", ": ", r->scope);
    dk__json_string_member(f, ",\n  ", "shell", ": ", r->o->shell);
    fprintf(f, ",\n  \"warmup\": %ld,\n  \"events\": [", r->o->warmup);
    for (size_t e = 0; e < r->nev; e++) {
        dk__json_string_member(f, e ? ",\n    {" : "\n    {", "name", ": ", r->ev[e].name);
        dk__json_string_member(f, ", ", "native", ": ", r->ev[e].native);
        fprintf(f,
                ", \"unit\": %s, \"supported\": %s, \"why\": ", r->ev[e].time ? "\"ns\"" : "null",
                r->ev[e].supported ? "true" : "false");
        dk__json_string(f, r->ev[e].why);
        fputc('}', f);
    }
    fputs(r->nev ? "\n  ],\n  \"results\": [" : "],\n  \"results\": [", f);
    for (size_t k = 0; k < r->ncmd; k++) {
        const bench_command *c = &r->cmd[k];
        fputs(k ? ",\n    {\n      \"command\": " : "\n    {\n      \"command\": ", f);
        dk__json_string(f, c->text);
        fputs(",\n      \"argv\": [", f);
        for (size_t i = 0; c->argv[i] != NULL; i++) {
            if (i)
                fputs(", ", f);
            dk__json_string(f, c->argv[i]);
        }
        fprintf(f, "],\n      \"runs\": %zu,\n      ", c->nruns);
        json_summary(f, &c->wall);
        dk__json_number_member(f, ",\n      ", "user", ": ", c->user.mean);
        dk__json_number_member(f, ", ", "system", ": ", c->sys.mean);
        fputs(",\n      \"times\": [", f);
        for (size_t i = 0; i < c->nruns; i++) {
            if (i)
                fputs(", ", f);
            dk__json_number(f, c->runs[i].wall);
        }
        fputs("],\n      \"exit_codes\": [", f);
        for (size_t i = 0; i < c->nruns; i++)
            fprintf(f, i ? ", %d" : "%d", c->runs[i].status);
        fputc(']', f);
        if (c->bcase != NULL && c->bcase->nparams > 0) { /* as hyperfine's, when there are any */
            fputs(",\n      \"parameters\": ", f);
            bench_case_json(f, c->bcase);
        }
        fputs(",\n      \"counters\": [", f);
        for (size_t e = 0; e < r->nev; e++) {
            const summary *s = &c->ev[e];
            size_t counted = 0;
            for (size_t i = 0; i < c->nruns; i++)
                counted += c->runs[i].counted[e];
            dk__json_string_member(f, e ? ",\n        {" : "\n        {", "name", ": ",
                                   r->ev[e].name);
            fprintf(f, ", \"counted_runs\": %zu, ", counted);
            if (s->n > 0)
                json_summary(f, s);
            else
                fputs("\"mean\": null, \"stddev\": null, \"median\": null, \"min\": null, "
                      "\"max\": null, \"outliers\": null",
                      f);
            fputs(",\n         \"values\": [", f);
            for (size_t i = 0; i < c->nruns; i++) {
                if (i)
                    fputs(", ", f);
                if (c->runs[i].counted[e])
                    fprintf(f, "%" PRIu64, c->runs[i].values[e]);
                else
                    fputs("null", f);
            }
            fputs("]}", f);
        }
        fputs(r->nev ? "\n      ]" : "]", f);
        if (r->o->baseline != NULL) {
            fputs(",\n      \"change\": {\"time\": ", f);
            json_change(f, &c->wall);
            for (size_t e = 0; e < r->nev; e++) {
                dk__json_key(f, ", ", r->ev[e].name, ": ");
                json_change(f, &c->ev[e]);
            }
            fputc('}', f);
        }
        fputs("\n    }", f);
    }
    fputs(r->ncmd ? "\n  ]\n}\n" : "]\n}\n", f);
}

/* A CSV field (prefix NULL) or header (prefix and s): as hyperfine's,
 * control characters kept as they are (a line break quoted); UTF-8 as the
 * JSON is, a byte that is not becomes U+FFFD, one per byte. */
static void csv_field(FILE *f, const char *prefix, const char *s)
{
    dk__put_csv(f, prefix, s, false);
}

static void write_csv(FILE *f, const bench_report *r)
{
    static const char *const cols[] = {"mean", "stddev", "median", "min", "max"};
    fputs("command,mean,stddev,median,user,system,min,max", f);
    for (size_t e = 0; e < r->nev; e++)
        for (size_t j = 0; j < 5; j++) {
            char name[192];
            snprintf(name, sizeof name, "%s_%s", r->ev[e].name, cols[j]);
            fputc(',', f);
            csv_field(f, NULL, name);
        }
    /* hyperfine's parameter_NAME columns (the same in every row). */
    size_t np = r->cmd[0].bcase != NULL ? r->cmd[0].bcase->nparams : 0;
    for (size_t j = 0; j < np; j++) {
        fputc(',', f);
        csv_field(f, "parameter_", r->cmd[0].bcase->params[j]);
    }
    fputc('\n', f);
    for (size_t k = 0; k < r->ncmd; k++) {
        const bench_command *c = &r->cmd[k];
        csv_field(f, NULL, c->text);
        const double w[] = {c->wall.mean, c->wall.stddev, c->wall.median, c->user.mean,
                            c->sys.mean,  c->wall.min,    c->wall.max};
        for (size_t j = 0; j < sizeof w / sizeof w[0]; j++)
            fprintf(f, ",%.9g", w[j]);
        for (size_t e = 0; e < r->nev; e++) {
            const summary *s = &c->ev[e];
            const double v[] = {s->mean, s->stddev, s->median, s->min, s->max};
            for (size_t j = 0; j < 5; j++)
                if (s->n > 0)
                    fprintf(f, ",%.17g", v[j]);
                else
                    fputc(',', f);
        }
        for (size_t j = 0; j < np; j++) {
            fputc(',', f);
            csv_field(f, NULL, c->bcase->values[j]);
        }
        fputc('\n', f);
    }
}

/* A table cell: escaped as untrusted text (a control byte would drive the
 * terminal that shows the file, a line break would end the row), '|' as
 * \| so that it does not end the cell. */
static void md_text(FILE *f, const char *s)
{
    char small[256], *text = small;
    size_t need = dk__untrusted(small, sizeof small, s);
    if (need >= sizeof small && (text = malloc(need + 1)) != NULL)
        dk__untrusted(text, need + 1, s);
    else if (text == NULL)
        text = small; /* out of memory: the text cut */
    for (const char *p = text; *p != '\0'; p++) {
        if (*p == '|')
            fputc('\\', f);
        fputc(*p, f);
    }
    if (text != small)
        free(text);
}

static void write_markdown(FILE *f, const bench_report *r)
{
    size_t best = 0;
    for (size_t k = 1; k < r->ncmd; k++)
        if (r->cmd[k].wall.mean < r->cmd[best].wall.mean)
            best = k;
    const char *unit;
    double scale = time_scale(r->cmd[best].wall.mean, &unit);
    fprintf(f, "| Command | Mean [%s] | Min [%s] | Max [%s] | Relative |", unit, unit, unit);
    for (size_t e = 0; e < r->nev; e++) {
        fputc(' ', f);
        md_text(f, r->ev[e].name);
        fputs(" |", f);
    }
    size_t np = r->cmd[0].bcase != NULL ? r->cmd[0].bcase->nparams : 0;
    for (size_t j = 0; j < np; j++) { /* a column per parameter, {NAME} */
        fputs(" {", f);
        md_text(f, r->cmd[0].bcase->params[j]);
        fputs("} |", f);
    }
    fputs("\n|:---|---:|---:|---:|---:|", f);
    for (size_t e = 0; e < r->nev; e++)
        fputs("---:|", f);
    for (size_t j = 0; j < np; j++)
        fputs("---:|", f);
    fputc('\n', f);
    for (size_t k = 0; k < r->ncmd; k++) {
        const bench_command *c = &r->cmd[k];
        double sigma, ratio = ratio_of(&r->cmd[best].wall, &c->wall, &sigma);
        fputs("| `", f);
        md_text(f, c->text);
        fprintf(f, "` | %.1f ± %.1f | %.1f | %.1f | ", c->wall.mean * scale, c->wall.stddev * scale,
                c->wall.min * scale, c->wall.max * scale);
        if (k == best)
            fputs("1.00 |", f);
        else
            fprintf(f, "%.2f ± %.2f |", ratio, sigma);
        for (size_t e = 0; e < r->nev; e++) {
            char a[64], b[64];
            if (c->ev[e].n == 0)
                fputs(" – |", f);
            else
                fprintf(f, " %s ± %s |",
                        fmt_value(&r->ev[e], c->ev[e].mean, c->ev[e].mean, 1, a, sizeof a),
                        fmt_value(&r->ev[e], c->ev[e].stddev, c->ev[e].mean, 1, b, sizeof b));
        }
        for (size_t j = 0; j < np; j++) {
            fputc(' ', f);
            md_text(f, c->bcase->values[j]);
            fputs(" |", f);
        }
        fputc('\n', f);
    }
}

/* ---- the files written: opened before the first run, written at the end ---- */

static void (*const writers[])(FILE *, const bench_report *) = {write_json, write_csv,
                                                                write_markdown};

int bench_exports_open(bench_export *x, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        x[k].f = NULL;
        x[k].created = false;
    }
    for (size_t k = 0; k < n; k++) {
        if (x[k].path == NULL)
            continue;
        bool out = strcmp(x[k].path, "-") == 0;
        struct stat st;
        bool exists = !out && stat(x[k].path, &st) == 0;
        /* Two exports to one file would leave only the last: refused, as
         * is a directory, before anything is run. */
        for (size_t j = 0; j < k; j++) {
            if (x[j].f == NULL)
                continue;
            struct stat sj;
            bool same = out ? x[j].f == stdout
                            : exists && x[j].f != stdout && fstat(fileno(x[j].f), &sj) == 0 &&
                                  sj.st_dev == st.st_dev && sj.st_ino == st.st_ino;
            if (same) {
                cli_error("bench", "%s %s and %s %s: the same file (give each export its own)",
                          x[j].option, x[j].path, x[k].option, x[k].path);
                return EXIT_USAGE;
            }
        }
        if (out) {
            x[k].f = stdout;
            continue;
        }
        if (exists && S_ISDIR(st.st_mode)) {
            cli_error("bench", "%s %s: cannot write %s: %s", x[k].option, x[k].path, x[k].path,
                      strerror(EISDIR));
            return EXIT_SETUP;
        }
        x[k].f = fopen(x[k].path, "w");
        if (x[k].f == NULL) {
            cli_error("bench", "%s %s: cannot write %s: %s", x[k].option, x[k].path, x[k].path,
                      strerror(errno));
            return EXIT_SETUP;
        }
        x[k].created = !exists;
    }
    return 0;
}

int bench_exports_finish(bench_export *x, size_t n, const bench_report *r)
{
    int rc = 0;
    for (size_t k = 0; k < n; k++) {
        if (x[k].f == NULL)
            continue;
        if (r != NULL && r->ncmd > 0 && x[k].kind < sizeof writers / sizeof writers[0])
            writers[x[k].kind](x[k].f, r);
        if (x[k].f == stdout) {
            if (fflush(stdout) != 0 || ferror(stdout))
                rc = EXIT_SETUP; /* said by main, as any write error on standard output */
            x[k].f = NULL;
            continue;
        }
        bool bad = ferror(x[k].f) != 0;
        errno = 0;
        if (fclose(x[k].f) != 0 || bad) {
            cli_error("bench", "%s %s: cannot write %s: %s", x[k].option, x[k].path, x[k].path,
                      errno ? strerror(errno) : "write error");
            rc = EXIT_SETUP;
        }
        x[k].f = NULL;
        /* Nothing to export (the first command failed): a file made for it
         * would be an empty, invalid document. */
        if ((r == NULL || r->ncmd == 0) && x[k].created)
            unlink(x[k].path);
    }
    return rc;
}

int bench_check_old_baseline(const bench_options *o)
{
    if (o->baseline == NULL || strcmp(o->results_dir, BENCH_DEFAULT_DIR) != 0)
        return 0;
    char now[4096], old[4096];
    struct stat st;
    snprintf(now, sizeof now, "%s/%s.json", BENCH_DEFAULT_DIR, o->baseline);
    snprintf(old, sizeof old, "%s/%s.json", BENCH_OLD_DIR, o->baseline);
    if (stat(now, &st) == 0 || stat(old, &st) != 0)
        return 0;
    cli_error("bench",
              "--baseline %s: %s does not exist, but %s does: an older dkperf bench "
              "kept its baselines there; read it with --results-dir %s, or move it to "
              "%s/ (or save it again with --save-baseline %s)",
              o->baseline, now, old, BENCH_OLD_DIR, BENCH_DEFAULT_DIR, o->baseline);
    return EXIT_SETUP;
}
