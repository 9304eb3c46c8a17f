/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_json.c - the JSON report, schema "dkbench-1" (doc/BENCH-JSON.md):
 * the run, then per benchmark every sample and every estimate. Baselines
 * are this same document (baseline.c reads it back).
 */
#include <stdio.h>

#include "common/error.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"
#include "common/json.h"

/* The document is compact: "name":value, members after a ','. */
static void key(FILE *out, const char *k) { dk__json_key(out, "", k, ":"); }

static void interval(FILE *out, const char *k, const dkb_interval *v)
{
    key(out, k);
    dk__json_number_member(out, "{", "point", ":", v->point);
    dk__json_number_member(out, ",", "lo", ":", v->lo);
    dk__json_number_member(out, ",", "hi", ":", v->hi);
    fputc('}', out);
}

static void num(FILE *out, const char *k, double v) { dk__json_number_member(out, "", k, ":", v); }

static void str(FILE *out, const char *k, const char *v)
{
    dk__json_string_member(out, "", k, ":", v);
}

static void boolean(FILE *out, const char *k, bool v)
{
    key(out, k);
    fputs(v ? "true" : "false", out);
}

/* A value of a measure's estimates: null when the measure was not
 * measured (est false), where a 0 would read as a measured zero. */
static void opt_num(FILE *out, bool est, const char *k, double v)
{
    if (est) {
        num(out, k, v);
    } else {
        key(out, k);
        fputs("null", out);
    }
}

static void opt_interval(FILE *out, bool est, const char *k, const dkb_interval *v)
{
    if (est) {
        interval(out, k, v);
    } else {
        key(out, k);
        fputs("{\"point\":null,\"lo\":null,\"hi\":null}", out);
    }
}

/* "k":[v[0],...,v[n-1]] */
static void numbers(FILE *out, const char *k, const double *v, size_t n)
{
    key(out, k);
    fputc('[', out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? "," : "", out);
        dk__json_number(out, v[i]);
    }
    fputc(']', out);
}

static void measure(FILE *out, const dkb_result *r, const dkb_measure *m)
{
    bool est = dkb__has_estimates(r, m);
    fputs("{", out);
    str(out, "name", m->name);
    fputc(',', out);
    str(out, "unit", m->unit);
    fputc(',', out);
    boolean(out, "available", m->available);
    fputc(',', out);
    str(out, "why", m->why);
    fputc(',', out);
    boolean(out, "multiplexed", m->multiplexed);
    fputc(',', out);
    numbers(out, "totals", m->y, m->y != NULL ? r->n_samples : 0);
    fputc(',', out);
    key(out, "outlier_class");
    fputc('[', out);
    for (size_t i = 0; m->outlier_class != NULL && i < r->n_samples; i++)
        fprintf(out, "%s%u", i ? "," : "", (unsigned)m->outlier_class[i]);
    fputs("],", out);
    key(out, "fit");
    fputc('{', out);
    opt_num(out, est, "slope", m->fit.slope);
    fputc(',', out);
    opt_num(out, est, "intercept", m->fit.intercept);
    fputc(',', out);
    opt_num(out, est, "r2", m->fit.r2);
    fputs("},", out);
    opt_interval(out, est, "slope", &m->slope);
    fputc(',', out);
    str(out, "estimator", m->estimator);
    fputc(',', out);
    num(out, "n_fit", (double)m->n_fit);
    fputc(',', out);
    opt_interval(out, est, "ols_slope", &m->ols_slope);
    fputc(',', out);
    key(out, "processes");
    if (est && m->procs.n >= 2 && m->proc != NULL && m->proc_half != NULL) {
        fputc('{', out);
        numbers(out, "estimates", m->proc, m->procs.n);
        fputc(',', out);
        numbers(out, "halves", m->proc_half, m->procs.n);
        fputc(',', out);
        num(out, "stddev", m->procs.stddev);
        fputc(',', out);
        num(out, "within_var", m->procs.within_var);
        fputc(',', out);
        num(out, "between_share", m->procs.between_share);
        fputc(',', out);
        num(out, "resolution", m->procs.resolution);
        fputs("},", out);
    } else {
        fputs("null,", out);
    }
    key(out, "per_iter");
    fputc('{', out);
    opt_num(out, est, "mean", m->per_iter.mean);
    fputc(',', out);
    opt_num(out, est, "median", m->per_iter.median);
    fputc(',', out);
    opt_num(out, est, "mad", m->per_iter.mad);
    fputc(',', out);
    opt_num(out, est, "stddev", m->per_iter.stddev);
    fputc(',', out);
    opt_num(out, est, "min", m->per_iter.min);
    fputc(',', out);
    opt_num(out, est, "max", m->per_iter.max);
    fputc(',', out);
    opt_interval(out, est, "mean_ci", &m->per_iter.mean_ci);
    fputs("},", out);
    key(out, "outliers");
    fputc('{', out);
    opt_num(out, est, "low_severe", (double)m->outliers.low_severe);
    fputc(',', out);
    opt_num(out, est, "low_mild", (double)m->outliers.low_mild);
    fputc(',', out);
    opt_num(out, est, "high_mild", (double)m->outliers.high_mild);
    fputc(',', out);
    opt_num(out, est, "high_severe", (double)m->outliers.high_severe);
    fputc(',', out);
    opt_num(out, est, "fence_low_severe", m->outliers.fence_low_severe);
    fputc(',', out);
    opt_num(out, est, "fence_low_mild", m->outliers.fence_low_mild);
    fputc(',', out);
    opt_num(out, est, "fence_high_mild", m->outliers.fence_high_mild);
    fputc(',', out);
    opt_num(out, est, "fence_high_severe", m->outliers.fence_high_severe);
    fputs("},", out);
    key(out, "change");
    if (m->has_change) {
        fputc('{', out);
        interval(out, "rel", &m->change.rel);
        fputc(',', out);
        num(out, "p_value", m->change.p_value);
        fputc(',', out);
        str(out, "verdict", dkb_verdict_name(m->change.verdict));
        fputc(',', out);
        num(out, "baseline_slope", m->baseline_slope);
        fputc(',', out);
        num(out, "resolution", m->change.resolution);
        fputc(',', out);
        str(out, "basis",
            m->change_paired       ? "pairs"
            : m->change_by_process ? "processes"
                                   : "samples");
        fputc('}', out);
    } else {
        fputs("null", out);
    }
    fputc('}', out);
}

