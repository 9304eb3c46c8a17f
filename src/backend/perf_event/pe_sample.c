/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_sample.c - dk_sampling on perf_event: sampling events whose records
 * the kernel writes into mmap'd ring buffers, decoded and drained without
 * ever blocking the target (a full ring makes the kernel drop samples and
 * say how many in a PERF_RECORD_LOST, which stats.lost adds up).
 *
 * Where the events are opened (a "site" is one thread or CPU):
 *   THREAD    the thread (cpu -1), one ring.
 *   PROCESS   every thread /proc/<pid>/task lists at open (cpu -1), a ring
 *             each. Threads created later are sampled only with INHERIT.
 *   INHERIT   the kernel refuses mmap on an inherited per-task event with
 *             cpu -1 (perf_mmap(): all children would write to one ring),
 *             so, as perf record does, each thread gets one event per
 *             online CPU, and the events of every thread on a CPU write
 *             into that CPU's ring (PERF_EVENT_IOC_SET_OUTPUT): a ring per
 *             CPU, all of them drained.
 *   SYSTEM    pid -1 on every online CPU, a ring per CPU.
 * At each site the events form one group per core PMU (one group on all
 * but hybrid CPUs), the first event leading, so that PERF_SAMPLE_READ
 * gives the values of every event of the group in each sample. The first
 * leader of a site also asks for MMAP2, COMM and task (FORK/EXIT) records.
 *
 * Period and frequency: attr.sample_period, or attr.freq with sample_freq
 * (the kernel adjusts the period to reach it). Both 0: 4000 samples a
 * second for every event, perf record's default.
 *
 * Times are CLOCK_MONOTONIC (use_clockid), comparable with clock_gettime.
 * Records always carry PERF_SAMPLE_IDENTIFIER (which event) and TIME
 * (drains merge the rings oldest first); the other fields as asked.
 * DK_SAMPLING_OFF_CPU adds a context-switches event at each site
 * (pe_offcpu.c).
 * Call chains are user-mode only (exclude_callchain_kernel) unless
 * DK_SAMPLE_KERNEL_CALLCHAIN asks for the kernel's part too: it costs ring
 * space, and only a reader of kernel symbols can use it.
 *
 * This file opens, starts, stops and closes; pe_sample_read.c decodes and
 * drains the rings and waits on them.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


#include "backend/perf_event/pe_sample.h"

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */
/* ------------------------------------------------------------------------ */

static int process_of(int tid);

static const char *event_label(const dk_sampling *p, size_t i)
{
    const char *name = i < p->n ? dk__sampling_label(p, i) : NULL;
    return name != NULL ? name : "?";
}

static int add_fd(ps_state *st, int fd, bool leader)
{
    if (st->nfds == st->fds_cap) {
        size_t cap = st->fds_cap ? st->fds_cap * 2 : 16;
        ps_fd *grown = realloc(st->fds, cap * sizeof *grown);
        if (grown == NULL)
            return dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
        st->fds = grown;
        st->fds_cap = cap;
    }
    st->fds[st->nfds].fd = fd;
    st->fds[st->nfds].leader = leader;
    st->nfds++;
    return 0;
}

static int add_id(ps_state *st, int fd, size_t event, const char *label)
{
    uint64_t id;
    if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
        return dk__fail_os(DK_EOS, errno, "PERF_EVENT_IOC_ID for event %s failed", label);
    if (st->nids == st->ids_cap) {
        size_t cap = st->ids_cap ? st->ids_cap * 2 : 16;
        ps_id *grown = realloc(st->ids, cap * sizeof *grown);
        if (grown == NULL)
            return dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
        st->ids = grown;
        st->ids_cap = cap;
    }
    st->ids[st->nids].id = id;
    st->ids[st->nids].event = event;
    st->nids++;
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = ((const ps_id *)a)->id, y = ((const ps_id *)b)->id;
    return x < y ? -1 : x > y;
}

