/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * perf_mmap.c - the seqlock read of a perf_event mmap page, as the kernel's
 * include/uapi/linux/perf_event.h describes it and libperf's
 * perf_mmap__read_self (tools/lib/perf/mmap.c) does it.
 */
#ifdef __linux__
#include "backend/perf_event/perf_mmap.h"

#if DK__PMC_NATIVE
static uint64_t native_rdtsc(void *ctx);
static const dk__pmc_ops native = {dk__pmc_native_counter, native_rdtsc, 0};
const dk__pmc_ops *dk__pmc_native(void) { return &native; }
#else
const dk__pmc_ops *dk__pmc_native(void) { return 0; }
#endif

#if defined(__x86_64__)
static uint64_t native_rdtsc(void *ctx)
{
    (void)ctx;
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}
#elif defined(__aarch64__)
/*
 * The arm64 PMU driver (arch/arm64/kernel/perf_event.c, drivers/perf/
 * arm_pmuv3.c from 6.4) publishes index = hw.idx for event counter n (hw.idx
 * n + 1 before 6.12, index hw.idx + 1 after the renumbering) and 32 for the
 * cycle counter ("remap the cycle counter index to 32", armv8pmu_user_event_idx),
 * so the register is index - 1: PMEVCNTR<n>_EL0 for 0..30, PMCCNTR_EL0 for 31,
 * as libperf's read_perf_counter() has it (dk__pmc_native_counter). The
 * registers are read directly: PMUSERENR_EL0.ER (which the driver sets) would
 * also allow PMSELR_EL0 + PMXEVCNTR_EL0, but a preemption between the two
 * could leave another task's selection in PMSELR without the page's seqlock
 * noticing.
 *
 * The clock the page's time_* fields convert: arch_timer_read_counter, the
 * virtual count at EL0.
 */
static uint64_t native_rdtsc(void *ctx)
{
    (void)ctx;
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}
#endif

bool dk__pmc_set_add(dk__pmc_set *set, const struct perf_event_mmap_page *page)
{
    if (set->n == DK__PMC_SET_MAX)
        return false;
    uint16_t width = page->pmc_width;
    set->page[set->n] = page;
    set->shift[set->n] = (uint8_t)(width > 0 && width < 64 ? 64 - width : 0);
    set->n++;
    return true;
}

bool dk__pmc_read(const volatile struct perf_event_mmap_page *pc, const dk__pmc_ops *ops,
                  bool want_time, uint64_t *count, uint64_t *enabled, uint64_t *running)
{
    if (ops == 0)
        return false;
    uint32_t seq, index;
    uint64_t value, ena, run, cyc = 0;
    uint64_t time_offset = 0, time_cycles = 0, time_mask = ~(uint64_t)0;
    uint32_t time_mult = 0;
    uint16_t time_shift = 0;
    bool user_time, has_clock;
    do {
        seq = pc->lock;
        DK__PMC_BARRIER();
        ena = pc->time_enabled;
        run = pc->time_running;
        has_clock = pc->cap_user_time;
        user_time = has_clock && (want_time || ena != run);
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
        DK__PMC_BARRIER();
    } while (pc->lock != seq);

    if (!pc->cap_user_rdpmc || index == 0 || (want_time && !has_clock))
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

#endif /* __linux__ */
