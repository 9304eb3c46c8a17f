/*
 * perf_mmap.h - reading a perf_event counter from its mmap'd page without a
 * system call (x86 rdpmc, arm64 mrs). Separate from the backend so that the reader can be tested on a synthetic page with a
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

#endif /* DKPERF_BACKEND_PERF_MMAP_H */
