/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkperf/sampling.h - sampling on counter overflow and on timers: a
 * dk_sampling takes samples of a scope (its ip, call chain, counts) and
 * delivers them with the images mapped, execs and exits of its targets.
 *
 * dkperf.h includes this header, so a program that includes dkperf.h has
 * all of it; it may also be included alone. The sampler it samples with
 * (dk_sampler_open) is dkperf.h's.
 */
#ifndef DKPERF_SAMPLING_H
#define DKPERF_SAMPLING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkperf/error.h"
#include "dkperf/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A dk_sampling takes a sample every N occurrences of an event (its
 * period), or N times a second (its frequency), over a scope, as pmc.h's
 * PMI threshold and perf record do. What each backend can do:
 *
 *   perf_event  any event the machine counts, including software events
 *               (cpu-clock, task-clock, page-faults) on machines without a
 *               PMU; period or frequency; thread, process (with inherit for
 *               the children it starts) and system scopes; a ring buffer per
 *               thread or CPU, drained without blocking the target. A target
 *               that runs already has its images read from /proc/<pid>/maps
 *               at the first start, delivered as MAP records first.
 *   kperf       PMIs on configurable counters (kpc_set_period,
 *               kpc_set_actionid) and kperf timers; samples arrive as kdebug
 *               records (root only; tracing is exclusive, another owner such
 *               as Instruments or ktrace gives DK_EBUSY). Counters take a
 *               period only (a frequency: DK_ENOTSUP); a fixed-counter event
 *               samples on its configurable twin; "timer" takes a period in
 *               ns or a frequency. Process scope covers the process's threads,
 *               not its children; ENABLE_ON_EXEC starts at once.
 *               DK_SAMPLING_OFF_CPU makes the first "timer" event kperf's
 *               PET timer (traditional PET, kperf.lightweight_pet set to 0,
 *               kperf.pet_idle_rate to 1 so that every sample has its
 *               stack; its period is at least 1 ms): on-CPU samples come
 *               from the timer as before, and each period every thread of
 *               the target that was blocked (its TI_DATA runmode has
 *               neither KPERF_TI_RUNNING nor RUNNABLE alone: a preempted
 *               thread only waits for a CPU) gives a sample with off_cpu
 *               set, event 0, period the ns since the PET timer's
 *               previous fire (XNU re-arms it after each PET pass, so a
 *               slow pass spaces fires more than a period apart; the
 *               timer period for the first fire after a start), and the
 *               user stack it waits on; it needs a timer event
 *               (DK_ENOTSUP otherwise) and a process (not system) scope.
 *               Tested on the simulated frameworks only (tests/sim).
 *   selfcounts  none: DK_ENOTSUP.
 */
typedef struct dk_sampling dk_sampling;

/* One event to sample on. */
typedef struct dk_sampling_event {
    const char *name; /* as for dk_group_open ("cycles", "cpu-clock", a native name),
                         or "timer" for a time-based sample where the backend has one */
    uint64_t period;  /* sample every period events; 0: use freq */
    uint64_t freq;    /* samples per second when period is 0 (the kernel or the
                         library adjusts the period); both 0: the backend default
                         (perf_event: 4000 a second, as perf record) */
} dk_sampling_event;

/* dk_sampling_options.record: what each sample holds (DK_SAMPLE_*). */
#define DK_SAMPLE_TIME 0x01u      /* time_ns */
#define DK_SAMPLE_TID 0x02u       /* pid and tid */
#define DK_SAMPLE_CPU 0x04u       /* cpu */
#define DK_SAMPLE_IP 0x08u        /* ip */
#define DK_SAMPLE_PERIOD 0x10u    /* period */
#define DK_SAMPLE_CALLCHAIN 0x20u /* user call chain */
#define DK_SAMPLE_READ 0x40u      /* the values of every event of the sampling */
/* With CALLCHAIN: the kernel's call chain too, in kernel_frames (perf_event;
 * the kernel gives it for samples taken in kernel mode, which an event
 * counting user mode only never has); other backends give none. */
#define DK_SAMPLE_KERNEL_CALLCHAIN 0x80u

/* dk_sampling_options.flags */
#define DK_SAMPLING_ENABLE_ON_EXEC 0x1u /* start at the process's next exec (perf_event) */
#define DK_SAMPLING_INHERIT \
    0x2u /* also the threads and children the target
                                           creates afterwards */
