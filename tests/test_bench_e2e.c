/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_e2e.c - the harness with its real source (dk_sampler,
 * dk_thread) on this machine's backend: perf_event here, or the simulated
 * frameworks when DKPERF_FRAMEWORK_ROOT is set (privileged or not, per
 * chip). The body is real work, so assertions are on what the backends
 * guarantee: exact-rate counts on the simulator, software events and time
 * on a Linux without PMU.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "libdkbench/harness.h"
#include "check.h"

static volatile uint64_t acc;

static void body(dk_bench *b)
{
    DK_BENCH_LOOP(b)
    {
        uint64_t x = acc;
        for (int i = 0; i < 200; i++)
            x = x * 6364136223846793005u + 1;
        acc = x;
    }
}

static const dkb_measure *measure(const dkb_result *r, const char *name)
{
    for (size_t i = 0; i < r->n_measures; i++)
        if (strcmp(r->m[i].name, name) == 0)
            return &r->m[i];
    DKT_FAIL("no measure %s", name);
}

static void measure_body(const char *const *ev, size_t n, dkb_source *src, dkb_plan *plan,
                         dkb_result *r)
{
    dkb_config c;
    dkb_config_defaults(&c);
    if (dkb_source_open_dkperf(src) != 0 && src->self == NULL)
        DKT_FAIL("dkb_source_open_dkperf: %s", dkb_last_error());
    CHECK_INT(dkb_plan_events(src, ev, n, plan), ==, 0);
    dkb_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.name, sizeof e.name, "lcg200");
    e.loop = body;
    if (dkb_measure_one(&c, src, plan, &e, r) != 0)
        DKT_FAIL("dkb_measure_one: %s", dkb_last_error());
    fprintf(stderr, "%s: %zu samples, %zu passes, warm-up %.3f s, measure %.3f s, %s\n",
            src->backend, r->n_samples, r->passes, r->warmup_s, r->measure_s, r->stop_reason);
    for (size_t i = 0; i < r->n_measures; i++) {
        const dkb_measure *m = &r->m[i];
        if (m->available)
            fprintf(stderr, "  %-20s %.4g [%.4g, %.4g] +-%.2f%% R2 %.6f\n", m->name, m->slope.point,
                    m->slope.lo, m->slope.hi, 50 * (m->slope.hi - m->slope.lo) / m->slope.point,
                    m->fit.r2);
        else
            fprintf(stderr, "  %-20s unavailable: %s\n", m->name, m->why);
    }
    /* Time always, within the budget and its warm-up. */
    const dkb_measure *t = measure(r, "time");
    CHECK(t->available && t->slope.point > 0);
    CHECK(t->slope.lo <= t->slope.point && t->slope.point <= t->slope.hi);
    /* Wall-clock bounds, loose: the machine may be loaded. Later passes
     * replay the first's iteration counts, each taking about as long. */
    if (!(r->measure_s < 2 * c.time_budget * (double)(r->passes ? r->passes : 1)))
        DKT_FAIL("measured for %.3f s in %zu pass(es) with a budget of %.3f s", r->measure_s,
                 r->passes, c.time_budget);
    if (!(r->warmup_s < 3 * c.warmup_bound))
        DKT_FAIL("warmed up for %.3f s with a bound of %.3f s", r->warmup_s, c.warmup_bound);
}

static const char *const four[] = {"instructions", "cycles", "branches", "branch-misses"};

/* A counted event of the simulator: a fixed rate of thread CPU time, so
 * the series is a line (R^2 near 1) with a tight interval. */
static void check_counted(const dkb_result *r, const char *name)
{
    const dkb_measure *m = measure(r, name);
    if (!m->available)
        DKT_FAIL("%s unavailable: %s", name, m->why);
    CHECK(m->slope.point > 0);
    CHECK(m->y != NULL);
    /* The simulator derives counts from the thread's CPU time, which a
     * loaded machine disturbs too: the line and the interval are checked
     * when the wall clock saw a quiet machine. */
    if (measure(r, "time")->fit.r2 < 0.99) {
        fprintf(stderr, "  (the machine was busy: %s's fit not checked)\n", name);
        return;
    }
    /* Instructions and cycles are fixed counters that count in every mode:
     * a line as straight as the wall clock's. The others are configurable
     * counters set to count user mode only, which the simulator splits
     * from the thread's CPU time by getrusage's user/system proportion;
     * that proportion drifts as the kernel's ticks land, so their line is
     * checked less tightly. */
    bool all_modes = strcmp(name, "instructions") == 0 || strcmp(name, "cycles") == 0;
    CHECK(m->fit.r2 > (all_modes ? 0.99 : 0.95));
    CHECK((m->slope.hi - m->slope.lo) / 2 < 0.05 * m->slope.point);
}

TEST_CASE(sim_privileged_counts_four_events)
{
    dkb_source src;
    dkb_plan plan;
    dkb_result r;
    measure_body(four, 4, &src, &plan, &r);
    CHECK_STR(src.backend, "kperf");
    for (size_t i = 0; i < 4; i++)
        check_counted(&r, four[i]);
    /* The simulator counts 7.5 instructions and 3 cycles per ns of the
     * thread's CPU time: whatever the machine's load, 2.5 per cycle. */
    double ipc = measure(&r, "instructions")->slope.point / measure(&r, "cycles")->slope.point;
    CHECK(fabs(ipc - 2.5) < 0.01);
    dkb_result_free(&r);
    dkb_source_close_dkperf(&src);
}

