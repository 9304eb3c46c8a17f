/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_gbench_text.c - google benchmark's console and CSV layouts (as its
 * 1.7 release writes them): the machine's description first (to err, where
 * google benchmark writes it: stderr on a terminal, the file itself with
 * --benchmark_out), then the table, or the CSV rows. The entries are the
 * JSON's (report_gbench.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/sysinfo.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"
#include "libdkbench/report_gbench_internal.h"

bool dkb_gbench_color_auto(FILE *out)
{
    /* google benchmark's "auto": a terminal whose TERM it knows. */
    static const char *const terms[] = {"xterm",         "xterm-color",     "xterm-256color",
                                        "screen",        "screen-256color", "tmux",
                                        "tmux-256color", "rxvt-unicode",    "rxvt-unicode-256color",
                                        "linux",         "cygwin"};
    const char *term = getenv("TERM");
    bool known = false;
    for (size_t i = 0; term != NULL && i < sizeof terms / sizeof terms[0]; i++)
        known |= strcmp(term, terms[i]) == 0;
    return known && out != NULL && isatty(fileno(out));
}

/* The description of the machine that precedes the table. */
static void basic_context(FILE *err, const dkb_run_info *run, const dkb_gbench_view *v)
{
    dk__sysinfo si;
    dk__sysinfo_read(&si, v->sysroot);
    char date[64];
    dkb__gbench_date(v, date, sizeof date);
    fprintf(err, "%s\n", date);
    if (v->executable != NULL)
        fprintf(err, "Running %s\n", v->executable);
    fprintf(err, "Run on (%d X %g MHz CPU %s)\n", si.num_cpus, si.cycles_per_second / 1e6,
            si.num_cpus > 1 ? "s" : "");
    if (si.n_caches > 0)
        fputs("CPU Caches:\n", err);
    for (size_t i = 0; i < si.n_caches; i++) {
        const dk__cache_info *c = &si.caches[i];
        fprintf(err, "  L%d %s %lld KiB", c->level, c->type, c->size / 1024);
        if (c->num_sharing != 0)
            fprintf(err, " (x%d)", si.num_cpus / c->num_sharing);
        fputc('\n', err);
    }
    if (si.n_load > 0) {
        fputs("Load Average: ", err);
        for (size_t i = 0; i < si.n_load; i++)
            fprintf(err, "%s%.2f", i ? ", " : "", si.load_avg[i]);
        fputc('\n', err);
    }
    /* Ours, as a custom context of google benchmark's is printed. */
    fprintf(err, "dkbench_backend: %s\ndkbench_cpu: %s\n", run->backend,
            run->cpu_model[0] ? run->cpu_model : run->cpu);
    if (si.scaling == 1)
        fputs("***WARNING*** CPU frequency scaling is on: real time measurements may be noisy "
              "and slower.\n",
              err);
#ifndef NDEBUG
    fputs("***WARNING*** libdkbench is a DEBUG build: its timings may be affected.\n", err);
#endif
}

/* A number as google benchmark's console shows a counter: %g of the
 * value scaled to k, M, G... (one_k each: 1000, or 1024 for bytes, with
 * the same letters) above 1.1 one_k, to m, u, n... below 0.01. */
static void human(char *buf, size_t size, double x, double one_k)
{
    static const char big[] = "kMGTPEZY", small[] = "munpfazy";
    const char *sign = x < 0 ? "-" : "";
    double v = x < 0 ? -x : x;
    double top = 1.1 * one_k;
    if (v > top) {
        double s = v;
        for (size_t i = 0; i < sizeof big - 1; i++) {
            s /= one_k;
            if (s <= top) {
                snprintf(buf, size, "%s%g%c", sign, s, big[i]);
                return;
            }
        }
    } else if (v < 0.01 && v > 0) {
        double s = v;
        for (size_t i = 0; i < sizeof small - 1; i++) {
            s *= one_k;
            if (s >= 1.1) {
                snprintf(buf, size, "%s%g%c", sign, s, small[i]);
                return;
            }
        }
    }
    snprintf(buf, size, "%s%g", sign, v);
}

