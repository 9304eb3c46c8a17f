/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * harness.c - the measurement loop of libdkbench: the state machine behind
 * dk_bench_next (warm-up, linear sampling, adaptive stop, replayed passes)
 * and the event passes; the registry is in registry.c, the estimates of
 * the samples in estimate.c; see harness.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/error.h"
#include "libdkbench/harness.h"

/* ------------------------------------------------------------------------ */
/* The state of a benchmark being run                                        */
/* ------------------------------------------------------------------------ */

enum phase { PHASE_WARMUP, PHASE_MEASURE, PHASE_REPLAY };

/* Resamples of the stop rule's interim intervals: enough to see whether a
 * half-width is near the target, cheap enough to run after every sample. */
#define CHECK_RESAMPLES 200
/* Absolute floor of an event's CI half-width, per iteration: counts near
 * zero (misses of a predictable loop) are precise enough at that. */
#define COUNT_FLOOR 1e-3

struct dk_bench {
    const dkb_entry *e;
    dkb_source *src;
    const dkb_config *cfg;
    enum phase phase;
    int err;
    /* The open events of this pass. */
    size_t nev;
    size_t cycles_at; /* index of cycles in this pass, or SIZE_MAX */
    bool levels;      /* split cycles by performance level */
    /* The sample in progress. */
    bool in_sample;
    uint64_t cur;
    uint64_t t0;
    uint64_t v0[DK_MAX_EVENTS];
    uint64_t l0[DKB_MAX_LEVELS * DK_MAX_EVENTS];
    /* Per-sample setup and throughput, set by the benchmark. */
    dk_bench_setup_fn setup;
    void *setup_arg;
    dkb_throughput_kind tkind;
    double tput;
    /* Samples of this pass. */
    size_t n, cap;
    double *x, *t, *y[DK_MAX_EVENTS];
    unsigned char *pre; /* per sample: the thread was switched out */
    size_t n_pre;
    bool switches; /* the source counts context switches */
    uint64_t sw0;
    double level_cycles[DKB_MAX_LEVELS];
    /* Warm-up. */
    uint64_t phase_start;
    uint64_t wu_next;
    double wu_prev;  /* per-iteration ns of the previous warm-up sample, 0 if none */
    double per_iter; /* the warm-up's estimate */
    bool phase_started;
    /* Schedule. */
    bool flat;
    uint64_t d;     /* linear: sample i runs i * d; flat: every sample runs d */
    size_t limit;   /* samples this phase may take; 0: no limit */
    size_t fixed_n; /* cfg->iterations: the samples that hold them */
    uint64_t rest;  /* cfg->iterations: added to the last one */
    size_t phase_taken;
    const double *replay_x;
    size_t replay_n;
    char stop_reason[160];
};

void *dk_bench_context(const dk_bench *b) { return b ? b->e->ctx : NULL; }
const char *dk_bench_name(const dk_bench *b) { return b ? b->e->name : ""; }

void dk_bench_set_setup(dk_bench *b, dk_bench_setup_fn fn, void *arg)
{
    if (b == NULL)
        return;
    b->setup = fn;
    b->setup_arg = arg;
}

void dk_bench_set_bytes(dk_bench *b, uint64_t bytes_per_iteration)
{
    if (b == NULL)
        return;
    b->tkind = DKB_THROUGHPUT_BYTES;
    b->tput = (double)bytes_per_iteration;
}

void dk_bench_set_elements(dk_bench *b, uint64_t elements_per_iteration)
{
    if (b == NULL)
        return;
    b->tkind = DKB_THROUGHPUT_ELEMENTS;
    b->tput = (double)elements_per_iteration;
}

static void free_samples(dk_bench *b)
{
    free(b->x);
    free(b->t);
    free(b->pre);
    b->pre = NULL;
    b->n_pre = 0;
    for (size_t i = 0; i < DK_MAX_EVENTS; i++)
        free(b->y[i]);
    b->x = b->t = NULL;
    memset(b->y, 0, sizeof b->y);
    b->n = b->cap = 0;
}

