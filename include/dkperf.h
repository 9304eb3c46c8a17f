/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkperf.h - hardware performance counters around a region of code.
 *
 * libdkperf reads retired instructions, cycles, branches, mispredictions,
 * cache and TLB misses of the calling thread. On a Mac it drives Apple's
 * private kperf and kperfdata frameworks (loaded at run time).
 *
 *     dk_sampler *s;
 *     dk_thread *t;
 *     const dk_event ev[] = {DK_EVENT_FIXED_INSTRUCTIONS, DK_EVENT_FIXED_CYCLES};
 *     uint64_t before[2], after[2];
 *
 *     if (dk_sampler_open(&s, NULL) != 0 || dk_thread_open(s, ev, 2, &t) != 0) {
 *         // DK_EUNAVAILABLE where there are no hardware counters (most VMs):
 *         // on Linux, open "task-clock" with dk_thread_open_names instead
 *         fprintf(stderr, "%s\n", dk_last_error());
 *         dk_sampler_close(s);
 *         return 1;
 *     }
 *     dk_thread_start(t);
 *     dk_thread_sample(t, before);
 *     work();
 *     dk_thread_sample(t, after);
 *     dk_thread_close(t);
 *     dk_sampler_close(s);
 *     // instructions = after[0] - before[0], cycles = after[1] - before[1]
 *
 * Conventions. Every int-returning function returns 0 on success or a
 * negative DK_E* code (dkperf/error.h); dk_last_error() then holds a
 * sentence naming the event, symbol, errno or kperfdata code. A function
 * that returns a handle through an out pointer sets it to NULL when it
 * fails (so do not pass the address of a handle you still hold). Handles are
 * opaque; functions that free accept NULL. Strings returned by the library
 * live as long as the object they came from.
 *
 * Threads. A dk_sampler may be used from any thread. A dk_thread counts the
 * thread that opened it, and only that thread may start, sample or stop it
 * (others get DK_ETHREAD); any thread may close it.
 */
#ifndef DKPERF_H
#define DKPERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkperf/error.h"
#include "dkperf/events.h"
#include "dkperf/sampling.h"
#include "dkperf/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DKPERF_VERSION_MAJOR 0
#define DKPERF_VERSION_MINOR 1
#define DKPERF_VERSION_PATCH 0

/* "0.1.0": the version of the library actually loaded. */
DK_EXPORT const char *dk_version(void);

/* dk_sampler, dk_thread and dk_database, the opaque handles, are declared
 * in dkperf/types.h. */

/* ------------------------------------------------------------------------ */
/* Sampler                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Which backend counts. DK_BACKEND_AUTO probes, in order: on macOS (or
 * wherever DKPERF_FRAMEWORK_ROOT names a framework root) kperf, then
 * selfcounts; on Linux perf_event. $DKPERF_BACKEND=kperf|selfcounts|perf_event
 * forces one, as does this option.
 */
typedef enum dk_backend_kind {
    DK_BACKEND_AUTO = 0,
    DK_BACKEND_KPERF = 1,      /* Apple kperf/kperfdata: every event; needs root */
    DK_BACKEND_SELFCOUNTS = 2, /* macOS 12.4+ thread_selfcounts: instructions and cycles,
                                  no root */
    DK_BACKEND_PERF_EVENT = 3  /* Linux perf_event_open(2) */
} dk_backend_kind;

/* dk_sampler_options.flags */
/* Count user mode only. Honoured by perf_event and by kperf thread samplers;
 * thread_selfcounts and proc_pid_rusage (the selfcounts backend, process
 * groups on macOS) have no such switch and count both modes regardless. */
#define DK_SAMPLER_USER_ONLY 0x1u
/* Open the sampler to read only: the event database, the backend name, its
 * caps and the privileges. The counters are never taken (on kperf,
 * kpc_force_all_ctrs_set is never called; the privileges are read with
 * kpc_force_all_ctrs_get), so no machine state changes. Backends are probed
 * as usual: one that would be refused for privileges is passed over.
 * dk_thread_open, dk_thread_open_names and dk_group_open on such a sampler
 * fail with DK_EINVAL; dk_sampler_release is a successful no-op. For
 * commands such as "dkperf info" and "dkperf list". */
#define DK_SAMPLER_QUERY_ONLY 0x2u

typedef struct dk_sampler_options {
    size_t size;                /* sizeof(dk_sampler_options), for growth */
    const char *framework_root; /* prefix for the framework paths; NULL: $DKPERF_FRAMEWORK_ROOT,
                                   else the system's */
    dk_backend_kind backend;    /* DK_BACKEND_AUTO to probe */
    unsigned flags;             /* DK_SAMPLER_* */
} dk_sampler_options;

/* Defaults: every field zero but size. */
#define DK_SAMPLER_OPTIONS_INIT                               \
    {                                                         \
        sizeof(dk_sampler_options), NULL, DK_BACKEND_AUTO, 0u \
    }

