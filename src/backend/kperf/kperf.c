/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf.c - the privileged Darwin backend: Apple's kperf and kperfdata
 * frameworks, every event of the CPU's database.
 *
 * The KPC state is system-wide: force_all_ctrs, the counting classes and
 * the configurable counters' registers. Samplers, thread samplers and
 * system groups take and share it through the arbiter of their framework
 * image (kperf_arbiter.h); kperf_config.c configures events with
 * kperfdata, and this file opens the backend's objects and reads the
 * counters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/darwin/darwin_group.h"
#include "backend/darwin/kpep_common.h"
#include "backend/kperf/kperf_internal.h"
#include "backend/kperf/kperf_sample.h"
#include "events/tables.h"
#include "sys/libsystem.h"

/* A system-wide group: a configuration read from the per-CPU counters. */
typedef struct kgroup {
    kthread cfg;
    const dk_database_event *events[DK_MAX_EVENTS]; /* the supported ones */
    unsigned char mode[DK_MAX_EVENTS];
    char *label[DK_MAX_EVENTS];       /* borrowed from the group */
    const char *asked[DK_MAX_EVENTS]; /* borrowed from the group */
    size_t slot[DK_MAX_EVENTS];       /* group index -> position in events, or SIZE_MAX */
    size_t n;
    size_t ncpu;
    size_t per_cpu; /* counters in each CPU's block */
    uint64_t *buf;
    uint64_t base[DK_MAX_EVENTS]; /* totals at start */
    uint64_t frozen[DK_MAX_EVENTS];
    uint64_t *cbase;     /* per CPU: [c * n + i], as base */
    uint64_t *cfrozen;   /* per CPU, as frozen */
    uint64_t *cnow;      /* per CPU, the last read */
    uint64_t enabled_ns; /* ns enabled before the last start (while stopped: all of them) */
    uint64_t started_ns; /* the last start, on dk__now_ns */
} kgroup;

/* ------------------------------------------------------------------------ */
/* Session                                                                   */
/* ------------------------------------------------------------------------ */

static void free_session(session *k)
{
    if (k == NULL)
        return;
    if (k->kdb != NULL)
        k->kd->kpep_db_free(k->kdb);
    free(k->handles);
    free(k->flush);
    free(k);
}

/* A count kpc answered is input: 0 is how its calls fail, and every buffer
 * sized from it must cover what is read into it. */
static int check_count(const char *call, uint32_t classes, uint32_t n, uint32_t min, uint32_t max)
{
    if (n >= min && n <= max)
        return 0;
    if (n == 0)
        return dk__fail(DK_EOS,
                        "%s(0x%x) returned 0: kpc could not tell how many counters or config "
                        "registers this CPU has (the call failed, or its sysctl is missing)",
                        call, classes);
    return dk__fail(DK_EOS, "%s(0x%x) returned %u, outside the %u..%u libdkperf can use", call,
                    classes, n, min, max);
}

