/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * run.c - external bodies (one run of a process is one sample) and
 * dk_bench_run, the harness driven by a program's options rather than by
 * argv; see dkbench.h. dkperf bench is such a program: its commands are
 * external bodies, so that it and every dkbench program share one set of
 * estimates, one change test and one baseline format.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libdkbench/compare.h"
#include "libdkbench/harness.h"
#include "libdkbench/report.h"
#include "common/error.h"

/* The fixed measures of a body, before its counters. */
enum { M_TIME, M_USER, M_SYSTEM, M_RSS, M_FIXED };
static const char *const fixed_name[M_FIXED] = {"time", "user-time", "system-time", "max-rss"};
static const char *const fixed_unit[M_FIXED] = {"ns", "ns", "ns", "B"};

/* libpfm4's rule for a caller's size-versioned struct: smaller than this
 * version's is refused (there is no older version), larger only with the
 * bytes this version does not know all zero. */
static int check_size(const void *p, size_t given, size_t known, const char *what)
{
    /* As perf_event_open bounds attr.size by a page: a garbage size (an
     * unset member) is refused before its bytes are read. */
    if (given > 4096)
        return dkb_fail(DK_EINVAL, "%s: size %zu is no struct's size; set it to sizeof the struct",
                        what, given);
    if (given < known)
        return dkb_fail(DK_EINVAL, "%s: size %zu is smaller than %zu; set it to sizeof the struct",
                        what, given, known);
    const unsigned char *b = p;
    for (size_t i = known; i < given; i++)
        if (b[i] != 0)
            return dkb_fail(DK_EINVAL,
                            "%s: size %zu, and members this libdkbench does not know "
                            "(after %zu bytes) are set; a newer libdkbench is needed",
                            what, given, known);
    return 0;
}

int dk_bench_fail(int code, const char *fmt, ...)
{
    char buf[1024] = "";
    if (fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
    }
    return dkb_fail(code, "%s", buf);
}

int dk_bench_register_body(const dk_bench_body *body)
{
    if (body == NULL)
        return dkb_fail(DK_EINVAL, "dk_bench_register_body: body must not be NULL");
    int rc = check_size(body, body->size, sizeof *body, "dk_bench_register_body");
    if (rc != 0)
        return rc;
    if (body->name == NULL || body->run == NULL)
        return dkb_fail(DK_EINVAL, "dk_bench_register_body: the name and run must not be NULL");
    if (body->n_counters > DK_BENCH_MAX_COUNTERS ||
        (body->n_counters > 0 && body->counters == NULL))
        return dkb_fail(DK_EINVAL,
                        "dk_bench_register_body: %s: %zu counters; give at most %d, "
                        "named in counters",
                        body->name, body->n_counters, DK_BENCH_MAX_COUNTERS);
    dkb_entry e;
    memset(&e, 0, sizeof e);
    size_t len = strlen(body->name);
    if (len == 0 || len >= sizeof e.name)
        return dkb_fail(DK_EINVAL, "dk_bench_register: the name \"%.40s\" must have 1 to %zu bytes",
                        body->name, sizeof e.name - 1);
    memcpy(e.name, body->name, len + 1);
    e.body = body->run;
    e.ctx = body->ctx;
    e.n_counters = body->n_counters;
    for (size_t i = 0; i < body->n_counters; i++) {
        const char *c = body->counters[i];
        size_t clen = c != NULL ? strlen(c) : 0;
        if (clen == 0 || clen >= sizeof e.counters[i])
            return dkb_fail(DK_EINVAL,
                            "dk_bench_register_body: %s: counter %zu must be named "
                            "with 1 to %zu bytes",
                            body->name, i + 1, sizeof e.counters[i] - 1);
        bool taken = false;
        for (size_t k = 0; k < M_FIXED; k++)
            taken |= strcmp(c, fixed_name[k]) == 0;
        for (size_t k = 0; k < i; k++)
            taken |= strcmp(c, e.counters[k]) == 0;
        if (taken)
            return dkb_fail(DK_EINVAL,
                            "dk_bench_register_body: %s: the counter name \"%s\" is "
                            "given twice or is one of the body's own measures",
                            body->name, c);
        memcpy(e.counters[i], c, clen + 1);
    }
    return dkb_registry_add(&e);
}

/* ------------------------------------------------------------------------ */
/* Measuring a body                                                          */
/* ------------------------------------------------------------------------ */

/* Resamples of the median's interval: cfg's, fewer for long series so
 * that the interval costs at most about 10^8 steps (still 100 at least). */