static void result(FILE *out, const dkb_result *r)
{
    fputs("{", out);
    str(out, "name", r->name);
    fputs(",\n     ", out);
    str(out, "group", r->group);
    fputc(',', out);
    num(out, "n_samples", (double)r->n_samples);
    fputc(',', out);
    num(out, "passes", (double)r->passes);
    fputc(',', out);
    key(out, "throughput");
    fputc('{', out);
    str(out, "kind",
        r->throughput_kind == DKB_THROUGHPUT_BYTES      ? "bytes"
        : r->throughput_kind == DKB_THROUGHPUT_ELEMENTS ? "elements"
                                                        : "none");
    fputc(',', out);
    num(out, "per_iter", r->throughput_per_iter);
    fputs("},", out);
    str(out, "stop_reason", r->stop_reason);
    fputc(',', out);
    num(out, "warmup_s", r->warmup_s);
    fputc(',', out);
    num(out, "measure_s", r->measure_s);
    fputc(',', out);
    num(out, "processes", (double)r->n_processes);
    fputc(',', out);
    str(out, "one_process", r->one_process);
    fputc(',', out);
    key(out, "levels");
    fputc('[', out);
    for (size_t i = 0; i < r->n_levels && i < DKB_MAX_LEVELS; i++) {
        fputs(i ? ",{" : "{", out);
        str(out, "name", r->level_name[i]);
        fputc(',', out);
        num(out, "cycle_share", r->level_cycle_share[i]);
        fputc('}', out);
    }
    fputs("],", out);
    boolean(out, "moved_levels", r->moved_levels);
    fputc(',', out);
    boolean(out, "switches_counted", r->switches_counted);
    fputc(',', out);
    num(out, "n_preempted", (double)r->n_preempted);
    fputc(',', out);
    key(out, "preempted");
    fputc('[', out);
    for (size_t i = 0; r->preempted != NULL && i < r->n_samples; i++)
        fprintf(out, "%s%u", i ? "," : "", (unsigned)r->preempted[i]);
    fputs("],\n     ", out);
    numbers(out, "iterations", r->iterations, r->iterations != NULL ? r->n_samples : 0);
    fputs(",\n     ", out);
    key(out, "measures");
    fputc('[', out);
    size_t nm = r->n_measures < DKB_MAX_MEASURES ? r->n_measures : DKB_MAX_MEASURES;
    for (size_t i = 0; i < nm; i++) {
        fputs(i ? ",\n      " : "\n      ", out);
        measure(out, r, &r->m[i]);
    }
    fputs("]}", out);
}

int dkb_report_json(FILE *out, const dkb_run_info *run, const dkb_result *const *results, size_t n)
{
    if (out == NULL || run == NULL || (results == NULL && n > 0))
        return dkb_fail(DK_EINVAL, "dkb_report_json: out, run and results must not be NULL");
    fputs("{\"schema\":\"dkbench-1\",\n \"run\":{", out);
    str(out, "backend", run->backend);
    fputc(',', out);
    str(out, "cpu", run->cpu);
    fputc(',', out);
    str(out, "why_no_counters", run->why_no_counters);
    fputc(',', out);
    str(out, "date", run->date);
    fputc(',', out);
    str(out, "host", run->host);
    fputc(',', out);
    /* As a string: a 64-bit seed does not fit a JSON reader's double. */
    key(out, "seed");
    fprintf(out, "\"%llu\"", (unsigned long long)run->seed);
    fputc(',', out);
    num(out, "noise_threshold", run->noise_threshold);
    fputc(',', out);
    num(out, "target_precision", run->target_precision);
    fputc(',', out);
    str(out, "baseline", run->baseline);
    fputs("},\n \"results\":[", out);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n    " : "\n    ", out);
        if (results[i] == NULL)
            return dkb_fail(DK_EINVAL, "dkb_report_json: result %zu is NULL", i);
        result(out, results[i]);
    }
    fputs("]}\n", out);
    return dkb__report_done(out, "JSON");
}