/*
 * Signals and exit. On a Mac a sampler changes state that every process
 * shares (kpc.force_all_ctrs and the counting classes; a sampling also
 * kperf's sampling, the counters' periods and actions and the kdebug trace
 * buffer), and only dk_sampling_close, dk_sampler_release and
 * dk_sampler_close give it back. A process that holds a sampler should not
 * let a signal end it by its default action: catch every catchable signal
 * whose default ends the process (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1,
 * SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, ...), only note it in the
 * handler (these functions are not async-signal-safe), close from ordinary
 * code, then exit or re-raise; and ignore SIGPIPE and SIGXFSZ, so that a
 * failed write returns EPIPE or EFBIG instead of ending the process.
 * dkperf(1), section SIGNALS, is the tool's policy; dk_bench_main
 * (dkbench.h) follows it too.
 */

/*
 * dk_sampler_open - load the frameworks, open this CPU's event database,
 * recognise the chip, and take the hardware counters.
 *
 * Taking the counters (kpc.force_all_ctrs) is shared by every sampler of
 * the process: the first one saves the previous state, the last one to
 * release restores it.
 *
 * opts may be NULL for defaults; opts->size must be set (a smaller size
 * from an older header is accepted, and a larger one from a newer header
 * when every byte this library does not know is zero).
 * Returns 0 and sets *out, or: DK_EINVAL (NULL out, bad size or backend),
 * DK_ELOAD (a framework or symbol is missing), DK_EKPEP (the database could
 * not be opened), DK_ECPU (the database names a CPU with no event table),
 * DK_EPERM (not root and no kpc entitlement), DK_EBUSY (another client such
 * as powermetrics holds the counters), DK_EOS, DK_ENOMEM. On failure nothing
 * is left acquired.
 */
DK_EXPORT int dk_sampler_open(dk_sampler **out, const dk_sampler_options *opts);

/*
 * dk_sampler_release - give the counters back before closing (e.g. when a
 * long-lived sampler is done measuring). Idempotent. Thread samplers of
 * this sampler cannot be opened or started afterwards (DK_ESTATE).
 * Returns 0, DK_ESTATE when one of its thread samplers, groups or
 * samplings is still running (the detail says which),
 * or DK_EOS (DK_EPERM, DK_EBUSY) when restoring the previous state failed:
 * kpc.force_all_ctrs is then left at 1, and dk_last_error() says so and how
 * to restore it by hand. The sampler counts as released either way, and
 * dk_sampler_close frees it without trying again.
 */
DK_EXPORT int dk_sampler_release(dk_sampler *s);

/*
 * dk_sampler_close - release the counters and free the sampler. Thread
 * samplers still open keep what they need alive until they are closed: a
 * running one keeps counting until it stops (the counters are released
 * then), and none can start again (DK_ESTATE). NULL is ignored.
 */
DK_EXPORT void dk_sampler_close(dk_sampler *s);

/* The chip the sampler recognised; DK_CPU_INTEL on an Intel Mac. */
DK_EXPORT dk_cpu dk_sampler_cpu(const dk_sampler *s);

/* "kperf", "selfcounts" or "perf_event": the backend counting for this sampler. */
DK_EXPORT const char *dk_sampler_backend(const dk_sampler *s);

/*
 * dk_sampler_why - why this backend was chosen: each backend probed before
 * it and why it could not count, and what a better-placed one would add,
 * e.g. "kperf: ... was refused: hardware counters need root ...; using
 * selfcounts: instructions and cycles of the calling thread only; as root
 * kperf would count every event of the a14 database". "" when the first
 * backend probed was taken. Never NULL for a valid sampler.
 */
DK_EXPORT const char *dk_sampler_why(const dk_sampler *s);

/*
 * dk_sampler_notes - what taking the counters found and did that the user
 * should hear of, one sentence per line without a final newline, e.g.
 * "reset kperf sampling and the kdebug trace buffer, left set up by
 * process 812, which no longer exists" (a tracing client killed with
 * SIGKILL, or that crashed, leaves them; what a live client holds is never
 * touched). "" when there is nothing to say. Never NULL for a valid
 * sampler (NULL for NULL); the library prints nothing itself. Written by
 * dk_sampler_open and never changed after: valid, and readable from any
 * thread, until dk_sampler_close.
 */
DK_EXPORT const char *dk_sampler_notes(const dk_sampler *s);

