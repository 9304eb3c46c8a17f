/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_sampling_sim.c - how the simulated kperf samples: PMIs of
 * configurable counters that cross their period, and kperf timer fires,
 * each logged as the kdebug records XNU emits (osfmk/kperf/action.c
 * kperf_sample_internal and kperf_sample_user_internal, osfmk/kern/
 * kpc_common.c kpc_sample_kperf, osfmk/kperf/kptimer.c, osfmk/kperf/
 * callstack.c callstack_log). Included by kperf_sim.c, which owns the
 * state it reads. Simulated: nothing here was checked on Apple hardware.
 *
 * The target is often another process that never loads the sim, so the
 * interrupts come from Linux: while tracing is on and a source is armed,
 * a software perf_event samples the filtered pid's threads (every CPU when
 * the action has no pid filter) with their real call chains. A PMI source
 * samples task-clock every period / rate nanoseconds of CPU time, the rate
 * being the one the sim's counters count at (rate_of: cycles at 3 GHz); a
 * timer source samples cpu-clock every timer period. Each Linux sample
 * becomes the records of one PMI or timer handler. PET: traditional PET's
 * PET thread samples every thread each period (kperf_petpass_sim.c,
 * kperf_pet_sim.c); lightweight PET samples threads as Linux's
 * context-switches event sees them switch (kppet_on_cpu). They are turned
 * into records when the trace buffer is read or waited on (KERN_KDREADTR,
 * KERN_KDBUFWAIT); the rings are read in kperf_linux_sim.c.
 */
#include <dirent.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "sim_kernel.h"

#define S_MAX_SOURCES 16
#define S_MAX_FDS 256
#define S_RING_PAGES 64

/* Debug ids (osfmk/kperf/buffer.h; /work/shared/xnu/debugids.md). */
#define ID_GEN_EVENT 0x25000000u
#define ID_TI_DATA 0x25010004u
#define ID_CS_KDATA 0x2502000cu
#define ID_CS_UDATA 0x25020010u
#define ID_CS_KHDR 0x25020014u
#define ID_CS_UHDR 0x25020018u
#define ID_TM_FIRE 0x25030000u
#define ID_TM_HNDLR 0x25030008u
#define ID_KPC_HNDLR 0x25060000u
#define ID_KPC_DATA_THREAD 0x25060020u
#define ID_PROC_EXIT 0x04010004u         /* BSDDBG_CODE(DBG_BSD_PROC, BSD_PROC_EXIT) */
#define ID_PROC_EXEC 0x0401000cu         /* BSDDBG_CODE(DBG_BSD_PROC, BSD_PROC_EXEC) */
#define ID_TRACE_DATA_EXEC 0x07000008u   /* TRACEDBG_CODE(DBG_TRACE_DATA, 2) */
#define ID_TRACE_STRING_EXEC 0x07010008u /* TRACEDBG_CODE(DBG_TRACE_STRING, 2) */
/* bsd/sys/kdebug.h: MACHDBG_CODE(DBG_MACH_EXCP_INTR, 0), MACHDBG_CODE(DBG_MACH_SCHED,
 * MACH_SCHED), DBG_INTR_TYPE_PMI / _OTHER; osfmk/i386/lapic.h: the PMI vector. */
#define ID_INTR 0x01050000u
#define ID_MACH_SCHED 0x01400000u
#define INTR_TYPE_OTHER 3u
#define INTR_TYPE_PMI 4u
#define X86_PERFCNT_VECTOR 0xdfu /* LAPIC_DEFAULT_INTERRUPT_BASE + LAPIC_PERFCNT_INTERRUPT */
#define FUNC_START 1u
#define FUNC_END 2u

#define SAMPLE_FLAG_PEND_USER 0x1u
#define SAMPLE_FLAG_IDLE_THREADS 0x2u
#define SAMPLE_FLAG_EMPTY_CALLSTACK 0x4u
#define SAMPLE_FLAG_NON_INTERRUPT 0x10u
#define SAMPLE_FLAG_THREAD_ONLY 0x100u
#define META_UPEND 0x2u
#define CS_VALID 0x1u
#define CS_64BIT 0x4u
#define CS_KERNEL 0x8u
#define CS_TRUNCATED 0x10u
#define CS_KERNEL_WORDS 0x40u
#define KPC_KERNEL_PC 0x01u
#define KPC_KERNEL_COUNTING 0x02u
#define KPC_USER_COUNTING 0x04u
#define UCALLSTACK_MAX 256 /* MAX_UCALLSTACK_FRAMES, the fixup word included */
#define KCALLSTACK_MAX 128

