/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat_overhead.c - what `dkperf stat` costs next to running the command
 * with the least a tool can do, and next to `perf stat`: each runs
 * `/bin/true` many times, in turn, and the whole process's CPU time (user +
 * system, the tool and the command it ran) is taken from wait4(). The
 * floor is `env /bin/true`: one more exec, as any wrapper that execs the
 * command has. Targets: dkperf stat -e task-clock at most 1.5 times the
 * floor's median, and where perf is installed at most half of perf stat's.
 *
 * usage: stat-overhead [--runs N] [--dkperf PATH] [--perf PATH]
 * Exit status 0 when the targets are met, 1 when not, 2 when it cannot run.
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

/* The commands measured, in the order they are printed. */
enum { DKPERF, FLOOR, PERF, NCMDS };

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
    char *floor_argv[] = {"/usr/bin/env", "/bin/true", NULL};
    char *perf_argv[] = {(char *)perf, "stat", "-e", "task-clock", "--", "/bin/true", NULL};
    char *const *cmds[NCMDS] = {dk_argv, floor_argv, perf_argv};
    const char *labels[NCMDS] = {"dkperf stat -e task-clock", "env (the floor)",
                                 "perf stat -e task-clock"};
    if (access(floor_argv[0], X_OK) != 0)
        floor_argv[0] = "/bin/env";
    if (cpu_us(dk_argv) < 0 || cpu_us(floor_argv) < 0) {
        fprintf(stderr, "stat-overhead: '%s' does not run here\n",
                cpu_us(floor_argv) < 0 ? "env /bin/true" : dkperf);
        return 2;
    }
    size_t ncmds = cpu_us(perf_argv) < 0 ? PERF : NCMDS;
    if (ncmds == PERF)
        printf("stat-overhead: '%s stat -e task-clock -- /bin/true' does not run here; compared "
               "with the floor only\n",
               perf);
    double *t[NCMDS] = {NULL, NULL, NULL};
    for (size_t c = 0; c < ncmds; c++)
        if ((t[c] = calloc((size_t)runs, sizeof *t[c])) == NULL) {
            fprintf(stderr,
                    "stat-overhead: out of memory for the times of %d runs (try fewer "
                    "--runs)\n",
                    runs);
            for (size_t k = 0; k < c; k++)
                free(t[k]);
            return 2;
        }
    int rc = 0;
    for (int r = 0; r < runs && rc == 0; r++)
        /* Rotate the order so that drift favours none. */
        for (size_t k = 0; k < ncmds && rc == 0; k++) {
            size_t c = ((size_t)r + k) % ncmds;
            if ((t[c][r] = cpu_us(cmds[c])) < 0) {
                fprintf(stderr, "stat-overhead: a run of %s failed\n", labels[c]);
                rc = 2;
            }
        }
    if (rc == 0) {
        double m[NCMDS] = {0, 0, 0};
        for (size_t c = 0; c < ncmds; c++)
            m[c] = dkb_median(t[c], (size_t)runs);
        printf("bench/stat-overhead: /bin/true, %d runs of each in turn; whole-process CPU time "
               "(user + sys, median)\n",
               runs);
        for (size_t c = 0; c < ncmds; c++)
            printf("  %-26s %7.0f us  %5.2fx the floor\n", labels[c], m[c],
                   m[FLOOR] > 0 ? m[c] / m[FLOOR] : 0.0);
        bool met = m[FLOOR] > 0 && m[DKPERF] <= 1.5 * m[FLOOR];
        printf("target: dkperf stat at most 1.5x the floor (env /bin/true): %.2fx, %s\n",
               m[FLOOR] > 0 ? m[DKPERF] / m[FLOOR] : 0.0, met ? "met" : "MISSED");
        if (ncmds == NCMDS) {
            bool half = m[PERF] > 0 && m[DKPERF] <= 0.5 * m[PERF];
            printf("target: dkperf stat at most half of perf stat's: %.2fx, %s\n",
                   m[PERF] > 0 ? m[DKPERF] / m[PERF] : 0.0, half ? "met" : "MISSED");
            met = met && half;
        }
        rc = met ? 0 : 1;
    }
    for (size_t c = 0; c < ncmds; c++)
        free(t[c]);
    return rc;
}
