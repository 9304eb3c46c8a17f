/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * backend.h - the contract between the core API and the backends: the
 * objects behind the public handles and the backend method table every
 * backend implements. Not installed.
 */
#ifndef DKPERF_BACKEND_H
#define DKPERF_BACKEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dkperf.h"
#include "util/util.h"

/* Which naming scheme a database follows (for portable names). */
typedef enum dk__family {
    DK__FAMILY_APPLE = 0, /* Apple Silicon kpep databases */
    DK__FAMILY_INTEL = 1, /* Intel kpep databases */
    DK__FAMILY_LINUX = 2, /* perf_event names (perf list) */
} dk__family;

struct dk_database {
    const char *name;
    const char *cpu_id;
    const char *marketing_name;
    dk_arch arch;
    dk__family family;
    size_t counters[3];        /* fixed, configurable, power */
    dk_database_event *events; /* sorted by name */
    size_t event_count;
    const dk_database_event **fixed; /* by fixed counter; entries may be NULL */
    size_t fixed_count;
};

typedef struct dk__backend dk__backend;

#define DK__PERF_LEVELS_MAX 4

struct dk_sampler {
    const dk__backend *backend;
    void *impl;     /* the backend's session */
    dk_database db; /* filled by the backend's open */
    dk_cpu cpu;
    unsigned flags;       /* DK_SAMPLER_* */
    dk_backend_caps caps; /* filled by the backend's open */
    size_t perf_levels;   /* CPU performance levels counts are split by; 0: not split */
    char perf_level_names[DK__PERF_LEVELS_MAX][16];
    char why[1536];   /* see dk_sampler_why */
    char notes[512];  /* see dk_sampler_notes */
    int passed_rc;    /* why the first backend probed could not count (0: none) */
    char passed[640]; /* ... its error, for the messages of the fallback */
    char root[1024];  /* framework root (see dk__backend.uses_framework_root) */

    pthread_mutex_t lock;  /* guards everything below */
    int refs;              /* 1 while open, +1 per open thread sampler */
    int running;           /* thread samplers, groups and samplings counting */
    int running_groups;    /* of which groups */
    int running_samplings; /* and samplings */
    bool holding;          /* the backend holds the counters */
    bool released;         /* no new thread samplers may open or start */
};

/* Signature of the hot read path, cached in each thread sampler. info may
 * be NULL. */
typedef int (*dk__read_fn)(dk_thread *t, uint64_t *values, dk_reading *info);

/* Privilege modes a perf-style modifier asks for ("instructions:u"); 0:
 * none given, the sampler's default. */
#define DK__MODE_USER 0x1u
#define DK__MODE_KERNEL 0x2u

struct dk_thread {
    dk_sampler *sampler;
    pthread_t owner;
    bool running;
    dk__read_fn read;
    void *impl; /* the backend's per-thread state */
    size_t n;
    const dk_database_event *events[DK_MAX_EVENTS]; /* what is counted, in caller order */
    unsigned char mode[DK_MAX_EVENTS];              /* DK__MODE_* of each event */
    char *label[DK_MAX_EVENTS]; /* "<native name>:<modifiers>"; NULL without modifiers */
    char *asked[DK_MAX_EVENTS]; /* the names given (copies); NULL from dk_thread_open */
};

/* A process or system scope (dk_group). */
struct dk_group {
    dk_sampler *sampler;
    dk_scope scope;
    int pid;
    unsigned flags;
    bool running;
    void *impl; /* the backend's state */
    size_t n;
    const dk_database_event *events[DK_MAX_EVENTS]; /* NULL for an unsupported name */
    const char *asked[DK_MAX_EVENTS];               /* the names given (copies) */
    unsigned char mode[DK_MAX_EVENTS];              /* DK__MODE_* of each event */
    char *label[DK_MAX_EVENTS]; /* "<native name>:<modifiers>"; NULL without modifiers */
    bool supported[DK_MAX_EVENTS];
    char why[DK_MAX_EVENTS][1024]; /* as long as dk_last_error() can be */
    char scope_text[96];
    /* Per-CPU breakdown (system scope; set by group_open, freed by the core):
     * cpus[c].level_name points into level_names. */
    dk_cpu_info *cpus;
    size_t ncpus;
    /* Performance levels the counts split by (0: none). */
    size_t levels;
    char level_names[DK__PERF_LEVELS_MAX][16];
};