size_t dk__ps_event_of(const ps_state *st, uint64_t id)
{
    size_t lo = 0, hi = st->nids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->ids[mid].id == id)
            return st->ids[mid].event;
        if (st->ids[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return SIZE_MAX;
}

static unsigned read_uint_file(const char *path, unsigned fallback)
{
    char text[32];
    const char *q = text;
    uint64_t v;
    if (dk__pe_read_text(path, text, sizeof text) != 0 || !dk__pe_parse_decimal(&q, UINT_MAX, &v))
        return fallback;
    return (unsigned)v;
}

/* The data size of each of nrings rings for buffer_bytes: whole pages, a
 * power of two of them, as the kernel requires. By default
 * DEFAULT_RING_BYTES, or for an unprivileged caller less, so that the rings
 * fit in kernel.perf_event_mlock_kb together (beyond it they count against
 * RLIMIT_MEMLOCK, often small). */
static size_t ring_bytes(size_t asked, size_t page, size_t nrings)
{
    size_t want = asked == 0 ? DEFAULT_RING_BYTES : asked;
    if (want > MAX_RING_BYTES)
        want = MAX_RING_BYTES;
    if (asked == 0 && geteuid() != 0) {
        size_t budget = (size_t)read_uint_file("/proc/sys/kernel/perf_event_mlock_kb", 516) * 1024;
        size_t each = budget / (nrings > 0 ? nrings : 1);
        size_t fit = page;
        while (fit * 2 + page <= each)
            fit *= 2;
        if (fit < want)
            want = fit;
    }
    size_t size = page;
    while (size < want)
        size *= 2;
    return size;
}

static int map_ring(ps_state *st, const pe_session *k, int fd, size_t data_bytes, size_t page,
                    const char *where)
{
    size_t bytes = page + data_bytes;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int e = errno;
        char kb[32];
        if (dk__pe_read_text("/proc/sys/kernel/perf_event_mlock_kb", kb, sizeof kb) != 0)
            snprintf(kb, sizeof kb, "?");
        if (e == EPERM || e == ENOMEM)
            return dk__fail_os(e == EPERM ? DK_EPERM : DK_ENOMEM, e,
                               "mapping the %zu-byte sample ring buffer of %s failed: rings "
                               "beyond kernel.perf_event_mlock_kb (%s KiB per user) count "
                               "against RLIMIT_MEMLOCK; give a smaller buffer_bytes, raise "
                               "the limits, or use CAP_IPC_LOCK (perf_event_paranoid %d)",
                               data_bytes, where, kb, k->paranoid);
        return dk__fail_os(DK_EOS, e, "mapping the sample ring buffer of %s failed", where);
    }
    ps_ring *r = &st->rings[st->nrings++];
    r->page = m;
    r->map_bytes = bytes;
    r->data = (const unsigned char *)m + page;
    r->size = data_bytes;
    r->fd = fd;
    return 0;
}

/* The threads of pid, from /proc/<pid>/task. */
static int list_threads(int pid, int **out, size_t *n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    *out = NULL;
    *n = 0;
    DIR *d = opendir(path);
    if (d == NULL)
        return dk__fail_os(DK_EOS, errno, "dk_sampling_open: there is no process %d (%s)", pid,
                           path);
    int *tids = NULL;
    size_t cap = 0, count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *q = e->d_name;
        uint64_t tid;
        if (!dk__pe_parse_decimal(&q, INT_MAX, &tid) || *q != '\0')
            continue;
        if (count == cap) {
            size_t grown_cap = cap ? cap * 2 : 8;
            int *grown = realloc(tids, grown_cap * sizeof *grown);
            if (grown == NULL) {
                free(tids);
                closedir(d);
                return dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
            }
            tids = grown;
            cap = grown_cap;
        }
        tids[count++] = (int)tid;
    }
    closedir(d);
    if (count == 0) {
        free(tids);
        return dk__fail(DK_EOS, "dk_sampling_open: process %d has no threads left", pid);
    }
    *out = tids;
    *n = count;
    return 0;
}

