/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_group.c - perf_event groups beyond one thread: a process and the
 * threads and processes it starts (inherit, optionally enabled at its
 * exec), or every online CPU, one counter per event and CPU, each read on
 * its own ({value, time_enabled, time_running}). Also the kernel's CPU
 * lists, which say which CPUs are online.
 *
 * DK_GROUP_CHILDREN opens the counters on the calling thread (pid 0),
 * disabled, with inherit and enable_on_exec, and never enables them. What
 * kernel/events/core.c does with them:
 *   - inherit_event(): a task the caller forks or clones gets a copy whose
 *     state follows the parent copy's state, not attr.disabled: OFF; its
 *     attr (enable_on_exec included) is the original event's.
 *   - perf_event_exec() -> perf_event_enable_on_exec(): at the child's exec
 *     its copies with attr.enable_on_exec go from OFF to INACTIVE, that is
 *     counting. The caller never execs, so its own copy stays OFF; threads it
 *     creates get OFF copies that never count either.
 *   - A task the exec'd child creates inherits from a counting copy and
 *     counts from its fork; inherit_event() links every copy to the
 *     original event, not to the intermediate one.
 *   - perf_event_exit_task() -> perf_event_exit_event() -> sync_child_event()
 *     adds a copy's count and times to the original's child_count and
 *     child_total_time_{enabled,running}; do_exit() runs it before
 *     exit_notify(), so a reaped child's counts are in.
 *   - perf_read() -> __perf_event_read_value() returns the original's count
 *     plus child_count plus the copies still alive, and the times likewise.
 *   - PERF_EVENT_IOC_RESET (perf_event_reset()) clears only the original's
 *     own count, never child_count: readings are running totals, and a
 *     process's counts are the difference of two of them.
 *   - But a child whose every event was inherited gets a context marked as
 *     a clone of the caller's (perf_event_init_context(), inherited_all),
 *     and perf_event_context_sched_out() swaps equivalent contexts
 *     (context_equiv()) between the tasks instead of switching them: after
 *     posix_spawn's vfork the child then holds the original events, its
 *     exec enables them, and its exit detaches them (perf_event_exit_event()
 *     on an event without parent): no later child inherits anything. So
 *     next to each counter the caller holds a twin that is not inherited
 *     (inherit_task_group() then clears inherited_all) and never enabled:
 *     the children's contexts are no clones and are never swapped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "backend/perf_event/pe_internal.h"

int dk__perf_parse_cpu_list(const char *text, int *cpus, size_t max, size_t *count)
{
    const char *p = text;
    size_t n = 0;
    uint64_t next = 0; /* lists are ascending: no CPU twice */
    *count = 0;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (*p == '\0')
        return dk__fail(DK_EINVAL, "the CPU list is empty");
    for (;;) {
        uint64_t lo, hi;
        const char *at = p;
        if (!dk__pe_parse_decimal(&p, DK__PE_CPU_MAX, &lo))
            return dk__fail(DK_EINVAL,
                            "the CPU list has \"%.16s\" where a CPU number (0 to %d) "
                            "belongs",
                            at, DK__PE_CPU_MAX);
        hi = lo;
        if (*p == '-') {
            p++;
            at = p;
            if (!dk__pe_parse_decimal(&p, DK__PE_CPU_MAX, &hi))
                return dk__fail(DK_EINVAL,
                                "the CPU list has \"%.16s\" where the end of a range "
                                "(0 to %d) belongs",
                                at, DK__PE_CPU_MAX);
        }
        if (hi < lo || lo < next)
            return dk__fail(DK_EINVAL, "the CPU list is not ascending at %llu-%llu",
                            (unsigned long long)lo, (unsigned long long)hi);
        if (hi - lo + 1 > max - n)
            return dk__fail(DK_EINVAL, "the CPU list names more than %zu CPUs", max);
        for (uint64_t c = lo; c <= hi; c++)
            cpus[n++] = (int)c;
        next = hi + 1;
        if (*p == ',') {
            p++;
            continue;
        }
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (*p != '\0')
            return dk__fail(DK_EINVAL, "the CPU list has \"%.16s\" after %llu", p,
                            (unsigned long long)hi);
        break;
    }
    *count = n;
    return 0;
}

