/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_internal.h - what the files of the Linux perf_event backend share.
 *
 *   perf_event.c  the backend table, the sampler session, perf_event_open,
 *                 thread samplers (one group per core PMU on this thread)
 *   pe_events.c   the event database: generic, cache and software events,
 *                 the events sysfs lists, raw and pmu/.../ events resolved
 *   pe_spec.c     event specs: rNNNN, pmu/term=value,.../[u|k], format files
 *   pe_sysfs.c    sysfs and procfs: reading files, core PMUs, the CPU
 *   pe_group.c    groups: a process and what it starts, or every CPU
 *   pe_probe.c    what the core PMU offers: counters per group, user reads
 *   pe_sample.c   sampling: events with ring buffers, their records decoded
 *
 * Not installed; Linux only.
 */
#ifndef DKPERF_BACKEND_PE_INTERNAL_H
#define DKPERF_BACKEND_PE_INTERNAL_H

#include <pthread.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "backend/perf_event/perf_event.h"

#define DK__PE_SYSFS_DEVICES "/sys/bus/event_source/devices"
#define DK__PE_CORE_PMUS_MAX 4
/* Samples a second for an event given neither a period nor a frequency, as
 * perf record (dk_backend_caps.sample_freq). */
#define DK__PE_SAMPLE_FREQ 4000

/* Events resolved from raw or pmu/.../ syntax, kept until the sampler goes:
 * one per distinct spec, so that resolving the same names again and again
 * (a thread sampler opened per measurement) keeps memory flat. */
typedef struct pe_dynamic {
    struct pe_dynamic *next;
    dk_database_event pub;
    pe_def def;
    char text[]; /* name, then description */
} pe_dynamic;

/* What the core PMU offers, found by opening counters on this thread. */
typedef struct dk__pe_probe {
    uint64_t config1;    /* bits a hardware event's attr.config1 needs for user reads */
    bool user_reads;     /* a counter of this thread was read without a system call */
    size_t counters;     /* counters one group can hold; 0 when unknown */
    size_t general;      /* of which take instructions; counters - general: cycles only */
    char user_text[224]; /* "on: ..." or "off: why, and what to do" */
} dk__pe_probe;

/* A perf_event sampler's state (dk_sampler.impl). */
typedef struct pe_session {
    pe_def *defs; /* parallel to s->db.events */
    char **owned; /* strings the database view points into */
    size_t owned_count, owned_cap;
    pe_dynamic *dynamic;
    size_t dynamic_count;
    pthread_mutex_t lock; /* guards dynamic and dynamic_count */
    bool exclude_kernel;
    int paranoid;
    uint32_t core_types[DK__PE_CORE_PMUS_MAX];
    char core_names[DK__PE_CORE_PMUS_MAX][64];
    size_t core_count;     /* > 1: hybrid */
    dk__pe_probe pmc;      /* user reads, counters per group (see dk__pe_pmc) */
    bool pmc_probed;       /* pmc and pmu_text are found (atomic; set under lock) */
    bool caps_probed;      /* the lazy caps are filled (atomic; set under lock) */
    bool cpu_described;    /* cpu_id, marketing, s->db.arch (atomic; set under lock) */
    unsigned char *probed; /* parallel to s->db.events: supported is found (atomic) */
    char sysfs[256];
    char cpu_id[64];
    char marketing[128];
    char pmu_text[192];
    char privilege_text[256];
} pe_session;

/* ---- perf_event.c ------------------------------------------------------ */

/* perf_event_open(2), close-on-exec: pid 0 is the calling thread, cpu -1
 * any CPU. Returns the fd, or -1 with errno set. The only call of the
 * system call, here below every file of the backend that opens counters
 * (events, probes, groups, sampling); callers that must explain a failure
 * use dk__pe_open_fd. */
