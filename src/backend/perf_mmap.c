/*
 * perf_mmap.c - the seqlock read of a perf_event mmap page, as the kernel's
 * include/uapi/linux/perf_event.h describes it.
 */
#ifdef __linux__
#include "backend/perf_mmap.h"

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
#else
/* arm64 can read counters from userspace with perf_user_access=1; not done
 * yet, so every read goes through read(). */
const dk__pmc_ops *dk__pmc_native(void) { return 0; }
#endif

bool dk__pmc_read(const volatile struct perf_event_mmap_page *pc, const dk__pmc_ops *ops,
                  uint64_t *count, uint64_t *enabled, uint64_t *running)
{
    if (ops == 0)
        return false;
    uint32_t seq, index;
    uint64_t value, ena, run, cyc = 0;
    uint64_t time_offset = 0;
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