static int build_database(dk_sampler *s, session *k)
{
    /* Counter counts from the running kernel, not from the database. */
    uint32_t answers[3] = {k->kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK),
                           k->kp->kpc_get_counter_count(KPC_CLASS_CONFIGURABLE_MASK),
                           k->kp->kpc_get_counter_count(KPC_CLASS_POWER_MASK)};
    int rc = check_count("kpc_get_counter_count", KPC_CLASS_FIXED_MASK, answers[0], 1,
                         KPC_MAX_COUNTERS - 1);
    if (rc == 0)
        rc = check_count("kpc_get_counter_count", KPC_CLASS_CONFIGURABLE_MASK, answers[1], 1,
                         KPC_MAX_COUNTERS - answers[0]);
    /* Power counters may be none; they are never read through buffers. */
    if (rc == 0 && answers[2] > KPC_MAX_COUNTERS)
        rc = check_count("kpc_get_counter_count", KPC_CLASS_POWER_MASK, answers[2], 0,
                         KPC_MAX_COUNTERS);
    if (rc != 0)
        return rc;
    /* kpc's POWER class is disjoint from CONFIGURABLE and empty unless a
     * power-manager kext registered one (osfmk/kern/kpc_common.c): the
     * counters the power manager shares are what the database says. */
    size_t counters[3] = {answers[0], answers[1], k->kdb->power_counter_count};
    k->shape.fixed_counters = answers[0];
    k->config_counters = answers[1];
    s->caps.per_thread = true;
    s->caps.per_process = true; /* proc_pid_rusage needs no kpc */
    s->caps.system_wide = true;
    s->caps.all_events = true;
    s->caps.counters = counters[0] + counters[1];
    switch (k->kp->kpc_pmu_version()) {
    case KPC_PMU_ARM_APPLE:
        s->caps.pmu = "Apple ARM PMU (kpc)";
        break;
    case KPC_PMU_INTEL_V3:
        s->caps.pmu = "Intel architectural PMU v3 (kpc)";
        break;
    case KPC_PMU_INTEL_V2:
        s->caps.pmu = "Intel architectural PMU v2 (kpc)";
        break;
    case KPC_PMU_ARM_V2:
        s->caps.pmu = "ARMv8 PMU (kpc)";
        break;
    default:
        s->caps.pmu = "unknown PMU (kpc)";
    }
    s->caps.privileges = "root or the com.apple.private.kernel.kpc entitlement: every event, per "
                         "thread and on every CPU";
    /* kpc interrupts after a number of events (kpc_set_period): no frequency. */
    s->caps.sampling = true;
    /* kdebug marks a wrap with TRACE_LOST_EVENTS, not how many it dropped. */
    s->caps.lost_means = "times kdebug's trace buffer wrapped before it was read, each dropping "
                         "a storage unit of 2048 records or more (a lower rate, fewer CPUs or "
                         "another tracing client writing less loses fewer)";
    s->caps.sample_period = DK__KPERF_SAMPLE_PERIOD;
    s->caps.sample_event = "cycles";
    s->caps.stat_events = "instructions,cycles,branches,branch-misses";
    /* proc_pid_rusage: a process's instructions and cycles, read before it is reaped */
    return dk__kpep_view(s, k->kdb, counters, &k->handles);
}

static int kperf_open(dk_sampler *s, const dk_sampler_options *opts)
{
    session *k = calloc(1, sizeof *k);
    if (k == NULL)
        return dk__fail(DK_ENOMEM, "opening the kperf backend: out of memory");
    dk__strlcpy(k->root, dk_framework_root(opts->framework_root), sizeof k->root);
    int rc = dk_kperf_load(opts->framework_root, &k->kp, NULL);
    if (rc == 0)
        rc = dk_kperfdata_load(opts->framework_root, &k->kd, NULL);
    if (rc != 0)
        goto fail;
    k->arb = dk__arbiter_for(k->kp);
    if (k->arb == NULL) {
        rc = dk__fail(DK_ENOMEM, "opening the kperf backend: out of memory");
        goto fail;
    }

    int code = k->kd->kpep_db_create(NULL, &k->kdb);
    if (code != 0 || k->kdb == NULL) {
        k->kdb = NULL;
        if (code == KPEP_CONFIG_ERROR_DB_NOT_FOUND ||
            code == KPEP_CONFIG_ERROR_CUR_SYSTEM_UNKNOWN) {
            char cpu[128] = "";
            if (k->kp->kpc_cpu_string(cpu, sizeof cpu) < 0)
                cpu[0] = '\0';
            rc = dk__fail_kpep(DK_ECPU, code,
                               "kperfdata has no event database for this CPU%s%s (it looks for "
                               "cpu_<cputype>_<cpusubtype>_<cpufamily>.plist in $KPEP_DB_PATH, "
                               "/usr/local/share/kpep/ and /usr/share/kpep/)",
                               cpu[0] ? " " : "", cpu);
        } else {
            rc = dk__fail_kpep_call("kpep_db_create", code);
        }
        goto fail;
    }
    s->cpu = dk__cpu_from_db_name(k->kdb->name);
    if (s->cpu == DK_CPU_UNKNOWN) {
        rc = dk__fail(DK_ECPU,
                      "the event database \"%s\" (%s, %s) that kperfdata found for this CPU in "
                      "$KPEP_DB_PATH, /usr/local/share/kpep/ or /usr/share/kpep/ names a CPU "
                      "libdkperf has no event table for",
                      k->kdb->name ? k->kdb->name : "",
                      k->kdb->marketing_name ? k->kdb->marketing_name : "",
                      k->kdb->cpu_id ? k->kdb->cpu_id : "no cpu id");
        goto fail;
    }
    rc = dk__kpep_check_stride(k->kd, k->kdb);
    if (rc != 0)
        goto fail;
    /* Apple chips have no fixed-counter config words, Intel one. */
    k->shape.fixed_words = k->kp->kpc_get_config_count(KPC_CLASS_FIXED_MASK);
    k->shape.config_words = k->kp->kpc_get_config_count(KPC_CLASS_CONFIGURABLE_MASK);
    rc = check_count("kpc_get_config_count", KPC_CLASS_FIXED_MASK, k->shape.fixed_words, 0, 4);
    if (rc == 0)
        rc = check_count("kpc_get_config_count", KPC_CLASS_CONFIGURABLE_MASK, k->shape.config_words,
                         1, DK__KPC_CONFIG_MAX);
    if (rc != 0)
        goto fail;
    /* kpc_get_cpu_counters(all CPUs) writes one block per CPU the kernel
     * counts (hw.ncpu). */
    k->flush_len = dk__darwin_ncpu(k->root) * KPC_MAX_COUNTERS;
    k->flush = calloc(k->flush_len, sizeof *k->flush);
    if (k->flush == NULL) {
        rc = dk__fail(DK_ENOMEM, "opening the kperf backend: out of memory");
        goto fail;
    }
    s->impl = k;
    rc = build_database(s, k);
    if (rc != 0) {
        dk__kpep_view_free(s);
        s->impl = NULL;
        goto fail;
    }
    return 0;
fail:
    free_session(k);
    return rc;
}

