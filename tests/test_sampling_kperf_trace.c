/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_sampling_kperf_trace.c - the kperf backend's sampling and the
 * simulated kernel's kdebug trace buffer: a buffer that wraps, a kernel
 * that keeps writing or stops tracing, and threads sharing one sampling
 * that lose and repeat nothing. Part of test_sampling_kperf.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dkperf.h"
#include "sampling_kperf_helpers.h"
#include "sampling_stress.h"
#include "sim/sim_kdebug.h"
#include "sim/sim_kernel.h"

/* n records of kperf's class that no sample decodes, as a busy machine's
 * other kperf users would leave. */
static void flood(const sim_kernel *k, size_t n)
{
    simk_kd_buf *r = calloc(n, sizeof *r);
    CHECK(r != NULL);
    for (size_t i = 0; i < n; i++) {
        r[i].timestamp = i + 1;
        r[i].debugid = 0x25ff0000u;
    }
    k->emit(r, n);
    free(r);
}

/* kbufinfo_t's nkdbufs (KERN_KDGETBUF). */
static int trace_buffer_events(const sim_kernel *k)
{
    int mib[3] = {CTL_KERN, KERN_KDEBUG, KERN_KDGETBUF};
    kbufinfo info = {0};
    size_t len = sizeof info;
    CHECK_INT(k->sysctl(mib, 3, &info, &len, NULL, 0), ==, 0);
    return info.nkdbufs;
}

TEST_CASE(a_wrapped_trace_buffer_counts_lost_samples)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_timer_sampling(s, 1000000);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    sim_kernel k = sim_kernel_open();
    /* One record more than the buffer holds: its oldest unit is dropped. */
    int n = trace_buffer_events(&k);
    CHECK_INT(n, >, 0);
    flood(&k, (size_t)n + 1);
    collected c = {0};
    CHECK_INT(dk_sampling_drain(p, collect_any, &c), >=, 0);
    dk_sampling_stats st;
    CHECK_INT(dk_sampling_stats_get(p, &st), ==, 0);
    CHECK_U64(st.lost, ==, 1);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect_any, &c), >=, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* DKPERF_SIM_KDEBUG_WRITER (ctest): other kperf users write as fast as the
 * drain reads. Each drain still returns, having read at most a buffer's
 * worth, and the samples still come. */