/* A time in its 10 characters, decimals by its size. */
static void time_text(char *buf, size_t size, double t)
{
    if (t < 1.0)
        snprintf(buf, size, "%10.3f", t);
    else if (t < 10.0)
        snprintf(buf, size, "%10.2f", t);
    else if (t < 100.0)
        snprintf(buf, size, "%10.1f", t);
    else if (t > 9999999999.0)
        snprintf(buf, size, "%1.4e", t);
    else
        snprintf(buf, size, "%10.0f", t);
}

typedef struct console {
    FILE *out;
    const dkb_gbench_view *v;
    int width;
    bool header;
    const char *names[DKB_MAX_MEASURES + 1]; /* the last header's counters */
    size_t n_names;
} console;

/* Printed in colour as google benchmark does: a code before, a reset after. */
static void paint(const console *k, const char *code, const char *fmt, ...) DKB_PRINTF(3, 4);
static void paint(const console *k, const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (k->v->color && code != NULL)
        fprintf(k->out, "\033[0;3%sm", code);
    vfprintf(k->out, fmt, ap);
    if (k->v->color)
        fputs("\033[m", k->out);
    va_end(ap);
}

static bool same_names(const console *k, const dkb__gb_entry *e)
{
    if (k->n_names != e->nc)
        return false;
    for (size_t i = 0; i < e->nc; i++)
        if (strcmp(k->names[i], e->c[i].name) != 0)
            return false;
    return true;
}

static void console_entry(void *arg, const dkb__gb_entry *e, bool first)
{
    console *k = arg;
    (void)first;
    if (!k->header || (k->v->counters_tabular && !same_names(k, e))) {
        char head[1024];
        int n = snprintf(head, sizeof head, "%-*s %13s %15s %12s", k->width, "Benchmark", "Time",
                         "CPU", "Iterations");
        for (size_t i = 0; k->v->counters_tabular && i < e->nc && n > 0; i++)
            n += snprintf(head + n, sizeof head - (size_t)n, " %10s", e->c[i].name);
        if (!k->v->counters_tabular && e->nc > 0)
            n += snprintf(head + n, sizeof head - (size_t)n, " UserCounters...");
        size_t len = strlen(head);
        for (int r = 0; r < 3; r++) {
            for (size_t i = 0; r != 1 && i < len; i++)
                fputc('-', k->out);
            fputs(r == 1 ? head : "", k->out);
            fputc('\n', k->out);
        }
        k->header = true;
        k->n_names = e->nc;
        for (size_t i = 0; i < e->nc; i++)
            k->names[i] = e->c[i].name;
    }
    char name[sizeof e->r->name + 16];
    snprintf(name, sizeof name, e->aggregate ? "%s_%s" : "%s", e->r->name, e->aggregate);
    paint(k, "2", "%-*s ", k->width, name);
    if (e->percentage) {
        paint(k, "3", "%10.2f %-4s %10.2f %-4s ", 100 * e->time, "%", 100 * e->time, "%");
    } else {
        char t[64];
        time_text(t, sizeof t, e->time);
        paint(k, "3", "%s %-4s %s %-4s ", t, "ns", t, "ns");
    }
    paint(k, "6", "%10.0f", e->iterations);
    for (size_t i = 0; i < e->nc; i++) {
        char s[64];
        const char *unit = "";
        if (e->percentage) {
            snprintf(s, sizeof s, "%.2f", 100 * e->c[i].v);
            unit = "%";
        } else {
            human(s, sizeof s, e->c[i].v, e->c[i].binary ? 1024 : 1000);
            unit = e->c[i].rate ? "/s" : "";
        }
        if (k->v->counters_tabular) {
            size_t w = strlen(e->c[i].name) > 10 ? strlen(e->c[i].name) : 10;
            paint(k, NULL, " %*s%s", (int)(w - strlen(unit)), s, unit);
        } else {
            paint(k, NULL, " %s=%s%s", e->c[i].name, s, unit);
        }
    }
    paint(k, NULL, "\n");
}

static int check(const char *fn, FILE *out, const dkb_run_info *run,
                 const dkb_result *const *results, size_t n)
{
    if (out == NULL || run == NULL || (results == NULL && n > 0))
        return dkb_fail(DK_EINVAL, "%s: out, run and results must not be NULL", fn);
    for (size_t i = 0; i < n; i++)
        if (results[i] == NULL)
            return dkb_fail(DK_EINVAL, "%s: result %zu is NULL", fn, i);
    return 0;
}

