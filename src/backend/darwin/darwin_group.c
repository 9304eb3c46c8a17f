/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * darwin_group.c - a process's instructions and cycles through
 * proc_pid_rusage(RUSAGE_INFO_V4), for the kperf and selfcounts backends:
 * macOS gives no per-thread counters of another process, but it keeps these
 * two totals for every process, without privileges, and since macOS 12
 * (RUSAGE_INFO_V6) the part of them retired on performance cores. Also the
 * CPU layout the system scope reports per CPU (hw.ncpu, hw.perflevel*).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/darwin/darwin_group.h"
#include "dkperf/kperf.h"
#include "sys/libsystem.h"

/* Counts read: instructions, cycles, and with V6 their P-core parts. */
enum { RU_INSTS, RU_CYCLES, RU_PINSTS, RU_PCYCLES, RU_COUNTS };

typedef struct rgroup {
    char root[DK_LOAD_PATH_MAX];
    int slot[DK_MAX_EVENTS];
    bool v6;                    /* RUSAGE_INFO_V6 gives the P-core parts */
    uint64_t base[RU_COUNTS];   /* totals at start */
    uint64_t frozen[RU_COUNTS]; /* counts at the last stop */
} rgroup;

/* The process's counts now: with V6 when the group splits, else V4. */
static int read_now(const dk_group *g, const rgroup *r, uint64_t now[RU_COUNTS])
{
    now[RU_PINSTS] = now[RU_PCYCLES] = 0;
    if (r->v6)
        return dk__proc_cpi_p(r->root, g->pid, now);
    return dk__proc_cpi(r->root, g->pid, &now[RU_INSTS], &now[RU_CYCLES]);
}

size_t dk__darwin_ncpu(const char *root)
{
    int n = 0;
    if (dk__sysctl_int(root, "hw.ncpu", &n) == 0 && n > 0 && n <= 65536)
        return (size_t)n;
    long c = sysconf(_SC_NPROCESSORS_CONF);
    return (size_t)(c > 0 ? c : 1);
}

/* "P" for "Performance", "E" for "Efficiency", else the level number. */
static void level_name(const char *root, int level, char *out, size_t size)
{
    char key[48], name[64];
    snprintf(key, sizeof key, "hw.perflevel%d.name", level);
    if (dk__sysctl_text(root, key, name, sizeof name) == 0 && strncmp(name, "Perf", 4) == 0)
        snprintf(out, size, "P");
    else if (dk__sysctl_text(root, key, name, sizeof name) == 0 && strncmp(name, "Eff", 3) == 0)
        snprintf(out, size, "E");
    else
        snprintf(out, size, "%d", level);
}

int dk__darwin_describe_cpus(dk_group *g, const char *root, size_t ncpu)
{
    g->cpus = calloc(ncpu, sizeof *g->cpus);
    if (g->cpus == NULL)
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    g->ncpus = ncpu;
    int levels = 1, logical[DK__PERF_LEVELS_MAX] = {0}, physical[DK__PERF_LEVELS_MAX] = {0};
    if (dk__sysctl_int(root, "hw.nperflevels", &levels) != 0 || levels < 1 ||
        levels > DK__PERF_LEVELS_MAX)
        levels = 1;
    size_t sum = 0;
    for (int l = 0; l < levels && levels > 1; l++) {
        char key[48];
        snprintf(key, sizeof key, "hw.perflevel%d.logicalcpu", l);
        if (dk__sysctl_int(root, key, &logical[l]) != 0 || logical[l] < 1)
            logical[l] = 0;
        snprintf(key, sizeof key, "hw.perflevel%d.physicalcpu", l);
        if (dk__sysctl_int(root, key, &physical[l]) != 0 || physical[l] < 1 ||
            physical[l] > logical[l])
            physical[l] = logical[l];
        sum += (size_t)logical[l];
    }
    if (levels > 1 && sum != ncpu)
        levels = 1; /* a layout that does not cover the CPUs says nothing */
    g->levels = (size_t)levels;
    if (levels == 1) {
        int p0 = 0;
        logical[0] = (int)ncpu;
        physical[0] = dk__sysctl_int(root, "hw.physicalcpu", &p0) == 0 && p0 > 0 &&
                              (size_t)p0 <= ncpu && ncpu % (size_t)p0 == 0
                          ? p0
                          : (int)ncpu;
        snprintf(g->level_names[0], sizeof g->level_names[0], "all");
    } else {
        for (int l = 0; l < levels; l++)
            level_name(root, l, g->level_names[l], sizeof g->level_names[l]);
    }
    /* macOS names no CPU's level: the slowest level takes the lowest
     * numbers, as Apple Silicon numbers its efficiency cluster first. */
    size_t cpu = 0;
    int core = 0;
    for (int l = levels - 1; l >= 0; l--) {
        int per_core = logical[l] / (physical[l] > 0 ? physical[l] : 1);
        if (per_core < 1)
            per_core = 1;
        for (int j = 0; j < logical[l] && cpu < ncpu; j++, cpu++) {
            dk_cpu_info *ci = &g->cpus[cpu];
            ci->size = sizeof *ci;
            ci->id = (int)cpu;
            ci->core = core + j / per_core;
            ci->package = 0;
            ci->level = l;
            ci->level_name = g->level_names[l];
        }
        core += (logical[l] + per_core - 1) / per_core;
    }
    return 0;
}

int dk__fail_mode(const char *label, const char *source)
{
    return dk__fail(DK_ENOTSUP,
                    "event %s: %s counts user and kernel mode together and cannot count one "
                    "alone; drop the :%s modifier",
                    label, source, dk__label_modifiers(label));
}

