/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_sample.c - sampling on the kperf backend: PMIs of configurable
 * counters (kpc_set_period, kpc_set_actionid) and kperf timers, whose
 * samples the kernel logs as kdebug records that are read back with
 * sysctl(CTL_KERN, KERN_KDEBUG, ...) and decoded in kperf_sample_drain.c.
 * This file sets sampling up and tears it down; the state both share is
 * in kperf_sample_state.h.
 *
 * Everything below follows XNU's source (xnu-11417.121.6; the call
 * sequences of Apple's tests/cpu_counters/kpc_tests.c and tests/ktrace/
 * kperf_tests.c, osfmk/kperf/action.c, bsd/kern/kdebug.c). It has been run
 * against the simulated frameworks of tests/sim only, never on Apple
 * hardware: tests/hardware/hw_record.sh is the check for a real Mac.
 *
 * One kperf action per event (action i + 1 for event i), so a sample's
 * action id names its event. Samplers: TH_INFO (pid, tid), USTACK for
 * call chains, PMC_THREAD for DK_SAMPLE_READ. A process is named (COMM,
 * proc_pidinfo PROC_PIDTBSDINFO) before its first sample, and its exit is
 * XNU's BSD_PROC_EXIT record (EXIT, with its wait status), let through by
 * the typefilter with kperf's class; an exec is TRACE_STRING_EXEC (a new
 * COMM, the maps read again), and a pid that exited is named anew when a
 * new process takes it. Tracing is exclusive and
 * system-wide: the sampling owns ktrace from open to close, and every step
 * taken is undone on every exit path (teardown).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __APPLE__
#include <pthread.h>
#else
#include <sys/syscall.h>
#endif

#include "backend/darwin/kpep_common.h"
#include "backend/kperf/kperf_sample_state.h"

#define DEFAULT_TIMER_NS 1000000u /* 1 kHz */

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

int dk__ks_trace_fail(const char *what, int e)
{
    if (e == EPERM || e == EACCES)
        return dk__fail_os(DK_EPERM, e,
                           "%s was refused: sampling on macOS needs root, because kperf's and "
                           "kdebug's sysctls may be configured only by root or by the process "
                           "that owns tracing (ktrace_configure, bsd/kern/kern_ktrace.c); run "
                           "with sudo",
                           what);
    if (e == EBUSY)
        return dk__fail_os(DK_EBUSY, e,
                           "%s: another tool owns tracing (Instruments, ktrace, fs_usage, or "
                           "another profiler); tracing is exclusive, so quit it or wait for it "
                           "to finish, then try again",
                           what);
    return dk__fail_os(DK_EOS, e, "%s failed", what);
}

static int kperf_call(const char *what, int rc)
{
    return rc == 0 ? 0 : dk__ks_trace_fail(what, dk__kpc_errno(rc));
}

int dk__ks_kdebug(const ksamp *k, int op, int value, bool with_value, void *oldp, size_t *oldlen)
{
    int mib[4] = {CTL_KERN, KERN_KDEBUG, op, value};
    size_t zero = 0;
    errno = 0;
    int r =
        k->ls->sysctl(mib, with_value ? 4u : 3u, oldp, oldlen != NULL ? oldlen : &zero, NULL, 0);
    return r == 0 ? 0 : (errno != 0 ? errno : EIO);
}

static int kdebug_call(const ksamp *k, const char *what, int op, int value, bool with_value,
                       void *oldp, size_t *oldlen)
{
    int e = dk__ks_kdebug(k, op, value, with_value, oldp, oldlen);
    return e == 0 ? 0 : dk__ks_trace_fail(what, e);
}

/* ------------------------------------------------------------------------ */
/* Open and teardown                                                         */
/* ------------------------------------------------------------------------ */

static void free_ksamp(ksamp *k)
{
    if (k == NULL)
        return;
    free(k->buf);
    free(k->slots);
    free(k->maps);
    free(k->named);
    pthread_mutex_destroy(&k->state_lock);
    free(k);
}

