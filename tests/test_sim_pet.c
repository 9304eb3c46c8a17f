/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_sim_pet.c - PET and timer fires in the simulated kperf, driven as a
 * kperf+kdebug client drives them on a Mac (the framework's calls, the
 * kdebug sysctls, sysctlbyname for kperf.lightweight_pet), against what
 * XNU does (tests/sim/README.md cites osfmk/kperf/pet.c, kptimer.c and
 * thread_samplers.c): traditional PET samples every thread of the task
 * each period, one blocked in read() with its state and user stack;
 * lightweight PET samples a thread as it goes on CPU, once a period; a
 * timer logs PERF_TM_FIRE once a period, is_pet 1 for the PET timer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dkperf/kperf.h"
#include "sampling_kperf_helpers.h"
#include "sim/sim_kdebug.h"
#include "sim/sim_kernel.h"
#include "util.h"

#define ID_GEN_EVENT 0x25000000u
#define ID_TI_DATA 0x25010004u
#define ID_CS_UDATA 0x25020010u
#define ID_CS_UHDR 0x25020018u
#define ID_TM_FIRE 0x25030000u
#define ID_TM_HNDLR 0x25030008u
#define SAMPLE_FLAG_PEND_USER 0x1u
#define SAMPLE_FLAG_EMPTY_CALLSTACK 0x4u
#define SAMPLE_FLAG_NON_INTERRUPT 0x10u
#define SAMPLE_FLAG_THREAD_ONLY 0x100u
#define TI_RUNNING 0x1u
#define TI_WAIT 0x4u

static const dk_kperf_vtable *kp;
static int (*sys)(int *, unsigned, void *, size_t *, void *, size_t);
static int (*sysbyname)(const char *, void *, size_t *, void *, size_t);

static void load(void)
{
    CHECK_INT(dk_kperf_load(NULL, &kp, NULL), ==, 0);
    sim_kernel k = sim_kernel_open();
    sys = k.sysctl;
    sysbyname = k.sysctlbyname;
    CHECK(sys != NULL && sysbyname != NULL);
}

static int kd(int op, int value, int nmib, void *oldp, size_t *oldlen)
{
    int mib[4] = {CTL_KERN, KERN_KDEBUG, op, value};
    size_t zero = 0;
    errno = 0;
    int r = sys(mib, (unsigned)nmib, oldp, oldlen != NULL ? oldlen : &zero, NULL, 0);
    return r == 0 ? 0 : errno;
}

/* sysctlbyname of an int: 0 or errno. */
static int get_int(const char *name, int *v)
{
    size_t len = sizeof *v;
    errno = 0;
    return sysbyname(name, v, &len, NULL, 0) == 0 ? 0 : errno;
}