/* SRC_ONCPU: lightweight PET's samples of threads switched on CPU. */
enum { SRC_PMI = 1, SRC_TIMER = 2, SRC_ONCPU = 3 };
enum { PET_NONE, PET_TRADITIONAL, PET_LIGHTWEIGHT };
/* The PET thread, a kernel thread: what its records carry as arg5. */
#define PET_THREAD_TID 0x100000001ull

typedef struct src_spec {
    int kind;
    unsigned index;  /* PMI: absolute counter; timer: timer id */
    uint32_t action; /* 1-based */
    uint32_t samplers;
    int32_t pid;        /* -1: every process */
    uint64_t period;    /* PMI: events; timer: ticks */
    uint64_t period_ns; /* of CPU time */
    uint64_t config;    /* PMI: the counter's config word */
    uint8_t mode;
    bool switches; /* also the threads' context switches (MACH_SCHED) */
    uint8_t pet;   /* timer: PET_* when it is the PET timer */
} src_spec;

typedef struct source {
    src_spec spec;
    uint64_t count;    /* PMI: the counter's running total */
    uint64_t start_ns; /* timers: when armed, the first period's start */
    uint64_t next_fire_ns;
    /* Traditional PET: the next fire not yet logged, and the on-CPU
     * samples of its period read before the period ended (logged with it). */
    uint64_t pet_fire_ns;
    struct batch *held;
    size_t nheld, held_cap;
    int nfds;
    int fds[S_MAX_FDS];
    void *rings[S_MAX_FDS];
} source;

static source sources[S_MAX_SOURCES];
static size_t source_count;
static bool open_failed_said;

/* CPU time each sampled thread has been seen to run, for PMC_THREAD, and
 * the PET generation it was last sampled in + 1 (kperf_pet_gen). */
#define TALLY_SLOTS 1024
typedef struct tally_entry {
    uint64_t tid, ns, pet_gen;
    uint64_t pet_cnt, pet_cswitch; /* thread_t kperf_pet_cnt, kperf_c_switch */
} tally_entry;
static tally_entry tally[TALLY_SLOTS];

static tally_entry *tally_of(uint64_t tid)
{
    size_t i = (size_t)(tid * 2654435761u) % TALLY_SLOTS;
    for (size_t k = 0; k < TALLY_SLOTS; k++, i = (i + 1) % TALLY_SLOTS) {
        if (tally[i].tid == tid)
            return &tally[i];
        if (tally[i].tid == 0) {
            tally[i].tid = tid;
            return &tally[i];
        }
    }
    return &tally[0]; /* full: an estimate is all this is anyway */
}

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t ring_bytes(void)
{
    return (size_t)(1 + S_RING_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
}

static void close_source(source *s)
{
    for (int i = 0; i < s->nfds; i++) {
        if (s->rings[i] != NULL)
            munmap(s->rings[i], ring_bytes());
        close(s->fds[i]);
    }
    s->nfds = 0;
}

static int open_one(source *s, const struct perf_event_attr *attr, pid_t pid, int cpu)
{
    if (s->nfds == S_MAX_FDS)
        return -1;
    int fd = (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -1;
    void *ring = mmap(NULL, ring_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
        close(fd);
        return -1;
    }
    s->fds[s->nfds] = fd;
    s->rings[s->nfds++] = ring;
    return 0;
}

static void say_open_failed(const char *what, int e)
{
    if (open_failed_said)
        return;
    open_failed_said = true;
    fprintf(stderr,
            "dkperf sim: cannot sample %s with a Linux perf_event (%s): the simulated "
            "kperf delivers no samples\n",
            what, strerror(e));
}

static void open_source(source *s)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = s->spec.kind == SRC_PMI     ? PERF_COUNT_SW_TASK_CLOCK
               : s->spec.kind == SRC_ONCPU ? PERF_COUNT_SW_CONTEXT_SWITCHES
                                           : PERF_COUNT_SW_CPU_CLOCK;
    /* Lightweight PET: every switch of a thread (Linux samples it as the
     * thread leaves the CPU, with the stack it comes back on with). */
    a.sample_period = s->spec.kind == SRC_ONCPU ? 1 : s->spec.period_ns;
    s->start_ns = s->next_fire_ns = s->pet_fire_ns = monotonic_ns();
    /* A new start: kppet_current_gen counts from it (kppet_lightweight_active_update). */
    for (size_t i = 0; s->spec.kind == SRC_ONCPU && i < TALLY_SLOTS; i++)
        tally[i].pet_gen = 0;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                    PERF_SAMPLE_CALLCHAIN;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.exclude_hv = 1;
    a.exclude_kernel = s->spec.mode == MODE_USER;
    a.exclude_user = s->spec.mode == MODE_KERNEL;
    a.wakeup_events = 1;
    /* Thread exits (PERF_RECORD_EXIT, with TID, TIME and CPU after it):
     * a process's own is XNU's BSD_PROC_EXIT (see exit_batch). */
    a.task = 1;
    /* Execs (PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC): XNU's
     * exec records (see exec_batch). */
    a.comm = 1;
    a.comm_exec = 1;
    a.sample_id_all = 1;
    a.context_switch = s->spec.switches;
    if (s->spec.pid == -1) {
        /* The host's CPUs, not the chip's: the simulated chip may have
         * more than the machine the sim runs on (an 8-CPU M1 on a 2-CPU
         * VM), and perf_event_open refuses a CPU that is not there. */
        for (int cpu = 0; cpu < host_cpus; cpu++)
            if (open_one(s, &a, -1, cpu) != 0)
                say_open_failed("every CPU", errno);
        return;
    }
    /* The process's threads now, and (inherit) those they create. */
    a.inherit = 1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)s->spec.pid);
    DIR *d = opendir(path);
    if (d == NULL)
        return; /* no such process: kperf filters for a pid that never runs */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int tid = atoi(e->d_name);
        /* An inherited per-thread event can be mapped only per CPU
         * (perf_mmap refuses cpu -1 with inherit), as perf record does. */
        for (int cpu = 0; tid > 0 && cpu < host_cpus; cpu++)
            if (open_one(s, &a, tid, cpu) != 0 && errno != ESRCH)
                say_open_failed("a thread of the filtered process", errno);
    }
    closedir(d);
}

