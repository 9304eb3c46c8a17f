/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * selfcounts.c - the unprivileged Darwin backend: thread_selfcounts()
 * (macOS 12.4+) gives the calling thread's instructions and cycles, in all
 * or per CPU performance level, without root. The event database still
 * comes from kperfdata when it loads (it needs no privileges), so names
 * resolve as with kperf; every event but instructions and cycles is refused
 * with DK_EPERM, naming what root would add.
 *
 * thread_selfcounts counts from the thread's creation and cannot be
 * stopped; start and stop are emulated by leaving out what was counted
 * while stopped.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/darwin/darwin_group.h"
#include "backend/darwin/kpep_common.h"
#include "events/tables.h"
#include "sys/libsystem.h"

#define LEVELS_MAX DK__PERF_LEVELS_MAX

/*
 * Record that what (e.g. "counting every CPU", "event INST_BRANCH") needs
 * the kperf backend, saying why it is not in use: for want of privileges
 * (or when that is unknown) with privileged_code, root named and
 * privileged_tail appended, otherwise with the reason kperf was passed
 * over and a code that fits it.
 */
static int fail_needs_kperf(const dk_sampler *s, int privileged_code, const char *what,
                            const char *privileged_tail)
{
    if (s->passed_rc == 0 || s->passed_rc == DK_EPERM)
        return dk__fail(privileged_code,
                        "%s needs the kperf backend, which needs root or the "
                        "com.apple.private.kernel.kpc entitlement%s",
                        what, privileged_tail);
    return dk__fail(s->passed_rc == DK_EBUSY ? DK_EBUSY : DK_EUNAVAILABLE,
                    "%s needs the kperf backend, which could not be used: %s; selfcounts counts "
                    "only instructions and cycles",
                    what, s->passed);
}

typedef struct session {
    const dk__libsystem *ls;
    char root[DK_LOAD_PATH_MAX];
    const dk_kperfdata_vtable *kd;
    kpep_db *kdb; /* NULL when kperfdata is not there */
    kpep_event **handles;
    dk_database_event own[2]; /* the database when kperfdata is not there */
    const dk_database_event *own_fixed[2];
} session;

enum { SLOT_INSTRUCTIONS = 0, SLOT_CYCLES = 1 };

typedef struct sthread {
    dk__thread_selfcounts_fn selfcounts;
    int slot[DK_MAX_EVENTS];              /* SLOT_* of each event */
    uint64_t left_out[LEVELS_MAX + 1][2]; /* counted while stopped; [LEVELS_MAX]: total */
    uint64_t at_stop[LEVELS_MAX + 1][2];
    size_t levels;
} sthread;

static int fail_selfcounts(const char *what)
{
    int e = errno != 0 ? errno : EIO;
    if (e == ENOTSUP || e == EOPNOTSUPP)
        return dk__fail_os(DK_EUNAVAILABLE, e,
                           "%s: this CPU does not count instructions and "
                           "cycles per thread",
                           what);
    return dk__fail_os(DK_EOS, e, "%s failed", what);
}

/* The database when kperfdata cannot be loaded: the two fixed counters. */
static void own_database(dk_sampler *s, session *k)
{
    dk_database_event *e = k->own;
    e[0] = (dk_database_event){.name = "FIXED_CYCLES",
                               .description = "core cycles (thread_selfcounts)",
                               .alias = "Cycles",
                               .fixed = true,
                               .counters_mask = 1,
                               .source = "selfcounts",
                               .supported = true};
    e[1] = (dk_database_event){.name = "FIXED_INSTRUCTIONS",
                               .description = "retired instructions (thread_selfcounts)",
                               .alias = "Instructions",
                               .fixed = true,
                               .counters_mask = 2,
                               .source = "selfcounts",
                               .supported = true};
    k->own_fixed[0] = &e[0];
    k->own_fixed[1] = &e[1];
    s->db.name = "selfcounts";
    s->db.cpu_id = "";
    s->db.marketing_name = "unknown CPU";
    s->db.family = DK__FAMILY_APPLE;
    s->db.events = e;
    s->db.event_count = 2;
    s->db.fixed = k->own_fixed;
    s->db.fixed_count = 2;
    s->db.counters[0] = 2;
    s->cpu = DK_CPU_UNKNOWN;
}

