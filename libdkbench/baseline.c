/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * baseline.c - baselines: <dir>/<name>.json in the JSON report's schema,
 * written through a temporary file and a rename so a reader never sees half
 * a file, and read back by the strict JSON reader of common/json.h, whose
 * tree the schema here maps onto dkb_result, naming the file and the byte
 * offset of whatever it rejects.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libdkbench/cli.h"
#include "libdkbench/compare.h"
#include "libdkbench/harness.h"
#include "common/error.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"
#include "common/json.h"
#include "common/regfile.h"

#define MAX_FILE (256u << 20)
#define MAX_RESULTS_MEMORY ((size_t)1 << 30)

/* The schema reads the common reader's tree; its messages name the file. */
typedef struct jparser {
    const char *path;
    const char *s;
    size_t len;
    int err;
    bool legacy; /* schema dkperf-bench/1 */
} jparser;

static int jerr(jparser *p, size_t off, const char *what)
{
    if (p->err == 0 && p->legacy)
        p->err = dkb_fail(DK_EINVAL,
                          "baseline %s: byte %zu: %s; the file is a baseline of an older "
                          "dkperf bench (schema \"dkperf-bench/1\") that cannot be "
                          "compared: save it again with --save-baseline",
                          p->path, off, what);
    else if (p->err == 0)
        p->err = dkb_fail(DK_EINVAL,
                          "baseline %s: byte %zu: %s; the file is not a dkbench-1 baseline "
                          "(save it again with --save-baseline)",
                          p->path, off, what);
    return p->err;
}

/* The offset of an array's first value. */
static size_t first_off(const jparser *p, const dk_json *arr)
{
    return dk__json_first_off(p->s, p->len, arr);
}

/* ---- the schema: dkbench-1 onto dkb_result ---- */

static int schema_err(jparser *p, const dk_json *at, const char *where, const char *k,
                      const char *want)
{
    char what[256];
    snprintf(what, sizeof what, "%s \"%s\": %s", where, k, want);
    return jerr(p, at->off, what);
}

static const dk_json *need(jparser *p, const dk_json *obj, const char *where, const char *k,
                           dk_json_type t)
{
    static const char *const names[] = {"null",     "a boolean", "a number",
                                        "a string", "an array",  "an object"};
    const dk_json *v = dk__json_get(obj, k);
    if (v == NULL) {
        schema_err(p, obj, where, k, "missing");
        return NULL;
    }
    /* Non-finite numbers are written as null. */
    if (v->type != t && !(t == DK_JSON_NUM && v->type == DK_JSON_NULL)) {
        char want[64];
        snprintf(want, sizeof want, "must be %s", names[t]);
        schema_err(p, v, where, k, want);
        return NULL;
    }
    return v;
}

static int get_num(jparser *p, const dk_json *obj, const char *where, const char *k, double *out)
{
    const dk_json *v = need(p, obj, where, k, DK_JSON_NUM);
    if (v == NULL)
        return p->err;
    *out = v->type == DK_JSON_NULL ? NAN : v->num;
    return 0;
}

static int get_count(jparser *p, const dk_json *obj, const char *where, const char *k, size_t *out)
{
    const dk_json *v = need(p, obj, where, k, DK_JSON_NUM);
    if (v == NULL)
        return p->err;
    if (v->type != DK_JSON_NUM || v->num < 0 || v->num != floor(v->num) || v->num > 1e15)
        return schema_err(p, v, where, k, "must be a count (a whole number >= 0)");
    *out = (size_t)v->num;
    return 0;
}

/* A count that may be null (not measured: read as 0) when null_ok. */
static int get_count_or_null(jparser *p, const dk_json *obj, const char *where, const char *k,
                             bool null_ok, size_t *out)
{
    const dk_json *v = dk__json_get(obj, k);
    if (null_ok && v != NULL && v->type == DK_JSON_NULL) {
        *out = 0;
        return 0;
    }
    return get_count(p, obj, where, k, out);
}

