/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkperf/events.h - chip-agnostic events and the CPUs libdkperf knows.
 *
 * dk_event names every event of every Apple Silicon chip from M1 to M5 once.
 * The same event may have a different selector number, counter mask, or be
 * missing on a given chip; dk_event_on() gives one chip's definition. The
 * list itself is generated from the kpep databases' facts
 * (tools/gen_events.py -> dkperf/event_list.h). Values are append-only:
 * events of a newer chip are added after those of older ones.
 */
#ifndef DKPERF_EVENTS_H
#define DKPERF_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "dkperf/error.h"
#include "dkperf/event_list.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every event of M1..M5, e.g. DK_EVENT_FIXED_CYCLES, DK_EVENT_INST_ALL. */
typedef enum dk_event {
#define DK__EVENT_ENUM(name) DK_EVENT_##name,
    DK_EVENT_LIST(DK__EVENT_ENUM)
#undef DK__EVENT_ENUM
        DK_EVENT_COUNT /* number of events; not an event */
} dk_event;

/* The processors libdkperf has event tables for. */
typedef enum dk_cpu {
    DK_CPU_UNKNOWN = 0,
    DK_CPU_M1 = 1,    /* kpep database a14 */
    DK_CPU_M2 = 2,    /* a15 */
    DK_CPU_M3 = 3,    /* a16, as1, as2, as3 */
    DK_CPU_M4 = 4,    /* as4, as4-1, as4-2 */
    DK_CPU_M5 = 5,    /* as5, as5-2 */
    DK_CPU_INTEL = 6, /* an Intel Mac (haswell, skylake, ...): events come from its database */
    DK_CPU_COUNT
} dk_cpu;

/* One chip's definition of an event, as its kpep database gives it. */
typedef struct dk_event_def {
    dk_event event;             /* the chip-agnostic event */
    const char *name;           /* native name, e.g. "INST_BRANCH" */
    uint16_t number;            /* selector; 0 for fixed-counter events */
    uint32_t counters_mask;     /* bit i: may use counter i; 0: the database gives no mask */
    int fixed_counter;          /* fixed counter index, or -1 for configurable events */
    const char *fallback;       /* configurable event standing in for a fixed one, or NULL */
    const char *const *aliases; /* NULL-terminated list, never NULL itself */
} dk_event_def;

#ifdef __cplusplus
}
#endif

#endif /* DKPERF_EVENTS_H */