/* What a backend can do. */
typedef struct dk_backend_caps {
    size_t size;            /* set to sizeof(dk_backend_caps) before the call */
    const char *name;       /* dk_sampler_backend() */
    bool per_thread;        /* counts the calling thread (dk_thread) */
    bool per_process;       /* can give a whole process's totals (dk_process_cpi) */
    bool system_wide;       /* can count every CPU */
    bool all_events;        /* every event of the database; false: instructions and cycles only */
    bool multiplexing;      /* may time-share counters and scale counts (see dk_thread_read) */
    bool perf_levels;       /* splits counts by CPU performance level (P/E cores) */
    size_t counters;        /* hardware counters usable at once; 0 when unknown */
    const char *pmu;        /* the PMU interface, e.g. "Apple ARM (kpc)", "cpu (perf_event)" */
    const char *privileges; /* what the current privileges allow, one sentence */
    const char *user_reads; /* "on: how" or "off: why" counters are read without a system
                               call; NULL when the backend has no such path */
    /* Since 0.4 (a caller's smaller size leaves them out). What a tool needs
     * to choose its defaults and its advice without knowing the backend. */
    bool sampling;            /* dk_sampling_open can sample here (with the privileges) */
    bool frequency;           /* counter events sample at a frequency too; false: a period only */
    uint64_t sample_period;   /* events a sample for an event given neither a period nor a
                               frequency when the backend has no frequency mode; else 0 */
    uint64_t sample_freq;     /* samples a second for such an event in frequency mode; else 0 */
    const char *sample_event; /* the event to sample when the caller names none */
    const char *stat_events;  /* the events to count when the caller names none,
                                 comma-separated, as perf stat's defaults */
    bool software_events;     /* counts the kernel's software events (task-clock,
                               context-switches, page-faults) */
    bool process_events;      /* a process group counts every event; false: instructions and
                               cycles only, other events only on a system group */
    bool children;            /* process groups take DK_GROUP_CHILDREN (inherit) */
    bool counts_outlive;      /* a process or thread group still reads its counts after its
                               target exited and was reaped; false: read before it ends */
    bool user_only;           /* counts and samples user mode only (DK_SAMPLER_USER_ONLY, or
                                 what the privileges allow: privileges says why); false:
                                 kernel mode too, and kernel call chains where the backend
                                 gives them */
    const char *lost_means;   /* what dk_sampling_stats.lost counts and why samples are
                                 lost here, one phrase; NULL where the backend cannot
                                 sample */
} dk_backend_caps;

/*
 * dk_sampler_caps - fill *caps (whose size field says how much of it the
 * caller knows). Facts that take probing (perf_event: the counters a group
 * holds, user reads, whether cycles count) are found at the first call, not
 * at dk_sampler_open. Returns 0 or DK_EINVAL.
 */
DK_EXPORT int dk_sampler_caps(const dk_sampler *s, dk_backend_caps *caps);

/*
 * dk_process_cpi - the instructions and cycles a whole process (pid; 0 for
 * this one) has retired so far. On macOS this is proc_pid_rusage(), which
 * needs no root and works for a child that has exited but is not yet
 * reaped (waitid(..., WEXITED | WNOWAIT)). Returns 0, DK_ENOTSUP (not on this
 * backend), DK_EPERM, DK_EOS (e.g. no such process).
 */
DK_EXPORT int dk_process_cpi(dk_sampler *s, int pid, uint64_t *instructions, uint64_t *cycles);

/*
 * CPU performance levels (P and E cores). dk_sampler_perf_levels gives how
 * many the backend splits counts by (0 when it does not);
 * dk_sampler_perf_level_name(s, i) a name, "P" for level 0 (the fastest).
 */
DK_EXPORT size_t dk_sampler_perf_levels(const dk_sampler *s);
DK_EXPORT const char *dk_sampler_perf_level_name(const dk_sampler *s, size_t level);

/* The framework root the Darwin backends loaded from ("" for the system's),
 * or NULL for other backends. */
DK_EXPORT const char *dk_sampler_framework_root(const dk_sampler *s);

/* The event database of this CPU; valid until the sampler is freed. */
DK_EXPORT const dk_database *dk_sampler_database(const dk_sampler *s);


/* ------------------------------------------------------------------------ */
/* Thread sampler                                                            */
/* ------------------------------------------------------------------------ */

/* Most events one thread sampler can hold. */
#define DK_MAX_EVENTS 32

/*
 * dk_thread_open - configure counters for events on the calling thread.
 *
 * Events are placed on counters by kperfdata (never with hard-coded
 * register words) and programmed at once. The configurable counters are
 * shared by the whole process: a second thread sampler may use counters
 * another one has programmed only with the same event. On perf_event the
 * events are one group per core PMU, counted together: an event the PMU
 * cannot count beside the ones before it is refused (DK_ETOOMANY or
 * DK_ECONFLICT, naming it), never put in a second group that would take
 * turns with the first (dk_group time-shares events one by one).
 * Returns 0 and sets *out (not running), or: DK_EINVAL (NULL arguments,
 * n == 0 or n > DK_MAX_EVENTS, an out-of-range event), DK_EUNAVAILABLE (the
 * chip lacks an event), DK_ECONFLICT (events need the same counter; the
 * detail names them), DK_ETOOMANY (more events than counters; the detail
 * names the first that does not fit), DK_ESTATE
 * (the sampler released its counters), DK_EPERM (selfcounts backend: an event
 * other than instructions and cycles needs kperf, hence root; DK_EBUSY or
 * DK_EUNAVAILABLE instead when kperf was passed over for another reason,
 * which the detail names), DK_EOS, DK_EKPEP, DK_ENOMEM.
 */
DK_EXPORT int dk_thread_open(dk_sampler *s, const dk_event *events, size_t n, dk_thread **out);

