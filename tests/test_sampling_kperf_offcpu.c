/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_sampling_kperf_offcpu.c - DK_SAMPLING_OFF_CPU on the kperf backend
 * (PET, on the simulated frameworks): a process with a busy thread and
 * one blocked in read() gives on-CPU samples of the busy one and off-CPU
 * samples of the blocked one, in its blocking call; without a timer the
 * flag is refused. Part of test_sampling_kperf.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dkperf.h"
#include "sampling_kperf_helpers.h"
#include "util.h"

static atomic_int off_stop;
static atomic_uint_fast64_t off_reader_tid, off_busy_tid;
static int off_pipe[2];

/* Blocked in read() until the test writes; exported, so its address is
 * the function's. */
__attribute__((noinline)) void dkt_offcpu_blocked_reader(void)
{
    char c;
    atomic_store(&off_reader_tid, (uint64_t)syscall(SYS_gettid));
    while (read(off_pipe[0], &c, 1) < 0 && errno == EINTR)
        ;
    __asm__ volatile("" ::: "memory");
}

static void *off_reader(void *arg)
{
    (void)arg;
    dkt_offcpu_blocked_reader();
    return NULL;
}

static void *off_busy(void *arg)
{
    (void)arg;
    atomic_store(&off_busy_tid, (uint64_t)syscall(SYS_gettid));
    while (!atomic_load(&off_stop))
        dkt_hot_loop(1000000);
    return NULL;
}

typedef struct offcpu_seen {
    size_t busy_on, busy_off, reader_on, reader_off, reader_in_read, bad_event, bad_period;
    uint64_t period, reader_off_ns;
} offcpu_seen;

static int collect_offcpu(void *ctx, const dk_sample *s)
{
    offcpu_seen *c = ctx;
    if (s->kind != DK_SAMPLE_KIND_SAMPLE)
        return 0;
    uint64_t lo = (uint64_t)(uintptr_t)dkt_offcpu_blocked_reader;
    if (s->off_cpu && (s->event != 0))
        c->bad_event++;
    if (s->off_cpu && s->period != c->period)
        c->bad_period++;
    if (s->tid == atomic_load(&off_busy_tid)) {
        c->busy_on += !s->off_cpu;
        c->busy_off += s->off_cpu;
    } else if (s->tid == atomic_load(&off_reader_tid)) {
        c->reader_on += !s->off_cpu;
        c->reader_off += s->off_cpu;
        c->reader_off_ns += s->off_cpu ? s->period : 0;
        bool in = false;
        for (size_t i = 0; i < s->n_frames && !in; i++)
            in = s->frames[i] > lo && s->frames[i] < lo + 256;
        c->reader_in_read += s->off_cpu && in;
    }
    return 0;
}