static int grow_samples(dk_bench *b)
{
    size_t cap = b->cap ? 2 * b->cap : 64;
    double *x = realloc(b->x, cap * sizeof *x);
    if (x == NULL)
        return DK_ENOMEM;
    b->x = x;
    double *t = realloc(b->t, cap * sizeof *t);
    if (t == NULL)
        return DK_ENOMEM;
    b->t = t;
    unsigned char *pre = realloc(b->pre, cap);
    if (pre == NULL)
        return DK_ENOMEM;
    b->pre = pre;
    for (size_t i = 0; i < b->nev; i++) {
        double *y = realloc(b->y[i], cap * sizeof *y);
        if (y == NULL)
            return DK_ENOMEM;
        b->y[i] = y;
    }
    b->cap = cap;
    return 0;
}

static int read_source(dk_bench *b, bool end, uint64_t *ns, uint64_t *v, uint64_t *l)
{
    if (b->err != 0) /* once failed, the source is not read again */
        return b->err;
    int rc = b->src->ops->sample(b->src->self, end, ns, v, b->levels ? l : NULL);
    if (rc != 0) {
        char why[512];
        snprintf(why, sizeof why, "%s", dkb_last_error()[0] ? dkb_last_error() : dk_strerror(rc));
        b->err = dkb_fail(rc, "%s: reading the clock and counters failed: %s", b->e->name, why);
    }
    return rc;
}

/* The clock alone, between samples (the budget and the warm-up bound). */
static uint64_t now(dk_bench *b)
{
    uint64_t ns = 0, v[DK_MAX_EVENTS], l[DKB_MAX_LEVELS * DK_MAX_EVENTS];
    if (read_source(b, true, &ns, v, l) != 0)
        return 0;
    return ns;
}

static void end_sample(dk_bench *b)
{
    uint64_t t1 = 0, v1[DK_MAX_EVENTS], l1[DKB_MAX_LEVELS * DK_MAX_EVENTS];
    b->in_sample = false;
    if (read_source(b, true, &t1, v1, l1) != 0)
        return;
    if (b->n == b->cap && grow_samples(b) != 0) {
        b->err = dkb_fail(DK_ENOMEM, "%s: out of memory for %zu samples", b->e->name, b->n + 1);
        return;
    }
    b->x[b->n] = (double)b->cur;
    b->t[b->n] = (double)(t1 - b->t0);
    uint64_t sw1 = b->switches ? b->src->ops->switches(b->src->self) : UINT64_MAX;
    b->pre[b->n] = sw1 != UINT64_MAX && b->sw0 != UINT64_MAX && sw1 != b->sw0;
    b->n_pre += b->pre[b->n];
    for (size_t i = 0; i < b->nev; i++)
        b->y[i][b->n] = (double)(v1[i] - b->v0[i]);
    if (b->levels)
        for (size_t l = 0; l < b->src->n_levels && l < DKB_MAX_LEVELS; l++)
            b->level_cycles[l] +=
                (double)(l1[l * b->nev + b->cycles_at] - b->l0[l * b->nev + b->cycles_at]);
    b->n++;
    b->phase_taken++;
}

/* Whether every estimate of this pass is within the target precision. */
static bool precise(dk_bench *b, double *time_half)
{
    const dkb_config *c = b->cfg;
    *time_half = INFINITY;
    for (size_t i = 0; i <= b->nev; i++) {
        const double *y = i == 0 ? b->t : b->y[i - 1];
        dkb_interval ci;
        bool ok;
        if (b->flat) {
            double *v = malloc(b->n * sizeof *v);
            if (v == NULL)
                return false;
            for (size_t k = 0; k < b->n; k++)
                v[k] = y[k] / b->x[k];
            dkb_summary s;
            ok = dkb_summarize(v, b->n, CHECK_RESAMPLES, c->seed, 0.95, &s);
            free(v);
            ci = s.mean_ci;
        } else if (i == 0) { /* time: the estimator of the answer, see dkb_estimate */
            ok = false;
            double *xs = malloc(2 * b->n * sizeof *xs);
            if (xs == NULL)
                return false;
            size_t k = dkb_unpreempted(b->x, y, b->n_pre ? b->pre : NULL, b->n, xs, xs + b->n);
            if (k > 0)
                ok = dkb_theil_sen(xs, xs + b->n, k, 0.95, &ci, NULL);
            else
                ok = dkb_theil_sen(b->x, y, b->n, 0.95, &ci, NULL);
            free(xs);
        } else {
            ok = dkb_slope_ci(b->x, y, b->n, CHECK_RESAMPLES, c->seed, 0.95, &ci);
        }
        if (!ok)
            return false;
        double half = (ci.hi - ci.lo) / 2;
        double target = c->precision * fabs(ci.point);
        if (i == 0)
            *time_half = ci.point != 0 ? half / fabs(ci.point) : INFINITY;
        else if (target < COUNT_FLOOR)
            target = COUNT_FLOOR;
        if (!(half <= target))
            return false;
    }
    return true;
}

