/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fork_delay.c - an LD_PRELOAD shim: in the parent, fork() returns only
 * after DKPERF_TEST_FORK_DELAY_MS milliseconds, to land a signal between
 * fork and whatever the caller does next.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

__attribute__((visibility("default"))) pid_t fork(void)
{
    pid_t (*real)(void) = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
    if (real == NULL)
        abort();
    pid_t pid = real();
    const char *ms = getenv("DKPERF_TEST_FORK_DELAY_MS");
    if (pid > 0 && ms != NULL) {
        long v = atol(ms);
        struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return pid;
}