int dkb_report_gbench_console(FILE *out, FILE *err, const dkb_run_info *run,
                              const dkb_result *const *results, size_t n,
                              const dkb_gbench_view *view)
{
    int rc = check("dkb_report_gbench_console", out, run, results, n);
    if (rc != 0)
        return rc;
    dkb_gbench_view none = {0};
    console k = {.out = out, .v = view ? view : &none, .width = 10};
    /* The name column: the longest name, and room for "_median" when
     * there may be aggregates. */
    for (size_t i = 0; i < n; i++) {
        int len = (int)strlen(results[i]->name);
        k.width = len > k.width ? len : k.width;
    }
    if (k.v->repetitions >= 2)
        k.width += 1 + 6;
    basic_context(err ? err : out, run, k.v);
    rc = dkb__gbench_walk(results, n, k.v, console_entry, &k);
    if (rc != 0)
        return rc;
    if (err != NULL && err != out && fflush(err) != 0)
        return dkb_fail(DK_EOS, "writing google benchmark's context failed");
    return dkb__report_done(out, "google benchmark console");
}

/* CSV: every field quoted where google benchmark quotes it (names and
 * counter names), numbers as a C++ stream writes them (%g). */
typedef struct csv {
    FILE *out;
    const char *names[DKB_MAX_MEASURES + 1]; /* the user counters' columns */
    size_t n_names;
} csv;

static void csv_quoted(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static const dkb__gb_counter *find(const dkb__gb_entry *e, const char *name)
{
    for (size_t i = 0; i < e->nc; i++)
        if (strcmp(e->c[i].name, name) == 0)
            return &e->c[i];
    return NULL;
}

static void csv_entry(void *arg, const dkb__gb_entry *e, bool first)
{
    csv *k = arg;
    FILE *out = k->out;
    if (first) {
        /* The columns: the first benchmark's counters, as google
         * benchmark takes them from its first report. */
        fputs("name,iterations,real_time,cpu_time,time_unit,bytes_per_second,"
              "items_per_second,label,error_occurred,error_message",
              out);
        for (size_t i = 0; i < e->nc; i++)
            if (!e->c[i].rate) {
                k->names[k->n_names++] = e->c[i].name;
                fputs(",", out);
                csv_quoted(out, e->c[i].name);
            }
        fputc('\n', out);
    }
    char name[sizeof e->r->name + 16];
    snprintf(name, sizeof name, e->aggregate ? "%s_%s" : "%s", e->r->name, e->aggregate);
    csv_quoted(out, name);
    /* google benchmark divides every time by the entry's iterations here,
     * a cv's ratio too (scaled as seconds to ns): the same, to match. */
    double t = e->percentage ? e->time * 1e9 / e->iterations : e->time;
    fprintf(out, ",%.0f,%g,%g,ns,", e->iterations, t, t);
    const dkb__gb_counter *b = find(e, "bytes_per_second"), *it = find(e, "items_per_second");
    if (b != NULL)
        fprintf(out, "%g", b->v);
    fputc(',', out);
    if (it != NULL)
        fprintf(out, "%g", it->v);
    fputs(",,,", out);
    for (size_t i = 0; i < k->n_names; i++) {
        const dkb__gb_counter *c = find(e, k->names[i]);
        fputc(',', out);
        if (c != NULL)
            fprintf(out, "%g", c->v);
    }
    fputc('\n', out);
}

int dkb_report_gbench_csv(FILE *out, FILE *err, const dkb_run_info *run,
                          const dkb_result *const *results, size_t n, const dkb_gbench_view *view)
{
    int rc = check("dkb_report_gbench_csv", out, run, results, n);
    if (rc != 0)
        return rc;
    dkb_gbench_view none = {0};
    const dkb_gbench_view *v = view ? view : &none;
    basic_context(err ? err : out, run, v);
    csv k = {.out = out};
    rc = dkb__gbench_walk(results, n, v, csv_entry, &k);
    if (rc != 0)
        return rc;
    return dkb__report_done(out, "google benchmark CSV");
}
