/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkperf/kperf.h - raw bindings to Apple's private kperf.framework and
 * kperfdata.framework, and the loader that resolves them at run time.
 *
 * This is the bottom layer of libdkperf. It declares every function type,
 * constant and structure of the two frameworks under Apple's own names, and
 * two tables of function pointers (vtables) that dk_kperf_load() and
 * dk_kperfdata_load() fill with dlopen()/dlsym(), all or nothing.
 *
 * The frameworks are private: there is no SDK header, no stable ABI, and no
 * link-time dependency on them. Everything here is plain C over <dlfcn.h>, so
 * it builds on any POSIX system; on Linux it is exercised against the
 * simulated frameworks in tests/sim.
 *
 *   kperf.framework      KPC (kernel performance counters: counter classes,
 *                        config registers, per-thread and per-CPU counts) and
 *                        KPERF (timer/action sampling). Every function is a
 *                        thin wrapper over a sysctl node under kpc.* or kperf.*.
 *   kperfdata.framework  KPEP (the per-CPU event database read from
 *                        /usr/share/kpep/<cpu>.plist, and the config builder
 *                        that turns event names into register words).
 *
 * Privileges: reading counter counts, the CPU string and the counting state
 * works for every user. Acquiring the counters, programming them and reading
 * them needs root or the com.apple.private.kernel.kpc entitlement; without it
 * those calls fail with errno EPERM.
 *
 * Struct layouts are those of 64-bit macOS (arm64 and x86_64) as
 * reverse-engineered by the darwin-kperf authors; the compile-time checks
 * below pin the size and every field offset.
 */
#ifndef DKPERF_KPERF_H
#define DKPERF_KPERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkperf/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* kperf.framework: constants                                                */
/* ------------------------------------------------------------------------ */

/* One 64-bit word of a PMU configuration register. */
typedef uint64_t kpc_config_t;

/* Counter classes. */
#define KPC_CLASS_FIXED 0        /* fixed-function counters (cycles, instructions) */
#define KPC_CLASS_CONFIGURABLE 1 /* programmable counters */
#define KPC_CLASS_POWER 2        /* configurable counters owned by the power manager */
#define KPC_CLASS_RAWPMU 3       /* raw PMU access */

#define KPC_CLASS_FIXED_MASK (1u << KPC_CLASS_FIXED)
#define KPC_CLASS_CONFIGURABLE_MASK (1u << KPC_CLASS_CONFIGURABLE)
#define KPC_CLASS_POWER_MASK (1u << KPC_CLASS_POWER)
#define KPC_CLASS_RAWPMU_MASK (1u << KPC_CLASS_RAWPMU)

/* Values returned by kpc_pmu_version(). */
#define KPC_PMU_ERROR 0
#define KPC_PMU_INTEL_V3 1
#define KPC_PMU_ARM_APPLE 2
#define KPC_PMU_INTEL_V2 3
#define KPC_PMU_ARM_V2 4

/* Upper bound on the counters of one CPU; size of a full counter buffer. */
#define KPC_MAX_COUNTERS 32

/* What an action samples when its trigger fires (kperf_action_samplers_set). */
#define KPERF_SAMPLER_TH_INFO (1u << 0)       /* thread info */
#define KPERF_SAMPLER_TH_SNAPSHOT (1u << 1)   /* thread snapshot */
#define KPERF_SAMPLER_KSTACK (1u << 2)        /* kernel stack */
#define KPERF_SAMPLER_USTACK (1u << 3)        /* user stack */
#define KPERF_SAMPLER_PMC_THREAD (1u << 4)    /* PMCs of the thread */
#define KPERF_SAMPLER_PMC_CPU (1u << 5)       /* PMCs of the CPU */
#define KPERF_SAMPLER_PMC_CONFIG (1u << 6)    /* PMC configuration */
#define KPERF_SAMPLER_MEMINFO (1u << 7)       /* memory info */
#define KPERF_SAMPLER_TH_SCHEDULING (1u << 8) /* thread scheduling */
#define KPERF_SAMPLER_TH_DISPATCH (1u << 9)   /* thread dispatch */
#define KPERF_SAMPLER_TK_SNAPSHOT (1u << 10)  /* task snapshot */
#define KPERF_SAMPLER_SYS_MEM (1u << 11)      /* system memory */
#define KPERF_SAMPLER_TH_INSCYC (1u << 12)    /* thread instructions and cycles */
#define KPERF_SAMPLER_TK_INFO (1u << 13)      /* task info */

#define KPERF_ACTION_MAX 32 /* number of actions */
#define KPERF_TIMER_MAX 8   /* number of timers */

/* ------------------------------------------------------------------------ */
/* kperfdata.framework: constants                                            */
/* ------------------------------------------------------------------------ */

