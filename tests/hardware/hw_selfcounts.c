/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * hw_selfcounts.c - counters without root on a real Mac (macOS 12.4+):
 * run it as a normal user, ./hw_selfcounts
 *
 * Checks that libdkperf falls back to thread_selfcounts, counts a loop of
 * known shape, splits by performance level, refuses other events with
 * DK_EPERM, and reads a child's totals with proc_pid_rusage.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dkperf.h"
#include "hw.h"

#define LOOPS 10000000ull

int main(void)
{
    if (geteuid() == 0) {
        fprintf(stderr, "run this one without sudo\n");
        return 1;
    }
    dk_sampler *s = NULL;
    int rc = dk_sampler_open(&s, NULL);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", dk_error_name(rc), dk_last_error());
        return 1;
    }
    printf("backend %s (%s)\n", dk_sampler_backend(s), dk_sampler_why(s));
    HW_CHECK(dk_thread_open_names(s, (const char *const[]){"branch-misses"}, 1,
                                  &(dk_thread *){NULL}) == DK_EPERM);
    const char *names[] = {"instructions", "cycles"};
    dk_thread *t = NULL;
    HW_CHECK(dk_thread_open_names(s, names, 2, &t) == 0);
    uint64_t a[2], b[2];
    HW_CHECK(dk_thread_start(t) == 0 && dk_thread_sample(t, a) == 0);
    hw_spin(LOOPS);
    HW_CHECK(dk_thread_sample(t, b) == 0);
    printf("  instructions %llu, cycles %llu\n", (unsigned long long)(b[0] - a[0]),
           (unsigned long long)(b[1] - a[1]));
    HW_CHECK(b[0] - a[0] >= 3 * LOOPS && b[1] > a[1]);

    size_t levels = dk_sampler_perf_levels(s);
    printf("  %zu performance levels\n", levels);
    if (levels > 0 && levels <= 4) {
        uint64_t split[8];
        HW_CHECK(dk_thread_sample_perf_levels(t, split, levels) == 0);
        uint64_t sum = 0;
        for (size_t l = 0; l < levels; l++) {
            printf("  %s: instructions %llu\n", dk_sampler_perf_level_name(s, l),
                   (unsigned long long)split[l * 2]);
            sum += split[l * 2];
        }
        HW_CHECK(sum >= b[0]);
    }
    dk_thread_close(t);

    pid_t pid = fork();
    if (pid == 0) {
        hw_spin(LOOPS);
        _exit(0);
    }
    siginfo_t info;
    HW_CHECK(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) == 0);
    uint64_t insts = 0, cycles = 0;
    HW_CHECK(dk_process_cpi(s, pid, &insts, &cycles) == 0);
    printf("  child: instructions %llu, cycles %llu\n", (unsigned long long)insts,
           (unsigned long long)cycles);
    HW_CHECK(insts >= 3 * LOOPS);
    waitpid(pid, NULL, 0);
    dk_sampler_close(s);
    printf("ok\n");
    return 0;
}
