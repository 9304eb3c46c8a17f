/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kernel_sim.c - the simulated kernel's ktrace ownership and kdebug trace
 * buffer, shared by the simulated kperf framework (which emits records)
 * and the simulated libsystem_kernel (whose sysctl() reads them). Test
 * code, never installed; nothing here was checked on Apple hardware. The
 * XNU functions each behaviour follows are cited in README.md.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"
#include "sim_kdebug.h"
#include "sim_kernel.h"

#define MAX_EVENTS (1u << 22) /* the sim's stand-in for sane_size / 2 / 64 */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* ktrace */
static pid_t owner = -1;
static bool foreground; /* ktrace_state FG: set by an owner, cleared by its last reset */
static unsigned active_mask;
static char configured_by[17]; /* ktrace_last_owner_execname[MAXCOMLEN + 1] */
static bool other_owner;       /* DKPERF_SIM_KTRACE_BUSY: Instruments or ktrace has it */

/* kdebug */
static unsigned nkdbufs; /* kdb_event_count: KDSETBUF's, then KDSETUP's rounded */
static bool bufinit;
static int enabled;
static unsigned flags;       /* kdc_flags: the user flags (KDEFLAGS) */
static unsigned live_flags;  /* kdc_live_flags: KDBG_WRAPPED (and the legacy NOWRAP stop) */
static bool legacy_nowrap;   /* DKPERF_SIM_KDEBUG=xnu-8020: KDEFLAGS(NOWRAP) takes effect */
static uint64_t oldest_time; /* kdc_oldest_time: the lost-events record's timestamp */
static bool stopped;         /* the kernel turned tracing off since the last sysctl */
/* kdc_flags' filter bits, each set on its own (kdbg_setreg,
 * kdbg_enable_typefilter); _trace_emit_filter picks by precedence. */
static bool typefilter_check, range_check, val_check;
static uint32_t range_beg, range_end, values[4];
static unsigned char typefilter[TYPEFILTER_BYTES];
static simk_kd_buf *ring;
static size_t capacity, head, count; /* oldest at head */
static bool lost;
/* A ring entry whose `unused` word holds this starts a storage unit that
 * follows lost events (kds_lostevents); the word is zeroed when read out. */
#define MARK_LOST 0x6c6f7374u
static bool lost_next; /* kd_lostevents of the bufinfo: mark the next stored record */
/* Since the process started, for the state file: storage units stolen by a
 * wrap, and the sampling sources' own losses (simk_lost). */
static unsigned long wraps, source_losses;

static void (*pull_hook)(int);
static void (*changed_hook)(void);
static simk_sysctl_fn kperf_sysctl_hook;

/* DKPERF_SIM_KDEBUG_WRITER=N: before each KERN_KDREADTR, N records of
 * kperf's class that no sample decodes are logged, as from other kperf
 * users of a busy machine writing as fast as the reader reads. */
static size_t busy_writer;

static void init(void)
{
    const char *w = getenv("DKPERF_SIM_KDEBUG_WRITER");
    busy_writer = w != NULL ? (size_t)strtoul(w, NULL, 10) : 0;
    if (busy_writer > 65536)
        busy_writer = 65536;
    const char *v = getenv("DKPERF_SIM_KTRACE_BUSY");
    other_owner = v != NULL && *v != '\0' && strcmp(v, "0") != 0;
    const char *k = getenv("DKPERF_SIM_KDEBUG");
    if (k != NULL && *k != '\0' && strcmp(k, "xnu-11417") != 0) {
        if (strcmp(k, "xnu-8020") != 0) {
            fprintf(stderr, "DKPERF_SIM_KDEBUG=%s: expected xnu-8020 or xnu-11417\n", k);
            abort();
        }
        legacy_nowrap = true;
    }
}

static void ensure(void) { pthread_once(&once, init); }

/* Whether process pid exists (EPERM: it does, owned by another user). */
static bool alive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

/* bsd/kern/kern_ktrace.c ktrace_ownership_maintenance: an owner that has
 * exited is released, and only that: its kperf and kdebug configuration
 * and the active mask stay as they were (pid reuse is not modelled: XNU
 * compares unique ids). Caller holds lock. */
static void maintenance_locked(void)
{
    if (owner > 0 && owner != getpid() && !alive(owner))
        owner = -1;
}

