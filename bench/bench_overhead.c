/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_overhead.c - what one run of `dkperf bench` costs next to
 * `hyperfine -N` and a bare posix_spawn + waitpid loop, all on /bin/true.
 *
 * Each round runs, one after the other: the bare loop N times; hyperfine -N
 * --runs N /bin/true; dkperf bench -r N -- /bin/true with its default
 * events. A tool's per-run time is its whole process's wall time over N
 * (start-up, counters, statistics and report included); its overhead is
 * that minus the bare loop's per-run time in the same round. The medians
 * over the rounds are compared. Target: dkperf bench's overhead at most
 * hyperfine's.
 *
 * usage: bench-overhead [--runs N] [--rounds R] [--dkperf PATH] [--hyperfine PATH]
 *                       [--compare PATH] [--report-only]
 * --compare runs a second dkperf (e.g. an older build) in the same rounds
 * and prints its figures next to the first's; the target concerns the first.
 * Exit status 0 when the target is met (or --report-only), 1 when not, 2
 * when it cannot run, 77 when hyperfine is not installed.
 */
#define _POSIX_C_SOURCE 200809L /* posix_spawn */
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/stats.h"

#ifndef DKPERF_BENCH_DKPERF
#define DKPERF_BENCH_DKPERF "dkperf"
#endif

extern char **environ;

/* Spawn argv (searched in PATH) with its output discarded, wait; its exit
 * status, or -1 when it could not be started. */
static int run(char *const argv[])
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int status;
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* µs per run of the bare loop: posix_spawn /bin/true and waitpid, n times. */
static double bare_us(long n)
{
    char *argv[] = {"/bin/true", NULL};
    uint64_t t0 = dk__monotonic_ns();
    for (long i = 0; i < n; i++) {
        pid_t pid;
        int status;
        if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0 ||
            waitpid(pid, &status, 0) != pid)
            return -1;
    }
    return (double)(dk__monotonic_ns() - t0) / 1e3 / (double)n;
}

/* µs per run of a tool that runs /bin/true n times; -1 when it failed. */
static double tool_us(char *const argv[], long n)
{
    uint64_t t0 = dk__monotonic_ns();
    if (run(argv) != 0)
        return -1;
    return (double)(dk__monotonic_ns() - t0) / 1e3 / (double)n;
}

int main(int argc, char **argv)
{
    long runs = 1000, rounds = 3;
    const char *dkperf = DKPERF_BENCH_DKPERF, *hyperfine = "hyperfine", *compare = NULL;
    bool report_only = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atol(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atol(argv[++i]);
        else if (strcmp(argv[i], "--dkperf") == 0 && i + 1 < argc)
            dkperf = argv[++i];
        else if (strcmp(argv[i], "--hyperfine") == 0 && i + 1 < argc)
            hyperfine = argv[++i];
        else if (strcmp(argv[i], "--compare") == 0 && i + 1 < argc)
            compare = argv[++i];
        else if (strcmp(argv[i], "--report-only") == 0)
            report_only = true;
        else {
            fprintf(stderr, "usage: bench-overhead [--runs N] [--rounds R] [--dkperf PATH] "
                            "[--hyperfine PATH] [--compare PATH] [--report-only]\n");
            return 2;
        }
    }
    if (runs < 10 || rounds < 1 || rounds > 100) {
        fprintf(stderr, "bench-overhead: --runs at least 10, --rounds from 1 to 100\n");
        return 2;
    }
    char nbuf[32];
    snprintf(nbuf, sizeof nbuf, "%ld", runs);
    char *hyper_argv[] = {(char *)hyperfine, "-N",   "--runs",    nbuf,
                          "--style",         "none", "/bin/true", NULL};
    char *version_argv[] = {(char *)hyperfine, "--version", NULL};
    char *dk_argv[] = {(char *)dkperf, "bench", "-r", nbuf, "--", "/bin/true", NULL};
    char *cmp_argv[] = {(char *)compare, "bench", "-r", nbuf, "--", "/bin/true", NULL};
    if (run(version_argv) != 0) {
        fprintf(stderr,
                "bench-overhead: %s cannot be run: install it (Debian: apt-get install "
                "hyperfine)\n",
                hyperfine);
        return 77;
    }

    double *bare = calloc((size_t)rounds, sizeof *bare), *hyp = calloc((size_t)rounds, sizeof *hyp),
           *dk = calloc((size_t)rounds, sizeof *dk), *cmp = calloc((size_t)rounds, sizeof *cmp);
    int rc = 2;
    if (bare == NULL || hyp == NULL || dk == NULL || cmp == NULL) {
        fprintf(stderr, "bench-overhead: out of memory\n");
        goto out;
    }
    for (long r = 0; r < rounds; r++) {
        bare[r] = bare_us(runs);
        hyp[r] = tool_us(hyper_argv, runs);
        dk[r] = tool_us(dk_argv, runs);
        if (compare != NULL && (cmp[r] = tool_us(cmp_argv, runs)) < 0) {
            fprintf(stderr, "bench-overhead: round %ld: %s bench failed\n", r + 1, compare);
            goto out;
        }
        if (bare[r] < 0 || hyp[r] < 0 || dk[r] < 0) {
            fprintf(stderr,
                    "bench-overhead: round %ld failed (bare %s, hyperfine %s, dkperf "
                    "bench %s)\n",
                    r + 1, bare[r] < 0 ? "failed" : "ok", hyp[r] < 0 ? "failed" : "ok",
                    dk[r] < 0 ? "failed" : "ok");
            goto out;
        }
        printf("round %ld: bare %.1f µs, hyperfine -N %.1f µs (+%.1f), dkperf bench %.1f µs "
               "(+%.1f) a run\n",
               r + 1, bare[r], hyp[r], hyp[r] - bare[r], dk[r], dk[r] - bare[r]);
        if (compare != NULL)
            printf("         compared: %.1f µs (+%.1f) a run\n", cmp[r], cmp[r] - bare[r]);
        hyp[r] -= bare[r];
        dk[r] -= bare[r];
        cmp[r] -= bare[r];
    }
    double b = dkb_median(bare, (size_t)rounds), h = dkb_median(hyp, (size_t)rounds),
           d = dkb_median(dk, (size_t)rounds);
    printf("/bin/true, %ld runs, median of %ld rounds:\n"
           "  bare posix_spawn+waitpid  %8.1f µs a run\n"
           "  hyperfine -N              %8.1f µs a run (+%.1f µs)\n"
           "  dkperf bench              %8.1f µs a run (+%.1f µs, default events)\n",
           runs, rounds, b, b + h, h, b + d, d);
    if (compare != NULL) {
        double c = dkb_median(cmp, (size_t)rounds);
        printf("  compared (%s) %8.1f µs a run (+%.1f µs)\n", compare, b + c, c);
    }
    bool met = d <= h;
    printf("target: dkperf bench's overhead at most hyperfine's: %s (%+.1f µs)\n",
           met ? "met" : "NOT met", d - h);
    rc = met || report_only ? 0 : 1;
out:
    free(bare);
    free(hyp);
    free(dk);
    free(cmp);
    return rc;
}