/* Fill the sampling part of every planned attr. */
static int configure(dk_sampling *p, const pe_session *k, const pe_def *const *defs,
                     struct perf_event_attr *attrs, const size_t *events, size_t m,
                     uint64_t sample_type, uint64_t read_format, unsigned max_stack,
                     size_t data_bytes)
{
    const dk_sampling_options *o = &p->opts;
    bool system = o->scope == DK_SCOPE_SYSTEM;
    unsigned max_rate = read_uint_file(MAX_RATE_FILE, 0);
    for (size_t j = 0; j < m; j++) {
        struct perf_event_attr *a = &attrs[j];
        size_t i = events[j];
        const dk_sampling_event *ev = &p->asked[i];
        if (ev->period >> 63) {
            return dk__fail(DK_EINVAL, "event %s: a period of %llu is beyond the kernel's 63 bits",
                            event_label(p, i), (unsigned long long)ev->period);
        } else if (ev->period != 0) {
            a->sample_period = ev->period;
            p->period[i] = ev->period;
        } else {
            uint64_t freq = ev->freq != 0 ? ev->freq : DEFAULT_FREQ;
            if (max_rate != 0 && freq > max_rate)
                return dk__fail(DK_EINVAL,
                                "event %s: %llu samples a second is above "
                                "kernel.perf_event_max_sample_rate (%u): ask for less, give a "
                                "period, or raise the sysctl",
                                event_label(p, i), (unsigned long long)freq, max_rate);
            a->freq = 1;
            a->sample_freq = freq;
            p->freq[i] = freq;
        }
        a->sample_type = sample_type;
        a->read_format = read_format;
        a->sample_id_all = 1;
        a->use_clockid = 1;
        a->clockid = CLOCK_MONOTONIC;
        dk__pe_apply_exclusions(k, a, defs[i]->exclude);
        a->exclude_callchain_kernel = (p->opts.record & DK_SAMPLE_KERNEL_CALLCHAIN) == 0;
        if (sample_type & PERF_SAMPLE_CALLCHAIN)
            a->sample_max_stack = (uint16_t)max_stack;
        a->inherit = !system && (o->flags & DK_SAMPLING_INHERIT) != 0;
        /* Wake a waiter when a quarter of the ring is full. */
        a->watermark = 1;
        a->wakeup_watermark = (uint32_t)(data_bytes / 4 > 0 ? data_bytes / 4 : 1);
    }
    return 0;
}