/* bsd/kern/kern_ktrace.c ktrace_configure. Caller holds lock. */
static int configure_locked(unsigned mask)
{
    if (owner == getpid()) {
        active_mask |= mask;
        return 0;
    }
    if (other_owner)
        return EBUSY;
    maintenance_locked();
    if (owner > 0)
        return EBUSY; /* a live process a state file names */
    if (!sim_privileged())
        return EPERM;
    /* Taking over from a foreground owner that is gone resets nothing
     * (ktrace_set_owning_proc resets kperf and kdebug only when leaving
     * background mode): the new owner inherits what the old one left. */
    owner = getpid();
    foreground = true; /* ktrace_set_owning_proc */
    /* ktrace_set_owning_proc: ktrace_last_owner_execname, MAXCOMLEN. */
    FILE *f = fopen("/proc/self/comm", "r");
    if (f != NULL) {
        if (fgets(configured_by, sizeof configured_by, f) == NULL)
            configured_by[0] = 0;
        configured_by[strcspn(configured_by, "\n")] = 0;
        fclose(f);
    }
    active_mask |= mask;
    return 0;
}

int simk_ktrace_configure(unsigned mask)
{
    ensure();
    pthread_mutex_lock(&lock);
    int e = configure_locked(mask);
    pthread_mutex_unlock(&lock);
    return e;
}

static void reset_locked(unsigned mask)
{
    active_mask &= ~mask;
    if (active_mask == 0) { /* ktrace_reset_internal → ktrace_promote_background */
        owner = -1;
        foreground = false;
    }
}

void simk_ktrace_reset(unsigned mask)
{
    ensure();
    pthread_mutex_lock(&lock);
    reset_locked(mask);
    pthread_mutex_unlock(&lock);
}

int simk_ktrace_read_check(void)
{
    ensure();
    return sim_privileged() ? 0 : EPERM;
}

/* bsd/kern/kdebug.c _should_emit_debugid under _trace_emit_filter's
 * choice (typefilter, then range, then exact values, else all), for each
 * record on its own. DBG_TRACE passes a typefilter only because
 * kdbg_copyin_typefilter sets its class; the range and value filters do
 * not let it through. */
static bool wants_locked(uint32_t debugid)
{
    if (!enabled || !bufinit)
        return false;
    /* KDEBUG_ENABLE_PPT alone: only KDEBUG_COMMON records are logged (the
     * process ones, BSD_PROC_*, and DBG_TRACE's exec data); kperf's
     * (KDBG_RELEASE: ~KDEBUG_ENABLE_PPT), MACH_SCHED's and the interrupts'
     * (KDEBUG_TRACE) are not (bsd/sys/kdebug_kernel.h
     * KERNEL_DEBUG_CONSTANT_IST and its callers). */
    if (!(enabled & KDEBUG_ENABLE_TRACE) && debugid >> 16 != (4u << 8 | 1u) && debugid >> 24 != 7u)
        return false;
    if (typefilter_check) {
        unsigned csc = debugid >> 16;
        return typefilter[csc / 8] >> (csc % 8) & 1;
    }
    if (range_check)
        return debugid >= range_beg && debugid <= range_end;
    if (val_check) {
        uint32_t id = debugid & ~3u; /* KDBG_EVENTID_MASK */
        return id == values[0] || id == values[1] || id == values[2] || id == values[3];
    }
    return true;
}

bool simk_kdebug_tracing(void)
{
    pthread_mutex_lock(&lock);
    bool on = enabled && bufinit;
    pthread_mutex_unlock(&lock);
    return on;
}

bool simk_kdebug_wants(uint32_t debugid)
{
    pthread_mutex_lock(&lock);
    bool w = wants_locked(debugid);
    pthread_mutex_unlock(&lock);
    return w;
}

