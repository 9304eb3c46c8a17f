/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * perf_event.c - the Linux backend: perf_event_open(2).
 *
 * A thread sampler is one event group on the calling thread, read with
 * DK__PE_READ_FORMAT (perf_event.h); counts are scaled when the kernel
 * time-shared the counters. Hybrid CPUs (several core PMUs) get one
 * instance of each generic hardware event per core PMU, grouped per PMU,
 * and the instances are summed. When every counter of a group can be read
 * from userspace (rdpmc), reads skip the system call.
 *
 * This file holds the backend table, the sampler session, opening a counter
 * with its failure explained and thread samplers; pe_internal.h lists the
 * others (events, specs, sysfs, groups) and holds the system call's wrapper.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend/perf_event/pe_internal.h"
#include "backend/perf_event/perf_mmap.h"
#include "events/tables.h"

#define INSTANCES_MAX (DK_MAX_EVENTS * DK__PE_CORE_PMUS_MAX)
#define GROUPS_MAX INSTANCES_MAX /* a group per counter when the kernel will not group them */

/* One opened counter. */
typedef struct pe_counter {
    int fd;
    uint64_t id;
    size_t event; /* caller's index */
    size_t group;
    struct perf_event_mmap_page *page; /* for userspace reads; NULL when none */
} pe_counter;

typedef struct pe_group {
    int leader_fd;
    size_t first, count; /* counters[first .. first + count) */
    bool hardware;       /* it holds an event of a core PMU */
} pe_group;

typedef struct pe_thread {
    dk__pmc_set set; /* the fast path's counters (pe_read_user), first for locality */
    pe_counter counters[INSTANCES_MAX];
    size_t ncounters;
    pe_group groups[GROUPS_MAX];
    size_t ngroups;
    const dk__pmc_ops *pmc; /* userspace reads for a single all-hardware group */
    bool simple;            /* one group whose counters are the events, in order */
    size_t simple_size;     /* bytes of its read() */
    uint64_t buf[DK__PE_READ_WORDS(INSTANCES_MAX)];
} pe_thread;

/* ------------------------------------------------------------------------ */
/* perf_event_open                                                           */
/* ------------------------------------------------------------------------ */

bool dk__pe_hardware_type(const pe_session *k, uint32_t type)
{
    if (type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW)
        return true;
    for (size_t i = 0; i < k->core_count; i++)
        if (k->core_types[i] == type)
            return true;
    return false;
}

int dk__pe_fail_open(const char *event, bool hardware, bool have_pmu, int paranoid, int e,
                     bool sibling)
{
    switch (e) {
    case EACCES:
    case EPERM:
        return dk__fail_os(DK_EPERM, e,
                           "event %s was refused (kernel.perf_event_paranoid is %d): it needs "
                           "CAP_PERFMON or a lower perf_event_paranoid",
                           event, paranoid);
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        if (hardware && !have_pmu)
            return dk__fail_os(DK_EUNAVAILABLE, e,
                               "event %s is not supported here: no hardware PMU is visible (no "
                               "cpu PMU in " DK__PE_SYSFS_DEVICES
                               "; virtual machines often have none)",
                               event);
        return dk__fail_os(DK_EUNAVAILABLE, e, "event %s is not supported by this kernel or CPU",
                           event);
    case EINVAL:
        if (sibling)
            return dk__fail_os(DK_ECONFLICT, e,
                               "event %s cannot be counted in one group with the "
                               "events before it",
                               event);
        return dk__fail_os(DK_EUNAVAILABLE, e, "the kernel refused the attributes of event %s",
                           event);
    case EMFILE: {
        /* One file per event on each CPU or thread: a low limit is met soon. */
        struct rlimit rl;
        long limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                         ? (long)rl.rlim_cur
                         : -1;
        return dk__fail_os(DK_ETOOMANY, e,
                           "event %s: too many counters open: each takes a file "
                           "descriptor per CPU or thread; raise the open-file "
                           "limit (ulimit -n, now %ld) or count fewer events, "
                           "CPUs or threads",
                           event, limit);
    }
    case ENFILE:
    case ENOSPC:
        return dk__fail_os(DK_ETOOMANY, e, "event %s: too many counters open", event);
    case EBUSY:
        return dk__fail_os(DK_EBUSY, e,
                           "event %s: its counter is held exclusively by another "
                           "user",
                           event);
    default:
        return dk__fail_os(DK_EOS, e, "perf_event_open for event %s failed", event);
    }
}