/* One undo step, tried twice (what it leaves armed is system-wide and
 * outlives this process: the next tracing tool has to reset it); rc keeps
 * the first failure. */
#define UNDO(rc, expr)   \
    do {                 \
        int r_ = (expr); \
        if (r_ != 0)     \
            r_ = (expr); \
        if ((rc) == 0)   \
            (rc) = r_;   \
    } while (0)

/* DK_SAMPLE_READ logs the sampled thread's counters (PMC_THREAD), which
 * kperf_kpc_thread_sample reads with kpc_get_curthread_counters: zeros
 * unless thread counting is on for the classes counting. */
static bool thread_counts(const dk_sampling *p) { return (p->opts.record & DK_SAMPLE_READ) != 0; }

/* Undo what open did, in reverse, whatever fails on the way: each step is
 * independent, and the first failure is the one reported. */
static int teardown(dk_sampling *p, ksamp *k)
{
    dk_sampler *s = p->sampler;
    const dk_kperf_vtable *kp = k->kp;
    int rc = 0;
    if (k->counting)
        UNDO(rc, dk__kperf_prog_stop(s, k->prog, thread_counts(p)));
    if (k->sampling)
        UNDO(rc,
             kperf_call("stopping kperf sampling (kperf_sample_set(0))", kp->kperf_sample_set(0)));
    if (k->enabled)
        UNDO(rc, kdebug_call(k, "disabling the trace buffer (KERN_KDENABLE 0)", KERN_KDENABLE, 0,
                             true, NULL, NULL));
    if (k->periods) {
        uint64_t per[KPC_MAX_COUNTERS] = {0};
        uint32_t act[KPC_MAX_COUNTERS] = {0};
        UNDO(rc, kperf_call("clearing the PMI action ids (kpc_set_actionid)",
                            kp->kpc_set_actionid(KPC_CLASS_CONFIGURABLE_MASK, act)));
        UNDO(rc, kperf_call("clearing the PMI periods (kpc_set_period)",
                            kp->kpc_set_period(KPC_CLASS_CONFIGURABLE_MASK, per)));
    }
    if (k->prog != NULL)
        dk__kperf_prog_free(s, k->prog);
    if (k->kperf)
        UNDO(rc, kperf_call("resetting kperf (kperf_reset)", kp->kperf_reset()));
    if (k->kdebug)
        UNDO(rc, kdebug_call(k, "removing the trace buffer (KERN_KDREMOVE)", KERN_KDREMOVE, 0,
                             false, NULL, NULL));
    k->counting = k->sampling = k->enabled = k->periods = k->kperf = k->kdebug = false;
    k->prog = NULL;
    if (rc != 0)
        dk__fail(rc, "%s; kperf or kdebug may still be set up: `sudo ktrace reset` clears both",
                 dk_last_error());
    return rc;
}

/* ------------------------------------------------------------------------ */
/* What a tracing owner that is gone left                                    */
/* ------------------------------------------------------------------------ */

#define KDBG_BUFINIT 0x80000000u /* bsd/sys/kdebug_private.h: the buffer is set up */

/* Whether kperf has an action that samples or a timer with a period. */
static bool kperf_configured(const dk_kperf_vtable *kp)
{
    uint32_t n = 0, v = 0;
    uint64_t ticks = 0;
    if (kp->kperf_action_count_get(&n) == 0)
        for (uint32_t i = 1; i <= n && i <= KPERF_ACTION_MAX; i++)
            if (kp->kperf_action_samplers_get(i, &v) == 0 && v != 0)
                return true;
    if (kp->kperf_timer_count_get(&n) == 0)
        for (uint32_t i = 0; i < n && i < KPERF_TIMER_MAX; i++)
            if (kp->kperf_timer_period_get(i, &ticks) == 0 && ticks != 0)
                return true;
    return false;
}