void simk_emit(const simk_kd_buf *r, size_t n)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; i++) {
        if (!wants_locked(r[i].debugid))
            continue;
        if (count == capacity) {
            /* kdebug_common.c allocate_storage_unit, no free unit left. */
            if (legacy_nowrap && (flags & KDBG_NOWRAP)) {
                /* xnu-8020: KDBG_NOWRAP (a kdebug_flags bit that KDEFLAGS
                 * sets) makes it set SLOW_NOLOG: nothing more is logged,
                 * KDGETBUF says nolog, KDBG_WRAPPED is not set, and the
                 * unit allocated after a re-enable carries lost events. */
                enabled = 0;
                stopped = true;
                lost_next = true;
                continue;
            }
            /* xnu-11417 (and from xnu-8792): the oldest storage unit is
             * stolen, KDBG_WRAPPED set; kdc_oldest_time moves up to its
             * last event. KDEFLAGS' NOWRAP is a kdc_flags bit that the
             * allocator does not look at (it reads kdc_live_flags). */
            size_t drop = count < EVENTS_PER_UNIT ? count : EVENTS_PER_UNIT;
            uint64_t last = ring[(head + drop - 1) % capacity].timestamp;
            if (last > oldest_time)
                oldest_time = last;
            head = (head + drop) % capacity;
            count -= drop;
            live_flags |= KDBG_WRAPPED;
            wraps++;
        }
        simk_kd_buf *slot = &ring[(head + count) % capacity];
        *slot = r[i];
        slot->unused = lost_next ? MARK_LOST : 0;
        lost_next = false;
        count++;
    }
    pthread_mutex_unlock(&lock);
}

void simk_lost(void)
{
    pthread_mutex_lock(&lock);
    if (enabled) {
        lost = true;
        source_losses++;
    }
    pthread_mutex_unlock(&lock);
}

void simk_set_hooks(void (*pull)(int), void (*changed)(void))
{
    pthread_mutex_lock(&lock);
    pull_hook = pull;
    changed_hook = changed;
    pthread_mutex_unlock(&lock);
}

void simk_set_kperf_sysctl(simk_sysctl_fn fn)
{
    pthread_mutex_lock(&lock);
    kperf_sysctl_hook = fn;
    pthread_mutex_unlock(&lock);
}

int simk_kperf_sysctl(const char *name, void *oldp, size_t *oldlenp, const void *newp,
                      size_t newlen)
{
    pthread_mutex_lock(&lock);
    simk_sysctl_fn fn = kperf_sysctl_hook;
    pthread_mutex_unlock(&lock);
    return fn != NULL ? fn(name, oldp, oldlenp, newp, newlen) : ENOENT;
}

size_t simk_state_text(char *buf, size_t size)
{
    pthread_mutex_lock(&lock);
    /* ktrace.owning_pid reads 0 when nobody owns tracing (kern_ktrace.c). */
    int n = snprintf(buf, size,
                     "kdebug.bufinit %d\nkdebug.enabled %d\nkdebug.nkdbufs %u\n"
                     "ktrace.owning_pid %ld\nktrace.active_mask %u\nktrace.state %d\n"
                     "sim.kdebug_wraps %lu\nsim.source_losses %lu\n",
                     bufinit ? 1 : 0, enabled, nkdbufs, owner > 0 ? (long)owner : 0L, active_mask,
                     foreground ? 1 : 0, wraps, source_losses);
    pthread_mutex_unlock(&lock);
    return n < 0 ? 0 : (size_t)n >= size ? size - 1 : (size_t)n;
}

int simk_owning_pid(void)
{
    ensure();
    pthread_mutex_lock(&lock);
    int pid = other_owner ? 1 : owner > 0 ? (int)owner : 0;
    pthread_mutex_unlock(&lock);
    return pid;
}

/* kern_ktrace.c's read-only SYSCTL_UINTs: ktrace_state (OFF 0, FG 1;
 * background mode is not modelled) and ktrace_active_mask. Another live
 * owner (DKPERF_SIM_KTRACE_BUSY) holds it in the foreground. */
bool simk_ktrace_value(const char *name, int *value)
{
    ensure();
    pthread_mutex_lock(&lock);
    bool found = true;
    if (strcmp(name, "ktrace.state") == 0)
        *value = other_owner || foreground ? 1 : 0;
    else if (strcmp(name, "ktrace.active_mask") == 0)
        *value = other_owner ? (int)(SIMK_KTRACE_KDEBUG | SIMK_KTRACE_KPERF) : (int)active_mask;
    else
        found = false;
    pthread_mutex_unlock(&lock);
    return found;
}

