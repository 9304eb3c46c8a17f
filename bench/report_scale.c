/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_scale.c - how `dkperf report` scales with the samples of a
 * recording: recordings of 10^5, 10^6 and 10^7 samples over the same
 * stacks (written by report_gen.c), each reported with --stdio, --folded,
 * --html and --speedscope; for each, the best of --runs runs' wall and CPU
 * (user + system) seconds, samples a second, and the peak resident memory
 * of the report (wait4's ru_maxrss of that child alone).
 *
 * Targets, per output: the 10^7-sample report's peak at most the
 * 10^5-sample one's + 20 MB; at least 20 million samples a second on
 * 10^7 samples, of CPU time (the wall time is printed too; on a machine
 * shared with other work it counts their time as well).
 *
 * usage: report-scale [--max N] [--stacks K] [--runs R] [--dkperf PATH]
 *                     [--gen PATH] [--dir DIR]
 * Exit status 0 when every target is met, 1 when one is not, 2 when it
 * cannot run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"

#ifndef DKPERF_BENCH_DKPERF
#define DKPERF_BENCH_DKPERF "dkperf"
#endif
#ifndef DKPERF_BENCH_GEN
#define DKPERF_BENCH_GEN "report-gen"
#endif

typedef struct result {
    double wall, cpu; /* seconds */
    long peak_kb;
} result;

/* Runs argv with stdout and stderr to /dev/null; -1 when it did not exit 0. */
static int run(char *const argv[], result *r)
{
    uint64_t t0 = dk__monotonic_ns();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR)
            return -1;
    r->wall = (double)(dk__monotonic_ns() - t0) / 1e9;
    r->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
    r->peak_kb = ru.ru_maxrss;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *dkperf = DKPERF_BENCH_DKPERF, *gen = DKPERF_BENCH_GEN, *dir = NULL;
    unsigned long long max = 10000000ull, stacks = 200;
    int runs = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--max") == 0)
            max = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--stacks") == 0)
            stacks = strtoull(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--runs") == 0)
            runs = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--dkperf") == 0)
            dkperf = argv[i + 1];
        else if (strcmp(argv[i], "--gen") == 0)
            gen = argv[i + 1];
        else if (strcmp(argv[i], "--dir") == 0)
            dir = argv[i + 1];
        else {
            fprintf(stderr, "report-scale: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (runs < 1 || max < 100000 || stacks < 1) {
        fprintf(stderr, "report-scale: --runs at least 1, --max at least 100000\n");
        return 2;
    }
    char tmpl[1024];
    if (dir == NULL) {
        const char *t = getenv("TMPDIR");
        snprintf(tmpl, sizeof tmpl, "%s/report-scale.XXXXXX", t && *t ? t : "/tmp");
        if (mkdtemp(tmpl) == NULL) {
            fprintf(stderr, "report-scale: %s: %s\n", tmpl, strerror(errno));
            return 2;
        }
        dir = tmpl;
    }
    static const char *const outs[] = {"--stdio", "--folded", "--html", "--speedscope"};
    enum { NOUT = 4, NSIZES = 3 };
    unsigned long long sizes[NSIZES] = {max / 100, max / 10, max};
    result best[NSIZES][NOUT];
    char data[1100], out[1100], nbuf[32], kbuf[32];
    snprintf(out, sizeof out, "%s/out", dir);
    printf("dkperf report of generated recordings over %llu stacks (bench/report_gen.c), best "
           "of %d runs\n",
           stacks, runs);
    printf("%12s  %-13s %9s %9s %14s %14s %10s\n", "samples", "output", "wall s", "cpu s",
           "samples/s", "samples/cpu-s", "peak MB");
    for (int s = 0; s < NSIZES; s++) {
        snprintf(data, sizeof data, "%s/gen-%llu.data", dir, sizes[s]);
        snprintf(nbuf, sizeof nbuf, "%llu", sizes[s]);
        snprintf(kbuf, sizeof kbuf, "%llu", stacks);
        char *gargv[] = {(char *)gen, data, nbuf, "--stacks", kbuf, NULL};
        result g;
        if (run(gargv, &g) != 0) {
            fprintf(stderr, "report-scale: %s could not write %s\n", gen, data);
            return 2;
        }
        for (int o = 0; o < NOUT; o++) {
            char *rargv[8] = {(char *)dkperf, "report", "-i", data, (char *)outs[o], NULL};
            if (o >= 2)
                rargv[5] = out;
            result *b = &best[s][o];
            for (int k = 0; k < runs; k++) {
                result r;
                if (run(rargv, &r) != 0) {
                    fprintf(stderr, "report-scale: %s report -i %s %s failed\n", dkperf, data,
                            outs[o]);
                    return 2;
                }
                if (k == 0 || r.wall < b->wall)
                    b->wall = r.wall;
                if (k == 0 || r.cpu < b->cpu)
                    b->cpu = r.cpu;
                if (k == 0 || r.peak_kb > b->peak_kb)
                    b->peak_kb = r.peak_kb;
            }
            double n = (double)sizes[s];
            printf("%12llu  %-13s %9.3f %9.3f %14.0f %14.0f %10.1f\n", sizes[s], outs[o], b->wall,
                   b->cpu, n / b->wall, b->cpu > 0 ? n / b->cpu : 0.0, b->peak_kb / 1024.0);
        }
        unlink(data);
    }
    unlink(out);
    if (dir == tmpl)
        rmdir(dir);
    bool ok = true;
    for (int o = 0; o < NOUT; o++) {
        long grew = best[NSIZES - 1][o].peak_kb - best[0][o].peak_kb;
        double rate = best[NSIZES - 1][o].cpu > 0 ? (double)max / best[NSIZES - 1][o].cpu : 0;
        bool mem = grew <= 20 * 1024, fast = rate >= 20e6;
        printf("%-13s peak %+.1f MB from %llu to %llu samples (target <= +20): %s; %.1f million "
               "samples/cpu-s (target >= 20): %s\n",
               outs[o], grew / 1024.0, sizes[0], max, mem ? "met" : "NOT MET", rate / 1e6,
               fast ? "met" : "NOT MET");
        ok = ok && mem && fast;
    }
    return ok ? 0 : 1;
}