static uint64_t ticks_of(uint64_t ns);

/* Minimum timer periods (kptimer.c kptimer_minperiods_ns, foreground). */
static uint64_t timer_min_ns(const sim_chip *c) { return is_intel(c) ? 20000 : 50000; }

/* kptimer_min_period_abs, foreground: 1 ms for the PET timer. */
static uint64_t timer_min_ticks(const sim_chip *c, bool pet)
{
    return ticks_of(pet ? 1000000 : c != NULL ? timer_min_ns(c) : 50000);
}

/*
 * What should be armed now. The kernel keeps its PMIs and timers armed and
 * logs only while tracing; the sim arms perf_events only while tracing is
 * on, which records the same. Caller holds state_lock.
 */
static size_t desired_sources(const sim_chip *c, src_spec *out)
{
    size_t n = 0;
    /* Whatever the filter: XNU samples and filters each record on its own
     * (kdebug.c _should_emit_debugid). */
    if (c == NULL || !simk_kdebug_tracing())
        return 0;
#ifndef SIM_OMIT_OPTIONAL
    /* PMIs: a counting configurable counter with a period and an action
     * (kpc_pmi_handler needs no kperf.sampling, FACTS B.3). */
    uint32_t active = active_counters(c, counting) & c->config_bits;
    for (unsigned i = 0; i < KPC_MAX_COUNTERS && n < S_MAX_SOURCES; i++) {
        if (!(active >> i & 1) || reload[i] == 0 || pmi_action[i] == 0 ||
            pmi_action[i] > action_count || action_samplers[pmi_action[i] - 1] == 0)
            continue;
        src_spec *s = &out[n++];
        memset(s, 0, sizeof *s);
        s->kind = SRC_PMI;
        s->index = i;
        s->action = pmi_action[i];
        s->samplers = action_samplers[s->action - 1];
        s->pid = action_pid[s->action - 1];
        s->period = counter_max(c) - reload[i];
        s->config = config[i];
        s->mode = mode_of(c, i);
        uint64_t ns = s->period * 1000 / rate_of(c, i);
        s->period_ns = ns < 1000 ? 1000 : ns;
    }
#endif
    /* Timers fire only while kperf.sampling is on (kptimer_start). */
    for (unsigned t = 0; sampling && t < timer_count && n < S_MAX_SOURCES; t++) {
        uint32_t a = timer_action[t];
        if (timer_period[t] == 0 || a == 0 || a > action_count || action_samplers[a - 1] == 0)
            continue;
        src_spec *s = &out[n++];
        memset(s, 0, sizeof *s);
        s->kind = SRC_TIMER;
        s->index = t;
        s->action = a;
        s->samplers = action_samplers[a - 1];
        s->pid = action_pid[a - 1];
        uint64_t ns = kperf_ticks_to_ns(timer_period[t]);
        if (ns < timer_min_ns(c)) /* clamped up, not refused */
            ns = timer_min_ns(c);
        s->period = ticks_of(ns);
        s->period_ns = ns;
        s->mode = MODE_ALL;
        /* The PET timer (kptimer_start): traditional PET has its own timer
         * call and PET thread (pet_batches); lightweight PET runs it as an
         * ordinary timer and samples threads as they go on CPU. */
        if (t == pet_timer)
            s->pet = lightweight_pet ? PET_LIGHTWEIGHT : PET_TRADITIONAL;
        if (s->pet == PET_LIGHTWEIGHT && n < S_MAX_SOURCES) {
            out[n] = *s;
            out[n++].kind = SRC_ONCPU;
        }
    }
    /* The scheduler's switch records, only when the filter keeps them (one
     * source asks Linux for them, so that each switch is logged once). */
    if (n > 0)
        out[0].switches = simk_kdebug_wants(ID_MACH_SCHED);
    return n;
}

