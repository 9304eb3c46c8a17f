/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_gbench.c - google benchmark's --benchmark_format=json layout (as
 * its 1.7 release writes it), so that tools written for it (compare.py)
 * read our results: the context as google benchmark fills it; per
 * benchmark one "iteration" entry, or, when repetitions were asked for and
 * the result was measured in processes, one per process followed by the
 * mean, median, stddev and cv aggregates. Times are ns per iteration
 * (real_time and cpu_time both the wall-time estimate: the harness
 * measures wall time), the events per iteration are counters, and
 * bytes_per_second or items_per_second are named as google benchmark
 * names them. Counters are in name order, as its std::map holds them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/json.h"
#include "common/sysinfo.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"
#include "libdkbench/report_gbench_internal.h"

#define IND "      "

/* A double as google benchmark writes one (every digit, scientific), an
 * unmeasured or undefined one (a cv of a mean of 0) as its NaN or
 * Infinity: compare.py computes with every time it reads, and stops on a
 * null; Python's json reads NaN. */
static void num(FILE *out, double v)
{
    if (isnan(v))
        fputs("NaN", out); /* never -NaN: Python reads no such word */
    else if (isinf(v))
        fputs(v < 0 ? "-Infinity" : "Infinity", out);
    else
        fprintf(out, "%.16e", v);
}

static void kv_str(FILE *out, const char *k, const char *v, const char *end)
{
    dk__json_string(out, k);
    fputs(": ", out);
    dk__json_string(out, v);
    fputs(end, out);
}

void dkb__gbench_date(const dkb_gbench_view *v, char *buf, size_t size)
{
    if (v->date != NULL) {
        snprintf(buf, size, "%s", v->date);
        return;
    }
    time_t now = time(NULL);
    struct tm tm;
    char z[16];
    buf[0] = '\0';
    if (localtime_r(&now, &tm) == NULL)
        return;
    size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
    if (strftime(z, sizeof z, "%z", &tm) == 5 && (z[0] == '+' || z[0] == '-'))
        snprintf(buf + n, size - n, "%c%c%c:%c%c", z[0], z[1], z[2], z[3], z[4]);
    else if (gmtime_r(&now, &tm) != NULL) { /* unknown offset: UTC, as RFC 3339 says */
        n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf + n, size - n, "-00:00");
    }
}

static void context(FILE *out, const dkb_run_info *run, const dkb_gbench_view *v)
{
    dk__sysinfo si;
    dk__sysinfo_read(&si, v->sysroot);
    char date[64];
    dkb__gbench_date(v, date, sizeof date);
    fputs("{\n  \"context\": {\n    ", out);
    kv_str(out, "date", date, ",\n    ");
    kv_str(out, "host_name", run->host, ",\n    ");
    if (v->executable != NULL)
        kv_str(out, "executable", v->executable, ",\n    ");
    fprintf(out, "\"num_cpus\": %d,\n    \"mhz_per_cpu\": %ld,\n", si.num_cpus,
            (long)(si.cycles_per_second / 1e6 + 0.5)); /* rounded, as it rounds it */
    if (si.scaling >= 0)
        fprintf(out, "    \"cpu_scaling_enabled\": %s,\n", si.scaling ? "true" : "false");
    fputs("    \"caches\": [\n", out);
    for (size_t i = 0; i < si.n_caches; i++) {
        const dk__cache_info *c = &si.caches[i];
        fputs("      {\n        ", out);
        kv_str(out, "type", c->type, ",\n");
        fprintf(out,
                "        \"level\": %d,\n        \"size\": %lld,\n"
                "        \"num_sharing\": %d\n      }%s\n",
                c->level, c->size, c->num_sharing, i + 1 < si.n_caches ? "," : "");
    }
    fputs("    ],\n    \"load_avg\": [", out);
    for (size_t i = 0; i < si.n_load; i++)
        fprintf(out, "%s%g", i ? "," : "", si.load_avg[i]);
#ifdef NDEBUG
    fputs("],\n    \"library_build_type\": \"release\",\n    ", out);
#else
    fputs("],\n    \"library_build_type\": \"debug\",\n    ", out);
#endif
    kv_str(out, "dkbench_backend", run->backend, ",\n    ");
    kv_str(out, "dkbench_cpu", run->cpu_model[0] ? run->cpu_model : run->cpu,
           "\n  },\n  \"benchmarks\": [");
}

typedef dkb__gb_counter counter;
typedef dkb__gb_entry entry;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const counter *)a)->name, ((const counter *)b)->name);
}

static const char *user_name(const dkb_gbench_view *v, const char *event)
{
    for (size_t i = 0; i < v->n_names; i++)
        if (v->names[i].event != NULL && strcmp(v->names[i].event, event) == 0)
            return v->names[i].as != NULL ? v->names[i].as : event;
    return event;
}