void dk__kperf_find_orphans(const dk_kperf_vtable *kp, const char *root, dk__kperf_orphans *o)
{
    memset(o, 0, sizeof *o);
    const dk__libsystem *ls = NULL;
    dk__error_state saved;
    dk__error_save(&saved); /* a check that cannot be made is no error */
    int rc = dk__libsystem_load(root, &ls);
    dk__error_restore(&saved);
    if (rc != 0 || ls->sysctl == NULL)
        return;
    /* ktrace.owning_pid is the variable as it is, a dead owner's pid
     * included; KERN_KDGETBUF's bufid is ktrace_get_owning_pid(), which
     * first releases an owner that has exited (kern_ktrace.c
     * ktrace_ownership_maintenance). So: the pid first, then the bufid. */
    int was = 0;
    if (dk__sysctl_int(root, "ktrace.owning_pid", &was) != 0 || was == (int)getpid())
        was = 0;
    kbufinfo info;
    memset(&info, 0, sizeof info);
    size_t len = sizeof info;
    int mib[3] = {CTL_KERN, KERN_KDEBUG, KERN_KDGETBUF};
    if (ls->sysctl(mib, 3, &info, &len, NULL, 0) != 0 || info.bufid != -1)
        return; /* cannot tell, or a live process (maybe this one) owns tracing */

    const char **left = o->left;
    size_t n = 0;
    uint32_t on = 0;
    if (kp->kperf_sample_get(&on) == 0 && on != 0)
        left[n++] = "kperf sampling";
    if (kperf_configured(kp))
        left[n++] = "kperf's actions and timers";
    uint32_t act[KPC_MAX_COUNTERS] = {0};
    if (kp->kpc_get_actionid != NULL && kp->kpc_get_actionid(KPC_CLASS_CONFIGURABLE_MASK, act) == 0)
        for (size_t i = 0; i < KPC_MAX_COUNTERS; i++)
            if (act[i] != 0) {
                left[n++] = "the counters' PMI periods and actions";
                break;
            }
    if (info.flags & KDBG_BUFINIT)
        left[n++] = "the kdebug trace buffer";
    if (n == 0 && was == 0)
        return;
    if (n == 0)
        left[n++] = "tracing";
    o->n = n;
    o->was = was;
    o->ls = ls;
}

int dk__kperf_reset_orphans(const dk_kperf_vtable *kp, const dk__kperf_orphans *o, char *note,
                            size_t size)
{
    note[0] = '\0';
    if (o->n == 0)
        return 0;
    const dk__libsystem *ls = o->ls;
    const char *const *left = o->left;
    size_t n = o->n, len;
    int was = o->was, rc;
    int mib[3] = {CTL_KERN, KERN_KDEBUG, KERN_KDREMOVE};

    /* As teardown does it; the calls take ktrace (this process owns it
     * from the first), and the last one gives it back. */
    int r = kp->kperf_reset();
    if (r != 0 && dk__kpc_errno(r) == EBUSY)
        return 0; /* a live owner took tracing since the check: all of it is its own now */
    rc = kperf_call("resetting kperf left by a process that no longer exists (kperf_reset)", r);
    uint32_t zero_act[KPC_MAX_COUNTERS] = {0};
    uint64_t zero_per[KPC_MAX_COUNTERS] = {0};
    if (rc == 0 && kp->kpc_set_actionid != NULL)
        rc = kperf_call("clearing PMI action ids left by a process that no longer exists "
                        "(kpc_set_actionid)",
                        kp->kpc_set_actionid(KPC_CLASS_CONFIGURABLE_MASK, zero_act));
    if (rc == 0 && kp->kpc_set_period != NULL)
        rc = kperf_call("clearing PMI periods left by a process that no longer exists "
                        "(kpc_set_period)",
                        kp->kpc_set_period(KPC_CLASS_CONFIGURABLE_MASK, zero_per));
    if (rc == 0) {
        int e = 0;
        len = 0;
        errno = 0;
        if (ls->sysctl(mib, 3, NULL, &len, NULL, 0) != 0)
            e = errno != 0 ? errno : EIO;
        if (e != 0)
            rc = dk__ks_trace_fail("removing the trace buffer left by a process that no longer "
                                   "exists (KERN_KDREMOVE)",
                                   e);
    }
    if (rc != 0)
        return dk__fail(rc, "%s; `sudo ktrace reset` clears what is left", dk_last_error());

    char what[256] = "";
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(what);
        snprintf(what + used, sizeof what - used, "%s%s",
                 i == 0       ? ""
                 : i + 1 == n ? " and "
                              : ", ",
                 left[i]);
    }
    char who[64] = "a process";
    if (was > 0)
        snprintf(who, sizeof who, "process %d", was);
    snprintf(note, size, "reset %s, left set up by %s, which no longer exists", what, who);
    return 0;
}