/* kpep_db.architecture */
#define KPEP_ARCH_I386 0
#define KPEP_ARCH_X86_64 1
#define KPEP_ARCH_ARM 2
#define KPEP_ARCH_ARM64 3

/* Return codes of every kpep_* function that returns int. */
#define KPEP_CONFIG_ERROR_NONE 0
#define KPEP_CONFIG_ERROR_INVALID_ARGUMENT 1
#define KPEP_CONFIG_ERROR_OUT_OF_MEMORY 2
#define KPEP_CONFIG_ERROR_IO 3
#define KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL 4
#define KPEP_CONFIG_ERROR_CUR_SYSTEM_UNKNOWN 5
#define KPEP_CONFIG_ERROR_DB_PATH_INVALID 6
#define KPEP_CONFIG_ERROR_DB_NOT_FOUND 7
#define KPEP_CONFIG_ERROR_DB_ARCH_UNSUPPORTED 8
#define KPEP_CONFIG_ERROR_DB_VERSION_UNSUPPORTED 9
#define KPEP_CONFIG_ERROR_DB_CORRUPT 10
#define KPEP_CONFIG_ERROR_EVENT_NOT_FOUND 11
#define KPEP_CONFIG_ERROR_CONFLICTING_EVENTS 12
#define KPEP_CONFIG_ERROR_COUNTERS_NOT_FORCED 13
#define KPEP_CONFIG_ERROR_EVENT_UNAVAILABLE 14
#define KPEP_CONFIG_ERROR_ERRNO 15
#define KPEP_CONFIG_ERROR_MAX 16

/* Flags for kpep_config_add_event(). */
#define KPEP_CONFIG_ADD_ALL_MODES 0u /* count in user and kernel mode */
#define KPEP_CONFIG_ADD_USER_ONLY 1u /* count in user mode only */

/* kpep_event.flags bit 0: the event lives on a fixed counter. */
#define KPEP_EVENT_FLAG_FIXED 0x01u

/* ------------------------------------------------------------------------ */
/* kperfdata.framework: structures                                           */
/* ------------------------------------------------------------------------ */

/* One event of a database (56 bytes). */
typedef struct kpep_event {
    const char *name;        /* unique name, e.g. "INST_ALL" or "INST_RETIRED.ANY" */
    const char *description; /* one-line description */
    const char *errata;      /* known errata, usually NULL */
    const char *alias;       /* alias, e.g. "Cycles", "Instructions"; may be NULL */
    const char *fallback;    /* configurable event to use when the fixed counter is busy */
    uint32_t mask;           /* counters the event may use: bit i = counter i */
    uint16_t number;         /* event selector written to the config register */
    uint8_t umask;           /* Intel unit mask; 0 on arm64 */
    uint8_t reserved0;
    uint8_t flags; /* KPEP_EVENT_FLAG_FIXED */
    uint8_t reserved1[7];
} kpep_event;

/* An event database for one CPU (152 bytes). */
typedef struct kpep_db {
    const char *name;             /* database name, e.g. "a14", "as4", "haswell" */
    const char *cpu_id;           /* e.g. "cpu_100000c_2_1b588bb3" */
    const char *marketing_name;   /* e.g. "Apple A14/M1"; what kpep_db_name() returns */
    void *plist_data;             /* CFDataRef, created lazily */
    void *event_map;              /* CFDictionaryRef: name -> kpep_event * */
    kpep_event *event_arr;        /* event_count events, contiguous */
    kpep_event **fixed_event_arr; /* fixed_counter_count pointers */
    void *alias_map;              /* CFDictionaryRef: alias -> kpep_event * */
    size_t reserved_1;
    size_t reserved_2;
    size_t reserved_3;
    size_t event_count;           /* events in event_arr */
    size_t alias_count;           /* entries in alias_map */
    size_t fixed_counter_count;   /* popcount(fixed_counter_bits) */
    size_t config_counter_count;  /* popcount(config_counter_bits) */
    size_t power_counter_count;   /* popcount(power_counter_bits) */
    uint32_t architecture;        /* KPEP_ARCH_* */
    uint32_t fixed_counter_bits;  /* bitmap of fixed counters */
    uint32_t config_counter_bits; /* bitmap of configurable counters */
    uint32_t power_counter_bits;  /* bitmap of counters shared with the power manager */
    uint32_t create_flags;        /* flags given to kpep_db_createx */
    uint8_t is_internal;          /* database holds Apple-internal events */
    uint8_t internal_known;       /* is_internal has been determined */
    uint8_t reserved_4[2];
} kpep_db;