static void pull_locked(bool final);

/* Arm what the state asks for, disarm the rest. Caller holds state_lock. */
static void rearm(void)
{
    src_spec want[S_MAX_SOURCES];
    size_t n = desired_sources(chip_or_null(), want);
    bool same = n == source_count;
    for (size_t i = 0; same && i < n; i++)
        same = memcmp(&want[i], &sources[i].spec, sizeof want[i]) == 0;
    if (same)
        return;
    /* What the sources caught is logged before they are closed: on XNU
     * those records are in the buffer already. (Tracing going off pulls
     * first too: kernel_sim.c.) */
    pull_locked(true);
    for (size_t i = 0; i < source_count; i++)
        close_source(&sources[i]);
    source_count = 0;
    for (size_t i = 0; i < n; i++) {
        memset(&sources[i], 0, sizeof sources[i]);
        sources[i].spec = want[i];
        open_source(&sources[i]);
        source_count++;
    }
}

static size_t armed_fds(void)
{
    size_t n = 0;
    for (size_t i = 0; i < source_count; i++)
        n += (size_t)sources[i].nfds;
    return n;
}

/* ------------------------------------------------------------------------ */
/* Records                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct batch {
    uint64_t time;
    size_t seq, n;
    simk_kd_buf *r;
    uint32_t exit_pid; /* a process exit's records; 0: a sample's */
    uint32_t exec_pid; /* an exec's records */
    source *src;       /* a sample's */
    uint32_t tid;      /* the sampled thread */
    size_t skip;       /* leading records not logged (a fire already logged) */
} batch;

typedef struct batches {
    batch *v;
    size_t n, cap;
} batches;

typedef struct linux_sample {
    uint64_t ip, time;
    uint32_t pid, tid, cpu;
    uint64_t emitter; /* arg5, when another thread logs (0: tid) */
    const uint64_t *kchain, *uchain;
    size_t nk, nu;
} linux_sample;

static uint64_t ticks_of(uint64_t ns) { return kperf_ns_to_ticks(ns); }

/*
 * The simulated CPU of a record taken on host CPU host: simulated CPU k
 * runs on host CPU k % host_cpus (sync_cpus), so a thread on host CPU h is
 * on one of those, the same one for a stretch of 2^20 ticks, the next one
 * after it. Records of every CPU go to the one trace buffer, as kperf's do
 * (kernel_debug_enter), with their CPU numbers spread over the machine's.
 */
static uint32_t sim_cpu_of(uint32_t host, uint32_t tid, uint64_t ts)
{
    uint32_t n = (uint32_t)cpu_count, hosts = (uint32_t)host_cpus;
    if (host >= n)
        return n > 0 ? host % n : 0;
    uint32_t slots = (n - host + hosts - 1) / hosts; /* k < n with k % hosts == host */
    return host + (uint32_t)((tid + (ts >> 20)) % slots) * hosts;
}

static void put(simk_kd_buf *r, size_t *w, uint64_t ts, uint32_t id, uint64_t a1, uint64_t a2,
                uint64_t a3, uint64_t a4, const linux_sample *ls)
{
    simk_kd_buf *b = &r[(*w)++];
    memset(b, 0, sizeof *b);
    b->timestamp = ts;
    b->debugid = id;
    b->arg1 = a1;
    b->arg2 = a2;
    b->arg3 = a3;
    b->arg4 = a4;
    b->arg5 = ls->emitter != 0 ? ls->emitter : ls->tid;
    b->cpuid = sim_cpu_of(ls->cpu, ls->tid, ts);
}

#include "kperf_pet_sim.c"