static int get_str(jparser *p, const dk_json *obj, const char *where, const char *k, char *out,
                   size_t size)
{
    const dk_json *v = need(p, obj, where, k, DK_JSON_STR);
    if (v == NULL)
        return p->err;
    if (strlen(v->str) >= size)
        return schema_err(p, v, where, k, "too long");
    memcpy(out, v->str, strlen(v->str) + 1);
    return 0;
}

static int get_bool(jparser *p, const dk_json *obj, const char *where, const char *k, bool *out)
{
    const dk_json *v = need(p, obj, where, k, DK_JSON_BOOL);
    if (v == NULL)
        return p->err;
    *out = v->b;
    return 0;
}

static int get_interval(jparser *p, const dk_json *obj, const char *where, const char *k,
                        dkb_interval *out)
{
    const dk_json *v = need(p, obj, where, k, DK_JSON_OBJ);
    if (v == NULL || get_num(p, v, k, "point", &out->point) || get_num(p, v, k, "lo", &out->lo) ||
        get_num(p, v, k, "hi", &out->hi))
        return p->err;
    return 0;
}

/* A numeric array of exactly n values into a new malloc'ed array. */
static int get_array(jparser *p, const dk_json *obj, const char *where, const char *k, size_t n,
                     double **out)
{
    const dk_json *v = need(p, obj, where, k, DK_JSON_ARR);
    if (v == NULL)
        return p->err;
    if (v->n == 0)
        return 0; /* not recorded, or no samples */
    if (v->n != n)
        return schema_err(p, v, where, k, "must hold one value per sample");
    double *a = calloc(n ? n : 1, sizeof *a);
    if (a == NULL)
        return p->err = dkb_fail(DK_ENOMEM, "baseline %s: out of memory", p->path);
    if (v->nums != NULL) {
        memcpy(a, v->nums, n * sizeof *a);
        *out = a;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (v->kids[i].type == DK_JSON_NUM)
            a[i] = v->kids[i].num;
        else if (v->kids[i].type == DK_JSON_NULL)
            a[i] = NAN;
        else {
            free(a);
            return schema_err(p, &v->kids[i], where, k, "must hold numbers");
        }
    }
    *out = a;
    return 0;
}

static dkb_verdict verdict_of(const char *s, bool *ok)
{
    for (int v = DKB_NO_CHANGE; v <= DKB_UNRESOLVED; v++)
        if (strcmp(s, dkb_verdict_name((dkb_verdict)v)) == 0) {
            *ok = true;
            return (dkb_verdict)v;
        }
    *ok = false;
    return DKB_NO_CHANGE;
}