/* The warm-up's largest sample: past it the body is taken not to run. */
#define WARMUP_MAX_ITERATIONS ((uint64_t)1 << 40)

/* The iteration count of the next sample of this phase, 0 when it is over. */
static uint64_t plan_next(dk_bench *b)
{
    const dkb_config *c = b->cfg;
    if (b->limit != 0 && b->phase_taken >= b->limit)
        return 0;
    switch (b->phase) {
    case PHASE_WARMUP: {
        if (b->n == 0)
            return b->wu_next = 1;
        double p = b->t[b->n - 1] / b->x[b->n - 1];
        uint64_t t = now(b);
        if (b->err)
            return 0;
        double elapsed = (double)(t - b->phase_start) * 1e-9;
        bool settled = b->wu_prev > 0 && fabs(p - b->wu_prev) <= 0.05 * b->wu_prev &&
                       elapsed >= c->warmup_bound / 10;
        b->wu_prev = p;
        b->per_iter = p;
        /* Stop when settled, or when the next doubling would end past
         * the bound. */
        if (settled || elapsed + 2.0 * (double)b->wu_next * p * 1e-9 > c->warmup_bound)
            return 0;
        /* 2^40 iterations within the bound is under 0.1 ps each: the body
         * does not run per iteration, and doubling on would wrap to 0. */
        if (b->wu_next >= WARMUP_MAX_ITERATIONS) {
            b->err = dkb_fail(DK_ESTATE,
                              "%s: %llu iterations took %.3g ns: the time does not "
                              "grow with the iteration count; the body must run its "
                              "iterations (a function that ignores its count, or a "
                              "body the compiler removed?)",
                              b->e->name, (unsigned long long)b->wu_next, b->t[b->n - 1]);
            return 0;
        }
        return b->wu_next *= 2;
    }
    case PHASE_REPLAY:
        return b->n < b->replay_n ? (uint64_t)b->replay_x[b->n] : 0;
    case PHASE_MEASURE:
        break;
    }
    if (c->iterations != 0) {
        if (b->n >= b->fixed_n) {
            snprintf(b->stop_reason, sizeof b->stop_reason,
                     "iterations: %llu as asked, in %zu samples", (unsigned long long)c->iterations,
                     b->n);
            return 0;
        }
        uint64_t k = b->flat ? b->d : (uint64_t)(b->n + 1) * b->d;
        return b->n + 1 == b->fixed_n ? k + b->rest : k;
    }
    size_t want = c->samples;
    if (want != 0 && b->n >= want) {
        snprintf(b->stop_reason, sizeof b->stop_reason, "samples: %zu as asked", b->n);
        return 0;
    }
    if (want == 0 && b->n >= c->min_samples) {
        uint64_t t = now(b);
        if (b->err)
            return 0;
        double elapsed = (double)(t - b->phase_start) * 1e-9;
        double half = INFINITY;
        /* Samples taken within a few ms share one state of the machine (one
         * time slice, one frequency, one neighbour): their interval says
         * nothing of the next few ms. Precision counts only once they span
         * min_time. */
        if (elapsed >= c->min_time && precise(b, &half)) {
            snprintf(b->stop_reason, sizeof b->stop_reason,
                     "precision reached: every CI within +-%g%% after %zu samples (%.3g s)",
                     100 * c->precision, b->n, elapsed);
            return 0;
        }
        if (elapsed >= c->time_budget || b->n >= c->max_samples) {
            snprintf(b->stop_reason, sizeof b->stop_reason,
                     "%s: %zu samples in %.3g s, time CI +-%.2g%% (target +-%g%%)",
                     elapsed >= c->time_budget ? "time budget spent" : "sample limit reached", b->n,
                     elapsed, 100 * half, 100 * c->precision);
            return 0;
        }
    }
    return b->flat ? b->d : (uint64_t)(b->n + 1) * b->d;
}

