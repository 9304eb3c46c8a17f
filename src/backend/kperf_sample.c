/*
 * kperf_sample.c - sampling on the kperf backend: PMIs of configurable
 * counters (kpc_set_period, kpc_set_actionid) and kperf timers, whose
 * samples the kernel logs as kdebug records that are read back with
 * sysctl(CTL_KERN, KERN_KDEBUG, ...) and decoded here.
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
 * XNU's BSD_PROC_EXIT record (EXIT), let through by the typefilter with
 * kperf's class. Tracing is exclusive and
 * system-wide: the sampling owns ktrace from open to close, and every step
 * taken is undone on every exit path (teardown).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __APPLE__
#include <pthread.h>
#else
#include <sys/syscall.h>
#endif

#include "backend/kpep_common.h"
#include "backend/kperf_sample.h"
#include "sys/libsystem.h"

/* bsd/sys/sysctl.h, bsd/sys/kdebug_private.h */
#define CTL_KERN 1
#define KERN_KDEBUG 24
#define KERN_KDENABLE 3
#define KERN_KDSETBUF 4
#define KERN_KDGETBUF 5
#define KERN_KDSETUP 6
#define KERN_KDREMOVE 7
#define KERN_KDSETREG 8
#define KERN_KDREADTR 10
#define KERN_KDSET_TYPEFILTER 22
#define KERN_KDBUFWAIT 23
#define TYPEFILTER_BYTES 8192 /* KDBG_TYPEFILTER_BITMAP_SIZE: a bit per class:subclass */
#define KDBG_RANGETYPE 0x40000u
#define KDBG_NOWRAP 0x2u
#define KDBG_WRAPPED 0x8u
#define KDEBUG_ENABLE_TRACE 1

/* Debug ids (osfmk/kperf/buffer.h; bsd/sys/kdebug.h). */
#define ID_MASK 0xfffffffcu
#define ID_LOST 0x07020008u /* TRACE_LOST_EVENTS */
#define ID_GEN_EVENT 0x25000000u
#define ID_TI_DATA 0x25010004u
#define ID_CS_UDATA 0x25020010u
#define ID_CS_UHDR 0x25020018u
#define ID_TM_HNDLR 0x25030008u
#define ID_KPC_HNDLR 0x25060000u
#define ID_KPC_DATA_THREAD 0x25060020u
/* BSDDBG_CODE(DBG_BSD_PROC, BSD_PROC_EXIT) (bsd/sys/kdebug.h): proc_exit
 * (bsd/kern/kern_exit.c) logs it as START when a process starts to exit
 * and END when it becomes a zombie, both with (pid, p_xstat), arg5 the
 * exiting thread. */
#define ID_PROC_EXIT 0x04010004u
#define FUNC_START 1u
#define FUNC_END 2u
#define KPC_KERNEL_PC 0x1u
#define CS_VALID 0x1u
#define CS_TRUNCATED 0x10u

#define KD_EVENTS 262144u  /* trace buffer: 16 MB of 64-byte records */
#define READ_EVENTS 4096u  /* records per KERN_KDREADTR */
#define FRAMES_MAX 256     /* MAX_UCALLSTACK_FRAMES */
#define SLOTS 64           /* threads with a sample in progress */
#define PIDS_MAX 16
#define DEFAULT_PERIOD 1000000u  /* events per PMI */
#define DEFAULT_TIMER_NS 1000000u /* 1 kHz */

/* kd_buf of LP64 and arm64 (bsd/sys/kdebug_private.h), 64 bytes. */
typedef struct kd_buf {
    uint64_t timestamp;
    uint64_t arg1, arg2, arg3, arg4, arg5;
    uint32_t debugid;
    uint32_t cpuid;
    uint64_t unused;
} kd_buf;
_Static_assert(sizeof(kd_buf) == 64, "kd_buf is 64 bytes");

typedef struct kd_regtype {
    unsigned type, value1, value2, value3, value4;
} kd_regtype;

