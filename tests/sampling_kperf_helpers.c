/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sampling_kperf_helpers.c - what test_sampling_kperf.c and
 * test_sampling_kperf_trace.c share (see sampling_kperf_helpers.h).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sampling_kperf_helpers.h"
#include "util.h"

static volatile uint64_t hot_sink;

/* The function the samples must land in; its caller must be on the stack. */
/* Exported (dladdr names them); the clock is read rarely, so that nearly
 * every sample lands in the loop itself. */
__attribute__((noinline, visibility("default"))) void dkt_hot_loop(uint64_t ns)
{
    uint64_t goal = dkt_thread_cpu_ns() + ns, acc = 0;
    /* A register, not memory: a sanitizer's helpers would otherwise be
     * the sampled frame (and, being leaves, hide this one). */
    while (dkt_thread_cpu_ns() < goal)
        for (int i = 0; i < 3000000; i++) {
            acc += (uint64_t)i * 2654435761u;
            __asm__ volatile("" : "+r"(acc));
        }
    hot_sink += acc;
}

__attribute__((noinline, visibility("default"))) void dkt_hot_caller(uint64_t ns)
{
    dkt_hot_loop(ns);
    hot_sink++;
}

dk_sampler *open_sampler(void)
{
    dk_sampler *s = NULL;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.backend = DK_BACKEND_KPERF;
    int rc = dk_sampler_open(&s, &o);
    if (rc != 0)
        DKT_FAIL("dk_sampler_open: %d %s", rc, dk_last_error());
    return s;
}

/* One event every period (0 and a frequency: the event's default), its
 * samples with record (0: the library's default record). */
dk_sampling *open_sampling(dk_sampler *s, const char *event, uint64_t period, unsigned record)
{
    dk_sampling_event e = {event, period, 0};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.record = record;
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, &o, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open: %d %s", rc, dk_last_error());
    return p;
}

/* A timer every period_ns, its samples with time and thread. */
dk_sampling *open_timer_sampling(dk_sampler *s, uint64_t period_ns)
{
    return open_sampling(s, "timer", period_ns, DK_SAMPLE_TIME | DK_SAMPLE_TID);
}

int collect_any(void *ctx, const dk_sample *s)
{
    collected *c = ctx;
    if (s->kind == DK_SAMPLE_KIND_SAMPLE)
        c->samples++;
    return 0;
}

/* "KEY VALUE" of the sim's state file. */
long state_value(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        DKT_FAIL("cannot read %s", path);
    char k[64];
    long v = -12345;
    char line[128];
    while (fgets(line, sizeof line, f) != NULL) {
        char val[32];
        if (sscanf(line, "%63s %31s", k, val) == 2 && strcmp(k, key) == 0)
            v = strtol(val, NULL, 0);
    }
    fclose(f);
    if (v == -12345)
        DKT_FAIL("%s has no %s line", path, key);
    return v;
}

/* Nothing armed: no sampling, actions, timers, PMIs, Linux events, trace
 * buffer or ktrace owner left behind. */
void check_disarmed_but(const char *path, size_t skip)
{
    static const char *const zero[] = {"kperf.sampling", "kperf.actions_set", "kperf.timers_set",
                                       "kpc.pmi",        "sim.perf_events",   "kdebug.bufinit",
                                       "kdebug.enabled", "ktrace.owning_pid", "force_all_ctrs",
                                       "counting"};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0] - skip; i++)
        if (state_value(path, zero[i]) != 0)
            DKT_FAIL("%s: %s is %ld after the sampling closed", path, zero[i],
                     state_value(path, zero[i]));
}

void check_disarmed(const char *path) { check_disarmed_but(path, 0); }

const char *state_path(void)
{
    const char *p = getenv("DKPERF_SIM_STATE");
    if (p == NULL || *p == '\0')
        DKT_FAIL("DKPERF_SIM_STATE is not set: run through ctest");
    return p;
}

/* A state file left by an earlier run would be adopted as the machine's
 * state: start from none. */
void fresh_state(void) { unlink(state_path()); }

sim_kernel sim_kernel_open(void)
{
    const char *root = getenv("DKPERF_FRAMEWORK_ROOT");
    if (root == NULL)
        DKT_FAIL("DKPERF_FRAMEWORK_ROOT is not set: run this test through ctest");
    char path[4096];
    snprintf(path, sizeof path, "%s/usr/lib/system/libsystem_kernel.dylib", root);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL)
        DKT_FAIL("dlopen %s: %s", path, dlerror());
    sim_kernel k;
    *(void **)&k.sysctl = dlsym(h, "sysctl");
    *(void **)&k.sysctlbyname = dlsym(h, "sysctlbyname");
    *(void **)&k.emit = dlsym(h, "simk_emit");
    CHECK(k.sysctl != NULL && k.sysctlbyname != NULL && k.emit != NULL);
    return k;
}

bool dkt_is_busybox(const char *path)
{
    char *real = realpath(path, NULL);
    const char *base = real != NULL ? strrchr(real, '/') : NULL;
    bool bb = base != NULL && strcmp(base + 1, "busybox") == 0;
    free(real);
    return bb;
}