static int read_measure(jparser *p, const dk_json *o, size_t n, dkb_measure *m)
{
    const char *w = "measure";
    const dk_json *v;
    if (o->type != DK_JSON_OBJ)
        return jerr(p, o->off, "a measure must be an object");
    if (get_str(p, o, w, "name", m->name, sizeof m->name) ||
        get_str(p, o, w, "unit", m->unit, sizeof m->unit) ||
        get_bool(p, o, w, "available", &m->available) ||
        get_str(p, o, w, "why", m->why, sizeof m->why) ||
        get_bool(p, o, w, "multiplexed", &m->multiplexed) || get_array(p, o, w, "totals", n, &m->y))
        return p->err;
    double *cls = NULL;
    if (get_array(p, o, w, "outlier_class", n, &cls))
        return p->err;
    if (cls != NULL) {
        m->outlier_class = malloc(n ? n : 1);
        if (m->outlier_class == NULL) {
            free(cls);
            return p->err = dkb_fail(DK_ENOMEM, "baseline %s: out of memory", p->path);
        }
        for (size_t i = 0; i < n; i++) {
            if (!(cls[i] >= DKB_OUTLIER_NONE && cls[i] <= DKB_OUTLIER_HIGH_SEVERE &&
                  cls[i] == floor(cls[i]))) {
                free(cls);
                return schema_err(p, dk__json_get(o, "outlier_class"), w, "outlier_class",
                                  "must hold classes 0 to 4");
            }
            m->outlier_class[i] = (unsigned char)cls[i];
        }
        free(cls);
    }
    if ((v = need(p, o, w, "fit", DK_JSON_OBJ)) == NULL ||
        get_num(p, v, "fit", "slope", &m->fit.slope) ||
        get_num(p, v, "fit", "intercept", &m->fit.intercept) ||
        get_num(p, v, "fit", "r2", &m->fit.r2))
        return p->err;
    if (get_interval(p, o, w, "slope", &m->slope))
        return p->err;
    /* Which estimator gave the slope, from how many samples: the change
     * test works on the samples and line of that estimate (compare.c).
     * Files written before these members existed read as OLS of every
     * sample. */
    snprintf(m->estimator, sizeof m->estimator, "OLS");
    m->n_fit = n;
    if (dk__json_get(o, "estimator") != NULL) {
        if (get_str(p, o, w, "estimator", m->estimator, sizeof m->estimator))
            return p->err;
        if (m->estimator[0] != '\0' && strcmp(m->estimator, "OLS") != 0 &&
            strcmp(m->estimator, "Theil-Sen") != 0 && strcmp(m->estimator, "mean") != 0 &&
            strcmp(m->estimator, "median") != 0)
            return schema_err(p, dk__json_get(o, "estimator"), w, "estimator",
                              "must be OLS, Theil-Sen, mean, median or empty (no estimate)");
    }
    if (dk__json_get(o, "ols_slope") != NULL && get_interval(p, o, w, "ols_slope", &m->ols_slope))
        return p->err;
    if (dk__json_get(o, "n_fit") != NULL) {
        if (get_count(p, o, w, "n_fit", &m->n_fit))
            return p->err;
        if (m->n_fit > n)
            return schema_err(p, dk__json_get(o, "n_fit"), w, "n_fit", "is more than the samples");
    }
    dkb_summary *s = &m->per_iter;
    if ((v = need(p, o, w, "per_iter", DK_JSON_OBJ)) == NULL ||
        get_num(p, v, "per_iter", "mean", &s->mean) ||
        get_num(p, v, "per_iter", "median", &s->median) ||
        get_num(p, v, "per_iter", "mad", &s->mad) ||
        get_num(p, v, "per_iter", "stddev", &s->stddev) ||
        get_num(p, v, "per_iter", "min", &s->min) || get_num(p, v, "per_iter", "max", &s->max) ||
        get_interval(p, v, "per_iter", "mean_ci", &s->mean_ci))
        return p->err;
    /* A measure not measured has null estimates (BENCH-JSON.md): read as
     * zeros, as they were written before. */
    bool measured = m->available && n >= 2 && m->y != NULL;
    dkb_outliers *ol = &m->outliers;
    const char *wo = "outliers";
    if ((v = need(p, o, w, wo, DK_JSON_OBJ)) == NULL ||
        get_count_or_null(p, v, wo, "low_severe", !measured, &ol->low_severe) ||
        get_count_or_null(p, v, wo, "low_mild", !measured, &ol->low_mild) ||
        get_count_or_null(p, v, wo, "high_mild", !measured, &ol->high_mild) ||
        get_count_or_null(p, v, wo, "high_severe", !measured, &ol->high_severe) ||
        get_num(p, v, wo, "fence_low_severe", &ol->fence_low_severe) ||
        get_num(p, v, wo, "fence_low_mild", &ol->fence_low_mild) ||
        get_num(p, v, wo, "fence_high_mild", &ol->fence_high_mild) ||
        get_num(p, v, wo, "fence_high_severe", &ol->fence_high_severe))
        return p->err;
    if (!measured) {
        memset(&m->fit, 0, sizeof m->fit);
        memset(&m->slope, 0, sizeof m->slope);
        memset(&m->ols_slope, 0, sizeof m->ols_slope);
        memset(&m->per_iter, 0, sizeof m->per_iter);
        memset(&m->outliers, 0, sizeof m->outliers);
    }
    if ((v = dk__json_get(o, "change")) == NULL)
        return schema_err(p, o, w, "change", "missing");
    if (v->type == DK_JSON_OBJ) {
        char verdict[32];
        bool ok;
        m->has_change = true;
        if (get_interval(p, v, "change", "rel", &m->change.rel) ||
            get_num(p, v, "change", "p_value", &m->change.p_value) ||
            get_str(p, v, "change", "verdict", verdict, sizeof verdict) ||
            get_num(p, v, "change", "baseline_slope", &m->baseline_slope))
            return p->err;
        const dk_json *res = dk__json_get(v, "resolution"), *basis = dk__json_get(v, "basis");
        if (res != NULL && (get_num(p, v, "change", "resolution", &m->change.resolution) ||
                            !(m->change.resolution >= 0)))
            return p->err ? p->err
                          : schema_err(p, res, "change", "resolution", "must be a number >= 0");
        if (basis != NULL) {
            char b[16];
            if (get_str(p, v, "change", "basis", b, sizeof b))
                return p->err;
            if (strcmp(b, "processes") != 0 && strcmp(b, "samples") != 0 && strcmp(b, "pairs") != 0)
                return schema_err(p, basis, "change", "basis",
                                  "must be \"processes\", \"pairs\" or \"samples\"");
            m->change_by_process = strcmp(b, "samples") != 0;
            m->change_paired = strcmp(b, "pairs") == 0;
        }
        m->change.verdict = verdict_of(verdict, &ok);
        if (!ok)
            return schema_err(p, dk__json_get(v, "verdict"), "change", "verdict",
                              "unknown verdict");
    } else if (v->type != DK_JSON_NULL) {
        return schema_err(p, v, w, "change", "must be an object or null");
    }
    return 0;
}

