/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * api_program.c - a user's program: public headers only, linked against the
 * shared library. It opens a sampler, counts fixed and configurable events
 * around a loop, checks the values grow, closes, and checks that
 * kpc.force_all_ctrs is back to what it was before.
 */
#include <stdio.h>
#include <stdlib.h>

#include <dkperf.h>
#include <dkperf/kperf.h>

static int force_all(void)
{
    const dk_kperf_vtable *kp = NULL;
    int v = -1;
    if (dk_kperf_load(NULL, &kp, NULL) != 0 || kp->kpc_force_all_ctrs_get(&v) != 0) {
        fprintf(stderr, "cannot read kpc.force_all_ctrs: %s\n", dk_last_error());
        exit(1);
    }
    return v;
}

static void fail(const char *what, int rc)
{
    fprintf(stderr, "%s: %s: %s\n", what, dk_error_name(rc), dk_last_error());
    exit(1);
}

int main(void)
{
    int before_all = force_all();
    dk_sampler *s = NULL;
    int rc = dk_sampler_open(&s, NULL);
    if (rc != 0)
        fail("dk_sampler_open", rc);

    /* Fixed and configurable: by enum where the chip has them, portable
     * names everywhere. */
    const char *names[] = {"instructions", "cycles", "branches", "branch-misses"};
    dk_thread *t = NULL;
    rc = dk_thread_open_names(s, names, 4, &t);
    if (rc != 0)
        fail("dk_thread_open_names", rc);
    if ((rc = dk_thread_start(t)) != 0)
        fail("dk_thread_start", rc);
    uint64_t a[4], b[4];
    if ((rc = dk_thread_sample(t, a)) != 0)
        fail("dk_thread_sample", rc);
    volatile uint64_t sink = 0;
    for (uint64_t i = 0; i < 20000000; i++)
        sink += i ^ (i >> 3);
    (void)sink;
    if ((rc = dk_thread_sample(t, b)) != 0)
        fail("dk_thread_sample", rc);
    printf("%s (%s):\n", dk_cpu_name(dk_sampler_cpu(s)), dk_database_name(dk_sampler_database(s)));
    for (int i = 0; i < 4; i++) {
        printf("  %-14s %-30s %12llu\n", names[i], dk_thread_event_name(t, (size_t)i),
               (unsigned long long)(b[i] - a[i]));
        if (b[i] <= a[i]) {
            fprintf(stderr, "%s did not grow\n", names[i]);
            return 1;
        }
    }
    if (dk_sampler_cpu(s) != DK_CPU_INTEL) {
        const dk_event ev[] = {DK_EVENT_FIXED_CYCLES, DK_EVENT_INST_BRANCH};
        dk_thread *u = NULL;
        if ((rc = dk_thread_open(s, ev, 2, &u)) != 0)
            fail("dk_thread_open", rc);
        dk_thread_close(u);
    }
    dk_thread_close(t);
    dk_sampler_close(s);
    int after_all = force_all();
    printf("  force_all_ctrs %d before, %d after\n", before_all, after_all);
    if (after_all != before_all)
        return 1;
    return 0;
}