static uint64_t own_tid(void)
{
#ifdef __APPLE__
    uint64_t tid = 0;
    pthread_threadid_np(NULL, &tid);
    return tid;
#else
    return (uint64_t)syscall(SYS_gettid);
#endif
}

/* What each event samples on, and its period. */
static int plan_events(dk_sampling *p, ksamp *k, const dk_database_event **pmi_events,
                       size_t *pmi_index)
{
    dk_sampler *s = p->sampler;
    for (size_t i = 0; i < p->n; i++) {
        const dk_sampling_event *a = &p->asked[i];
        if (p->events[i] == NULL) {
            k->kind[i] = 2;
            uint64_t ns = a->period != 0 ? a->period
                          : a->freq != 0 ? 1000000000u / a->freq
                                         : DEFAULT_TIMER_NS;
            if (ns == 0)
                return dk__fail(DK_EINVAL,
                                "timer at %llu Hz: above 1 GHz, no timer fires that "
                                "often",
                                (unsigned long long)a->freq);
            k->period[i] = ns;
            p->period[i] = ns;
            k->ntimers++;
            if (k->ntimers > KPERF_TIMER_MAX)
                return dk__fail(DK_ETOOMANY, "more than %d timers: kperf has %d", KPERF_TIMER_MAX,
                                KPERF_TIMER_MAX);
            continue;
        }
        if (a->freq != 0)
            return dk__fail(DK_ENOTSUP,
                            "%s@%llu: kpc interrupts after a number of events and has no "
                            "frequency mode; give a period (%s/1000000) or sample on the timer "
                            "(\"timer\" at a frequency)",
                            a->name, (unsigned long long)a->freq, a->name);
        const dk_database_event *ev = p->events[i];
        if (ev->fixed) {
            /* Fixed counters interrupt through monotonic, not kpc (arm64
             * kpc_set_reload_xcall touches only configurable counters;
             * x86 refuses FIXED periods): count the configurable twin. */
            const dk_database_event *twin =
                ev->fallback != NULL ? dk__database_find(&s->db, ev->fallback) : NULL;
            /* Apple's databases name no fallback for FIXED_CYCLES; the
             * configurable counter of core cycles is CORE_ACTIVE_CYCLE. */
            if (twin == NULL && strcmp(ev->name, "FIXED_CYCLES") == 0)
                twin = dk__database_find(&s->db, "CORE_ACTIVE_CYCLE");
            if (twin == NULL)
                return dk__fail(DK_ENOTSUP,
                                "%s counts on a fixed counter, which cannot interrupt through "
                                "kpc, and has no configurable equivalent: sample on the timer",
                                ev->name);
            ev = twin;
            p->events[i] = twin; /* what is sampled, for the event's name */
        }
        k->kind[i] = 1;
        k->period[i] = a->period != 0 ? a->period : DK__KPERF_SAMPLE_PERIOD;
        p->period[i] = k->period[i];
        pmi_index[k->npmi] = i;
        pmi_events[k->npmi++] = ev;
    }
    return 0;
}