/* The counters of r: its events' estimates (process p's, or the
 * headline's when p is (size_t)-1) and its throughput; sorted. */
static size_t counters(const dkb_result *r, size_t p, double t, const dkb_gbench_view *v,
                       counter *c)
{
    size_t n = 0;
    if (t > 0 && r->throughput_kind != DKB_THROUGHPUT_NONE) {
        c[n].name = r->throughput_kind == DKB_THROUGHPUT_BYTES ? "bytes_per_second"
                                                               : "items_per_second";
        c[n].rate = true;
        c[n].binary = r->throughput_kind == DKB_THROUGHPUT_BYTES; /* as SetBytesProcessed */
        c[n++].v = r->throughput_per_iter / (t * 1e-9);
    }
    size_t nm = r->n_measures < DKB_MAX_MEASURES ? r->n_measures : DKB_MAX_MEASURES;
    for (size_t j = 1; j < nm; j++) {
        const dkb_measure *m = &r->m[j];
        if (!dkb__has_estimates(r, m))
            continue;
        double x = p == (size_t)-1 ? m->slope.point : m->proc != NULL ? m->proc[p] : NAN;
        if (!isfinite(x))
            continue;
        c[n].name = user_name(v, m->name);
        c[n].rate = c[n].binary = false;
        c[n++].v = x;
    }
    qsort(c, n, sizeof *c, by_name);
    return n;
}

static void put_entry(void *arg, const entry *e, bool first)
{
    FILE *out = arg;
    fputs(first ? "\n    {\n" IND : ",\n    {\n" IND, out);
    if (e->aggregate != NULL) {
        char name[sizeof e->r->name + 16];
        snprintf(name, sizeof name, "%s_%s", e->r->name, e->aggregate);
        kv_str(out, "name", name, ",\n" IND);
    } else {
        kv_str(out, "name", e->r->name, ",\n" IND);
    }
    fprintf(out, "\"family_index\": %zu,\n" IND "\"per_family_instance_index\": %zu,\n" IND,
            e->family, e->instance);
    kv_str(out, "run_name", e->r->name, ",\n" IND);
    fprintf(out, "\"run_type\": \"%s\",\n" IND "\"repetitions\": %zu,\n" IND,
            e->aggregate ? "aggregate" : "iteration", e->reps);
    if (e->aggregate == NULL)
        fprintf(out, "\"repetition_index\": %zu,\n" IND, e->index);
    fputs("\"threads\": 1,\n" IND, out);
    if (e->aggregate != NULL) {
        kv_str(out, "aggregate_name", e->aggregate, ",\n" IND);
        kv_str(out, "aggregate_unit", e->percentage ? "percentage" : "time", ",\n" IND);
    }
    fprintf(out, "\"iterations\": %.0f,\n" IND "\"real_time\": ", e->iterations);
    num(out, e->time);
    fputs(",\n" IND "\"cpu_time\": ", out);
    num(out, e->time);
    fputs(",\n" IND "\"time_unit\": \"ns\"", out);
    for (size_t i = 0; i < e->nc; i++) {
        fputs(",\n" IND, out);
        dk__json_string(out, e->c[i].name);
        fputs(": ", out);
        num(out, e->c[i].v);
    }
    fputs("\n    }", out);
}

