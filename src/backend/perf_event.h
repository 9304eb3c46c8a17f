/*
 * perf_event.h - internals of the Linux backend that tests and benchmarks
 * reach. Not installed; Linux only.
 */
#ifndef DKPERF_BACKEND_PERF_EVENT_H
#define DKPERF_BACKEND_PERF_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "core.h"

/* How to open one event. */
typedef struct pe_def {
    uint32_t type;
    uint64_t config, config1, config2;
    bool generic; /* PERF_TYPE_HARDWARE / HW_CACHE: one instance per core PMU */
    int exclude;  /* 0, or 'u' (user only) / 'k' (kernel only) from a modifier */
} pe_def;

/*
 * Plan the counters of n events: one instance each, or one per core PMU for
 * generic hardware events when there are several core PMUs (hybrid CPUs),
 * with the PMU's type in the upper config bits. events[j] is the event of
 * instance j and keys[j] the core PMU (group) it joins. Returns the number of
 * instances (at most n * core_count).
 */
size_t dk__pe_plan(const uint32_t *core_types, size_t core_count, const pe_def *const *defs,
                   size_t n, struct perf_event_attr *attrs, size_t *events, size_t *keys);

/* The leader fd of a perf_event thread sampler's first group. */
int dk__perf_event_group_fd(const dk_thread *t);

#endif /* DKPERF_BACKEND_PERF_EVENT_H */
