/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_report.c - dkperf bench's report, exports and baselines (see
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

#define BENCH_SCHEMA "dkperf-bench/1"

int bench_summarize_command(bench_report *r, size_t k)
{
    bench_command *c = &r->cmd[k];
    double *v = malloc((c->nruns ? c->nruns : 1) * sizeof *v);
    if (v == NULL)
        return -1;
    int rc = 0;
    double *fields[3] = {&c->runs[0].wall, &c->runs[0].user, &c->runs[0].sys};
    summary *out[3] = {&c->wall, &c->user, &c->sys};
    for (int f = 0; rc == 0 && f < 3 && c->nruns > 0; f++) {
        size_t off = (size_t)((char *)fields[f] - (char *)&c->runs[0]);
        for (size_t i = 0; i < c->nruns; i++)
            v[i] = *(double *)((char *)&c->runs[i] + off);
        rc = summary_of(v, c->nruns, out[f]);
    }
    for (size_t e = 0; rc == 0 && e < r->nev; e++) {
        size_t m = 0;
        for (size_t i = 0; i < c->nruns; i++)
            if (c->runs[i].counted[e])
                v[m++] = (double)c->runs[i].values[e];
        rc = summary_of(v, m, &c->ev[e]);
    }
    free(v);
    return rc;
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
    int cols = 0;
    for (const char *p = s; *p != '\0'; p++)
        if (((unsigned char)*p & 0xc0) != 0x80)
            cols++;
    fputs(s, out);
    fputs(cols < width ? "" : "  ", out); /* a wide cell still has its gap */
    for (; cols < width; cols++)
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

static const dk_json *baseline_result(const dk_json *root, const char *command)
{
    const dk_json *results = dk__json_get(root, "results");
    if (results == NULL || results->type != DK_JSON_ARR)
        return NULL;
    for (size_t i = 0; i < results->n; i++) {
        const dk_json *c = dk__json_get(&results->kids[i], "command");
        if (c != NULL && c->type == DK_JSON_STR && strcmp(c->str, command) == 0)
            return &results->kids[i];
    }
    return NULL;
}

/* The number obj holds at key; *ok false when it holds none, and *bad then
 * names the first member that is there but is not a number. */
static double number_of(const dk_json *obj, const char *key, bool *ok, const char **bad)
{
    const dk_json *v = dk__json_get(obj, key);
    if (v == NULL || v->type != DK_JSON_NUM) {
        if (v != NULL && v->type != DK_JSON_NULL && *bad == NULL) /* null: never counted */
            *bad = key;
        *ok = false;
        return 0;
    }
    return v->num;
}

/* The summary a baseline kept: mean, stddev, n. false when a member is
 * missing, or is not what a run gives (a count of runs that is not a whole
 * number from 0 to 10^9, a negative or non-finite mean or spread); *bad
 * then names it. */
static bool baseline_summary(const dk_json *obj, const char *nkey, summary *s, const char **bad)
{
    bool ok = true;
    memset(s, 0, sizeof *s);
    *bad = NULL;
    if (obj->type != DK_JSON_OBJ) {
        *bad = "not an object";
        return false;
    }
    s->mean = number_of(obj, "mean", &ok, bad);
    s->stddev = number_of(obj, "stddev", &ok, bad);
    double n = number_of(obj, nkey, &ok, bad);
    if (!ok)
        return false;
    if (!(n >= 0 && n <= 1e9 && n == floor(n)))
        *bad = nkey;
    else if (!(s->mean >= 0 && isfinite(s->mean)))
        *bad = "mean";
    else if (!(s->stddev >= 0 && isfinite(s->stddev)))
        *bad = "stddev";
    if (*bad != NULL)
        return false;
    s->n = (size_t)n;
    return true;
}

static void change_row(FILE *out, const char *label, const summary *base, const summary *now)
{
    double pct;
    summary_verdict v = summary_change(base, now, &pct);
    const char *verdict = v == SUMMARY_INCREASED   ? "regressed"
                          : v == SUMMARY_DECREASED ? "improved"
                                                   : "within noise";
    fputs("    ", out);
    cell(out, label, 16);
    /* From a mean of 0 a change has no percentage: the two means instead. */
    if (base->mean == 0 && now->mean != 0)
        fprintf(out, "from 0 to %.4g  %s\n", now->mean, verdict);
    else
        fprintf(out, "%+.1f%%  %s\n", pct, verdict);
}

static void print_baseline(FILE *out, const bench_report *r, const bench_command *c,
                           const dk_json *root)
{
    const dk_json *res = baseline_result(root, c->text);
    fprintf(out, "  Baseline '%s':", r->o->baseline);
    summary base;
    const char *bad = NULL;
    if (res == NULL) {
        fputs(" no result for this command\n", out);
        return;
    }
    if (!baseline_summary(res, "runs", &base, &bad)) {
        fprintf(out, " not a valid summary (%s)\n", bad != NULL ? bad : "mean, stddev or runs missing");
        return;
    }
    fputc('\n', out);
    change_row(out, "wall time", &base, &c->wall);
    const dk_json *ctrs = dk__json_get(res, "counters");
    if (ctrs != NULL && ctrs->type != DK_JSON_ARR) {
        fputs("    counters        not a valid list (not an array)\n", out);
        ctrs = NULL;
    }
    for (size_t e = 0; e < r->nev; e++) {
        if (!r->ev[e].supported || c->ev[e].n == 0)
            continue;
        const dk_json *found = NULL;
        for (size_t i = 0; ctrs != NULL && ctrs->type == DK_JSON_ARR && i < ctrs->n; i++) {
            const dk_json *name = dk__json_get(&ctrs->kids[i], "name");
            if (name != NULL && name->type == DK_JSON_STR && strcmp(name->str, r->ev[e].name) == 0)
                found = &ctrs->kids[i];
        }
        if (found == NULL || !baseline_summary(found, "counted_runs", &base, &bad) || base.n == 0) {
            fputs("    ", out);
            cell(out, r->ev[e].name, 16);
            if (bad != NULL)
                fprintf(out, "not a valid summary (%s)\n", bad);
            else
                fputs("not in the baseline\n", out);
            continue;
        }
        change_row(out, r->ev[e].name, &base, &c->ev[e]);
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
static void print_unmatched(FILE *out, const bench_report *r, const dk_json *root)
{
    bool any = false;
    for (size_t k = 0; k < r->ncmd; k++)
        if (baseline_result(root, r->cmd[k].text) == NULL) {
            if (any)
                fputs(", '", out);
            else
                fprintf(out, "\nNot in baseline '%s': '", r->o->baseline);
            put_name(out, r->cmd[k].text, "'");
            any = true;
        }
    if (any)
        fputc('\n', out);
    const dk_json *results = dk__json_get(root, "results");
    bool first = true;
    for (size_t i = 0; results != NULL && results->type == DK_JSON_ARR && i < results->n; i++) {
        const dk_json *c = dk__json_get(&results->kids[i], "command");
        if (c == NULL || c->type != DK_JSON_STR)
            continue;
        bool ran = false;
        for (size_t k = 0; k < r->ncmd && !ran; k++)
            ran = strcmp(r->cmd[k].text, c->str) == 0;
        if (ran)
            continue;
        if (first)
            fprintf(out, "%sIn baseline '%s' but not run: '", any ? "" : "\n", r->o->baseline);
        else
            fputs(", '", out);
        dk__put_untrusted(out, c->str);
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
        double sigma, ratio = summary_ratio(&r->cmd[best].wall, &r->cmd[k].wall, &sigma);
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
            double sigma, ratio = summary_ratio(&r->cmd[best].ev[e], &r->cmd[k].ev[e], &sigma);
            if (r->cmd[best].ev[e].n < 2 || r->cmd[k].ev[e].n < 2)
                fprintf(out, "    %.2f times fewer %s than '", ratio, r->ev[e].name);
            else
                fprintf(out, "    %.2f ± %.2f times fewer %s than '", ratio, sigma,
                        r->ev[e].name);
            put_name(out, r->cmd[k].text, "'\n");
        }
        break;
    }
}

void bench_print_command(FILE *out, const bench_report *r, size_t k, const dk_json *baseline)
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
        fprintf(out, "  warning: %zu of %zu runs exited non-zero (the first with status %d), "
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
    if (baseline != NULL)
        print_baseline(out, r, c, baseline);
    fflush(out);
}

void bench_print_end(FILE *out, const bench_report *r, const dk_json *baseline, bool complete)
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
    fputs("\"mean\": ", f);
    dk__json_number(f, s->mean);
    fputs(", \"stddev\": ", f);
    dk__json_number(f, s->stddev);
    fputs(", \"median\": ", f);
    dk__json_number(f, s->median);
    fputs(", \"min\": ", f);
    dk__json_number(f, s->min);
    fputs(", \"max\": ", f);
    dk__json_number(f, s->max);
    fprintf(f, ", \"outliers\": {\"mild\": %zu, \"severe\": %zu}", s->mild, s->severe);
}

static void write_json(FILE *f, const bench_report *r)
{
    fprintf(f, "{\n  \"schema\": \"%s\",\n  \"backend\": ", BENCH_SCHEMA);
    dk__json_string(f, r->backend);
    fputs(",\n  \"scope\": ", f);
    dk__json_string(f, r->scope);
    fputs(",\n  \"shell\": ", f);
    dk__json_string(f, r->o->shell);
    fprintf(f, ",\n  \"warmup\": %ld,\n  \"events\": [", r->o->warmup);
    for (size_t e = 0; e < r->nev; e++) {
        fputs(e ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        dk__json_string(f, r->ev[e].name);
        fputs(", \"native\": ", f);
        dk__json_string(f, r->ev[e].native);
        fprintf(f, ", \"unit\": %s, \"supported\": %s, \"why\": ", r->ev[e].time ? "\"ns\"" : "null",
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
        fputs(",\n      \"user\": ", f);
        dk__json_number(f, c->user.mean);
        fputs(", \"system\": ", f);
        dk__json_number(f, c->sys.mean);
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
            fputs(e ? ",\n        {\"name\": " : "\n        {\"name\": ", f);
            dk__json_string(f, r->ev[e].name);
            fprintf(f, ", \"counted_runs\": %zu, ", s->n);
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
        fputs(r->nev ? "\n      ]\n    }" : "]\n    }", f);
    }
    fputs(r->ncmd ? "\n  ]\n}\n" : "]\n}\n", f);
}

/* prefix and s as one CSV field, quoted when it must be. The CSV is UTF-8
 * as the JSON is: a byte that is not becomes U+FFFD, one per byte. */
static void csv_cell(FILE *f, const char *prefix, const char *s)
{
    bool quote = strpbrk(prefix, ",\"\n\r") != NULL || strpbrk(s, ",\"\n\r") != NULL;
    if (quote)
        fputc('"', f);
    for (int part = 0; part < 2; part++)
        for (const unsigned char *p = (const unsigned char *)(part ? s : prefix); *p != '\0';) {
            size_t len = dk__utf8_length(p);
            if (len == 0) {
                fputs("\xef\xbf\xbd", f);
                p++;
                continue;
            }
            if (*p == '"')
                fputc('"', f);
            fwrite(p, 1, len, f);
            p += len;
        }
    if (quote)
        fputc('"', f);
}

static void csv_field(FILE *f, const char *s)
{
    csv_cell(f, "", s);
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
            csv_field(f, name);
        }
    /* hyperfine's parameter_NAME columns (the same in every row). */
    size_t np = r->cmd[0].bcase != NULL ? r->cmd[0].bcase->nparams : 0;
    for (size_t j = 0; j < np; j++) {
        fputc(',', f);
        csv_cell(f, "parameter_", r->cmd[0].bcase->params[j]);
    }
    fputc('\n', f);
    for (size_t k = 0; k < r->ncmd; k++) {
        const bench_command *c = &r->cmd[k];
        csv_field(f, c->text);
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
            csv_field(f, c->bcase->values[j]);
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
        double sigma, ratio = summary_ratio(&r->cmd[best].wall, &c->wall, &sigma);
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
                fprintf(f, " %s ± %s |", fmt_value(&r->ev[e], c->ev[e].mean, c->ev[e].mean, 1, a, sizeof a),
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

static int baseline_path(const char *dir, const char *name, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s/%s.json", dir, name);
    if (n < 0 || (size_t)n >= size) {
        cli_error("bench", "the baseline path %s/%s.json is too long", dir, name);
        return EXIT_USAGE;
    }
    return 0;
}

static mode_t current_umask(void)
{
    mode_t m = umask(0);
    umask(m);
    return m;
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

int bench_baseline_begin(bench_baseline_file *b, const char *dir, const char *name)
{
    b->f = NULL;
    b->name = name;
    b->dir = NULL;
    if (baseline_path(dir, name, b->path, sizeof b->path) != 0)
        return EXIT_USAGE;
    int n = snprintf(b->tmp, sizeof b->tmp, "%s.XXXXXX", b->path);
    if (n < 0 || (size_t)n >= sizeof b->tmp) {
        cli_error("bench", "the baseline path %s is too long", b->path);
        return EXIT_USAGE;
    }
    if (mkdir(dir, 0777) == 0) {
        b->dir = dir; /* made here: removed again if nothing is saved in it */
    } else if (errno != EEXIST) {
        cli_error("bench", "--save-baseline %s: cannot create the directory %s: %s", name, dir,
                  strerror(errno));
        return EXIT_SETUP;
    }
    /* Written beside it and renamed over it once every command ran: a
     * benchmark that fails leaves the baseline it had. */
    int fd = mkstemp(b->tmp);
    if (fd < 0 || (b->f = fdopen(fd, "w")) == NULL) {
        cli_error("bench", "--save-baseline %s: cannot write in %s: %s", name, dir,
                  strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(b->tmp);
        }
        if (b->dir != NULL)
            rmdir(b->dir);
        return EXIT_SETUP;
    }
    return 0;
}

int bench_baseline_finish(bench_baseline_file *b, const bench_report *r)
{
    if (b->f == NULL)
        return 0;
    if (r != NULL)
        write_json(b->f, r);
    bool bad = ferror(b->f) != 0 || fchmod(fileno(b->f), 0666 & ~current_umask()) != 0;
    int why = bad ? errno : 0;
    int rc = 0;
    errno = 0;
    if (fclose(b->f) != 0 || bad) {
        if (why == 0)
            why = errno;
        if (r != NULL)
            cli_error("bench", "--save-baseline %s: cannot write %s: %s", b->name, b->tmp,
                      why ? strerror(why) : "write error");
        rc = EXIT_SETUP;
    }
    b->f = NULL;
    if (r != NULL && rc == 0 && rename(b->tmp, b->path) != 0) {
        cli_error("bench", "--save-baseline %s: cannot write %s: %s", b->name, b->path,
                  strerror(errno));
        rc = EXIT_SETUP;
    }
    if (r == NULL || rc != 0) {
        unlink(b->tmp);
        /* A run cut short leaves no empty results directory behind
         * (rmdir removes only an empty one: another baseline stays). */
        if (b->dir != NULL)
            rmdir(b->dir);
    }
    return rc;
}

dk_json *bench_load_baseline(const char *dir, const char *name)
{
    char path[4096];
    if (baseline_path(dir, name, path, sizeof path) != 0)
        return NULL;
    /* Non-blocking, so that opening a pipe with no writer does not hang. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        cli_error("bench", "--baseline %s: cannot read %s: %s (save one with --save-baseline %s)",
                  name, path, strerror(errno), name);
        return NULL;
    }
    /* A device (/dev/zero), a pipe or a directory is no saved result:
     * read, it would never end, or fill the memory. */
    struct stat st;
    memset(&st, 0, sizeof st);
    FILE *f = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        cli_error("bench", "--baseline %s: %s is not a regular file%s", name, path,
                  S_ISDIR(st.st_mode) ? " (a directory)" : "");
        close(fd);
        return NULL;
    }
    if (fcntl(fd, F_SETFL, 0) != 0 || (f = fdopen(fd, "r")) == NULL) {
        cli_error("bench", "--baseline %s: cannot read %s: %s", name, path, strerror(errno));
        close(fd);
        return NULL;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 65536;
            char *grown = realloc(text, cap);
            if (grown == NULL) {
                free(text);
                fclose(f);
                cli_error("bench", "--baseline %s: out of memory while reading %s", name, path);
                return NULL;
            }
            text = grown;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    bool bad = ferror(f) != 0;
    int read_errno = errno;
    fclose(f);
    dk_json *root = bad ? NULL : malloc(sizeof *root);
    dk_json_error je = {0};
    int parsed = root == NULL ? -1 : dk__json_parse(text, len, 0, root, &je);
    free(text);
    if (bad) {
        cli_error("bench", "--baseline %s: cannot read %s: %s", name, path, strerror(read_errno));
        return NULL;
    }
    if (root == NULL || parsed != 0) {
        if (root == NULL || je.fault == DK_JSON_ENOMEM)
            cli_error("bench", "--baseline %s: out of memory while reading %s", name, path);
        else
            cli_error("bench", "--baseline %s: %s is not JSON: %s at byte %zu", name, path, je.what,
                      je.off);
        dk__json_free(root);
        free(root);
        return NULL;
    }
    const dk_json *schema = dk__json_get(root, "schema");
    if (schema == NULL || schema->type != DK_JSON_STR || strcmp(schema->str, BENCH_SCHEMA) != 0) {
        cli_error("bench", "--baseline %s: %s is not a dkperf bench result (no \"schema\": \"%s\")",
                  name, path, BENCH_SCHEMA);
        dk__json_free(root);
        free(root);
        return NULL;
    }
    return root;
}