/* A measure's per-process estimates ("processes": null, absent, or
 * {"estimates": [...], "halves": [...], ...} with one value per process of
 * the result), summarized again here rather than trusted. */
static int read_processes(jparser *p, const dk_json *o, const dkb_result *r, dkb_measure *m)
{
    const dk_json *v = dk__json_get(o, "processes");
    if (v == NULL || v->type == DK_JSON_NULL)
        return 0;
    const char *w = "processes";
    if (v->type != DK_JSON_OBJ)
        return schema_err(p, v, "measure", w, "must be an object or null");
    if (r->n_processes < 2)
        return schema_err(p, v, "measure", w, "is given but the result has fewer than 2 processes");
    const char *keys[2] = {"estimates", "halves"};
    double **arrays[2] = {&m->proc, &m->proc_half};
    for (int k = 0; k < 2; k++) {
        const dk_json *a = need(p, v, w, keys[k], DK_JSON_ARR);
        if (a == NULL)
            return p->err;
        if (a->n != r->n_processes)
            return schema_err(p, a, w, keys[k], "must hold one value per process");
        if (get_array(p, v, w, keys[k], r->n_processes, arrays[k]))
            return p->err;
        for (size_t j = 0; j < r->n_processes; j++)
            if (!isfinite((*arrays[k])[j]) || (k == 1 && (*arrays[k])[j] < 0))
                return schema_err(p, a, w, keys[k],
                                  k == 0 ? "must hold finite numbers"
                                         : "must hold finite numbers >= 0");
    }
    if (!dkb_process_summarize(m->proc, m->proc_half, r->n_processes, 0.95, &m->procs))
        return schema_err(p, v, "measure", w, dkb_last_error());
    return 0;
}

/* A measure's n_fit against the result's preempted samples, by which
 * compare.c picks the samples of the estimate. The Theil-Sen time estimate
 * uses the unpreempted samples when at least DKB_MIN_UNPREEMPTED of them on
 * more than one iteration count are left, else every sample; OLS and mean
 * use every sample. A file written before n_fit was saved gets the count
 * by that rule; a file whose n_fit disagrees with it is not valid (the
 * change would be computed on samples the estimate did not use). */