uint64_t dk_bench_next(dk_bench *b)
{
    if (b == NULL)
        return 0;
    if (!b->phase_started) {
        b->phase_started = true;
        if (b->phase != PHASE_REPLAY) {
            b->phase_start = now(b);
        }
    }
    if (b->in_sample)
        end_sample(b);
    if (b->err)
        return 0;
    uint64_t k = plan_next(b);
    if (k == 0 || b->err)
        return 0;
    if (b->setup != NULL)
        b->setup(b->setup_arg);
    b->cur = k;
    if (read_source(b, false, &b->t0, b->v0, b->l0) != 0)
        return 0;
    b->sw0 = b->switches ? b->src->ops->switches(b->src->self) : UINT64_MAX;
    b->in_sample = true;
    return k;
}

/* One phase: the benchmark function once (loop form), or once per sample
 * (function form). */
static void run_phase(dk_bench *b)
{
    b->phase_started = false;
    b->phase_taken = 0;
    if (b->e->loop != NULL) {
        b->e->loop(b);
        if (b->err != 0)
            return;
        /* A sample still open: the loop was left by a break, return or goto,
         * so that sample ran fewer iterations than it counts. No call at
         * all: the function returned before its loop. Either way the
         * samples would not be what they claim. */
        if (b->in_sample) {
            b->in_sample = false;
            b->err = dkb_fail(DK_ESTATE,
                              "%s: the benchmark function left DK_BENCH_LOOP early "
                              "(a break, return or goto in its body): a sample of "
                              "%llu iterations did not run them all; let the loop "
                              "run to its end",
                              b->e->name, (unsigned long long)b->cur);
        } else if (!b->phase_started) {
            b->err = dkb_fail(DK_ESTATE,
                              "%s: the benchmark function returned without running "
                              "DK_BENCH_LOOP(b): nothing was measured; run the loop "
                              "once in every call",
                              b->e->name);
        }
    } else {
        for (uint64_t k; (k = dk_bench_next(b)) != 0;)
            b->e->iter(b->e->ctx, k);
    }
}

/* ------------------------------------------------------------------------ */
/* Event plan                                                                */
/* ------------------------------------------------------------------------ */

int dkb_plan_events(dkb_source *src, const char *const *events, size_t n, dkb_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    if (n > DK_MAX_EVENTS)
        return dkb_fail(DK_EINVAL, "%zu events asked; at most %d can be measured", n,
                        DK_MAX_EVENTS);
    plan->n = n;
    plan->passes = 1;
    const char *pass_names[DK_MAX_EVENTS];
    size_t in_pass = 0, pass = 0;
    for (size_t i = 0; i < n; i++) {
        plan->name[i] = events[i];
        /* Alone first: an event that cannot open alone is unavailable. */
        int rc = src->ops->open(src->self, &events[i], 1);
        if (rc != 0) {
            const char *why = dkb_last_error()[0] ? dkb_last_error() : dk_last_error();
            snprintf(plan->why[i], sizeof plan->why[i], "%s: %s", dk_error_name(rc),
                     why[0] ? why : dk_strerror(rc));
            continue;
        }
        src->ops->close(src->self);
        plan->available[i] = true;
        /* Then with the events of the current pass; a new pass when they
         * do not fit together (never multiplexed). */
        bool fits = src->counters == 0 || in_pass < src->counters;
        if (fits && in_pass > 0) {
            pass_names[in_pass] = events[i];
            rc = src->ops->open(src->self, pass_names, in_pass + 1);
            if (rc == 0)
                src->ops->close(src->self);
            fits = rc == 0;
        }
        if (!fits) {
            pass++;
            in_pass = 0;
        }
        pass_names[in_pass++] = events[i];
        plan->pass_of[i] = pass;
    }
    plan->passes = pass + 1;
    return 0;
}

/* The names of pass p, in request order; returns how many. */
static size_t pass_events(const dkb_plan *plan, size_t p, const char **names, size_t *index)
{
    size_t k = 0;
    for (size_t i = 0; i < plan->n; i++)
        if (plan->available[i] && plan->pass_of[i] == p) {
            names[k] = plan->name[i];
            index[k++] = i;
        }
    return k;
}

static bool is_cycles(const char *name)
{
    return strcasecmp(name, "cycles") == 0 || strcasecmp(name, "cpu-cycles") == 0 ||
           strcasecmp(name, "FIXED_CYCLES") == 0;
}