int dk__pe_sampling_open(dk_sampling *p)
{
    dk_sampler *s = p->sampler;
    const pe_session *k = s->impl;
    const dk_sampling_options *o = &p->opts;
    bool system = o->scope == DK_SCOPE_SYSTEM;
    bool inherit = !system && (o->flags & DK_SAMPLING_INHERIT) != 0;
    bool on_exec = (o->flags & DK_SAMPLING_ENABLE_ON_EXEC) != 0;
    if (system && on_exec)
        return dk__fail(DK_EINVAL, "dk_sampling_open: DK_SAMPLING_ENABLE_ON_EXEC needs a thread "
                                   "or process scope, not every CPU");
    bool off_cpu = (o->flags & DK_SAMPLING_OFF_CPU) != 0;
    if (system && off_cpu)
        return dk__fail(DK_ENOTSUP, "dk_sampling_open: off-CPU sampling (DK_SAMPLING_OFF_CPU) "
                                    "follows the threads of a process or one thread, not every "
                                    "CPU");

    pe_def defs_store[DK_MAX_EVENTS];
    const pe_def *defs[DK_MAX_EVENTS];
    for (size_t i = 0; i < p->n; i++) {
        if (p->events[i] == NULL) { /* "timer": the CPU clock */
            memset(&defs_store[i], 0, sizeof defs_store[i]);
            defs_store[i].type = PERF_TYPE_SOFTWARE;
            defs_store[i].config = PERF_COUNT_SW_CPU_CLOCK;
            defs_store[i].exclude = 0;
        } else {
            int rc = dk__pe_def_with_mode(s, p->events[i], p->mode[i], event_label(p, i),
                                          &defs_store[i]);
            if (rc != 0)
                return rc;
        }
        defs[i] = &defs_store[i];
    }

    uint64_t sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME;
    if (o->record & DK_SAMPLE_IP)
        sample_type |= PERF_SAMPLE_IP;
    if ((o->record & DK_SAMPLE_TID) || off_cpu) /* off-CPU: whose switch it is */
        sample_type |= PERF_SAMPLE_TID;
    if (o->record & DK_SAMPLE_CPU)
        sample_type |= PERF_SAMPLE_CPU;
    if (o->record & DK_SAMPLE_PERIOD)
        sample_type |= PERF_SAMPLE_PERIOD;
    if (o->record & DK_SAMPLE_CALLCHAIN)
        sample_type |= PERF_SAMPLE_CALLCHAIN;
    uint64_t read_format = 0;
    if (o->record & DK_SAMPLE_READ) {
        sample_type |= PERF_SAMPLE_READ;
        read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
        /* Inherited events give their values per thread (Linux 6.12+),
         * which needs the thread in the sample. */
        if (inherit)
            sample_type |= PERF_SAMPLE_TID;
    }
    unsigned kernel_stack = read_uint_file(MAX_STACK_FILE, 127);
    unsigned max_stack = o->max_frames != 0 ? o->max_frames : kernel_stack;
    if (max_stack > kernel_stack)
        max_stack = kernel_stack; /* more is EOVERFLOW; truncated says when it bites */
    if (max_stack > UINT16_MAX)
        max_stack = UINT16_MAX;
    if (max_stack == 0)
        max_stack = 1;

    long page_l = sysconf(_SC_PAGESIZE);
    size_t page = page_l > 0 ? (size_t)page_l : 4096;

    /* Where: CPUs (or -1) and threads (or -1). */
    int *cpus = NULL, *tids = NULL;
    size_t ncpus = 1, ntids = 1;
    ps_state *st = NULL;
    struct perf_event_attr *attrs = NULL;
    int rc = 0;
    cpus = calloc(system || inherit ? MAX_CPUS : 1, sizeof *cpus);
    if (cpus == NULL) {
        rc = dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
        goto fail;
    }
    if (system || inherit) {
        rc = dk__pe_online_cpus(cpus, MAX_CPUS, &ncpus);
        if (rc != 0)
            goto fail;
    } else {
        cpus[0] = -1;
    }
    if (system) {
        tids = malloc(sizeof *tids);
        if (tids == NULL) {
            rc = dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
            goto fail;
        }
        tids[0] = -1;
    } else if (o->scope == DK_SCOPE_THREAD) {
        tids = malloc(sizeof *tids);
        if (tids == NULL) {
            rc = dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
            goto fail;
        }
        tids[0] = o->pid != 0 ? o->pid : (int)syscall(SYS_gettid);
    } else {
        rc = list_threads(o->pid != 0 ? o->pid : (int)getpid(), &tids, &ntids);
        if (rc != 0)
            goto fail;
    }

    st = calloc(1, sizeof *st);
    attrs = calloc((size_t)DK_MAX_EVENTS * DK__PE_CORE_PMUS_MAX, sizeof *attrs);
    if (st == NULL || attrs == NULL) {
        free(st);
        st = NULL;
        rc = dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
        goto fail;
    }
    pthread_mutex_init(&st->drain_lock, NULL);
    pthread_mutex_init(&st->wait_lock, NULL);
    st->sample_type = sample_type;
    st->max_stack = max_stack;
    size_t nrings_max = cpus[0] >= 0 ? ncpus : ntids;
    size_t data_bytes = ring_bytes(o->buffer_bytes, page, nrings_max);
    st->rings = calloc(nrings_max, sizeof *st->rings);
    st->polls = calloc(nrings_max, sizeof *st->polls);
    st->scratch = malloc(RECORD_MAX);
    st->frames = malloc((size_t)max_stack * sizeof *st->frames);
    st->kernel_frames = malloc((size_t)max_stack * sizeof *st->kernel_frames);
    if (st->rings == NULL || st->polls == NULL || st->scratch == NULL || st->frames == NULL ||
        st->kernel_frames == NULL) {
        rc = dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
        goto fail;
    }

    size_t events[DK_MAX_EVENTS * DK__PE_CORE_PMUS_MAX], keys[DK_MAX_EVENTS * DK__PE_CORE_PMUS_MAX];
    size_t m = dk__pe_plan(k->core_types, k->core_count, defs, p->n, attrs, events, keys);
    rc = configure(p, k, defs, attrs, events, m, sample_type, read_format, max_stack, data_bytes);
    if (rc != 0)
        goto fail;

    /* ring_of[c]: the ring fd of CPU c's index (per-CPU rings). */
    int *ring_of = NULL;
    if (cpus[0] >= 0) {
        ring_of = malloc(ncpus * sizeof *ring_of);
        if (ring_of == NULL) {
            rc = dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
            goto fail;
        }
        for (size_t c = 0; c < ncpus; c++)
            ring_of[c] = -1;
    }
    size_t opened_threads = 0;
    for (size_t t = 0; t < ntids && rc == 0; t++) {
        size_t fds_before = st->nfds, ids_before = st->nids, rings_before = st->nrings;
        bool gone = false;
        for (size_t c = 0; c < ncpus && rc == 0 && !gone; c++) {
            int site_ring = cpus[0] >= 0 ? ring_of[c] : -1;
            bool tracked = false;
            for (size_t key = 0; key < DK__PE_CORE_PMUS_MAX && rc == 0 && !gone; key++) {
                int leader = -1;
                for (size_t j = 0; j < m && rc == 0; j++) {
                    if (keys[j] != key)
                        continue;
                    struct perf_event_attr a = attrs[j];
                    bool lead = leader < 0;
                    a.disabled = lead;
                    a.enable_on_exec = lead && on_exec;
                    if (lead && !tracked) {
                        a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 1;
                        tracked = true;
                    }
                    pe_target where = {.event = event_label(p, events[j]),
                                       .def = defs[events[j]],
                                       .pid = tids[t],
                                       .cpu = cpus[c],
                                       .sibling = !lead};
                    int fd = dk__pe_open_fd(k, &a, &where, leader);
                    if (fd < 0) {
                        int e = errno;
                        if (e == ESRCH && o->scope == DK_SCOPE_PROCESS && ntids > 1) {
                            gone = true; /* the thread exited since it was listed */
                            break;
                        }
                        rc = fd;
                        if (system && rc == DK_EPERM)
                            rc = dk__fail_os(DK_EPERM, e,
                                             "sampling every CPU needs CAP_PERFMON (or "
                                             "CAP_SYS_ADMIN) or kernel.perf_event_paranoid at 0 "
                                             "or below (it is %d): run as root or "
                                             "sysctl kernel.perf_event_paranoid=0",
                                             k->paranoid);
                        else if (e == EINVAL && a.inherit && (a.sample_type & PERF_SAMPLE_READ))
                            rc = dk__fail_os(DK_ENOTSUP, e,
                                             "event %s: the values of every event in each "
                                             "sample (DK_SAMPLE_READ) of inherited events "
                                             "(DK_SAMPLING_INHERIT) need Linux 6.12 or later; "
                                             "this kernel refused them: drop one of the two",
                                             where.event);
                        else if (rc == DK_EUNAVAILABLE && e == EINVAL && a.freq)
                            rc = dk__fail_os(DK_EUNAVAILABLE, e,
                                             "the kernel refused to sample event %s at %llu "
                                             "Hz: give a period instead or a lower "
                                             "frequency",
                                             where.event, (unsigned long long)a.sample_freq);
                        break;
                    }
                    rc = add_fd(st, fd, lead);
                    if (rc != 0) {
                        close(fd);
                        break;
                    }
                    rc = add_id(st, fd, events[j], where.event);
                    if (rc != 0)
                        break;
                    if (site_ring < 0) {
                        char what[64];
                        if (cpus[c] >= 0)
                            snprintf(what, sizeof what, "CPU %d", cpus[c]);
                        else
                            snprintf(what, sizeof what, "thread %d", tids[t]);
                        rc = map_ring(st, k, fd, data_bytes, page, what);
                        if (rc != 0)
                            break;
                        site_ring = fd;
                        if (ring_of != NULL)
                            ring_of[c] = fd;
                    } else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, site_ring) != 0) {
                        rc = dk__fail_os(DK_EOS, errno,
                                         "directing the samples of event %s into its ring "
                                         "buffer failed",
                                         where.event);
                        break;
                    }
                    if (lead)
                        leader = fd;
                }
            }
            if (off_cpu && rc == 0 && !gone) {
                int fd = dk__ps_offcpu_open(k, &attrs[0], tids[t], cpus[c], site_ring, on_exec);
                if (fd < 0) {
                    rc = fd;
                } else if ((rc = add_fd(st, fd, true)) != 0) {
                    close(fd);
                } else {
                    rc = add_id(st, fd, PS_OFF_CPU_EVENT, "context-switches");
                }
            }
        }
        if (gone) {
            /* Undo this thread's events; rings it created are its own (cpu -1). */
            while (st->nrings > rings_before) {
                ps_ring *r = &st->rings[--st->nrings];
                for (size_t c = 0; ring_of != NULL && c < ncpus; c++)
                    if (ring_of[c] == r->fd)
                        ring_of[c] = -1;
                munmap(r->page, r->map_bytes);
            }
            while (st->nfds > fds_before)
                close(st->fds[--st->nfds].fd);
            st->nids = ids_before;
            continue;
        }
        if (rc == 0)
            opened_threads++;
    }
    free(ring_of);
    if (rc == 0 && opened_threads == 0)
        rc = dk__fail(DK_EOS, "dk_sampling_open: every thread of process %d exited", o->pid);
    if (rc != 0)
        goto fail;
    qsort(st->ids, st->nids, sizeof *st->ids, cmp_id);
    for (size_t r = 0; r < st->nrings; r++) {
        st->polls[r].fd = st->rings[r].fd;
        st->polls[r].events = POLLIN;
    }
    st->exec_pending = on_exec;
    /* A target that runs already: its maps are read at the first start.
     * (An exec brings MAP records for everything; every CPU is too much.) */
    if (!on_exec && !system) {
        int target = o->pid != 0 ? o->pid : (int)getpid();
        st->maps_pid = o->scope == DK_SCOPE_THREAD ? process_of(target) : target;
    }
    free(attrs);
    free(cpus);
    free(tids);
    p->impl = st;
    return 0;