TEST_CASE(a_drain_returns_while_the_kernel_keeps_writing)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_timer_sampling(s, 1000000);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    alarm(60); /* before the bound, the first drain never returned */
    collected c = {0};
    for (int i = 0; i < 3; i++) {
        dkt_hot_caller(20000000);
        CHECK_INT(dk_sampling_drain(p, collect_any, &c), >=, 0);
    }
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect_any, &c), >=, 0);
    alarm(0);
    fprintf(stderr, "%zu samples through a busy trace buffer\n", c.samples);
    CHECK_U64(c.samples, >, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

TEST_CASE(the_kernel_stopping_tracing_is_reported)
{
    /* DKPERF_SIM_KDEBUG=xnu-8020: a kernel where KDBG_NOWRAP stops
     * logging when the buffer fills. Another tool sets it after this
     * sampling's set-up (KDREMOVE cleared it there). */
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_timer_sampling(s, 1000000);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    sim_kernel k = sim_kernel_open();
    int mib[4] = {CTL_KERN, KERN_KDEBUG, KERN_KDEFLAGS, (int)KDBG_NOWRAP};
    size_t zero = 0;
    CHECK_INT(k.sysctl(mib, 4, NULL, &zero, NULL, 0), ==, 0);
    flood(&k, (size_t)trace_buffer_events(&k) + 1);
    collected c = {0};
    int rc = dk_sampling_drain(p, collect_any, &c);
    fprintf(stderr, "%s\n", dk_last_error());
    CHECK_INT(rc, ==, DK_EOS);
    CHECK_CONTAINS(dk_last_error(), "the kernel stopped tracing");
    CHECK_CONTAINS(dk_last_error(), "KDBG_NOWRAP");
    dk_sampling_stats st;
    CHECK_INT(dk_sampling_stats_get(p, &st), ==, 0);
    CHECK_U64(st.lost, >=, 1);
    /* Said once; then stopping and closing undo everything. */
    CHECK_INT(dk_sampling_drain(p, collect_any, &c), >=, 0);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect_any, &c), >=, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* Threads sharing one sampling: the samples written into the trace buffer
 * here are numbered (their tid), so each must be delivered once, in
 * order, whichever thread's drain or wait read it. */
#define STRESS_SAMPLES 6000u
#define STRESS_TID 0x100000000000ull /* above any real thread id */

typedef struct numbered {
    uint64_t next, samples;
    uint64_t last_time;
} numbered;

static int follow_numbers(void *ctx, const dk_sample *x)
{
    numbered *n = ctx; /* drains take turns: no lock of its own */
    if (x->kind != DK_SAMPLE_KIND_SAMPLE)
        return 0;
    n->samples++;
    if (x->tid < STRESS_TID)
        return 0; /* the timer's own, if one fired */
    uint64_t i = x->tid - STRESS_TID;
    if (i != n->next)
        DKT_FAIL("sample %llu delivered when %llu was due: %s", (unsigned long long)i,
                 (unsigned long long)n->next, i < n->next ? "a repeat" : "some lost");
    if (i > 0 && x->time_ns <= n->last_time)
        DKT_FAIL("sample %llu is not later than the one before", (unsigned long long)i);
    n->next++;
    n->last_time = x->time_ns;
    return 0;
}

typedef struct numbered_work {
    sim_kernel k;
} numbered_work;

/* XNU's records of timer sample i with no stack (action 1) into r[0..2]:
 * GEN_EVENT start, TI_DATA, GEN_EVENT end. */
static void numbered_sample(simk_kd_buf *r, uint64_t i)
{
    const uint64_t fake_thread = STRESS_TID - 1; /* the interrupted thread's slot */
    const uint64_t t = 1000 + i * 10;
    r[0] = (simk_kd_buf){
        .timestamp = t, .arg2 = 1, .arg4 = 1, .arg5 = fake_thread, .debugid = 0x25000000u | 1u};
    r[1] = (simk_kd_buf){.timestamp = t,
                         .arg1 = 0x7fffffff,
                         .arg2 = STRESS_TID + i,
                         .arg5 = fake_thread,
                         .debugid = 0x25010004u};
    r[2] =
        (simk_kd_buf){.timestamp = t, .arg2 = 1, .arg5 = fake_thread, .debugid = 0x25000000u | 2u};
}

/* The numbered samples in batches of 8, 100 µs apart. */
static void write_numbered(void *ctx)
{
    numbered_work *w = ctx;
    simk_kd_buf r[8 * 3];
    for (uint64_t i = 0; i < STRESS_SAMPLES;) {
        size_t n = 0;
        for (; n < sizeof r / sizeof r[0] && i < STRESS_SAMPLES; i++, n += 3)
            numbered_sample(&r[n], i);
        w->k.emit(r, n);
        struct timespec ts = {0, 100 * 1000};
        nanosleep(&ts, NULL);
    }
}

TEST_CASE(threads_sharing_a_sampling_lose_and_repeat_nothing)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_timer_sampling(s, 1000000000); /* its own samples rare */
    numbered_work w = {sim_kernel_open()};
    /* Nothing wraps: every record written stays until read. */
    CHECK_INT(trace_buffer_events(&w.k), >, STRESS_SAMPLES * 3);
    numbered n = {0, 0, 0};
    static const char *const names[] = {"cycles", "instructions"};
    dkt_stress x = {.s = s,
                    .p = p,
                    .fn = follow_numbers,
                    .ctx = &n,
                    .names = names,
                    .n_names = 2,
                    .work = write_numbered,
                    .work_ctx = &w};
    CHECK_INT(dk_sampling_start(p), ==, 0);
    dkt_stress_run(&x);
    dk_sampling_stats st;
    CHECK_INT(dk_sampling_stats_get(p, &st), ==, 0);
    fprintf(stderr, "%llu of %u numbered samples delivered in order, %llu in all, %llu lost\n",
            (unsigned long long)n.next, STRESS_SAMPLES, (unsigned long long)n.samples,
            (unsigned long long)st.lost);
    CHECK_U64(n.next, ==, STRESS_SAMPLES);
    CHECK_U64(st.samples, ==, n.samples);
    CHECK_U64(st.lost, ==, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* A drain whose callback holds on to its first sample until told to let
 * go, or for 10 s. */
typedef struct held_drain {
    dk_sampling *p;
    int inside, let_go; /* __atomic */
    bool gave_up;
    int rc;
} held_drain;

static int hold_first(void *ctx, const dk_sample *x)
{
    held_drain *h = ctx;
    if (x->kind != DK_SAMPLE_KIND_SAMPLE || __atomic_load_n(&h->inside, __ATOMIC_ACQUIRE))
        return 0;
    __atomic_store_n(&h->inside, 1, __ATOMIC_RELEASE);
    for (int ms = 0; !__atomic_load_n(&h->let_go, __ATOMIC_ACQUIRE); ms++) {
        if (ms == 10000) {
            h->gave_up = true;
            break;
        }
        dkt_stress_pause(1000);
    }
    return 0;
}

static void *drain_held(void *arg)
{
    held_drain *h = arg;
    h->rc = dk_sampling_drain(h->p, hold_first, h);
    return NULL;
}

/* dk_sampling_wait(p, 0) is a look: it returns at once while a drain in
 * another thread sits in a slow callback (that drain takes what there is),
 * rather than waiting for the drain to end. */
TEST_CASE(a_wait_keeps_its_timeout_while_another_thread_drains)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_timer_sampling(s, 1000000000);
    sim_kernel k = sim_kernel_open();
    CHECK_INT(dk_sampling_start(p), ==, 0);
    simk_kd_buf r[2 * 3];
    numbered_sample(&r[0], 0);
    numbered_sample(&r[3], 1);
    k.emit(r, 6);
    held_drain h = {p, 0, 0, false, 0};
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, drain_held, &h), ==, 0);
    for (int ms = 0; !__atomic_load_n(&h.inside, __ATOMIC_ACQUIRE) && ms < 10000; ms++)
        dkt_stress_pause(1000);
    CHECK(__atomic_load_n(&h.inside, __ATOMIC_ACQUIRE));
    int rc = dk_sampling_wait(p, 0);
    __atomic_store_n(&h.let_go, 1, __ATOMIC_RELEASE);
    CHECK_INT(pthread_join(th, NULL), ==, 0);
    CHECK(!h.gave_up); /* the wait returned while the callback still held on */
    CHECK_INT(rc, >=, 0);
    CHECK_INT(h.rc, >=, 1);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* A trace that another client opened to every class while this sampling
 * runs (an all-ones typefilter, as an unfiltered profiler sets): records
 * of classes the drain does not decode, and kperf records it does not
 * decode, before, inside and between the numbered samples, on their
 * threads. Every sample comes once, in order, nothing counted lost. */