static int open_pass(dk_bench *b, const dkb_plan *plan, size_t p, size_t *index)
{
    const char *names[DK_MAX_EVENTS];
    b->nev = pass_events(plan, p, names, index);
    b->cycles_at = SIZE_MAX;
    for (size_t i = 0; i < b->nev; i++)
        if (is_cycles(names[i]))
            b->cycles_at = i;
    b->levels = b->src->n_levels > 1 && b->cycles_at != SIZE_MAX;
    int rc = b->src->ops->open(b->src->self, names, b->nev);
    b->switches = rc == 0 && b->src->ops->switches != NULL &&
                  b->src->ops->switches(b->src->self) != UINT64_MAX;
    if (rc != 0)
        return dkb_fail(rc, "%s: opening pass %zu of the events failed: %s", b->e->name, p + 1,
                        dk_last_error()[0] ? dk_last_error() : dk_strerror(rc));
    return 0;
}

static void init_result(dkb_result *r, const dkb_entry *e, const dkb_plan *plan)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", e->name);
    const char *slash = strchr(e->name, '/');
    if (slash != NULL)
        snprintf(r->group, sizeof r->group, "%.*s", (int)(slash - e->name), e->name);
    r->n_measures = 1 + plan->n;
    snprintf(r->m[0].name, sizeof r->m[0].name, "time");
    snprintf(r->m[0].unit, sizeof r->m[0].unit, "ns");
    r->m[0].available = true;
    for (size_t i = 0; i < plan->n; i++) {
        dkb_measure *m = &r->m[1 + i];
        snprintf(m->name, sizeof m->name, "%s", plan->name[i]);
        m->available = plan->available[i];
        if (!m->available)
            snprintf(m->why, sizeof m->why, "%s", plan->why[i]);
    }
    r->passes = plan->passes;
}

/* Move this pass's samples of event k into measure m. */
static void take_samples(dk_bench *b, size_t k, dkb_measure *m)
{
    m->y = b->y[k];
    b->y[k] = NULL;
}

static void fill_levels(dk_bench *b, dkb_result *r)
{
    double total = 0;
    size_t n = b->src->n_levels < DKB_MAX_LEVELS ? b->src->n_levels : DKB_MAX_LEVELS;
    for (size_t l = 0; l < n; l++)
        total += b->level_cycles[l];
    if (total <= 0)
        return;
    size_t used = 0;
    r->n_levels = n;
    for (size_t l = 0; l < n; l++) {
        snprintf(r->level_name[l], sizeof r->level_name[l], "%s", b->src->level_name[l]);
        r->level_cycle_share[l] = b->level_cycles[l] / total;
        used += b->level_cycles[l] > 0;
    }
    r->moved_levels = used > 1;
}

/* Pick d (or flat sampling) from the warm-up's per-iteration estimate. */
static void schedule(dk_bench *b)
{
    const dkb_config *c = b->cfg;
    double p = b->per_iter > 0 ? b->per_iter : 1;
    double budget = c->time_budget * 1e9;
    size_t plan_n = c->samples ? c->samples : c->max_samples;
    double tri = (double)plan_n * (double)(plan_n + 1) / 2;
    double d = floor(budget / (p * tri));
    /* Counts stay exact in a double and far from 2^64. */
    if (d > 9007199254740992.0 / (double)(plan_n + 1))
        d = floor(9007199254740992.0 / (double)(plan_n + 1));
    size_t min_n = c->samples ? c->samples : c->min_samples;
    if (c->iterations != 0) {
        /* Exactly that many: 1d, 2d, ... S d, the rest in the last; as
         * many samples as hold one iteration more each, 2 at least. */
        uint64_t n = c->iterations, s = min_n;
        while (s > 2 && s * (s + 1) / 2 > n)
            s--;
        b->flat = s * (s + 1) / 2 > n; /* 1 or 2 iterations: one a sample */
        b->fixed_n = b->flat ? (size_t)n : (size_t)s;
        b->d = b->flat ? 1 : n / (s * (s + 1) / 2);
        b->rest = b->flat ? 0 : n - b->d * (s * (s + 1) / 2);
        return;
    }
    double min_tri = (double)min_n * (double)(min_n + 1) / 2;
    b->flat = false;
    if (d >= 1) {
        b->d = (uint64_t)d;
    } else if (p * min_tri <= budget) {
        b->d = 1; /* the budget or precision stops it before plan_n */
    } else {
        /* One iteration is too slow for a linear series: every sample runs
         * the same count, the estimate is the mean per iteration. */
        b->flat = true;
        double k = floor(budget / (p * (double)min_n));
        b->d = k >= 1 ? (uint64_t)k : 1;
    }
}

