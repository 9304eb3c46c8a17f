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

#include "core/core.h"

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

/*
 * Parse raw "rNNNN" or "pmu/term=value,.../[u|k]" against the event_source
 * devices under sysfs. Returns 0, DK__NOT_MINE (not of either form),
 * DK_ENOEVENT (no such PMU, term or event), DK_EINVAL (malformed), with the
 * detail recorded.
 */
int dk__pe_parse(const char *sysfs, const char *name, pe_def *def);

/* The DK_E* code and detail for a perf_event_open failure with errno e. */
int dk__pe_fail_open(const char *event, bool hardware, bool have_pmu, int paranoid, int e,
                     bool sibling);

/* How many raw and pmu/.../ events a perf_event sampler keeps resolved
 * (one per distinct spec). */
size_t dk__pe_dynamic_count(const dk_sampler *s);

/* The leader fd of a perf_event thread sampler's first group. */
int dk__perf_event_group_fd(const dk_thread *t);

#endif /* DKPERF_BACKEND_PERF_EVENT_H */
