/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * hw_api.c - the safe API on a real Mac, as root: sudo ./hw_api
 *
 * Counts portable events around a loop of known shape, checks them against
 * what the loop must retire, runs thread samplers on several threads at
 * once, and checks that kpc.force_all_ctrs is restored.
 */
#include <pthread.h>
#include <stdio.h>

#include "dkperf.h"
#include "dkperf/kperf.h"
#include "hw.h"

#define LOOPS 10000000ull

static int force_all(void)
{
    const dk_kperf_vtable *kp = NULL;
    int v = -1;
    HW_CHECK(dk_kperf_load(NULL, &kp, NULL) == 0);
    HW_CHECK(kp->kpc_force_all_ctrs_get(&v) == 0);
    return v;
}

static dk_sampler *sampler;
static int thread_failures;

static void *worker(void *arg)
{
    (void)arg;
    const char *names[] = {"instructions", "branches"};
    dk_thread *t = NULL;
    uint64_t a[2], b[2];
    if (dk_thread_open_names(sampler, names, 2, &t) != 0 || dk_thread_start(t) != 0 ||
        dk_thread_sample(t, a) != 0) {
        __atomic_add_fetch(&thread_failures, 1, __ATOMIC_SEQ_CST);
        return NULL;
    }
    hw_spin(LOOPS);
    if (dk_thread_sample(t, b) != 0 || b[1] - a[1] < LOOPS || b[1] - a[1] > 3 * LOOPS)
        __atomic_add_fetch(&thread_failures, 1, __ATOMIC_SEQ_CST);
    dk_thread_close(t);
    return NULL;
}

int main(void)
{
    int saved = force_all();
    int rc = dk_sampler_open(&sampler, NULL);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", dk_error_name(rc), dk_last_error());
        return 1;
    }
    const dk_database *db = dk_sampler_database(sampler);
    printf("%s: database %s (%s), %zu fixed + %zu configurable counters\n",
           dk_cpu_name(dk_sampler_cpu(sampler)), dk_database_name(db),
           dk_database_marketing_name(db), dk_database_counter_count(db, DK_COUNTERS_FIXED),
           dk_database_counter_count(db, DK_COUNTERS_CONFIGURABLE));

    const char *names[] = {"instructions", "cycles", "branches", "branch-misses"};
    dk_thread *t = NULL;
    rc = dk_thread_open_names(sampler, names, 4, &t);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", dk_error_name(rc), dk_last_error());
        return 1;
    }
    uint64_t a[4], b[4];
    HW_CHECK(dk_thread_start(t) == 0);
    HW_CHECK(dk_thread_sample(t, a) == 0);
    hw_spin(LOOPS);
    HW_CHECK(dk_thread_sample(t, b) == 0);
    for (int i = 0; i < 4; i++)
        printf("  %-14s %-28s %14llu\n", names[i], dk_thread_event_name(t, (size_t)i),
               (unsigned long long)(b[i] - a[i]));
    /* The loop retires at least 3 instructions and 1 branch per iteration,
     * and its single branch is predicted almost always. */
    HW_CHECK(b[0] - a[0] >= 3 * LOOPS);
    HW_CHECK(b[2] - a[2] >= LOOPS && b[2] - a[2] <= 3 * LOOPS);
    HW_CHECK(b[3] - a[3] < LOOPS / 100);
    HW_CHECK(b[1] > a[1]);
    HW_CHECK(dk_thread_stop(t) == 0);
    dk_thread_close(t);

    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        HW_CHECK(pthread_create(&th[i], NULL, worker, NULL) == 0);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    HW_CHECK(thread_failures == 0);

    dk_sampler_close(sampler);
    HW_CHECK(force_all() == saved);
    printf("ok\n");
    return 0;
}