/* Taking the counters also clears what a killed tracing owner left on
 * them (see dk__kperf_reset_orphans), so that nothing counts with PMIs
 * armed. What is left is found first, and reset only once the counters
 * are held: a sampler that cannot take them (a live holder; dk_sampler_open
 * then tries the next backend, and this sampler and its note are gone)
 * resets nothing it could not tell of. */
static int kperf_acquire(dk_sampler *s)
{
    session *k = s->impl;
    dk__kperf_orphans left;
    dk__kperf_find_orphans(k->kp, k->root, &left);
    int rc = dk__arbiter_acquire(k->arb, k->kp);
    if (rc != 0)
        return rc;
    rc = dk__kperf_reset_orphans(k->kp, &left, s->notes, sizeof s->notes);
    if (rc != 0) {
        char why[1024];
        dk__strlcpy(why, dk_last_error(), sizeof why);
        if (dk__arbiter_release(k->arb, k->kp) != 0)
            return dk__fail(rc, "%s; then, giving the counters back: %s", why, dk_last_error());
        dk__fail(rc, "%s", why);
    }
    return rc;
}

/* Reading force_all_ctrs needs the privileges taking it does. */
static int kperf_check(dk_sampler *s)
{
    session *k = s->impl;
    int now = 0;
    int r = k->kp->kpc_force_all_ctrs_get(&now);
    if (r != 0)
        return dk__kpc_fail("reading kpc.force_all_ctrs (kpc_force_all_ctrs_get)", r);
    /* The kernel lets go of force_all_ctrs when its task ends: 1 that this
     * process did not set means a live client has the counters. */
    if (now != 0 && !dk__arbiter_holding(k->arb))
        return dk__fail(DK_EBUSY,
                        "the counters are held by another client (force_all_ctrs is 1): "
                        "usually powermetrics, Instruments or another kperf client; stop it, "
                        "then try again");
    return 0;
}

static int kperf_release(dk_sampler *s)
{
    session *k = s->impl;
    return dk__arbiter_release(k->arb, k->kp);
}

static int kperf_process_cpi(dk_sampler *s, int pid, uint64_t *instructions, uint64_t *cycles)
{
    session *k = s->impl;
    return dk__proc_cpi(k->root, pid, instructions, cycles);
}

static void kperf_close(dk_sampler *s)
{
    dk__kpep_view_free(s);
    free_session(s->impl);
}

/* ------------------------------------------------------------------------ */
/* Thread samplers                                                           */
/* ------------------------------------------------------------------------ */

