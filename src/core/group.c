/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * group.c - dk_group: counting a whole process, one thread or every CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static void free_group(dk_group *g)
{
    for (size_t i = 0; i < g->n; i++) {
        free((char *)g->asked[i]);
        free(g->label[i]);
    }
    free(g->cpus);
    free(g);
}

static int group_open(dk_sampler *s, dk_scope scope, int pid, const char *const *names, size_t n,
                      unsigned flags, dk_group **out)
{
    if (s == NULL || names == NULL || out == NULL)
        return dk__fail(DK_EINVAL, "dk_group_open: sampler, names and out must not be NULL");
    *out = NULL;
    int rc = dk__sampler_counts(s, "dk_group_open");
    if (rc != 0)
        return rc;
    if (scope != DK_SCOPE_PROCESS && scope != DK_SCOPE_SYSTEM && scope != DK_SCOPE_THREAD)
        return dk__fail(DK_EINVAL, "dk_group_open: %d is not a scope", (int)scope);
    /* One thread counts itself only: nothing it starts, no exec to wait for. */
    if (scope == DK_SCOPE_THREAD &&
        (pid <= 0 || (flags & (DK_GROUP_ENABLE_ON_EXEC | DK_GROUP_CHILDREN))))
        return dk__fail(DK_EINVAL, "dk_group_open: DK_SCOPE_THREAD needs a thread id above 0 "
                                   "and neither DK_GROUP_ENABLE_ON_EXEC nor DK_GROUP_CHILDREN");
    if (n == 0 || n > DK_MAX_EVENTS)
        return dk__fail(DK_EINVAL, "dk_group_open: %zu events; give 1 to %d", n, DK_MAX_EVENTS);
    const unsigned known = DK_GROUP_ENABLE_ON_EXEC | DK_GROUP_PARTIAL | DK_GROUP_CHILDREN;
    if (flags & ~known)
        return dk__fail(DK_EINVAL, "dk_group_open: unknown flags 0x%x", flags & ~known);
    if (pid < 0)
        return dk__fail(DK_EINVAL, "dk_group_open: pid %d", pid);
    if ((flags & DK_GROUP_CHILDREN) &&
        (scope != DK_SCOPE_PROCESS || pid != 0 || (flags & DK_GROUP_ENABLE_ON_EXEC)))
        return dk__fail(DK_EINVAL, "dk_group_open: DK_GROUP_CHILDREN counts the processes the "
                                   "caller starts: give DK_SCOPE_PROCESS, pid 0 and no "
                                   "DK_GROUP_ENABLE_ON_EXEC");
    if (s->backend->group_open == NULL)
        return dk__fail(DK_ENOTSUP, "the %s backend cannot count a process or the whole system",
                        s->backend->name);

    dk_group *g = calloc(1, sizeof *g);
    if (g == NULL)
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    g->sampler = s;
    g->scope = scope;
    g->pid = pid;
    g->flags = flags;
    g->n = n;
    for (size_t i = 0; i < n; i++) {
        g->asked[i] = names[i] != NULL ? strdup(names[i]) : NULL;
        if (names[i] != NULL && g->asked[i] == NULL) {
            g->n = i;
            free_group(g);
            return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
        }
        g->supported[i] = true;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = dk__resolve_spec(s, names[i], &g->events[i], &g->mode[i], &g->label[i]);
        if (rc == DK_EUNAVAILABLE && (flags & DK_GROUP_PARTIAL)) {
            g->events[i] = NULL;
            dk__group_unsupported(g, i);
            rc = 0;
        }
    }
    if (rc != 0) {
        free_group(g);
        return rc;
    }

    /* Under the lock, so that a release cannot hand the counters back while
     * the backend programs them. */
    pthread_mutex_lock(&s->lock);
    if (s->released) {
        pthread_mutex_unlock(&s->lock);
        free_group(g);
        return dk__fail(DK_ESTATE, "the sampler has given its counters back");
    }
    rc = s->backend->group_open(g);
    if (rc == 0)
        s->refs++;
    pthread_mutex_unlock(&s->lock);
    if (rc != 0) {
        free_group(g);
        return rc;
    }
    *out = g;
    /* Counting that the kernel starts at exec is running from now on. */
    if (flags & (DK_GROUP_ENABLE_ON_EXEC | DK_GROUP_CHILDREN)) {
        rc = dk_group_start(g);
        if (rc != 0) {
            dk_group_close(g);
            *out = NULL;
        }
    }
    return rc;
}

