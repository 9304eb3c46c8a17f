/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * record_prog.c - a CPU-bound program for dkperf record's tests and
 * benchmark: rp_hot takes about 80% of its time, rp_warm the rest, for
 * the CPU seconds given (default 1), measured on its own CPU clock.
 * Built with frame pointers and without inlining, so that call chains name
 * both and their caller. Neither is a leaf: gcc gives a leaf no frame even
 * with -fno-omit-frame-pointer, and a frame-pointer chain then loses the
 * leaf's caller.
 *
 * With --rounds N it does a fixed amount of work instead, and with
 * --print-cpu it prints the CPU seconds it used ("cpu 1.234") on standard
 * output: bench/record_overhead measures a recorder's slowdown with them.
 *
 * With --slow-hot rp_hot does twice its work a round: dkperf diff's test
 * compares a recording of it with one without.
 *
 * With --sleeper MS a second thread, started first, sleeps MS ms in ten
 * nanosleeps made by rp_nap, called from rp_sleeper, while the main thread
 * works; the main thread waits for it at the end. dkperf record
 * --off-cpu's test finds it off CPU there for about MS ms.
 *
 * With --leader-exits the work runs in a second thread and the first
 * thread ends at once (pthread_exit): Linux then shows the first thread
 * as a zombie while the process runs on. dkperf record -p's test records
 * it to the end.
 *
 * With --exec PROGRAM ARGS... it execs PROGRAM with ARGS once its work is
 * done: one process that runs two programs in turn (dkperf report's maps
 * in time are checked on it).
 *
 * usage: record_prog [SECONDS] [--rounds N] [--print-cpu] [--slow-hot] [--sleeper MS]
 *                    [--leader-exits] [--exec PROGRAM ARGS...]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static unsigned long hot_work = 400000;

void rp_hot(unsigned long n);
void rp_warm(unsigned long n);
void rp_round(void);
void rp_touch(void);
void rp_nap(long ms);
void *rp_sleeper(void *arg);

void rp_touch(void) { sink++; }

void rp_hot(unsigned long n)
{
    rp_touch();
    for (unsigned long i = 0; i < n; i++)
        sink += i * i + (sink >> 3);
}

void rp_warm(unsigned long n)
{
    rp_touch();
    for (unsigned long i = 0; i < n; i++)
        sink ^= i + (sink << 1);
}

void rp_round(void)
{
    rp_hot(hot_work);
    rp_warm(100000);
}

void rp_nap(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    rp_touch(); /* not a tail call: the chain keeps rp_sleeper */
}

void *rp_sleeper(void *arg)
{
    long ms = *(const long *)arg;
    for (int i = 0; i < 10; i++)
        rp_nap(ms / 10);
    return NULL;
}

static double secs = 1.0;
static long rounds = 0;
static int print = 0;
static long sleep_ms = 0;

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *work(void *arg)
{
    (void)arg;
    pthread_t sleeper;
    if (sleep_ms > 0 && pthread_create(&sleeper, NULL, rp_sleeper, &sleep_ms) != 0) {
        fprintf(stderr, "record_prog: cannot start the sleeping thread\n");
        exit(1);
    }
    double t0 = cpu_seconds();
    if (rounds > 0)
        for (long r = 0; r < rounds; r++)
            rp_round();
    else
        while (cpu_seconds() - t0 < secs)
            rp_round();
    if (sleep_ms > 0)
        pthread_join(sleeper, NULL);
    if (print)
        printf("cpu %.6f\n", cpu_seconds() - t0);
    return NULL;
}

int main(int argc, char **argv)
{
    int leader_exits = 0;
    char **then = NULL;
    for (int i = 1; i < argc && then == NULL; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atol(argv[++i]);
        else if (strcmp(argv[i], "--print-cpu") == 0)
            print = 1;
        else if (strcmp(argv[i], "--sleeper") == 0 && i + 1 < argc)
            sleep_ms = atol(argv[++i]);
        else if (strcmp(argv[i], "--slow-hot") == 0)
            hot_work = 800000;
        else if (strcmp(argv[i], "--leader-exits") == 0)
            leader_exits = 1;
        else if (strcmp(argv[i], "--exec") == 0 && i + 1 < argc)
            then = argv + i + 1;
        else
            secs = atof(argv[i]);
    }
    if (leader_exits) {
        pthread_t t;
        if (pthread_create(&t, NULL, work, NULL) != 0) {
            fprintf(stderr, "record_prog: cannot start the working thread\n");
            return 1;
        }
        pthread_exit(NULL);
    }
    work(NULL);
    if (then != NULL) {
        fflush(stdout);
        execv(then[0], then);
        perror(then[0]);
        return 1;
    }
    return 0;
}