static size_t median_resamples(const dkb_config *cfg, size_t n)
{
    size_t cap = (size_t)1e8 / (n ? n : 1);
    size_t r = cfg->resamples < cap ? cfg->resamples : cap;
    return r < 100 ? 100 : r;
}

/* One measure's estimates: the flat summary and outliers of dkb_estimate,
 * and the median with its interval as the headline. */
static int estimate_median(const dkb_config *cfg, const dkb_result *r, dkb_measure *m)
{
    size_t n = r->n_samples;
    int rc = dkb_estimate(cfg, r->iterations, n, true, false, NULL, m);
    if (rc != 0)
        return rc;
    snprintf(m->estimator, sizeof m->estimator, "median");
    m->n_fit = n;
    memset(&m->ols_slope, 0, sizeof m->ols_slope);
    if (n == 1) { /* one run: its value, no spread */
        dkb_summary *s = &m->per_iter;
        s->mean = s->median = s->min = s->max = m->y[0];
        s->mean_ci.point = s->mean_ci.lo = s->mean_ci.hi = m->y[0];
        m->slope = s->mean_ci;
        return 0;
    }
    if (!dkb_median_ci(m->y, n, median_resamples(cfg, n), cfg->seed, 0.95, &m->slope)) {
        char why[512];
        snprintf(why, sizeof why, "%s", dkb_last_error());
        return dkb_fail(DK_ENOMEM, "estimating %s: %s", m->name, why);
    }
    return 0;
}

static bool measurement(double v) { return isfinite(v) && v >= 0; }

int dkb_measure_body(const dkb_config *cfg, const dkb_entry *e, dkb_result *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", e->name);
    const char *slash = strchr(e->name, '/');
    if (slash != NULL)
        snprintf(out->group, sizeof out->group, "%.*s", (int)(slash - e->name), e->name);
    out->n_measures = M_FIXED + e->n_counters;
    out->passes = 1;
    for (size_t i = 0; i < out->n_measures; i++) {
        dkb_measure *m = &out->m[i];
        snprintf(m->name, sizeof m->name, "%s",
                 i < M_FIXED ? fixed_name[i] : e->counters[i - M_FIXED]);
        snprintf(m->unit, sizeof m->unit, "%s", i < M_FIXED ? fixed_unit[i] : "");
        m->available = true;
    }
    size_t counted[DK_BENCH_MAX_COUNTERS] = {0};
    size_t want = cfg->runs ? cfg->runs : cfg->min_runs ? cfg->min_runs : 1, cap = 0;
    double wall = 0;
    int rc = 0;
    dk_bench_body_run run;
    for (size_t w = 0; w < cfg->warmup_runs && rc == 0; w++) {
        memset(&run, 0, sizeof run);
        run.size = sizeof run;
        run.warmup = 1;
        run.index = w;
        run.planned = cfg->warmup_runs;
        dkb_fail(0, "%s", "");
        rc = e->body(e->ctx, &run);
    }
    for (size_t i = 0; i < want && rc == 0; i++) {
        if (i == cap) {
            cap = cap ? 2 * cap : 16;
            double *x = realloc(out->iterations, cap * sizeof *x);
            if (x != NULL)
                out->iterations = x;
            for (size_t k = 0; x != NULL && k < out->n_measures; k++) {
                double *y = realloc(out->m[k].y, cap * sizeof *y);
                if (y == NULL)
                    x = NULL;
                else
                    out->m[k].y = y;
            }
            if (x == NULL) {
                rc = dkb_fail(DK_ENOMEM, "%s: out of memory for %zu runs", e->name, cap);
                break;
            }
        }
        memset(&run, 0, sizeof run);
        run.size = sizeof run;
        run.index = i;
        run.planned = want;
        dkb_fail(0, "%s", "");
        rc = e->body(e->ctx, &run);
        if (rc != 0)
            break;
        if (!measurement(run.wall_s) || !measurement(run.user_s) || !measurement(run.system_s)) {
            rc = dkb_fail(DK_EINVAL,
                          "%s: run %zu gave a time that is not a duration (wall %g s, "
                          "user %g s, system %g s)",
                          e->name, i + 1, run.wall_s, run.user_s, run.system_s);
            break;
        }
        out->iterations[i] = 1;
        out->m[M_TIME].y[i] = run.wall_s * 1e9;
        out->m[M_USER].y[i] = run.user_s * 1e9;
        out->m[M_SYSTEM].y[i] = run.system_s * 1e9;
        out->m[M_RSS].y[i] = (double)run.max_rss;
        for (size_t c = 0; c < e->n_counters; c++) {
            out->m[M_FIXED + c].y[i] = run.counted[c] ? (double)run.counters[c] : NAN;
            counted[c] += run.counted[c] != 0;
        }
        out->n_samples = i + 1;
        wall += run.wall_s;
        /* As hyperfine: the first run says how many fill the time. */
        if (i == 0 && cfg->runs == 0) {
            double fit = run.wall_s > 0 ? ceil(cfg->run_time / run.wall_s) : (double)cfg->max_runs;
            want = fit < (double)cfg->min_runs   ? cfg->min_runs
                   : fit > (double)cfg->max_runs ? cfg->max_runs
                                                 : (size_t)fit;
        }
    }
    if (rc != 0) {
        if (dkb_last_error()[0] == '\0')
            dkb_fail(rc, "%s: run %zu failed: %s", e->name, out->n_samples + 1, dk_strerror(rc));
        dkb_result_free(out);
        return rc;
    }
    out->measure_s = wall;
    if (cfg->runs)
        snprintf(out->stop_reason, sizeof out->stop_reason, "runs: %zu as asked", out->n_samples);
    else
        snprintf(out->stop_reason, sizeof out->stop_reason, "runs: %zu to fill %g s (%zu to %zu)",
                 out->n_samples, cfg->run_time, cfg->min_runs, cfg->max_runs);
    for (size_t c = 0; c < e->n_counters; c++) {
        dkb_measure *m = &out->m[M_FIXED + c];
        if (counted[c] == out->n_samples)
            continue;
        m->available = false;
        snprintf(m->why, sizeof m->why, "counted in %zu of %zu runs", counted[c], out->n_samples);
        free(m->y);
        m->y = NULL;
    }
    if ((rc = dkb_estimate_runs(cfg, out)) != 0)
        dkb_result_free(out);
    return rc;
}