static int fit_samples(jparser *p, const dk_json *o, const dkb_result *r, dkb_measure *m)
{
    size_t n = r->n_samples, clean = n;
    bool varied = false;
    if (r->preempted != NULL && r->iterations != NULL) {
        clean = 0;
        double x0 = 0;
        for (size_t i = 0; i < n; i++)
            if (!r->preempted[i]) {
                if (clean++ == 0)
                    x0 = r->iterations[i];
                else
                    varied |= r->iterations[i] != x0;
            }
    }
    bool theil_sen = strcmp(m->estimator, "Theil-Sen") == 0;
    size_t used = theil_sen && clean >= DKB_MIN_UNPREEMPTED && varied ? clean : n;
    const dk_json *nf = dk__json_get(o, "n_fit");
    if (nf == NULL) {
        if (m->estimator[0] != '\0')
            m->n_fit = used;
        return 0;
    }
    /* Every sample (n_fit = n_samples) is always a safe reading. */
    if (m->estimator[0] == '\0' || m->n_fit == n)
        return 0;
    if (!theil_sen)
        return schema_err(p, nf, "measure", "n_fit",
                          "must be n_samples for an OLS or mean estimate");
    if (m->n_fit != used)
        return schema_err(p, nf, "measure", "n_fit", "does not agree with the preempted samples");
    return 0;
}

static int read_result(jparser *p, const dk_json *o, dkb_result *r)
{
    const char *w = "result";
    const dk_json *v;
    if (o->type != DK_JSON_OBJ)
        return jerr(p, o->off, "a result must be an object");
    if (get_str(p, o, w, "name", r->name, sizeof r->name) ||
        get_str(p, o, w, "group", r->group, sizeof r->group) ||
        get_count(p, o, w, "n_samples", &r->n_samples) ||
        get_count(p, o, w, "passes", &r->passes) ||
        get_str(p, o, w, "stop_reason", r->stop_reason, sizeof r->stop_reason) ||
        get_num(p, o, w, "warmup_s", &r->warmup_s) ||
        get_num(p, o, w, "measure_s", &r->measure_s) ||
        (dk__json_get(o, "processes") != NULL &&
         get_count(p, o, w, "processes", &r->n_processes)) ||
        (dk__json_get(o, "one_process") != NULL &&
         get_str(p, o, w, "one_process", r->one_process, sizeof r->one_process)) ||
        get_bool(p, o, w, "moved_levels", &r->moved_levels) ||
        get_array(p, o, w, "iterations", r->n_samples, &r->iterations))
        return p->err;
    if (r->n_processes > DKB_MAX_PROCESSES)
        return schema_err(p, dk__json_get(o, "processes"), w, "processes",
                          "more than " DKB_STR(DKB_MAX_PROCESSES) " processes");
    /* Preempted samples (left out of the time estimate); optional, as in
     * files written before they were recorded. */
    if (dk__json_get(o, "switches_counted") != NULL &&
        get_bool(p, o, w, "switches_counted", &r->switches_counted))
        return p->err;
    if (dk__json_get(o, "n_preempted") != NULL &&
        get_count(p, o, w, "n_preempted", &r->n_preempted))
        return p->err;
    if (dk__json_get(o, "preempted") != NULL) {
        double *pre = NULL;
        if (get_array(p, o, w, "preempted", r->n_samples, &pre))
            return p->err;
        if (pre != NULL) {
            size_t count = 0;
            r->preempted = malloc(r->n_samples ? r->n_samples : 1);
            if (r->preempted == NULL) {
                free(pre);
                return p->err = dkb_fail(DK_ENOMEM, "baseline %s: out of memory", p->path);
            }
            for (size_t i = 0; i < r->n_samples; i++) {
                if (pre[i] != 0 && pre[i] != 1) {
                    free(pre);
                    return schema_err(p, dk__json_get(o, "preempted"), w, "preempted",
                                      "must hold 0 or 1 per sample");
                }
                r->preempted[i] = (unsigned char)pre[i];
                count += pre[i] == 1;
            }
            free(pre);
            if (count != r->n_preempted)
                return schema_err(p, dk__json_get(o, "preempted"), w, "preempted",
                                  "does not agree with n_preempted");
        }
    }
    /* Preempted samples counted but none listed: no run writes that. */
    if (r->preempted == NULL && r->n_preempted != 0)
        return schema_err(p, dk__json_get(o, "n_preempted"), w, "n_preempted",
                          "counts preempted samples but none are listed in \"preempted\"");
    if ((v = need(p, o, w, "throughput", DK_JSON_OBJ)) == NULL)
        return p->err;
    char kind[16];
    if (get_str(p, v, "throughput", "kind", kind, sizeof kind) ||
        get_num(p, v, "throughput", "per_iter", &r->throughput_per_iter))
        return p->err;
    if (strcmp(kind, "bytes") == 0)
        r->throughput_kind = DKB_THROUGHPUT_BYTES;
    else if (strcmp(kind, "elements") == 0)
        r->throughput_kind = DKB_THROUGHPUT_ELEMENTS;
    else if (strcmp(kind, "none") == 0)
        r->throughput_kind = DKB_THROUGHPUT_NONE;
    else
        return schema_err(p, dk__json_get(v, "kind"), "throughput", "kind",
                          "must be bytes, elements or none");
    if ((v = need(p, o, w, "levels", DK_JSON_ARR)) == NULL)
        return p->err;
    if (v->n > DKB_MAX_LEVELS)
        return schema_err(p, v, w, "levels", "too many levels");
    if (v->nums != NULL)
        return jerr(p, first_off(p, v), "a level must be an object");
    r->n_levels = v->n;
    for (size_t i = 0; i < v->n; i++) {
        if (v->kids[i].type != DK_JSON_OBJ)
            return jerr(p, v->kids[i].off, "a level must be an object");
        if (get_str(p, &v->kids[i], "level", "name", r->level_name[i], sizeof r->level_name[i]) ||
            get_num(p, &v->kids[i], "level", "cycle_share", &r->level_cycle_share[i]))
            return p->err;
    }
    if ((v = need(p, o, w, "measures", DK_JSON_ARR)) == NULL)
        return p->err;
    if (v->n > DKB_MAX_MEASURES)
        return schema_err(p, v, w, "measures", "too many measures");
    if (v->nums != NULL)
        return jerr(p, first_off(p, v), "a measure must be an object");
    r->n_measures = v->n;
    for (size_t i = 0; i < v->n; i++)
        if (read_measure(p, &v->kids[i], r->n_samples, &r->m[i]) != 0 ||
            fit_samples(p, &v->kids[i], r, &r->m[i]) != 0 ||
            read_processes(p, &v->kids[i], r, &r->m[i]) != 0)
            return p->err;
    return 0;
}