/* Set the trace buffer up, kperf's actions and timers, and the PMIs. */
static int arm(dk_sampling *p, ksamp *k)
{
    dk_sampler *s = p->sampler;
    const dk_kperf_vtable *kp = k->kp;
    const dk_database_event *pmi_events[DK_MAX_EVENTS];
    size_t pmi_index[DK_MAX_EVENTS];
    int rc = plan_events(p, k, pmi_events, pmi_index);
    if (rc != 0)
        return rc;
    /* Off CPU: PET on the first timer (osfmk/kperf/pet.c: each period the
     * PET thread samples every thread of the task, blocked ones too). */
    bool pet = (p->opts.flags & DK_SAMPLING_OFF_CPU) != 0;
    if (pet) {
        k->pet_event = p->n;
        for (size_t i = 0; i < p->n && k->pet_event == p->n; i++)
            if (k->kind[i] == 2)
                k->pet_event = i;
        if (k->pet_event == p->n)
            return dk__fail(DK_ENOTSUP,
                            "off-CPU sampling on kperf runs on PET, a kperf timer that samples "
                            "every thread: add a \"timer\" event");
        if (k->pid == -1)
            return dk__fail(DK_ENOTSUP,
                            "off-CPU sampling on kperf samples every thread of the target "
                            "each period (PET): give a process, not the whole system");
    }
    if (k->npmi > 0 && (kp->kpc_set_period == NULL || kp->kpc_set_actionid == NULL))
        return dk__fail(DK_ENOTSUP,
                        "this kperf.framework lacks kpc_set_period or kpc_set_actionid, which "
                        "counter-overflow sampling needs; sample on the timer instead");

    /* The trace buffer (bsd/kern/kdebug.c): remove whatever is left, size,
     * set up, keep the kperf class only. The first call takes ktrace. */
    rc = kdebug_call(k, "setting up the trace buffer (KERN_KDREMOVE)", KERN_KDREMOVE, 0, false,
                     NULL, NULL);
    if (rc != 0)
        return rc; /* nothing taken yet */
    k->kdebug = true;
    rc = kdebug_call(k, "sizing the trace buffer (KERN_KDSETBUF)", KERN_KDSETBUF, (int)KD_EVENTS,
                     true, NULL, NULL);
    if (rc == 0)
        rc = kdebug_call(k, "allocating the trace buffer (KERN_KDSETUP)", KERN_KDSETUP, 0, false,
                         NULL, NULL);
    /* The typefilter (kdbg_copyin_typefilter): every subclass of kperf's
     * class, and DBG_BSD_PROC for the process exits (BSD_PROC_EXIT; the
     * subclass's few other records, exec and exit reasons, are skipped
     * when decoding). A kernel that refuses it gets the range filter of
     * kperf alone: samples, no exits. */
    if (rc == 0) {
        unsigned char *tf = calloc(1, TYPEFILTER_BYTES);
        if (tf == NULL)
            return dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
        for (unsigned csc = 0x2500u; csc <= 0x25ffu; csc++)
            tf[csc / 8] |= (unsigned char)(1u << (csc % 8));
        unsigned exit_csc = ID_PROC_EXIT >> 16;
        tf[exit_csc / 8] |= (unsigned char)(1u << (exit_csc % 8));
        /* DBG_TRACE (the exec records, lost events): the kernel lets it
         * through whatever the typefilter says; asked for all the same. */
        memset(&tf[DBG_TRACE_CLASS * 32], 0xff, 32);
        size_t tflen = TYPEFILTER_BYTES;
        int e = dk__ks_kdebug(k, KERN_KDSET_TYPEFILTER, 0, false, tf, &tflen);
        free(tf);
        k->exits = e == 0;
        if (e == EPERM || e == EACCES || e == EBUSY)
            rc = dk__ks_trace_fail("filtering the trace buffer (KERN_KDSET_TYPEFILTER)", e);
    }
    kd_regtype reg = {KDBG_RANGETYPE, 0x25000000u, 0x25ffffffu, 0, 0};
    size_t reglen = sizeof reg;
    if (rc == 0 && !k->exits)
        rc = kdebug_call(k, "filtering the trace buffer to kperf (KERN_KDSETREG)", KERN_KDSETREG, 0,
                         false, &reg, &reglen);
    if (rc != 0)
        return rc;

    /* kperf: one action per event, the timers, the pid filter. */
    rc = kperf_call("resetting kperf (kperf_reset)", kp->kperf_reset());
    k->kperf = rc == 0;
    uint32_t have = 0;
    if (rc == 0)
        rc = kperf_call("reading kperf's action count (kperf_action_count_get)",
                        kp->kperf_action_count_get(&have));
    /* The count never shrinks (kperf_action_set_count). */
    if (rc == 0 && have < p->n)
        rc = kperf_call("creating kperf actions (kperf_action_count_set)",
                        kp->kperf_action_count_set((uint32_t)p->n));
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        rc = kperf_call("choosing what a sample holds (kperf_action_samplers_set)",
                        kp->kperf_action_samplers_set((uint32_t)i + 1, k->samplers));
        if (rc == 0 && k->pid != -1)
            rc = kperf_call("limiting samples to the target (kperf_action_filter_set_by_pid)",
                            kp->kperf_action_filter_set_by_pid((uint32_t)i + 1, k->pid));
    }
    if (rc == 0 && k->ntimers > 0)
        rc = kperf_call("creating kperf timers (kperf_timer_count_set)",
                        kp->kperf_timer_count_set((uint32_t)k->ntimers));
    for (size_t i = 0, t = 0; i < p->n && rc == 0; i++) {
        if (k->kind[i] != 2)
            continue;
        /* Periods under the minimum (50 µs on arm64, 20 µs on x86) are
         * raised silently (kptimer.c): read back what the kernel took. */
        rc = kperf_call("setting a timer's period (kperf_timer_period_set)",
                        kp->kperf_timer_period_set((uint32_t)t,
                                                   kp->kperf_ns_to_ticks(k->period[i])));
        if (rc == 0)
            rc = kperf_call("tying a timer to its action (kperf_timer_action_set)",
                            kp->kperf_timer_action_set((uint32_t)t, (uint32_t)i + 1));
        /* PET raises the timer's period to its minimum (1 ms), read back
         * below; lightweight PET would sample threads only as they go on
         * CPU, never the blocked ones: off (kppet_set_lightweight_pet).
         * And PET leaves out the stack of a thread that has not switched
         * since its last sample but every pet_idle_rate-th time (15 by
         * default; pet.c kppet_sample_thread): 1, a stack in every sample
         * (kperf_reset puts 15 back). */
        if (rc == 0 && pet && i == k->pet_event) {
            rc = kperf_call("making the timer kperf's PET timer (kperf_timer_pet_set)",
                            kp->kperf_timer_pet_set((uint32_t)t));
            int off = 0, every = 1;
            if (rc == 0 && k->ls->sysctlbyname != NULL &&
                k->ls->sysctlbyname("kperf.lightweight_pet", NULL, NULL, &off, sizeof off) != 0 &&
                errno != ENOENT)
                rc =
                    dk__ks_trace_fail("turning lightweight PET off (kperf.lightweight_pet)", errno);
            if (rc == 0 && k->ls->sysctlbyname != NULL &&
                k->ls->sysctlbyname("kperf.pet_idle_rate", NULL, NULL, &every, sizeof every) != 0 &&
                errno != ENOENT)
                rc = dk__ks_trace_fail("asking PET for every thread's stack (kperf.pet_idle_rate)",
                                       errno);
        }
        uint64_t ticks = 0;
        if (rc == 0 && kp->kperf_timer_period_get((uint32_t)t, &ticks) == 0 && ticks != 0) {
            k->period[i] = kp->kperf_ticks_to_ns(ticks);
            p->period[i] = k->period[i]; /* the rate used (dk_sampling_event_rate) */
        }
        t++;
    }
    if (rc != 0 || k->npmi == 0)
        return rc;

    /* PMIs: program the events, then a period and an action per counter
     * (kpc_common.c kpc_set_period, kpc_set_actionid), CONFIGURABLE only. */
    size_t counter[DK_MAX_EVENTS];
    unsigned char mode[DK_MAX_EVENTS];
    char *label[DK_MAX_EVENTS];
    for (size_t j = 0; j < k->npmi; j++) {
        mode[j] = p->mode[pmi_index[j]];
        label[j] = p->label[pmi_index[j]];
    }
    rc = dk__kperf_program(s, pmi_events, k->npmi, mode, (const char *const *)label, &k->prog,
                           counter);
    if (rc != 0)
        return rc;
    uint64_t per[KPC_MAX_COUNTERS] = {0};
    uint32_t act[KPC_MAX_COUNTERS] = {0};
    for (size_t j = 0; j < k->npmi; j++) {
        size_t i = pmi_index[j];
        if (counter[j] < k->fixed_counters || counter[j] - k->fixed_counters >= k->config_counters)
            return dk__fail(DK_ENOTSUP,
                            "%s was placed on fixed counter %zu, which cannot interrupt through "
                            "kpc",
                            dk__sampling_label(p, i), counter[j]);
        size_t c = counter[j] - k->fixed_counters;
        k->counter[i] = counter[j];
        per[c] = k->period[i];
        act[c] = (uint32_t)i + 1;
    }
    k->periods = true;
    rc = kperf_call("setting the PMI periods (kpc_set_period)",
                    kp->kpc_set_period(KPC_CLASS_CONFIGURABLE_MASK, per));
    if (rc == 0)
        rc = kperf_call("tying counters to kperf actions (kpc_set_actionid)",
                        kp->kpc_set_actionid(KPC_CLASS_CONFIGURABLE_MASK, act));
    return rc;
}