void simk_configured_by(char *name, size_t size)
{
    ensure();
    pthread_mutex_lock(&lock);
    snprintf(name, size, "%s", configured_by);
    pthread_mutex_unlock(&lock);
}

static size_t rounded_events(unsigned asked);

void simk_adopt(const char *key, long v)
{
    ensure();
    pthread_mutex_lock(&lock);
    if (key == NULL) {
        /* The buffer is there as its owner left it: set up, empty (its
         * records are not carried), enabled or not, every event let in. */
        if (bufinit && ring == NULL) {
            size_t n = rounded_events(nkdbufs);
            ring = calloc(n, sizeof *ring);
            capacity = ring != NULL ? n : 0;
            nkdbufs = (unsigned)capacity;
            bufinit = ring != NULL;
        }
        if (!bufinit)
            enabled = 0;
    } else if (strcmp(key, "ktrace.owning_pid") == 0) {
        owner = v > 0 && v != (long)getpid() ? (pid_t)v : -1;
        foreground = foreground || owner > 0;
    } else if (strcmp(key, "ktrace.state") == 0) {
        foreground = foreground || v == 1;
    } else if (strcmp(key, "ktrace.active_mask") == 0) {
        active_mask = (unsigned)v & (SIMK_KTRACE_KDEBUG | SIMK_KTRACE_KPERF);
    } else if (strcmp(key, "kdebug.nkdbufs") == 0) {
        nkdbufs = v < 0 ? 0 : v > MAX_EVENTS ? MAX_EVENTS : (unsigned)v;
    } else if (strcmp(key, "kdebug.bufinit") == 0) {
        bufinit = v != 0;
    } else if (strcmp(key, "kdebug.enabled") == 0) {
        enabled = v == KDEBUG_ENABLE_TRACE || v == KDEBUG_ENABLE_PPT ? (int)v : 0;
    }
    pthread_mutex_unlock(&lock);
}

/* kdbg_clear: disable, free, filters cleared, kdb_event_count 0. Of the
 * user flags it clears CONTINUOUS_TIME, DISABLE_COPROCS and MATCH_DISABLE;
 * NOWRAP stays in kdc_flags (only the live NOWRAP and WRAPPED are
 * cleared) since xnu-8792, while xnu-8020 cleared it. Caller holds lock. */
static void clear_locked(void)
{
    enabled = 0;
    bufinit = false;
    free(ring);
    ring = NULL;
    capacity = head = count = 0;
    lost = lost_next = false;
    flags &= ~(KDBG_CONTINUOUS_TIME | KDBG_DISABLE_COPROCS | KDBG_MATCH_DISABLE);
    if (legacy_nowrap)
        flags &= ~KDBG_NOWRAP;
    live_flags = 0;
    oldest_time = 0;
    typefilter_check = range_check = val_check = false;
    nkdbufs = 0;
}

/* create_buffers_trace: whole storage units, at least 4 per CPU slot. */
static size_t rounded_events(unsigned asked)
{
    const sim_layout *l = sim_cpu_layout();
    size_t cpus = (l != NULL && l->ncpu > 0 ? l->ncpu : 1) + EXTRA_COPROC_COUNT;
    size_t min_units = cpus * MIN_UNITS_PER_CPU;
    size_t units = asked < min_units * EVENTS_PER_UNIT ? min_units : asked / EVENTS_PER_UNIT;
    return units * EVENTS_PER_UNIT;
}

/* kdc_storage_used: storage units holding records (a ring of whole units). */
static size_t units_used_locked(void) { return (count + EVENTS_PER_UNIT - 1) / EVENTS_PER_UNIT; }

static void call_changed(void)
{
    pthread_mutex_lock(&lock);
    void (*fn)(void) = changed_hook;
    pthread_mutex_unlock(&lock);
    if (fn != NULL)
        fn();
}

static void call_pull(int timeout_ms)
{
    pthread_mutex_lock(&lock);
    void (*fn)(int) = pull_hook;
    pthread_mutex_unlock(&lock);
    if (fn != NULL)
        fn(timeout_ms);
}