/*
 * dk_thread_open_names - as dk_thread_open, with events named by strings.
 * A name is a portable name (see dk_portable_name), a native name
 * ("INST_BRANCH") or an alias ("Cycles"); native names and aliases also
 * match case-insensitively. A name may end in perf's privilege modifiers:
 * ":u" (user mode only), ":k" (kernel mode only), ":uk" (both); the name
 * reported back (dk_thread_event_name) keeps them. perf_event honours all
 * three; kperf counts ":u" with kpep's user-only flag and refuses ":k"
 * (DK_ENOTSUP); selfcounts and process totals on macOS cannot restrict modes
 * and refuse ":u" and ":k" (DK_ENOTSUP); other letters are DK_EINVAL, as is
 * ":k" or ":uk" on a DK_SAMPLER_USER_ONLY sampler.
 * Returns DK_ENOEVENT for a name the database does
 * not know, DK_EUNAVAILABLE for one that exists on other chips or has no
 * counterpart here; otherwise as dk_thread_open.
 */
DK_EXPORT int dk_thread_open_names(dk_sampler *s, const char *const *names, size_t n,
                                   dk_thread **out);

/* dk_thread_start - start counting. Idempotent. Returns 0, DK_ETHREAD,
 * DK_ESTATE (the sampler was released or closed), DK_EOS. */
DK_EXPORT int dk_thread_start(dk_thread *t);

/*
 * dk_thread_sample - store the raw running totals of the n events, in the
 * order they were given, in values[0..n-1]. Totals only grow; subtract two
 * samples to measure the region between them.
 * Returns 0, DK_EINVAL (NULL), DK_ETHREAD, DK_ESTATE (not running), DK_EOS.
 */
DK_EXPORT int dk_thread_sample(dk_thread *t, uint64_t *values);

/* What a reading knows about how the counters were scheduled. */
typedef struct dk_reading {
    uint64_t time_enabled; /* ns the counters have been enabled; 0: the backend does not say */
    uint64_t time_running; /* ns they were actually on the hardware */
    bool multiplexed;      /* time_running < time_enabled: the values were scaled */
    bool counted;          /* false when they never ran (time_running == 0): values are 0 */
} dk_reading;

/*
 * dk_thread_read - as dk_thread_sample, and describe the reading in *info
 * (may be NULL). When the kernel time-shared the counters (perf_event), each
 * value is the count scaled by time_enabled / time_running, as perf does.
 * The events of a thread sampler go on the PMU together, so one reading
 * describes them all.
 */
DK_EXPORT int dk_thread_read(dk_thread *t, uint64_t *values, dk_reading *info);

/*
 * dk_scale_count - count * enabled / running without overflow, the estimate
 * of a time-shared counter; 0 when running is 0, count when running >=
 * enabled.
 */
DK_EXPORT uint64_t dk_scale_count(uint64_t count, uint64_t enabled, uint64_t running);

/*
 * dk_thread_sample_perf_levels - the running totals split by CPU
 * performance level: values[level * n + i] for event i, levels entries of
 * n each (levels must equal dk_sampler_perf_levels()). Returns 0, DK_ENOTSUP
 * when the backend does not split, DK_EINVAL, DK_ETHREAD, DK_ESTATE, DK_EOS.
 */
DK_EXPORT int dk_thread_sample_perf_levels(dk_thread *t, uint64_t *values, size_t levels);

/* dk_thread_stop - stop counting. Idempotent. Returns 0, DK_ETHREAD, DK_EOS
 * (counting is considered stopped even then). */
DK_EXPORT int dk_thread_stop(dk_thread *t);

/* Whether the thread sampler is counting. */
DK_EXPORT bool dk_thread_is_running(const dk_thread *t);

/* Number of events of the thread sampler. */
DK_EXPORT size_t dk_thread_event_count(const dk_thread *t);

/* The native name counted for event i (after portable names and fallbacks
 * are resolved, with its ":u"/":k" modifiers when given), or NULL when i is
 * out of range. */
DK_EXPORT const char *dk_thread_event_name(const dk_thread *t, size_t i);

/* dk_thread_close - stop counting and free. Any thread may call it. NULL is
 * ignored. */
DK_EXPORT void dk_thread_close(dk_thread *t);

/* ------------------------------------------------------------------------ */
/* Process and system scopes                                                 */
/* ------------------------------------------------------------------------ */

/*
 * A dk_group counts events over a whole process or every CPU, where a
 * dk_thread counts the calling thread (cf. pmc.h's task and system
 * reservations). What each backend can do:
 *
 *   perf_event  process: any event, the process's threads and the children
 *               it creates afterwards (inherit); system: any event on every
 *               online CPU (needs CAP_PERFMON or perf_event_paranoid <= 0)
 *   kperf       process: instructions and cycles only (proc_pid_rusage);
 *               system: any event, from the per-CPU counters
 *   selfcounts  process: instructions and cycles only; no system scope
 *
 * Thread scope (DK_SCOPE_THREAD, pid is a thread id of any process): that
 * one thread, not the threads it starts; perf_event only (macOS gives no
 * counters of another process's thread without code injected into it:
 * kperf and selfcounts return DK_ENOTSUP). A process scope on another
 * running process (perf_event) counts every thread it has when the group
 * opens (from /proc/PID/task) and those they start afterwards; a thread
 * started in between the listing and the opening is missed, as with
 * perf stat -p.
 *
 * The scopes, dk_scope (DK_SCOPE_PROCESS, DK_SCOPE_SYSTEM, DK_SCOPE_THREAD),
 * are declared in dkperf/types.h: dk_sampling_options names them too.
 */