/* Sample every thread of the target on the timer, blocked ones included
 * (wall-clock / off-CPU profile); samples of a thread that was not on a
 * CPU have off_cpu set and period in ns. kperf: PET; perf_event: the
 * context-switches software event with switch records. */
#define DK_SAMPLING_OFF_CPU 0x4u

typedef struct dk_sampling_options {
    size_t size;         /* sizeof(dk_sampling_options), for growth */
    dk_scope scope;      /* DK_SCOPE_THREAD, DK_SCOPE_PROCESS or DK_SCOPE_SYSTEM */
    int pid;             /* the thread or process (0: the caller); ignored for SYSTEM */
    unsigned record;     /* DK_SAMPLE_*; 0: TIME|TID|CPU|IP|PERIOD */
    unsigned flags;      /* DK_SAMPLING_* */
    size_t buffer_bytes; /* per ring buffer; 0: the backend default */
    unsigned max_frames; /* call chain depth; 0: the backend default */
} dk_sampling_options;

#define DK_SAMPLING_OPTIONS_INIT                                        \
    {                                                                   \
        sizeof(dk_sampling_options), DK_SCOPE_PROCESS, 0, 0u, 0u, 0, 0u \
    }

/* What a record delivered by dk_sampling_drain is. */
typedef enum dk_sample_kind {
    DK_SAMPLE_KIND_SAMPLE = 1, /* a sample: every field below as the record bits ask */
    DK_SAMPLE_KIND_MAP = 2,    /* an image mapped in pid: map_* fields */
    DK_SAMPLE_KIND_COMM = 3,   /* pid/tid took the name in comm (exec: see exec) */
    DK_SAMPLE_KIND_EXIT = 4    /* pid/tid exited */
} dk_sample_kind;

typedef struct dk_sample {
    dk_sample_kind kind;
    size_t event;     /* index of the sampled event in the events given */
    uint64_t time_ns; /* CLOCK_MONOTONIC (Linux) or mach_absolute_time in ns */
    int pid;
    uint64_t tid;
    unsigned cpu;
    uint64_t ip;
    bool user;              /* ip is in user space */
    uint64_t period;        /* events this sample stands for */
    const uint64_t *frames; /* user call chain, innermost first (frames[0] is
                                the sampled pc when it is in user space) */
    size_t n_frames;
    bool truncated;         /* the chain was cut at max_frames or by the kernel */
    const uint64_t *values; /* DK_SAMPLE_READ: one per event, running totals */
    size_t n_values;
    /* DK_SAMPLE_KIND_MAP */
    uint64_t map_start, map_len, map_pgoff;
    const char *map_path;
    /* DK_SAMPLE_KIND_COMM */
    const char *comm;
    /* DK_SAMPLE_KERNEL_CALLCHAIN: the kernel's call chain, innermost first
     * (the sampled pc first), when the sample was taken in the kernel */
    const uint64_t *kernel_frames;
    size_t n_kernel_frames;
    bool off_cpu; /* DK_SAMPLING_OFF_CPU: the thread was off CPU; period is
                     the ns it stayed off (perf_event) or the ns between
                     the PET fires the sample stands for (kperf) */
    /* DK_SAMPLE_KIND_EXIT: the process's wait status (as waitpid gives
     * it: WIFEXITED, WEXITSTATUS, WTERMSIG), when has_exit_status says the
     * backend knows it (kperf: BSD_PROC_EXIT's p_xstat; perf_event's
     * exit records carry none) */
    bool has_exit_status;
    int exit_status;
    /* DK_SAMPLE_KIND_COMM: the name came with an exec, so the process's
     * earlier maps are gone and its later samples are in the new image's
     * (perf_event: PERF_RECORD_MISC_COMM_EXEC; kperf: TRACE_STRING_EXEC).
     * false for a rename (prctl PR_SET_NAME, pthread_setname_np) and for
     * the name a process is first reported with. */
    bool exec;
} dk_sample;

/* Called for each record; the record and its arrays are valid during the
 * call only. A non-zero return stops the drain and is returned by it. */
typedef int (*dk_sample_fn)(void *ctx, const dk_sample *sample);

/* Counts of what the kernel could not deliver; never hidden. */
typedef struct dk_sampling_stats {
    uint64_t samples;   /* delivered to callbacks */
    uint64_t lost;      /* what the kernel dropped (a buffer full): samples, or where
                           the kernel does not say how many, the times it dropped
                           some (dk_backend_caps.lost_means says which) */
    uint64_t throttled; /* times the kernel throttled sampling for its rate */
    uint64_t unthrottled;
} dk_sampling_stats;