typedef struct pe_fd {
    int fd;
    size_t event;
    size_t cpu; /* index into dk_group.cpus (system scope), else 0 */
} pe_fd;

typedef struct pe_pgroup {
    pe_fd *fds;
    size_t nfds, cap;
    bool exec_pending; /* enabled by the kernel at exec: the first start is a no-op */
    bool children;     /* DK_GROUP_CHILDREN: only the children's execs enable counting */
} pe_pgroup;

#define CPU_ONLINE "/sys/devices/system/cpu/online"

/* The online CPUs, from CPU_ONLINE ("0-3,6"); without that file, the first
 * sysconf(_SC_NPROCESSORS_ONLN). Returns 0 or DK_EINVAL for a file that
 * cannot be read as a CPU list. */
int dk__pe_online_cpus(int *cpus, size_t max, size_t *n)
{
    char text[4096];
    *n = 0;
    if (dk__pe_read_text(CPU_ONLINE, text, sizeof text) == 0) {
        int rc = dk__perf_parse_cpu_list(text, cpus, max, n);
        if (rc != 0)
            return dk__fail(rc, "counting every CPU: " CPU_ONLINE ": %s", dk_last_error());
        return 0;
    }
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < count && *n < max; c++)
        cpus[(*n)++] = (int)c;
    if (*n == 0)
        return dk__fail(DK_EOS, "counting every CPU: neither " CPU_ONLINE " nor sysconf tells "
                                "which CPUs are online");
    return 0;
}

static void close_pgroup(pe_pgroup *pg)
{
    for (size_t i = 0; i < pg->nfds; i++)
        close(pg->fds[i].fd);
    free(pg->fds);
    free(pg);
}

