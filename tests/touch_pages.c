/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * touch_pages.c - a workload for the tests that count programs they start:
 * touch N fresh pages, then burn M ms of CPU. Built without sanitizers and
 * without libdkperf, so that its own start-up costs the same few page
 * faults on every run, whatever the build of the tests.
 *
 *   touch_pages --work-only --pages N --burn-ms M   (the same words as region_program)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    size_t pages = 0;
    double ms = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pages") == 0 && i + 1 < argc)
            pages = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--burn-ms") == 0 && i + 1 < argc)
            ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--work-only") != 0)
            return 2;
    }
    long page = sysconf(_SC_PAGESIZE);
    if (pages > 0) {
        volatile char *p = mmap(NULL, pages * (size_t)page, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        madvise((void *)p, pages * (size_t)page, MADV_NOHUGEPAGE);
        for (size_t i = 0; i < pages; i++)
            p[i * (size_t)page] = 1;
    }
    volatile uint64_t sink = 0;
    uint64_t goal = cpu_ns() + (uint64_t)(ms * 1e6);
    while (cpu_ns() < goal)
        for (int i = 0; i < 10000; i++)
            sink += (uint64_t)i * 2654435761u;
    return sink == 1 ? 3 : 0; /* read, so the burn is not optimised away */
}