/* A configuration being built: events placed on counters (80 bytes). */
typedef struct kpep_config {
    kpep_db *db;
    kpep_event **events;        /* counter_count slots, event per added index */
    size_t *event_map;          /* event index -> counter index */
    size_t *event_indices;      /* counter index -> event index, SIZE_MAX if free */
    uint32_t *flags;            /* per-counter flags (KPEP_CONFIG_ADD_*) */
    uint64_t *kpc_periods;      /* per-counter sampling periods */
    size_t event_count;         /* events added so far */
    size_t counter_count;       /* fixed + configurable counters */
    uint32_t classes;           /* KPC_CLASS_*_MASK bits the events need */
    uint32_t occupied_counters; /* bit i set: counter i is taken */
    uint8_t force_flags;        /* bit 0: kpep_config_force_counters() was called */
    uint8_t reserved[7];
} kpep_config;

/* The layouts above are only known for 64-bit targets. */
#if UINTPTR_MAX == UINT64_MAX
#define DK__LAYOUT(type, field, off) \
    _Static_assert(offsetof(type, field) == (off), #type "." #field " must be at offset " #off)
_Static_assert(sizeof(kpep_event) == 56, "kpep_event must be 56 bytes");
DK__LAYOUT(kpep_event, name, 0);
DK__LAYOUT(kpep_event, description, 8);
DK__LAYOUT(kpep_event, errata, 16);
DK__LAYOUT(kpep_event, alias, 24);
DK__LAYOUT(kpep_event, fallback, 32);
DK__LAYOUT(kpep_event, mask, 40);
DK__LAYOUT(kpep_event, number, 44);
DK__LAYOUT(kpep_event, umask, 46);
DK__LAYOUT(kpep_event, reserved0, 47);
DK__LAYOUT(kpep_event, flags, 48);
DK__LAYOUT(kpep_event, reserved1, 49);

_Static_assert(sizeof(kpep_db) == 152, "kpep_db must be 152 bytes");
DK__LAYOUT(kpep_db, name, 0);
DK__LAYOUT(kpep_db, cpu_id, 8);
DK__LAYOUT(kpep_db, marketing_name, 16);
DK__LAYOUT(kpep_db, plist_data, 24);
DK__LAYOUT(kpep_db, event_map, 32);
DK__LAYOUT(kpep_db, event_arr, 40);
DK__LAYOUT(kpep_db, fixed_event_arr, 48);
DK__LAYOUT(kpep_db, alias_map, 56);
DK__LAYOUT(kpep_db, reserved_1, 64);
DK__LAYOUT(kpep_db, reserved_2, 72);
DK__LAYOUT(kpep_db, reserved_3, 80);
DK__LAYOUT(kpep_db, event_count, 88);
DK__LAYOUT(kpep_db, alias_count, 96);
DK__LAYOUT(kpep_db, fixed_counter_count, 104);
DK__LAYOUT(kpep_db, config_counter_count, 112);
DK__LAYOUT(kpep_db, power_counter_count, 120);
DK__LAYOUT(kpep_db, architecture, 128);
DK__LAYOUT(kpep_db, fixed_counter_bits, 132);
DK__LAYOUT(kpep_db, config_counter_bits, 136);
DK__LAYOUT(kpep_db, power_counter_bits, 140);
DK__LAYOUT(kpep_db, create_flags, 144);
DK__LAYOUT(kpep_db, is_internal, 148);
DK__LAYOUT(kpep_db, internal_known, 149);
DK__LAYOUT(kpep_db, reserved_4, 150);

_Static_assert(sizeof(kpep_config) == 80, "kpep_config must be 80 bytes");
DK__LAYOUT(kpep_config, db, 0);
DK__LAYOUT(kpep_config, events, 8);
DK__LAYOUT(kpep_config, event_map, 16);
DK__LAYOUT(kpep_config, event_indices, 24);
DK__LAYOUT(kpep_config, flags, 32);
DK__LAYOUT(kpep_config, kpc_periods, 40);
DK__LAYOUT(kpep_config, event_count, 48);
DK__LAYOUT(kpep_config, counter_count, 56);
DK__LAYOUT(kpep_config, classes, 64);
DK__LAYOUT(kpep_config, occupied_counters, 68);
DK__LAYOUT(kpep_config, force_flags, 72);
#undef DK__LAYOUT
#endif

/* ------------------------------------------------------------------------ */
/* kperf.framework: function types                                           */
/* ------------------------------------------------------------------------ */

/*
 * kpc_cpu_string - write this CPU's identifier, e.g. "cpu_100000c_2_1b588bb3",
 * into buf (snprintf-style). The string names the kpep database of the CPU.
 * Returns the string's length, or a negative value on error.
 * sysctl: hw.cputype, hw.cpusubtype, hw.cpufamily, machdep.cpu.model.
 * Privileges: none.
 */
typedef int (*kpc_cpu_string_fn)(char *buf, size_t buf_size);

/*
 * kpc_pmu_version - the PMU interface of this machine, one of KPC_PMU_*.
 * Returns KPC_PMU_ERROR on failure.
 * sysctl: kpc.pmu_version. Privileges: none.
 */
typedef uint32_t (*kpc_pmu_version_fn)(void);

/*
 * kpc_get_counting - the counter classes that are counting, as
 * KPC_CLASS_*_MASK bits; 0 when none is or on error.
 * sysctl: kpc.counting (read). Privileges: none.
 */
typedef uint32_t (*kpc_get_counting_fn)(void);

/*
 * kpc_set_counting - start counting the given classes (KPC_CLASS_*_MASK
 * bits) on every CPU; 0 stops all counting. Returns 0, or non-zero (the sysctl's -1) with errno set.
 * sysctl: kpc.counting (write). Privileges: root.
 */
typedef int (*kpc_set_counting_fn)(uint32_t classes);

/*
 * kpc_get_thread_counting - the classes that accumulate per thread, as
 * KPC_CLASS_*_MASK bits; 0 when none is or on error.
 * sysctl: kpc.thread_counting (read). Privileges: none.
 */
typedef uint32_t (*kpc_get_thread_counting_fn)(void);

/*
 * kpc_set_thread_counting - make the given classes accumulate per thread;
 * 0 stops it. Returns 0, or non-zero (the sysctl's -1) with errno set.
 * sysctl: kpc.thread_counting (write). Privileges: root.
 */
typedef int (*kpc_set_thread_counting_fn)(uint32_t classes);

/*
 * kpc_get_config_count - number of config registers (kpc_config_t words)
 * that the given classes take; 0 on error.
 * sysctl: kpc.config_count. Privileges: none.
 */
typedef uint32_t (*kpc_get_config_count_fn)(uint32_t classes);

/*
 * kpc_get_counter_count - number of counters in the given classes; 0 on
 * error. Query it at run time: it differs between chips and between
 * machines of one chip.
 * sysctl: kpc.counter_count. Privileges: none.
 */
typedef uint32_t (*kpc_get_counter_count_fn)(uint32_t classes);

/*
 * kpc_get_config - read the config registers of the given classes into
 * config, which holds kpc_get_config_count(classes) words.
 * Returns 0, or non-zero (the sysctl's -1) with errno set.
 * sysctl: kpc.config_count, kpc.config (read). Privileges: root.
 */
typedef int (*kpc_get_config_fn)(uint32_t classes, kpc_config_t *config);

/*
 * kpc_set_config - write the config registers of the given classes from
 * config (kpc_get_config_count(classes) words, fixed class first). macOS
 * 26.6 and later refuse, with EINVAL, a word whose event selector this CPU
 * does not list. Returns 0, or non-zero (the sysctl's -1) with errno set.
 * sysctl: kpc.config_count, kpc.config (write). Privileges: root.
 */
typedef int (*kpc_set_config_fn)(uint32_t classes, kpc_config_t *config);

/*
 * kpc_get_cpu_counters - read counters of the current CPU (all_cpus false;
 * buf holds kpc_get_counter_count(classes) values) or of every CPU (true;
 * buf holds ncpu times as many, CPU by CPU). curcpu, when not NULL,
 * receives the current CPU number. Returns 0, or non-zero (the sysctl's -1) with errno set.
 * sysctl: hw.ncpu, kpc.counter_count, kpc.counters. Privileges: root.
 */
typedef int (*kpc_get_cpu_counters_fn)(bool all_cpus, uint32_t classes, int *curcpu, uint64_t *buf);

/*
 * kpc_get_thread_counters - read the calling thread's accumulated counters
 * of the classes that count per thread. tid must be 0 (the calling thread);
 * buf_count is the number of elements of buf (at least
 * kpc_get_counter_count() of those classes; KPC_MAX_COUNTERS always fits).
 * Values are fixed counters first, then configurable ones.
 * Returns 0, or non-zero (the sysctl's -1) with errno set.
 * sysctl: kpc.thread_counters. Privileges: root.
 */
typedef int (*kpc_get_thread_counters_fn)(uint32_t tid, uint32_t buf_count, uint64_t *buf);

/*
 * kpc_force_all_ctrs_set - 1 takes every counter, including those the power
 * manager uses, for kpc clients; 0 gives them back. Fails with EBUSY (or
 * EPERM) while another client such as powermetrics holds them.
 * Returns 0, or non-zero (the sysctl's -1) with errno set.
 * sysctl: kpc.force_all_ctrs (write). Privileges: root.
 */
typedef int (*kpc_force_all_ctrs_set_fn)(int val);

/*
 * kpc_force_all_ctrs_get - store the kpc.force_all_ctrs state in *val_out.
 * Returns 0, or non-zero (the sysctl's -1) with errno set; fails without privileges, which makes it a
 * cheap privilege probe.
 * sysctl: kpc.force_all_ctrs (read). Privileges: root.
 */
typedef int (*kpc_force_all_ctrs_get_fn)(int *val_out);

/*
 * kperf_action_count_set - set the number of actions (at most
 * KPERF_ACTION_MAX). Returns 0, or non-zero (the sysctl's -1) with errno set.
 * sysctl: kperf.action.count (write). Privileges: root.
 */
typedef int (*kperf_action_count_set_fn)(uint32_t count);

/*
 * kperf_action_count_get - store the number of actions in *count.
 * sysctl: kperf.action.count (read). Privileges: root.
 */
typedef int (*kperf_action_count_get_fn)(uint32_t *count);

/*
 * kperf_action_samplers_set - choose what action actionid samples
 * (KPERF_SAMPLER_* bits). Returns 0, or non-zero (the sysctl's -1) with errno set.
 * sysctl: kperf.action.samplers (write). Privileges: root.
 */
typedef int (*kperf_action_samplers_set_fn)(uint32_t actionid, uint32_t sample);

/*
 * kperf_action_samplers_get - store the KPERF_SAMPLER_* bits of action
 * actionid in *sample. sysctl: kperf.action.samplers (read). Privileges: root.
 */
typedef int (*kperf_action_samplers_get_fn)(uint32_t actionid, uint32_t *sample);

/*
 * kperf_action_filter_set_by_task - restrict action actionid to one task
 * port; -1 removes the filter.
 * sysctl: kperf.action.filter_by_task. Privileges: root.
 */
typedef int (*kperf_action_filter_set_by_task_fn)(uint32_t actionid, int32_t port);

/*
 * kperf_action_filter_set_by_pid - restrict action actionid to one pid; -1
 * removes the filter. sysctl: kperf.action.filter_by_pid. Privileges: root.
 */
typedef int (*kperf_action_filter_set_by_pid_fn)(uint32_t actionid, int32_t pid);

/*
 * kperf_timer_count_set - set the number of timers (at most
 * KPERF_TIMER_MAX). sysctl: kperf.timer.count (write). Privileges: root.
 */
typedef int (*kperf_timer_count_set_fn)(uint32_t count);

/*
 * kperf_timer_count_get - store the number of timers in *count.
 * sysctl: kperf.timer.count (read). Privileges: root.
 */
typedef int (*kperf_timer_count_get_fn)(uint32_t *count);

/*
 * kperf_timer_period_set - set the period of timer timerid in ticks (see
 * kperf_ns_to_ticks). sysctl: kperf.timer.period (write). Privileges: root.
 */
typedef int (*kperf_timer_period_set_fn)(uint32_t timerid, uint64_t tick);

/*
 * kperf_timer_period_get - store the period of timer timerid in *tick.
 * sysctl: kperf.timer.period (read). Privileges: root.
 */
typedef int (*kperf_timer_period_get_fn)(uint32_t timerid, uint64_t *tick);

/*
 * kperf_timer_action_set - make timer timerid fire action actionid.
 * sysctl: kperf.timer.action (write). Privileges: root.
 */
typedef int (*kperf_timer_action_set_fn)(uint32_t timerid, uint32_t actionid);

/*
 * kperf_timer_action_get - store the action fired by timer timerid in
 * *actionid. sysctl: kperf.timer.action (read). Privileges: root.
 */
typedef int (*kperf_timer_action_get_fn)(uint32_t timerid, uint32_t *actionid);

/*
 * kperf_timer_pet_set - make timer timerid the PET (profile every thread)
 * timer. sysctl: kperf.timer.pet_timer (write). Privileges: root.
 */
typedef int (*kperf_timer_pet_set_fn)(uint32_t timerid);

/*
 * kperf_timer_pet_get - store the PET timer in *timerid.
 * sysctl: kperf.timer.pet_timer (read). Privileges: root.
 */
typedef int (*kperf_timer_pet_get_fn)(uint32_t *timerid);

/*
 * kperf_sample_set - 1 starts sampling, 0 stops it.
 * sysctl: kperf.sampling (write). Privileges: root.
 */
typedef int (*kperf_sample_set_fn)(uint32_t enabled);

/*
 * kperf_sample_get - store whether sampling is on in *enabled.
 * sysctl: kperf.sampling (read). Privileges: root.
 */
typedef int (*kperf_sample_get_fn)(uint32_t *enabled);

/*
 * kperf_reset - stop sampling and clear every timer, action and filter.
 * Returns 0, or non-zero (the sysctl's -1) with errno set. sysctl: kperf.reset. Privileges: root.
 */
typedef int (*kperf_reset_fn)(void);

/*
 * kperf_ns_to_ticks - convert nanoseconds to mach_absolute_time ticks.
 * No sysctl (uses the timebase). Privileges: none.
 */
typedef uint64_t (*kperf_ns_to_ticks_fn)(uint64_t ns);

/*
 * kperf_ticks_to_ns - convert mach_absolute_time ticks to nanoseconds.
 * No sysctl (uses the timebase). Privileges: none.
 */
typedef uint64_t (*kperf_ticks_to_ns_fn)(uint64_t ticks);

/*
 * kperf_tick_frequency - ticks per second of mach_absolute_time.
 * No sysctl (uses the timebase). Privileges: none.
 */
typedef uint64_t (*kperf_tick_frequency_fn)(void);

/*
 * Optional kperf.framework functions: resolved when the framework exports
 * them, NULL in the vtable when it does not; their absence never fails a
 * load. They wrap kpc.period and kpc.actionid, arrays with one entry per
 * counter of `classes` (fixed first), as kpc_get_counter_count(classes)
 * counts them. Root only (EPERM otherwise).
 */

/* kpc_get_period - the PMI period of each counter, in events (counter max
 * when none is set). x86: FIXED gives EINVAL. */
typedef int (*kpc_get_period_fn)(uint32_t classes, uint64_t *val);

/* kpc_set_period - set the PMI periods (0: no PMI). POWER gives EPERM; x86
 * FIXED gives EINVAL; arm64 ignores fixed periods. Pass CONFIGURABLE only. */
typedef int (*kpc_set_period_fn)(uint32_t classes, uint64_t *val);

/* kpc_get_actionid - the kperf action each counter's overflow fires (0: none). */
typedef int (*kpc_get_actionid_fn)(uint32_t classes, uint32_t *val);

/* kpc_set_actionid - set those actions (1-based kperf action ids); the
 * kernel validates nothing. */
typedef int (*kpc_set_actionid_fn)(uint32_t classes, uint32_t *val);

/* ------------------------------------------------------------------------ */
/* kperfdata.framework: function types                                       */
/* All int-returning kpep_* functions return a KPEP_CONFIG_ERROR_* code.     */
/* None of them needs privileges: they only read the database files.        */
/* ------------------------------------------------------------------------ */

/* kpep_config_create - create an empty config for db in *cfg_ptr. */
typedef int (*kpep_config_create_fn)(kpep_db *db, kpep_config **cfg_ptr);

/* kpep_config_free - free a config (NULL is ignored). */
typedef void (*kpep_config_free_fn)(kpep_config *cfg);

/*
 * kpep_config_add_event - place *ev_ptr on a free counter its mask allows.
 * flag: KPEP_CONFIG_ADD_ALL_MODES or KPEP_CONFIG_ADD_USER_ONLY. On
 * KPEP_CONFIG_ERROR_CONFLICTING_EVENTS, *err (when not NULL) receives a bitmap
 * of the already-added event indices that hold the counters it could use.
 * Events that need the power manager's counters fail with
 * KPEP_CONFIG_ERROR_COUNTERS_NOT_FORCED unless kpep_config_force_counters()
 * was called.
 */
typedef int (*kpep_config_add_event_fn)(kpep_config *cfg, kpep_event **ev_ptr, uint32_t flag,
                                        uint32_t *err);

/* kpep_config_remove_event - remove the event added at index idx. */
typedef int (*kpep_config_remove_event_fn)(kpep_config *cfg, size_t idx);

/* kpep_config_force_counters - allow the config to use every counter,
 * including those shared with the power manager. */
typedef int (*kpep_config_force_counters_fn)(kpep_config *cfg);

/* kpep_config_events_count - store the number of added events in *count_ptr. */
typedef int (*kpep_config_events_count_fn)(kpep_config *cfg, size_t *count_ptr);

/* kpep_config_events - copy the added event pointers into buf (buf_size in
 * bytes, at least events_count * sizeof(kpep_event *)). */
typedef int (*kpep_config_events_fn)(kpep_config *cfg, kpep_event **buf, size_t buf_size);

/* kpep_config_kpc - write the config register words for kpc_set_config into
 * buf (buf_size in bytes, at least kpc_count * sizeof(kpc_config_t)). */
typedef int (*kpep_config_kpc_fn)(kpep_config *cfg, kpc_config_t *buf, size_t buf_size);

/* kpep_config_kpc_count - store the number of config register words in
 * *count_ptr. */
typedef int (*kpep_config_kpc_count_fn)(kpep_config *cfg, size_t *count_ptr);

/* kpep_config_kpc_classes - store the KPC_CLASS_*_MASK bits the events need
 * in *classes_ptr. */
typedef int (*kpep_config_kpc_classes_fn)(kpep_config *cfg, uint32_t *classes_ptr);

/* kpep_config_kpc_map - for each added event, the index of its counter in
 * the buffer kpc_get_thread_counters() fills (buf_size in bytes, at least
 * events_count * sizeof(size_t)). */
typedef int (*kpep_config_kpc_map_fn)(kpep_config *cfg, size_t *buf, size_t buf_size);

/*
 * kpep_db_create - open the event database called name ("a14", "haswell",
 * or a CPU id such as "cpu_100000c_2_1b588bb3"); NULL opens this CPU's. The
 * files are searched in $KPEP_DB_PATH, /usr/local/share/kpep/ and
 * /usr/share/kpep/.
 */
typedef int (*kpep_db_create_fn)(const char *name, kpep_db **db_ptr);

/* kpep_db_free - free a database (NULL is ignored). */
typedef void (*kpep_db_free_fn)(kpep_db *db);

/* kpep_db_name - store the database's marketing name in *name. */
typedef int (*kpep_db_name_fn)(kpep_db *db, const char **name);

/* kpep_db_aliases_count - store the number of aliases in *count. */
typedef int (*kpep_db_aliases_count_fn)(kpep_db *db, size_t *count);

/* kpep_db_aliases - copy the alias strings into buf (buf_size in bytes). */
typedef int (*kpep_db_aliases_fn)(kpep_db *db, const char **buf, size_t buf_size);

/* kpep_db_counters_count - store the number of counters of the given
 * KPC_CLASS_*_MASK classes in *count. */
typedef int (*kpep_db_counters_count_fn)(kpep_db *db, uint8_t classes, size_t *count);

/* kpep_db_events_count - store the number of events in *count. */
typedef int (*kpep_db_events_count_fn)(kpep_db *db, size_t *count);

/* kpep_db_events - copy pointers to every event into buf (buf_size in
 * bytes, at least events_count * sizeof(kpep_event *)). */
typedef int (*kpep_db_events_fn)(kpep_db *db, kpep_event **buf, size_t buf_size);

/* kpep_db_event - look an event up by alias, then by name; *ev_ptr points
 * into the database. */
typedef int (*kpep_db_event_fn)(kpep_db *db, const char *name, kpep_event **ev_ptr);

/* kpep_event_name - store the event's name in *name_ptr. */
typedef int (*kpep_event_name_fn)(kpep_event *ev, const char **name_ptr);

/* kpep_event_alias - store the event's alias (or NULL) in *alias_ptr. */
typedef int (*kpep_event_alias_fn)(kpep_event *ev, const char **alias_ptr);

/* kpep_event_description - store the event's description in *str_ptr. */
typedef int (*kpep_event_description_fn)(kpep_event *ev, const char **str_ptr);

/* ------------------------------------------------------------------------ */
/* Symbol lists and vtables                                                  */
/* ------------------------------------------------------------------------ */

/* The two lists are laid out by hand: clang-format 14 moves them back and
 * forth from one run to the next. */
/* clang-format off */
/* The 34 symbols of kperf.framework, in the order of dk_kperf_vtable. */
#define DK_KPERF_SYMBOLS(X)                                                                   \
    X(kpc_cpu_string) X(kpc_pmu_version) X(kpc_get_counting) X(kpc_set_counting)              \
    X(kpc_get_thread_counting) X(kpc_set_thread_counting) X(kpc_get_config_count)             \
    X(kpc_get_counter_count) X(kpc_get_config) X(kpc_set_config) X(kpc_get_cpu_counters)      \
    X(kpc_get_thread_counters) X(kpc_force_all_ctrs_set) X(kpc_force_all_ctrs_get)            \
    X(kperf_action_count_set) X(kperf_action_count_get) X(kperf_action_samplers_set)          \
    X(kperf_action_samplers_get) X(kperf_action_filter_set_by_task)                           \
    X(kperf_action_filter_set_by_pid) X(kperf_timer_count_set) X(kperf_timer_count_get)       \
    X(kperf_timer_period_set) X(kperf_timer_period_get) X(kperf_timer_action_set)             \
    X(kperf_timer_action_get) X(kperf_timer_pet_set) X(kperf_timer_pet_get)                   \
    X(kperf_sample_set) X(kperf_sample_get) X(kperf_reset) X(kperf_ns_to_ticks)               \
    X(kperf_ticks_to_ns) X(kperf_tick_frequency)

/* The 23 symbols of kperfdata.framework, in the order of dk_kperfdata_vtable. */
#define DK_KPERFDATA_SYMBOLS(X)                                                               \
    X(kpep_config_create) X(kpep_config_free) X(kpep_config_add_event)                        \
    X(kpep_config_remove_event) X(kpep_config_force_counters) X(kpep_config_events_count)     \
    X(kpep_config_events) X(kpep_config_kpc) X(kpep_config_kpc_count)                         \
    X(kpep_config_kpc_classes) X(kpep_config_kpc_map) X(kpep_db_create) X(kpep_db_free)       \
    X(kpep_db_name) X(kpep_db_aliases_count) X(kpep_db_aliases) X(kpep_db_counters_count)     \
    X(kpep_db_events_count) X(kpep_db_events) X(kpep_db_event) X(kpep_event_name)             \
    X(kpep_event_alias) X(kpep_event_description)
/* clang-format on */

/* The optional symbols of kperf.framework: fields of dk_kperf_vtable that
 * stay NULL when the framework lacks them. */
#define DK_KPERF_OPTIONAL_SYMBOLS(X) \
    X(kpc_get_period) X(kpc_set_period) X(kpc_get_actionid) X(kpc_set_actionid)

#define DK_KPERF_SYMBOL_COUNT 34
#define DK_KPERF_OPTIONAL_SYMBOL_COUNT 4
#define DK_KPERFDATA_SYMBOL_COUNT 23

#define DK__VTABLE_FIELD(name) name##_fn name;

/* Every kperf.framework function, resolved: the DK_KPERF_SYMBOLS fields
 * are never NULL; the DK_KPERF_OPTIONAL_SYMBOLS fields after them are NULL
 * when the framework does not export them (check before calling). */
typedef struct dk_kperf_vtable {
    DK_KPERF_SYMBOLS(DK__VTABLE_FIELD)
    DK_KPERF_OPTIONAL_SYMBOLS(DK__VTABLE_FIELD)
} dk_kperf_vtable;

/* Every kperfdata.framework function, resolved. No field is ever NULL. */
typedef struct dk_kperfdata_vtable {
    DK_KPERFDATA_SYMBOLS(DK__VTABLE_FIELD)
} dk_kperfdata_vtable;

#undef DK__VTABLE_FIELD

/* ------------------------------------------------------------------------ */
/* Loader                                                                    */
/* ------------------------------------------------------------------------ */

#define DK_KPERF_PATH "/System/Library/PrivateFrameworks/kperf.framework/kperf"
#define DK_KPERFDATA_PATH "/System/Library/PrivateFrameworks/kperfdata.framework/kperfdata"

/* Environment variable naming a directory prefixed to both framework paths. */
#define DK_FRAMEWORK_ROOT_ENV "DKPERF_FRAMEWORK_ROOT"

/* What went wrong in a failed load. */
typedef enum dk_load_failure {
    DK_LOAD_OK = 0,
    DK_LOAD_OPEN = 1,     /* dlopen() failed; message holds dlerror() */
    DK_LOAD_SYMBOL = 2,   /* a symbol is missing; symbol names it */
    DK_LOAD_PATH = 3,     /* root + framework path does not fit PATH_MAX */
    DK_LOAD_ARGUMENT = 4, /* a NULL output pointer */
} dk_load_failure;

/* Longest framework path (root included) the loader accepts. */
#define DK_LOAD_PATH_MAX 1024

/* Detail of a failed load, filled by the dk_*_load functions. */
typedef struct dk_load_error {
    dk_load_failure kind;
    char path[DK_LOAD_PATH_MAX]; /* the framework file that failed */
    char symbol[64];             /* DK_LOAD_SYMBOL: the missing symbol */
    char message[1536];          /* a full sentence naming the path and cause */
} dk_load_error;

/*
 * dk_framework_root - the root prefix a load with `root` would use: root
 * itself when not NULL, else $DKPERF_FRAMEWORK_ROOT when set, else "" (the
 * system frameworks). Never returns NULL.
 */
DK_EXPORT const char *dk_framework_root(const char *root);

/*
 * dk_kperf_load - load kperf.framework from <root>/System/Library/... and
 * resolve all 34 symbols, and the optional ones it exports (the others stay
 * NULL). root: see dk_framework_root().
 *
 * The framework is opened with RTLD_LAZY | RTLD_LOCAL once per distinct root
 * and never unloaded, so the returned vtable stays valid for the life of the
 * process. Thread-safe. err may be NULL.
 *
 * Returns 0 and sets *out, or DK_ELOAD (with err->kind DK_LOAD_OPEN,
 * DK_LOAD_SYMBOL or DK_LOAD_PATH, and the same sentence in dk_last_error()),
 * or DK_EINVAL when out is NULL. On failure nothing stays loaded.
 */
DK_EXPORT int dk_kperf_load(const char *root, const dk_kperf_vtable **out, dk_load_error *err);

/*
 * dk_kperfdata_load - load kperfdata.framework and resolve all 23 symbols;
 * otherwise exactly as dk_kperf_load().
 */
DK_EXPORT int dk_kperfdata_load(const char *root, const dk_kperfdata_vtable **out,
                                dk_load_error *err);

/*
 * dk_kpep_error_name - the name of a KPEP_CONFIG_ERROR_* code, e.g.
 * "KPEP_CONFIG_ERROR_CONFLICTING_EVENTS"; "KPEP_CONFIG_ERROR_UNKNOWN" for
 * other values. Never returns NULL.
 */
DK_EXPORT const char *dk_kpep_error_name(int code);

/*
 * dk_kpep_strerror - a short description of a KPEP_CONFIG_ERROR_* code,
 * e.g. "conflicting events". Never returns NULL.
 */
DK_EXPORT const char *dk_kpep_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* DKPERF_KPERF_H */