fail:
    if (st != NULL) {
        p->impl = st;
        dk__pe_sampling_close(p);
        p->impl = NULL;
    }
    free(attrs);
    free(cpus);
    free(tids);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Start, stop, close                                                        */
/* ------------------------------------------------------------------------ */

/* The process a thread belongs to (Tgid in /proc/<tid>/status); tid itself
 * when that cannot be read. */
static int process_of(int tid)
{
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%d/status", tid);
    FILE *f = fopen(path, "re");
    int pid = tid;
    if (f == NULL)
        return pid;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "Tgid:", 5) == 0) {
            pid = atoi(line + 5);
            break;
        }
    fclose(f);
    return pid > 0 ? pid : tid;
}

/* A running thread's /proc/PID/task/TID/maps, for a process whose first
 * thread has ended: its /proc/PID/maps then read empty while the others
 * run on in the same memory. NULL when there is none. */
static FILE *thread_maps(int pid)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return NULL;
    FILE *f = NULL;
    struct dirent *de;
    while (f == NULL && (de = readdir(d)) != NULL) {
        char *end;
        long t = strtol(de->d_name, &end, 10);
        if (end == de->d_name || *end != '\0' || t <= 0 || t == pid || t > 0x7fffffffL)
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%ld/maps", pid, t);
        f = fopen(path, "re");
        int c = f != NULL ? fgetc(f) : EOF;
        if (c != EOF)
            ungetc(c, f);
        else if (f != NULL) {
            fclose(f);
            f = NULL;
        }
    }
    closedir(d);
    return f;
}