int dk__kperf_sampling_open(dk_sampling *p)
{
    dk_sampler *s = p->sampler;
    const dk_sampling_options *o = &p->opts;
    /* kperf has no exec trigger: with DK_SAMPLING_ENABLE_ON_EXEC the core
     * starts at once, which for a child held before its exec (as dkperf
     * record holds it) adds only the instructions between its release and
     * its exec. DK_SAMPLING_INHERIT: the pid filter covers every thread of
     * the process, never its children (other pids). */
    if (o->scope == DK_SCOPE_THREAD && o->pid != 0)
        return dk__fail(DK_ENOTSUP,
                        "kperf filters samples by process, not by thread: sample the process "
                        "(DK_SCOPE_PROCESS) and keep the thread's samples");
    ksamp *k = calloc(1, sizeof *k);
    if (k == NULL)
        return dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
    pthread_mutex_init(&k->state_lock, NULL);
    const char *root;
    dk__kperf_parts(s, &k->kp, &root, &k->fixed_counters, &k->config_counters);
    int rc = dk__libsystem_load(root, &k->ls);
    if (rc != 0)
        goto fail;
    if (k->ls->sysctl == NULL) {
        rc = dk__fail(DK_ENOTSUP, "sysctl is missing from libSystem: the kdebug trace buffer, "
                                  "where kperf's samples arrive, cannot be read");
        goto fail;
    }
    k->buf = calloc(READ_EVENTS, sizeof *k->buf);
    k->slots = calloc(SLOTS, sizeof *k->slots);
    if (k->buf == NULL || k->slots == NULL) {
        rc = dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
        goto fail;
    }
    k->pid = o->scope == DK_SCOPE_SYSTEM ? -1 : o->pid != 0 ? o->pid : (int)getpid();
    k->tid = o->scope == DK_SCOPE_THREAD ? own_tid() : 0;
    k->samplers = KPERF_SAMPLER_TH_INFO;
    if (o->record & (DK_SAMPLE_CALLCHAIN | DK_SAMPLE_IP))
        k->samplers |= KPERF_SAMPLER_USTACK;
    if (o->record & DK_SAMPLE_READ)
        k->samplers |= KPERF_SAMPLER_PMC_THREAD;
    p->impl = k;
    rc = arm(p, k);
    if (rc != 0) {
        /* The first failure is the news; one while undoing is added. */
        char first[1024];
        dk__strlcpy(first, dk_last_error(), sizeof first);
        if (teardown(p, k) != 0) {
            char second[1024];
            dk__strlcpy(second, dk_last_error(), sizeof second);
            dk__fail(rc, "%s; then, undoing it: %s", first, second);
        } else {
            dk__fail(rc, "%s", first);
        }
        goto fail;
    }
    return 0;
fail:
    p->impl = NULL;
    free_ksamp(k);
    return rc;
}