int dk__pe_open_fd(const pe_session *k, struct perf_event_attr *attr, const pe_target *where,
                   int group_fd)
{
    int fd = dk__pe_syscall(attr, where->pid, where->cpu, group_fd);
    if (fd >= 0)
        return fd;
    int e = errno, rc;
    if (e == EINVAL && where->sibling && where->quiet_einval)
        rc = DK_ECONFLICT;
    else if (where->pid == -1 && (e == EACCES || e == EPERM))
        rc = dk__fail_os(DK_EPERM, e,
                         "counting every CPU needs CAP_PERFMON or kernel.perf_event_paranoid "
                         "at 0 or below (it is %d)",
                         k->paranoid);
    else if (where->pid > 0 && where->pid != getpid() && (e == EACCES || e == EPERM))
        rc = dk__fail_os(DK_EPERM, e,
                         "counting process %d (event %s) was refused: another user's process "
                         "needs CAP_PERFMON or CAP_SYS_PTRACE (perf_event_open checks ptrace read "
                         "access), and kernel.perf_event_paranoid is %d (above 1 also refuses "
                         "kernel-mode counts to unprivileged users)",
                         (int)where->pid, where->event, k->paranoid);
    else if (where->pid > 0 && e == ESRCH && dk__proc_is_zombie(where->pid))
        rc = dk__fail_os(DK_EOS, e,
                         "process %d has exited (a zombie its parent has not reaped): "
                         "there is nothing left to count",
                         (int)where->pid);
    else if (where->pid > 0 && e == ESRCH)
        rc = dk__fail_os(DK_EOS, e, "there is no process %d", (int)where->pid);
    else
        rc = dk__pe_fail_open(where->event, dk__pe_hardware_type(k, where->def->type),
                              k->core_count > 0, k->paranoid, e, where->sibling);
    errno = e;
    return rc;
}

/* Some PMUs (msr, for one) refuse every exclusion bit: ask only for what is
 * needed, and leave the hypervisor out only where hardware counts it. */
void dk__pe_apply_exclusions(const pe_session *k, struct perf_event_attr *attr, int exclude)
{
    attr->exclude_hv = dk__pe_hardware_type(k, attr->type);
    attr->exclude_kernel = k->exclude_kernel || exclude == 'u';
    attr->exclude_user = exclude == 'k';
}

/* ------------------------------------------------------------------------ */
/* Session                                                                   */
/* ------------------------------------------------------------------------ */