static int finish(dk_bench *b, int rc)
{
    free_samples(b);
    return rc;
}

int dkb_measure_one(const dkb_config *cfg, dkb_source *src, const dkb_plan *plan,
                    const dkb_entry *e, dkb_result *out)
{
    dk_bench b;
    memset(&b, 0, sizeof b);
    b.e = e;
    b.src = src;
    b.cfg = cfg;
    init_result(out, e, plan);
    size_t index[DK_MAX_EVENTS];

    int rc = open_pass(&b, plan, 0, index);
    if (rc != 0)
        goto fail;
    /* Warm-up: its samples only give the per-iteration estimate. */
    b.phase = PHASE_WARMUP;
    run_phase(&b);
    uint64_t t_wu_end = now(&b);
    out->warmup_s = b.err ? 0 : (double)(t_wu_end - b.phase_start) * 1e-9;
    b.n = b.n_pre = 0;
    memset(b.level_cycles, 0, sizeof b.level_cycles);
    if (b.err) {
        src->ops->close(src->self);
        rc = b.err;
        goto fail;
    }
    schedule(&b);
    b.phase = PHASE_MEASURE;
    run_phase(&b);
    uint64_t t_end = now(&b);
    src->ops->close(src->self);
    if (b.err) {
        rc = b.err;
        goto fail;
    }
    out->measure_s = (double)(t_end - b.phase_start) * 1e-9;
    out->n_samples = b.n;
    out->iterations = b.x;
    b.x = NULL;
    out->m[0].y = b.t;
    b.t = NULL;
    out->switches_counted = b.switches;
    out->n_preempted = b.n_pre;
    out->preempted = b.pre;
    b.pre = NULL;
    for (size_t k = 0; k < b.nev; k++)
        take_samples(&b, k, &out->m[1 + index[k]]);
    if (b.levels)
        fill_levels(&b, out);
    snprintf(out->stop_reason, sizeof out->stop_reason, "%s", b.stop_reason);
    out->throughput_kind = b.tkind;
    out->throughput_per_iter = b.tput;

    /* Later passes replay the first pass's iteration counts. */
    for (size_t p = 1; p < plan->passes; p++) {
        free_samples(&b);
        rc = open_pass(&b, plan, p, index);
        if (rc != 0)
            goto fail;
        b.phase = PHASE_REPLAY;
        b.replay_x = out->iterations;
        b.replay_n = out->n_samples;
        run_phase(&b);
        src->ops->close(src->self);
        if (b.err) {
            rc = b.err;
            goto fail;
        }
        if (b.n != out->n_samples) {
            rc = dkb_fail(DK_ESTATE,
                          "%s: pass %zu took %zu samples, not the %zu of the first: "
                          "the benchmark function must run DK_BENCH_LOOP to its end",
                          e->name, p + 1, b.n, out->n_samples);
            goto fail;
        }
        for (size_t k = 0; k < b.nev; k++)
            take_samples(&b, k, &out->m[1 + index[k]]);
        if (out->n_levels == 0 && b.levels)
            fill_levels(&b, out);
    }
    rc = dkb_estimate_all(cfg, out, b.flat);
    if (rc != 0)
        goto fail;
    return finish(&b, 0);
fail:
    dkb_result_free(out);
    return finish(&b, rc);
}

