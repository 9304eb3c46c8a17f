/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_offcpu.c - off-CPU sampling on perf_event (DK_SAMPLING_OFF_CPU)
 * without a PMU and without BPF: at each site, beside the on-CPU events,
 * the context-switches software event sampled at period 1, which the
 * kernel takes as the thread switches out (its user call chain is where
 * the thread blocked), with attr.context_switch, which adds a
 * PERF_RECORD_SWITCH as it switches back in. A thread's switch-out sample
 * waits here until its switch-in; then one sample is delivered, off_cpu
 * set, period the ns in between, time_ns the switch-in (deliveries stay
 * oldest first). A switch-out by preemption (PERF_RECORD_MISC_SWITCH_OUT_
 * PREEMPT) leaves a runnable thread waiting for a CPU, not blocked: as
 * perf record --off-cpu (which does the same in BPF, tools/perf/util/
 * bpf_off_cpu.c) counts only sleeping threads, it is dropped. A thread
 * still blocked when sampling stops gets its stretch up to the stop, as
 * perf's BPF gives the time blocked up to the end of the record: the
 * first drain after the stop delivers it once the rings hold nothing
 * older (no switch-in of it can come after the disable).
 *
 * The event counts in kernel mode (the switch happens there: with
 * exclude_kernel it never fires), which perf_event_paranoid 2 allows only
 * with CAP_PERFMON: otherwise DK_EPERM says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "backend/perf_event/pe_sample.h"

int dk__ps_offcpu_open(const pe_session *k, const struct perf_event_attr *like, int pid, int cpu,
                       int ring_fd, bool on_exec)
{
    if (k->exclude_kernel)
        return dk__fail(DK_EPERM,
                        "off-CPU sampling (DK_SAMPLING_OFF_CPU) samples the context-switches "
                        "event where the kernel switches threads, which "
                        "kernel.perf_event_paranoid %d forbids without CAP_PERFMON: run as "
                        "root or sysctl kernel.perf_event_paranoid=1",
                        k->paranoid);
    static const pe_def def = {.type = PERF_TYPE_SOFTWARE,
                               .config = PERF_COUNT_SW_CONTEXT_SWITCHES};
    struct perf_event_attr a = *like;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
    a.freq = 0;
    a.sample_period = 1;
    a.exclude_kernel = 0;
    a.exclude_user = 0;
    a.exclude_hv = 0;
    a.context_switch = 1;
    a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 0;
    a.disabled = 1;
    a.enable_on_exec = on_exec;
    pe_target where = {.event = "context-switches", .def = &def, .pid = pid, .cpu = cpu};
    int fd = dk__pe_open_fd(k, &a, &where, -1);
    if (fd < 0)
        return fd;
    if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) != 0) {
        int rc = dk__fail_os(DK_EOS, errno,
                             "directing the context-switches samples into their ring buffer "
                             "failed");
        close(fd);
        return rc;
    }
    return fd;
}

/* The pending switch-out of tid, or where to put one (tid 0: free). */
static ps_blocked *slot(ps_state *st, uint32_t tid, bool add)
{
    if (add && (st->nblocked + 1) * 2 > st->blocked_cap) {
        size_t cap = st->blocked_cap ? st->blocked_cap * 2 : 16;
        ps_blocked *grown = calloc(cap, sizeof *grown);
        if (grown == NULL)
            return NULL;
        for (size_t i = 0; i < st->blocked_cap; i++) {
            ps_blocked *b = &st->blocked[i];
            if (b->tid == 0)
                continue;
            size_t j = b->tid & (cap - 1);
            while (grown[j].tid != 0)
                j = (j + 1) & (cap - 1);
            grown[j] = *b;
        }
        free(st->blocked);
        st->blocked = grown;
        st->blocked_cap = cap;
    }
    if (st->blocked_cap == 0)
        return NULL;
    size_t j = tid & (st->blocked_cap - 1);
    while (st->blocked[j].tid != 0 && st->blocked[j].tid != tid)
        j = (j + 1) & (st->blocked_cap - 1);
    if (st->blocked[j].tid == 0 && !add)
        return NULL;
    return &st->blocked[j];
}

/* Remove b, moving later entries of its run back so lookups still find them. */
static void unslot(ps_state *st, ps_blocked *b)
{
    size_t mask = st->blocked_cap - 1, i = (size_t)(b - st->blocked);
    free(b->frames);
    memset(b, 0, sizeof *b);
    st->nblocked--;
    for (size_t j = (i + 1) & mask; st->blocked[j].tid != 0; j = (j + 1) & mask) {
        size_t home = st->blocked[j].tid & mask;
        /* Move j back to i when i lies cyclically in [home, j). */
        if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
            st->blocked[i] = st->blocked[j];
            memset(&st->blocked[j], 0, sizeof st->blocked[j]);
            i = j;
        }
    }
}