static int read_perf_levels(dk_sampler *s, session *k)
{
    int32_t n = 0;
    size_t len = sizeof n;
    dk__sysctlbyname_fn sysctl = k->ls->sysctlbyname;
    if (sysctl == NULL || sysctl("hw.nperflevels", &n, &len, NULL, 0) != 0 || n < 1)
        return 0;
    if (n > LEVELS_MAX)
        n = LEVELS_MAX;
    /* Probe the per-level kind; older kernels may lack it. */
    struct dk__thsc_cpi probe[LEVELS_MAX];
    if (k->ls->thread_selfcounts(DK__THSC_CPI_PER_PERF_LEVEL, probe, sizeof probe) != 0)
        return 0;
    s->perf_levels = (size_t)n;
    for (int i = 0; i < n; i++) {
        char key[40], name[64] = "";
        size_t nlen = sizeof name;
        snprintf(key, sizeof key, "hw.perflevel%d.name", i);
        const char *shown = NULL;
        if (sysctl(key, name, &nlen, NULL, 0) == 0) {
            if (strncmp(name, "Performance", 4) == 0)
                shown = "P";
            else if (strncmp(name, "Efficiency", 3) == 0)
                shown = "E";
        }
        if (shown != NULL)
            snprintf(s->perf_level_names[i], sizeof s->perf_level_names[i], "%s", shown);
        else
            snprintf(s->perf_level_names[i], sizeof s->perf_level_names[i], "%d", i);
    }
    return 0;
}

static void free_session(session *k)
{
    if (k == NULL)
        return;
    if (k->kdb != NULL)
        k->kd->kpep_db_free(k->kdb);
    free(k->handles);
    free(k);
}

static int sc_open(dk_sampler *s, const dk_sampler_options *opts)
{
    session *k = calloc(1, sizeof *k);
    if (k == NULL)
        return dk__fail(DK_ENOMEM, "opening the selfcounts backend: out of memory");
    const char *root = dk_framework_root(opts->framework_root);
    dk__strlcpy(k->root, root, sizeof k->root);
    int rc = dk__libsystem_load(root, &k->ls);
    if (rc != 0)
        goto fail;
    if (k->ls->thread_selfcounts == NULL) {
        rc = dk__fail(DK_EUNAVAILABLE, "thread_selfcounts is missing from libSystem: it needs "
                                       "macOS 12.4 or later");
        goto fail;
    }
    struct dk__thsc_cpi cpi;
    errno = 0;
    if (k->ls->thread_selfcounts(DK__THSC_CPI, &cpi, sizeof cpi) != 0) {
        rc = fail_selfcounts("thread_selfcounts(THSC_CPI)");
        goto fail;
    }

    /* The database and chip from kperfdata, which needs no privileges. */
    size_t counters[3] = {2, 0, 0};
    if (dk_kperfdata_load(root, &k->kd, NULL) == 0 && k->kd->kpep_db_create(NULL, &k->kdb) == 0 &&
        k->kdb != NULL && dk__kpep_check_stride(k->kd, k->kdb) == 0) {
        s->cpu = dk__cpu_from_db_name(k->kdb->name);
        rc = dk__kpep_view(s, k->kdb, counters, &k->handles);
        if (rc != 0) {
            dk__kpep_view_free(s);
            goto fail;
        }
        /* Listed, but only instructions and cycles can be counted without root. */
        for (size_t i = 0; i < s->db.event_count; i++)
            s->db.events[i].supported = dk__fixed_slot(&s->db.events[i]) >= 0;
    } else {
        if (k->kdb != NULL)
            k->kd->kpep_db_free(k->kdb);
        k->kdb = NULL;
        own_database(s, k);
    }
    s->impl = k;
    read_perf_levels(s, k);
    s->caps.per_thread = true;
    s->caps.per_process = k->ls->proc_pid_rusage != NULL;
    s->caps.perf_levels = s->perf_levels > 1;
    s->caps.counters = 2;
    s->caps.pmu = "thread_selfcounts (fixed counters, no PMU programming)";
    s->caps.privileges = "not root: instructions and cycles of a thread (thread_selfcounts) or a "
                         "process (proc_pid_rusage); root would add every event and system-wide "
                         "counting";
    s->caps.sample_event = "cycles"; /* sampling itself needs kperf */
    s->caps.stat_events = "instructions,cycles,branches,branch-misses";
    return 0;
fail:
    free_session(k);
    return rc;
}

