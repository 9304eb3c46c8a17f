/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sim.h - shared parts of the simulated kperf and kperfdata frameworks.
 *
 * Test code: never installed, never linked into libdkperf. See README.md.
 */
#ifndef DKPERF_SIM_H
#define DKPERF_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkperf/kperf.h"
#include "events/tables.h"

#define SIM_API __attribute__((visibility("default")))

/* One simulated event, whichever table it came from. */
typedef struct sim_event {
    const char *name;
    const char *alias;    /* NULL when none */
    const char *fallback; /* NULL when none */
    uint32_t mask;        /* 0: any configurable counter */
    uint16_t number;
    int fixed_counter; /* -1: configurable */
} sim_event;

/* A simulated CPU and its kpep database. */
typedef struct sim_chip {
    const char *db_name;         /* "a14", "haswell", ... */
    const char *cpu_id;          /* what kpc_cpu_string() prints */
    char marketing[64];          /* "Apple A14/M1" */
    uint32_t architecture;       /* KPEP_ARCH_* */
    uint32_t pmu_version;        /* KPC_PMU_* */
    uint32_t fixed_bits;         /* bit i: counter i is fixed */
    uint32_t config_bits;        /* bit i: counter i is configurable */
    uint32_t power_bits;         /* configurable counters shared with the power manager */
    uint32_t fixed_config_words; /* config registers of the fixed class */
    size_t event_count;
    sim_event events[128];
} sim_chip;

/* The chip a kpep database name or CPU id names, or NULL. */
const sim_chip *sim_chip_named(const char *name);
/* The chip DKPERF_SIM_CPU names (default a14), or NULL when it is unknown. */
const sim_chip *sim_current_chip(void);
/* The chip's event whose selector is number, or NULL. */
const sim_event *sim_event_by_number(const sim_chip *chip, unsigned number);
/* Number of bits set. */
unsigned sim_popcount(uint32_t v);

/* The simulated machine's CPUs: performance levels (level 0 the fastest)
 * and the logical and physical CPUs of each; see README.md for where each
 * chip's layout comes from. Level l's CPUs are numbered after those of the
 * levels above it (the slowest level takes CPU 0, as Apple Silicon numbers
 * its efficiency cluster first). */
#define SIM_LEVELS_MAX 4
#define SIM_NCPU_MAX 256 /* DKPERF_SIM_NCPU's bound */
typedef struct sim_layout {
    unsigned levels;
    unsigned logical[SIM_LEVELS_MAX];
    unsigned physical[SIM_LEVELS_MAX];
    unsigned ncpu; /* sum of logical */
} sim_layout;
/* The layout of DKPERF_SIM_CPU's chip, with DKPERF_SIM_PERFLEVELS applied. */
const sim_layout *sim_cpu_layout(void);
/* The level of simulated CPU cpu (0 <= cpu < ncpu). */
unsigned sim_cpu_level(const sim_layout *l, unsigned cpu);

/* Environment, read once per process on first use. */
bool sim_privileged(void);       /* DKPERF_SIM_PRIVILEGED, default 1 */
bool sim_busy(void);             /* DKPERF_SIM_BUSY, default 0 */
int sim_initial_force_all(void); /* DKPERF_SIM_FORCE_ALL, default 0 */

/*
 * Fault injection from DKPERF_SIM_FAIL=<function>:<code>[@N|@N+][,...].
 * Counts one call of fn; returns true and sets *code when this call must
 * fail: every call without @, only the N-th with @N, the N-th and later
 * with @N+.
 */
bool sim_fault(const char *fn, int *code);

#endif /* DKPERF_SIM_H */