static inline int dk__pe_syscall(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
    return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* Where a counter is opened, for dk__pe_open_fd and its messages. */
typedef struct pe_target {
    const char *event; /* the name messages give */
    const pe_def *def; /* its type tells hardware from software */
    pid_t pid;         /* 0: the calling thread; > 0: that process; -1: every task (system) */
    int cpu;           /* -1: any CPU */
    bool sibling;      /* joins a group: EINVAL means the group cannot take it */
    bool quiet_einval; /* the caller retries on EINVAL: return DK_ECONFLICT unrecorded */
} pe_target;

/*
 * Open one counter: perf_event_open(2) and, on failure, the errno map with
 * a message that names the event and what to do (dk__pe_fail_open, plus the
 * system-wide privilege and the missing process). Returns the fd (>= 0) or
 * a negative DK_E* code; errno keeps the kernel's answer either way.
 */
int dk__pe_open_fd(const pe_session *k, struct perf_event_attr *attr, const pe_target *where,
                   int group_fd);

/* Whether counters of this perf_event_attr.type are on a hardware PMU. */
bool dk__pe_hardware_type(const pe_session *k, uint32_t type);

/* Set the exclusion bits of attr for the session and an event's 'u'/'k'. */
void dk__pe_apply_exclusions(const pe_session *k, struct perf_event_attr *attr, int exclude);

/* Fill a dk_reading from a counter's enabled and running times. */
static inline void dk__pe_describe_reading(dk_reading *info, uint64_t enabled, uint64_t running)
{
    info->time_enabled = enabled;
    info->time_running = running;
    info->multiplexed = running < enabled;
    info->counted = running > 0;
}

/* ---- pe_events.c ------------------------------------------------------- */

/* Build s->db (generic and sysfs events, sorted by name) and k->defs.
 * Returns 0, or DK_ENOMEM with s->db.events NULL. */
int dk__pe_build_database(dk_sampler *s, pe_session *k);

/* The backend's resolve: raw and pmu/.../ names. */
int dk__pe_resolve(dk_sampler *s, const char *name, const dk_database_event **out);

/* How to open ev with the modifiers it was given (DK__MODE_*, which
 * override a pmu/.../u or /k suffix); label names it in messages. Returns 0
 * or DK_EPERM (kernel mode that perf_event_paranoid forbids). */
int dk__pe_def_with_mode(const dk_sampler *s, const dk_database_event *ev, unsigned mode,
                         const char *label, pe_def *out);

/* Whether def opens here, as the database says of its events: 0 or the
 * kernel's errno. Answers are kept for the process, so that each is asked
 * of the kernel once however many samplers open. */
int dk__pe_probe_def(const pe_session *k, const pe_def *def);

/* The backend's probe_event: ev->supported, probed the first time. */
void dk__pe_probe_event(dk_sampler *s, const dk_database_event *ev);

/* Free the session and everything its database owns (NULL: nothing). */
void dk__pe_session_free(pe_session *k);

/* ---- pe_spec.c --------------------------------------------------------- */

/* A decimal number of at most max from *p, digits only (no sign, no
 * space); *p moves past it. Returns false, *p unmoved, otherwise. */
bool dk__pe_parse_decimal(const char **p, uint64_t max, uint64_t *out);

/* A PMU's type file: one decimal number that fits perf_event_attr.type. */
bool dk__pe_parse_type(const char *text, uint32_t *type);

/* ---- pe_sysfs.c -------------------------------------------------------- */

/* Read a small sysfs or procfs file, trailing newline removed. Returns 0
 * or -1 (cannot be opened). */
int dk__pe_read_text(const char *path, char *buf, size_t size);

/* snprintf for paths and names: returns -1 instead of truncating. */
int dk__pe_pathf(char *buf, size_t size, const char *fmt, ...) DK__PRINTF(3, 4);

/* k->core_types, k->core_names and k->core_count from the core PMUs under k->sysfs, in
 * order of type. */
void dk__pe_find_core_pmus(pe_session *k);

/* k->cpu_id, k->marketing and s->db.arch from /proc/cpuinfo and uname. */
void dk__pe_describe_cpu(pe_session *k, dk_sampler *s);

/* k->pmu_text and k->privilege_text, the sentences of the capabilities. */
void dk__pe_describe_pmus(pe_session *k);

/* ---- pe_probe.c -------------------------------------------------------- */

/* Fill *p. have_pmu: the backend found a core PMU in sysfs. */
void dk__pe_probe_pmu(dk__pe_probe *p, bool have_pmu);

/* k->pmc, probed on the calling thread the first time it is needed (a
 * thread sampler of hardware events, or the caps), and k->pmu_text. */
const dk__pe_probe *dk__pe_pmc(pe_session *k);

/* ---- pe_group.c -------------------------------------------------------- */

int dk__pe_group_open(dk_group *g);
int dk__pe_group_start(dk_group *g);
int dk__pe_group_stop(dk_group *g);
int dk__pe_group_read(dk_group *g, uint64_t *values, dk_reading *info);
void dk__pe_group_close(dk_group *g);
/* Counts per CPU of a system group, values[c * g->n + i]. */
int dk__pe_group_read_cpus(dk_group *g, uint64_t *values, dk_reading *info);

/* The online CPUs (/sys/devices/system/cpu/online, else sysconf), at most
 * max of them. Returns 0, DK_EINVAL (unreadable list) or DK_EOS. */
int dk__pe_online_cpus(int *cpus, size_t max, size_t *n);

/* ---- pe_sample.c ------------------------------------------------------- */

/* dk_sampling: sampling events with ring buffers. */
int dk__pe_sampling_open(dk_sampling *p);
int dk__pe_sampling_start(dk_sampling *p);
int dk__pe_sampling_stop(dk_sampling *p);
int dk__pe_sampling_drain(dk_sampling *p, dk_sample_fn fn, void *ctx);
int dk__pe_sampling_wait(dk_sampling *p, int timeout_ms);
void dk__pe_sampling_close(dk_sampling *p);

/* ---- pe_tasks.c -------------------------------------------------------- */

/* The thread ids of process pid, pid itself first (just pid without /proc).
 * Returns 0 with *tids allocated (the caller frees it), or DK_ENOMEM. */
int dk__pe_task_ids(int pid, int **tids, size_t *n);

/* Whether process pid has exited and waits for its parent to reap it (its
 * /proc/PID/stat state is Z or X): perf_event_open answers ESRCH for it. */

#endif /* DKPERF_BACKEND_PE_INTERNAL_H */