int dkb_estimate_runs(const dkb_config *cfg, dkb_result *r)
{
    for (size_t i = 0; i < r->n_measures; i++)
        if (r->m[i].available && r->m[i].y != NULL) {
            int rc = estimate_median(cfg, r, &r->m[i]);
            if (rc != 0)
                return rc;
        }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* dk_bench_run                                                              */
/* ------------------------------------------------------------------------ */

struct dk_bench_results {
    dkb_run_info run;
    dkb_result *r;
    size_t n;
    char (*base_names)[256]; /* the baseline's results */
    size_t n_base;
};

void dkb_run_info_fill(dkb_run_info *run, const dkb_config *cfg, double noise, const char *baseline,
                       const dkb_source *src)
{
    memset(run, 0, sizeof *run);
    snprintf(run->backend, sizeof run->backend, "%s", src ? src->backend : "none");
    snprintf(run->cpu, sizeof run->cpu, "%s", src ? src->cpu : "");
    snprintf(run->cpu_model, sizeof run->cpu_model, "%s", src ? src->cpu_model : "");
    snprintf(run->why_no_counters, sizeof run->why_no_counters, "%s",
             src ? src->why_no_counters : "");
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm) != NULL)
        strftime(run->date, sizeof run->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(run->host, sizeof run->host) != 0)
        run->host[0] = '\0';
    run->host[sizeof run->host - 1] = '\0';
    run->seed = cfg->seed;
    run->noise_threshold = noise;
    run->target_precision = cfg->precision;
    snprintf(run->baseline, sizeof run->baseline, "%s", baseline ? baseline : "");
}

void dk_bench_options_init(dk_bench_options *o)
{
    if (o == NULL)
        return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->min_runs = 10;
    o->max_runs = 1000000;
    o->min_time = 3.0;
    o->noise = 0.01;
    o->seed = 1;
}

static const dkb_result *find_named(const dkb_result *rs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rs[i].name, name) == 0)
            return &rs[i];
    return NULL;
}

/* The in-process benchmarks' counters, opened at the first of them. */
static int open_source(dkb_source *src, bool *open, dkb_plan *plan)
{
    static const char *const events[] = {"instructions", "cycles", "branches", "branch-misses"};
    if (*open)
        return 0;
    if (dkb_source_open_dkperf(src) != 0 && src->self == NULL)
        return dkb_fail(DK_ENOMEM, "%s", dkb_last_error());
    *open = true;
    return dkb_plan_events(src, events, src->why_no_counters[0] ? 0 : 4, plan);
}