/* google benchmark's statistics of n values (its statistics.cc). */
static double stat(const char *what, const double *x, size_t n)
{
    double sum = 0, sq = 0;
    for (size_t i = 0; i < n; i++) {
        sum += x[i];
        sq += x[i] * x[i];
    }
    double mean = n ? sum / (double)n : 0;
    double var = n > 1 ? (double)n / ((double)n - 1) * (sq / (double)n - mean * mean) : 0;
    double sd = var > 0 ? sqrt(var) : 0;
    if (strcmp(what, "mean") == 0)
        return mean;
    if (strcmp(what, "stddev") == 0)
        return sd;
    if (strcmp(what, "cv") == 0)
        return n < 2 ? 0 : sd / mean;
    if (n < 3)
        return mean;
    double s[n]; /* median */
    memcpy(s, x, n * sizeof *s);
    for (size_t i = 1; i < n; i++) /* insertion sort: n is a count of processes */
        for (size_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
            double t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    return n % 2 ? s[n / 2] : (s[n / 2] + s[n / 2 - 1]) / 2;
}

/* Process p's time estimate, or the headline's. */
static double time_of(const dkb_result *r, size_t p)
{
    const dkb_measure *t = r->n_measures > 0 && dkb__has_estimates(r, &r->m[0]) ? &r->m[0] : NULL;
    if (t == NULL)
        return NAN;
    return p == (size_t)-1 ? t->slope.point : t->proc != NULL ? t->proc[p] : NAN;
}

static int put_result(dkb__gb_emit emit, void *arg, const dkb_result *r, size_t family,
                      size_t instance, const dkb_gbench_view *v, bool *first)
{
    counter c[DKB_MAX_MEASURES + 1];
    entry e = {.r = r, .family = family, .instance = instance, .reps = 1};
    size_t np = r->n_processes;
    if (v->repetitions < 2 || np < 2 || r->proc_iterations == NULL) {
        e.time = time_of(r, (size_t)-1);
        for (size_t s = 0; r->iterations != NULL && s < r->n_samples; s++)
            e.iterations += r->iterations[s];
        e.c = c;
        e.nc = counters(r, (size_t)-1, e.time, v, c);
        emit(arg, &e, *first);
        *first = false;
        return 0;
    }
    /* Each process a repetition; then the aggregates of their values. */
    double *t = malloc(np * sizeof *t);
    counter(*pc)[DKB_MAX_MEASURES + 1] = malloc(np * sizeof *pc);
    size_t *pn = malloc(np * sizeof *pn);
    if (t == NULL || pc == NULL || pn == NULL) {
        free(t), free(pc), free(pn);
        return dkb_fail(DK_ENOMEM, "dkb_report_gbench: out of memory");
    }
    e.reps = np;
    for (size_t p = 0; p < np; p++) {
        t[p] = time_of(r, p);
        pn[p] = counters(r, p, t[p], v, pc[p]);
        e.index = p;
        e.iterations = r->proc_iterations[p];
        e.time = t[p];
        e.c = pc[p];
        e.nc = pn[p];
        if (!v->aggregates_only) {
            emit(arg, &e, *first);
            *first = false;
        }
    }
    static const char *const aggs[] = {"mean", "median", "stddev", "cv"};
    double *x = malloc(np * sizeof *x);
    for (size_t a = 0; x != NULL && a < 4; a++) {
        e.aggregate = aggs[a];
        e.percentage = a == 3;
        e.iterations = (double)np;
        e.time = stat(aggs[a], t, np);
        /* A counter every process has: the processes share their measures. */
        for (size_t k = 0; k < pn[0]; k++) {
            size_t m = 0;
            for (size_t p = 0; p < np; p++)
                for (size_t q = 0; q < pn[p]; q++)
                    if (strcmp(pc[p][q].name, pc[0][k].name) == 0)
                        x[m++] = pc[p][q].v;
            c[k] = pc[0][k];
            c[k].v = stat(aggs[a], x, m);
        }
        e.c = c;
        e.nc = pn[0];
        emit(arg, &e, *first);
        *first = false;
    }
    free(t), free(pc), free(pn);
    if (x == NULL)
        return dkb_fail(DK_ENOMEM, "dkb_report_gbench: out of memory");
    free(x);
    return 0;
}

static const char *family_key(const dkb_result *r) { return r->group[0] ? r->group : r->name; }

static bool first_of_family(const dkb_result *const *rs, size_t k)
{
    for (size_t j = 0; j < k; j++)
        if (strcmp(family_key(rs[j]), family_key(rs[k])) == 0)
            return false;
    return true;
}

int dkb__gbench_walk(const dkb_result *const *results, size_t n, const dkb_gbench_view *v,
                     dkb__gb_emit emit, void *arg)
{
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        /* A family: the results of one group (google benchmark's BM_x/8,
         * BM_x/64), numbered in the order first met. */
        size_t family = 0, instance = 0;
        bool found = false;
        for (size_t k = 0; k < i; k++) {
            if (strcmp(family_key(results[k]), family_key(results[i])) == 0) {
                instance++;
                found = true;
            } else if (!found && first_of_family(results, k)) {
                family++;
            }
        }
        int rc = put_result(emit, arg, results[i], family, instance, v, &first);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int dkb_report_gbench_view(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                           size_t n, const dkb_gbench_view *view)
{
    if (out == NULL || run == NULL || (results == NULL && n > 0))
        return dkb_fail(DK_EINVAL, "dkb_report_gbench: out, run and results must not be NULL");
    for (size_t i = 0; i < n; i++)
        if (results[i] == NULL)
            return dkb_fail(DK_EINVAL, "dkb_report_gbench: result %zu is NULL", i);
    dkb_gbench_view none = {.executable = ""};
    const dkb_gbench_view *v = view ? view : &none;
    context(out, run, v);
    int rc = dkb__gbench_walk(results, n, v, put_entry, out);
    if (rc != 0)
        return rc;
    fputs("\n  ]\n}\n", out);
    return dkb__report_done(out, "google benchmark JSON");
}

int dkb_report_gbench(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                      size_t n)
{
    return dkb_report_gbench_view(out, run, results, n, NULL);
}