/* Success leaves dk_last_error() as the caller left it, though the way
 * there may fail (this call marks events unsupported with DK_GROUP_PARTIAL). */
int dk_group_open(dk_sampler *s, dk_scope scope, int pid, const char *const *names, size_t n,
                  unsigned flags, dk_group **out)
{
    dk__error_state saved;
    dk__error_save(&saved);
    int rc = group_open(s, scope, pid, names, n, flags, out);
    if (rc == 0)
        dk__error_restore(&saved);
    return rc;
}

size_t dk_group_event_count(const dk_group *g) { return g != NULL ? g->n : 0; }

const char *dk_group_event_name(const dk_group *g, size_t i)
{
    if (g == NULL || i >= g->n)
        return NULL;
    return dk__group_label(g, i);
}

const dk_database_event *dk_group_event(const dk_group *g, size_t i)
{
    return g != NULL && i < g->n && g->supported[i] ? g->events[i] : NULL;
}

const char *dk_group_event_unit(const dk_group *g, size_t i)
{
    if (g == NULL || i >= g->n || g->events[i] == NULL)
        return NULL;
    return g->events[i]->unit;
}

bool dk_group_supported(const dk_group *g, size_t i)
{
    return g != NULL && i < g->n && g->supported[i];
}

const char *dk_group_why(const dk_group *g, size_t i)
{
    if (g == NULL || i >= g->n)
        return NULL;
    return g->supported[i] ? "" : g->why[i];
}

const char *dk_group_scope(const dk_group *g) { return g != NULL ? g->scope_text : NULL; }