/* dk_group_open flags */
#define DK_GROUP_ENABLE_ON_EXEC \
    0x1u /* start counting now, or with perf_event at the
                                        process's next exec; the group opens running */
#define DK_GROUP_PARTIAL \
    0x2u /* keep events the scope cannot count, marked unsupported,
                                        instead of failing */
/* Count the processes the calling thread starts from now on (and threads it
 * creates afterwards start), each from its exec, with their children; never
 * the caller itself. DK_SCOPE_PROCESS with pid 0 only, not with
 * DK_GROUP_ENABLE_ON_EXEC. The group opens running and counts until it is
 * closed: dk_group_start does nothing, and dk_group_stop stops none of it
 * (the kernel enables each child's counters at its exec). dk_group_read gives
 * running totals: the counts of every such process that has exited, plus the
 * current counts of those still running; subtract a reading taken before a
 * process starts from one taken after it is reaped to get that process's
 * counts (time_enabled and time_running likewise add up the processes'
 * times; a process that ran has time_running past the first reading's). A process left running in the
 * background adds its counts when it exits, whenever that is. Saves opening
 * counters on each process: a tool can start commands with posix_spawn.
 * perf_event only; kperf and selfcounts return DK_ENOTSUP (on macOS, open a
 * process group on each child instead). */
#define DK_GROUP_CHILDREN 0x4u

typedef struct dk_group dk_group;

/*
 * dk_group_open - counters for n named events over a scope. pid is the
 * process for DK_SCOPE_PROCESS (0: this one), the thread id (above 0) for
 * DK_SCOPE_THREAD (not with DK_GROUP_ENABLE_ON_EXEC or DK_GROUP_CHILDREN),
 * and ignored for DK_SCOPE_SYSTEM. Names resolve as for dk_thread_open_names; a name no
 * database knows is always an error, one the scope cannot count is an
 * error unless DK_GROUP_PARTIAL.
 * Returns 0 and sets *out (stopped unless DK_GROUP_ENABLE_ON_EXEC), or
 * DK_EINVAL, DK_ENOEVENT, DK_EUNAVAILABLE, DK_EPERM, DK_ENOTSUP (the backend
 * has no such scope), DK_ECONFLICT, DK_ETOOMANY, DK_ESTATE, DK_EOS, DK_ENOMEM.
 */
DK_EXPORT int dk_group_open(dk_sampler *s, dk_scope scope, int pid, const char *const *names,
                            size_t n, unsigned flags, dk_group **out);

/* Events of the group, in the order given. */
DK_EXPORT size_t dk_group_event_count(const dk_group *g);
/* The native name counted for event i, or the name asked for when unsupported. */
DK_EXPORT const char *dk_group_event_name(const dk_group *g, size_t i);
/* The unit of event i's count ("ns" for task-clock), or NULL. */
DK_EXPORT const char *dk_group_event_unit(const dk_group *g, size_t i);
/* Whether event i is counted; dk_group_why(g, i) says why not ("" when it is). */
DK_EXPORT bool dk_group_supported(const dk_group *g, size_t i);
DK_EXPORT const char *dk_group_why(const dk_group *g, size_t i);
/* "process 1234 and the children it starts", "every CPU (8)", ... */
DK_EXPORT const char *dk_group_scope(const dk_group *g);

/* dk_group_start / dk_group_stop - idempotent; any thread may call them.
 * Return 0, DK_EINVAL, DK_ESTATE (the sampler gave its counters back), DK_EOS,
 * or on macOS process groups DK_EPERM (proc_pid_rusage refused) and
 * DK_ENOTSUP (libSystem lacks proc_pid_rusage). */
DK_EXPORT int dk_group_start(dk_group *g);
DK_EXPORT int dk_group_stop(dk_group *g);

/*
 * dk_group_read - counts since the group started, one per event (0 for
 * unsupported ones); info, when not NULL, holds n entries. Any thread may
 * read, also while another starts or stops the group. On macOS a
 * process's totals can still be read after it exits as long as it is not
 * reaped (waitid(..., WEXITED | WNOWAIT)). Returns 0, DK_EINVAL, DK_EOS, or
 * on macOS process groups DK_EPERM and DK_ENOTSUP as dk_group_start.
 */
DK_EXPORT int dk_group_read(dk_group *g, uint64_t *values, dk_reading *info);

/* dk_group_close - stop and free; gives back what it held. NULL is ignored. */
DK_EXPORT void dk_group_close(dk_group *g);