int dk__fixed_slot(const dk_database_event *ev)
{
    if (ev == NULL || !ev->fixed || ev->alias == NULL)
        return -1;
    if (strcmp(ev->alias, "Instructions") == 0)
        return 0;
    if (strcmp(ev->alias, "Cycles") == 0)
        return 1;
    return -1;
}

int dk__darwin_thread_scope(const dk_group *g)
{
    return dk__fail(DK_ENOTSUP,
                    "dk_group_open: thread %d: macOS counts one thread only from inside its "
                    "own process (thread_selfcounts, kpc thread counters); another process's "
                    "threads cannot be counted without injecting code: count the process "
                    "(instructions and cycles) or every CPU instead",
                    g->pid);
}

int dk__rusage_group_open(dk_group *g, const char *root, const char *why_others)
{
    if (g->scope == DK_SCOPE_THREAD)
        return dk__darwin_thread_scope(g);
    if (g->flags & DK_GROUP_CHILDREN)
        return dk__fail(DK_ENOTSUP, "dk_group_open: DK_GROUP_CHILDREN needs counters that "
                                    "processes inherit (perf_event); on macOS open a process "
                                    "group on each child instead");
    rgroup *r = calloc(1, sizeof *r);
    if (r == NULL)
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    dk__strlcpy(r->root, root, sizeof r->root);
    if (g->pid == 0)
        g->pid = getpid();
    for (size_t i = 0; i < g->n; i++) {
        /* Support first: an event it cannot count at all is <not
         * supported> under DK_GROUP_PARTIAL, whatever its modifier. */
        r->slot[i] = g->supported[i] ? dk__fixed_slot(g->events[i]) : -1;
        if (g->supported[i] && r->slot[i] < 0) {
            int rc = dk__fail(DK_EUNAVAILABLE, "event %s %s", g->events[i]->name, why_others);
            if (!(g->flags & DK_GROUP_PARTIAL)) {
                free(r);
                return rc;
            }
            dk__group_unsupported(g, i);
        }
        if (g->supported[i] && dk__mode_restricts(g->mode[i])) {
            free(r);
            return dk__fail_mode(dk__group_label(g, i), "proc_pid_rusage");
        }
    }
    /* The process must exist and be readable now. */
    uint64_t now[RU_COUNTS];
    int rc = read_now(g, r, now);
    if (rc != 0) {
        free(r);
        return rc;
    }
    /* Split by level where the machine has two (P and E) and the kernel
     * gives the P-core parts. */
    int levels = 0;
    if (dk__sysctl_int(root, "hw.nperflevels", &levels) == 0 && levels == 2) {
        dk__error_state saved;
        dk__error_save(&saved); /* an older kernel is an answer: no split */
        r->v6 = dk__proc_cpi_p(r->root, g->pid, now) == 0;
        dk__error_restore(&saved);
        if (r->v6) {
            g->levels = 2;
            level_name(root, 0, g->level_names[0], sizeof g->level_names[0]);
            level_name(root, 1, g->level_names[1], sizeof g->level_names[1]);
        }
    }
    snprintf(g->scope_text, sizeof g->scope_text, "process %d (its own threads)", g->pid);
    g->impl = r;
    return 0;
}

int dk__rusage_group_start(dk_group *g)
{
    rgroup *r = g->impl;
    uint64_t now[RU_COUNTS];
    int rc = read_now(g, r, now);
    if (rc != 0)
        return rc;
    /* Resume: what was counted before the stop stays counted. */
    for (int j = 0; j < RU_COUNTS; j++)
        r->base[j] = now[j] - r->frozen[j];
    return 0;
}

int dk__rusage_group_stop(dk_group *g)
{
    rgroup *r = g->impl;
    uint64_t now[RU_COUNTS];
    int rc = read_now(g, r, now);
    if (rc != 0)
        return rc;
    for (int j = 0; j < RU_COUNTS; j++)
        r->frozen[j] = now[j] - r->base[j];
    return 0;
}

/* Counts since start, RU_* indexed. */
static int counts_now(dk_group *g, uint64_t counts[RU_COUNTS])
{
    rgroup *r = g->impl;
    memcpy(counts, r->frozen, sizeof r->frozen);
    if (g->running) {
        uint64_t now[RU_COUNTS];
        int rc = read_now(g, r, now);
        if (rc != 0)
            return rc;
        for (int j = 0; j < RU_COUNTS; j++)
            counts[j] = now[j] - r->base[j];
    }
    return 0;
}

int dk__rusage_group_read(dk_group *g, uint64_t *values, dk_reading *info)
{
    (void)info;
    rgroup *r = g->impl;
    uint64_t counts[RU_COUNTS];
    int rc = counts_now(g, counts);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < g->n; i++)
        values[i] = r->slot[i] >= 0 ? counts[r->slot[i]] : 0;
    return 0;
}

int dk__rusage_group_read_levels(dk_group *g, uint64_t *values)
{
    rgroup *r = g->impl;
    if (!r->v6)
        return dk__fail(DK_ENOTSUP, "this process group does not split by performance level");
    uint64_t counts[RU_COUNTS];
    int rc = counts_now(g, counts);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < g->n; i++) {
        if (r->slot[i] < 0)
            continue;
        uint64_t total = counts[r->slot[i]], p = counts[RU_PINSTS + r->slot[i]];
        values[i] = p < total ? p : total;    /* level 0: P cores */
        values[g->n + i] = total - values[i]; /* level 1: the rest, E cores */
    }
    return 0;
}

void dk__rusage_group_close(dk_group *g) { free(g->impl); }