/* The executable mappings of pid now, for MAP records ahead of the ring's. */
static int read_maps(ps_state *st, int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        int e = errno;
        if (e == ENOENT || e == ESRCH)
            return 0; /* gone: its exit record says so */
        return dk__fail_os(e == ENOMEM                  ? DK_ENOMEM
                           : e == EMFILE || e == ENFILE ? DK_ETOOMANY
                                                        : DK_EOS,
                           e,
                           "dk_sampling_start: reading %s, for the images already mapped, "
                           "failed",
                           path);
    }
    int c = fgetc(f);
    if (c != EOF)
        ungetc(c, f);
    else {
        fclose(f);
        if ((f = thread_maps(pid)) == NULL)
            return 0; /* no thread left, or none that maps anything */
    }
    /* Built aside and published by one store of nmaps: a drain from
     * another thread may look at them while this start runs. */
    uint64_t when = dk__now_ns();
    ps_map *maps = NULL;
    size_t nmaps = 0, cap = 0;
    char line[4352];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        unsigned long long lo, hi, off;
        char perms[8];
        int end = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &lo, &hi, perms, &off, &end) < 4 ||
            end == 0 || strchr(perms, 'x') == NULL || hi <= lo)
            continue;
        const char *name = line + end;
        while (*name == ' ' || *name == '\t')
            name++;
        size_t len = strcspn(name, "\n");
        if (len == 0)
            continue; /* anonymous code (a JIT): no image */
        if (nmaps == cap) {
            size_t grown_cap = cap ? cap * 2 : 32;
            ps_map *grown = realloc(maps, grown_cap * sizeof *grown);
            if (grown == NULL) {
                rc = dk__fail(DK_ENOMEM, "dk_sampling_start: out of memory");
                break;
            }
            maps = grown;
            cap = grown_cap;
        }
        char *copy = malloc(len + 1);
        if (copy == NULL) {
            rc = dk__fail(DK_ENOMEM, "dk_sampling_start: out of memory");
            break;
        }
        memcpy(copy, name, len);
        copy[len] = '\0';
        ps_map *m = &maps[nmaps++];
        m->start = lo;
        m->len = hi - lo;
        m->pgoff = off;
        m->path = copy;
    }
    fclose(f);
    if (rc != 0) {
        for (size_t i = 0; i < nmaps; i++)
            free(maps[i].path);
        free(maps);
        return rc;
    }
    st->maps = maps;
    st->maps_time = when;
    __atomic_store_n(&st->nmaps, nmaps, __ATOMIC_RELEASE);
    return 0;
}

