/*
 * perf_mmap.h - reading a perf_event counter from its mmap'd page without a
 * system call (x86 rdpmc, arm64 mrs), and probing what the PMU offers: whether
 * user-space reads work and how many counters a group can hold. Separate from
 * the backend so that the reader can be tested on a synthetic page with a
 * stand-in for the instructions. Not installed; Linux only.
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
 * sets *count, *enabled, *running (extrapolated to now when the page allows)
 * when the counter is on the PMU and cap_user_rdpmc is set; false when the
 * caller must read() instead (software event, not scheduled now, or no
 * userspace access).
 */
bool dk__pmc_read(const volatile struct perf_event_mmap_page *pc, const dk__pmc_ops *ops,
                  uint64_t *count, uint64_t *enabled, uint64_t *running);

/* What the core PMU offers, found by opening counters on this thread. */
typedef struct dk__pmc_probe {
    uint64_t config1;  /* bits a hardware event's attr.config1 needs for user reads */
    bool user_reads;   /* a counter of this thread was read without a system call */
    size_t counters;   /* counters one group can hold; 0 when unknown */
    size_t general;    /* of which take instructions; counters - general: cycles only */
    char user_text[224]; /* "on: ..." or "off: why, and what to do" */
} dk__pmc_probe;

/* Fill *p. have_pmu: the backend found a core PMU in sysfs. */
void dk__pmc_probe_pmu(dk__pmc_probe *p, bool have_pmu);

#endif /* DKPERF_BACKEND_PERF_MMAP_H */