static int pe_open(dk_sampler *s, const dk_sampler_options *opts)
{
    (void)opts;
    pe_session *k = calloc(1, sizeof *k);
    if (k == NULL)
        return dk__fail(DK_ENOMEM, "opening the perf_event backend: out of memory");
    pthread_mutex_init(&k->lock, NULL);
    const char *sysfs = getenv("DKPERF_SYSFS_EVENT_SOURCE");
    snprintf(k->sysfs, sizeof k->sysfs, "%s",
             sysfs != NULL && *sysfs ? sysfs : DK__PE_SYSFS_DEVICES);

    char text[32];
    k->paranoid = dk__pe_read_text("/proc/sys/kernel/perf_event_paranoid", text, sizeof text) == 0
                      ? atoi(text)
                      : 2;
    /* Above 1, unprivileged users may only count user mode. */
    k->exclude_kernel = (s->flags & DK_SAMPLER_USER_ONLY) || (k->paranoid > 1 && geteuid() != 0);

    /* Is perf_event_open there at all? A software event always exists. The
     * probe is the one the database makes of task-clock, so it is asked once. */
    pe_def task_clock = {.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_TASK_CLOCK};
    int e = dk__pe_probe_def(k, &task_clock);
    if (e != 0) {
        int paranoid = k->paranoid;
        dk__pe_session_free(k);
        if (e == EACCES || e == EPERM)
            return dk__fail_os(DK_EPERM, e,
                               "perf_event_open is refused (kernel.perf_event_paranoid is %d): "
                               "counting needs CAP_PERFMON or a lower perf_event_paranoid",
                               paranoid);
        return dk__fail_os(e == ENOSYS ? DK_ENOTSUP : DK_EOS, e, "perf_event_open is unavailable");
    }

    s->impl = k;
    dk__pe_find_core_pmus(k);
    int rc = dk__pe_build_database(s, k);
    if (rc != 0) {
        s->impl = NULL;
        dk__pe_session_free(k);
        return rc;
    }

    s->db.name = "linux";
    s->db.cpu_id = k->cpu_id;
    s->db.marketing_name = k->marketing;
    s->db.family = DK__FAMILY_LINUX;
    s->cpu = DK_CPU_UNKNOWN;
    s->caps.per_thread = true;
    s->caps.per_process = true;
    s->caps.system_wide = k->paranoid <= 0 || geteuid() == 0;
    s->caps.all_events = true;
    s->caps.multiplexing = true;
    s->caps.privileges = k->privilege_text;
    s->caps.sampling = true;
    s->caps.frequency = true;
    s->caps.sample_freq = DK__PE_SAMPLE_FREQ;
    s->caps.stat_events = "task-clock,context-switches,page-faults,instructions,cycles,branches,"
                          "branch-misses";
    s->caps.software_events = true;
    s->caps.process_events = true;
    s->caps.children = true;
    s->caps.counts_outlive = true; /* the counters stay readable after their task exits */
    s->caps.user_only = k->exclude_kernel;
    s->caps.lost_means = "samples the kernel dropped: a ring buffer filled before it was read "
                         "(a lower rate or fewer CPUs sampled loses fewer)";
    /* The PMU's counters, user reads and the event to sample wait for
     * dk_sampler_caps (pe_probe_caps) or a thread sampler that needs them. */
    return 0;
}