/* kbufinfo_t (bsd/sys/kdebug_private.h), what KERN_KDGETBUF copies out. */
typedef struct kbufinfo {
    int nkdbufs;
    int nolog; /* kdc_emit == KDEMIT_DISABLE: nothing is being logged */
    unsigned flags;
    int nkdthreads;
    int bufid; /* the owning pid, or -1 */
} kbufinfo;

enum { BLOCK_NONE, BLOCK_INTR, BLOCK_AST };

/* One thread's sample in progress: its interrupt-time part, then the user
 * stack logged when it returns to user space (a later block). */
typedef struct slot {
    uint64_t tid;
    bool used;
    int block;
    bool trig;            /* a KPC_HNDLR or TM_HNDLR started it */
    uint64_t trig_pc;
    bool trig_kernel;
    bool pending;         /* interrupt part done, user stack to come */
    bool have_stack;
    dk_sample s;
    uint64_t values[KPC_MAX_COUNTERS];
    uint64_t frames[FRAMES_MAX];
    size_t want_frames;
    uint64_t cs_flags;
} slot;

typedef struct map_seen {
    int pid;
    uint64_t start, len;
} map_seen;

typedef struct ksamp {
    const dk_kperf_vtable *kp;
    const dk__libsystem *ls;
    uint32_t fixed_counters, config_counters;
    dk__kperf_prog *prog;      /* PMI events' counters; NULL without */
    int kind[DK_MAX_EVENTS];   /* 1 PMI, 2 timer */
    size_t counter[DK_MAX_EVENTS];
    uint64_t period[DK_MAX_EVENTS]; /* events, or ns for a timer */
    uint32_t samplers;
    int pid;                   /* the pid filter, -1: every process */
    uint64_t tid;              /* DK_SCOPE_THREAD: the one thread; 0: any */
    size_t npmi, ntimers;
    /* What open did, for teardown. */
    bool kdebug, kperf, periods, counting, sampling, enabled;
    bool kernel_stopped;       /* tracing found off while enabled (reported once) */
    kd_buf *buf;
    size_t pos, len;           /* records read but not yet decoded */
    slot *slots;
    map_seen *maps;
    size_t nmaps, maps_cap;
    int pids[PIDS_MAX];        /* processes whose maps were read in this drain */
    size_t npids;
    int *named;                /* processes whose name was asked (COMM) */
    size_t nnamed, named_cap;
    bool exits;                /* the filter lets BSD_PROC_EXIT through */
} ksamp;

/* ------------------------------------------------------------------------ */
/* Errors                                                                    */
/* ------------------------------------------------------------------------ */

static int trace_fail(const char *what, int e)
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
    return rc == 0 ? 0 : trace_fail(what, dk__kpc_errno(rc));
}

/* sysctl({CTL_KERN, KERN_KDEBUG, op[, value]}); data moves through oldp. */
static int kdebug(const ksamp *k, int op, int value, bool with_value, void *oldp, size_t *oldlen)
{
    int mib[4] = {CTL_KERN, KERN_KDEBUG, op, value};
    size_t zero = 0;
    errno = 0;
    int r = k->ls->sysctl(mib, with_value ? 4u : 3u, oldp, oldlen != NULL ? oldlen : &zero, NULL, 0);
    return r == 0 ? 0 : (errno != 0 ? errno : EIO);
}

static int kdebug_call(const ksamp *k, const char *what, int op, int value, bool with_value,
                       void *oldp, size_t *oldlen)
{
    int e = kdebug(k, op, value, with_value, oldp, oldlen);
    return e == 0 ? 0 : trace_fail(what, e);
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
    free(k);
}

/* One undo step, tried twice (what it leaves armed is system-wide and
 * outlives this process: the next tracing tool has to reset it); rc keeps
 * the first failure. */
#define UNDO(rc, expr)                  \
    do {                                \
        int r_ = (expr);                \
        if (r_ != 0)                    \
            r_ = (expr);                \
        if ((rc) == 0)                  \
            (rc) = r_;                  \
    } while (0)

