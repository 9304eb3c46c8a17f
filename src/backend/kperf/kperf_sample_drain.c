/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_sample_drain.c - dk_sampling on kperf, the reading side: the
 * kdebug trace buffer read (KERN_KDREADTR), its records decoded into
 * samples (a thread's interrupt-time part joined with the user stack that
 * follows it), the processes named and their maps reported before their
 * first sample, exits delivered, lost records counted, and the kernel
 * found to have stopped tracing; wait reads, and blocks on KERN_KDBUFWAIT
 * in short slices between reads. See
 * kperf_sample.c for the set-up and tear-down.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/kperf/kperf_sample_state.h"

/* Read what the kernel has logged into k->buf, undecoded (the next drain
 * decodes it first). Returns 0 or the errno. */
static int read_ahead(ksamp *k)
{
    size_t len = READ_EVENTS * sizeof *k->buf;
    int e = dk__ks_kdebug(k, KERN_KDREADTR, 0, false, k->buf, &len);
    if (e != 0)
        return e;
    /* oldlen comes back as a number of records (kernel_debug_read). */
    k->pos = 0;
    k->len = len < READ_EVENTS ? len : READ_EVENTS;
    return 0;
}

/* Longest KERN_KDBUFWAIT between two reads, in ms. */
#define WAIT_SLICE_MS 20