/* TI_DATA: pid, tid, dispatch queue, legacy runmode. */
static void put_thread_info(simk_kd_buf *r, size_t *w, uint64_t ts, const linux_sample *ls,
                            uint32_t state)
{
    put(r, w, ts, ID_TI_DATA, ls->pid, ls->tid, 0, legacy_runmode(state), ls);
}

/* callstack_log: header, then 4 frames per record, zero-padded. */
static void put_stack(simk_kd_buf *r, size_t *w, uint64_t ts, uint32_t hdr, uint32_t data,
                      uint64_t flags, const uint64_t *frames, size_t n, const linux_sample *ls)
{
    put(r, w, ts, hdr, flags, n, 0, 0, ls);
    for (size_t j = 0; j < n; j += 4)
        put(r, w, ts, data, frames[j], j + 1 < n ? frames[j + 1] : 0, j + 2 < n ? frames[j + 2] : 0,
            j + 3 < n ? frames[j + 3] : 0, ls);
}

/* How a sample is taken (kperf_sample's flags); HOW_EMPTY_STACK or'ed in:
 * SAMPLE_FLAG_EMPTY_CALLSTACK (kppet_sample_thread's idle rate). */
enum { HOW_INTERRUPT, HOW_ON_CPU, HOW_PET_THREAD, HOW_EMPTY_STACK = 0x100 };

/* The most records one sample of these sizes takes. */
static size_t sample_records_max(const linux_sample *ls)
{
    size_t nu = ls->nu < UCALLSTACK_MAX - 1 ? ls->nu : UCALLSTACK_MAX - 1;
    size_t nk = ls->nk < KCALLSTACK_MAX ? ls->nk : KCALLSTACK_MAX;
    return 16 + (nk + 3) / 4 + (nu + 4) / 4 + (KPC_MAX_COUNTERS + 3) / 4 + 4;
}

/*
 * kperf_sample_internal and kperf_sample_user_internal for one thread in
 * state (KPERF_TI_*). HOW_INTERRUPT (a PMI or timer handler) and
 * HOW_ON_CPU (lightweight PET's kppet_on_cpu) pend the user stack to the
 * thread's return to user space, a tick later; HOW_PET_THREAD
 * (kppet_sample_thread: IDLE_THREADS | THREAD_ONLY) samples it at once,
 * with kperf_sample_user. Caller holds state_lock.
 */