static int add_fd(pe_pgroup *pg, int fd, size_t event, size_t cpu)
{
    if (pg->nfds == pg->cap) {
        size_t cap = pg->cap ? pg->cap * 2 : 16;
        pe_fd *grown = realloc(pg->fds, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        pg->fds = grown;
        pg->cap = cap;
    }
    pg->fds[pg->nfds].fd = fd;
    pg->fds[pg->nfds].event = event;
    pg->fds[pg->nfds].cpu = cpu;
    pg->nfds++;
    return 0;
}

#define MAX_CPUS 8192      /* Linux's largest NR_CPUS */
#define MAX_CPUS_LIST 1024 /* CPUs a hybrid PMU's list may name */
#define TWIN SIZE_MAX      /* pe_fd.event of a DK_GROUP_CHILDREN twin: never read */

#define CPU_SYSFS "/sys/devices/system/cpu"

/* A number from cpu's topology file (core_id, physical_package_id), or -1
 * when it cannot be read. */
static int read_topology(int cpu, const char *file)
{
    char path[160], text[32];
    if (dk__pe_pathf(path, sizeof path, CPU_SYSFS "/cpu%d/topology/%s", cpu, file) != 0 ||
        dk__pe_read_text(path, text, sizeof text) != 0)
        return -1;
    char *end;
    long v = strtol(text, &end, 10);
    return end != text && v >= 0 && v <= 1000000 ? (int)v : -1;
}

/* Whether cpu is in the CPU list of core PMU name ("<sysfs>/<name>/cpus"). */
static bool pmu_has_cpu(const pe_session *k, const char *name, int cpu, bool *listed)
{
    char path[512], text[4096];
    int cpus[MAX_CPUS_LIST];
    size_t n = 0;
    *listed = false;
    if (dk__pe_pathf(path, sizeof path, "%s/%s/cpus", k->sysfs, name) != 0 ||
        dk__pe_read_text(path, text, sizeof text) != 0)
        return false;
    dk__error_state saved;
    dk__error_save(&saved); /* a file that is no CPU list is no hybrid layout, not an error */
    int rc = dk__perf_parse_cpu_list(text, cpus, MAX_CPUS_LIST, &n);
    dk__error_restore(&saved);
    if (rc != 0)
        return false;
    *listed = true;
    for (size_t i = 0; i < n; i++)
        if (cpus[i] == cpu)
            return true;
    return false;
}

/* g->cpus for the online CPUs: core and package from sysfs topology,
 * levels from the hybrid PMUs (cpu_core "P", cpu_atom "E") or one level. */
static int describe_cpus(dk_group *g, const pe_session *k, const int *cpus, size_t ncpus)
{
    g->cpus = calloc(ncpus, sizeof *g->cpus);
    if (g->cpus == NULL)
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    g->ncpus = ncpus;
    bool hybrid = false;
    for (size_t c = 0; c < ncpus; c++) {
        bool listed_p, listed_e;
        bool p = pmu_has_cpu(k, "cpu_core", cpus[c], &listed_p);
        bool e = pmu_has_cpu(k, "cpu_atom", cpus[c], &listed_e);
        hybrid = hybrid || (listed_p && listed_e);
        dk_cpu_info *ci = &g->cpus[c];
        ci->size = sizeof *ci;
        ci->id = cpus[c];
        ci->core = read_topology(cpus[c], "core_id");
        ci->package = read_topology(cpus[c], "physical_package_id");
        ci->level = !p && e ? 1 : 0;
    }
    if (hybrid) {
        g->levels = 2;
        snprintf(g->level_names[0], sizeof g->level_names[0], "P");
        snprintf(g->level_names[1], sizeof g->level_names[1], "E");
    } else {
        g->levels = 1;
        snprintf(g->level_names[0], sizeof g->level_names[0], "all");
        for (size_t c = 0; c < ncpus; c++)
            g->cpus[c].level = 0;
    }
    for (size_t c = 0; c < ncpus; c++)
        g->cpus[c].level_name = g->level_names[g->cpus[c].level];
    return 0;
}

int dk__pe_group_open(dk_group *g)
{
    dk_sampler *s = g->sampler;
    pe_session *k = s->impl;
    bool system = g->scope == DK_SCOPE_SYSTEM;
    int *cpus = calloc(system ? MAX_CPUS : 1, sizeof *cpus);
    if (cpus == NULL)
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    size_t ncpus = 1;
    if (system) {
        int rc = dk__pe_online_cpus(cpus, MAX_CPUS, &ncpus);
        if (rc != 0) {
            free(cpus);
            return rc;
        }
    } else {
        cpus[0] = -1;
        if (g->pid == 0)
            g->pid = getpid();
    }
    bool children = (g->flags & DK_GROUP_CHILDREN) != 0;
    bool thread = g->scope == DK_SCOPE_THREAD;
    /* A running process: a counter on each thread it has (inherit covers
     * only those created afterwards). A process held before its exec has
     * one thread, and this process keeps counting its own main thread. */
    int *tids = NULL;
    size_t ntids = 0;
    bool attach = g->scope == DK_SCOPE_PROCESS && g->pid != getpid() &&
                  !(g->flags & (DK_GROUP_ENABLE_ON_EXEC | DK_GROUP_CHILDREN));
    if (attach && dk__pe_task_ids(g->pid, &tids, &ntids) != 0) {
        free(cpus);
        return DK_ENOMEM;
    }
    pe_pgroup *pg = calloc(1, sizeof *pg);
    struct perf_event_attr *attrs = calloc(DK__PE_CORE_PMUS_MAX, sizeof *attrs);
    if (pg == NULL || attrs == NULL) {
        free(pg);
        free(attrs);
        free(cpus);
        free(tids);
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < g->n && rc == 0; i++) {
        if (!g->supported[i])
            continue;
        pe_def moded;
        rc = dk__pe_def_with_mode(s, g->events[i], g->mode[i], dk__group_label(g, i), &moded);
        if (rc != 0)
            break;
        const pe_def *def = &moded;
        size_t events[DK__PE_CORE_PMUS_MAX], keys[DK__PE_CORE_PMUS_MAX];
        size_t m = dk__pe_plan(k->core_types, k->core_count, &def, 1, attrs, events, keys);
        size_t first = pg->nfds;
        int failed = 0; /* the DK_E* code of the open that failed */
        pe_target where = {.event = g->events[i]->name,
                           .def = def,
                           .pid = system     ? -1
                                  : children ? 0
                                             : g->pid};
        for (size_t j = 0; j < m && !failed; j++) {
            struct perf_event_attr *a = &attrs[j];
            a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
            a->disabled = 1;
            a->inherit = !system && !thread;
            a->enable_on_exec = !system &&
                                (g->flags & (DK_GROUP_ENABLE_ON_EXEC | DK_GROUP_CHILDREN)) != 0;
            dk__pe_apply_exclusions(k, a, def->exclude);
            for (size_t c = 0; c < ncpus * (attach ? ntids : 1) && !failed; c++) {
                where.cpu = cpus[attach ? 0 : c];
                if (attach)
                    where.pid = tids[c];
                int fd = dk__pe_open_fd(k, a, &where, -1);
                if (fd < 0 && attach && c > 0 && errno == ESRCH)
                    continue; /* a thread that ended since the list was read */
                if (fd < 0) {
                    failed = fd;
                    break;
                }
                if (add_fd(pg, fd, i, c) != 0) {
                    close(fd);
                    rc = dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
                    break;
                }
                if (!children)
                    continue;
                struct perf_event_attr twin = *a;
                twin.inherit = 0;
                twin.enable_on_exec = 0;
                fd = dk__pe_open_fd(k, &twin, &where, -1);
                if (fd < 0) {
                    failed = fd;
                    break;
                }
                if (add_fd(pg, fd, TWIN, c) != 0) {
                    close(fd);
                    rc = dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
                    break;
                }
            }
        }
        if (failed == 0 || rc != 0)
            continue;
        /* Undo this event's counters; the open recorded what its failure means. */
        while (pg->nfds > first)
            close(pg->fds[--pg->nfds].fd);
        rc = failed;
        if (rc == DK_EUNAVAILABLE && (g->flags & DK_GROUP_PARTIAL)) {
            dk__group_unsupported(g, i);
            rc = 0;
        }
    }
    free(attrs);
    if (rc == 0 && system)
        rc = describe_cpus(g, k, cpus, ncpus);
    free(cpus);
    free(tids);
    if (rc != 0) {
        free(g->cpus);
        g->cpus = NULL;
        g->ncpus = 0;
        close_pgroup(pg);
        return rc;
    }
    pg->exec_pending = !system && (g->flags & DK_GROUP_ENABLE_ON_EXEC) != 0;
    pg->children = children;
    if (system)
        snprintf(g->scope_text, sizeof g->scope_text, "every CPU (%zu online)", ncpus);
    else if (thread)
        snprintf(g->scope_text, sizeof g->scope_text, "thread %d (not the threads it starts)",
                 g->pid);
    else if (attach)
        snprintf(g->scope_text, sizeof g->scope_text,
                 "process %d (its %zu thread%s and the threads and processes they start)", g->pid,
                 ntids, ntids == 1 ? "" : "s");
    else if (children)
        snprintf(g->scope_text, sizeof g->scope_text,
                 "the processes process %d starts, each from its exec, and their children", g->pid);
    else
        snprintf(g->scope_text, sizeof g->scope_text,
                 "process %d and the threads and processes it starts", g->pid);
    g->impl = pg;
    return 0;
}

static int pe_group_ioctl(dk_group *g, unsigned long request, const char *what)
{
    pe_pgroup *pg = g->impl;
    int rc = 0;
    for (size_t i = 0; i < pg->nfds; i++)
        if (ioctl(pg->fds[i].fd, request, 0) != 0 && rc == 0)
            rc = dk__fail_os(DK_EOS, errno, "%s the counters failed", what);
    return rc;
}

int dk__pe_group_start(dk_group *g)
{
    pe_pgroup *pg = g->impl;
    if (pg->children)
        return 0; /* enabling would count the caller itself */
    if (pg->exec_pending) {
        pg->exec_pending = false; /* the kernel enables the counters at the exec */
        return 0;
    }
    int rc = pe_group_ioctl(g, PERF_EVENT_IOC_ENABLE, "enabling");
    if (rc != 0)
        (void)pe_group_ioctl(g, PERF_EVENT_IOC_DISABLE, "disabling");
    return rc;
}

int dk__pe_group_stop(dk_group *g)
{
    pe_pgroup *pg = g->impl;
    if (pg->children)
        return 0; /* the caller's copy never counts; the children's count until they exit */
    return pe_group_ioctl(g, PERF_EVENT_IOC_DISABLE, "disabling");
}

int dk__pe_group_read(dk_group *g, uint64_t *values, dk_reading *info)
{
    pe_pgroup *pg = g->impl;
    uint64_t enabled[DK_MAX_EVENTS] = {0}, running[DK_MAX_EVENTS] = {0};
    for (size_t i = 0; i < g->n; i++)
        values[i] = 0;
    for (size_t i = 0; i < pg->nfds; i++) {
        if (pg->fds[i].event == TWIN)
            continue;
        uint64_t buf[3];
        ssize_t got = read(pg->fds[i].fd, buf, sizeof buf);
        if (got != (ssize_t)sizeof buf)
            return dk__fail_os(DK_EOS, got < 0 ? errno : EIO, "reading event %s failed",
                               g->events[pg->fds[i].event]->name);
        size_t e = pg->fds[i].event;
        values[e] += dk_scale_count(buf[0], buf[1], buf[2]);
        enabled[e] += buf[1];
        running[e] += buf[2];
    }
    if (info != NULL)
        for (size_t i = 0; i < g->n; i++)
            if (g->supported[i])
                dk__pe_describe_reading(&info[i], enabled[i], running[i]);
    return 0;
}

int dk__pe_group_read_cpus(dk_group *g, uint64_t *values, dk_reading *info)
{
    pe_pgroup *pg = g->impl;
    memset(values, 0, g->ncpus * g->n * sizeof *values);
    /* Each CPU's counter has times of its own (perf stat -A prints them):
     * enabled one after the other, and each runs only while the PMU has
     * room on that CPU. */
    for (size_t i = 0; i < pg->nfds; i++) {
        if (pg->fds[i].event == TWIN || pg->fds[i].cpu >= g->ncpus)
            continue;
        uint64_t buf[3];
        ssize_t got = read(pg->fds[i].fd, buf, sizeof buf);
        if (got != (ssize_t)sizeof buf)
            return dk__fail_os(DK_EOS, got < 0 ? errno : EIO, "reading event %s on CPU %d failed",
                               g->events[pg->fds[i].event]->name, g->cpus[pg->fds[i].cpu].id);
        size_t cell = pg->fds[i].cpu * g->n + pg->fds[i].event;
        values[cell] += dk_scale_count(buf[0], buf[1], buf[2]);
        if (info != NULL) {
            info[cell].time_enabled += buf[1];
            info[cell].time_running += buf[2];
        }
    }
    for (size_t c = 0; info != NULL && c < g->ncpus; c++)
        for (size_t e = 0; e < g->n; e++)
            if (g->supported[e])
                dk__pe_describe_reading(&info[c * g->n + e], info[c * g->n + e].time_enabled,
                                        info[c * g->n + e].time_running);
    return 0;
}

void dk__pe_group_close(dk_group *g) { close_pgroup(g->impl); }