/*
 * Per-CPU and per-level breakdowns of a group.
 *
 * A system group (DK_SCOPE_SYSTEM) counts on each CPU separately:
 * dk_group_cpu_count gives how many CPUs it covers (0 for a process group,
 * or a backend that cannot tell them apart), dk_group_cpu_info describes
 * the i-th, and dk_group_read_cpus gives each one's counts. Where the
 * facts come from:
 *
 *   perf_event  the online CPUs; core and package from
 *               /sys/devices/system/cpu/cpuN/topology; levels from the
 *               hybrid core PMUs' cpus files (cpu_core: "P", cpu_atom:
 *               "E"), otherwise one level named "all"
 *   kperf       hw.ncpu CPUs; levels from hw.nperflevels and
 *               hw.perflevelN.logicalcpu / .physicalcpu, named "P"
 *               ("Performance") and "E" ("Efficiency"). macOS does not say
 *               which CPU numbers belong to which level: the efficiency
 *               level is taken to hold the lowest numbers, as Apple
 *               Silicon numbers its efficiency cluster first.
 *
 * A process group splits by level where the operating system does: on
 * macOS proc_pid_rusage(RUSAGE_INFO_V6) gives the instructions and cycles
 * a process retired on performance cores (no root needed; the rest ran on
 * efficiency cores). dk_group_perf_levels gives how many levels a group
 * splits by (for a system group, the levels of its CPUs; 0 when the group
 * cannot split), dk_group_read_perf_levels the counts.
 */
typedef struct dk_cpu_info {
    size_t size;            /* set to sizeof(dk_cpu_info) before the call */
    int id;                 /* the operating system's CPU number */
    int core;               /* physical core (SMT siblings share it); -1 when unknown */
    int package;            /* package (socket); -1 when unknown */
    int level;              /* performance level, 0 the fastest */
    const char *level_name; /* "P", "E", "all", ...; valid while the group is open */
} dk_cpu_info;

/* CPUs a system group counts on separately; 0 for other groups (and NULL). */
DK_EXPORT size_t dk_group_cpu_count(const dk_group *g);

/* dk_group_cpu_info - describe the i-th CPU (0 <= i < dk_group_cpu_count).
 * Returns 0 or DK_EINVAL (NULL, i out of range, info->size too small). */
DK_EXPORT int dk_group_cpu_info(const dk_group *g, size_t i, dk_cpu_info *info);

/*
 * dk_group_read_cpus - counts since start on each CPU: values[cpu * n + i]
 * for event i (n = dk_group_event_count), cpu indexing as
 * dk_group_cpu_info; ncpus must equal dk_group_cpu_count. Time-shared
 * counters are scaled as dk_group_read does, CPU by CPU; the rows add up
 * to dk_group_read's totals (within that scaling's rounding). Returns 0,
 * DK_EINVAL, DK_ENOTSUP (not a system group), DK_EOS.
 */
DK_EXPORT int dk_group_read_cpus(dk_group *g, uint64_t *values, size_t ncpus);

/*
 * dk_group_read_cpus_info - as dk_group_read_cpus, and each CPU's reading
 * in info[cpu * n + i] (ncpus * n entries, not NULL), as perf stat -A
 * gives every CPU its own run time:
 *
 *   perf_event  each CPU's counter's own TOTAL_TIME_ENABLED and
 *               TOTAL_TIME_RUNNING (the CPUs are enabled one after the
 *               other, and each time-shares its PMU on its own); the
 *               rows' times add up to dk_group_read's
 *   kperf       kpc counts every CPU over the same span and never
 *               time-shares: each CPU's reading is the group's, both
 *               times the ns the group has been enabled (started, not
 *               yet stopped), on the library's monotonic clock
 *   selfcounts  no system scope: DK_ENOTSUP, as dk_group_read_cpus
 *
 * Returns as dk_group_read_cpus; DK_EINVAL for a NULL info.
 */
DK_EXPORT int dk_group_read_cpus_info(dk_group *g, uint64_t *values, dk_reading *info,
                                      size_t ncpus);

/* Performance levels the group's counts split by (0: none); the name of
 * level i ("P", "E", ...), or NULL out of range. */
DK_EXPORT size_t dk_group_perf_levels(const dk_group *g);
DK_EXPORT const char *dk_group_perf_level_name(const dk_group *g, size_t level);

/*
 * dk_group_read_perf_levels - counts since start split by performance
 * level: values[level * n + i]; levels must equal dk_group_perf_levels. A
 * process group on macOS splits instructions and cycles (other events read
 * 0); a system group sums its CPUs by level. The levels add up to
 * dk_group_read's totals. Returns 0, DK_EINVAL, DK_ENOTSUP (the group does
 * not split), DK_EPERM, DK_EOS, DK_ENOMEM.
 */
DK_EXPORT int dk_group_read_perf_levels(dk_group *g, uint64_t *values, size_t levels);

/* ------------------------------------------------------------------------ */
/* Sampling on counter overflow and on timers: in dkperf/sampling.h, which  */
/* this header includes                                                     */
/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