static int set_int(const char *name, int v)
{
    errno = 0;
    return sysbyname(name, NULL, NULL, &v, sizeof v) == 0 ? 0 : errno;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The threads the samples are of. */
static atomic_int stop;
static atomic_uint_fast64_t reader_tid, busy_tid, napper_tid;
static int pipe_fd[2];

static uint64_t own_tid(void) { return (uint64_t)syscall(SYS_gettid); }

/* Blocked in read() until the test writes: its stack must show it. */
__attribute__((noinline)) void dkt_pet_blocked_reader(void)
{
    char c;
    atomic_store(&reader_tid, own_tid());
    while (read(pipe_fd[0], &c, 1) < 0 && errno == EINTR)
        ;
    __asm__ volatile("" ::: "memory");
}

static void *reader(void *arg)
{
    (void)arg;
    dkt_pet_blocked_reader();
    return NULL;
}

static volatile uint64_t sink;

static void *busy(void *arg)
{
    (void)arg;
    atomic_store(&busy_tid, own_tid());
    while (!atomic_load(&stop))
        sink++;
    return NULL;
}

/* On and off CPU every 100 µs. */
static void *napper(void *arg)
{
    (void)arg;
    atomic_store(&napper_tid, own_tid());
    struct timespec ts = {0, 100000};
    while (!atomic_load(&stop))
        nanosleep(&ts, NULL);
    return NULL;
}

typedef struct trace {
    simk_kd_buf *r;
    size_t n;
    uint64_t period_ticks;
    uint64_t sampled_ns; /* kperf.sampling on to off */
} trace;

/*
 * A client's sequence: the trace buffer set up and enabled, action 1 with
 * samplers on this process, timer 0 with period_ns and action 1 (the PET
 * timer when pet), sampling on for run_ns with a busy thread, a napping
 * one and one blocked in read(), then everything read and torn down.
 */
static trace run(bool pet, uint64_t period_ns, uint64_t run_ns, bool lightweight, int idle_rate)
{
    CHECK_INT(kd(KERN_KDREMOVE, 0, 3, NULL, NULL), ==, 0);
    CHECK_INT(kd(KERN_KDSETBUF, 1 << 20, 4, NULL, NULL), ==, 0);
    CHECK_INT(kd(KERN_KDSETUP, 0, 3, NULL, NULL), ==, 0);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    if (lightweight) {
        CHECK_INT(set_int("kperf.lightweight_pet", 1), ==, 0);
        int v = -1;
        CHECK_INT(get_int("kperf.lightweight_pet", &v), ==, 0);
        CHECK_INT(v, ==, 1);
    }
    if (idle_rate > 0)
        CHECK_INT(set_int("kperf.pet_idle_rate", idle_rate), ==, 0);
    CHECK_INT(kp->kperf_action_count_set(1), ==, 0);
    CHECK_INT(kp->kperf_action_samplers_set(1, KPERF_SAMPLER_TH_INFO | KPERF_SAMPLER_USTACK), ==,
              0);
    CHECK_INT(kp->kperf_action_filter_set_by_pid(1, (int32_t)getpid()), ==, 0);
    CHECK_INT(kp->kperf_timer_count_set(1), ==, 0);
    CHECK_INT(kp->kperf_timer_period_set(0, kp->kperf_ns_to_ticks(period_ns)), ==, 0);
    CHECK_INT(kp->kperf_timer_action_set(0, 1), ==, 0);
    if (pet)
        CHECK_INT(kp->kperf_timer_pet_set(0), ==, 0);
    trace t = {NULL, 0, 0, 0};
    CHECK_INT(kp->kperf_timer_period_get(0, &t.period_ticks), ==, 0);

    atomic_store(&stop, 0);
    CHECK_INT(pipe(pipe_fd), ==, 0);
    pthread_t th[3];
    CHECK_INT(pthread_create(&th[0], NULL, reader, NULL), ==, 0);
    CHECK_INT(pthread_create(&th[1], NULL, busy, NULL), ==, 0);
    CHECK_INT(pthread_create(&th[2], NULL, napper, NULL), ==, 0);
    struct timespec ms = {0, 1000000};
    while (atomic_load(&reader_tid) == 0 || atomic_load(&busy_tid) == 0 ||
           atomic_load(&napper_tid) == 0)
        nanosleep(&ms, NULL);
    nanosleep(&ms, NULL); /* the reader is in read() by now */

    CHECK_INT(kd(KERN_KDENABLE, KDEBUG_ENABLE_TRACE, 4, NULL, NULL), ==, 0);
    uint64_t on = now_ns();
    CHECK_INT(kp->kperf_sample_set(1), ==, 0);
    if (lightweight) /* kppet_set_lightweight_pet: not while sampling */
        CHECK_INT(set_int("kperf.lightweight_pet", 0), ==, EBUSY);
    size_t cap = 1 << 20;
    t.r = calloc(cap, sizeof *t.r);
    CHECK(t.r != NULL);
    uint64_t end = now_ns() + run_ns;
    while (now_ns() < end) {
        size_t len = cap - t.n;
        CHECK_INT(kd(KERN_KDREADTR, 0, 3, t.r + t.n, &len), ==, 0);
        t.n += len;
        struct timespec slice = {0, 20000000};
        nanosleep(&slice, NULL);
    }
    CHECK_INT(kp->kperf_sample_set(0), ==, 0);
    t.sampled_ns = now_ns() - on;
    size_t len = cap - t.n;
    CHECK_INT(kd(KERN_KDREADTR, 0, 3, t.r + t.n, &len), ==, 0);
    t.n += len;
    CHECK_INT(kd(KERN_KDENABLE, 0, 4, NULL, NULL), ==, 0);

    atomic_store(&stop, 1);
    CHECK_INT((int)write(pipe_fd[1], "x", 1), ==, 1);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    close(pipe_fd[0]);
    close(pipe_fd[1]);
    CHECK_INT(kd(KERN_KDREMOVE, 0, 3, NULL, NULL), ==, 0);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    fprintf(stderr, "%zu records\n", t.n);
    return t;
}

/* Fires: all for timer 0 with is_pet as expected, at least a period apart. */
static size_t check_fires(const trace *t, uint64_t is_pet)
{
    size_t fires = 0;
    uint64_t last = 0;
    for (size_t i = 0; i < t->n; i++) {
        const simk_kd_buf *r = &t->r[i];
        if (r->debugid != ID_TM_FIRE)
            continue;
        CHECK_U64(r->arg1, ==, 0);
        CHECK_U64(r->arg2, ==, is_pet);
        CHECK_U64(r->arg3, ==, t->period_ticks);
        CHECK_U64(r->arg4, ==, 1);
        if (fires > 0 && r->timestamp - last + 1 < t->period_ticks) /* ns to ticks rounds */
            DKT_FAIL("two PERF_TM_FIRE %llu ticks apart in a period of %llu",
                     (unsigned long long)(r->timestamp - last),
                     (unsigned long long)t->period_ticks);
        last = r->timestamp;
        fires++;
    }
    return fires;
}

TEST_CASE(pet_samples_a_thread_blocked_in_read)
{
    load();
    uint64_t period = 10000000, run_ns = 400000000;
    /* Idle rate 1: a stack every period, switched or not. */
    trace t = run(true, period, run_ns, false, 1);
    size_t fires = check_fires(&t, 1);
    fprintf(stderr, "%zu PET fires\n", fires);
    CHECK_U64(fires, >=, 5);
    CHECK_U64(fires, <=, t.sampled_ns / period + 1);
    /* kppet_sample_thread's samples (IDLE_THREADS | THREAD_ONLY, arg5 the
     * PET thread): their TI_DATA and user stack. */
    size_t blocked = 0, in_reader = 0, running_busy = 0, reader_running = 0;
    uint64_t pet_thread = 0, tid = 0;
    bool want_info = false, found = false;
    uint64_t lo = (uint64_t)(uintptr_t)dkt_pet_blocked_reader;
    for (size_t i = 0; i <= t.n; i++) {
        const simk_kd_buf *r = i < t.n ? &t.r[i] : NULL;
        bool start = r == NULL ||
                     (r->debugid == (ID_GEN_EVENT | 1u) && (r->arg4 & SAMPLE_FLAG_THREAD_ONLY));
        if (start) { /* the previous sample ended */
            in_reader += found;
            found = false;
            if (r == NULL)
                break;
            CHECK_U64(r->arg4 & SAMPLE_FLAG_PEND_USER, ==, 0);
            pet_thread = r->arg5;
            want_info = true;
            tid = 0;
            continue;
        }
        if (pet_thread == 0 || r->arg5 != pet_thread)
            continue;
        if (r->debugid == ID_TI_DATA && want_info) {
            want_info = false;
            CHECK_U64(r->arg1, ==, (uint64_t)getpid());
            tid = r->arg2;
            uint64_t mode = r->arg4 & 0xffff;
            CHECK_U64(r->arg4 >> 16, ==, ~mode & 0xffff);
            if (tid == atomic_load(&reader_tid) && (mode & TI_WAIT) && !(mode & TI_RUNNING))
                blocked++;
            if (tid == atomic_load(&reader_tid) && (mode & TI_RUNNING))
                reader_running++;
            if (tid == atomic_load(&busy_tid) && (mode & TI_RUNNING))
                running_busy++;
        } else if (r->debugid == ID_CS_UDATA && tid == atomic_load(&reader_tid)) {
            const uint64_t w[4] = {r->arg1, r->arg2, r->arg3, r->arg4};
            for (int j = 0; j < 4; j++)
                found = found || (w[j] > lo && w[j] < lo + 256);
        }
    }
    fprintf(stderr, "reader blocked in %zu samples, %zu in its function; busy on CPU in %zu\n",
            blocked, in_reader, running_busy);
    /* Every period samples it, blocked; its stack is in the reader. */
    CHECK_U64(blocked, >=, fires - 1);
    CHECK_U64(reader_running, ==, 0);
    CHECK_U64(in_reader, >=, blocked - 1);
    CHECK_U64(running_busy, >, 0);
    free(t.r);
}

/* kppet_sample_thread: a thread not switched since its last PET sample
 * (kperf_thread_get_dirty) is sampled with SAMPLE_FLAG_EMPTY_CALLSTACK,
 * no user stack, but every idle_rate-th time (default 15). */
TEST_CASE(pet_samples_an_idle_thread_without_its_stack_but_every_idle_rate)
{
    load();
    int v = 0;
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(get_int("kperf.pet_idle_rate", &v), ==, 0);
    CHECK_INT(v, ==, 15); /* KPERF_PET_DEFAULT_IDLE_RATE */
    uint64_t period = 10000000, run_ns = 400000000;
    trace t = run(true, period, run_ns, false, 0);
    size_t samples = 0, empty = 0, stacks = 0;
    uint64_t pet_thread = 0, flags = 0;
    bool want_info = false, reader = false;
    for (size_t i = 0; i < t.n; i++) {
        const simk_kd_buf *r = &t.r[i];
        if (r->debugid == (ID_GEN_EVENT | 1u) && (r->arg4 & SAMPLE_FLAG_THREAD_ONLY)) {
            pet_thread = r->arg5;
            flags = r->arg4;
            want_info = true;
            reader = false;
            continue;
        }
        if (pet_thread == 0 || r->arg5 != pet_thread)
            continue;
        if (r->debugid == ID_TI_DATA && want_info) {
            want_info = false;
            reader = r->arg2 == atomic_load(&reader_tid);
            samples += reader;
            empty += reader && (flags & SAMPLE_FLAG_EMPTY_CALLSTACK);
        } else if (r->debugid == ID_CS_UHDR && reader) {
            stacks++;
            reader = false; /* one stack a sample */
        }
    }
    fprintf(stderr, "reader: %zu PET samples, %zu with a stack, %zu marked empty\n", samples,
            stacks, empty);
    CHECK_U64(samples, >=, 20);
    CHECK_U64(stacks + empty, ==, samples);
    CHECK_U64(stacks, >=, 1);
    CHECK_U64(stacks, <=, samples / 15 + 2);
    free(t.r);
}

TEST_CASE(lightweight_pet_samples_threads_going_on_cpu_once_a_period)
{
    load();
    int v = -1;
    CHECK_INT(get_int("kperf.lightweight_pet", &v), ==, 0);
    CHECK_INT(v, ==, 0);
    uint64_t period = 10000000, run_ns = 400000000;
    trace t = run(true, period, run_ns, true, 0);
    check_fires(&t, 1);
    /* kppet_on_cpu: NON_INTERRUPT | PEND_USER, no handler; the napper goes
     * on CPU thousands of times, and is sampled once a period at most. */
    size_t napper = 0, other = 0;
    uint64_t first = 0, last = 0;
    for (size_t i = 0; i < t.n; i++) {
        const simk_kd_buf *r = &t.r[i];
        if (r->debugid != (ID_GEN_EVENT | 1u) ||
            r->arg4 != (SAMPLE_FLAG_NON_INTERRUPT | SAMPLE_FLAG_PEND_USER))
            continue;
        CHECK(i + 1 < t.n && t.r[i + 1].debugid == ID_TI_DATA);
        CHECK_U64(t.r[i + 1].arg4 & TI_RUNNING, ==, TI_RUNNING);
        if (t.r[i + 1].arg2 == atomic_load(&napper_tid)) {
            first = napper == 0 ? r->timestamp : first;
            last = r->timestamp;
            napper++;
        } else {
            other++;
        }
    }
    fprintf(stderr, "lightweight PET: napper %zu on-CPU samples, others %zu\n", napper, other);
    CHECK_U64(napper, >=, 5);
    CHECK_U64(napper, <=, (last - first) / t.period_ticks + 2);
    /* kperf_reset turned it off. */
    CHECK_INT(get_int("kperf.lightweight_pet", &v), ==, 0);
    CHECK_INT(v, ==, 0);
    free(t.r);
}

TEST_CASE(a_timer_logs_one_fire_a_period)
{
    load();
    uint64_t period = 2000000, run_ns = 300000000;
    trace t = run(false, period, run_ns, false, 0);
    size_t fires = check_fires(&t, 0), handlers = 0;
    for (size_t i = 0; i < t.n; i++)
        handlers += t.r[i].debugid == (ID_TM_HNDLR | 1u);
    fprintf(stderr, "%zu fires, %zu handler samples\n", fires, handlers);
    CHECK_U64(fires, >, 0);
    CHECK_U64(handlers, >=, fires);
    free(t.r);
}

TEST_CASE(kperf_sysctls_answer_as_xnu)
{
    load();
    int v = 7;
    CHECK_INT(get_int("kperf.no_such_node", &v), ==, ENOENT);
    CHECK_INT(set_int("kperf.lightweight_pet", 2), ==, 0); /* on == 1 only */
    CHECK_INT(get_int("kperf.lightweight_pet", &v), ==, 0);
    CHECK_INT(v, ==, 0);
    short small = 1;
    CHECK_INT(sysbyname("kperf.lightweight_pet", NULL, NULL, &small, sizeof small), ==, -1);
    CHECK_INT(errno, ==, EINVAL);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(kp->kperf_action_count_set(1), ==, 0);
    CHECK_INT(set_int("kperf.sampling", 1), ==, 0);
    CHECK_INT(get_int("kperf.sampling", &v), ==, 0);
    CHECK_INT(v, ==, 1);
    CHECK_INT(set_int("kperf.lightweight_pet", 1), ==, EBUSY);
    /* kppet_set_idle_rate: any time; kppet_reset puts the default back. */
    CHECK_INT(set_int("kperf.pet_idle_rate", 3), ==, 0);
    CHECK_INT(get_int("kperf.pet_idle_rate", &v), ==, 0);
    CHECK_INT(v, ==, 3);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(get_int("kperf.sampling", &v), ==, 0);
    CHECK_INT(v, ==, 0);
    CHECK_INT(get_int("kperf.pet_idle_rate", &v), ==, 0);
    CHECK_INT(v, ==, 15);
}

/*
 * kptimer_pet_handler: PERF_TM_FIRE, then the broadcast's on-CPU samples
 * (PERF_TM_HNDLR), then the PET thread wakes and samples every thread. A
 * client reading the trace in order meets them so, each PET thread
 * sample stamped after its period's fire.
 */
TEST_CASE(traditional_pet_orders_fire_broadcast_then_pet_thread)
{
    load();
    uint64_t period = 10000000, run_ns = 300000000;
    trace t = run(true, period, run_ns, false, 1);
    size_t fires = 0, late_oncpu = 0, early_pet = 0, both = 0, pet_samples = 0;
    uint64_t fire_ts = 0;
    bool pet_seen = false, oncpu_seen = false;
    for (size_t i = 0; i < t.n; i++) {
        const simk_kd_buf *r = &t.r[i];
        if (r->debugid == ID_TM_FIRE) {
            both += pet_seen && oncpu_seen;
            fires++;
            fire_ts = r->timestamp;
            pet_seen = oncpu_seen = false;
        } else if (r->debugid == (ID_TM_HNDLR | 1u)) {
            late_oncpu += pet_seen;
            oncpu_seen = true;
        } else if (r->debugid == (ID_GEN_EVENT | 1u) && (r->arg4 & SAMPLE_FLAG_THREAD_ONLY)) {
            pet_samples++;
            early_pet += fires == 0 || r->timestamp <= fire_ts;
            pet_seen = true;
        }
    }
    both += pet_seen && oncpu_seen;
    fprintf(stderr, "%zu fires, %zu PET thread samples, %zu periods with both\n", fires,
            pet_samples, both);
    CHECK_U64(fires, >=, 5);
    CHECK_U64(both, >=, 1);
    CHECK_U64(late_oncpu, ==, 0);
    CHECK_U64(early_pet, ==, 0);
    free(t.r);
}

/*
 * kptimer_pet_enter: the PET thread re-arms the timer after its pass, the
 * period − the pass later, at least the minimum PET period: a pass longer
 * than the period (DKPERF_SIM_PET_PASS_NS = 3 ms here, a 1 ms period)
 * spaces the fires by the pass + the period, not by the period.
 */
TEST_CASE(pet_fires_after_a_slow_pass_as_xnu_rearms)
{
    load();
    uint64_t period = 1000000, pass = 3000000, run_ns = 200000000;
    const char *e = getenv("DKPERF_SIM_PET_PASS_NS");
    CHECK(e != NULL && strtoull(e, NULL, 10) == pass);
    trace t = run(true, period, run_ns, false, 0);
    size_t fires = check_fires(&t, 1);
    uint64_t gap = kp->kperf_ns_to_ticks(pass + period), last = 0, n = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.r[i].debugid != ID_TM_FIRE)
            continue;
        if (n++ > 0 && t.r[i].timestamp - last + 1 < gap)
            DKT_FAIL("PET fires %llu ticks apart; the pass and period take %llu",
                     (unsigned long long)(t.r[i].timestamp - last), (unsigned long long)gap);
        last = t.r[i].timestamp;
    }
    fprintf(stderr, "%zu PET fires in %llu ns\n", fires, (unsigned long long)t.sampled_ns);
    CHECK_U64(fires, >=, 5);
    CHECK_U64(fires, <=, t.sampled_ns / (pass + period) + 1);
    free(t.r);
}

