/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sampling_stress.h - one dk_sampling shared by several threads, as
 * dkperf.h allows: two that drain, one that waits and drains when told
 * records are ready, one that reads the stats, while others count with
 * dk_thread_* on the same sampler and the caller's work makes records;
 * the sampling is stopped while they all run. Used by test_sampling.c
 * (perf_event) and test_sampling_kperf.c (kperf on the simulated
 * frameworks); under ThreadSanitizer it finds unsynchronised state, and
 * without it the callers check that no record is lost or delivered twice.
 *
 * The drains' callback keeps its tally without a lock of its own: drains
 * of one sampling take turns, so each sees what the one before wrote.
 */
#ifndef DKPERF_TEST_SAMPLING_STRESS_H
#define DKPERF_TEST_SAMPLING_STRESS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "dkperf.h"
#include "util.h"

#define DKT_STRESS_DRAINERS 2
#define DKT_STRESS_COUNTERS 4

typedef struct dkt_stress {
    dk_sampler *s;
    dk_sampling *p;  /* started; stopped by dkt_stress_run */
    dk_sample_fn fn; /* the drains' callback */
    void *ctx;
    const char *const *names; /* what the counting threads count */
    size_t n_names;
    void (*work)(void *ctx); /* run by the caller while the threads run */
    void *work_ctx;
    /* What the threads did, for the caller to print. */
    unsigned long drains, waits, ready, stats_reads, counts;
    int done; /* __atomic */
} dkt_stress;

static void dkt_stress_drain(dkt_stress *x)
{
    int rc = dk_sampling_drain(x->p, x->fn, x->ctx);
    if (rc < 0)
        DKT_FAIL("dk_sampling_drain returned %s: %s", dk_error_name(rc), dk_last_error());
}

static bool dkt_stress_done(dkt_stress *x) { return __atomic_load_n(&x->done, __ATOMIC_ACQUIRE); }

/* A pause between two calls: threads that spin fill ThreadSanitizer's
 * history so fast that the stack of a racing access is gone when the
 * race is found, and such a race is not reported. */
static void dkt_stress_pause(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static void *dkt_stress_drainer(void *arg)
{
    dkt_stress *x = arg;
    unsigned long n = 0;
    while (!dkt_stress_done(x)) {
        dkt_stress_drain(x);
        n++;
        dkt_stress_pause(50);
    }
    __atomic_fetch_add(&x->drains, n, __ATOMIC_RELAXED);
    return NULL;
}

static void *dkt_stress_waiter(void *arg)
{
    dkt_stress *x = arg;
    unsigned long n = 0, ready = 0;
    while (!dkt_stress_done(x)) {
        /* Mostly a look without blocking, now and then a short block. */
        int rc = dk_sampling_wait(x->p, n % 16 == 15 ? 5 : 0);
        if (rc < 0)
            DKT_FAIL("dk_sampling_wait returned %s: %s", dk_error_name(rc), dk_last_error());
        n++;
        if (rc == 1) {
            ready++;
            dkt_stress_drain(x);
        }
    }
    __atomic_fetch_add(&x->waits, n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&x->ready, ready, __ATOMIC_RELAXED);
    return NULL;
}

/* Every count only grows. */
static void *dkt_stress_stats(void *arg)
{
    dkt_stress *x = arg;
    dk_sampling_stats last = {0, 0, 0, 0};
    unsigned long n = 0;
    while (!dkt_stress_done(x)) {
        dk_sampling_stats st;
        if (dk_sampling_stats_get(x->p, &st) != 0)
            DKT_FAIL("dk_sampling_stats_get: %s", dk_last_error());
        if (st.samples < last.samples || st.lost < last.lost || st.throttled < last.throttled ||
            st.unthrottled < last.unthrottled)
            DKT_FAIL("dk_sampling_stats went backwards: samples %llu after %llu",
                     (unsigned long long)st.samples, (unsigned long long)last.samples);
        last = st;
        n++;
        dkt_stress_pause(20);
    }
    __atomic_fetch_add(&x->stats_reads, n, __ATOMIC_RELAXED);
    return NULL;
}

/* Open, start, read, stop and close counters on this thread, again and
 * again. */
static void *dkt_stress_counter(void *arg)
{
    dkt_stress *x = arg;
    unsigned long n = 0;
    while (!dkt_stress_done(x)) {
        dk_thread *t = NULL;
        int rc = dk_thread_open_names(x->s, x->names, x->n_names, &t);
        if (rc != 0)
            DKT_FAIL("dk_thread_open_names(%s): %s", x->names[0], dk_last_error());
        if (dk_thread_start(t) != 0)
            DKT_FAIL("dk_thread_start: %s", dk_last_error());
        uint64_t v[DK_MAX_EVENTS];
        for (int i = 0; i < 8; i++)
            if (dk_thread_read(t, v, NULL) != 0)
                DKT_FAIL("dk_thread_read: %s", dk_last_error());
        if (dk_thread_stop(t) != 0)
            DKT_FAIL("dk_thread_stop: %s", dk_last_error());
        dk_thread_close(t);
        n++;
    }
    __atomic_fetch_add(&x->counts, n, __ATOMIC_RELAXED);
    return NULL;
}

/* Run the threads around x->work, stop the sampling while they still
 * run, then join them and drain what is left. */
static void dkt_stress_run(dkt_stress *x)
{
    enum { WAITER = DKT_STRESS_DRAINERS, STATS, COUNTERS, ALL = COUNTERS + DKT_STRESS_COUNTERS };
    pthread_t th[ALL];
    x->done = 0;
    for (int i = 0; i < ALL; i++) {
        void *(*body)(void *) = i < WAITER    ? dkt_stress_drainer
                                : i == WAITER ? dkt_stress_waiter
                                : i == STATS  ? dkt_stress_stats
                                              : dkt_stress_counter;
        CHECK_INT(pthread_create(&th[i], NULL, body, x), ==, 0);
    }
    x->work(x->work_ctx);
    int rc = dk_sampling_stop(x->p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_stop: %s", dk_last_error());
    /* A little longer: drains and waits go on around and after the stop. */
    dkt_stress_pause(20 * 1000);
    __atomic_store_n(&x->done, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < ALL; i++)
        CHECK_INT(pthread_join(th[i], NULL), ==, 0);
    dkt_stress_drain(x);
    fprintf(stderr, "%lu drains, %lu waits (%lu ready), %lu stats reads, %lu counter cycles\n",
            x->drains, x->waits, x->ready, x->stats_reads, x->counts);
}

#endif /* DKPERF_TEST_SAMPLING_STRESS_H */
