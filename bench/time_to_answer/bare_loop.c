/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bare_loop.c - the machine's own spread, with no harness at all.
 *
 * usage: tta-bare short|long SECONDS
 *
 * Runs one body of bodies.h in a plain loop for SECONDS of wall time, in
 * chunks of about a millisecond, and prints three estimates of the time per
 * call in nanoseconds: the median chunk, the 10% quantile of the chunks, and
 * the whole loop's mean ("median q10 mean chunks"). time_to_answer.py runs
 * it beside dkbench: when even these runs spread more than +-1%, the
 * machine's speed moved by more than that, whatever measures it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bodies.h"

#define MAX_CHUNKS 100000

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static uint64_t run(int long_body, uint64_t x, long n)
{
    for (long i = 0; i < n; i++) {
        x = long_body ? tta_long(x) : tta_short(x);
        __asm__ volatile("" : : "r"(x) : "memory");
    }
    return x;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    double secs = argc == 3 ? strtod(argv[2], &end) : 0;
    if (argc != 3 || (strcmp(argv[1], "short") != 0 && strcmp(argv[1], "long") != 0) ||
        end == argv[2] || *end != '\0' || !(secs > 0 && secs <= 60)) {
        fprintf(stderr, "usage: %s short|long SECONDS (0 < SECONDS <= 60)\n", argv[0]);
        return 2;
    }
    int long_body = argv[1][0] == 'l';
    static double chunk[MAX_CHUNKS];
    uint64_t x = 1;
    /* Iterations in about a millisecond, from the shortest of five short
     * loops (one that was preempted would give chunks far too short). */
    long n = 1000;
    double t0, dt = 0;
    for (int k = 0; k < 5; k++) {
        t0 = now();
        x = run(long_body, x, n);
        double d = now() - t0;
        dt = k == 0 || d < dt ? d : dt;
    }
    n = dt > 0 ? (long)(n * 1e-3 / dt) : 100000;
    if (n < 1)
        n = 1;
    size_t k = 0;
    double start = now(), total = 0;
    long calls = 0;
    while (k < MAX_CHUNKS && now() - start < secs) {
        t0 = now();
        x = run(long_body, x, n);
        dt = now() - t0;
        chunk[k++] = dt / (double)n * 1e9;
        total += dt;
        calls += n;
    }
    if (k == 0) {
        fprintf(stderr, "%s: no chunk ran in %g s\n", argv[0], secs);
        return 1;
    }
    qsort(chunk, k, sizeof chunk[0], cmp_double);
    printf("%.4f %.4f %.4f %zu\n", chunk[k / 2], chunk[k / 10], total / (double)calls * 1e9, k);
    /* The chain's value, so that no compiler can drop it. */
    return x == 42 ? 3 : 0;
}