/* sysctlbyname of a 64-bit node: 0 or errno; *len the size it answered. */
static int get_u64(const char *name, uint64_t *v, size_t *len)
{
    *len = sizeof *v;
    errno = 0;
    return sysbyname(name, v, len, NULL, 0) == 0 ? 0 : errno;
}

/*
 * The nodes a client reads that no framework call answers: kperfbsd.c's
 * kperf.limits.* (CTLTYPE_QUAD, read-only, kptimer.c kptimer_minperiods_ns)
 * and max_action_count, kperf.kdbg_cswitch (cleared by kperf_reset),
 * kperf.debug_level, kern_ktrace.c's ktrace.background_pid and
 * ktrace.configured_by. Privileged here; the next case unprivileged.
 */
TEST_CASE(kernel_sysctl_nodes_read_as_xnu)
{
    load();
    const char *cpu = getenv("DKPERF_SIM_CPU");
    bool x86 = cpu != NULL && strcmp(cpu, "haswell") == 0;
    static const char *const names[] = {"kperf.limits.timer_min_period_ns",
                                        "kperf.limits.timer_min_bg_period_ns",
                                        "kperf.limits.timer_min_pet_period_ns",
                                        "kperf.limits.timer_min_bg_pet_period_ns"};
    const uint64_t want[] = {x86 ? 20000u : 50000u, 1000000u, 1000000u, 1000000u};
    for (size_t i = 0; i < 4; i++) {
        uint64_t v = 0;
        size_t len = 0;
        CHECK_INT(get_u64(names[i], &v, &len), ==, 0);
        CHECK_U64(len, ==, 8);
        CHECK_U64(v, ==, want[i]);
        /* Size query, short buffer, write. */
        len = 0;
        CHECK_INT(sysbyname(names[i], NULL, &len, NULL, 0), ==, 0);
        CHECK_U64(len, ==, 8);
        int small = 0;
        len = sizeof small;
        CHECK_INT(sysbyname(names[i], &small, &len, NULL, 0), ==, -1);
        CHECK_INT(errno, ==, ENOMEM);
        CHECK_INT(sysbyname(names[i], NULL, NULL, &v, sizeof v), ==, -1);
        CHECK_INT(errno, ==, EPERM);
    }
    int v = 0;
    CHECK_INT(get_int("kperf.limits.max_action_count", &v), ==, 0);
    CHECK_INT(v, ==, 32);
    CHECK_INT(set_int("kperf.limits.max_action_count", 64), ==, EPERM);
    CHECK_INT(get_int("ktrace.background_pid", &v), ==, 0);
    CHECK_INT(v, ==, 0);
    CHECK_INT(set_int("ktrace.background_pid", 1), ==, EPERM);
    CHECK_INT(set_int("kperf.debug_level", 1), ==, 0);
    CHECK_INT(get_int("kperf.debug_level", &v), ==, 0);
    CHECK_INT(v, ==, 1);
    CHECK_INT(set_int("kperf.debug_level", 0), ==, 0);
    /* kperf_kdbg_cswitch_set keeps any value; kperf_reset clears it. */
    CHECK_INT(set_int("kperf.kdbg_cswitch", 3), ==, 0);
    CHECK_INT(get_int("kperf.kdbg_cswitch", &v), ==, 0);
    CHECK_INT(v, ==, 3);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(get_int("kperf.kdbg_cswitch", &v), ==, 0);
    CHECK_INT(v, ==, 0);
    /* ktrace_last_owner_execname: this process took ownership above. */
    char name[32] = "x", comm[32] = "";
    size_t len = sizeof name;
    CHECK_INT(sysbyname("ktrace.configured_by", name, &len, NULL, 0), ==, 0);
    FILE *f = fopen("/proc/self/comm", "r");
    CHECK(f != NULL && fgets(comm, sizeof comm, f) != NULL);
    fclose(f);
    comm[strcspn(comm, "\n")] = 0;
    CHECK_STR(name, comm);
    CHECK_U64(len, ==, strlen(comm) + 1);
    CHECK_INT(sysbyname("ktrace.configured_by", NULL, NULL, comm, 2), ==, -1);
    CHECK_INT(errno, ==, EPERM);
    /* kperf.kdbg_callstacks is gone from xnu-11417's kperfbsd.c. */
    CHECK_INT(get_int("kperf.kdbg_callstacks", &v), ==, ENOENT);
}