/* Undo what open did, in reverse, whatever fails on the way: each step is
 * independent, and the first failure is the one reported. */
static int teardown(dk_sampling *p, ksamp *k)
{
    dk_sampler *s = p->sampler;
    const dk_kperf_vtable *kp = k->kp;
    int rc = 0;
    if (k->counting)
        UNDO(rc, dk__kperf_prog_stop(s, k->prog));
    if (k->sampling)
        UNDO(rc, kperf_call("stopping kperf sampling (kperf_sample_set(0))", kp->kperf_sample_set(0)));
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
                return dk__fail(DK_EINVAL, "timer at %llu Hz: above 1 GHz, no timer fires that "
                                           "often", (unsigned long long)a->freq);
            k->period[i] = ns;
            k->ntimers++;
            if (k->ntimers > KPERF_TIMER_MAX)
                return dk__fail(DK_ETOOMANY, "more than %d timers: kperf has %d",
                                KPERF_TIMER_MAX, KPERF_TIMER_MAX);
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
                ev->fallback != NULL ? dk_database_find(&s->db, ev->fallback) : NULL;
            /* Apple's databases name no fallback for FIXED_CYCLES; the
             * configurable counter of core cycles is CORE_ACTIVE_CYCLE. */
            if (twin == NULL && strcmp(ev->name, "FIXED_CYCLES") == 0)
                twin = dk_database_find(&s->db, "CORE_ACTIVE_CYCLE");
            if (twin == NULL)
                return dk__fail(DK_ENOTSUP,
                                "%s counts on a fixed counter, which cannot interrupt through "
                                "kpc, and has no configurable equivalent: sample on the timer",
                                ev->name);
            ev = twin;
            p->events[i] = twin; /* what is sampled, for the event's name */
        }
        k->kind[i] = 1;
        k->period[i] = a->period != 0 ? a->period : DEFAULT_PERIOD;
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
    rc = kdebug_call(k, "sizing the trace buffer (KERN_KDSETBUF)", KERN_KDSETBUF,
                         (int)KD_EVENTS, true, NULL, NULL);
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
        size_t tflen = TYPEFILTER_BYTES;
        int e = kdebug(k, KERN_KDSET_TYPEFILTER, 0, false, tf, &tflen);
        free(tf);
        k->exits = e == 0;
        if (e == EPERM || e == EACCES || e == EBUSY)
            rc = trace_fail("filtering the trace buffer (KERN_KDSET_TYPEFILTER)", e);
    }
    kd_regtype reg = {KDBG_RANGETYPE, 0x25000000u, 0x25ffffffu, 0, 0};
    size_t reglen = sizeof reg;
    if (rc == 0 && !k->exits)
        rc = kdebug_call(k, "filtering the trace buffer to kperf (KERN_KDSETREG)", KERN_KDSETREG,
                         0, false, &reg, &reglen);
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
                        kp->kperf_timer_period_set((uint32_t)t, kp->kperf_ns_to_ticks(k->period[i])));
        if (rc == 0)
            rc = kperf_call("tying a timer to its action (kperf_timer_action_set)",
                            kp->kperf_timer_action_set((uint32_t)t, (uint32_t)i + 1));
        uint64_t ticks = 0;
        if (rc == 0 && kp->kperf_timer_period_get((uint32_t)t, &ticks) == 0 && ticks != 0)
            k->period[i] = kp->kperf_ticks_to_ns(ticks);
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
        if (counter[j] < k->fixed_counters ||
            counter[j] - k->fixed_counters >= k->config_counters)
            return dk__fail(DK_ENOTSUP,
                            "%s was placed on fixed counter %zu, which cannot interrupt through "
                            "kpc",
                            dk_sampling_event_name(p, i), counter[j]);
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