static void put_sample(source *s, const linux_sample *ls, simk_kd_buf *r, size_t *w, uint64_t ts,
                       int how, uint32_t state, int intr_end)
{
    const sim_chip *c = chip_or_null();
    uint32_t what = s->spec.samplers;
    uint64_t counters[KPC_MAX_COUNTERS];
    size_t nctr = 0;
    /* kperf_prepare_sample_what: an empty callstack takes the stacks out
     * of both parts; kperf_sample_user then logs what is left of the
     * action's thread samplers (TH_INFO), or nothing. */
    bool empty = (how & HOW_EMPTY_STACK) != 0;
    how &= ~HOW_EMPTY_STACK;
    if (empty)
        what &= ~(KPERF_SAMPLER_KSTACK | KPERF_SAMPLER_USTACK);
    tally_entry *ran = tally_of(ls->tid);
    if (how == HOW_INTERRUPT)
        ran->ns += s->spec.period_ns;
    /* kperf_sample_internal: another pid than the filter's samples nothing
     * (the Linux events are inherited by children, which kperf's pid
     * filter excludes). */
    if (s->spec.pid != -1 && (int32_t)ls->pid != s->spec.pid)
        what = 0;
    if (what & KPERF_SAMPLER_PMC_THREAD) {
        /* The thread's counters, in running class order, from the CPU time
         * it was seen to run. Thread counting off: KPC_MAX_COUNTERS zeros
         * (kperf_kpc_thread_sample). */
        uint32_t running = counting;
        if (!(thread_counting & running)) {
            nctr = KPC_MAX_COUNTERS;
            memset(counters, 0, sizeof counters);
        } else {
            uint32_t on = active_counters(c, running);
            for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
                bool in = ((c->fixed_bits >> i & 1) && (running & KPC_CLASS_FIXED_MASK)) ||
                          ((c->config_bits >> i & 1) && (running & KPC_CLASS_CONFIGURABLE_MASK));
                if (in)
                    counters[nctr++] = (on >> i & 1) ? ran->ns / 1000 * rate_of(c, i) : 0;
            }
        }
    }
    size_t nu = ls->nu < UCALLSTACK_MAX - 1 ? ls->nu : UCALLSTACK_MAX - 1;
    size_t nk = ls->nk < KCALLSTACK_MAX ? ls->nk : KCALLSTACK_MAX;
    uint32_t pended =
        how == HOW_PET_THREAD ? 0 : what & (KPERF_SAMPLER_USTACK | KPERF_SAMPLER_TH_DISPATCH);
    uint32_t now = what & ~pended;
    uint32_t flags = how == HOW_INTERRUPT ? SAMPLE_FLAG_PEND_USER
                     : how == HOW_ON_CPU  ? SAMPLE_FLAG_NON_INTERRUPT | SAMPLE_FLAG_PEND_USER
                                          : SAMPLE_FLAG_IDLE_THREADS | SAMPLE_FLAG_THREAD_ONLY;
    if (empty)
        flags |= SAMPLE_FLAG_EMPTY_CALLSTACK;
    /* GEN_EVENT's arg1 is the whole sample_what, the pended samplers too
     * (action.c kperf_sample_internal). */
    if (now != 0) { /* only pended samplers: nothing at interrupt time */
        put(r, w, ts, ID_GEN_EVENT | FUNC_START, what, s->spec.action, 0, flags, ls);
        if (what & KPERF_SAMPLER_TH_INFO)
            put_thread_info(r, w, ts, ls, state);
        if (what & KPERF_SAMPLER_KSTACK)
            put_stack(r, w, ts, ID_CS_KHDR, ID_CS_KDATA, CS_VALID | CS_64BIT | CS_KERNEL,
                      ls->kchain, nk, ls);
        if (nctr > 0)
            for (size_t j = 0; j < nctr; j += 4) {
                uint32_t q = j == 0 ? FUNC_START : j + 4 >= nctr ? FUNC_END : 0;
                put(r, w, ts, ID_KPC_DATA_THREAD | q, counters[j],
                    j + 1 < nctr ? counters[j + 1] : 0, j + 2 < nctr ? counters[j + 2] : 0,
                    j + 3 < nctr ? counters[j + 3] : 0, ls);
            }
        put(r, w, ts, ID_GEN_EVENT | FUNC_END, what, pended ? META_UPEND : 0, 0, 0, ls);
    }
    if (intr_end >= 0) /* sleh_interrupt_handler_epilogue: no args; x86: the vector */
        put(r, w, ts, ID_INTR | FUNC_END, (uint64_t)intr_end, 0, 0, 0, ls);
    if (what & KPERF_SAMPLER_USTACK) {
        /* kperf_thread_ast_handler → kperf_sample_user_internal, on the way
         * back to user space: a tick later (at once from the PET thread,
         * kperf_sample_user). The user stack is the pc and return
         * addresses (the Linux callchain), then the fixup word
         * (callstack_fixup_user: arm64 LR or the word at x86's SP), which
         * the sim does not know: 0. */
        uint64_t uts = how == HOW_PET_THREAD ? ts : ts + 1;
        /* The AST (kperf_thread_ast_handler) asks USTACK | TH_INFO "for
         * backwards compatibility"; the PET thread's kperf_sample_user
         * the action's thread samplers. */
        uint32_t uwhat =
            how == HOW_PET_THREAD ? what : (what & KPERF_SAMPLER_USTACK) | KPERF_SAMPLER_TH_INFO;
        put(r, w, uts, ID_GEN_EVENT | FUNC_START, uwhat, s->spec.action, 0, 0, ls);
        uint64_t frames[UCALLSTACK_MAX];
        if (nu > 0)
            memcpy(frames, ls->uchain, nu * sizeof *frames);
        frames[nu] = 0;
        uint64_t cs = CS_VALID | CS_64BIT | CS_KERNEL_WORDS | (ls->nu > nu ? CS_TRUNCATED : 0);
        put_stack(r, w, uts, ID_CS_UHDR, ID_CS_UDATA, cs, frames, nu + 1, ls);
        if (uwhat & KPERF_SAMPLER_TH_INFO)
            put_thread_info(r, w, uts, ls, state);
        put(r, w, uts, ID_GEN_EVENT | FUNC_END, uwhat, 0, 0, 0, ls);
    } else if (empty && how == HOW_PET_THREAD && what != 0) {
        put(r, w, ts, ID_GEN_EVENT | FUNC_START, what, s->spec.action, 0, 0, ls);
        if (what & KPERF_SAMPLER_TH_INFO)
            put_thread_info(r, w, ts, ls, state);
        put(r, w, ts, ID_GEN_EVENT | FUNC_END, what, 0, 0, 0, ls);
    }
}