/* DKPERF_SIM_PRIVILEGED=0: the public nodes read, root's writes refused
 * (sysctl_root without CTLFLAG_ANYBODY; kperf_sysctl's
 * ktrace_read_check and ktrace_configure). */
TEST_CASE(kernel_sysctl_nodes_unprivileged)
{
    load();
    uint64_t q = 0;
    size_t len = 0;
    CHECK_INT(get_u64("kperf.limits.timer_min_pet_period_ns", &q, &len), ==, 0);
    CHECK_U64(q, ==, 1000000);
    int v = -1;
    CHECK_INT(get_int("kperf.limits.max_action_count", &v), ==, 0);
    CHECK_INT(get_int("ktrace.background_pid", &v), ==, 0);
    CHECK_INT(get_int("ktrace.state", &v), ==, 0);
    CHECK_INT(v, ==, 0);
    CHECK_INT(get_int("ktrace.owning_pid", &v), ==, 0);
    CHECK_INT(v, ==, 0);
    CHECK_INT(get_int("kperf.debug_level", &v), ==, 0);
    CHECK_INT(set_int("kperf.debug_level", 1), ==, EPERM);
    CHECK_INT(get_int("kperf.kdbg_cswitch", &v), ==, EPERM);
    CHECK_INT(set_int("kperf.kdbg_cswitch", 1), ==, EPERM);
    CHECK_INT(get_int("kperf.sampling", &v), ==, EPERM);
}

TEST_MAIN()
