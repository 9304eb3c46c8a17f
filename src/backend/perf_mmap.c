/*
 * perf_mmap.c - the seqlock read of a perf_event mmap page, as the kernel's
 * include/uapi/linux/perf_event.h describes it and libperf's
 * perf_mmap__read_self (tools/lib/perf/mmap.c) does it; and the probe of what
 * the PMU offers (user reads, counters per group).
 */
#ifdef __linux__
#include "backend/perf_mmap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BARRIER() __asm__ __volatile__("" ::: "memory")

#if defined(__x86_64__)
static uint64_t native_rdpmc(uint32_t counter, void *ctx)
{
    (void)ctx;
    uint32_t lo, hi;
    __asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
    return (uint64_t)hi << 32 | lo;
}

static uint64_t native_rdtsc(void *ctx)
{
    (void)ctx;
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static const dk__pmc_ops native = {native_rdpmc, native_rdtsc, 0};

const dk__pmc_ops *dk__pmc_native(void) { return &native; }
#elif defined(__aarch64__)
/*
 * The arm64 PMU driver (arch/arm64/kernel/perf_event.c, drivers/perf/
 * arm_pmuv3.c from 6.4) publishes index = hw.idx for event counter n (hw.idx
 * n + 1 before 6.12, index hw.idx + 1 after the renumbering) and 32 for the
 * cycle counter ("remap the cycle counter index to 32", armv8pmu_user_event_idx),
 * so the register is index - 1: PMEVCNTR<n>_EL0 for 0..30, PMCCNTR_EL0 for 31,
 * as libperf's read_perf_counter() has it. The registers are read directly:
 * PMUSERENR_EL0.ER (which the driver sets) would also allow PMSELR_EL0 +
 * PMXEVCNTR_EL0, but a preemption between the two could leave another task's
 * selection in PMSELR without the page's seqlock noticing.
 */
#define PMEV(n)                                                                \
    case n:                                                                    \
        __asm__ __volatile__("mrs %0, pmevcntr" #n "_el0" : "=r"(v));          \
        break;

static uint64_t native_rdpmc(uint32_t counter, void *ctx)
{
    (void)ctx;
    uint64_t v = 0;
    switch (counter) {
        PMEV(0) PMEV(1) PMEV(2) PMEV(3) PMEV(4) PMEV(5) PMEV(6) PMEV(7) PMEV(8) PMEV(9)
        PMEV(10) PMEV(11) PMEV(12) PMEV(13) PMEV(14) PMEV(15) PMEV(16) PMEV(17) PMEV(18)
        PMEV(19) PMEV(20) PMEV(21) PMEV(22) PMEV(23) PMEV(24) PMEV(25) PMEV(26) PMEV(27)
        PMEV(28) PMEV(29) PMEV(30)
    case 31:
        __asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
        break;
    default:
        break;
    }
    return v;
}

/* The clock the page's time_* fields convert: arch_timer_read_counter, the
 * virtual count at EL0. */
static uint64_t native_rdtsc(void *ctx)
{
    (void)ctx;
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}

static const dk__pmc_ops native = {native_rdpmc, native_rdtsc, 0};

const dk__pmc_ops *dk__pmc_native(void) { return &native; }
#else
const dk__pmc_ops *dk__pmc_native(void) { return 0; }
#endif

bool dk__pmc_read(const volatile struct perf_event_mmap_page *pc, const dk__pmc_ops *ops,
                  uint64_t *count, uint64_t *enabled, uint64_t *running)
{
    if (ops == 0)
        return false;
    uint32_t seq, index;
    uint64_t value, ena, run, cyc = 0;
    uint64_t time_offset = 0, time_cycles = 0, time_mask = ~(uint64_t)0;
    uint32_t time_mult = 0;
    uint16_t time_shift = 0;
    bool user_time;
    do {
        seq = pc->lock;
        BARRIER();
        ena = pc->time_enabled;
        run = pc->time_running;
        user_time = pc->cap_user_time && ena != run;
        if (user_time) {
            cyc = ops->rdtsc(ops->ctx);
            time_offset = pc->time_offset;
            time_mult = pc->time_mult;
            time_shift = pc->time_shift;
            /* The clock may be narrower than 64 bits (arm64's sched_clock
             * is): the page then gives the count at its last update and the
             * clock's mask. */
            if (pc->cap_user_time_short) {
                time_cycles = pc->time_cycles;
                time_mask = pc->time_mask;
            }
        }
        index = pc->index;
        value = (uint64_t)pc->offset;
        if (pc->cap_user_rdpmc && index != 0) {
            uint16_t width = pc->pmc_width;
            int64_t pmc = (int64_t)ops->rdpmc(index - 1, ops->ctx);
            if (width > 0 && width < 64) {
                pmc = (int64_t)((uint64_t)pmc << (64 - width));
                pmc >>= 64 - width; /* sign-extend the counter's width */
            }
            value += (uint64_t)pmc;
        }
        BARRIER();
    } while (pc->lock != seq);

    if (!pc->cap_user_rdpmc || index == 0)
        return false;
    if (user_time && time_shift < 64) {
        cyc = time_cycles + ((cyc - time_cycles) & time_mask);
        uint64_t quot = cyc >> time_shift;
        uint64_t rem = cyc & (((uint64_t)1 << time_shift) - 1);
        uint64_t delta = time_offset + quot * time_mult + ((rem * time_mult) >> time_shift);
        ena += delta;
        run += delta;
    }
    *count = value;
    *enabled = ena;
    *running = run;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Probing the PMU                                                           */
/* ------------------------------------------------------------------------ */

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
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* How many instructions events one group takes, then whether a cycles event
 * still fits (a cycle counter of its own: arm64 PMCCNTR_EL0, an x86 fixed
 * counter). The kernel checks a group against the counters at open. */
static void count_counters(dk__pmc_probe *p)
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
static int try_user_read(dk__pmc_probe *p, uint64_t config1)
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
    if (dk__pmc_read(pc, dk__pmc_native(), &count, &ena, &run)) {
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

void dk__pmc_probe_pmu(dk__pmc_probe *p, bool have_pmu)
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
#endif /* __linux__ */