/*
 * One PMI, timer fire or (lightweight PET) switch on CPU of the sampled
 * thread: 0, 1 when it makes no records, -1 out of memory. A timer's
 * batch starts with its PERF_TM_FIRE, kept only by the first sample of a
 * period (pull_samples). Caller holds state_lock.
 */
static int make_batch(source *s, const linux_sample *ls, batch *b)
{
    uint64_t ts = ticks_of(ls->time);
    const sim_chip *c = chip_or_null();
    const uint32_t on_cpu = TI_RUNNING | TI_RUNNABLE;
    /* kppet_on_cpu: a thread of the filtered process only (kperf_sample
     * logs nothing else); once a period, see pull_samples. */
    if (s->spec.kind == SRC_ONCPU && s->spec.pid != -1 && (int32_t)ls->pid != s->spec.pid)
        return 1;
    if (s->spec.kind == SRC_PMI)
        s->count += s->spec.period;
    b->r = calloc(sample_records_max(ls) + 4, sizeof *b->r);
    if (b->r == NULL)
        return -1;
    size_t w = 0;
    bool kernel_pc = ls->nu == 0 || ls->ip != ls->uchain[0];
    bool intr = s->spec.kind == SRC_PMI;
    if (intr) {
        /* The PMI's interrupt (arm64 sleh.c sleh_interrupt_handler_prologue:
         * 0, pc, is_user, DBG_INTR_TYPE_PMI; x86 trap.c interrupt: the
         * vector, pc, user_mode, DBG_INTR_TYPE_OTHER); a kernel pc is
         * unslid (unknown here: 0). Its END follows the interrupt part. */
        bool x86 = c != NULL && is_intel(c);
        put(b->r, &w, ts, ID_INTR | FUNC_START, x86 ? X86_PERFCNT_VECTOR : 0,
            kernel_pc ? 0 : ls->ip, kernel_pc ? 0 : 1, x86 ? INTR_TYPE_OTHER : INTR_TYPE_PMI, ls);
    }
    if (s->spec.kind == SRC_PMI) {
        uint64_t flags = kernel_pc ? KPC_KERNEL_PC : 0;
        if (s->spec.mode & MODE_USER)
            flags |= KPC_USER_COUNTING;
        if (s->spec.mode & MODE_KERNEL)
            flags |= KPC_KERNEL_COUNTING;
        /* kpc_sample_kperf: desc = config | counter << 32 | flags << 48;
         * a kernel pc is unslid (unknown here: 0). */
        put(b->r, &w, ts, ID_KPC_HNDLR | FUNC_START,
            (s->spec.config & 0xffff) | (uint64_t)s->spec.index << 32 | flags << 48, s->count,
            kernel_pc ? 0 : ls->ip, 0, ls);
    } else if (s->spec.kind == SRC_TIMER) {
        /* kptimer_fire: PERF_TM_FIRE (timer, is_pet, period, action) by the
         * first CPU of a period; traditional PET's come from its own
         * timer call (pet_batches). */
        if (s->spec.pet != PET_TRADITIONAL)
            put(b->r, &w, ts, ID_TM_FIRE, s->spec.index, s->spec.pet != PET_NONE, s->spec.period,
                s->spec.action, ls);
        put(b->r, &w, ts, ID_TM_HNDLR | FUNC_START, 0, 0, 0, 0, ls);
    }
    put_sample(s, ls, b->r, &w, ts, s->spec.kind == SRC_ONCPU ? HOW_ON_CPU : HOW_INTERRUPT, on_cpu,
               intr ? (c != NULL && is_intel(c) ? (int)X86_PERFCNT_VECTOR : 0) : -1);
    b->time = ls->time;
    b->n = w;
    b->src = s;
    b->tid = ls->tid;
    return 0;
}

static batch *new_batch(batches *out)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 256;
        batch *v = realloc(out->v, cap * sizeof *v);
        if (v == NULL)
            return NULL;
        out->v = v;
        out->cap = cap;
    }
    batch *b = &out->v[out->n];
    memset(b, 0, sizeof *b);
    b->seq = out->n;
    return b;
}

#include "kperf_petpass_sim.c"