const dk__pe_probe *dk__pe_pmc(pe_session *k)
{
    if (!__atomic_load_n(&k->pmc_probed, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&k->lock);
        if (!k->pmc_probed) {
            dk__pe_probe_pmu(&k->pmc, k->core_count > 0);
            dk__pe_describe_pmus(k);
            __atomic_store_n(&k->pmc_probed, true, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&k->lock);
    }
    return &k->pmc;
}

/* /proc/cpuinfo is slow to read (x86 asks every CPU for its frequency):
 * read when the CPU's description is asked for. */
static void pe_describe_cpu(dk_sampler *s)
{
    pe_session *k = s->impl;
    if (__atomic_load_n(&k->cpu_described, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&k->lock);
    if (!k->cpu_described) {
        dk__pe_describe_cpu(k, s);
        __atomic_store_n(&k->cpu_described, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&k->lock);
}

static void pe_probe_caps(dk_sampler *s)
{
    pe_session *k = s->impl;
    if (__atomic_load_n(&k->caps_probed, __ATOMIC_ACQUIRE))
        return;
    /* Cycles where the machine counts them, as perf record; else the clock. */
    const dk_database_event *cycles = dk__database_find(&s->db, "cycles");
    if (cycles != NULL)
        dk__pe_probe_event(s, cycles); /* as the core would before handing it out */
    const dk__pe_probe *pmc = dk__pe_pmc(k);
    pthread_mutex_lock(&k->lock);
    if (!k->caps_probed) {
        s->caps.pmu = k->pmu_text;
        s->caps.counters = k->core_count == 1 ? pmc->counters : 0; /* hybrid: per PMU */
        s->caps.user_reads = pmc->user_text;
        s->caps.sample_event = cycles != NULL && cycles->supported ? "cycles" : "cpu-clock";
        __atomic_store_n(&k->caps_probed, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&k->lock);
}

static int pe_acquire(dk_sampler *s)
{
    (void)s; /* the kernel arbitrates counters per event */
    return 0;
}

static int pe_release(dk_sampler *s)
{
    (void)s;
    return 0;
}

static void pe_close(dk_sampler *s)
{
    free(s->db.events);
    dk__pe_session_free(s->impl);
}

/* ------------------------------------------------------------------------ */
/* Thread samplers                                                           */
/* ------------------------------------------------------------------------ */

static void close_counters(pe_thread *pt)
{
    for (size_t i = pt->ncounters; i-- > 0;) {
        if (pt->counters[i].page != NULL)
            munmap(pt->counters[i].page, (size_t)sysconf(_SC_PAGESIZE));
        if (pt->counters[i].fd >= 0)
            close(pt->counters[i].fd);
    }
    pt->ncounters = 0;
    pt->ngroups = 0;
}

size_t dk__pe_plan(const uint32_t *core_types, size_t core_count, const pe_def *const *defs,
                   size_t n, struct perf_event_attr *attrs, size_t *events, size_t *keys)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const pe_def *d = defs[i];
        size_t copies = d->generic && core_count > 1 ? core_count : 1;
        for (size_t c = 0; c < copies; c++, m++) {
            struct perf_event_attr *a = &attrs[m];
            memset(a, 0, sizeof *a);
            a->size = sizeof *a;
            a->type = d->type;
            a->config = d->config;
            a->config1 = d->config1;
            a->config2 = d->config2;
            events[m] = i;
            keys[m] = 0;
            if (copies > 1) {
                a->config |= (uint64_t)core_types[c] << PERF_PMU_TYPE_SHIFT;
                keys[m] = c;
            } else {
                for (size_t p = 0; p < core_count; p++)
                    if (core_types[p] == d->type)
                        keys[m] = p;
            }
        }
    }
    return m;
}

/* A hardware event asks for user-space reads where the kernel needs it to
 * (arm64: attr.config1 bits, see dk__pe_probe_pmu); 0 elsewhere. */
static uint64_t user_read_config1(const pe_session *k, uint32_t type)
{
    return k->pmc.user_reads && dk__pe_hardware_type(k, type) ? k->pmc.config1 : 0;
}

/*
 * A core PMU event the kernel will not add to its PMU's group: the group
 * cannot hold it beside the events before it. A thread sampler counts its
 * events together, so it refuses the event rather than start a second group
 * on the same counters: groups that take turns (rotated every few ms) leave
 * a region shorter than a turn with events that never counted, and longer
 * ones with estimates, where a thread sampler's deltas must be counts.
 * dk_group time-shares events one by one and reads each with its own times.
 */
static int does_not_fit(const pe_session *k, const char *name, size_t before)
{
    /* k->pmc is probed before a thread sampler opens hardware counters. */
    if (__atomic_load_n(&k->pmc_probed, __ATOMIC_ACQUIRE) && k->pmc.general > 0 &&
        before >= k->pmc.general) {
        char cycles[64] = "";
        if (k->pmc.counters > k->pmc.general)
            snprintf(cycles, sizeof cycles, ", %zu of them for cycles only",
                     k->pmc.counters - k->pmc.general);
        return dk__fail(DK_ETOOMANY,
                        "event %s does not fit: the %zu events before it fill the PMU's "
                        "counters (a group takes %zu%s); a thread sampler counts its events "
                        "together: open fewer, or use a dk_group, which "
                        "time-shares the counters",
                        name, before, k->pmc.counters, cycles);
    }
    return dk__fail(DK_ECONFLICT,
                    "event %s cannot be counted in one group with the %zu events before it "
                    "(the kernel refused it: no counter that can count it is left beside them)",
                    name, before);
}

static int open_counter(pe_thread *pt, const pe_session *k, const dk_database_event *ev,
                        const char *label, const pe_def *def, struct perf_event_attr *attr,
                        size_t event, size_t group_key, size_t *group_of_key)
{
    attr->read_format = DK__PE_READ_FORMAT;
    dk__pe_apply_exclusions(k, attr, def->exclude);
    attr->config1 |= user_read_config1(k, attr->type);
    if (pt->ncounters == INSTANCES_MAX || pt->ngroups == GROUPS_MAX)
        return dk__fail(DK_ETOOMANY, "event %s: more than %d counters", ev->name, INSTANCES_MAX);
    pe_counter *c = &pt->counters[pt->ncounters];
    c->fd = -1;
    c->event = event;
    size_t g = group_of_key[group_key];
    pe_target where = {.event = label, .def = def, .pid = 0, .cpu = -1};
    int e = 0;
    bool no_room = false; /* refused beside the core PMU events before it */
    if (g != SIZE_MAX) {
        attr->disabled = 0; /* siblings follow their leader */
        where.sibling = true;
        where.quiet_einval = true; /* retried below as a group of its own */
        int fd = dk__pe_open_fd(k, attr, &where, pt->groups[g].leader_fd);
        e = fd < 0 ? errno : 0;
        if (fd < 0 && e != EINVAL)
            return fd;
        no_room = fd < 0 && pt->groups[g].hardware && dk__pe_hardware_type(k, attr->type);
        c->fd = fd < 0 ? -1 : fd;
    }
    if (c->fd < 0) {
        /* A new group: the first of this key, or one for an event of
         * another PMU (msr, uncore), which the kernel will not put in a core
         * PMU's group and which counts beside it, never in its place. The
         * arm64 driver leaves a disabled leader out when it checks that a
         * group fits the counters, unless the leader is to be enabled at
         * exec, and so would accept one sibling too many for a group it can
         * then never schedule (every count 0). Marked so, the leader is
         * counted and the extra sibling fails with EINVAL. (The counters
         * are close-on-exec: an exec ends them before they could start.) */
        attr->disabled = 1;
        attr->enable_on_exec = 1;
        where.sibling = g != SIZE_MAX && e == EINVAL && !no_room;
        where.quiet_einval = false;
        int fd = dk__pe_open_fd(k, attr, &where, -1);
        attr->enable_on_exec = 0;
        if (fd < 0)
            return fd;
        /* EINVAL is also the answer to attributes the kernel refuses
         * outright (an x86 cache event with no encoding): only an event
         * that opens alone is one the group has no room for. */
        if (no_room) {
            close(fd);
            return does_not_fit(k, label, pt->groups[g].count);
        }
        c->fd = fd;
        g = pt->ngroups++;
        pt->groups[g].leader_fd = c->fd;
        pt->groups[g].first = pt->ncounters;
        pt->groups[g].count = 0;
        pt->groups[g].hardware = false;
        group_of_key[group_key] = g; /* the events after it join this group */
    }
    if (ioctl(c->fd, PERF_EVENT_IOC_ID, &c->id) != 0) {
        int err = errno;
        close(c->fd);
        return dk__fail_os(DK_EOS, err, "PERF_EVENT_IOC_ID for event %s failed", ev->name);
    }
    c->group = g;
    pt->groups[g].count++;
    pt->groups[g].hardware |= dk__pe_hardware_type(k, attr->type); /* a software leader too */
    pt->ncounters++;
    return 0;
}

/* Groups must hold contiguous counters for reading; opening in key order
 * keeps them so unless the kernel split a group, which reorders below. */
static void order_counters(pe_thread *pt)
{
    pe_counter sorted[INSTANCES_MAX];
    size_t m = 0;
    for (size_t g = 0; g < pt->ngroups; g++) {
        pt->groups[g].first = m;
        for (size_t i = 0; i < pt->ncounters; i++)
            if (pt->counters[i].group == g)
                sorted[m++] = pt->counters[i];
    }
    memcpy(pt->counters, sorted, m * sizeof *sorted);
}

static bool map_pages(pe_thread *pt)
{
    if (pt->ngroups != 1 || dk__pmc_native() == NULL)
        return false;
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < pt->ncounters; i++) {
        void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, pt->counters[i].fd, 0);
        if (p == MAP_FAILED)
            return false;
        pt->counters[i].page = p;
        if (!pt->counters[i].page->cap_user_rdpmc)
            return false;
    }
    return true;
}

