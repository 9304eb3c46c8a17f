/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_probe.c - what the core PMU offers, found by opening counters on the
 * calling thread: how many counters one group holds, and whether counters
 * can be read from userspace (x86 rdpmc; arm64 mrs with
 * kernel.perf_user_access and the attr.config1 bits), with the reason when
 * they cannot.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "backend/perf_event/pe_internal.h"
#include "backend/perf_event/perf_mmap.h"

static int open_hw(uint64_t config, uint64_t config1, int group_fd, bool leader)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = config;
    a.config1 = config1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    /* A disabled leader counts in the arm64 driver's group check only when
     * it is to be enabled at exec (see open_counter in perf_event.c). */
    a.disabled = leader;
    a.enable_on_exec = leader;
    return dk__pe_syscall(&a, 0, -1, group_fd);
}

/* How many instructions events one group takes, then whether a cycles event
 * still fits (a cycle counter of its own: arm64 PMCCNTR_EL0, an x86 fixed
 * counter). The kernel checks a group against the counters at open. */
static void count_counters(dk__pe_probe *p)
{
    enum { MAX = 64 };
    int fds[MAX + 1];
    size_t n = 0;
    fds[n] = open_hw(PERF_COUNT_HW_INSTRUCTIONS, 0, -1, true);
    if (fds[n] < 0)
        return;
    n++;
    while (n < MAX && (fds[n] = open_hw(PERF_COUNT_HW_INSTRUCTIONS, 0, fds[0], false)) >= 0)
        n++;
    size_t general = n;
    if (n < MAX && (fds[n] = open_hw(PERF_COUNT_HW_CPU_CYCLES, 0, fds[0], false)) >= 0)
        n++;
    if (general < MAX) {
        p->general = general;
        p->counters = n;
    }
    while (n > 0)
        close(fds[--n]);
}

/* Opens an instructions counter with config1, enables it, maps its page and
 * reads it the way the backend would. */
static int try_user_read(dk__pe_probe *p, uint64_t config1)
{
    int fd = open_hw(PERF_COUNT_HW_INSTRUCTIONS, config1, -1, false);
    if (fd < 0)
        return errno;
    long size = sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        close(fd);
        snprintf(p->user_text, sizeof p->user_text,
                 "off: the counters' mmap page cannot be mapped (%s)", strerror(e));
        return 0;
    }
    const struct perf_event_mmap_page *pc = m;
    uint64_t count, ena, run;
    if (dk__pmc_read(pc, dk__pmc_native(), false, &count, &ena, &run)) {
        p->user_reads = true;
        p->config1 = config1;
        snprintf(p->user_text, sizeof p->user_text, "on: %s, %u-bit counters",
#if defined(__aarch64__)
                 "mrs of PMEVCNTR<n>_EL0/PMCCNTR_EL0 through the perf mmap page",
#else
                 "rdpmc through the perf mmap page",
#endif
                 (unsigned)pc->pmc_width);
    } else {
        snprintf(p->user_text, sizeof p->user_text,
                 "off: the kernel does not allow user reads of this thread's counters "
                 "(cap_user_rdpmc %u, index %u in the perf mmap page)",
                 (unsigned)pc->cap_user_rdpmc, (unsigned)pc->index);
    }
    munmap(m, (size_t)size);
    close(fd);
    return 0;
}

static int read_number(const char *path, long *value)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int ok = fscanf(f, "%ld", value) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

void dk__pe_probe_pmu(dk__pe_probe *p, bool have_pmu)
{
    memset(p, 0, sizeof *p);
    if (!have_pmu) {
        snprintf(p->user_text, sizeof p->user_text, "off: no hardware PMU");
        return;
    }
    count_counters(p);
    if (dk__pmc_native() == NULL) {
        snprintf(p->user_text, sizeof p->user_text,
                 "off: not implemented on this architecture (x86_64 and arm64 only)");
        return;
    }
#if defined(__aarch64__)
    long access;
    if (read_number("/proc/sys/kernel/perf_user_access", &access) != 0) {
        snprintf(p->user_text, sizeof p->user_text,
                 "off: the kernel has no kernel.perf_user_access (arm64 user reads need Linux "
                 "5.17 or later)");
        return;
    }
    if (access == 0) {
        snprintf(p->user_text, sizeof p->user_text,
                 "off: kernel.perf_user_access is 0 (as root: sysctl kernel.perf_user_access=1)");
        return;
    }
    /* attr.config1 bit 1 asks for user access, bit 0 for a 64-bit counter
     * (PMU_FORMAT_ATTR(rdpmc, "config1:1") and (long, "config1:0") in the
     * arm64 PMU driver; its sysfs format/rdpmc and format/long say the same).
     * Without 64-bit event counters (FEAT_PMUv3p5) the driver refuses bit 0
     * with user access rather than chain two counters: then 32-bit ones. */
    int e = try_user_read(p, 0x3);
    if (e != 0)
        e = try_user_read(p, 0x2);
    if (e != 0)
        snprintf(p->user_text, sizeof p->user_text,
                 "off: the kernel refused a hardware event with user access (attr.config1 bit 1): "
                 "%s",
                 strerror(e));
#else
    int e = try_user_read(p, 0);
    if (e != 0) {
        snprintf(p->user_text, sizeof p->user_text,
                 "off: a hardware instructions counter cannot be opened: %s", strerror(e));
        return;
    }
    long rdpmc;
    if (!p->user_reads && read_number("/sys/bus/event_source/devices/cpu/rdpmc", &rdpmc) == 0 &&
        rdpmc == 0)
        snprintf(p->user_text, sizeof p->user_text,
                 "off: /sys/bus/event_source/devices/cpu/rdpmc is 0 (as root: echo 1 > it)");
#endif
}