/* kdebug_common.c kernel_debug_read: oldlen in bytes, out events (at
 * most kdb_event_count). A wrap since the last read (KDBG_WRAPPED, cleared
 * here) gives one TRACE_LOST_EVENTS first, arg1 0, at kdc_oldest_time on
 * CPU 0; a unit that follows lost events gives one with arg1 1 before its
 * records. Records copied out move kdc_oldest_time up. A failed copy-out
 * (oldp NULL) is EINVAL, what was taken being lost. */
static int read_locked(void *oldp, size_t *oldlenp)
{
    size_t want = *oldlenp / sizeof(simk_kd_buf);
    *oldlenp = 0;
    if (want == 0 || !bufinit)
        return EINVAL;
    if (want > nkdbufs)
        want = nkdbufs;
    simk_kd_buf *out = oldp;
    size_t w = 0;
    bool wrapped = (live_flags & KDBG_WRAPPED) != 0;
    live_flags &= ~KDBG_WRAPPED;
    simk_kd_buf l;
    memset(&l, 0, sizeof l);
    l.debugid = TRACE_LOST_EVENTS;
    if (wrapped) {
        l.timestamp = oldest_time;
        if (out != NULL)
            out[w] = l;
        w++;
        lost = false;
    } else if (lost && want > 0) {
        /* The sampling sources' own losses (simk_lost). */
        l.arg1 = 1;
        l.timestamp = count > 0 ? ring[head].timestamp : oldest_time;
        if (out != NULL)
            out[w] = l;
        w++;
        lost = false;
    }
    while (w < want && count > 0) {
        simk_kd_buf r = ring[head];
        if (r.unused == MARK_LOST) {
            ring[head].unused = 0;
            l.arg1 = 1;
            l.timestamp = r.timestamp > oldest_time ? r.timestamp : oldest_time;
            if (out != NULL)
                out[w] = l;
            w++;
            continue;
        }
        r.unused = 0;
        if (out != NULL)
            out[w] = r;
        w++;
        if (r.timestamp > oldest_time)
            oldest_time = r.timestamp;
        head = (head + 1) % capacity;
        count--;
    }
    if (out == NULL && w > 0)
        return EINVAL;
    *oldlenp = w;
    return 0;
}

static int kdebug_sysctl(const int *mib, unsigned miblen, void *oldp, size_t *oldlenp,
                         const void *newp, size_t newlen);

/* bsd/kern/kern_newsysctl.c sysctl(): after an error other than ENOMEM the
 * caller's oldlen is not written back, so it reads as it was passed. */
int simk_kdebug_sysctl(const int *mib, unsigned miblen, void *oldp, size_t *oldlenp,
                       const void *newp, size_t newlen)
{
    size_t given = oldlenp != NULL ? *oldlenp : 0;
    int e = kdebug_sysctl(mib, miblen, oldp, oldlenp, newp, newlen);
    if (e != 0 && e != ENOMEM && oldlenp != NULL)
        *oldlenp = given;
    return e;
}