static int kperf_read(dk_thread *t, uint64_t *values, dk_reading *info)
{
    (void)info; /* kpc never time-shares counters */
    kthread *kt = t->impl;
    uint64_t buf[KPC_MAX_COUNTERS];
    int rc = kt->kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, buf);
    if (DK__UNLIKELY(rc != 0))
        return dk__kpc_fail("reading the thread's counters (kpc_get_thread_counters)", rc);
    for (size_t i = 0; i < t->n; i++)
        values[i] = buf[kt->index[i]];
    return 0;
}

static int kperf_thread_open(dk_thread *t)
{
    session *k = t->sampler->impl;
    kthread *kt = calloc(1, sizeof *kt);
    if (kt == NULL)
        return dk__fail(DK_ENOMEM, "dk_thread_open: out of memory");
    request q = {t->sampler,
                 t->events,
                 t->n,
                 t->mode,
                 (const char *const *)t->label,
                 (const char *const *)t->asked};
    int rc = dk__kperf_setup(&q, k, kt);
    if (rc != 0) {
        free(kt);
        return rc;
    }
    t->impl = kt;
    t->read = kperf_read;
    return 0;
}

/* Count kt's classes (and per thread when per_thread). Caller holds the
 * arbiter lock. */
static int start_counting(session *k, kthread *kt, bool per_thread)
{
    int rc = dk__arbiter_start(k->arb, k->kp, &k->shape, &kt->claim,
                               kt->classes | KPC_CLASS_FIXED_MASK, per_thread);
    if (rc == 0 && kt->claim.reprogrammed && (kt->classes & KPC_CLASS_CONFIGURABLE_MASK)) {
        /* Configurable counters can read stale right after a reconfigure; an
         * all-CPU read settles them. Best effort. */
        (void)k->kp->kpc_get_cpu_counters(true, KPC_CLASS_CONFIGURABLE_MASK, NULL, k->flush);
        kt->claim.reprogrammed = false;
    }
    return rc;
}

static int stop_counting(session *k, kthread *kt, bool per_thread)
{
    return dk__arbiter_stop(k->arb, k->kp, kt->classes | KPC_CLASS_FIXED_MASK, per_thread);
}

static int kperf_thread_start(dk_thread *t)
{
    session *k = t->sampler->impl;
    dk__arbiter_lock(k->arb);
    int rc = start_counting(k, t->impl, true);
    dk__arbiter_unlock(k->arb);
    return rc;
}

static int kperf_thread_stop(dk_thread *t)
{
    session *k = t->sampler->impl;
    dk__arbiter_lock(k->arb);
    int rc = stop_counting(k, t->impl, true);
    dk__arbiter_unlock(k->arb);
    return rc;
}

static void kperf_thread_close(dk_thread *t)
{
    session *k = t->sampler->impl;
    kthread *kt = t->impl;
    dk__kperf_unprogram(k, kt);
    k->kd->kpep_config_free(kt->cfg);
    free(kt);
}

/* ------------------------------------------------------------------------ */
/* Groups: a process (proc_pid_rusage) or every CPU (per-CPU counters)       */
/* ------------------------------------------------------------------------ */

/* Sum each event over every CPU's block of counters; each CPU's values
 * are left in kg->cnow. */
static int read_cpus(session *k, kgroup *kg, uint64_t *sums)
{
    uint32_t classes = kg->cfg.classes | KPC_CLASS_FIXED_MASK;
    int r = k->kp->kpc_get_cpu_counters(true, classes, NULL, kg->buf);
    if (r != 0)
        return dk__kpc_fail("reading the per-CPU counters (kpc_get_cpu_counters)", r);
    for (size_t i = 0; i < kg->n; i++) {
        uint64_t sum = 0;
        for (size_t c = 0; c < kg->ncpu; c++) {
            uint64_t v = kg->buf[c * kg->per_cpu + kg->cfg.index[i]];
            kg->cnow[c * kg->n + i] = v;
            sum += v;
        }
        sums[i] = sum;
    }
    return 0;
}

