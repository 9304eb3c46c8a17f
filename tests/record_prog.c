/*
 * record_prog.c - a CPU-bound program for dkperf record's tests and
 * benchmark: rp_hot takes about 80% of its time, rp_warm the rest, for
 * the CPU seconds given (default 1), measured on its own CPU clock.
 * Built with frame pointers and without inlining, so that call chains name
 * both and their caller. Neither is a leaf: gcc gives a leaf no frame even
 * with -fno-omit-frame-pointer, and a frame-pointer chain then loses the
 * leaf's caller.
 *
 * usage: record_prog [SECONDS]
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

void rp_hot(unsigned long n);
void rp_warm(unsigned long n);
void rp_round(void);
void rp_touch(void);

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
    rp_hot(400000);
    rp_warm(100000);
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    double t0 = cpu_seconds();
    while (cpu_seconds() - t0 < secs)
        rp_round();
    return 0;
}
