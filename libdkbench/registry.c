/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * registry.c - libdkbench's registry of benchmarks (dk_bench_register and
 * the load-time form), the fallback sink of dk_bench_do_not_optimize and
 * the configuration's defaults; see harness.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "libdkbench/harness.h"

/* ------------------------------------------------------------------------ */
/* Registry                                                                  */
/* ------------------------------------------------------------------------ */

static dkb_entry *registry;
static size_t registry_n, registry_cap;
static char load_error[512];

int dkb_registry_add(const dkb_entry *in)
{
    const char *name = in->name;
    size_t len = strlen(name); /* in->name is a string: add_entry and run.c copy it in */
    if (len == 0 || len >= sizeof registry[0].name)
        return dkb_fail(DK_EINVAL, "dk_bench_register: the name \"%.40s\" must have 1 to %zu bytes",
                        name, sizeof registry[0].name - 1);
    for (size_t i = 0; i < registry_n; i++)
        if (strcmp(registry[i].name, name) == 0)
            return dkb_fail(DK_EINVAL,
                            "dk_bench_register: a benchmark named \"%s\" is already "
                            "registered; give each a distinct name",
                            name);
    if (registry_n == registry_cap) {
        size_t cap = registry_cap ? 2 * registry_cap : 16;
        dkb_entry *grown = realloc(registry, cap * sizeof *grown);
        if (grown == NULL)
            return dkb_fail(DK_ENOMEM, "dk_bench_register: out of memory for \"%s\"", name);
        registry = grown;
        registry_cap = cap;
    }
    registry[registry_n++] = *in;
    return 0;
}

static int add_entry(const char *name, dk_bench_loop_fn loop, dk_bench_iter_fn iter, void *ctx)
{
    if (name == NULL || (loop == NULL && iter == NULL))
        return dkb_fail(DK_EINVAL, "dk_bench_register: the name and the function must not be NULL");
    dkb_entry e;
    memset(&e, 0, sizeof e);
    size_t len = strlen(name);
    if (len == 0 || len >= sizeof e.name)
        return dkb_fail(DK_EINVAL, "dk_bench_register: the name \"%.40s\" must have 1 to %zu bytes",
                        name, sizeof e.name - 1);
    memcpy(e.name, name, len + 1);
    e.loop = loop;
    e.iter = iter;
    e.ctx = ctx;
    return dkb_registry_add(&e);
}

int dk_bench_register(const char *name, dk_bench_loop_fn fn, void *ctx)
{
    return add_entry(name, fn, NULL, ctx);
}

int dk_bench_register_fn(const char *name, dk_bench_iter_fn fn, void *ctx)
{
    return add_entry(name, NULL, fn, ctx);
}

void dk_bench__register_at_load(const char *name, dk_bench_loop_fn loop, dk_bench_iter_fn iter,
                                void *ctx)
{
    int rc = add_entry(name, loop, iter, ctx);
    if (rc != 0 && load_error[0] == '\0') /* the first failure is the one to fix */
        snprintf(load_error, sizeof load_error, "%s", dkb_last_error());
}

size_t dkb_registry_count(void) { return registry_n; }
const dkb_entry *dkb_registry_at(size_t i) { return i < registry_n ? &registry[i] : NULL; }
const char *dkb_registry_load_error(void) { return load_error; }

void dkb_registry_clear(void)
{
    free(registry);
    registry = NULL;
    registry_n = registry_cap = 0;
    load_error[0] = '\0';
}

const char *dk_bench_last_error(void) { return dkb_last_error(); }

/* The fallback of dk_bench_do_not_optimize: a volatile store the compiler
 * cannot drop. */
static volatile int sink;
void dk_bench_sink(int used) { sink = used; }

/* ------------------------------------------------------------------------ */
/* Configuration                                                             */
/* ------------------------------------------------------------------------ */

void dkb_config_defaults(dkb_config *c)
{
    memset(c, 0, sizeof *c);
    /* 0.2 s of samples plus at most 0.08 s of warm-up keeps a benchmark
     * under 0.35 s; most stop earlier, on precision. */
    c->time_budget = 0.2;
    c->warmup_bound = 0.08;
    /* The adaptive stop waits for 20 samples (190 pair slopes for Sen's
     * interval) spanning 30 ms: a preemption here costs 4 to 8 ms, so ten
     * samples of a fast body (under 1 ms in all) sit in one time slice and
     * their interval cannot see the next; see doc/BENCH-STATISTICS.md. */
    c->min_samples = 20;
    c->max_samples = 100;
    c->min_time = 0.03;
    c->precision = 0.01;
    c->seed = 1;
    c->resamples = 10000;
    /* External bodies: hyperfine's rule, at least 10 runs. */
    c->min_runs = 10;
    c->max_runs = 1000000;
    c->run_time = 3.0;
}