static int kperf_group_open(dk_group *g)
{
    session *k = g->sampler->impl;
    if (g->scope == DK_SCOPE_THREAD)
        return dk__darwin_thread_scope(g);
    if (g->scope == DK_SCOPE_PROCESS)
        return dk__rusage_group_open(
            g, k->root,
            "cannot be counted for another process: macOS gives another process's instructions "
            "and cycles only; count every CPU instead while it runs (the system scope, "
            "which needs root)");

    kgroup *kg = calloc(1, sizeof *kg);
    if (kg == NULL)
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    for (size_t i = 0; i < g->n; i++) {
        kg->slot[i] = SIZE_MAX;
        if (g->supported[i]) {
            kg->slot[i] = kg->n;
            kg->mode[kg->n] = g->mode[i];
            kg->label[kg->n] = g->label[i];
            kg->asked[kg->n] = g->asked[i];
            kg->events[kg->n++] = g->events[i];
        }
    }
    request q = {g->sampler, kg->events, kg->n, kg->mode, (const char *const *)kg->label,
                 kg->asked};
    int rc = kg->n > 0 ? dk__kperf_setup(&q, k, &kg->cfg) : 0;
    if (rc != 0) {
        free(kg);
        return rc;
    }
    kg->ncpu = dk__darwin_ncpu(k->root);
    uint32_t classes = (kg->cfg.classes | KPC_CLASS_FIXED_MASK) &
                       (KPC_CLASS_FIXED_MASK | KPC_CLASS_CONFIGURABLE_MASK);
    uint32_t per_cpu = k->kp->kpc_get_counter_count(classes);
    /* kpc_get_cpu_counters writes per_cpu values per CPU into kg->buf, and
     * every event's index must fall inside one CPU's block. */
    size_t needed = 1;
    for (size_t i = 0; i < kg->n; i++)
        if (kg->cfg.index[i] + 1 > needed)
            needed = kg->cfg.index[i] + 1;
    uint32_t expected = k->shape.fixed_counters +
                        ((classes & KPC_CLASS_CONFIGURABLE_MASK) ? k->config_counters : 0);
    rc = check_count("kpc_get_counter_count", classes, per_cpu, (uint32_t)needed, KPC_MAX_COUNTERS);
    if (rc == 0 && per_cpu != expected)
        rc = dk__fail(DK_EOS,
                      "kpc_get_counter_count(0x%x) returned %u, but the counts kpc gave when the "
                      "sampler opened add up to %u",
                      classes, per_cpu, expected);
    if (rc == 0) {
        kg->per_cpu = per_cpu;
        kg->buf = calloc(kg->ncpu * kg->per_cpu, sizeof *kg->buf);
        size_t cells = kg->ncpu * (kg->n > 0 ? kg->n : 1);
        kg->cbase = calloc(cells, sizeof *kg->cbase);
        kg->cfrozen = calloc(cells, sizeof *kg->cfrozen);
        kg->cnow = calloc(cells, sizeof *kg->cnow);
        if (kg->buf == NULL || kg->cbase == NULL || kg->cfrozen == NULL || kg->cnow == NULL)
            rc = dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    }
    if (rc == 0)
        rc = dk__darwin_describe_cpus(g, k->root, kg->ncpu);
    if (rc != 0) {
        if (kg->n > 0) {
            dk__kperf_unprogram(k, &kg->cfg);
            k->kd->kpep_config_free(kg->cfg.cfg);
        }
        free(g->cpus);
        g->cpus = NULL;
        g->ncpus = 0;
        free(kg->buf);
        free(kg->cbase);
        free(kg->cfrozen);
        free(kg->cnow);
        free(kg);
        return rc;
    }
    /* Events mapped to a fallback keep the group's view in step. */
    for (size_t i = 0; i < g->n; i++)
        if (kg->slot[i] != SIZE_MAX)
            g->events[i] = kg->events[kg->slot[i]];
    snprintf(g->scope_text, sizeof g->scope_text, "every CPU (%zu)", kg->ncpu);
    g->impl = kg;
    return 0;
}

/* The ns the group has been enabled: kpc never time-shares its
 * counters, so they ran all that time, on every CPU alike. */
static uint64_t enabled_ns(const dk_group *g, const kgroup *kg)
{
    uint64_t t = kg->enabled_ns, now = g->running ? dk__now_ns() : 0;
    return t + (now > kg->started_ns ? now - kg->started_ns : 0);
}

/* t as both times of each counted event's reading; 0 (never started)
 * leaves info as it is, which the core marks counted. */