static int batch_cmp(const void *x, const void *y)
{
    const batch *a = x, *b = y;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

#include "kperf_linux_sim.c"

/* Turn what the sources caught into records, logged. Caller holds
 * state_lock (simk_emit's lock is taken under it, as simk_kdebug_wants's
 * is by desired_sources). */
static void pull_locked(bool final)
{
    uint64_t now = monotonic_ns(); /* what the rings hold is from before */
    batches all = {NULL, 0, 0};
    for (size_t i = 0; i < source_count; i++) {
        /* What an earlier drain held back, first (its seq the earliest). */
        source *s = &sources[i];
        for (size_t j = 0; j < s->nheld; j++) {
            batch *b = new_batch(&all);
            if (b == NULL) {
                free(s->held[j].r);
                simk_lost();
                continue;
            }
            size_t seq = b->seq;
            *b = s->held[j];
            b->seq = seq;
            all.n++;
        }
        s->nheld = 0;
        if (final) {
            free(s->held);
            s->held = NULL;
            s->held_cap = 0;
        }
    }
    for (size_t i = 0; i < source_count; i++)
        for (int j = 0; j < sources[i].nfds; j++)
            drain_ring(&sources[i], sources[i].rings[j], &all);
    size_t drained = all.n;
    for (size_t i = 0; i < source_count; i++)
        if (sources[i].spec.kind == SRC_TIMER && sources[i].spec.pet == PET_TRADITIONAL)
            pet_batches(&sources[i], now, &all, drained, final);
    if (all.n > 1)
        qsort(all.v, all.n, sizeof *all.v, batch_cmp);
    /* kptimer_fire's `first` guard: one PERF_TM_FIRE a period, logged by
     * the first CPU to fire in it; the others only sample. */
    for (size_t i = 0; i < all.n; i++) {
        batch *b = &all.v[i];
        source *s = b->src;
        if (s != NULL && s->spec.kind == SRC_ONCPU) {
            /* kppet_on_cpu: a thread already sampled in this period
             * (kperf_pet_gen == kppet_current_gen) is not sampled again. */
            tally_entry *t = tally_of(b->tid);
            uint64_t gen = (b->time - s->start_ns) / s->spec.period_ns + 1;
            if (b->time < s->start_ns || t->pet_gen == gen)
                b->skip = b->n;
            else
                t->pet_gen = gen;
            continue;
        }
        if (s == NULL || s->spec.kind != SRC_TIMER || b->n == 0 || b->r[0].debugid != ID_TM_FIRE)
            continue;
        uint64_t deadline = b->time - (b->time - s->start_ns) % s->spec.period_ns;
        if (b->time < s->next_fire_ns) {
            b->skip = 1;
        } else {
            b->r[0].timestamp = ticks_of(deadline); /* it fired at the deadline */
            s->next_fire_ns = deadline + s->spec.period_ns;
        }
    }
    for (size_t i = 0; i < all.n; i++) {
        /* An exit or exec that several sources saw is logged once: an
         * exec at its time, an exit at its last sighting (the last
         * thread's, when several threads' exits were read at once). */
        bool again = false;
        const batch *b = &all.v[i];
        for (size_t j = i + 1; j < all.n && b->exit_pid != 0 && !again; j++)
            again = all.v[j].exit_pid == b->exit_pid;
        for (size_t j = 0; j < i && b->exec_pid != 0 && !again; j++)
            again = all.v[j].exec_pid == b->exec_pid && all.v[j].time == b->time;
        if (!again && b->n > b->skip)
            simk_emit(b->r + b->skip, b->n - b->skip);
        free(all.v[i].r);
    }
    free(all.v);
}

/* simk pull hook: turn what the sources caught into records, waiting up to
 * timeout_ms for the first; below 0, the last pull before tracing stops
 * (what waits for its period to end is logged now). */
static void pull_samples(int timeout_ms)
{
    chip();
    pthread_mutex_lock(&state_lock);
    struct pollfd pfd[S_MAX_SOURCES * 4];
    nfds_t np = 0;
    for (size_t i = 0; i < source_count && np < sizeof pfd / sizeof pfd[0]; i++)
        for (int j = 0; j < sources[i].nfds && np < sizeof pfd / sizeof pfd[0]; j++)
            pfd[np++] = (struct pollfd){sources[i].fds[j], POLLIN, 0};
    pthread_mutex_unlock(&state_lock);
    if (timeout_ms > 0) {
        /* Sleep in slices: sources may change meanwhile. */
        int slice = timeout_ms < 50 ? timeout_ms : 50;
        (void)poll(np > 0 ? pfd : NULL, np, slice);
    }
    pthread_mutex_lock(&state_lock);
    pull_locked(timeout_ms < 0);
    pthread_mutex_unlock(&state_lock);
}

/* simk changed hook: tracing went on or off. */
static void tracing_changed(void)
{
    chip();
    pthread_mutex_lock(&state_lock);
    changed();
    pthread_mutex_unlock(&state_lock);
}