int dk__ps_offcpu_blocked(ps_state *st, const dk_sample *x)
{
    if (x->tid == 0 || x->tid > UINT32_MAX)
        return 0; /* an idle task's: never ours */
    ps_blocked *b = slot(st, (uint32_t)x->tid, true);
    if (b == NULL)
        return -1;
    size_t n = x->n_frames + x->n_kernel_frames;
    uint64_t *frames = n > 0 ? malloc(n * sizeof *frames) : NULL;
    if (n > 0 && frames == NULL) {
        if (b->tid != 0)
            unslot(st, b);
        return -1;
    }
    if (b->tid == 0)
        st->nblocked++;
    free(b->frames);
    b->tid = (uint32_t)x->tid;
    b->sample = *x;
    b->frames = frames;
    if (n > 0) {
        memcpy(frames, x->frames, x->n_frames * sizeof *frames);
        memcpy(frames + x->n_frames, x->kernel_frames, x->n_kernel_frames * sizeof *frames);
    }
    return 0;
}

/* The off-CPU sample of b's stretch, ended at time; b is freed. */
static void deliver(ps_state *st, ps_blocked *b, uint64_t time, dk_sample *out)
{
    *out = b->sample;
    /* No frames kept (no call chain asked for): nothing to copy, and no
     * buffer to copy from. */
    if (b->frames != NULL) {
        memcpy(st->frames, b->frames, b->sample.n_frames * sizeof *st->frames);
        memcpy(st->kernel_frames, b->frames + b->sample.n_frames,
               b->sample.n_kernel_frames * sizeof *st->kernel_frames);
    }
    out->frames = st->frames;
    out->kernel_frames = st->kernel_frames;
    out->values = NULL;
    out->n_values = 0;
    out->event = 0;
    out->off_cpu = true;
    out->period = time > b->sample.time_ns ? time - b->sample.time_ns : 0;
    out->time_ns = time;
    unslot(st, b);
}

int dk__ps_offcpu_switch(ps_state *st, uint16_t misc, uint32_t tid, uint64_t time, dk_sample *out)
{
    ps_blocked *b = slot(st, tid, false);
    if (b == NULL)
        return 0;
    if (misc & PERF_RECORD_MISC_SWITCH_OUT) {
        /* Its own switch-out record after the sample: keep the sample
         * unless the thread was only preempted. */
        if (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
            unslot(st, b);
        return 0;
    }
    deliver(st, b, time, out);
    return 1;
}

struct ps_stopped {
    uint64_t time; /* the switch-out */
    uint32_t tid;
};

static int by_switch_out(const void *x, const void *y)
{
    const struct ps_stopped *a = x, *b = y;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static void forget_stop_order(ps_state *st)
{
    free(st->stop_order);
    st->stop_order = NULL;
    st->stop_n = st->stop_next = 0;
    st->stop_order_ns = 0;
}

int dk__ps_offcpu_stopped(ps_state *st, uint64_t stop_ns, dk_sample *out)
{
    if (st->stop_order_ns != stop_ns) {
        /* The threads blocked at this stop, sorted once (oldest first, as
         * the rings' records are delivered). */
        forget_stop_order(st);
        if (st->nblocked == 0)
            return 0;
        struct ps_stopped *order = malloc(st->nblocked * sizeof *order);
        size_t n = 0;
        for (size_t i = 0; order != NULL && i < st->blocked_cap; i++)
            if (st->blocked[i].tid != 0 && st->blocked[i].sample.time_ns <= stop_ns)
                order[n++] = (struct ps_stopped){st->blocked[i].sample.time_ns, st->blocked[i].tid};
        if (order != NULL)
            qsort(order, n, sizeof *order, by_switch_out);
        st->stop_order = order;
        st->stop_n = n;
        st->stop_order_ns = stop_ns;
    }
    if (st->stop_order == NULL) {
        /* Out of memory for the order: the oldest by a search each. */
        ps_blocked *oldest = NULL;
        for (size_t i = 0; i < st->blocked_cap; i++) {
            ps_blocked *b = &st->blocked[i];
            if (b->tid != 0 && b->sample.time_ns <= stop_ns &&
                (oldest == NULL || b->sample.time_ns < oldest->sample.time_ns))
                oldest = b;
        }
        if (oldest == NULL)
            return 0;
        deliver(st, oldest, stop_ns, out);
        return 1;
    }
    while (st->stop_next < st->stop_n) {
        ps_blocked *b = slot(st, st->stop_order[st->stop_next++].tid, false);
        if (b != NULL && b->sample.time_ns <= stop_ns) {
            deliver(st, b, stop_ns, out);
            return 1;
        }
    }
    forget_stop_order(st);
    return 0;
}

void dk__ps_offcpu_exit(ps_state *st, uint32_t tid)
{
    ps_blocked *b = slot(st, tid, false);
    if (b != NULL)
        unslot(st, b);
}

void dk__ps_offcpu_free(ps_state *st)
{
    forget_stop_order(st);
    for (size_t i = 0; i < st->blocked_cap; i++)
        free(st->blocked[i].frames);
    free(st->blocked);
    st->blocked = NULL;
    st->blocked_cap = st->nblocked = 0;
}
