/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_pmu.c - libdkbench's exactness on a PMU that counts exactly
 * (QEMU's arm64 PMUv3 under -icount, tests/qemu/run.sh sets
 * DKPERF_EXACT_PMU=1): the instructions-per-iteration slope of a body of
 * exactly K instructions is K within 0.01. The body is an asm loop of
 * K - 2 nops, a decrement and a branch back, run by the function form so
 * that no compiled code sits inside an iteration. User-mode instructions
 * only: the kernel's (timer interrupts) would be noise the fit cannot
 * tell from the body. Without such a PMU each case skips and says why.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "libdkbench/harness.h"
#include "check.h"
#include "pmu.h"

/* Per iteration: NOPS nops, subs and b.ne. */
#define NOPS 8
#define K (NOPS + 2)

#if defined(__aarch64__)
static void body(void *ctx, uint64_t n)
{
    (void)ctx;
    __asm__ __volatile__("1:\n\t"
                         ".rept 8\n\tnop\n\t.endr\n\t"
                         "subs %0, %0, #1\n\t"
                         "b.ne 1b"
                         : "+r"(n)
                         :
                         : "cc");
}
#elif defined(__x86_64__)
static void body(void *ctx, uint64_t n)
{
    (void)ctx;
    __asm__ __volatile__("1:\n\t"
                         ".rept 8\n\tnop\n\t.endr\n\t"
                         "dec %0\n\t"
                         "jnz 1b"
                         : "+r"(n)
                         :
                         : "cc");
}
#endif

static void need_exact_pmu(void)
{
#if !defined(__aarch64__) && !defined(__x86_64__)
    SKIP("no asm body of exactly %d instructions for this architecture", K);
#endif
    int why = 0;
    if (!dkt_have_hw_pmu(&why))
        SKIP("no hardware PMU: a hardware instructions counter cannot be opened (%s)",
             strerror(why));
    if (getenv("DKPERF_EXACT_PMU") == NULL)
        SKIP("exact counts need a PMU known to count exactly (DKPERF_EXACT_PMU=1: QEMU "
             "-icount, tests/qemu/run.sh)");
}

TEST_CASE(instructions_slope_of_a_k_instruction_body_is_k)
{
    need_exact_pmu();
#if defined(__aarch64__) || defined(__x86_64__)
    static const char *const ev[] = {"instructions:u"};
    dkb_config c;
    dkb_config_defaults(&c);
    c.samples = 20; /* fixed: the emulated machine is slow, and exact counts need no more */
    c.time_budget = 0.1;
    c.warmup_bound = 0.05;
    dkb_source src;
    if (dkb_source_open_dkperf(&src) != 0 && src.self == NULL)
        DKT_FAIL("dkb_source_open_dkperf: %s", dkb_last_error());
    dkb_plan plan;
    CHECK_INT(dkb_plan_events(&src, ev, 1, &plan), ==, 0);
    if (!plan.available[0]) {
        char why[600];
        snprintf(why, sizeof why, "%s", plan.why[0]);
        dkb_source_close_dkperf(&src);
        DKT_FAIL("instructions:u not available on a PMU that opened it: %s", why);
    }
    dkb_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.name, sizeof e.name, "k%d", K);
    e.iter = body;
    dkb_result r;
    if (dkb_measure_one(&c, &src, &plan, &e, &r) != 0) {
        dkb_source_close_dkperf(&src);
        DKT_FAIL("dkb_measure_one: %s", dkb_last_error());
    }
    const dkb_measure *m = &r.m[1];
    fprintf(stderr,
            "%s: %zu samples, d %.0f: instructions per iteration %.6f [%.6f, %.6f], "
            "intercept %.1f, estimator %s\n",
            src.backend, r.n_samples, r.iterations[0], m->slope.point, m->slope.lo, m->slope.hi,
            m->fit.intercept, m->estimator);
    bool ok = fabs(m->slope.point - K) <= 0.01 && fabs(m->slope.lo - K) <= 0.01 &&
              fabs(m->slope.hi - K) <= 0.01 && r.n_samples == 20;
    double point = m->slope.point;
    dkb_result_free(&r);
    dkb_source_close_dkperf(&src);
    if (!ok)
        DKT_FAIL("the instructions slope of a %d-instruction body is %.6f, not %d within 0.01", K,
                 point, K);
#endif
}

TEST_MAIN()