/* "INST_BRANCH" for DK_EVENT_INST_BRANCH; NULL when out of range. */
DK_EXPORT const char *dk_event_name(dk_event ev);

/* The event called name (case-insensitive). Returns 0, DK_EINVAL (NULL) or
 * DK_ENOEVENT. */
DK_EXPORT int dk_event_from_name(const char *name, dk_event *out);

/* The chip's definition of an event, or NULL where the chip lacks it. On
 * DK_CPU_INTEL, and DK_CPU_UNKNOWN, every event gives NULL: their events
 * come from the database. */
DK_EXPORT const dk_event_def *dk_event_on(dk_event ev, dk_cpu cpu);

/* "M1".."M5", "Intel", "unknown". */
DK_EXPORT const char *dk_cpu_name(dk_cpu cpu);

/*
 * Portable event names, the same on every chip and backend: "instructions",
 * "cycles", "branches", "branch-misses", "l1d-load-misses", "l1i-misses",
 * "dtlb-misses", "llc-misses". dk_portable_name(i) gives the i-th (NULL past
 * the end); dk_portable_description(i) a line about it.
 */
DK_EXPORT const char *dk_portable_name(size_t i);
DK_EXPORT const char *dk_portable_description(size_t i);

/* ------------------------------------------------------------------------ */
/* Event database                                                            */
/* ------------------------------------------------------------------------ */

typedef enum dk_arch { DK_ARCH_UNKNOWN = 0, DK_ARCH_ARM64 = 1, DK_ARCH_X86_64 = 2 } dk_arch;

/* Counter classes, for dk_database_counter_count. */
#define DK_COUNTERS_FIXED 0x1u
#define DK_COUNTERS_CONFIGURABLE 0x2u
#define DK_COUNTERS_POWER 0x4u /* configurable counters shared with the power manager */

/* One event of the database. */
typedef struct dk_database_event {
    const char *name;        /* native name, e.g. "INST_BRANCH", "task-clock" */
    const char *description; /* never NULL (may be "") */
    const char *errata;      /* NULL when none */
    const char *alias;       /* e.g. "Cycles"; NULL when none */
    const char *fallback;    /* configurable stand-in for a fixed event; NULL when none */
    bool fixed;              /* counts on a fixed counter */
    uint16_t number;         /* selector (0 for fixed events) */
    uint32_t counters_mask;  /* bit i: may use counter i; 0: any configurable counter */
    const char *unit;        /* unit of the count, e.g. "ns" for task-clock; NULL: events */
    const char *source;      /* "kpep"; on Linux "hardware", "hw-cache", "software" or a
                                sysfs PMU name such as "cpu" */
    bool supported;          /* false: listed, but this machine cannot count it (e.g. a
                                hardware event without a hardware PMU). Found when the
                                database hands the event out (dk_database_event_at,
                                _find, _match, _fixed_event); an event from
                                dk_sampler_resolve is not probed: look it up to know */
} dk_database_event;

/* Database name, e.g. "a14", "as4", "haswell"; "linux" on Linux. */
DK_EXPORT const char *dk_database_name(const dk_database *db);
/* CPU id, e.g. "cpu_100000c_2_1b588bb3". */
DK_EXPORT const char *dk_database_cpu_id(const dk_database *db);
/* Marketing name, e.g. "Apple A14/M1". */
DK_EXPORT const char *dk_database_marketing_name(const dk_database *db);
DK_EXPORT dk_arch dk_database_arch(const dk_database *db);
/* Counters in the classes given as DK_COUNTERS_* bits. */
DK_EXPORT size_t dk_database_counter_count(const dk_database *db, unsigned classes);
/* Number of events, and the i-th (sorted by name; NULL past the end). */
DK_EXPORT size_t dk_database_event_count(const dk_database *db);
DK_EXPORT const dk_database_event *dk_database_event_at(const dk_database *db, size_t i);
/* The fixed-counter events: count, and the one on fixed counter i (NULL if none). */
DK_EXPORT size_t dk_database_fixed_count(const dk_database *db);
DK_EXPORT const dk_database_event *dk_database_fixed_event(const dk_database *db, size_t i);
/* The event with this alias or name (aliases first, exact), or NULL. */
DK_EXPORT const dk_database_event *dk_database_find(const dk_database *db, const char *name);
/*
 * dk_database_match - events whose name or alias contains partial,
 * case-insensitively (pmc.h's pmc_find_by_name; "" matches all). Up to max
 * of them are stored in matches (which may be NULL when max is 0), in
 * database order. Returns how many match in all.
 */
DK_EXPORT size_t dk_database_match(const dk_database *db, const char *partial,
                                   const dk_database_event **matches, size_t max);

/*
 * dk_sampler_resolve - what a name stands for on this sampler, as
 * dk_thread_open_names would resolve it (portable names, native names,
 * aliases, the backend's own syntax), without opening counters: whether
 * the machine counts the event (its supported flag) is not probed here;
 * dk_database_find on its name says.
 * Returns 0 and sets *out (valid while s lives), DK_EINVAL, DK_ENOEVENT or
 * DK_EUNAVAILABLE, with the detail in dk_last_error().
 */