static int read_file(const char *path, char **buf, size_t *len)
{
    /* A FIFO, a device (/dev/zero), a directory or a file of a kernel file
     * system (/proc/kmsg, whose reading blocks and takes the kernel log
     * from its one reader) is refused before any read: read, it might
     * never end. The open does not wait for a FIFO's writer. */
    struct stat st;
    char why[256];
    int fd = regfile_open(path, &st, why, sizeof why);
    if (fd < 0) {
        if (strncmp(why, "cannot open: ", 13) != 0)
            return dkb_fail(DK_EINVAL, "baseline %s: %s; not a baseline", path, why);
        bool none = strcmp(why + 13, strerror(ENOENT)) == 0;
        return dkb_fail(none ? DK_EINVAL : DK_EOS, "baseline %s: cannot open it (%s)%s", path,
                        why + 13, none ? "; save one first with --save-baseline" : "");
    }
    size_t cap = 0, n = 0;
    char *b = NULL;
    int rc = 0, fl;
    if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        rc = dkb_fail(DK_EOS, "baseline %s: cannot read it (%s)", path, strerror(errno));
        goto out;
    }
    /* The size is checked first and again while reading: the file may
     * grow meanwhile. */
    if (st.st_size > (off_t)MAX_FILE) {
        rc = dkb_fail(DK_EINVAL, "baseline %s: larger than %u MiB; not a baseline", path,
                      MAX_FILE >> 20);
        goto out;
    }
    cap = (size_t)st.st_size + 1;
    if ((b = malloc(cap)) == NULL) {
        rc = dkb_fail(DK_ENOMEM, "baseline %s: out of memory", path);
        goto out;
    }
    for (;;) {
        if (n == cap) {
            if (cap > MAX_FILE) {
                rc = dkb_fail(DK_EINVAL, "baseline %s: larger than %u MiB; not a baseline", path,
                              MAX_FILE >> 20);
                goto out;
            }
            size_t grown = cap * 2 > MAX_FILE + 1 ? MAX_FILE + 1 : cap * 2;
            char *nb = realloc(b, grown);
            if (nb == NULL) {
                rc = dkb_fail(DK_ENOMEM, "baseline %s: out of memory", path);
                goto out;
            }
            b = nb;
            cap = grown;
        }
        ssize_t got = read(fd, b + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = dkb_fail(DK_EOS, "baseline %s: reading failed (%s)", path, strerror(errno));
            goto out;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *buf = b;
    *len = n;
    b = NULL;
out:
    free(b);
    close(fd);
    return rc;
}

int dkb_baseline_load(const char *dir, const char *name, dkb_result **out, size_t *n)
{
    char path[4096];
    char *buf = NULL;
    size_t len = 0;
    int rc;
    if (out == NULL || n == NULL)
        return dkb_fail(DK_EINVAL, "dkb_baseline_load: out and n must not be NULL");
    if ((rc = dkb__baseline_path(path, sizeof path, dir, name, "dkb_baseline_load")) != 0 ||
        (rc = read_file(path, &buf, &len)) != 0)
        return rc;
    rc = dkb__baseline_parse(path, buf, len, out, n);
    free(buf);
    return rc;
}

/*
 * A baseline dkperf bench saved before it ran on libdkbench (schema
 * "dkperf-bench/1", its --export-json document): each command's wall times
 * ("times", seconds) and counter values ("counters"[].values, null when not
 * counted) are its runs, read as an external body's samples of one
 * iteration (time in ns) and estimated as dkb_measure_body does; its
 * summaries (mean, stddev, ...) are not used. One without the runs is
 * refused, saying how to save it again.
 */
#define LEGACY_SCHEMA "dkperf-bench/1"

static int read_legacy(jparser *p, const dk_json *o, dkb_result *r)
{
    const char *w = "result";
    if (o->type != DK_JSON_OBJ)
        return jerr(p, o->off, "a result must be an object");
    const dk_json *times = dk__json_get(o, "times");
    if (times == NULL || times->type != DK_JSON_ARR)
        return jerr(p, o->off, "a result holds no \"times\" of its runs");
    if (get_str(p, o, w, "command", r->name, sizeof r->name))
        return p->err;
    r->n_samples = times->n;
    r->passes = 1;
    snprintf(r->stop_reason, sizeof r->stop_reason, "runs: %zu (saved by an older dkperf bench)",
             r->n_samples);
    if (r->n_samples == 0)
        return jerr(p, times->off, "a result holds no runs");
    if (get_array(p, o, w, "times", r->n_samples, &r->m[0].y))
        return p->err;
    r->iterations = malloc(r->n_samples * sizeof *r->iterations);
    if (r->iterations == NULL)
        return p->err = dkb_fail(DK_ENOMEM, "baseline %s: out of memory", p->path);
    for (size_t i = 0; i < r->n_samples; i++) {
        /* Checked in ns, the unit it is kept in: 1e300 s is infinite there. */
        r->m[0].y[i] *= 1e9;
        if (!(r->m[0].y[i] >= 0 && isfinite(r->m[0].y[i])))
            return schema_err(p, times, w, "times", "must hold durations (seconds >= 0)");
        r->iterations[i] = 1;
    }
    snprintf(r->m[0].name, sizeof r->m[0].name, "time");
    snprintf(r->m[0].unit, sizeof r->m[0].unit, "ns");
    r->m[0].available = true;
    r->n_measures = 1;
    const dk_json *ctrs = dk__json_get(o, "counters");
    if (ctrs != NULL && ctrs->type != DK_JSON_ARR)
        return schema_err(p, ctrs, w, "counters", "must be an array");
    for (size_t c = 0; ctrs != NULL && c < ctrs->n; c++) {
        if (ctrs->nums != NULL || ctrs->kids[c].type != DK_JSON_OBJ)
            return jerr(p, ctrs->nums ? ctrs->off : ctrs->kids[c].off,
                        "a counter must be an object");
        if (r->n_measures == DKB_MAX_MEASURES)
            return schema_err(p, ctrs, w, "counters", "too many counters");
        dkb_measure *m = &r->m[r->n_measures++];
        if (get_str(p, &ctrs->kids[c], "counter", "name", m->name, sizeof m->name) ||
            get_array(p, &ctrs->kids[c], "counter", "values", r->n_samples, &m->y))
            return p->err;
        m->available = m->y != NULL;
        for (size_t i = 0; m->y != NULL && i < r->n_samples; i++)
            m->available = m->available && m->y[i] >= 0 && isfinite(m->y[i]);
        if (!m->available) {
            free(m->y);
            m->y = NULL;
            snprintf(m->why, sizeof m->why, "not counted in every run");
        }
    }
    dkb_config cfg;
    dkb_config_defaults(&cfg);
    if (dkb_estimate_runs(&cfg, r) != 0)
        return p->err = dkb_fail(DK_ENOMEM, "baseline %s: out of memory", p->path);
    return 0;
}

int dkb__baseline_parse(const char *path, const char *text, size_t len, dkb_result **out, size_t *n)
{
    dk_json root = {0};
    dkb_result *rs = NULL;
    size_t count = 0;
    int rc;
    jparser p = {.path = path, .s = text, .len = len};
    dk_json_error je;
    if (dk__json_parse(text, len, DK_JSON_PACK_NUMBERS, &root, &je) != 0) {
        if (je.fault == DK_JSON_ENOMEM)
            rc = dkb_fail(DK_ENOMEM, "baseline %s: out of memory", path);
        else
            rc = jerr(&p, je.off,
                      je.fault == DK_JSON_EBIG
                          ? "more values than a baseline holds (over 1 GiB in memory)"
                          : je.what);
        goto out;
    }
    if (root.type != DK_JSON_OBJ) {
        rc = jerr(&p, root.off, "the document must be an object");
        goto out;
    }
    char schema[32];
    if ((rc = get_str(&p, &root, "document", "schema", schema, sizeof schema)) != 0)
        goto out;
    bool legacy = p.legacy = strcmp(schema, LEGACY_SCHEMA) == 0;
    if (!legacy && strcmp(schema, "dkbench-1") != 0) {
        rc = jerr(&p, dk__json_get(&root, "schema")->off, "schema is not \"dkbench-1\"");
        goto out;
    }
    const dk_json *results = need(&p, &root, "document", "results", DK_JSON_ARR);
    if (results == NULL || (!legacy && need(&p, &root, "document", "run", DK_JSON_OBJ) == NULL)) {
        rc = p.err;
        goto out;
    }
    /* Each result takes sizeof *rs (about 40 kB) however little of the
     * file it fills: without a bound, a 10 MB file of small results would
     * take 2 GB. 1 GiB of them is some 26,000 benchmarks. */
    if (results->n > MAX_RESULTS_MEMORY / sizeof *rs) {
        char why[64];
        snprintf(why, sizeof why, "more than %zu results", MAX_RESULTS_MEMORY / sizeof *rs);
        rc = schema_err(&p, results, "document", "results", why);
        goto out;
    }
    if (results->nums != NULL) {
        rc = jerr(&p, first_off(&p, results), "a result must be an object");
        goto out;
    }
    rs = calloc(results->n ? results->n : 1, sizeof *rs);
    if (rs == NULL) {
        rc = dkb_fail(DK_ENOMEM, "baseline %s: out of memory", path);
        goto out;
    }
    for (count = 0; count < results->n; count++)
        if ((rc = (legacy ? read_legacy : read_result)(&p, &results->kids[count], &rs[count])) !=
            0) {
            count++;
            goto out;
        }
    *out = rs;
    *n = count;
    rs = NULL;
out:
    for (size_t i = 0; rs != NULL && i < count; i++)
        dkb_result_free(&rs[i]);
    free(rs);
    dk__json_free(&root);
    return rc;
}