int dk__kperf_sampling_start(dk_sampling *p)
{
    ksamp *k = p->impl;
    int rc = kdebug_call(k, "enabling the trace buffer (KERN_KDENABLE)", KERN_KDENABLE,
                         KDEBUG_ENABLE_TRACE, true, NULL, NULL);
    if (rc != 0)
        return rc;
    k->enabled = true;
    rc = kperf_call("starting kperf sampling (kperf_sample_set(1))", k->kp->kperf_sample_set(1));
    if (rc == 0) {
        k->sampling = true;
        if (k->prog != NULL) {
            rc = dk__kperf_prog_start(p->sampler, k->prog);
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
        rc = dk__kperf_prog_stop(p->sampler, k->prog);
        k->counting = false;
    }
    if (k->sampling) {
        r = kperf_call("stopping kperf sampling (kperf_sample_set(0))", k->kp->kperf_sample_set(0));
        rc = rc != 0 ? rc : r;
        k->sampling = false;
    }
    /* Records already logged stay readable until the buffer is removed. */
    if (k->enabled) {
        r = kdebug_call(k, "disabling the trace buffer (KERN_KDENABLE 0)", KERN_KDENABLE, 0, true,
                        NULL, NULL);
        rc = rc != 0 ? rc : r;
        k->enabled = false;
    }
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

int dk__kperf_sampling_wait(dk_sampling *p, int timeout_ms)
{
    ksamp *k = p->impl;
    if (k->pos < k->len)
        return 1;
    /* KERN_KDBUFWAIT: oldlen in is the timeout in ms, out 1 once the
     * buffer is half full; a timeout leaves what came so far to drain. */
    size_t len = timeout_ms < 0 ? 600000u : (size_t)timeout_ms;
    int e = kdebug(k, KERN_KDBUFWAIT, 0, false, NULL, &len);
    if (e == EINTR)
        return 0;
    if (e != 0)
        return trace_fail("waiting for trace records (KERN_KDBUFWAIT)", e);
    return len != 0 ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Decoding                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct drain_ctx {
    dk_sampling *p;
    ksamp *k;
    dk_sample_fn fn;
    void *ctx;
    int delivered;
    int stop; /* fn's non-zero return */
} drain_ctx;

static slot *slot_of(drain_ctx *d, uint64_t tid, bool make);

/* Report the executable file regions of pid not reported yet
 * (proc_pidinfo PROC_PIDREGIONPATHINFO, region by region). A process that
 * is gone has none left to report. */
static void report_maps(drain_ctx *d, int pid)
{
    ksamp *k = d->k;
    if (k->ls->proc_pidinfo == NULL || pid <= 0)
        return;
    struct dk__proc_regionwithpathinfo *ri = malloc(sizeof *ri);
    if (ri == NULL)
        return;
    uint64_t addr = 0;
    for (int guard = 0; guard < 100000 && d->stop == 0; guard++) {
        memset(ri, 0, sizeof *ri);
        int got = k->ls->proc_pidinfo(pid, DK__PROC_PIDREGIONPATHINFO, addr, ri, (int)sizeof *ri);
        if (got < (int)sizeof *ri || ri->prp_prinfo.pri_size == 0)
            break;
        const struct dk__proc_regioninfo *r = &ri->prp_prinfo;
        addr = r->pri_address + r->pri_size;
        ri->prp_vip.vip_path[sizeof ri->prp_vip.vip_path - 1] = '\0';
        if (!(r->pri_protection & 4u) || ri->prp_vip.vip_path[0] == '\0')
            continue;
        bool seen = false;
        for (size_t i = 0; i < k->nmaps && !seen; i++)
            seen = k->maps[i].pid == pid && k->maps[i].start == r->pri_address &&
                   k->maps[i].len == r->pri_size;
        if (seen)
            continue;
        if (k->nmaps == k->maps_cap) {
            size_t cap = k->maps_cap ? k->maps_cap * 2 : 64;
            map_seen *m = realloc(k->maps, cap * sizeof *m);
            if (m == NULL)
                break;
            k->maps = m;
            k->maps_cap = cap;
        }
        k->maps[k->nmaps++] = (map_seen){pid, r->pri_address, r->pri_size};
        dk_sample m;
        memset(&m, 0, sizeof m);
        m.kind = DK_SAMPLE_KIND_MAP;
        m.pid = pid;
        m.map_start = r->pri_address;
        m.map_len = r->pri_size;
        m.map_pgoff = r->pri_offset;
        m.map_path = ri->prp_vip.vip_path;
        int rc = d->fn(d->ctx, &m);
        d->delivered++;
        if (rc != 0)
            d->stop = rc;
    }
    free(ri);
}

/* A COMM record for pid, the first time it is asked for: its name from
 * proc_pidinfo(PROC_PIDTBSDINFO), pbi_name (the executable's name, up to
 * 31 characters) or else pbi_comm (15). arg 1 finds a zombie too, so that
 * a short command drained after its exit is still named; a process
 * already reaped, or one the caller may not look at, gets no record. */
static void report_comm(drain_ctx *d, int pid, uint64_t time)
{
    ksamp *k = d->k;
    if (pid <= 0 || d->stop != 0)
        return;
    for (size_t i = 0; i < k->nnamed; i++)
        if (k->named[i] == pid)
            return;
    if (k->nnamed == k->named_cap) {
        size_t cap = k->named_cap ? k->named_cap * 2 : 16;
        int *n = realloc(k->named, cap * sizeof *n);
        if (n == NULL)
            return; /* a name is a convenience: do without */
        k->named = n;
        k->named_cap = cap;
    }
    k->named[k->nnamed++] = pid;
    if (k->ls->proc_pidinfo == NULL)
        return;
    struct dk__proc_bsdinfo bi;
    memset(&bi, 0, sizeof bi);
    int got = k->ls->proc_pidinfo(pid, DK__PROC_PIDTBSDINFO, 1, &bi, (int)sizeof bi);
    if (got < (int)sizeof bi)
        return;
    bi.pbi_comm[sizeof bi.pbi_comm - 1] = '\0';
    bi.pbi_name[sizeof bi.pbi_name - 1] = '\0';
    const char *name = bi.pbi_name[0] != '\0' ? bi.pbi_name : bi.pbi_comm;
    if (name[0] == '\0')
        return;
    dk_sample c;
    memset(&c, 0, sizeof c);
    c.kind = DK_SAMPLE_KIND_COMM;
    c.pid = pid;
    c.tid = (uint64_t)pid;
    if (d->p->opts.record & DK_SAMPLE_TIME)
        c.time_ns = time;
    c.comm = name;
    int rc = d->fn(d->ctx, &c);
    d->delivered++;
    if (rc != 0)
        d->stop = rc;
}

static void deliver(drain_ctx *d, slot *sl)
{
    ksamp *k = d->k;
    dk_sampling *p = d->p;
    dk_sample *s = &sl->s;
    sl->pending = false;
    if (d->stop != 0 || (k->tid != 0 && s->tid != k->tid))
        return;
    /* The process's name before its first sample. */
    report_comm(d, s->pid, k->kp->kperf_ticks_to_ns(s->time_ns));
    if (d->stop != 0)
        return;
    /* Maps of a process before its samples: read again (at most once a
     * drain) when a sample's pc is in no region reported so far. */
    bool known = false, covered = false;
    uint64_t pc = sl->have_stack && s->n_frames > 0 ? sl->frames[0] : 0;
    for (size_t i = 0; i < k->npids && !known; i++)
        known = k->pids[i] == s->pid;
    for (size_t i = 0; i < k->nmaps && !covered && !known; i++)
        covered = k->maps[i].pid == s->pid && pc - k->maps[i].start < k->maps[i].len;
    if (!known && !covered && k->npids < PIDS_MAX) {
        k->pids[k->npids++] = s->pid;
        report_maps(d, s->pid);
        if (d->stop != 0)
            return;
    }
    unsigned rec = p->opts.record;
    dk_sample out;
    memset(&out, 0, sizeof out);
    out.kind = DK_SAMPLE_KIND_SAMPLE;
    out.event = s->event;
    if (rec & DK_SAMPLE_TIME)
        out.time_ns = k->kp->kperf_ticks_to_ns(s->time_ns);
    if (rec & DK_SAMPLE_TID) {
        out.pid = s->pid;
        out.tid = s->tid;
    }
    if (rec & DK_SAMPLE_CPU)
        out.cpu = s->cpu;
    if (rec & DK_SAMPLE_PERIOD)
        out.period = k->period[s->event];
    /* The user stack's last word is callstack_fixup_user's (arm64 LR, or
     * the word at x86's SP), not a frame: it is left out. */
    size_t n = sl->have_stack && (sl->cs_flags & CS_VALID) && s->n_frames > 0 ? s->n_frames - 1 : 0;
    if (rec & DK_SAMPLE_IP) {
        if (sl->trig && !sl->trig_kernel && sl->trig_pc != 0) {
            out.ip = sl->trig_pc;
            out.user = true;
        } else if (n > 0 && !sl->trig_kernel) {
            out.ip = sl->frames[0];
            out.user = true;
        }
    }
    if (rec & DK_SAMPLE_CALLCHAIN) {
        out.frames = sl->frames;
        out.n_frames = n;
        out.truncated = (sl->cs_flags & CS_TRUNCATED) != 0;
    }
    if (rec & DK_SAMPLE_READ) {
        /* The thread's counters in kpc order: pick each event's. */
        static const uint64_t none[DK_MAX_EVENTS];
        uint64_t v[DK_MAX_EVENTS];
        for (size_t i = 0; i < p->n; i++)
            v[i] = k->kind[i] == 1 && k->counter[i] < s->n_values ? sl->values[k->counter[i]] : 0;
        out.values = s->n_values > 0 ? v : none;
        out.n_values = p->n;
        int rc = d->fn(d->ctx, &out);
        d->delivered++;
        p->stats.samples++;
        if (rc != 0)
            d->stop = rc;
        return;
    }
    int rc = d->fn(d->ctx, &out);
    d->delivered++;
    p->stats.samples++;
    if (rc != 0)
        d->stop = rc;
}

static slot *slot_of(drain_ctx *d, uint64_t tid, bool make)
{
    slot *free_slot = NULL;
    for (size_t i = 0; i < SLOTS; i++) {
        slot *sl = &d->k->slots[i];
        if (sl->used && sl->tid == tid)
            return sl;
        if (!sl->used && free_slot == NULL)
            free_slot = sl;
    }
    if (!make)
        return NULL;
    if (free_slot == NULL) {
        /* Every slot busy: the oldest waits no longer for its stack. */
        free_slot = &d->k->slots[tid % SLOTS];
        if (free_slot->pending)
            deliver(d, free_slot);
    }
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->used = true;
    free_slot->tid = tid;
    return free_slot;
}

/* BSD_PROC_EXIT's END: the process is a zombie, nothing of it runs any
 * more. Only the target's exit, or every process's without a pid filter;
 * its samples still waiting for their user stacks come first. */
static void process_exit(drain_ctx *d, const kd_buf *r)
{
    ksamp *k = d->k;
    int pid = (int)r->arg1;
    if (pid <= 0 || (k->pid != -1 && pid != k->pid))
        return;
    for (size_t i = 0; i < SLOTS && d->stop == 0; i++) {
        slot *sl = &k->slots[i];
        if (sl->used && sl->pending && sl->s.pid == pid) {
            deliver(d, sl);
            sl->used = false;
        }
    }
    report_comm(d, pid, k->kp->kperf_ticks_to_ns(r->timestamp)); /* a zombie still has its name */
    if (d->stop != 0)
        return;
    dk_sample x;
    memset(&x, 0, sizeof x);
    x.kind = DK_SAMPLE_KIND_EXIT;
    x.pid = pid;
    x.tid = r->arg5;
    if (d->p->opts.record & DK_SAMPLE_TIME)
        x.time_ns = k->kp->kperf_ticks_to_ns(r->timestamp);
    int rc = d->fn(d->ctx, &x);
    d->delivered++;
    if (rc != 0)
        d->stop = rc;
}

static void decode(drain_ctx *d, const kd_buf *r)
{
    ksamp *k = d->k;
    uint32_t id = r->debugid & ID_MASK, q = r->debugid & 3u;
    if (id == ID_PROC_EXIT) {
        if (q == FUNC_END)
            process_exit(d, r);
        return;
    }
    if (id == ID_LOST) {
        /* kdebug says only that records were overwritten, not how many:
         * each such mark counts as one. */
        d->p->stats.lost++;
        return;
    }
    if ((id >> 24) != 0x25)
        return;
    uint64_t tid = r->arg5;
    slot *sl;
    switch (id) {
    case ID_KPC_HNDLR:
    case ID_TM_HNDLR:
        if (q != FUNC_START)
            return;
        sl = slot_of(d, tid, true);
        if (sl->pending) /* its stack never came (a kernel thread, an exit) */
            deliver(d, sl);
        sl->trig = true;
        sl->trig_kernel = id == ID_KPC_HNDLR && (r->arg1 >> 48 & KPC_KERNEL_PC);
        sl->trig_pc = id == ID_KPC_HNDLR ? r->arg3 : 0;
        return;
    case ID_GEN_EVENT: {
        uint64_t action = r->arg2;
        if (q == FUNC_START) {
            if (action == 0 || action > d->p->n)
                return; /* not one of ours */
            sl = slot_of(d, tid, true);
            /* The user-space part (kperf_sample_user_internal) carries no
             * sample flags; the interrupt part always has some. */
            if (r->arg4 == 0 && sl->pending && sl->s.event == action - 1) {
                sl->block = BLOCK_AST;
                return;
            }
            if (sl->pending)
                deliver(d, sl);
            bool trig = sl->trig, kern = sl->trig_kernel;
            uint64_t pc = sl->trig_pc;
            memset(&sl->s, 0, sizeof sl->s);
            sl->have_stack = false;
            sl->trig = trig;
            sl->trig_kernel = kern;
            sl->trig_pc = pc;
            sl->block = BLOCK_INTR;
            sl->s.event = (size_t)action - 1;
            sl->s.time_ns = r->timestamp; /* ticks until delivered */
            sl->s.cpu = r->cpuid;
            sl->s.tid = tid;
            return;
        }
        if (q != FUNC_END)
            return;
        sl = slot_of(d, tid, false);
        if (sl == NULL || sl->block == BLOCK_NONE)
            return;
        if (sl->block == BLOCK_INTR && (k->samplers & KPERF_SAMPLER_USTACK)) {
            sl->pending = true; /* the stack comes when it returns to user space */
            sl->block = BLOCK_NONE;
            return;
        }
        sl->block = BLOCK_NONE;
        deliver(d, sl);
        sl->used = false;
        return;
    }
    default:
        break;
    }
    sl = slot_of(d, tid, false);
    if (sl == NULL || sl->block == BLOCK_NONE)
        return;
    if (id == ID_TI_DATA) {
        sl->s.pid = (int)r->arg1;
        sl->s.tid = r->arg2;
    } else if (id == ID_CS_UHDR && sl->block == BLOCK_AST) {
        sl->cs_flags = r->arg1;
        sl->want_frames = r->arg2 < FRAMES_MAX ? (size_t)r->arg2 : FRAMES_MAX;
        sl->s.n_frames = 0;
        sl->have_stack = true;
    } else if (id == ID_CS_UDATA && sl->have_stack) {
        const uint64_t w[4] = {r->arg1, r->arg2, r->arg3, r->arg4};
        for (size_t j = 0; j < 4 && sl->s.n_frames < sl->want_frames; j++)
            sl->frames[sl->s.n_frames++] = w[j];
    } else if (id == ID_KPC_DATA_THREAD) {
        if (q == FUNC_START)
            sl->s.n_values = 0;
        const uint64_t w[4] = {r->arg1, r->arg2, r->arg3, r->arg4};
        for (size_t j = 0; j < 4 && sl->s.n_values < KPC_MAX_COUNTERS; j++)
            sl->values[sl->s.n_values++] = w[j];
    }
}

int dk__kperf_sampling_drain(dk_sampling *p, dk_sample_fn fn, void *ctx)
{
    ksamp *k = p->impl;
    drain_ctx d = {p, k, fn, ctx, 0, 0};
    k->npids = 0; /* maps are looked at again in each drain */
    /* At most a buffer's worth of records a drain: a machine whose kperf
     * users write as fast as this reads would otherwise keep it reading
     * for ever; what is left is the next drain's. */
    size_t read = 0;
    for (;;) {
        while (k->pos < k->len && d.stop == 0)
            decode(&d, &k->buf[k->pos++]);
        if (d.stop != 0)
            return d.stop;
        if (read >= KD_EVENTS)
            break;
        size_t len = READ_EVENTS * sizeof *k->buf;
        int e = kdebug(k, KERN_KDREADTR, 0, false, k->buf, &len);
        if (e != 0)
            return trace_fail("reading the trace buffer (KERN_KDREADTR)", e);
        /* oldlen comes back as a number of records (kernel_debug_read). */
        k->pos = 0;
        k->len = len < READ_EVENTS ? len : READ_EVENTS;
        read += k->len;
        if (k->len == 0)
            break;
    }
    /* The kernel can stop tracing on its own: with KDBG_NOWRAP in effect a
     * full buffer turns logging off instead of wrapping (kdebug_common.c
     * allocate_storage_unit; on macOS 12 and earlier KERN_KDEFLAGS's NOWRAP,
     * which KERN_KDREMOVE clears there, so only another tool setting it
     * after this one's set-up), and so does a wrap that finds no storage
     * unit to take. Every sample after that is lost and nothing more comes:
     * KERN_KDGETBUF's nolog says so, and it is reported, not waited out.
     * (A wrap loses records too, but the next read says so with a
     * TRACE_LOST_EVENTS record, counted above.) */
    if (k->enabled && !k->kernel_stopped && d.stop == 0) {
        kbufinfo b;
        memset(&b, 0, sizeof b);
        size_t blen = sizeof b;
        int e = kdebug(k, KERN_KDGETBUF, 0, false, &b, &blen);
        if (e != 0)
            return trace_fail("checking that tracing is still on (KERN_KDGETBUF)", e);
        if (b.nolog != 0) {
            k->kernel_stopped = true;
            p->stats.lost++;
            return dk__fail(DK_EOS,
                            "the kernel stopped tracing while sampling (KERN_KDGETBUF reports "
                            "nolog, flags %#x): %s; samples from then on are lost (%llu "
                            "delivered before)",
                            b.flags,
                            (b.flags & KDBG_NOWRAP)
                                ? "the trace buffer filled while KDBG_NOWRAP was set (by "
                                  "another tool; on macOS 12 and earlier it makes a full "
                                  "buffer stop logging instead of wrapping)"
                            : (b.flags & KDBG_WRAPPED)
                                ? "the trace buffer filled and logging stopped"
                                : "tracing was turned off by something other than this sampling",
                            (unsigned long long)p->stats.samples);
        }
    }
    /* Samples whose stacks cannot come any more once sampling stopped. */
    if (!k->enabled)
        for (size_t i = 0; i < SLOTS && d.stop == 0; i++)
            if (k->slots[i].used && k->slots[i].pending) {
                deliver(&d, &k->slots[i]);
                k->slots[i].used = false;
            }
    /* The target is named even when none of its samples came. */
    if (!k->enabled && k->pid > 0 && d.stop == 0)
        report_comm(&d, k->pid, 0);
    return d.stop != 0 ? d.stop : d.delivered;
}
