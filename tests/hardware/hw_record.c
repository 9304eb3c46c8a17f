/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * hw_record.c - sampling on a real Mac through the library's kperf backend:
 * PMIs of cycles and kperf timer fires over a busy function, whose samples
 * must carry call chains that name it and its caller; a child sampled by
 * pid, named before its samples and its exit recorded after them. Everything it checks
 * has run only against the simulated frameworks until a person runs this.
 *
 *   sudo ./build/tests/hardware/hw_record   # samples
 *   ./build/tests/hardware/hw_record        # without root: the refusal
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../child_sampling.h"
#include "dkperf.h"
#include "hw.h"

typedef struct tally {
    size_t samples, in_hot, with_caller, maps, other_pid;
} tally;

static volatile uint64_t sink;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline, visibility("default"))) void hw_hot_loop(uint64_t ns)
{
    uint64_t goal = cpu_ns() + ns, acc = 0;
    while (cpu_ns() < goal)
        for (int i = 0; i < 3000000; i++) {
            acc += (uint64_t)i * 2654435761u;
            __asm__ volatile("" : "+r"(acc));
        }
    sink += acc;
}

__attribute__((noinline, visibility("default"))) void hw_hot_caller(uint64_t ns)
{
    hw_hot_loop(ns);
    sink++;
}

static bool names(uint64_t addr, const char *fn)
{
    Dl_info info;
    return dladdr((void *)(uintptr_t)addr, &info) != 0 && info.dli_sname != NULL &&
           strcmp(info.dli_sname, fn) == 0;
}

static int count(void *ctx, const dk_sample *s)
{
    tally *t = ctx;
    if (s->kind == DK_SAMPLE_KIND_MAP) {
        t->maps++;
        return 0;
    }
    t->samples++;
    if (s->pid != getpid())
        t->other_pid++;
    if (s->n_frames > 0 && names(s->frames[0], "hw_hot_loop")) {
        t->in_hot++;
        for (size_t i = 1; i < s->n_frames; i++)
            if (names(s->frames[i], "hw_hot_caller")) {
                t->with_caller++;
                break;
            }
    }
    return 0;
}

static void run(dk_sampler *s, const char *event, uint64_t period)
{
    dk_sampling_event e = {event, period, 0};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.record = DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_IP | DK_SAMPLE_PERIOD |
               DK_SAMPLE_CALLCHAIN;
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, &o, &p);
    if (rc != 0) {
        fprintf(stderr, "dk_sampling_open(%s): %s\n", event, dk_last_error());
        exit(1);
    }
    tally t = {0};
    HW_CHECK(dk_sampling_start(p) == 0);
    for (int i = 0; i < 10; i++) {
        hw_hot_caller(50000000); /* 50 ms of CPU */
        HW_CHECK(dk_sampling_drain(p, count, &t) >= 0);
    }
    HW_CHECK(dk_sampling_stop(p) == 0);
    HW_CHECK(dk_sampling_drain(p, count, &t) >= 0);
    dk_sampling_stats st;
    HW_CHECK(dk_sampling_stats_get(p, &st) == 0);
    dk_sampling_close(p);
    printf("%s/%llu: %zu samples (%llu lost), %zu in hw_hot_loop, %zu of them with "
           "hw_hot_caller on the stack, %zu maps, %zu from other processes\n",
           event, (unsigned long long)period, t.samples, (unsigned long long)st.lost, t.in_hot,
           t.with_caller, t.maps, t.other_pid);
    HW_CHECK(t.samples >= 50);
    HW_CHECK(t.other_pid == 0);
    HW_CHECK(t.in_hot >= t.samples / 2);
    HW_CHECK(t.with_caller >= t.in_hot * 8 / 10);
    HW_CHECK(t.maps >= 1);
}

/* A child that execs /bin/sh with a busy loop, sampled by pid until it
 * exits: one COMM naming "sh" before its samples (proc_pidinfo
 * PROC_PIDTBSDINFO), one EXIT after them (the kernel's BSD_PROC_EXIT). */
static void run_child(dk_sampler *s)
{
    dkt_child_records c;
    if (dkt_sample_child(s, "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done", 1200, &c) != 0) {
        fprintf(stderr, "%s\n", c.err);
        exit(1);
    }
    printf("child %d: %zu samples, %zu names (%s), %zu exits, %zu records of other processes\n",
           (int)c.pid, c.samples, c.comms, c.comm, c.exits, c.other);
    HW_CHECK(c.samples >= 5);
    HW_CHECK(c.comms == 1 + c.execs_after_sample && c.comm_after_sample == 0 &&
             strcmp(c.comm, "sh") == 0);
    HW_CHECK(c.exits == 1 && c.samples_after_exit == 0);
    HW_CHECK(c.other == 0);
}

int main(void)
{
    dk_sampler *s = NULL;
    if (geteuid() != 0) {
        /* Without root the library falls back to thread_selfcounts, which
         * cannot sample (DK_EPERM: kperf was passed over for privileges);
         * the error must say that sampling needs root. */
        HW_CHECK(dk_sampler_open(&s, NULL) == 0);
        dk_sampling_event e = {"cycles", 1000000, 0};
        dk_sampling *p = NULL;
        int rc = dk_sampling_open(s, &e, 1, NULL, &p);
        printf("without root: %s\n", dk_last_error());
        HW_CHECK(rc == DK_EPERM && strstr(dk_last_error(), "needs root") != NULL);
        dk_sampler_close(s);
        printf("ok\n");
        return 0;
    }
    dk_sampler_options so = DK_SAMPLER_OPTIONS_INIT;
    so.backend = DK_BACKEND_KPERF;
    if (dk_sampler_open(&s, &so) != 0) {
        fprintf(stderr, "dk_sampler_open: %s\n", dk_last_error());
        return 1;
    }
    run(s, "cycles", 1000000);
    run(s, "timer", 1000000);
    /* Ownership given back: a second sampling opens as the first did. */
    run(s, "instructions", 2000000);
    run_child(s);
    dk_sampler_close(s);
    printf("ok (now check that `ktrace info` shows no owner and no buffer)\n");
    return 0;
}