int dk_group_start(dk_group *g)
{
    if (g == NULL)
        return dk__fail(DK_EINVAL, "dk_group_start: group must not be NULL");
    dk_sampler *s = g->sampler;
    pthread_mutex_lock(&s->lock); /* any thread may start or stop a group */
    if (g->running) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    if (s->released) {
        pthread_mutex_unlock(&s->lock);
        return dk__fail(DK_ESTATE, "dk_group_start: the sampler has given its counters back");
    }
    int rc = s->backend->group_start(g);
    if (rc == 0) {
        g->running = true;
        s->running++;
        s->running_groups++;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int stop(dk_group *g)
{
    dk_sampler *s = g->sampler;
    pthread_mutex_lock(&s->lock);
    if (!g->running) { /* another thread stopped it first */
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    int rc = s->backend->group_stop(g);
    g->running = false;
    s->running--;
    s->running_groups--;
    int settled = dk__sampler_settle(s);
    pthread_mutex_unlock(&s->lock);
    return rc != 0 ? rc : settled;
}

int dk_group_stop(dk_group *g)
{
    if (g == NULL)
        return dk__fail(DK_EINVAL, "dk_group_stop: group must not be NULL");
    return stop(g);
}

int dk_group_read(dk_group *g, uint64_t *values, dk_reading *info)
{
    if (g == NULL || values == NULL)
        return dk__fail(DK_EINVAL, "dk_group_read: group and values must not be NULL");
    if (info != NULL)
        memset(info, 0, g->n * sizeof *info);
    /* Not the hot path (that is dk_thread_sample): a read waits for a start or stop. */
    pthread_mutex_lock(&g->sampler->lock);
    int rc = g->sampler->backend->group_read(g, values, info);
    pthread_mutex_unlock(&g->sampler->lock);
    for (size_t i = 0; rc == 0 && i < g->n; i++) {
        if (!g->supported[i])
            values[i] = 0;
        if (info != NULL && info[i].time_enabled == 0)
            info[i].counted = g->supported[i]; /* the backend does not time-share */
    }
    return rc;
}

void dk_group_close(dk_group *g)
{
    if (g == NULL)
        return;
    (void)stop(g);
    g->sampler->backend->group_close(g);
    dk__sampler_unref(g->sampler);
    free_group(g);
}

size_t dk_group_cpu_count(const dk_group *g)
{
    return g != NULL && g->sampler->backend->group_read_cpus != NULL ? g->ncpus : 0;
}

int dk_group_cpu_info(const dk_group *g, size_t i, dk_cpu_info *info)
{
    if (g == NULL || info == NULL)
        return dk__fail(DK_EINVAL, "dk_group_cpu_info: group and info must not be NULL");
    if (info->size < sizeof *info)
        return dk__fail(DK_EINVAL,
                        "dk_group_cpu_info: info->size is %zu; set it to "
                        "sizeof(dk_cpu_info) (%zu)",
                        info->size, sizeof *info);
    if (i >= dk_group_cpu_count(g))
        return dk__fail(DK_EINVAL, "dk_group_cpu_info: CPU index %zu; the group has %zu", i,
                        dk_group_cpu_count(g));
    *info = g->cpus[i];
    info->size = sizeof *info;
    return 0;
}

/* dk_group_read_cpus and dk_group_read_cpus_info; what names the call in
 * messages. */
static int read_cpus(dk_group *g, uint64_t *values, dk_reading *info, size_t ncpus,
                     const char *what)
{
    if (g == NULL || values == NULL)
        return dk__fail(DK_EINVAL, "%s: group and values must not be NULL", what);
    size_t have = dk_group_cpu_count(g);
    if (have == 0)
        return dk__fail(DK_ENOTSUP,
                        "%s: only a system group (DK_SCOPE_SYSTEM) "
                        "of the perf_event or kperf backend counts per CPU",
                        what);
    if (ncpus != have)
        return dk__fail(DK_EINVAL, "%s: %zu CPUs asked, the group has %zu", what, ncpus, have);
    if (info != NULL)
        memset(info, 0, ncpus * g->n * sizeof *info);
    pthread_mutex_lock(&g->sampler->lock);
    int rc = g->sampler->backend->group_read_cpus(g, values, info);
    pthread_mutex_unlock(&g->sampler->lock);
    for (size_t c = 0; rc == 0 && c < ncpus; c++)
        for (size_t i = 0; i < g->n; i++) {
            if (!g->supported[i])
                values[c * g->n + i] = 0;
            /* As dk_group_read: a backend without times does not time-share. */
            if (info != NULL && info[c * g->n + i].time_enabled == 0)
                info[c * g->n + i].counted = g->supported[i];
        }
    return rc;
}

int dk_group_read_cpus(dk_group *g, uint64_t *values, size_t ncpus)
{
    return read_cpus(g, values, NULL, ncpus, "dk_group_read_cpus");
}

int dk_group_read_cpus_info(dk_group *g, uint64_t *values, dk_reading *info, size_t ncpus)
{
    if (info == NULL)
        return dk__fail(DK_EINVAL, "dk_group_read_cpus_info: info must not be NULL (call "
                                   "dk_group_read_cpus for the counts alone)");
    return read_cpus(g, values, info, ncpus, "dk_group_read_cpus_info");
}

size_t dk_group_perf_levels(const dk_group *g)
{
    if (g == NULL)
        return 0;
    if (g->scope == DK_SCOPE_SYSTEM)
        return dk_group_cpu_count(g) > 0 ? g->levels : 0;
    return g->sampler->backend->group_read_levels != NULL ? g->levels : 0;
}

const char *dk_group_perf_level_name(const dk_group *g, size_t level)
{
    return level < dk_group_perf_levels(g) ? g->level_names[level] : NULL;
}

int dk_group_read_perf_levels(dk_group *g, uint64_t *values, size_t levels)
{
    if (g == NULL || values == NULL)
        return dk__fail(DK_EINVAL, "dk_group_read_perf_levels: group and values must not be "
                                   "NULL");
    size_t have = dk_group_perf_levels(g);
    if (have == 0)
        return dk__fail(DK_ENOTSUP,
                        "dk_group_read_perf_levels: the %s backend does not split "
                        "this group's counts by performance level",
                        g->sampler->backend->name);
    if (levels != have)
        return dk__fail(DK_EINVAL,
                        "dk_group_read_perf_levels: %zu levels asked, the group has "
                        "%zu",
                        levels, have);
    memset(values, 0, levels * g->n * sizeof *values);
    if (g->scope != DK_SCOPE_SYSTEM) {
        pthread_mutex_lock(&g->sampler->lock);
        int rc = g->sampler->backend->group_read_levels(g, values);
        pthread_mutex_unlock(&g->sampler->lock);
        for (size_t l = 0; rc == 0 && l < levels; l++)
            for (size_t i = 0; i < g->n; i++)
                if (!g->supported[i])
                    values[l * g->n + i] = 0;
        return rc;
    }
    uint64_t *per = calloc(g->ncpus * g->n, sizeof *per);
    if (per == NULL)
        return dk__fail(DK_ENOMEM, "dk_group_read_perf_levels: out of memory");
    int rc = dk_group_read_cpus(g, per, g->ncpus);
    for (size_t c = 0; rc == 0 && c < g->ncpus; c++) {
        size_t l = (size_t)g->cpus[c].level;
        for (size_t i = 0; l < levels && i < g->n; i++)
            values[l * g->n + i] += per[c * g->n + i];
    }
    free(per);
    return rc;
}
