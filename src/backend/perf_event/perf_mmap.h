/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * perf_mmap.h - reading a perf_event counter from its mmap'd page without a
 * system call (x86 rdpmc, arm64 mrs). Separate from the backend so that the
 * readers can be tested on a synthetic page with a stand-in for the
 * instructions. Not installed; Linux only.
 */
#ifndef DKPERF_BACKEND_PERF_MMAP_H
#define DKPERF_BACKEND_PERF_MMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

/* The two instructions the reader needs; tests replace them. rdpmc reads
 * hardware counter `counter` (the page's index - 1), rdtsc the clock the
 * page's time_* fields convert (x86 TSC, arm64 CNTVCT_EL0). */
typedef struct dk__pmc_ops {
    uint64_t (*rdpmc)(uint32_t counter, void *ctx);
    uint64_t (*rdtsc)(void *ctx);
    void *ctx;
} dk__pmc_ops;

/* This CPU's instructions, or NULL where userspace reads are not supported. */
const dk__pmc_ops *dk__pmc_native(void);

/*
 * Read one counter from its page under the page's seqlock. Returns true and
 * sets *count, *enabled, *running when the counter is on the PMU and
 * cap_user_rdpmc is set; false when the caller must read() instead
 * (software event, not scheduled now, or no userspace access). The times
 * are brought up to now from the page's clock when the counter was
 * time-shared (to scale the count) or when want_time asks for them (to
 * report them: the page's own times are those of its last update, which
 * may be milliseconds old); when want_time asks and the page has no clock
 * (cap_user_time 0), false, so that read() gives current times.
 */
bool dk__pmc_read(const volatile struct perf_event_mmap_page *pc, const dk__pmc_ops *ops,
                  bool want_time, uint64_t *count, uint64_t *enabled, uint64_t *running);

/* The compiler may not move page loads across it; the kernel rewrites the
 * page only on this CPU (self-monitoring), so no fence is needed. */
#define DK__PMC_BARRIER() __asm__ __volatile__("" ::: "memory")

/*
 * The native read of hardware counter `counter` (the page's index - 1),
 * inlined where it is used. x86: rdpmc. arm64: a jump into a table of one
 * mrs per register, PMEVCNTR<n>_EL0 for 0..30 and PMCCNTR_EL0 for 31 (the
 * arm64 driver publishes index 32 for the cycle counter); mrs names its
 * register in the instruction, and the table costs three instructions where
 * a switch costs eight. Each slot lands with "bti j" when the build has
 * branch protection. Elsewhere never called (dk__pmc_native is NULL).
 */
#if defined(__x86_64__)
#define DK__PMC_NATIVE 1
static inline uint64_t dk__pmc_native_counter(uint32_t counter, void *ctx)
{
    (void)ctx;
    uint32_t lo, hi;
    __asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
    return (uint64_t)hi << 32 | lo;
}
#elif defined(__aarch64__)
#define DK__PMC_NATIVE 1
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define DK__PMC_SLOT(reg) "hint #36\n\tmrs %0, " reg "\n\tb 2f\n\tnop\n\t"
#define DK__PMC_SLOT_SHIFT "4"
#else
#define DK__PMC_SLOT(reg) "mrs %0, " reg "\n\tb 2f\n\t"
#define DK__PMC_SLOT_SHIFT "3"
#endif
#define DK__PMC_EV(n) DK__PMC_SLOT("pmevcntr" #n "_el0")
static inline uint64_t dk__pmc_native_counter(uint32_t counter, void *ctx)
{
    (void)ctx;
    uint64_t v, at;
    __asm__ __volatile__("adr %1, 1f\n\t"
                         "add %1, %1, %2, lsl #" DK__PMC_SLOT_SHIFT "\n\t"
                         "br %1\n"
                         "1:\n\t" DK__PMC_EV(0) DK__PMC_EV(1) DK__PMC_EV(2) DK__PMC_EV(3)
                             DK__PMC_EV(4) DK__PMC_EV(5) DK__PMC_EV(6) DK__PMC_EV(7) DK__PMC_EV(8)
                                 DK__PMC_EV(9) DK__PMC_EV(10) DK__PMC_EV(11) DK__PMC_EV(12)
                                     DK__PMC_EV(13) DK__PMC_EV(14) DK__PMC_EV(15) DK__PMC_EV(16)
                                         DK__PMC_EV(17) DK__PMC_EV(18) DK__PMC_EV(19) DK__PMC_EV(20)
                                             DK__PMC_EV(21) DK__PMC_EV(22) DK__PMC_EV(23)
                                                 DK__PMC_EV(24) DK__PMC_EV(25) DK__PMC_EV(26)
                                                     DK__PMC_EV(27) DK__PMC_EV(28) DK__PMC_EV(29)
                                                         DK__PMC_EV(30)
                                                             DK__PMC_SLOT("pmccntr_el0") "2:"
                         : "=r"(v), "=&r"(at)
                         : "r"((uint64_t)(counter & 31)));
    return v;
}
#else
#define DK__PMC_NATIVE 0
static inline uint64_t dk__pmc_native_counter(uint32_t counter, void *ctx)
{
    (void)counter;
    (void)ctx;
    return 0;
}
#endif