/* A dk_sampling (the core fills everything but impl and the counts). */
struct dk_sampling {
    dk_sampler *sampler;
    dk_sampling_options opts;
    bool running;
    void *impl; /* the backend's state */
    size_t n;
    const dk_database_event *events[DK_MAX_EVENTS]; /* NULL for "timer" */
    dk_sampling_event asked[DK_MAX_EVENTS];         /* as given; names are copies */
    uint64_t period[DK_MAX_EVENTS];    /* the rate used (sampling_open sets them): events a */
    uint64_t freq[DK_MAX_EVENTS];      /* sample, or samples a second (dk_sampling_event_rate) */
    unsigned char mode[DK_MAX_EVENTS]; /* DK__MODE_* of each event */
    char *label[DK_MAX_EVENTS];
    dk_sampling_stats stats; /* added to with dk__stat_add only */
    /* One drain at a time (the core takes it around sampling_drain); a
     * backend's wait takes it too wherever it touches what a drain reads,
     * never while it blocks, and only by trylock (a drain holds it through
     * callbacks of any length; the wait keeps to its timeout). */
    pthread_mutex_t drain_lock;
};

/* p->stats are counted by a drain and read by dk_sampling_stats_get from
 * any thread while it runs: each count is added and read atomically. */
static inline void dk__stat_add(uint64_t *count, uint64_t n)
{
    __atomic_fetch_add(count, n, __ATOMIC_RELAXED);
}

#define DK__BACKEND_VERSION 1

/* A backend's resolve: the name is not of its syntax (not an error). */
#define DK__NOT_MINE 1

/*
 * The backend method table (cf. sqlite3_vfs, pmc.h perf_monitor_methods_t).
 * The core validates arguments, owns threads and reference counts, and
 * resolves event names against the database; a backend only talks to the
 * operating system. Every int-returning method returns 0 or a DK_E* code
 * with the detail recorded (dk__fail*).
 */
struct dk__backend {
    int version; /* DK__BACKEND_VERSION */
    const char *name;
    /* The backend loads its libraries under a framework root
     * (dk_sampler_framework_root reports it). */
    bool uses_framework_root;

    /* Load what the backend needs, fill s->db and s->cpu, set s->impl.
     * Does not take the counters. On failure leaves nothing behind. */
    int (*open)(dk_sampler *s, const dk_sampler_options *opts);
    /* Take the counters (shared by every sampler of the process). */
    int (*acquire)(dk_sampler *s);
    /* Optional, for DK_SAMPLER_QUERY_ONLY: fail as acquire would for want
     * of privileges, without taking or changing anything. */
    int (*check)(dk_sampler *s);
    /* Give the counters back; called once per successful acquire, never
     * while a thread sampler of s is running. */
    int (*release)(dk_sampler *s);
    /* Free what open made. */
    void (*close)(dk_sampler *s);

    /* Optional: resolve a name the database does not list (e.g. perf's
     * raw and pmu/.../ syntax). Returns 0 with *out valid until s is freed,
     * DK__NOT_MINE when the name is not of this backend's syntax, or a
     * DK_E* error that ends the lookup. */
    int (*resolve)(dk_sampler *s, const char *name, const dk_database_event **out);
    /* Optional: the native name of ev, for a backend whose database is not
     * an Apple chip table (NULL: the chip tables of events/ name it).
     * Returns 0 with *name set, or a DK_E* error. */
    int (*event_name)(dk_sampler *s, dk_event ev, const char **name);
    /* Optional: write into buf (size bytes) what this backend still does
     * after the ones probed before it failed (s->passed_rc and s->passed
     * say why the first one did), as the text dk_sampler_why appends to
     * their failures: "; using ...". NULL: "; using <name>". It may also
     * make s->caps.privileges fit that cause. */
    void (*explain)(dk_sampler *s, char *buf, size_t size);
    /* Optional: instructions and cycles of a whole process. */
    int (*process_cpi)(dk_sampler *s, int pid, uint64_t *instructions, uint64_t *cycles);

    /* Configure t->n events (t->events) on the calling thread; set t->impl
     * and t->read. */
    int (*thread_open)(dk_thread *t);
    int (*thread_start)(dk_thread *t);
    int (*thread_stop)(dk_thread *t);
    /* Undo thread_open (t is stopped). */
    void (*thread_close)(dk_thread *t);
    /* Optional: totals split by performance level, values[level * n + i]. */
    int (*thread_perf_levels)(dk_thread *t, uint64_t *values);