int dkb_measure_interleaved(const dkb_config *cfg, dkb_source *src, const dkb_plan *plan,
                            const dkb_entry *e, size_t k, dkb_result *out)
{
    int rc = 0;
    size_t index[DK_MAX_EVENTS];
    dk_bench *b = calloc(k, sizeof *b);
    if (b == NULL)
        return dkb_fail(DK_ENOMEM, "out of memory for %zu interleaved benchmarks", k);
    for (size_t j = 0; j < k; j++) {
        b[j].e = &e[j];
        b[j].src = src;
        b[j].cfg = cfg;
        init_result(&out[j], &e[j], plan);
    }
    rc = open_pass(&b[0], plan, 0, index);
    if (rc != 0)
        goto out;
    /* Warm each up, and take the slowest for the common schedule. */
    double slowest = 0;
    for (size_t j = 0; j < k; j++) {
        b[j].nev = b[0].nev;
        b[j].cycles_at = b[0].cycles_at;
        b[j].phase = PHASE_WARMUP;
        uint64_t t0 = now(&b[j]);
        run_phase(&b[j]);
        out[j].warmup_s = (double)(now(&b[j]) - t0) * 1e-9;
        if (b[j].err) {
            rc = b[j].err;
            break;
        }
        b[j].n = b[j].n_pre = 0;
        b[j].switches = b[0].switches;
        if (b[j].per_iter > slowest)
            slowest = b[j].per_iter;
    }
    /* Every alternative gets the budget for the same samples. */
    dkb_config c = *cfg;
    c.samples = cfg->samples ? cfg->samples : cfg->max_samples / 2;
    if (rc == 0) {
        b[0].per_iter = slowest * (double)k;
        b[0].cfg = &c;
        schedule(&b[0]);
        for (size_t s = 0; s < c.samples && rc == 0; s++)
            for (size_t j = 0; j < k && rc == 0; j++) {
                b[j].cfg = &c;
                b[j].flat = b[0].flat;
                b[j].d = b[0].d;
                b[j].phase = PHASE_MEASURE;
                b[j].limit = 1;
                /* Each one's own share of the group's time: what
                 * --processes weighs against the budget (a slow body). */
                uint64_t t0 = now(&b[j]);
                run_phase(&b[j]);
                out[j].measure_s += (double)(now(&b[j]) - t0) * 1e-9;
                rc = b[j].err;
            }
        for (size_t j = 0; j < k && rc == 0; j++) {
            dkb_result *r = &out[j];
            r->n_samples = b[j].n;
            r->iterations = b[j].x;
            b[j].x = NULL;
            r->m[0].y = b[j].t;
            b[j].t = NULL;
            r->switches_counted = b[j].switches;
            r->n_preempted = b[j].n_pre;
            r->preempted = b[j].pre;
            b[j].pre = NULL;
            for (size_t q = 0; q < b[j].nev; q++)
                take_samples(&b[j], q, &r->m[1 + index[q]]);
            snprintf(r->stop_reason, sizeof r->stop_reason,
                     "interleaved with %zu others: %zu samples each%s", k - 1, r->n_samples,
                     plan->passes > 1 ? ", every pass" : "");
            r->throughput_kind = b[j].tkind;
            r->throughput_per_iter = b[j].tput;
        }
    }
    src->ops->close(src->self);
    /* Events that did not fit the first pass: each later pass replays the
     * first's iteration counts, still alternating sample by sample, so the
     * ratios of every event come from the same interleaved schedule. */
    for (size_t p = 1; p < plan->passes && rc == 0; p++) {
        for (size_t j = 0; j < k; j++)
            free_samples(&b[j]);
        rc = open_pass(&b[0], plan, p, index);
        if (rc != 0)
            break;
        for (size_t j = 0; j < k; j++) {
            b[j].nev = b[0].nev;
            b[j].cycles_at = b[0].cycles_at;
            b[j].switches = false;
            b[j].phase = PHASE_REPLAY;
            b[j].replay_x = out[j].iterations;
            b[j].replay_n = out[j].n_samples;
        }
        for (size_t s = 0; s < out[0].n_samples && rc == 0; s++)
            for (size_t j = 0; j < k && rc == 0; j++) {
                run_phase(&b[j]);
                rc = b[j].err;
            }
        src->ops->close(src->self);
        for (size_t j = 0; j < k && rc == 0; j++) {
            if (b[j].n != out[j].n_samples) {
                rc = dkb_fail(DK_ESTATE,
                              "%s: pass %zu took %zu samples, not the %zu of the "
                              "first",
                              e[j].name, p + 1, b[j].n, out[j].n_samples);
                break;
            }
            for (size_t q = 0; q < b[j].nev; q++)
                take_samples(&b[j], q, &out[j].m[1 + index[q]]);
        }
    }
    for (size_t j = 0; j < k && rc == 0; j++)
        rc = dkb_estimate_all(cfg, &out[j], b[0].flat);
out:
    for (size_t j = 0; j < k; j++) {
        if (rc != 0)
            dkb_result_free(&out[j]);
        free_samples(&b[j]);
    }
    free(b);
    return rc;
}