static int kdebug_sysctl(const int *mib, unsigned miblen, void *oldp, size_t *oldlenp,
                         const void *newp, size_t newlen)
{
    ensure();
    (void)newlen;
    if (miblen < 2 || mib[0] != CTL_KERN || mib[1] != KERN_KDEBUG)
        return ENOENT;
    /* kdebug_sysctl: no op after the node → ENOTSUP. */
    if (miblen < 3)
        return ENOTSUP;
    int op = mib[2];
    /* kdebug's OID is CTLFLAG_RD: no new value is ever accepted. */
    if (newp != NULL)
        return EPERM;
    bool needs_value = op == KERN_KDEFLAGS || op == KERN_KDDFLAGS || op == KERN_KDENABLE ||
                       op == KERN_KDSETBUF || op == KERN_KDWRITETR || op == KERN_KDWRITETR_V3;
    if (needs_value && miblen < 4)
        return EINVAL;
    int value = miblen >= 4 ? mib[3] : 0;
    int e = 0;
    bool changed = false;

    if (op == KERN_KDGETBUF) {
        e = simk_ktrace_read_check();
        if (e != 0)
            return e;
        /* kdb_event_count; nolog while kdc_emit is KDEMIT_DISABLE (tracing
         * off, or stopped by the kernel); flags = kdc_flags | kdc_live_flags.
         * MIN(oldlen, sizeof) bytes are copied and oldlen is left as given. */
        size_t size = oldlenp == NULL ? 0 : *oldlenp;
        if (size > 0 && oldp == NULL)
            return EFAULT;
        pthread_mutex_lock(&lock);
        /* bufid = ktrace_get_owning_pid(), which releases an owner that is
         * gone first (ktrace_ownership_maintenance); pid 1 stands for the
         * live owner of DKPERF_SIM_KTRACE_BUSY. */
        maintenance_locked();
        kbufinfo info = {(int)nkdbufs, enabled ? 0 : 1,
                         flags | live_flags | KDBG_LP64 | (bufinit ? KDBG_BUFINIT : 0), 0,
                         other_owner ? 1
                         : owner > 0 ? (int)owner
                                     : -1};
        pthread_mutex_unlock(&lock);
        if (size > 0)
            memcpy(oldp, &info, size < sizeof info ? size : sizeof info);
        return 0;
    }
    /* Sampling sources deliver what they caught before a read or a wait. */
    if (op == KERN_KDREADTR || op == KERN_KDBUFWAIT) {
        pthread_mutex_lock(&lock);
        e = configure_locked(SIMK_KTRACE_KDEBUG);
        bool ready = bufinit;
        pthread_mutex_unlock(&lock);
        if (e != 0)
            return e;
        if (!ready)
            return EINVAL;
        if (op == KERN_KDREADTR) {
            call_pull(0);
            if (busy_writer > 0) {
                simk_kd_buf *f = calloc(busy_writer, sizeof *f);
                for (size_t i = 0; f != NULL && i < busy_writer; i++)
                    f[i].debugid = 0x25ff0000u;
                if (f != NULL)
                    simk_emit(f, busy_writer);
                free(f);
            }
        } else {
            /* kdbg_wait: until half the buffer is used or the time is up. */
            long timeout = oldlenp == NULL ? 0 : *oldlenp > 600000 ? 600000 : (long)*oldlenp;
            struct timespec t0, now;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            for (;;) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                long spent = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
                call_pull(spent >= timeout ? 0 : (int)(timeout - spent));
                pthread_mutex_lock(&lock);
                bool full = !bufinit || units_used_locked() >= capacity / EVENTS_PER_UNIT / 2;
                pthread_mutex_unlock(&lock);
                if (full || spent >= timeout)
                    break;
            }
        }
    }
    /* Tracing about to go off (or the buffer to go): what the sources
     * caught is logged first. XNU logs each record as it happens, so a
     * read after the stop finds everything from before it. */
    if ((op == KERN_KDENABLE && value == 0) || op == KERN_KDREMOVE || op == KERN_KDSETUP)
        call_pull(-1);

    pthread_mutex_lock(&lock);
    e = configure_locked(SIMK_KTRACE_KDEBUG);
    if (e != 0)
        goto out;
    switch (op) {
    case KERN_KDEFLAGS:
        flags |= (unsigned)value & KDBG_USERFLAGS;
        break;
    case KERN_KDDFLAGS:
        flags &= ~((unsigned)value & KDBG_USERFLAGS);
        break;
    case KERN_KDENABLE:
        if (value == 0) {
            changed = enabled != 0;
            enabled = 0;
        } else if ((value == KDEBUG_ENABLE_TRACE || value == KDEBUG_ENABLE_PPT) && bufinit) {
            /* kdbg_set_tracing_enabled: kdebug_enable |= trace_type. */
            changed = enabled == 0;
            enabled |= value;
        } else {
            e = EINVAL;
        }
        break;
    case KERN_KDSETBUF:
        /* kdbg_set_nkdbufs_trace(unsigned): a negative value is huge. */
        nkdbufs = (unsigned)value > MAX_EVENTS ? MAX_EVENTS : (unsigned)value;
        break;
    case KERN_KDSETUP: {
        /* kdbg_reinit: tracing off, the old buffer freed, KDBG_WRAPPED
         * cleared, a new one of whole storage units made (the count read
         * back rounded). */
        changed = enabled != 0;
        enabled = 0;
        free(ring);
        ring = NULL;
        capacity = head = count = 0;
        bufinit = false;
        lost = lost_next = false;
        live_flags &= ~KDBG_WRAPPED;
        size_t n = rounded_events(nkdbufs);
        simk_kd_buf *r = calloc(n, sizeof *r);
        if (r == NULL) {
            e = ENOSPC; /* create_buffers */
            break;
        }
        ring = r;
        capacity = n;
        nkdbufs = (unsigned)n;
        bufinit = true;
        break;
    }
    case KERN_KDREMOVE:
        /* ktrace_reset(KTRACE_KDEBUG) → kdbg_clear */
        changed = enabled != 0;
        clear_locked();
        reset_locked(SIMK_KTRACE_KDEBUG);
        break;
    case KERN_KDSETREG: {
        kd_regtype r;
        if (oldp == NULL || oldlenp == NULL || *oldlenp < sizeof r) {
            e = EINVAL;
            break;
        }
        memcpy(&r, oldp, sizeof r);
        /* kdbg_setreg: a range clears VALCHECK and the values clear
         * RANGECHECK; neither touches a typefilter, which goes first. */
        if (r.type == KDBG_CLASSTYPE) {
            range_beg = (r.value1 & 0xffu) << 24;
            range_end = (r.value2 & 0xffu) << 24;
            range_check = true;
            val_check = false;
        } else if (r.type == KDBG_SUBCLSTYPE) {
            range_beg = (r.value1 & 0xffu) << 24 | (r.value2 & 0xffu) << 16;
            /* KDBG_EVENTID masks the subclass: 0xff + 1 ends at 0, below
             * the start, and nothing passes. */
            range_end = (r.value1 & 0xffu) << 24 | (((r.value2 & 0xffu) + 1) & 0xffu) << 16;
            range_check = true;
            val_check = false;
        } else if (r.type == KDBG_RANGETYPE) {
            range_beg = r.value1;
            range_end = r.value2;
            range_check = true;
            val_check = false;
        } else if (r.type == KDBG_VALCHECK) {
            values[0] = r.value1;
            values[1] = r.value2;
            values[2] = r.value3;
            values[3] = r.value4;
            val_check = true;
            range_check = false;
        } else if (r.type == KDBG_TYPENONE) {
            range_check = val_check = false;
            range_beg = range_end = 0;
        } else {
            e = EINVAL;
        }
        break;
    }
    case KERN_KDSET_TYPEFILTER:
        /* kdbg_copyin_typefilter: the size first (EINVAL), then copyin
         * (EFAULT from a NULL buffer). */
        if (oldlenp == NULL || *oldlenp != TYPEFILTER_BYTES) {
            e = EINVAL;
            break;
        }
        if (oldp == NULL) {
            e = EFAULT;
            break;
        }
        /* kdbg_copyin_typefilter: DBG_TRACE's class always allowed;
         * kdbg_enable_typefilter clears RANGECHECK and VALCHECK. */
        memcpy(typefilter, oldp, TYPEFILTER_BYTES);
        memset(&typefilter[DBG_TRACE * 32], 0xff, 32);
        typefilter_check = true;
        range_check = val_check = false;
        break;
    case KERN_KDREADTR:
        if (oldlenp == NULL)
            e = EINVAL;
        else
            e = read_locked(oldp, oldlenp);
        break;
    case KERN_KDBUFWAIT:
        /* 1 once half of the buffer is used (the storage-unit threshold). */
        if (oldlenp != NULL)
            *oldlenp = units_used_locked() >= capacity / EVENTS_PER_UNIT / 2 ? 1 : 0;
        break;
    case KERN_KDGETREG:
        e = EINVAL;
        break;
    case 11:
    case 12:
    case 14:
    case 17:
    case 18:
    case 19:
    case 21: /* KDPIDTR .. READCURTHRMAP */
    case 24:
    case 25:
    case 26:
    case 27:
    case 28:        /* KDCPUMAP .. KDWRITETR_V3 */
        e = EINVAL; /* real operations, not simulated (a guess at what a client sees) */
        break;
    default:
        e = ENOTSUP; /* _kd_sysctl_internal: an operation it does not know */
    }
out:
    if (stopped) {
        stopped = false;
        changed = true;
    }
    pthread_mutex_unlock(&lock);
    /* The state file shows the buffer and the owner after every change. */
    if (changed || (e == 0 && op != KERN_KDREADTR && op != KERN_KDBUFWAIT))
        call_changed();
    return e;
}
