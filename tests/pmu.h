/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pmu.h - whether this machine has a hardware PMU, judged by what the kernel
 * can count, not by the name of a sysfs directory ("cpu" on x86,
 * "cpu_core"/"cpu_atom" on hybrid x86, "armv8_pmuv3_0" on arm64). Linux only.
 */
#ifndef DKPERF_TEST_PMU_H
#define DKPERF_TEST_PMU_H

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

/* Opens a user-mode hardware instructions counter on this thread; returns
 * whether the kernel took it, and the errno in *why when it did not. */
static inline bool dkt_have_hw_pmu(int *why)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (why != NULL)
        *why = fd < 0 ? errno : 0;
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

#endif /* DKPERF_TEST_PMU_H */
