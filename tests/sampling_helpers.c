/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sampling_helpers.c - the workloads and helpers of test_sampling.c and
 * test_sampling_process.c (see sampling_helpers.h).
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampling_helpers.h"

/* ---- workloads with known address ranges -------------------------------- */

volatile uint64_t dkt_sink;

__attribute__((noinline, section("dkt_busy"))) void busy_store(uint64_t x)
{
    dkt_sink = x;
    __asm__ __volatile__("" ::: "memory");
}

/* About a few hundred microseconds of arithmetic. Not a leaf, so that it
 * sets up a frame (a leaf need not, even with -fno-omit-frame-pointer, and
 * a frame-pointer chain taken in it then skips its caller). */
__attribute__((noinline, section("dkt_busy"))) void busy_chunk(void)
{
    uint64_t x = dkt_sink;
    for (int i = 0; i < 200000; i++)
        x = x * 6364136223846793005u + 1442695040888963407u;
    busy_store(x);
    __asm__ __volatile__("" ::: "memory"); /* not a tail call: the frame stays */
}

uint64_t cpu_ns(void) { return dkt_thread_cpu_ns(); }

/* Burn ms of this thread's CPU time, nearly all of it in busy_chunk; between
 * chunks call between (may be NULL). */
__attribute__((noinline, section("dkt_caller"))) void burn(double ms, void (*between)(void *),
                                                           void *ctx)
{
    uint64_t goal = cpu_ns() + (uint64_t)(ms * 1e6);
    while (cpu_ns() < goal) {
        busy_chunk();
        if (between != NULL)
            between(ctx);
    }
    __asm__ __volatile__("" ::: "memory"); /* keep the call above from being a tail call */
}

/* A loop of exactly 2 instructions per iteration (n >= 1). */
__attribute__((noinline, section("dkt_loop"))) void spin_loop(unsigned long n)
{
#if defined(__aarch64__)
    __asm__ __volatile__("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#elif defined(__x86_64__)
    __asm__ __volatile__("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#else
    for (volatile unsigned long i = 0; i < n; i++)
        ;
#endif
}

bool in_range(uint64_t ip, const char *start, const char *stop)
{
    return ip >= (uint64_t)(uintptr_t)start && ip < (uint64_t)(uintptr_t)stop;
}

/* ---- helpers ------------------------------------------------------------ */

dk_sampler *perf_sampler(void)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "perf_event");
    return s;
}

size_t open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    size_t n = 0;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

size_t maps_of_perf(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof line, f) != NULL)
        n += strstr(line, "perf_event") != NULL || strstr(line, "anon_inode:[perf") != NULL;
    fclose(f);
    return n;
}

const char *self_name(void)
{
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    CHECK(n > 0);
    path[n] = '\0';
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

int collect(void *ctx, const dk_sample *x)
{
    seen *w = ctx;
    switch (x->kind) {
    case DK_SAMPLE_KIND_SAMPLE:
        w->samples++;
        if (w->first_time == 0)
            w->first_time = x->time_ns;
        if (x->time_ns < w->last_time)
            w->time_backwards++;
        w->last_time = x->time_ns;
        if (w->tid != 0 && x->tid != w->tid)
            w->wrong_tid++;
        if (w->pid != 0 && x->pid != w->pid)
            w->other_pid_samples++;
        if (x->event >= w->n_events)
            w->bad_event++;
        w->period_sum += x->period;
        w->user += x->user;
        w->in_busy += in_range(x->ip, __start_dkt_busy, __stop_dkt_busy);
        w->in_loop += in_range(x->ip, __start_dkt_loop, __stop_dkt_loop);
        if (x->n_frames > 0) {
            w->with_chain++;
            for (size_t i = 1; i < x->n_frames; i++)
                if (in_range(x->frames[i], __start_dkt_caller, __stop_dkt_caller)) {
                    w->caller_in_chain++;
                    break;
                }
        }
        if (x->n_values == 2) {
            w->values_seen++;
            if (x->values[0] < w->values_last[0] || x->values[1] < w->values_last[1])
                w->values_backwards++;
            w->values_last[0] = x->values[0];
            w->values_last[1] = x->values[1];
        }
        break;
    case DK_SAMPLE_KIND_MAP:
        w->maps++;
        CHECK(x->map_path != NULL);
        CHECK_U64(x->map_len, >, 0);
        if (strstr(x->map_path, self_name()) != NULL)
            w->map_self = true;
        if (strstr(x->map_path, "/libc.so") != NULL || strstr(x->map_path, "/libc-") != NULL)
            w->map_libc = true;
        if (strstr(x->map_path, "touch_pages") != NULL)
            w->map_touch = true;
        break;
    case DK_SAMPLE_KIND_COMM:
        w->comms++;
        CHECK(x->comm != NULL);
        if (strcmp(x->comm, "touch_pages") == 0)
            w->comm_touch++;
        break;
    case DK_SAMPLE_KIND_EXIT:
        w->exits++;
        if (x->pid != w->pid)
            w->exits_other++;
        break;
    default:
        w->others++;
    }
    return 0;
}

void drain_into(dk_sampling *p, seen *w)
{
    int rc = dk_sampling_drain(p, collect, w);
    if (rc < 0)
        DKT_FAIL("dk_sampling_drain returned %s: %s", dk_error_name(rc), dk_last_error());
}

dk_sampling *open_one(dk_sampler *s, const char *name, uint64_t period, uint64_t freq,
                      dk_sampling_options *o)
{
    dk_sampling_event ev = {name, period, freq};
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &ev, 1, o, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open(%s) returned %s: %s", name, dk_error_name(rc), dk_last_error());
    CHECK(p != NULL);
    return p;
}

uint64_t gettid_u64(void) { return (uint64_t)syscall(SYS_gettid); }