static int read_groups(dk_thread *t, uint64_t *values, dk_reading *info)
{
    pe_thread *pt = t->impl;
    uint64_t min_run = UINT64_MAX, max_ena = 0;
    for (size_t i = 0; i < t->n; i++)
        values[i] = 0;
    for (size_t g = 0; g < pt->ngroups; g++) {
        const pe_group *grp = &pt->groups[g];
        size_t want = dk__pe_read_size(grp->count);
        ssize_t got = read(grp->leader_fd, pt->buf, want);
        if (DK__UNLIKELY(got != (ssize_t)want))
            return dk__fail_os(DK_EOS, got < 0 ? errno : EIO,
                               "reading the counters of event %s failed",
                               t->events[pt->counters[grp->first].event]->name);
        uint64_t enabled = dk__pe_read_enabled(pt->buf), running = dk__pe_read_running(pt->buf);
        for (size_t j = 0; j < grp->count; j++) {
            const pe_counter *c = &pt->counters[grp->first + j];
            uint64_t value = dk__pe_read_value(pt->buf, j);
            if (DK__UNLIKELY(dk__pe_read_id(pt->buf, j) != c->id))
                return dk__fail(DK_EOS, "the kernel returned the group's counters out of order");
            values[c->event] += dk_scale_count(value, enabled, running);
        }
        if (running < min_run)
            min_run = running;
        if (enabled > max_ena)
            max_ena = enabled;
    }
    if (info != NULL)
        dk__pe_describe_reading(info, max_ena, min_run == UINT64_MAX ? 0 : min_run);
    return 0;
}