/*
 * dk_sampling_open - n events to sample, over the scope in opts (NULL:
 * this process, default record bits). Opens stopped unless
 * DK_SAMPLING_ENABLE_ON_EXEC. Returns 0 and sets *out, or DK_EINVAL,
 * DK_ENOEVENT, DK_EUNAVAILABLE, DK_EPERM (sampling needs a privilege the
 * caller lacks, e.g. root on macOS, where the selfcounts backend taken
 * without it cannot sample; dk_last_error says which), DK_EBUSY (another
 * tool owns tracing or holds the counters), DK_ENOTSUP (the backend or scope cannot sample), DK_ETOOMANY,
 * DK_ESTATE, DK_EOS, DK_ENOMEM. Nothing is left armed on failure.
 */
DK_EXPORT int dk_sampling_open(dk_sampler *s, const dk_sampling_event *events, size_t n,
                               const dk_sampling_options *opts, dk_sampling **out);
/*
 * Threads and one sampling: start, stop, drain, wait, stats_get,
 * event_count and event_name may be called at the same time from any
 * threads. Drains take turns (one delivers at a time, so fn needs no lock
 * of its own against another drain of the sampling); a wait blocks without
 * holding up drains and keeps to its timeout whatever the other threads'
 * drains and waits do, and a record is delivered once, by whichever drain
 * comes first (a wait's 1 may find it taken by another thread's drain).
 * A stop does not end another thread's wait (see dk_sampling_wait): a
 * thread that waits while others may stop should give a timeout.
 * dk_sampling_close must not run while any other call on the sampling
 * does: join or stop those threads first.
 */
/* Idempotent; any thread may call them. */
DK_EXPORT int dk_sampling_start(dk_sampling *p);
DK_EXPORT int dk_sampling_stop(dk_sampling *p);
/*
 * dk_sampling_drain - deliver every record buffered so far to fn, oldest
 * first, without blocking and without stopping the target. Returns the
 * number of records delivered (>= 0), fn's non-zero return, or DK_EINVAL,
 * DK_EOS, DK_ESTATE (called from fn for the same sampling). Drains from
 * several threads take turns; fn may drain another sampling.
 */
DK_EXPORT int dk_sampling_drain(dk_sampling *p, dk_sample_fn fn, void *ctx);
/* dk_sampling_wait - wait up to timeout_ms (-1: forever) for records to
 * drain. Returns 1 when some are ready, 0 on timeout, DK_EOS, DK_ESTATE
 * (called from fn of a drain of the same sampling). EINTR gives 0,
 * and so does a wait without timeout once every target has exited. A
 * stopped sampling with nothing left to drain waits out the timeout (with
 * -1, until a signal): after dk_sampling_stop, drain instead of waiting. */
DK_EXPORT int dk_sampling_wait(dk_sampling *p, int timeout_ms);
/* Counts so far; during a drain in another thread, each count is one it
 * has reached (they are read one by one). Returns 0 or DK_EINVAL. */
DK_EXPORT int dk_sampling_stats_get(const dk_sampling *p, dk_sampling_stats *out);
/* Events of the sampling and the native name and period each resolved to. */
DK_EXPORT size_t dk_sampling_event_count(const dk_sampling *p);
DK_EXPORT const char *dk_sampling_event_name(const dk_sampling *p, size_t i);
/*
 * dk_sampling_event_rate - the rate event i samples at, after the backend's
 * defaults: *period events a sample (ns for "timer"; 0 in frequency mode)
 * and *freq samples a second (0 when sampling on a period). Either pointer
 * may be NULL. Returns 0 or DK_EINVAL (NULL p, i out of range).
 */
DK_EXPORT int dk_sampling_event_rate(const dk_sampling *p, size_t i, uint64_t *period,
                                     uint64_t *freq);
/* Stop, disarm and free; gives back what it held. NULL is ignored. Not
 * concurrently with any other call on p (see above); from fn of a drain of
 * p it does nothing but set dk_last_error() (DK_ESTATE). */
DK_EXPORT void dk_sampling_close(dk_sampling *p);

#ifdef __cplusplus
}
#endif

#endif /* DKPERF_SAMPLING_H */