TEST_CASE(sim_unprivileged_counts_instructions_and_cycles)
{
    dkb_source src;
    dkb_plan plan;
    dkb_result r;
    measure_body(four, 4, &src, &plan, &r);
    CHECK_STR(src.backend, "selfcounts");
    check_counted(&r, "instructions");
    check_counted(&r, "cycles");
    /* Level 0 (the simulator's CPU 0 of 2, or the only level on Intel)
     * counts 2.5 instructions a cycle, level 1 two. */
    /* Every increment has an IPC between the levels' (2 and 2.5), so the
     * totals do too, however busy the machine. */
    const dkb_measure *mi = measure(&r, "instructions"), *mc = measure(&r, "cycles");
    double insns = 0, cycles = 0;
    for (size_t k = 0; k < r.n_samples; k++) {
        insns += mi->y[k];
        cycles += mc->y[k];
    }
    CHECK(cycles > 0);
    CHECK(insns / cycles >= 1.99 && insns / cycles <= 2.51);
    /* The slopes are separate estimates, each with its own noise: their
     * ratio is held to the levels' bounds when the machine was quiet. */
    if (measure(&r, "time")->fit.r2 >= 0.99) {
        double ipc = mi->slope.point / mc->slope.point;
        CHECK(ipc >= 1.99 && ipc <= 2.51);
    }
    CHECK(!measure(&r, "branches")->available);
    CHECK_CONTAINS(measure(&r, "branches")->why, "DK_EPERM");
    if (src.n_levels > 1) {
        CHECK_INT(r.n_levels, ==, src.n_levels);
        double sum = 0;
        for (size_t l = 0; l < r.n_levels; l++)
            sum += r.level_cycle_share[l];
        CHECK(fabs(sum - 1) < 1e-9);
    }
    dkb_result_free(&r);
    dkb_source_close_dkperf(&src);
}

TEST_CASE(sim_many_events_run_in_passes)
{
    dkb_source src;
    if (dkb_source_open_dkperf(&src) != 0)
        DKT_FAIL("%s", dkb_last_error());
    /* Every configurable event of the database up to twice the counters. */
    dk_sampler *s;
    CHECK_INT(dk_sampler_open(&s, NULL), ==, 0);
    const dk_database *db = dk_sampler_database(s);
    size_t want = 2 * dk_database_counter_count(db, 2u) + 2, n = 0;
    char names[DK_MAX_EVENTS][128];
    const char *ev[DK_MAX_EVENTS];
    for (size_t i = 0; i < dk_database_event_count(db) && n < want && n < DK_MAX_EVENTS; i++) {
        const dk_database_event *d = dk_database_event_at(db, i);
        const char *const one[] = {d->name};
        dk_thread *t;
        if (dk_thread_open_names(s, one, 1, &t) != 0)
            continue;
        dk_thread_close(t);
        snprintf(names[n], sizeof names[n], "%s", d->name);
        ev[n] = names[n];
        n++;
    }
    dk_sampler_close(s);
    dkb_source_close_dkperf(&src);
    dkb_plan plan;
    dkb_result r;
    measure_body(ev, n, &src, &plan, &r);
    CHECK_INT(r.passes, >, 1);
    for (size_t i = 0; i < n; i++)
        CHECK(measure(&r, ev[i])->available && measure(&r, ev[i])->y != NULL);
    dkb_result_free(&r);
    dkb_source_close_dkperf(&src);
}

TEST_CASE(linux_hardware_unavailable_software_counted)
{
    const char *const ev[] = {"instructions", "cycles", "task-clock", "context-switches"};
    dkb_source src;
    dkb_plan plan;
    dkb_result r;
    measure_body(ev, 4, &src, &plan, &r);
    CHECK_STR(src.backend, "perf_event");
    if (plan.available[0])
        SKIP("this machine has a hardware PMU");
    CHECK(!measure(&r, "instructions")->available);
    CHECK(measure(&r, "instructions")->why[0] != '\0');
    const dkb_measure *tc = measure(&r, "task-clock");
    CHECK(tc->available);
    /* task-clock is the thread's CPU ns: a line in the iterations, and
     * never more than the wall time of a sample. The line is checked when
     * the wall clock saw a quiet machine (a loaded one scatters short
     * samples' CPU time too). */
    CHECK(tc->slope.point > 0);
    double time_r2 = measure(&r, "time")->fit.r2;
    if (time_r2 < 0.99)
        fprintf(stderr, "  (the machine was busy: task-clock's fit not checked)\n");
    else if (!(tc->fit.r2 > 0.95))
        DKT_FAIL("time's fit has R2 %.4f but task-clock's only %.4f", time_r2, tc->fit.r2);
    /* A thread's CPU time never exceeds the wall time it was measured
     * over: sample by sample, so summed (the slopes are not comparable:
     * time's leaves preempted samples out, task-clock's keeps them). */
    const dkb_measure *t = measure(&r, "time");
    double cpu = 0, wall = 0;
    for (size_t k = 0; k < r.n_samples; k++) {
        cpu += tc->y[k];
        wall += t->y[k];
    }
    CHECK(cpu > 0);
    if (!(cpu <= 1.02 * wall + 2000.0 * (double)r.n_samples))
        DKT_FAIL("task-clock %.0f ns over %zu samples whose wall time is %.0f ns", cpu, r.n_samples,
                 wall);
    dkb_result_free(&r);
    dkb_source_close_dkperf(&src);
}

int main(int argc, char **argv) { return dkt_main(argc, argv); }
