/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * perf_event.h - internals of the Linux backend that tests and benchmarks
 * reach: the group read layout, event definitions, the parsers of untrusted
 * text, the errno map of perf_event_open. Not installed; Linux only (the
 * backend's own shared declarations are in pe_internal.h).
 */
#ifndef DKPERF_BACKEND_PERF_EVENT_H
#define DKPERF_BACKEND_PERF_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "backend/backend.h"

/*
 * The read() layout of a thread sampler's group, opened with
 * DK__PE_READ_FORMAT: nr, time_enabled, time_running, then {value, id} for
 * each of the nr counters in group order. Every reader goes through these.
 */
#define DK__PE_READ_FORMAT                                                                 \
    (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | \
     PERF_FORMAT_ID)
#define DK__PE_READ_WORDS(n) (3 + 2 * (n)) /* for array sizes */

/* Words and bytes of a group read of n counters. */
static inline size_t dk__pe_read_words(size_t n) { return DK__PE_READ_WORDS(n); }
static inline size_t dk__pe_read_size(size_t n) { return dk__pe_read_words(n) * sizeof(uint64_t); }

static inline uint64_t dk__pe_read_nr(const uint64_t *buf) { return buf[0]; }
static inline uint64_t dk__pe_read_enabled(const uint64_t *buf) { return buf[1]; }
static inline uint64_t dk__pe_read_running(const uint64_t *buf) { return buf[2]; }
/* Count and kernel id of the i-th counter of the group. */
static inline uint64_t dk__pe_read_value(const uint64_t *buf, size_t i) { return buf[3 + 2 * i]; }
static inline uint64_t dk__pe_read_id(const uint64_t *buf, size_t i) { return buf[4 + 2 * i]; }

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
 * Parsers of untrusted text (event specs from users, files from sysfs and
 * procfs), callable by fuzz targets on arbitrary NUL-terminated bytes. Each
 * returns 0 or a DK_E* code with the detail recorded, never reads or writes
 * outside its arguments, and has no undefined behaviour on any input.
 */

/* Largest CPU number a CPU list may name. */
#define DK__PE_CPU_MAX 1048575

/*
 * A kernel CPU list such as /sys/devices/system/cpu/online ("0-3,6\n"):
 * ascending decimal CPUs and ranges, comma-separated, surrounding white
 * space allowed. Stores at most max CPUs in cpus and their number in
 * *count. Returns 0 or DK_EINVAL (empty, garbage, a number above
 * DK__PE_CPU_MAX, a range ending before it starts, CPUs out of order or
 * twice, more than max CPUs), with *count 0.
 */
int dk__perf_parse_cpu_list(const char *text, int *cpus, size_t max, size_t *count);

/*
 * Put value into the bits a sysfs format file's text names, e.g.
 * "config:0-7,21" or "config1:0-63". Returns 0, -1 when spec is malformed
 * (unknown field, bits out of 0..63, a bad range), -2 when value has bits
 * beyond those the spec gives.
 */
int dk__pe_apply_format(pe_def *def, const char *spec, uint64_t value);

/*
 * The terms of a pmu/.../ event, or the text of a sysfs event file
 * (<sysfs>/<pmu>/events/<name>, e.g. "event=0x3c,umask=0x1"), into def
 * (whose type the caller sets; other fields are or-ed into). Format terms
 * are read from <sysfs>/<pmu>/format/<term>; whole names the event in
 * messages. Returns 0, DK_ENOEVENT (no such term), DK_EINVAL (malformed).
 */
int dk__pe_parse_terms(const char *sysfs, const char *pmu, const char *terms, const char *whole,
                       pe_def *def);

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

/* How many groups a perf_event thread sampler's counters form (more than
 * one per core PMU when the kernel would not take them all in one). */
size_t dk__perf_event_group_count(const dk_thread *t);

/* The leader fd of a perf_event thread sampler's first group. */
int dk__perf_event_group_fd(const dk_thread *t);

#endif /* DKPERF_BACKEND_PERF_EVENT_H */