/* Whether the fast path applies: one group holding exactly the events in
 * caller order, as a first read() confirms by the ids it returns. */
static bool check_simple(const dk_thread *t, pe_thread *pt)
{
    if (pt->ngroups != 1 || pt->ncounters != t->n)
        return false;
    for (size_t i = 0; i < pt->ncounters; i++)
        if (pt->counters[i].event != i)
            return false;
    size_t want = dk__pe_read_size(pt->ncounters);
    if (read(pt->groups[0].leader_fd, pt->buf, want) != (ssize_t)want ||
        dk__pe_read_nr(pt->buf) != t->n)
        return false;
    for (size_t i = 0; i < pt->ncounters; i++)
        if (dk__pe_read_id(pt->buf, i) != pt->counters[i].id)
            return false;
    pt->simple_size = want;
    return true;
}

static int pe_read(dk_thread *t, uint64_t *values, dk_reading *info)
{
    pe_thread *pt = t->impl;
    if (DK__LIKELY(pt->simple && pt->pmc == NULL)) {
        /* One read(), values in caller order (checked once at open). */
        ssize_t got = read(pt->groups[0].leader_fd, pt->buf, pt->simple_size);
        if (DK__UNLIKELY(got != (ssize_t)pt->simple_size))
            return dk__fail_os(DK_EOS, got < 0 ? errno : EIO, "reading the counters failed");
        uint64_t enabled = dk__pe_read_enabled(pt->buf), running = dk__pe_read_running(pt->buf);
        if (DK__LIKELY(running >= enabled))
            for (size_t i = 0; i < pt->ncounters; i++)
                values[i] = dk__pe_read_value(pt->buf, i);
        else
            for (size_t i = 0; i < pt->ncounters; i++)
                values[i] = dk_scale_count(dk__pe_read_value(pt->buf, i), enabled, running);
        if (info != NULL)
            dk__pe_describe_reading(info, enabled, running);
        return 0;
    }
    if (pt->pmc != NULL) {
        uint64_t ena = 0, run = 0;
        size_t i = 0;
        for (; i < pt->ncounters; i++) {
            uint64_t count, e, r;
            if (!dk__pmc_read(pt->counters[i].page, pt->pmc, info != NULL, &count, &e, &r))
                break; /* not on the PMU right now: ask the kernel */
            values[pt->counters[i].event] = dk_scale_count(count, e, r);
            ena = e;
            run = r;
        }
        if (i == pt->ncounters) {
            if (info != NULL)
                dk__pe_describe_reading(info, ena, run);
            return 0;
        }
    }
    return read_groups(t, values, info);
}