static int ioctl_leaders(ps_state *st, unsigned long request, const char *what)
{
    int rc = 0;
    for (size_t i = 0; i < st->nfds; i++)
        if (st->fds[i].leader && ioctl(st->fds[i].fd, request, PERF_IOC_FLAG_GROUP) != 0 && rc == 0)
            rc = dk__fail_os(DK_EOS, errno, "%s sampling failed", what);
    return rc;
}

int dk__pe_sampling_start(dk_sampling *p)
{
    ps_state *st = p->impl;
    if (st->exec_pending) {
        st->exec_pending = false; /* the kernel enables the events at the exec */
        return 0;
    }
    int rc = ioctl_leaders(st, PERF_EVENT_IOC_ENABLE, "enabling");
    /* After the enable: what is mapped later comes as MMAP2 records. */
    if (rc == 0 && st->maps_pid > 0 && !st->maps_read) {
        rc = read_maps(st, st->maps_pid);
        st->maps_read = rc == 0;
    }
    if (rc != 0)
        (void)ioctl_leaders(st, PERF_EVENT_IOC_DISABLE, "disabling");
    return rc;
}

int dk__pe_sampling_stop(dk_sampling *p)
{
    ps_state *st = p->impl;
    int rc = ioctl_leaders(st, PERF_EVENT_IOC_DISABLE, "disabling");
    /* After the disable: every switch before it is in the rings (for the
     * off-CPU stretches still open; pe_offcpu.c). */
    if (rc == 0)
        __atomic_store_n(&st->stopped_ns, dk__now_ns(), __ATOMIC_RELEASE);
    return rc;
}

void dk__pe_sampling_close(dk_sampling *p)
{
    ps_state *st = p->impl;
    if (st == NULL)
        return;
    for (size_t r = 0; r < st->nrings; r++)
        munmap(st->rings[r].page, st->rings[r].map_bytes);
    for (size_t i = st->nfds; i-- > 0;)
        close(st->fds[i].fd);
    pthread_mutex_destroy(&st->drain_lock);
    pthread_mutex_destroy(&st->wait_lock);
    free(st->fds);
    free(st->ids);
    free(st->rings);
    free(st->polls);
    free(st->scratch);
    free(st->frames);
    free(st->kernel_frames);
    dk__ps_offcpu_free(st);
    for (size_t i = 0; i < st->nmaps; i++)
        free(st->maps[i].path);
    free(st->maps);
    free(st);
    p->impl = NULL;
}