int dk_bench_run(const dk_bench_options *opt, dk_bench_results **out)
{
    if (out == NULL)
        return dkb_fail(DK_EINVAL, "dk_bench_run: out must not be NULL");
    *out = NULL;
    dk_bench_options o;
    dk_bench_options_init(&o);
    if (opt != NULL) {
        int rc = check_size(opt, opt->size, sizeof o, "dk_bench_run: options");
        if (rc != 0)
            return rc;
        memcpy(&o, opt, sizeof o);
    }
    if (!(o.noise >= 0 && o.noise <= 1) || !(o.min_time > 0 && o.min_time <= 1e6) ||
        o.min_runs == 0 || o.max_runs < o.min_runs || o.runs > o.max_runs)
        return dkb_fail(DK_EINVAL,
                        "dk_bench_run: options out of range: noise %g (0 to 1), "
                        "min_time %g (above 0, at most 1e6 s), runs %zu, min_runs %zu, "
                        "max_runs %zu (1 <= min_runs <= max_runs, runs <= max_runs)",
                        o.noise, o.min_time, o.runs, o.min_runs, o.max_runs);
    const char *dir = o.results_dir ? o.results_dir : DK_BENCH_RESULTS_DIR;
    dkb_config cfg;
    dkb_config_defaults(&cfg);
    cfg.seed = o.seed;
    cfg.runs = o.runs;
    cfg.min_runs = o.min_runs;
    cfg.max_runs = o.max_runs;
    cfg.warmup_runs = o.warmup_runs;
    cfg.run_time = o.min_time;

    size_t total = dkb_registry_count(), chosen = 0;
    for (size_t i = 0; i < total; i++)
        chosen += o.name == NULL || strcmp(dkb_registry_at(i)->name, o.name) == 0;
    if (chosen == 0)
        return dkb_fail(DK_EINVAL, "dk_bench_run: %s%s%s", o.name ? "no benchmark named \"" : "",
                        o.name ? o.name : "no benchmark is registered", o.name ? "\"" : "");
    dk_bench_results *res = calloc(1, sizeof *res);
    if (res == NULL || (res->r = calloc(chosen, sizeof *res->r)) == NULL) {
        free(res);
        return dkb_fail(DK_ENOMEM, "dk_bench_run: out of memory");
    }
    *out = res;
    dkb_run_info_fill(&res->run, &cfg, o.noise, o.baseline, NULL);
    dkb_result *base = NULL;
    size_t n_base = 0;
    bool made_dir = false, src_open = false;
    dkb_source src;
    dkb_plan plan;
    memset(&src, 0, sizeof src);
    int rc = 0;
    if (o.baseline != NULL && (rc = dkb_baseline_load(dir, o.baseline, &base, &n_base)) != 0)
        return rc;
    if (n_base > 0) {
        if ((res->base_names = calloc(n_base, sizeof *res->base_names)) == NULL) {
            rc = dkb_fail(DK_ENOMEM, "dk_bench_run: out of memory");
            goto done;
        }
        res->n_base = n_base;
        for (size_t i = 0; i < n_base; i++)
            memcpy(res->base_names[i], base[i].name, sizeof res->base_names[i]);
    }
    if (o.save_baseline != NULL && (rc = dkb_baseline_check(dir, o.save_baseline, &made_dir)) != 0)
        goto done;
    for (size_t i = 0; i < total && rc == 0; i++) {
        const dkb_entry *e = dkb_registry_at(i);
        if (o.name != NULL && strcmp(e->name, o.name) != 0)
            continue;
        dkb_result *r = &res->r[res->n];
        if (e->body != NULL) {
            rc = dkb_measure_body(&cfg, e, r);
        } else if ((rc = open_source(&src, &src_open, &plan)) == 0) {
            rc = dkb_measure_one(&cfg, &src, &plan, e, r);
            dkb_run_info_fill(&res->run, &cfg, o.noise, o.baseline, &src);
            /* No argv to re-execute: the calling process is the one measured. */
            r->n_processes = 1;
            snprintf(r->one_process, sizeof r->one_process,
                     "dk_bench_run measures in the calling process");
        }
        if (rc != 0)
            break;
        res->n++;
        const dkb_result *old = base ? find_named(base, n_base, r->name) : NULL;
        if (old != NULL)
            dkb_compare_baseline(r, old, o.noise, cfg.resamples, cfg.seed);
        else if (base != NULL) {
            r->not_in_baseline = true;
            for (size_t q = 0; q < r->n_measures; q++)
                snprintf(r->m[q].no_change, sizeof r->m[q].no_change,
                         "the baseline has no result of this name");
        }
        if (o.on_result != NULL)
            rc = o.on_result(o.arg, res, res->n - 1);
    }
    if (rc == 0 && o.save_baseline != NULL) {
        const dkb_result **rp = malloc(res->n * sizeof *rp);
        if (rp == NULL) {
            rc = dkb_fail(DK_ENOMEM, "dk_bench_run: out of memory");
        } else {
            for (size_t i = 0; i < res->n; i++)
                rp[i] = &res->r[i];
            rc = dkb_baseline_save(dir, o.save_baseline, &res->run, rp, res->n);
            free(rp);
            made_dir = made_dir && rc != 0;
        }
    }
done:
    if (made_dir)
        rmdir(dir); /* nothing saved in it */
    if (src_open)
        dkb_source_close_dkperf(&src);
    for (size_t i = 0; i < n_base; i++)
        dkb_result_free(&base[i]);
    free(base);
    return rc;
}

