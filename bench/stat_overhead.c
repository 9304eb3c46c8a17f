/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat_overhead.c - what `dkperf stat` costs next to `perf stat`: each runs
 * `-e task-clock -- /bin/true` many times, alternating, and the whole
 * process's CPU time (user + system, the tool and the command it ran) is
 * taken from wait4(). Target: dkperf at most half of perf's median.
 *
 * usage: stat-overhead [--runs N] [--dkperf PATH] [--perf PATH]
 * Exit status 0 when the target is met, 1 when not, 2 when it cannot run
 * (77 when perf is not installed).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "common/stats.h"

#ifndef DKPERF_BENCH_DKPERF
#define DKPERF_BENCH_DKPERF "dkperf"
#endif

/* CPU time in µs of one run of argv, its output discarded; -1 on failure. */
static double cpu_us(char *const argv[])
{
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    child_options o = CHILD_OPTIONS_INIT;
    o.stdout_fd = o.stderr_fd = null;
    child_process c;
    int rc = child_prepare(&c, argv, &o);
    if (null >= 0)
        close(null);
    if (rc != 0)
        return -1;
    int status = 0, exec_errno = 0;
    struct rusage ru;
    if (child_release(&c) != 0 || child_exec_result(&c, &exec_errno) != 0 || exec_errno != 0) {
        child_abandon(&c);
        return -1;
    }
    if (child_reap(&c, &status, &ru) != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

int main(int argc, char **argv)
{
    int runs = 30;
    const char *dkperf = DKPERF_BENCH_DKPERF, *perf = "perf";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dkperf") == 0 && i + 1 < argc)
            dkperf = argv[++i];
        else if (strcmp(argv[i], "--perf") == 0 && i + 1 < argc)
            perf = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--runs N] [--dkperf PATH] [--perf PATH]\n", argv[0]);
            return 2;
        }
    }
    if (runs < 3 || runs > 10000) {
        fprintf(stderr, "stat-overhead: --runs from 3 to 10000\n");
        return 2;
    }
    char *dk_argv[] = {(char *)dkperf, "stat", "-e", "task-clock", "--", "/bin/true", NULL};
    char *perf_argv[] = {(char *)perf, "stat", "-e", "task-clock", "--", "/bin/true", NULL};
    if (cpu_us(perf_argv) < 0) {
        printf("stat-overhead: '%s stat -e task-clock -- /bin/true' does not run here; skipped\n",
               perf);
        return 77;
    }
    if (cpu_us(dk_argv) < 0) {
        fprintf(stderr, "stat-overhead: '%s stat -e task-clock -- /bin/true' failed\n", dkperf);
        return 2;
    }
    double *dk = calloc((size_t)runs, sizeof *dk), *pf = calloc((size_t)runs, sizeof *pf);
    if (dk == NULL || pf == NULL) {
        fprintf(stderr, "stat-overhead: out of memory for the times of %d runs (try fewer --runs)\n",
                runs);
        free(dk);
        free(pf);
        return 2;
    }
    for (int r = 0; r < runs; r++) {
        /* Alternate the order so that drift favours neither. */
        if (r % 2) {
            dk[r] = cpu_us(dk_argv);
            pf[r] = cpu_us(perf_argv);
        } else {
            pf[r] = cpu_us(perf_argv);
            dk[r] = cpu_us(dk_argv);
        }
        if (dk[r] < 0 || pf[r] < 0) {
            fprintf(stderr, "stat-overhead: a run of %s stat failed\n", dk[r] < 0 ? dkperf : perf);
            free(dk);
            free(pf);
            return 2;
        }
    }
    double d = dkb_median(dk, (size_t)runs), p = dkb_median(pf, (size_t)runs);
    printf("bench/stat-overhead: stat -e task-clock -- /bin/true, %d alternating runs each\n", runs);
    printf("  whole-process CPU time (user + sys, median): dkperf %.0f us, perf %.0f us\n", d, p);
    printf("  ratio dkperf/perf: %.3f\n", p > 0 ? d / p : 0.0);
    bool met = p > 0 && d <= 0.5 * p;
    printf("target: dkperf at most half of perf's: %s\n", met ? "met" : "MISSED");
    free(dk);
    free(pf);
    return met ? 0 : 1;
}