    /* Optional scopes. group_open configures g->n events (g->events; the
     * NULL ones are already unsupported), marks those the scope cannot count
     * (g->supported, g->why) when DK_GROUP_PARTIAL, and fills g->scope_text.
     * Reads give counts since start (0 for unsupported events). */
    int (*group_open)(dk_group *g);
    int (*group_start)(dk_group *g);
    int (*group_stop)(dk_group *g);
    int (*group_read)(dk_group *g, uint64_t *values, dk_reading *info);
    void (*group_close)(dk_group *g);
    /* Optional: counts since start per CPU, values[c * g->n + i] for
     * g->cpus[c] (system scope, g->ncpus > 0), and when info is not NULL
     * (zeroed, as many entries) each one's times where the backend has
     * them. */
    int (*group_read_cpus)(dk_group *g, uint64_t *values, dk_reading *info);
    /* Optional: a process group's counts by level, values[l * g->n + i]
     * (g->levels > 0). */
    int (*group_read_levels)(dk_group *g, uint64_t *values);

    /* Optional sampling (dk_sampling). sampling_open arms nothing it does
     * not undo on failure; drain never blocks and counts p->stats. start
     * and stop run under the sampler's lock, drain under p->drain_lock,
     * and wait, drain, start and stop may run at once from different
     * threads (dk_sampling_wait); close runs alone. */
    int (*sampling_open)(dk_sampling *p);
    int (*sampling_start)(dk_sampling *p);
    int (*sampling_stop)(dk_sampling *p);
    int (*sampling_drain)(dk_sampling *p, dk_sample_fn fn, void *ctx);
    int (*sampling_wait)(dk_sampling *p, int timeout_ms);
    void (*sampling_close)(dk_sampling *p);

    /* Optional, for facts found lazily (each at most once, from any thread):
     * probe_event fills ev->supported before the core hands ev out (ev is
     * in s->db); probe_caps completes s->caps before dk_sampler_caps copies
     * them. */
    void (*probe_event)(dk_sampler *s, const dk_database_event *ev);
    void (*probe_caps)(dk_sampler *s);
    /* Optional: fill s->db's CPU id, marketing name and arch, which reading
     * them (dk_database_cpu_id, ...) asks for first. */
    void (*describe_cpu)(dk_sampler *s);
};

extern const dk__backend dk__backend_kperf;
extern const dk__backend dk__backend_selfcounts;
extern const dk__backend dk__backend_perf_event;

/* The database event at index i of s->db. */
static inline size_t dk__event_index(const dk_sampler *s, const dk_database_event *ev)
{
    return (size_t)(ev - s->db.events);
}

/* The name to show for event i: with its modifiers when given. */
static inline const char *dk__thread_label(const dk_thread *t, size_t i)
{
    return t->label[i] != NULL ? t->label[i] : t->events[i]->name;
}
static inline const char *dk__group_label(const dk_group *g, size_t i)
{
    return g->label[i] != NULL    ? g->label[i]
           : g->events[i] != NULL ? g->events[i]->name
                                  : g->asked[i];
}
static inline const char *dk__sampling_label(const dk_sampling *p, size_t i)
{
    return p->label[i] != NULL    ? p->label[i]
           : p->events[i] != NULL ? p->events[i]->name
                                  : p->asked[i].name;
}

/* An event as a message names it: as the caller wrote it ("branches"),
 * with the native name when that differs ("branches (INST_BRANCH)"), so
 * that the caller finds it in the list it gave. Returns shown or buf. */
static inline const char *dk__event_shown(const char *asked, const char *shown, char *buf,
                                          size_t size)
{
    if (asked == NULL || strcmp(asked, shown) == 0)
        return shown;
    snprintf(buf, size, "%s (%s)", asked, shown);
    return buf;
}

/* The modifier suffix of a label ("u" of "cycles:u"), "" without one. */
static inline const char *dk__label_modifiers(const char *label)
{
    const char *colon = label != NULL ? strrchr(label, ':') : NULL;
    return colon != NULL ? colon + 1 : "";
}

/* Mark event i of g unsupported, with the calling thread's last error as
 * the reason. */
static inline void dk__group_unsupported(dk_group *g, size_t i)
{
    g->supported[i] = false;
    dk__strlcpy(g->why[i], dk_last_error(), sizeof g->why[i]);
}

/* The event of db named name (or aliased so: aliases first), or NULL. */
static inline const dk_database_event *dk__database_find(const dk_database *db, const char *name)
{
    for (size_t i = 0; i < db->event_count; i++)
        if (db->events[i].alias != NULL && strcmp(db->events[i].alias, name) == 0)
            return &db->events[i];
    for (size_t i = 0; i < db->event_count; i++)
        if (strcmp(db->events[i].name, name) == 0)
            return &db->events[i];
    return NULL;
}

/* Sort db events by name; perm receives, for each sorted position, the
 * event's index before sorting. Returns 0 or DK_ENOMEM. */
static inline int dk__database_sort(dk_database *db, size_t *perm)
{
    return dk__sort_events(db->events, db->event_count, perm);
}

#endif /* DKPERF_BACKEND_H */
