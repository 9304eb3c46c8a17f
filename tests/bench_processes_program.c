/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_processes_program.c - a dkbench program for check_bench_processes.py:
 * two quick benchmarks, and environment switches that make it misbehave as
 * a worker process (DKBENCH_WORKER is removed from the environment by
 * dk_bench_main, so a body tells a worker by BPP_IN_WORKER, set here).
 *   BPP_NOT_A_WORKER=1  main exits 3 when run again as a worker, before
 *                       dk_bench_main
 *   BPP_CRASH=SIG       the body of "crash" raises SIG (a number) in a worker
 *   BPP_SLOW=1          the bodies of "slow" and of the group "sleepy"
 *                       sleep 10 ms an iteration
 *   BPP_HANG=S          the body of "slow" sleeps S seconds once in a worker
 *   BPP_FORK=S          the body of "forks" leaves, in a worker, a child
 *                       process that sleeps S seconds (holding what the
 *                       worker holds open)
 *   BPP_EXTERNAL=1      an external body "external" is registered too
 */
#include <dkbench.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

unsigned v[256]; /* not static: the compiler cannot prove it constant */

static unsigned sum(void)
{
    unsigned s = 0;
    for (int i = 0; i < 256; i++)
        s += v[i] * 3 + 1;
    return s;
}

static void quick(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_do_not_optimize(sum()); }

static void crash(dk_bench *b)
{
    const char *sig = getenv("BPP_CRASH");
    if (sig != NULL && getenv("BPP_IN_WORKER") != NULL)
        raise(atoi(sig));
    DK_BENCH_LOOP(b) dk_bench_do_not_optimize(sum());
}

static void slow(dk_bench *b)
{
    struct timespec ms10 = {0, 10 * 1000 * 1000};
    int sleep_each = getenv("BPP_SLOW") != NULL;
    const char *hang = getenv("BPP_HANG");
    static int hung;
    if (hang != NULL && getenv("BPP_IN_WORKER") != NULL && !hung++)
        sleep((unsigned)atoi(hang));
    DK_BENCH_LOOP(b)
    {
        if (sleep_each)
            nanosleep(&ms10, NULL);
        dk_bench_do_not_optimize(sum());
    }
}

static void forks(dk_bench *b)
{
    const char *s = getenv("BPP_FORK");
    static int forked;
    if (s != NULL && getenv("BPP_IN_WORKER") != NULL && !forked++ && fork() == 0) {
        sleep((unsigned)atoi(s));
        _exit(0);
    }
    DK_BENCH_LOOP(b) dk_bench_do_not_optimize(sum());
}

DK_BENCHMARK_NAMED("quick/a", quick)
DK_BENCHMARK_NAMED("quick/b", quick)
DK_BENCHMARK_NAMED("crash", crash)
DK_BENCHMARK_NAMED("slow", slow)
DK_BENCHMARK_NAMED("sleepy/a", slow)
DK_BENCHMARK_NAMED("sleepy/b", slow)
DK_BENCHMARK_NAMED("forks", forks)

static int external(void *ctx, dk_bench_body_run *run)
{
    (void)ctx;
    run->wall_s = run->user_s = 1e-6 * (1 + (double)(run->index % 7) / 100);
    return 0;
}

int main(int argc, char **argv)
{
    dk_bench_body body = {sizeof body, "external", external, NULL, NULL, 0};
    if (getenv("BPP_EXTERNAL") != NULL && dk_bench_register_body(&body) != 0)
        return 4;
    if (getenv("DKBENCH_WORKER") != NULL) {
        if (getenv("BPP_NOT_A_WORKER") != NULL)
            return 3;
        setenv("BPP_IN_WORKER", "1", 1);
    }
    return dk_bench_main(argc, argv);
}
