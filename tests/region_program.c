/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * region_program.c - a user's program (dkperf.h only): counts a region of
 * work with whatever backend this machine has, and shows what it cannot
 * count. The work: touch N fresh pages, then burn M ms of CPU.
 *
 *   region_program [--pages N] [--burn-ms M]      count the region, print "name value" lines
 *   region_program --work-only [...]              only do the work (for perf stat)
 *
 * perf_event: task-clock and page-faults, and the error for instructions
 * where there is no hardware PMU. kperf/selfcounts: instructions and
 * cycles, and the error for branch-misses without root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <dkperf.h>

static void work(size_t pages, double burn_ms)
{
    long page = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, pages * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
#ifdef MADV_NOHUGEPAGE
    madvise(p, pages * (size_t)page, MADV_NOHUGEPAGE);
#endif
    for (size_t i = 0; i < pages; i++)
        p[i * (size_t)page] = 1;
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    double start = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6, now = start;
    volatile unsigned long sink = 0;
    while (now - start < burn_ms) {
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        now = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
    }
    (void)sink;
    munmap(p, pages * (size_t)page);
}

static int count(dk_sampler *s, const char *const *names, size_t n, size_t pages, double ms)
{
    dk_thread *t = NULL;
    uint64_t before[4], after[4];
    int rc = dk_thread_open_names(s, names, n, &t);
    if (rc == 0)
        rc = dk_thread_start(t);
    if (rc == 0)
        rc = dk_thread_sample(t, before);
    if (rc == 0) {
        work(pages, ms);
        rc = dk_thread_sample(t, after);
    }
    if (rc != 0) {
        fprintf(stderr, "region_program: %s: %s\n", dk_error_name(rc), dk_last_error());
        dk_thread_close(t);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        printf("%s %llu\n", names[i], (unsigned long long)(after[i] - before[i]));
    dk_thread_close(t);
    return 0;
}

/* Try to open one event, expecting it to fail; print the outcome. */
static void try_event(dk_sampler *s, const char *name)
{
    dk_thread *t = NULL;
    int rc = dk_thread_open_names(s, &name, 1, &t);
    if (rc == 0)
        printf("%s: counts\n", name);
    else
        printf("%s: %s: %s\n", name, dk_error_name(rc), dk_last_error());
    dk_thread_close(t);
}

int main(int argc, char **argv)
{
    size_t pages = 20000;
    double ms = 200;
    int work_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pages") == 0 && i + 1 < argc)
            pages = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--burn-ms") == 0 && i + 1 < argc)
            ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--work-only") == 0)
            work_only = 1;
        else {
            fprintf(stderr, "usage: %s [--pages N] [--burn-ms M] [--work-only]\n", argv[0]);
            return 2;
        }
    }
    if (work_only) {
        work(pages, ms);
        return 0;
    }
    dk_sampler *s = NULL;
    int rc = dk_sampler_open(&s, NULL);
    if (rc != 0) {
        fprintf(stderr, "region_program: %s: %s\n", dk_error_name(rc), dk_last_error());
        return 1;
    }
    printf("backend %s\n", dk_sampler_backend(s));
    if (strcmp(dk_sampler_backend(s), "perf_event") == 0) {
        const char *names[] = {"task-clock", "page-faults"};
        rc = count(s, names, 2, pages, ms);
        try_event(s, "instructions");
    } else {
        const char *names[] = {"instructions", "cycles"};
        rc = count(s, names, 2, pages, ms);
        try_event(s, "branch-misses");
    }
    dk_sampler_close(s);
    return rc == 0 ? 0 : 1;
}