/*
 * The common case on a PMU with user reads: one group, the events in
 * caller order, every counter readable from userspace. One seqlock pass per
 * counter, no scaling and no clock unless the page shows time-sharing;
 * anything else (a counter off the PMU now, multiplexing) takes pe_read,
 * and so does a read that reports times (info), which must be current.
 */
static int pe_read_user(dk_thread *t, uint64_t *values, dk_reading *info)
{
    pe_thread *pt = t->impl;
    uint64_t enabled, running;
    if (DK__UNLIKELY(info != NULL || !dk__pmc_read_set(&pt->set, values, &enabled, &running,
                                                       dk__pmc_native_counter, NULL)))
        return pe_read(t, values, info);
    return 0;
}

static int pe_thread_open(dk_thread *t)
{
    dk_sampler *s = t->sampler;
    pe_session *k = s->impl;
    pe_thread *pt = calloc(1, sizeof *pt);
    if (pt == NULL)
        return dk__fail(DK_ENOMEM, "dk_thread_open: out of memory");
    const pe_def *defs[DK_MAX_EVENTS];
    pe_def moded[DK_MAX_EVENTS];
    for (size_t i = 0; i < t->n; i++) {
        int rc =
            dk__pe_def_with_mode(s, t->events[i], t->mode[i], dk__thread_label(t, i), &moded[i]);
        if (rc != 0) {
            free(pt);
            return rc;
        }
        defs[i] = &moded[i];
    }
    /* What the PMU offers (counters per group, user reads) is probed once,
     * on this thread before its counters open: they would take the places
     * the probe counts. */
    for (size_t i = 0; i < t->n; i++)
        if (dk__pe_hardware_type(k, defs[i]->type)) {
            (void)dk__pe_pmc(k);
            break;
        }
    struct perf_event_attr *attrs = calloc(INSTANCES_MAX, sizeof *attrs);
    if (attrs == NULL) {
        free(pt);
        return dk__fail(DK_ENOMEM, "dk_thread_open: out of memory");
    }
    size_t events[INSTANCES_MAX], keys[INSTANCES_MAX];
    size_t m = dk__pe_plan(k->core_types, k->core_count, defs, t->n, attrs, events, keys);
    size_t group_of_key[DK__PE_CORE_PMUS_MAX];
    for (size_t i = 0; i < DK__PE_CORE_PMUS_MAX; i++)
        group_of_key[i] = SIZE_MAX;
    int rc = 0;
    /* Open key by key so that each group is built in one go. */
    for (size_t key = 0; key < DK__PE_CORE_PMUS_MAX && rc == 0; key++)
        for (size_t i = 0; i < m && rc == 0; i++)
            if (keys[i] == key) {
                char buf[1024];
                const char *shown = dk__event_shown(t->asked[events[i]],
                                                    dk__thread_label(t, events[i]), buf,
                                                    sizeof buf);
                rc = open_counter(pt, k, t->events[events[i]], shown, defs[events[i]], &attrs[i],
                                  events[i], key, group_of_key);
            }
    free(attrs);
    if (rc != 0) {
        close_counters(pt);
        free(pt);
        return rc;
    }
    order_counters(pt);
    bool hardware = true;
    for (size_t i = 0; i < pt->ncounters; i++)
        hardware &= dk__pe_hardware_type(k, defs[pt->counters[i].event]->type);
    if (hardware && k->pmc.user_reads && map_pages(pt))
        pt->pmc = dk__pmc_native();
    pt->simple = check_simple(t, pt);
    t->impl = pt;
    t->read = pe_read;
    if (DK__PMC_NATIVE && pt->simple && pt->pmc != NULL) {
        for (size_t i = 0; i < pt->ncounters; i++)
            (void)dk__pmc_set_add(&pt->set, pt->counters[i].page);
        if (pt->set.n == pt->ncounters)
            t->read = pe_read_user;
    }
    return 0;
}