static void group_times(const dk_group *g, const kgroup *kg, uint64_t t, dk_reading *info)
{
    for (size_t i = 0; t > 0 && i < g->n; i++)
        if (kg->slot[i] != SIZE_MAX) {
            info[i].time_enabled = info[i].time_running = t;
            info[i].counted = true;
        }
}

static int kperf_group_start(dk_group *g)
{
    if (g->scope == DK_SCOPE_PROCESS)
        return dk__rusage_group_start(g);
    session *k = g->sampler->impl;
    kgroup *kg = g->impl;
    if (kg->n == 0)
        return 0;
    dk__arbiter_lock(k->arb);
    int rc = start_counting(k, &kg->cfg, false);
    uint64_t now[DK_MAX_EVENTS];
    if (rc == 0 && (rc = read_cpus(k, kg, now)) != 0)
        (void)stop_counting(k, &kg->cfg, false); /* not started after all */
    dk__arbiter_unlock(k->arb);
    if (rc == 0) {
        for (size_t i = 0; i < kg->n; i++)
            kg->base[i] = now[i] - kg->frozen[i];
        for (size_t j = 0; j < kg->ncpu * kg->n; j++)
            kg->cbase[j] = kg->cnow[j] - kg->cfrozen[j];
        kg->started_ns = dk__now_ns();
    }
    return rc;
}

static int kperf_group_stop(dk_group *g)
{
    if (g->scope == DK_SCOPE_PROCESS)
        return dk__rusage_group_stop(g);
    session *k = g->sampler->impl;
    kgroup *kg = g->impl;
    if (kg->n == 0)
        return 0;
    uint64_t now[DK_MAX_EVENTS];
    int rc = read_cpus(k, kg, now);
    if (rc == 0) {
        for (size_t i = 0; i < kg->n; i++)
            kg->frozen[i] = now[i] - kg->base[i];
        for (size_t j = 0; j < kg->ncpu * kg->n; j++)
            kg->cfrozen[j] = kg->cnow[j] - kg->cbase[j];
        uint64_t ns = dk__now_ns();
        kg->enabled_ns += ns > kg->started_ns ? ns - kg->started_ns : 0;
    }
    dk__arbiter_lock(k->arb);
    int rc2 = stop_counting(k, &kg->cfg, false);
    dk__arbiter_unlock(k->arb);
    return rc != 0 ? rc : rc2;
}

static int kperf_group_read(dk_group *g, uint64_t *values, dk_reading *info)
{
    if (g->scope == DK_SCOPE_PROCESS)
        return dk__rusage_group_read(g, values, info);
    session *k = g->sampler->impl;
    kgroup *kg = g->impl;
    uint64_t counts[DK_MAX_EVENTS];
    memcpy(counts, kg->frozen, sizeof counts);
    if (g->running && kg->n > 0) {
        int rc = read_cpus(k, kg, counts);
        if (rc != 0)
            return rc;
        for (size_t i = 0; i < kg->n; i++)
            counts[i] -= kg->base[i];
    }
    for (size_t i = 0; i < g->n; i++)
        values[i] = kg->slot[i] != SIZE_MAX ? counts[kg->slot[i]] : 0;
    if (info != NULL && kg->n > 0)
        group_times(g, kg, enabled_ns(g, kg), info);
    return 0;
}

static void kperf_group_close(dk_group *g)
{
    if (g->scope == DK_SCOPE_PROCESS) {
        dk__rusage_group_close(g);
        return;
    }
    session *k = g->sampler->impl;
    kgroup *kg = g->impl;
    if (kg->n > 0) {
        dk__kperf_unprogram(k, &kg->cfg);
        k->kd->kpep_config_free(kg->cfg.cfg);
    }
    free(kg->buf);
    free(kg->cbase);
    free(kg->cfrozen);
    free(kg->cnow);
    free(kg);
}

/* kpc counts every CPU over the same span and never time-shares: each
 * CPU's reading is the group's, its times kperf_group_read's. */