static int sc_acquire(dk_sampler *s)
{
    (void)s; /* nothing to take: thread_selfcounts always counts */
    return 0;
}

static int sc_release(dk_sampler *s)
{
    (void)s;
    return 0;
}

static void sc_close(dk_sampler *s)
{
    session *k = s->impl;
    if (k->kdb != NULL)
        dk__kpep_view_free(s);
    free_session(k);
}

static int sc_process_cpi(dk_sampler *s, int pid, uint64_t *instructions, uint64_t *cycles)
{
    session *k = s->impl;
    return dk__proc_cpi(k->root, pid, instructions, cycles);
}

/* The thread's totals (level LEVELS_MAX) and, when split, per level. */
static int raw_counts(sthread *st, uint64_t raw[LEVELS_MAX + 1][2], bool levels)
{
    struct dk__thsc_cpi cpi[LEVELS_MAX];
    errno = 0;
    if (st->selfcounts(DK__THSC_CPI, cpi, sizeof cpi[0]) != 0)
        return fail_selfcounts("reading the thread's counts (thread_selfcounts)");
    raw[LEVELS_MAX][SLOT_INSTRUCTIONS] = cpi[0].tcpi_instructions;
    raw[LEVELS_MAX][SLOT_CYCLES] = cpi[0].tcpi_cycles;
    if (levels && st->levels > 0) {
        if (st->selfcounts(DK__THSC_CPI_PER_PERF_LEVEL, cpi, st->levels * sizeof cpi[0]) != 0)
            return fail_selfcounts("reading the thread's counts per performance level");
        for (size_t l = 0; l < st->levels; l++) {
            raw[l][SLOT_INSTRUCTIONS] = cpi[l].tcpi_instructions;
            raw[l][SLOT_CYCLES] = cpi[l].tcpi_cycles;
        }
    }
    return 0;
}

static int sc_read(dk_thread *t, uint64_t *values, dk_reading *info)
{
    (void)info;
    sthread *st = t->impl;
    struct dk__thsc_cpi cpi;
    if (DK__UNLIKELY(st->selfcounts(DK__THSC_CPI, &cpi, sizeof cpi) != 0))
        return fail_selfcounts("reading the thread's counts (thread_selfcounts)");
    const uint64_t now[2] = {cpi.tcpi_instructions, cpi.tcpi_cycles};
    for (size_t i = 0; i < t->n; i++)
        values[i] = now[st->slot[i]] - st->left_out[LEVELS_MAX][st->slot[i]];
    return 0;
}

static int sc_perf_levels(dk_thread *t, uint64_t *values)
{
    sthread *st = t->impl;
    uint64_t raw[LEVELS_MAX + 1][2] = {{0}};
    int rc = raw_counts(st, raw, true);
    if (rc != 0)
        return rc;
    for (size_t l = 0; l < st->levels; l++)
        for (size_t i = 0; i < t->n; i++)
            values[l * t->n + i] = raw[l][st->slot[i]] - st->left_out[l][st->slot[i]];
    return 0;
}

static int sc_thread_open(dk_thread *t)
{
    session *k = t->sampler->impl;
    sthread *st = calloc(1, sizeof *st);
    if (st == NULL)
        return dk__fail(DK_ENOMEM, "dk_thread_open: out of memory");
    st->selfcounts = k->ls->thread_selfcounts;
    st->levels = t->sampler->perf_levels;
    for (size_t i = 0; i < t->n; i++) {
        if (dk__mode_restricts(t->mode[i])) {
            free(st);
            return dk__fail_mode(dk__thread_label(t, i), "thread_selfcounts");
        }
        st->slot[i] = dk__fixed_slot(t->events[i]);
        if (st->slot[i] < 0) {
            free(st);
            char what[160];
            snprintf(what, sizeof what, "event %s", t->events[i]->name);
            return fail_needs_kperf(t->sampler, DK_EPERM, what,
                                    "; without them only instructions and cycles are "
                                    "counted");
        }
    }
    /* Nothing before the first start counts. */
    int rc = raw_counts(st, st->at_stop, true);
    if (rc != 0) {
        free(st);
        return rc;
    }
    memcpy(st->left_out, st->at_stop, sizeof st->left_out);
    t->impl = st;
    t->read = sc_read;
    return 0;
}