/*
 * The counters of one group on the fast path: every one user-readable,
 * their pages and sign-extension shifts in flat arrays, set up once at open.
 */
#define DK__PMC_SET_MAX 32
typedef struct dk__pmc_set {
    size_t n;
    const volatile struct perf_event_mmap_page *page[DK__PMC_SET_MAX];
    uint8_t shift[DK__PMC_SET_MAX]; /* 64 - pmc_width, 0 for 64-bit counters */
} dk__pmc_set;

/* Add a mapped counter to the set (its pmc_width does not change while it
 * is open). Returns false when the set is full. */
bool dk__pmc_set_add(dk__pmc_set *set, const struct perf_event_mmap_page *page);

/*
 * Read every counter of the set, one seqlock pass each, into values[0 ..
 * n): offset + the sign-extended register. Returns true, with the last
 * counter's enabled and running times as of the page's last update (not
 * now: callers that report times take dk__pmc_read), when every counter was on the PMU,
 * readable and never time-shared (time_enabled == time_running: nothing to
 * scale, no clock to read); false, values partly written, when the caller
 * must take the general path (dk__pmc_read per counter, or read()). The
 * register is read only when the page allows it: a stray rdpmc or mrs traps.
 * rd is dk__pmc_native_counter, inlined, or a test's stand-in.
 */
static inline __attribute__((always_inline)) bool
dk__pmc_read_set(const dk__pmc_set *set, uint64_t *values, uint64_t *enabled, uint64_t *running,
                 uint64_t (*rd)(uint32_t counter, void *ctx), void *ctx)
{
    uint64_t ena = 0, run = 0;
    size_t n = set->n; /* once: the barriers would reload it */
    for (size_t i = 0; i < n; i++) {
        const volatile struct perf_event_mmap_page *pc = set->page[i];
        uint32_t seq, index;
        uint64_t raw, offset;
        do {
            seq = pc->lock;
            DK__PMC_BARRIER();
            index = pc->index;
            if (__builtin_expect(index == 0 || !pc->cap_user_rdpmc, 0))
                return false;
            ena = pc->time_enabled;
            run = pc->time_running;
            offset = (uint64_t)pc->offset;
            raw = rd(index - 1, ctx);
            DK__PMC_BARRIER();
        } while (__builtin_expect(pc->lock != seq, 0));
        if (__builtin_expect(ena != run, 0))
            return false;
        unsigned shift = set->shift[i];
        values[i] = offset + (uint64_t)((int64_t)(raw << shift) >> shift);
    }
    *enabled = ena;
    *running = run;
    return true;
}

#endif /* DKPERF_BACKEND_PERF_MMAP_H */