static int kperf_group_read_cpus(dk_group *g, uint64_t *values, dk_reading *info)
{
    session *k = g->sampler->impl;
    kgroup *kg = g->impl;
    uint64_t sums[DK_MAX_EVENTS];
    size_t cells = kg->ncpu * kg->n;
    bool live = g->running && kg->n > 0;
    int rc = live ? read_cpus(k, kg, sums) : 0;
    if (rc != 0)
        return rc;
    for (size_t c = 0; c < kg->ncpu; c++)
        for (size_t i = 0; i < g->n; i++) {
            size_t j = kg->slot[i];
            if (j == SIZE_MAX || c * kg->n + j >= cells)
                values[c * g->n + i] = 0;
            else if (live)
                values[c * g->n + i] = kg->cnow[c * kg->n + j] - kg->cbase[c * kg->n + j];
            else
                values[c * g->n + i] = kg->cfrozen[c * kg->n + j];
        }
    uint64_t t = info != NULL && kg->n > 0 ? enabled_ns(g, kg) : 0;
    for (size_t c = 0; t > 0 && c < kg->ncpu; c++)
        group_times(g, kg, t, &info[c * g->n]);
    return 0;
}

const dk__backend dk__backend_kperf = {
    .version = DK__BACKEND_VERSION,
    .name = "kperf",
    .uses_framework_root = true,
    .open = kperf_open,
    .acquire = kperf_acquire,
    .check = kperf_check,
    .release = kperf_release,
    .close = kperf_close,
    .process_cpi = kperf_process_cpi,
    .thread_open = kperf_thread_open,
    .thread_start = kperf_thread_start,
    .thread_stop = kperf_thread_stop,
    .thread_close = kperf_thread_close,
    .group_open = kperf_group_open,
    .group_start = kperf_group_start,
    .group_stop = kperf_group_stop,
    .group_read = kperf_group_read,
    .group_close = kperf_group_close,
    .group_read_cpus = kperf_group_read_cpus,
    .group_read_levels = dk__rusage_group_read_levels,
    .sampling_open = dk__kperf_sampling_open,
    .sampling_start = dk__kperf_sampling_start,
    .sampling_stop = dk__kperf_sampling_stop,
    .sampling_drain = dk__kperf_sampling_drain,
    .sampling_wait = dk__kperf_sampling_wait,
    .sampling_close = dk__kperf_sampling_close,
};

/* ------------------------------------------------------------------------ */
/* For sampling (kperf_sample.c)                                             */
/* ------------------------------------------------------------------------ */

struct dk__kperf_prog {
    kthread kt;
};

void dk__kperf_parts(dk_sampler *s, const dk_kperf_vtable **kp, const char **root,
                     uint32_t *fixed_counters, uint32_t *config_counters)
{
    session *k = s->impl;
    *kp = k->kp;
    *root = k->root;
    *fixed_counters = k->shape.fixed_counters;
    *config_counters = k->config_counters;
}

int dk__kperf_program(dk_sampler *s, const dk_database_event **events, size_t n,
                      const unsigned char *mode, const char *const *label, dk__kperf_prog **out,
                      size_t *counter)
{
    session *k = s->impl;
    dk__kperf_prog *p = calloc(1, sizeof *p);
    if (p == NULL)
        return dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
    request q = {s, events, n, mode, label, NULL};
    int rc = dk__kperf_setup(&q, k, &p->kt);
    if (rc != 0) {
        free(p);
        return rc;
    }
    for (size_t i = 0; i < n; i++)
        counter[i] = p->kt.index[i];
    *out = p;
    return 0;
}

int dk__kperf_prog_start(dk_sampler *s, dk__kperf_prog *p, bool per_thread)
{
    session *k = s->impl;
    dk__arbiter_lock(k->arb);
    int rc = start_counting(k, &p->kt, per_thread);
    dk__arbiter_unlock(k->arb);
    return rc;
}

int dk__kperf_prog_stop(dk_sampler *s, dk__kperf_prog *p, bool per_thread)
{
    session *k = s->impl;
    dk__arbiter_lock(k->arb);
    int rc = stop_counting(k, &p->kt, per_thread);
    dk__arbiter_unlock(k->arb);
    return rc;
}

void dk__kperf_prog_free(dk_sampler *s, dk__kperf_prog *p)
{
    if (p == NULL)
        return;
    session *k = s->impl;
    dk__kperf_unprogram(k, &p->kt);
    k->kd->kpep_config_free(p->kt.cfg);
    free(p);
}