DK_EXPORT int dk_sampler_resolve(dk_sampler *s, const char *name, const dk_database_event **out);

/* dk_group_event - the database event member i of g resolved to: the same
 * pointer dk_sampler_resolve gives for its name, modifiers aside (valid
 * while the sampler lives), or NULL when it is unsupported. Compare events
 * by it, not by name. */
DK_EXPORT const dk_database_event *dk_group_event(const dk_group *g, size_t i);

/* ------------------------------------------------------------------------ */
/* Event specs: the one grammar of an event as a user writes it              */
/* ------------------------------------------------------------------------ */

/*
 * An event spec, as perf writes one:
 *
 *   spec       = event [modifiers] [rate]
 *   event      = name | "r" hex-digits | pmu "/" terms "/"
 *   modifiers  = ":" letters         (after a pmu/.../ the ':' may be left out)
 *   letters    = any of u (user mode), k (kernel mode), h (hypervisor)
 *   rate       = "/" digits          sample every N events (a period)
 *              | "@" digits          N samples a second (a frequency)
 *
 * A name is one or more bytes other than ',' '/' ':' '@'; "r" followed by 1
 * to 16 hexadecimal digits only is a raw config (perf_event); the terms of a
 * pmu/.../ event ("event=0x3c,umask=1") may hold commas. A '/' after a name
 * starts a period when only digits (after an optional sign) follow it to the
 * end of the spec, and pmu terms otherwise ("cycles/1000" samples cycles;
 * "cpu/event=0x3c/" is a PMU event). A list of specs is separated by commas,
 * except inside pmu/.../. The parser only reads the text: whether an event
 * exists is for dk_sampler_resolve.
 *
 * Errors are DK_EINVAL with dk_last_error() naming the spec and the 1-based
 * position of the offending byte in the text given ("event 'cycles:q' at
 * position 8: unknown modifier 'q' ..."). Parsing takes time linear in the
 * length of the text.
 */
typedef enum dk_event_spec_kind {
    DK_EVENT_SPEC_NAME = 1, /* a portable name, native name or alias */
    DK_EVENT_SPEC_RAW = 2,  /* rNNN: raw holds the config */
    DK_EVENT_SPEC_PMU = 3   /* pmu/term=value,.../ */
} dk_event_spec_kind;

/* dk_event_spec.modifiers */
#define DK_EVENT_MOD_USER 0x1u   /* u */
#define DK_EVENT_MOD_KERNEL 0x2u /* k */
#define DK_EVENT_MOD_HV 0x4u     /* h */

/* The largest period and frequency a spec may give. */
#define DK_EVENT_SPEC_MAX_PERIOD (UINT64_MAX / 2)
#define DK_EVENT_SPEC_MAX_FREQ 1000000u

typedef struct dk_event_spec {
    size_t size; /* set to sizeof(dk_event_spec) before the call; the
                           library fills what fits and sets it to what it wrote */
    dk_event_spec_kind kind;
    const char *text;   /* the spec, inside the text parsed (not NUL-terminated) */
    size_t len;         /* its length */
    size_t event_len;   /* text[0, event_len): the name, rNNN or pmu/terms/ alone */
    size_t base_len;    /* text[0, base_len): the event and its modifiers, without the rate */
    size_t pmu_len;     /* DK_EVENT_SPEC_PMU: the PMU is text[0, pmu_len), the terms
                           text[pmu_len + 1, event_len - 1) */
    size_t offset;      /* where the spec starts in the text given (0 for
                           dk_event_spec_parse) */
    unsigned modifiers; /* DK_EVENT_MOD_*; 0 when none are given */
    uint64_t raw;       /* DK_EVENT_SPEC_RAW: the config */
    uint64_t period;    /* from "/N"; 0 when not given */
    uint64_t freq;      /* from "@HZ"; 0 when not given */
} dk_event_spec;

/*
 * dk_event_spec_parse - one spec, the len bytes at text (no comma splitting:
 * a comma outside pmu/.../ is an error). Returns 0 and fills *out, whose
 * text points into text, or DK_EINVAL.
 */
DK_EXPORT int dk_event_spec_parse(const char *text, size_t len, dk_event_spec *out);

/*
 * dk_event_list_next - the next spec of a comma-separated, NUL-terminated
 * list, from byte *pos (0 at first), which then moves past the spec and
 * its comma. Returns 1 and fills *out (out->offset is where it starts in
 * list), 0 at the end of the list, or DK_EINVAL: an empty list, an empty
 * spec (",a", "a,,b", a trailing comma) or a spec that does not parse.
 *
 *     size_t pos = 0;
 *     dk_event_spec sp = {.size = sizeof sp};
 *     int rc;
 *     while ((rc = dk_event_list_next(list, &pos, &sp)) == 1)
 *         use(sp.text, sp.base_len, sp.period, sp.freq);
 */
DK_EXPORT int dk_event_list_next(const char *list, size_t *pos, dk_event_spec *out);

#ifdef __cplusplus
}
#endif

#endif /* DKPERF_H */