static int sc_thread_start(dk_thread *t)
{
    sthread *st = t->impl;
    uint64_t now[LEVELS_MAX + 1][2] = {{0}};
    int rc = raw_counts(st, now, true);
    if (rc != 0)
        return rc;
    for (size_t l = 0; l <= LEVELS_MAX; l++)
        for (int c = 0; c < 2; c++)
            st->left_out[l][c] += now[l][c] - st->at_stop[l][c];
    return 0;
}

static int sc_thread_stop(dk_thread *t)
{
    sthread *st = t->impl;
    return raw_counts(st, st->at_stop, true);
}

static void sc_thread_close(dk_thread *t) { free(t->impl); }

static int sc_group_open(dk_group *g)
{
    session *k = g->sampler->impl;
    if (g->scope == DK_SCOPE_SYSTEM) {
        int rc = fail_needs_kperf(g->sampler, DK_ENOTSUP, "counting every CPU", "");
        return rc == DK_EUNAVAILABLE ? DK_ENOTSUP : rc;
    }
    const dk_sampler *s = g->sampler;
    char why[800];
    if (s->passed_rc == 0 || s->passed_rc == DK_EPERM)
        snprintf(why, sizeof why,
                 "needs root (the kperf backend) and a system-wide count; without "
                 "them only a process's instructions and cycles are counted");
    else
        snprintf(why, sizeof why,
                 "needs the kperf backend and a system-wide count, and kperf could not be used: "
                 "%s; only a process's instructions and cycles are counted",
                 s->passed);
    return dk__rusage_group_open(g, k->root, why);
}

/* What selfcounts still counts, after the cause kperf was passed over;
 * the privileges text says that cause when it was not privileges. */
static void sc_explain(dk_sampler *s, char *buf, size_t size)
{
    if (s->passed_rc == DK_EBUSY)
        s->caps.privileges = "enough for kperf, but another client holds the counters: "
                             "instructions and cycles of a thread (thread_selfcounts) or a "
                             "process (proc_pid_rusage) until it lets them go";
    else if (s->passed_rc != 0 && s->passed_rc != DK_EPERM)
        s->caps.privileges = "instructions and cycles of a thread (thread_selfcounts) or a "
                             "process (proc_pid_rusage), which need none; kperf was passed over "
                             "for another reason than privileges (see why)";
    const char *fallback = "; using selfcounts: instructions and cycles of the calling "
                           "thread only";
    if (s->passed_rc == DK_EPERM)
        snprintf(buf, size,
                 "%s; as root (or with the com.apple.private.kernel.kpc entitlement) kperf "
                 "would count every event of the %s database",
                 fallback, s->db.name);
    else if (s->passed_rc == DK_EBUSY)
        snprintf(buf, size,
                 "; another client holds the hardware counters, usually powermetrics, "
                 "Instruments or another kperf client: stop it and kperf will count every "
                 "event of the %s database%s until then",
                 s->db.name, fallback);
    else if (s->passed_rc == DK_ECPU)
        snprintf(buf, size,
                 "; kperf needs an event table for this CPU (libdkperf has them for Apple "
                 "M1 to M5 and Intel)%s",
                 fallback);
    else if (strcmp(s->db.name, "selfcounts") == 0)
        snprintf(buf, size,
                 "%s; without kperfdata's event database only these two fixed counters are "
                 "listed",
                 fallback);
    else
        snprintf(buf, size, "%s", fallback);
}

const dk__backend dk__backend_selfcounts = {
    .version = DK__BACKEND_VERSION,
    .name = "selfcounts",
    .uses_framework_root = true,
    .explain = sc_explain,
    .open = sc_open,
    .acquire = sc_acquire,
    .release = sc_release,
    .close = sc_close,
    .process_cpi = sc_process_cpi,
    .thread_open = sc_thread_open,
    .thread_start = sc_thread_start,
    .thread_stop = sc_thread_stop,
    .thread_close = sc_thread_close,
    .thread_perf_levels = sc_perf_levels,
    .group_open = sc_group_open,
    .group_start = dk__rusage_group_start,
    .group_stop = dk__rusage_group_stop,
    .group_read = dk__rusage_group_read,
    .group_close = dk__rusage_group_close,
    .group_read_levels = dk__rusage_group_read_levels,
};