TEST_CASE(foreign_records_in_the_trace_are_skipped)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_timer_sampling(s, 1000000000);
    sim_kernel k = sim_kernel_open();
    CHECK_INT(dk_sampling_start(p), ==, 0);
    int mib[3] = {CTL_KERN, KERN_KDEBUG, KERN_KDSET_TYPEFILTER};
    unsigned char *tf = malloc(TYPEFILTER_BYTES);
    CHECK(tf != NULL);
    memset(tf, 0xff, TYPEFILTER_BYTES);
    size_t len = TYPEFILTER_BYTES;
    CHECK_INT(k.sysctl(mib, 3, tf, &len, NULL, 0), ==, 0);
    free(tf);
    /* An interrupt, a thread switch, a BSD syscall, a VM fault, an exec of
     * DBG_BSD_PROC, a DBG_TRACE thread-name record, kperf's context-switch
     * and PET records, an application's own class. */
    static const uint32_t foreign[] = {0x01050001u, 0x01400000u, 0x040c0005u,
                                       0x01300008u, 0x04010008u, 0x07000004u,
                                       0x25010014u, 0x25040000u, 0x31000004u};
    const size_t nf = sizeof foreign / sizeof foreign[0];
    const size_t per = 3 + 3 * nf;
    simk_kd_buf *r = calloc(STRESS_SAMPLES * per, sizeof *r);
    CHECK(r != NULL);
    size_t w = 0;
    for (uint64_t i = 0; i < STRESS_SAMPLES; i++) {
        simk_kd_buf x[3];
        numbered_sample(x, i);
        for (size_t part = 0; part < 3; part++) {
            for (size_t f = 0; f < nf; f++)
                r[w++] = (simk_kd_buf){.timestamp = x[part].timestamp,
                                       .arg1 = i,
                                       .arg2 = 2,
                                       .arg5 = x[part].arg5,
                                       .debugid = foreign[(f + part + i) % nf]};
            r[w++] = x[part];
        }
    }
    CHECK_INT(trace_buffer_events(&k), >, (int)w);
    k.emit(r, w);
    free(r);
    numbered n = {0, 0, 0};
    CHECK_INT(dk_sampling_drain(p, follow_numbers, &n), >=, 0);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, follow_numbers, &n), >=, 0);
    dk_sampling_stats st;
    CHECK_INT(dk_sampling_stats_get(p, &st), ==, 0);
    fprintf(stderr, "%llu of %u numbered samples among %zu foreign records, %llu lost\n",
            (unsigned long long)n.next, STRESS_SAMPLES, STRESS_SAMPLES * nf * 3,
            (unsigned long long)st.lost);
    CHECK_U64(n.next, ==, STRESS_SAMPLES);
    CHECK_U64(st.lost, ==, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* Another client of this process left the trace buffer set up, enabled and
 * filtered to one debug id (KDBG_VALCHECK on PERF_CS_UHDR): the sampling's
 * KERN_KDREMOVE clears it (kdbg_clear) and sets its own typefilter, so its
 * samples come whole. */
TEST_CASE(another_clients_filter_is_replaced)
{
    fresh_state();
    sim_kernel k = sim_kernel_open();
    int setbuf[4] = {CTL_KERN, KERN_KDEBUG, KERN_KDSETBUF, 100000};
    int setup[3] = {CTL_KERN, KERN_KDEBUG, KERN_KDSETUP};
    int setreg[3] = {CTL_KERN, KERN_KDEBUG, KERN_KDSETREG};
    int enable[4] = {CTL_KERN, KERN_KDEBUG, KERN_KDENABLE, KDEBUG_ENABLE_TRACE};
    size_t zero = 0;
    kd_regtype reg = {KDBG_VALCHECK, 0x25020018u, 0, 0, 0};
    size_t reglen = sizeof reg;
    CHECK_INT(k.sysctl(setbuf, 4, NULL, &zero, NULL, 0), ==, 0);
    CHECK_INT(k.sysctl(setup, 3, NULL, &zero, NULL, 0), ==, 0);
    CHECK_INT(k.sysctl(setreg, 3, &reg, &reglen, NULL, 0), ==, 0);
    CHECK_INT(k.sysctl(enable, 4, NULL, &zero, NULL, 0), ==, 0);
    dk_sampler *s = open_sampler();
    dk_sampling *p =
        open_sampling(s, "timer", 1000000, DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_CALLCHAIN);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    dkt_hot_caller(50000000);
    collected c = {0};
    CHECK_INT(dk_sampling_drain(p, collect_any, &c), >=, 0);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    fprintf(stderr, "%zu samples\n", c.samples);
    CHECK_U64(c.samples, >=, 10);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}
