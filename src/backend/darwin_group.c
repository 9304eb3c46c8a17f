/*
 * darwin_group.c - a process's instructions and cycles through
 * proc_pid_rusage(RUSAGE_INFO_V4), for the kperf and selfcounts backends:
 * macOS gives no per-thread counters of another process, but it keeps these
 * two totals for every process, without privileges.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/darwin_group.h"
#include "dkperf/kperf.h"
#include "sys/libsystem.h"

typedef struct rgroup {
    char root[DK_LOAD_PATH_MAX];
    int slot[DK_MAX_EVENTS];
    uint64_t base[2];   /* totals at start */
    uint64_t frozen[2]; /* counts at the last stop */
} rgroup;

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
    uint64_t insts, cycles;
    int rc = dk__proc_cpi(r->root, g->pid, &insts, &cycles);
    if (rc != 0) {
        free(r);
        return rc;
    }
    snprintf(g->scope_text, sizeof g->scope_text, "process %d (its own threads)", g->pid);
    g->impl = r;
    return 0;
}

int dk__rusage_group_start(dk_group *g)
{
    rgroup *r = g->impl;
    uint64_t now[2];
    int rc = dk__proc_cpi(r->root, g->pid, &now[0], &now[1]);
    if (rc != 0)
        return rc;
    /* Resume: what was counted before the stop stays counted. */
    r->base[0] = now[0] - r->frozen[0];
    r->base[1] = now[1] - r->frozen[1];
    return 0;
}

int dk__rusage_group_stop(dk_group *g)
{
    rgroup *r = g->impl;
    uint64_t now[2];
    int rc = dk__proc_cpi(r->root, g->pid, &now[0], &now[1]);
    if (rc != 0)
        return rc;
    r->frozen[0] = now[0] - r->base[0];
    r->frozen[1] = now[1] - r->base[1];
    return 0;
}

int dk__rusage_group_read(dk_group *g, uint64_t *values, dk_reading *info)
{
    (void)info;
    rgroup *r = g->impl;
    uint64_t counts[2] = {r->frozen[0], r->frozen[1]};
    if (g->running) {
        uint64_t now[2];
        int rc = dk__proc_cpi(r->root, g->pid, &now[0], &now[1]);
        if (rc != 0)
            return rc;
        counts[0] = now[0] - r->base[0];
        counts[1] = now[1] - r->base[1];
    }
    for (size_t i = 0; i < g->n; i++)
        values[i] = r->slot[i] >= 0 ? counts[r->slot[i]] : 0;
    return 0;
}

void dk__rusage_group_close(dk_group *g) { free(g->impl); }