size_t dk_bench_results_count(const dk_bench_results *r) { return r ? r->n : 0; }

const char *dk_bench_results_name(const dk_bench_results *r, size_t index)
{
    return r != NULL && index < r->n ? r->r[index].name : NULL;
}

void dk_bench_results_free(dk_bench_results *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n; i++)
        dkb_result_free(&r->r[i]);
    free(r->r);
    free(r->base_names);
    free(r);
}

size_t dk_bench_results_baseline_count(const dk_bench_results *r) { return r ? r->n_base : 0; }

const char *dk_bench_results_baseline_name(const dk_bench_results *r, size_t index)
{
    return r != NULL && index < r->n_base ? r->base_names[index] : NULL;
}

int dk_bench_results_estimate(const dk_bench_results *r, size_t index, const char *measure,
                              dk_bench_estimate *out)
{
    if (r == NULL || measure == NULL || out == NULL)
        return dkb_fail(DK_EINVAL, "dk_bench_results_estimate: NULL argument");
    /* A caller built before not_in_baseline was added gives the size that
     * ends at no_change: it gets the members it knows. */
    size_t known = out->size >= offsetof(dk_bench_estimate, not_in_baseline) &&
                           out->size < sizeof *out
                       ? out->size
                       : sizeof *out;
    int rc = check_size(out, out->size, known, "dk_bench_results_estimate");
    if (rc != 0)
        return rc;
    if (index >= r->n)
        return dkb_fail(DK_EINVAL, "dk_bench_results_estimate: index %zu, of %zu results", index,
                        r->n);
    const dkb_result *res = &r->r[index];
    const dkb_measure *m = NULL;
    for (size_t i = 0; i < res->n_measures && m == NULL; i++)
        if (strcmp(res->m[i].name, measure) == 0)
            m = &res->m[i];
    if (m == NULL)
        return dkb_fail(DK_ENOEVENT, "%s: no measure named \"%s\"", res->name, measure);
    if (!m->available || m->y == NULL)
        return dkb_fail(DK_EUNAVAILABLE, "%s: %s was not measured: %s", res->name, measure,
                        m->why[0] ? m->why : "no samples");
    size_t size = out->size;
    dk_bench_estimate e;
    memset(&e, 0, sizeof e);
    e.size = size;
    e.unit = m->unit;
    e.n = res->n_samples;
    e.point = m->slope.point;
    e.lo = m->slope.lo;
    e.hi = m->slope.hi;
    e.estimator = m->estimator;
    e.mean = m->per_iter.mean;
    e.stddev = m->per_iter.stddev;
    e.median = m->per_iter.median;
    e.min = m->per_iter.min;
    e.max = m->per_iter.max;
    e.mild = m->outliers.low_mild + m->outliers.high_mild;
    e.severe = m->outliers.low_severe + m->outliers.high_severe;
    e.has_change = m->has_change;
    e.change = m->change.rel.point;
    e.change_lo = m->change.rel.lo;
    e.change_hi = m->change.rel.hi;
    e.p_value = m->change.p_value;
    e.verdict = (dk_bench_verdict)m->change.verdict;
    e.no_change = m->no_change;
    e.not_in_baseline = res->not_in_baseline;
    e.processes = res->n_processes;
    e.between_share = m->procs.n >= 2 ? m->procs.between_share : NAN;
    e.resolution = m->has_change ? m->change.resolution : 0;
    e.change_by_process = m->change_by_process;
    /* A caller that does not know the processes does not know the verdict
     * that needs them either. */
    if (known < offsetof(dk_bench_estimate, processes) && e.verdict == DK_BENCH_UNRESOLVED)
        e.verdict = DK_BENCH_NO_CHANGE;
    memset(out, 0, size);
    memcpy(out, &e, known);
    return 0;
}