TEST_CASE(off_cpu_samples_show_a_blocked_thread_in_its_blocking_call)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {"timer", 10000000, 0};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.record = DK_SAMPLE_TID | DK_SAMPLE_PERIOD | DK_SAMPLE_CALLCHAIN | DK_SAMPLE_IP;
    o.flags = DK_SAMPLING_OFF_CPU;
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, &o, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open: %d %s", rc, dk_last_error());

    atomic_store(&off_stop, 0);
    CHECK_INT(pipe(off_pipe), ==, 0);
    pthread_t th[2];
    CHECK_INT(pthread_create(&th[0], NULL, off_reader, NULL), ==, 0);
    CHECK_INT(pthread_create(&th[1], NULL, off_busy, NULL), ==, 0);
    struct timespec ms = {0, 1000000};
    while (atomic_load(&off_reader_tid) == 0 || atomic_load(&off_busy_tid) == 0)
        nanosleep(&ms, NULL);
    nanosleep(&ms, NULL); /* the reader is in read() by now */

    offcpu_seen c;
    memset(&c, 0, sizeof c);
    c.period = 10000000;
    CHECK_INT(dk_sampling_start(p), ==, 0);
    for (int i = 0; i < 20; i++) {
        struct timespec slice = {0, 20000000};
        nanosleep(&slice, NULL);
        CHECK_INT(dk_sampling_drain(p, collect_offcpu, &c), >=, 0);
    }
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect_offcpu, &c), >=, 0);
    atomic_store(&off_stop, 1);
    CHECK_INT((int)write(off_pipe[1], "x", 1), ==, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    close(off_pipe[0]);
    close(off_pipe[1]);
    fprintf(stderr, "busy: %zu on CPU, %zu off; reader: %zu on CPU, %zu off (%zu in its read)\n",
            c.busy_on, c.busy_off, c.reader_on, c.reader_off, c.reader_in_read);
    CHECK_U64(c.busy_on, >, 0);
    CHECK_U64(c.reader_on, ==, 0);
    CHECK_U64(c.reader_off, >=, 10); /* ~40 periods of 10 ms */
    /* Under valgrind the sim reads valgrind's registers and stack for the
     * blocked thread, not this program's. */
    if (!dkt_under_valgrind())
        CHECK_U64(c.reader_in_read, ==, c.reader_off);
    CHECK_U64(c.bad_event, ==, 0);
    CHECK_U64(c.bad_period, ==, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Off-CPU time from PET samples is the time between PET fires, not the
 * period asked for: XNU re-arms the PET timer after the PET thread's pass
 * (kptimer_pet_enter), so a slow pass (DKPERF_SIM_PET_PASS_NS = 3 ms here,
 * a 1 ms period) spaces fires 4 ms apart, and a thread blocked throughout
 * is off CPU for the whole time sampled, not a quarter of it. */
TEST_CASE(off_cpu_time_is_the_time_between_pet_fires)
{
    const char *slow = getenv("DKPERF_SIM_PET_PASS_NS");
    CHECK(slow != NULL && strtoull(slow, NULL, 10) == 3000000);
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {"timer", 1000000, 0};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.record = DK_SAMPLE_TID | DK_SAMPLE_PERIOD | DK_SAMPLE_TIME;
    o.flags = DK_SAMPLING_OFF_CPU;
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, &o, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open: %d %s", rc, dk_last_error());
    atomic_store(&off_reader_tid, 0);
    CHECK_INT(pipe(off_pipe), ==, 0);
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, off_reader, NULL), ==, 0);
    struct timespec ms = {0, 1000000};
    while (atomic_load(&off_reader_tid) == 0)
        nanosleep(&ms, NULL);
    nanosleep(&ms, NULL); /* the reader is in read() by now */
    offcpu_seen c;
    memset(&c, 0, sizeof c);
    c.period = 0; /* any: counted in bad_period, not checked here */
    uint64_t t0 = monotonic_ns();
    CHECK_INT(dk_sampling_start(p), ==, 0);
    struct timespec slice = {0, 300000000};
    nanosleep(&slice, NULL);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    uint64_t sampled = monotonic_ns() - t0;
    CHECK_INT(dk_sampling_drain(p, collect_offcpu, &c), >=, 0);
    CHECK_INT((int)write(off_pipe[1], "x", 1), ==, 1);
    pthread_join(th, NULL);
    close(off_pipe[0]);
    close(off_pipe[1]);
    fprintf(stderr, "reader: %zu off-CPU samples, %llu ns off CPU of %llu ns sampled\n",
            c.reader_off, (unsigned long long)c.reader_off_ns, (unsigned long long)sampled);
    CHECK_U64(c.reader_off, >=, 10);
    CHECK_U64(c.reader_off_ns, >=, sampled / 2);
    CHECK_U64(c.reader_off_ns, <=, sampled + 10000000);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* A restart whose stopped time was not drained before it: the stopped
 * time is no span between PET fires (the first fire after the start
 * stands for a period), so a thread blocked throughout is off CPU for no
 * more than the time sampled. */
TEST_CASE(off_cpu_time_leaves_out_a_stop_drained_after_the_restart)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {"timer", 1000000, 0};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.record = DK_SAMPLE_TID | DK_SAMPLE_PERIOD | DK_SAMPLE_TIME;
    o.flags = DK_SAMPLING_OFF_CPU;
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, &o, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open: %d %s", rc, dk_last_error());
    atomic_store(&off_reader_tid, 0);
    CHECK_INT(pipe(off_pipe), ==, 0);
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, off_reader, NULL), ==, 0);
    struct timespec ms = {0, 1000000};
    while (atomic_load(&off_reader_tid) == 0)
        nanosleep(&ms, NULL);
    nanosleep(&ms, NULL); /* the reader is in read() by now */
    offcpu_seen c;
    memset(&c, 0, sizeof c);
    uint64_t sampled = 0;
    struct timespec slice = {0, 100000000}, stopped = {0, 500000000};
    for (int i = 0; i < 2; i++) {
        uint64_t t0 = monotonic_ns();
        CHECK_INT(dk_sampling_start(p), ==, 0);
        nanosleep(&slice, NULL);
        CHECK_INT(dk_sampling_stop(p), ==, 0);
        sampled += monotonic_ns() - t0;
        if (i == 0)
            nanosleep(&stopped, NULL);
    }
    CHECK_INT(dk_sampling_drain(p, collect_offcpu, &c), >=, 0);
    CHECK_INT((int)write(off_pipe[1], "x", 1), ==, 1);
    pthread_join(th, NULL);
    close(off_pipe[0]);
    close(off_pipe[1]);
    fprintf(stderr, "reader: %zu off-CPU samples, %llu ns off CPU of %llu ns sampled\n",
            c.reader_off, (unsigned long long)c.reader_off_ns, (unsigned long long)sampled);
    CHECK_U64(c.reader_off, >=, 10);
    CHECK_U64(c.reader_off_ns, <=, sampled + 10000000);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

TEST_CASE(off_cpu_without_a_timer_says_it_needs_one)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {"cycles", 1000000, 0};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.flags = DK_SAMPLING_OFF_CPU;
    dk_sampling *p = NULL;
    CHECK_INT(dk_sampling_open(s, &e, 1, &o, &p), ==, DK_ENOTSUP);
    CHECK(p == NULL);
    CHECK(strstr(dk_last_error(), "timer") != NULL);
    dk_sampler_close(s);
    check_disarmed(state_path());
}