static int pe_ioctl_all(dk_thread *t, unsigned long request, const char *what)
{
    pe_thread *pt = t->impl;
    int rc = 0;
    for (size_t g = 0; g < pt->ngroups; g++)
        if (ioctl(pt->groups[g].leader_fd, request, PERF_IOC_FLAG_GROUP) != 0 && rc == 0)
            rc = dk__fail_os(DK_EOS, errno, "%s the counters failed", what);
    return rc;
}

static int pe_thread_start(dk_thread *t)
{
    int rc = pe_ioctl_all(t, PERF_EVENT_IOC_ENABLE, "enabling");
    if (rc != 0)
        (void)pe_ioctl_all(t, PERF_EVENT_IOC_DISABLE, "disabling");
    return rc;
}

static int pe_thread_stop(dk_thread *t)
{
    return pe_ioctl_all(t, PERF_EVENT_IOC_DISABLE, "disabling");
}

static void pe_thread_close(dk_thread *t)
{
    pe_thread *pt = t->impl;
    close_counters(pt);
    free(pt);
}

size_t dk__perf_event_group_count(const dk_thread *t)
{
    const pe_thread *pt = t->impl;
    return pt->ngroups;
}

int dk__perf_event_group_fd(const dk_thread *t)
{
    const pe_thread *pt = t->impl;
    return pt->ngroups > 0 ? pt->groups[0].leader_fd : -1;
}

/* A dk_event's perf name: Apple's fixed counters have a generic counterpart
 * everywhere; the other dk_events are Apple PMU events. */
static int pe_event_name(dk_sampler *s, dk_event ev, const char **name)
{
    if (ev == DK_EVENT_FIXED_CYCLES)
        *name = "cpu-cycles";
    else if (ev == DK_EVENT_FIXED_INSTRUCTIONS)
        *name = "instructions";
    else
        return dk__fail(DK_EUNAVAILABLE,
                        "event %s is an Apple PMU event; the %s backend counts perf_event "
                        "events (use a portable or perf name)",
                        dk__event_ident(ev), s->backend->name);
    return 0;
}

const dk__backend dk__backend_perf_event = {
    .version = DK__BACKEND_VERSION,
    .name = "perf_event",
    .open = pe_open,
    .acquire = pe_acquire,
    .release = pe_release,
    .close = pe_close,
    .resolve = dk__pe_resolve,
    .thread_open = pe_thread_open,
    .thread_start = pe_thread_start,
    .thread_stop = pe_thread_stop,
    .thread_close = pe_thread_close,
    .group_open = dk__pe_group_open,
    .group_start = dk__pe_group_start,
    .group_stop = dk__pe_group_stop,
    .group_read = dk__pe_group_read,
    .group_close = dk__pe_group_close,
    .group_read_cpus = dk__pe_group_read_cpus,
    .uses_framework_root = false,
    .event_name = pe_event_name,
    .sampling_open = dk__pe_sampling_open,
    .sampling_start = dk__pe_sampling_start,
    .sampling_stop = dk__pe_sampling_stop,
    .sampling_drain = dk__pe_sampling_drain,
    .sampling_wait = dk__pe_sampling_wait,
    .sampling_close = dk__pe_sampling_close,
    .probe_event = dk__pe_probe_event,
    .probe_caps = pe_probe_caps,
    .describe_cpu = pe_describe_cpu,
};