/* Now on the trace records' clock, in ns: mach_absolute_time's
 * (CLOCK_UPTIME_RAW); the simulated frameworks' is CLOCK_MONOTONIC. */
static uint64_t records_now_ns(void)
{
#ifdef CLOCK_UPTIME_RAW
    return clock_gettime_nsec_np(CLOCK_UPTIME_RAW);
#else
    return dk__now_ns();
#endif
}

int dk__kperf_sampling_start(dk_sampling *p)
{
    ksamp *k = p->impl;
    pthread_mutex_lock(&k->state_lock);
    int rc = kdebug_call(k, "enabling the trace buffer (KERN_KDENABLE)", KERN_KDENABLE,
                         KDEBUG_ENABLE_TRACE, true, NULL, NULL);
    k->enabled = rc == 0;
    /* The time stopped is no PET period: every fire of this start comes
     * after now (kptimer_start arms the PET timer a period on). */
    if (rc == 0) {
        uint64_t now = records_now_ns();
        if (k->pet_nstarts == PET_STARTS) {
            k->pet_blind_ns = now;
            k->pet_nstarts = 0;
        }
        k->pet_starts[k->pet_nstarts++] = now;
    }
    pthread_mutex_unlock(&k->state_lock);
    if (rc != 0)
        return rc;
    rc = kperf_call("starting kperf sampling (kperf_sample_set(1))", k->kp->kperf_sample_set(1));
    if (rc == 0) {
        k->sampling = true;
        if (k->prog != NULL) {
            rc = dk__kperf_prog_start(p->sampler, k->prog, thread_counts(p));
            k->counting = rc == 0;
        }
    }
    if (rc != 0)
        (void)dk__kperf_sampling_stop(p);
    return rc;
}

int dk__kperf_sampling_stop(dk_sampling *p)
{
    ksamp *k = p->impl;
    int rc = 0, r;
    if (k->counting) {
        rc = dk__kperf_prog_stop(p->sampler, k->prog, thread_counts(p));
        k->counting = false;
    }
    if (k->sampling) {
        r = kperf_call("stopping kperf sampling (kperf_sample_set(0))", k->kp->kperf_sample_set(0));
        rc = rc != 0 ? rc : r;
        k->sampling = false;
    }
    /* Records already logged stay readable until the buffer is removed. */
    pthread_mutex_lock(&k->state_lock);
    if (k->enabled) {
        r = kdebug_call(k, "disabling the trace buffer (KERN_KDENABLE 0)", KERN_KDENABLE, 0, true,
                        NULL, NULL);
        rc = rc != 0 ? rc : r;
        k->enabled = false;
    }
    pthread_mutex_unlock(&k->state_lock);
    return rc;
}

void dk__kperf_sampling_close(dk_sampling *p)
{
    ksamp *k = p->impl;
    if (k == NULL)
        return;
    (void)teardown(p, k);
    free_ksamp(k);
    p->impl = NULL;
}