int dk__kperf_sampling_wait(dk_sampling *p, int timeout_ms)
{
    ksamp *k = p->impl;
    /* KERN_KDBUFWAIT wakes only once the buffer is half full, or at its
     * timeout (bsd/kern/kdebug.c kdbg_wait): records logged before then
     * are not "ready" to it. So read (what comes is kept for the drain),
     * and wait in short slices between reads, until a record comes or the
     * timeout passes. */
    long left = timeout_ms; /* < 0: no timeout */
    for (;;) {
        /* The buffer read ahead is the drain's: under its lock, which is
         * not held while blocking, so that a drain from another thread
         * goes on meanwhile (a record it takes is found at the next look,
         * a slice later at most). Tried, not waited for: a drain holds it
         * through its callbacks, however long they take, and it is taking
         * what there is; the wait sleeps a slice and looks again. */
        int e = 0;
        bool looked = pthread_mutex_trylock(&p->drain_lock) == 0, ready = false;
        if (looked) {
            ready = k->pos < k->len;
            if (!ready) {
                e = read_ahead(k);
                ready = e == 0 && k->len > 0;
            }
            pthread_mutex_unlock(&p->drain_lock);
        }
        if (e != 0)
            return dk__ks_trace_fail("reading the trace buffer (KERN_KDREADTR)", e);
        if (ready)
            return 1;
        if (left == 0)
            return 0;
        size_t len = left < 0 || left > WAIT_SLICE_MS ? WAIT_SLICE_MS : (size_t)left;
        if (left > 0)
            left -= (long)len;
        if (!looked) {
            struct timespec ts = {0, (long)len * 1000000L};
            if (nanosleep(&ts, NULL) != 0)
                return 0; /* EINTR */
            continue;
        }
        e = dk__ks_kdebug(k, KERN_KDBUFWAIT, 0, false, NULL, &len);
        if (e == EINTR)
            return 0;
        if (e != 0)
            return dk__ks_trace_fail("waiting for trace records (KERN_KDBUFWAIT)", e);
    }
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

/* The entry of pid among the processes named, made (name "") when make;
 * NULL when not there, or out of memory (a name is a convenience: the
 * caller does without). */
static named_pid *named_of(ksamp *k, int pid, bool make)
{
    for (size_t i = 0; i < k->nnamed; i++)
        if (k->named[i].pid == pid)
            return &k->named[i];
    if (!make)
        return NULL;
    if (k->nnamed == k->named_cap) {
        size_t cap = k->named_cap ? k->named_cap * 2 : 16;
        named_pid *n = realloc(k->named, cap * sizeof *n);
        if (n == NULL)
            return NULL;
        k->named = n;
        k->named_cap = cap;
    }
    named_pid *e = &k->named[k->nnamed++];
    memset(e, 0, sizeof *e);
    e->pid = pid;
    return e;
}

/* pid's process is gone, or is a new image: its name and maps are asked
 * again at its next sample (a pid taken by a new process after the old
 * one's exit, during a long system-wide recording, is named anew). */
static void forget_pid(ksamp *k, int pid)
{
    named_pid *e = named_of(k, pid, false);
    if (e != NULL)
        *e = k->named[--k->nnamed];
    size_t w = 0;
    for (size_t i = 0; i < k->nmaps; i++)
        if (k->maps[i].pid != pid)
            k->maps[w++] = k->maps[i];
    k->nmaps = w;
    w = 0;
    for (size_t i = 0; i < k->npids; i++)
        if (k->pids[i] != pid)
            k->pids[w++] = k->pids[i];
    k->npids = w;
}

static void deliver_comm(drain_ctx *d, int pid, uint64_t time, const char *name, bool exec)
{
    dk_sample c;
    memset(&c, 0, sizeof c);
    c.kind = DK_SAMPLE_KIND_COMM;
    c.pid = pid;
    c.tid = (uint64_t)pid;
    if (d->p->opts.record & DK_SAMPLE_TIME)
        c.time_ns = time;
    c.comm = name;
    c.exec = exec;
    if (pid == d->k->pid)
        d->k->target_named = true;
    int rc = d->fn(d->ctx, &c);
    d->delivered++;
    if (rc != 0)
        d->stop = rc;
}

/* A COMM record for pid, the first time it is asked for: its name from
 * proc_pidinfo(PROC_PIDTBSDINFO), pbi_name (the executable's name, up to
 * 31 characters) or else pbi_comm (15). arg 1 finds a zombie too, so that
 * a short command drained after its exit is still named; a process
 * already reaped, or one the caller may not look at, gets no record.
 * exec: the name is looked up for an exec whose trace record had none. */
static void report_comm(drain_ctx *d, int pid, uint64_t time, bool exec)
{
    ksamp *k = d->k;
    if (pid <= 0 || d->stop != 0 || named_of(k, pid, false) != NULL)
        return;
    named_pid *e = named_of(k, pid, true);
    if (e == NULL || k->ls->proc_pidinfo == NULL)
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
    snprintf(e->name, sizeof e->name, "%s", name);
    deliver_comm(d, pid, time, e->name, exec);
}

/* TRACE_STRING_EXEC after its TRACE_DATA_EXEC: the process took a new
 * image, named in the record. Its maps are read anew, and the exec is a
 * COMM record marked exec even when the name stays (an exec of sh by sh):
 * a reader drops the old image's maps there. Only the target's, or every
 * process's without a pid filter. */
static void process_exec(drain_ctx *d, const kd_buf *r)
{
    ksamp *k = d->k;
    int pid = k->exec_pid;
    k->exec_pid = 0;
    if (pid <= 0 || r->arg5 != k->exec_tid || (k->pid != -1 && pid != k->pid))
        return;
    char name[33];
    const uint64_t w[4] = {r->arg1, r->arg2, r->arg3, r->arg4};
    memcpy(name, w, 32);
    name[32] = '\0';
    forget_pid(k, pid);
    uint64_t time = k->kp->kperf_ticks_to_ns(r->timestamp);
    if (name[0] == '\0') {
        report_comm(d, pid, time, true); /* named from proc_pidinfo */
        return;
    }
    named_pid *e = named_of(k, pid, true);
    if (e != NULL)
        snprintf(e->name, sizeof e->name, "%s", name);
    deliver_comm(d, pid, time, e != NULL ? e->name : name, true);
}

static void deliver(drain_ctx *d, slot *sl)
{
    ksamp *k = d->k;
    dk_sampling *p = d->p;
    dk_sample *s = &sl->s;
    sl->pending = false;
    if (d->stop != 0 || (k->tid != 0 && s->tid != k->tid))
        return;
    /* The PET thread samples every thread each period: the running ones
     * are the timer handlers' samples already; a runnable one only waits
     * for a CPU (preempted: perf's off-CPU time leaves it out, and so does
     * the perf_event backend); the others are blocked, off CPU. */
    bool off_cpu = sl->pet && (p->opts.flags & DK_SAMPLING_OFF_CPU);
    bool waits_for_cpu = (sl->runmode & (KPERF_TI_RUNNABLE | KPERF_TI_WAIT)) == KPERF_TI_RUNNABLE;
    if (sl->pet && (!off_cpu || (sl->runmode & KPERF_TI_RUNNING) || waits_for_cpu))
        return;
    /* The process's name before its first sample. */
    report_comm(d, s->pid, k->kp->kperf_ticks_to_ns(s->time_ns), false);
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
    out.event = off_cpu ? 0 : s->event;
    out.off_cpu = off_cpu;
    if (rec & DK_SAMPLE_TIME)
        out.time_ns = k->kp->kperf_ticks_to_ns(s->time_ns);
    if (rec & DK_SAMPLE_TID) {
        out.pid = s->pid;
        out.tid = s->tid;
    }
    if (rec & DK_SAMPLE_CPU)
        out.cpu = s->cpu;
    if (rec & DK_SAMPLE_PERIOD)
        out.period = off_cpu && k->pet_span_ns != 0 ? k->pet_span_ns
                                                    : k->period[off_cpu ? k->pet_event : s->event];
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
        dk__stat_add(&p->stats.samples, 1);
        if (rc != 0)
            d->stop = rc;
        return;
    }
    int rc = d->fn(d->ctx, &out);
    d->delivered++;
    dk__stat_add(&p->stats.samples, 1);
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
    /* A zombie still has its name. */
    report_comm(d, pid, k->kp->kperf_ticks_to_ns(r->timestamp), false);
    if (d->stop != 0)
        return;
    dk_sample x;
    memset(&x, 0, sizeof x);
    x.kind = DK_SAMPLE_KIND_EXIT;
    x.pid = pid;
    x.tid = r->arg5;
    if (d->p->opts.record & DK_SAMPLE_TIME)
        x.time_ns = k->kp->kperf_ticks_to_ns(r->timestamp);
    x.has_exit_status = true;
    x.exit_status = (int)r->arg2; /* p_xstat, the status wait4 reports */
    int rc = d->fn(d->ctx, &x);
    d->delivered++;
    if (rc != 0)
        d->stop = rc;
    /* The pid is free again: a process that takes it is another one. */
    forget_pid(k, pid);
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
    if (id == ID_TRACE_DATA_EXEC) {
        d->k->exec_pid = (int)r->arg1;
        d->k->exec_tid = r->arg5;
        return;
    }
    if (id == ID_TRACE_STRING_EXEC) {
        process_exec(d, r);
        return;
    }
    if (id == ID_LOST) {
        /* kdebug says only that records were overwritten, not how many:
         * each such mark counts as one. */
        dk__stat_add(&d->p->stats.lost, 1);
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
            bool pet = (r->arg4 & SAMPLE_FLAG_THREAD_ONLY) != 0;
            bool trig = sl->trig && !pet, kern = sl->trig_kernel;
            uint64_t pc = sl->trig_pc;
            memset(&sl->s, 0, sizeof sl->s);
            sl->have_stack = false;
            sl->pet = pet;
            sl->runmode = 0;
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
    case ID_TM_FIRE: {
        /* The PET timer's fire (is_pet): the span its samples stand for;
         * the first of a start's keeps the period. */
        if (r->arg2 == 0)
            return;
        uint64_t ns = k->kp->kperf_ticks_to_ns(r->timestamp);
        bool first = k->pet_fire == 0 || r->timestamp <= k->pet_fire;
        pthread_mutex_lock(&k->state_lock);
        size_t n = 0;
        while (n < k->pet_nstarts && k->pet_starts[n] <= ns)
            n++;
        if (n > 0) {
            k->pet_nstarts -= n;
            memmove(k->pet_starts, k->pet_starts + n, k->pet_nstarts * sizeof *k->pet_starts);
        }
        first = first || n > 0 || ns <= k->pet_blind_ns;
        pthread_mutex_unlock(&k->state_lock);
        k->pet_span_ns = first ? 0 : ns - k->kp->kperf_ticks_to_ns(k->pet_fire);
        k->pet_fire = r->timestamp;
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
        if (sl->block == BLOCK_INTR)
            sl->runmode = r->arg4;
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
    /* Stopped before anything is read: every record there will be is
     * logged by now, and no stack can come after the reads below. */
    pthread_mutex_lock(&k->state_lock);
    bool stopped = !k->enabled;
    pthread_mutex_unlock(&k->state_lock);
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
        int e = read_ahead(k);
        if (e != 0)
            return dk__ks_trace_fail("reading the trace buffer (KERN_KDREADTR)", e);
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
    /* Under state_lock: a stop from another thread disables the buffer
     * either before (enabled is false) or after this look. */
    kbufinfo b;
    memset(&b, 0, sizeof b);
    int e = 0;
    bool looked = false;
    if (!k->kernel_stopped && d.stop == 0) {
        pthread_mutex_lock(&k->state_lock);
        if (k->enabled) {
            size_t blen = sizeof b;
            e = dk__ks_kdebug(k, KERN_KDGETBUF, 0, false, &b, &blen);
            looked = true;
        }
        pthread_mutex_unlock(&k->state_lock);
    }
    if (looked) {
        if (e != 0)
            return dk__ks_trace_fail("checking that tracing is still on (KERN_KDGETBUF)", e);
        if (b.nolog != 0) {
            k->kernel_stopped = true;
            dk__stat_add(&p->stats.lost, 1);
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
    if (stopped)
        for (size_t i = 0; i < SLOTS && d.stop == 0; i++)
            if (k->slots[i].used && k->slots[i].pending) {
                deliver(&d, &k->slots[i]);
                k->slots[i].used = false;
            }
    /* The target is named even when none of its samples came. */
    if (stopped && k->pid > 0 && !k->target_named && d.stop == 0)
        report_comm(&d, k->pid, 0, false);
    return d.stop != 0 ? d.stop : d.delivered;
}
