/*
 * kperf_sim.c - a simulated kperf.framework: KPC counting state, config
 * registers, force_all_ctrs ownership, per-thread and per-CPU counters, and
 * the KPERF timer/action state, all 34 functions.
 *
 * Counters are derived from CPU time. A thread's counter advances at a rate
 * fixed per event (so two events never count alike) times the thread's own
 * CPU time, only while its class is on in both kpc.counting and
 * kpc.thread_counting and, for configurable counters, while a selector is
 * programmed. A thread settles its accumulated counts whenever it calls
 * into the framework, under the state it last saw. Per-CPU counters follow
 * each CPU's busy time from /proc/stat.
 *
 * Like the real functions (thin sysctl wrappers), failing calls return -1
 * and set errno.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

#define MAX_CPUS 256

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t state_once = PTHREAD_ONCE_INIT;

/* Global (system-wide on a real Mac) KPC state, under state_lock. */
static _Atomic uint32_t counting;
static _Atomic uint32_t thread_counting;
static kpc_config_t fixed_ctrl;                /* Intel IA32_FIXED_CTR_CTRL */
static kpc_config_t config[KPC_MAX_COUNTERS];  /* by absolute counter */
static int force_all;
static atomic_uint_fast64_t generation = 1;    /* bumped on every change */

/* Per-CPU counters. */
static uint64_t cpu_value[MAX_CPUS][KPC_MAX_COUNTERS];
static uint64_t cpu_busy_ns[MAX_CPUS];
static int cpu_count;

/* KPERF state. */
static uint32_t action_count;
static uint32_t action_samplers[KPERF_ACTION_MAX];
static int32_t action_task[KPERF_ACTION_MAX];
static int32_t action_pid[KPERF_ACTION_MAX];
static uint32_t timer_count;
static uint64_t timer_period[KPERF_TIMER_MAX];
static uint32_t timer_action[KPERF_TIMER_MAX];
static uint32_t pet_timer = 999;
static uint32_t sampling;

/* What one thread saw at its last call, and what it has counted. */
typedef struct thread_state {
    bool started;
    uint64_t seen_generation;
    uint64_t last_ns;
    uint32_t active;                       /* counters that advance */
    uint32_t rate[KPC_MAX_COUNTERS];       /* events per microsecond */
    uint64_t value[KPC_MAX_COUNTERS];
    uint64_t remainder[KPC_MAX_COUNTERS];  /* sub-event part, in 1/1000 */
} thread_state;

static _Thread_local thread_state self;

#define FAIL_ERRNO(e) \
    do {              \
        errno = (e);  \
        return -1;    \
    } while (0)

#define FAULT(fn)                       \
    do {                                \
        int code_;                      \
        if (sim_fault(#fn, &code_))     \
            FAIL_ERRNO(code_);          \
    } while (0)

#define PRIVILEGED()                    \
    do {                                \
        if (!sim_privileged())          \
            FAIL_ERRNO(EPERM);          \
    } while (0)

static void publish_state(void);
static void adopt_state(void);

static void init_state(void)
{
    force_all = sim_initial_force_all();
    adopt_state();
    publish_state();
    long n = sysconf(_SC_NPROCESSORS_CONF);
    cpu_count = n < 1 ? 1 : n > MAX_CPUS ? MAX_CPUS : (int)n;
}

static const sim_chip *chip(void)
{
    pthread_once(&state_once, init_state);
    return sim_current_chip();
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned fixed_count(const sim_chip *c) { return c ? sim_popcount(c->fixed_bits) : 0; }
static unsigned config_count(const sim_chip *c) { return c ? sim_popcount(c->config_bits) : 0; }

static uint32_t counters_of(const sim_chip *c, uint32_t classes)
{
    uint32_t n = 0;
    if (classes & KPC_CLASS_FIXED_MASK)
        n += fixed_count(c);
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        n += config_count(c);
    if (classes & KPC_CLASS_POWER_MASK)
        n += c ? sim_popcount(c->power_bits) : 0;
    return n;
}

/*
 * Events per microsecond of CPU time: cycles at 3 GHz, instructions at an
 * IPC of 2.5, and for other events a rate of the right order for their kind
 * (a branch in six instructions, a misprediction or cache miss in a few
 * hundred), offset by the selector so that no two events count alike.
 */
static uint32_t rate_of(const sim_chip *c, unsigned counter)
{
    bool intel = c->architecture == KPEP_ARCH_X86_64;
    if (c->fixed_bits >> counter & 1)
        return (counter == 0) == intel ? 7500 : 3000;
    unsigned number = (unsigned)(config[counter] & (intel ? 0xff : 0xffff));
    const sim_event *ev = sim_event_by_number(c, number);
    const char *name = ev != NULL ? ev->name : "";
    if (strcmp(name, "INST_ALL") == 0 || strcmp(name, "INST_RETIRED.ANY_P") == 0)
        return 7500;
    if (strcmp(name, "CORE_ACTIVE_CYCLE") == 0 || strcmp(name, "CPU_CLK_UNHALTED.THREAD_P") == 0)
        return 3000;
    if (strstr(name, "MISPRED") != NULL || strstr(name, "MISP_") != NULL)
        return 9 + number % 7;
    if (strstr(name, "MISS") != NULL || strstr(name, "TLB") != NULL)
        return 20 + number % 13;
    if (strstr(name, "BRANCH") != NULL || strstr(name, "BR_INST") != NULL)
        return 1250 + number % 50;
    return 100 + (number * 2654435761u) % 1400;
}

/* Counters that advance under the current global state. Caller holds state_lock. */
static uint32_t active_counters(const sim_chip *c, uint32_t classes)
{
    uint32_t active = 0;
    if (c == NULL)
        return 0;
    if (classes & KPC_CLASS_FIXED_MASK) {
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->fixed_bits >> i & 1)
                active |= 1u << i;
        if (c->fixed_config_words > 0) /* Intel: enabled through the control word */
            for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
                if ((c->fixed_bits >> i & 1) && !((fixed_ctrl >> (4 * i)) & 0x3))
                    active &= ~(1u << i);
    }
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
            if ((c->config_bits >> i & 1) && config[i] != 0)
                active |= 1u << i;
    return active;
}

/* Settle the calling thread's counts up to now, then look at the new state. */
static void sync_thread(const sim_chip *c)
{
    uint64_t now = thread_cpu_ns();
    if (self.started && self.active != 0) {
        uint64_t delta = now - self.last_ns;
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
            if (!(self.active >> i & 1))
                continue;
            uint64_t milli = delta * self.rate[i] + self.remainder[i];
            self.value[i] += milli / 1000;
            self.remainder[i] = milli % 1000;
        }
    }
    self.started = true;
    self.last_ns = now;
    uint64_t gen = atomic_load_explicit(&generation, memory_order_acquire);
    if (gen != self.seen_generation) {
        pthread_mutex_lock(&state_lock);
        self.active = active_counters(c, counting & thread_counting);
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
            self.rate[i] = (self.active >> i & 1) ? rate_of(c, i) : 0;
        self.seen_generation = atomic_load(&generation);
        pthread_mutex_unlock(&state_lock);
    }
}

/* Per-CPU busy time from /proc/stat, in ns. Returns CPUs read. */
static int read_cpu_busy(uint64_t *busy)
{
    FILE *f = fopen("/proc/stat", "r");
    if (f == NULL)
        return 0;
    long hz = sysconf(_SC_CLK_TCK);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        int cpu;
        unsigned long long user, nice, sys, idle, iowait, irq, softirq;
        if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu", &cpu, &user, &nice, &sys,
                   &idle, &iowait, &irq, &softirq) == 8 &&
            cpu >= 0 && cpu < cpu_count) {
            busy[cpu] = (user + nice + sys + irq + softirq) * (1000000000ull / (uint64_t)hz);
            n++;
        }
    }
    fclose(f);
    return n;
}

/* Settle every CPU's counters under the state in force. Caller holds state_lock. */
static void sync_cpus(const sim_chip *c)
{
    uint64_t busy[MAX_CPUS] = {0};
    if (read_cpu_busy(busy) == 0)
        return;
    uint32_t active = active_counters(c, counting);
    for (int cpu = 0; cpu < cpu_count; cpu++) {
        uint64_t delta = busy[cpu] > cpu_busy_ns[cpu] ? busy[cpu] - cpu_busy_ns[cpu] : 0;
        if (cpu_busy_ns[cpu] != 0)
            for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
                if (active >> i & 1)
                    cpu_value[cpu][i] += delta / 1000 * rate_of(c, i);
        cpu_busy_ns[cpu] = busy[cpu];
    }
}

/*
 * On a Mac, force_all_ctrs and the counting classes are machine state that
 * outlives the process that set them. DKPERF_SIM_STATE names a file that
 * shows them from outside the process: rewritten (through a rename, so a
 * reader never sees half of it) on every change, under state_lock.
 */
static void publish_state(void)
{
    /* open/write, not stdio: the state must be written even when the
     * process under test cannot allocate (the malloc-failure sweep). */
    const char *path = getenv("DKPERF_SIM_STATE");
    if (path == NULL || *path == '\0')
        return;
    char tmp[4096], text[128];
    if (snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return;
    int len = snprintf(text, sizeof text, "force_all_ctrs %d\ncounting 0x%x\nthread_counting 0x%x\n",
                       force_all, (unsigned)counting, (unsigned)thread_counting);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    bool ok = write(fd, text, (size_t)len) == len;
    if (close(fd) != 0 || !ok || rename(tmp, path) != 0)
        unlink(tmp);
}

/* A state file left by an earlier process is the machine's state now. */
static void adopt_state(void)
{
    const char *path = getenv("DKPERF_SIM_STATE");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    int v;
    if (fscanf(f, "force_all_ctrs %d", &v) == 1)
        force_all = v ? 1 : 0;
    fclose(f);
}

static void changed(void)
{
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    publish_state();
}

/* ------------------------------------------------------------------------ */
/* KPC                                                                       */
/* ------------------------------------------------------------------------ */

SIM_API int kpc_cpu_string(char *buf, size_t buf_size)
{
    FAULT(kpc_cpu_string);
    const sim_chip *c = chip();
    if (buf == NULL || c == NULL)
        FAIL_ERRNO(EINVAL);
    return snprintf(buf, buf_size, "%s", c->cpu_id);
}

SIM_API uint32_t kpc_pmu_version(void)
{
    int code;
    const sim_chip *c = chip();
    if (sim_fault("kpc_pmu_version", &code) || c == NULL)
        return KPC_PMU_ERROR;
    return c->pmu_version;
}

SIM_API uint32_t kpc_get_counting(void)
{
    int code;
    chip();
    if (sim_fault("kpc_get_counting", &code))
        return 0;
    pthread_mutex_lock(&state_lock);
    uint32_t v = counting;
    pthread_mutex_unlock(&state_lock);
    return v;
}

SIM_API int kpc_set_counting(uint32_t classes)
{
    FAULT(kpc_set_counting);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (classes & ~0xfu)
        FAIL_ERRNO(EINVAL);
    sync_thread(c);
    pthread_mutex_lock(&state_lock);
    sync_cpus(c);
    counting = classes;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API uint32_t kpc_get_thread_counting(void)
{
    int code;
    chip();
    if (sim_fault("kpc_get_thread_counting", &code))
        return 0;
    pthread_mutex_lock(&state_lock);
    uint32_t v = thread_counting;
    pthread_mutex_unlock(&state_lock);
    return v;
}

SIM_API int kpc_set_thread_counting(uint32_t classes)
{
    FAULT(kpc_set_thread_counting);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (classes & ~0xfu)
        FAIL_ERRNO(EINVAL);
    sync_thread(c);
    pthread_mutex_lock(&state_lock);
    thread_counting = classes;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API uint32_t kpc_get_config_count(uint32_t classes)
{
    int code;
    const sim_chip *c = chip();
    if (sim_fault("kpc_get_config_count", &code) || c == NULL)
        return 0;
    uint32_t n = 0;
    if (classes & KPC_CLASS_FIXED_MASK)
        n += c->fixed_config_words;
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        n += config_count(c);
    if (classes & KPC_CLASS_POWER_MASK)
        n += sim_popcount(c->power_bits);
    return n;
}

SIM_API uint32_t kpc_get_counter_count(uint32_t classes)
{
    int code;
    const sim_chip *c = chip();
    if (sim_fault("kpc_get_counter_count", &code))
        return 0;
    return counters_of(c, classes);
}

SIM_API int kpc_get_config(uint32_t classes, kpc_config_t *cfg)
{
    FAULT(kpc_get_config);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (cfg == NULL || c == NULL)
        FAIL_ERRNO(EINVAL);
    size_t w = 0;
    pthread_mutex_lock(&state_lock);
    if (classes & KPC_CLASS_FIXED_MASK)
        for (uint32_t i = 0; i < c->fixed_config_words; i++)
            cfg[w++] = fixed_ctrl;
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->config_bits >> i & 1)
                cfg[w++] = config[i];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

static bool selector_listed(const sim_chip *c, kpc_config_t word)
{
    unsigned number = (unsigned)(word & (c->architecture == KPEP_ARCH_X86_64 ? 0xff : 0xffff));
    return number == 0 || sim_event_by_number(c, number) != NULL;
}

SIM_API int kpc_set_config(uint32_t classes, kpc_config_t *cfg)
{
    FAULT(kpc_set_config);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (cfg == NULL || c == NULL || (classes & ~0xfu))
        FAIL_ERRNO(EINVAL);
    /* Check every word first: a refused write changes nothing. */
    size_t w = (classes & KPC_CLASS_FIXED_MASK) ? c->fixed_config_words : 0;
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        for (unsigned i = 0, k = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->config_bits >> i & 1)
                if (!selector_listed(c, cfg[w + k++]))
                    FAIL_ERRNO(EINVAL);
    sync_thread(c);
    pthread_mutex_lock(&state_lock);
    sync_cpus(c);
    w = 0;
    if (classes & KPC_CLASS_FIXED_MASK)
        for (uint32_t i = 0; i < c->fixed_config_words; i++)
            fixed_ctrl = cfg[w++];
    if (classes & KPC_CLASS_CONFIGURABLE_MASK) {
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
            if (!(c->config_bits >> i & 1))
                continue;
            kpc_config_t word = cfg[w++];
            /* The power manager keeps its counters unless they were forced. */
            if ((c->power_bits >> i & 1) && !force_all)
                continue;
            config[i] = word;
        }
    }
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_get_cpu_counters(bool all_cpus, uint32_t classes, int *curcpu, uint64_t *buf)
{
    FAULT(kpc_get_cpu_counters);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (buf == NULL || c == NULL)
        FAIL_ERRNO(EINVAL);
    int here = sched_getcpu();
    if (here < 0 || here >= cpu_count)
        here = 0;
    if (curcpu != NULL)
        *curcpu = here;
    pthread_mutex_lock(&state_lock);
    sync_cpus(c);
    size_t w = 0;
    for (int cpu = all_cpus ? 0 : here; cpu < (all_cpus ? cpu_count : here + 1); cpu++) {
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
            bool fixed = c->fixed_bits >> i & 1, conf = c->config_bits >> i & 1;
            if ((fixed && (classes & KPC_CLASS_FIXED_MASK)) ||
                (conf && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
                buf[w++] = cpu_value[cpu][i];
        }
    }
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_get_thread_counters(uint32_t tid, uint32_t buf_count, uint64_t *buf)
{
    FAULT(kpc_get_thread_counters);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (tid != 0 || buf == NULL || c == NULL)
        FAIL_ERRNO(EINVAL);
    sync_thread(c);
    uint32_t classes = thread_counting; /* a racy read is what a sysctl gives too */
    if (buf_count < counters_of(c, classes & (KPC_CLASS_FIXED_MASK | KPC_CLASS_CONFIGURABLE_MASK)))
        FAIL_ERRNO(EINVAL);
    size_t w = 0;
    for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
        bool fixed = c->fixed_bits >> i & 1, conf = c->config_bits >> i & 1;
        if ((fixed && (classes & KPC_CLASS_FIXED_MASK)) ||
            (conf && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
            buf[w++] = self.value[i];
    }
    return 0;
}

SIM_API int kpc_force_all_ctrs_set(int val)
{
    FAULT(kpc_force_all_ctrs_set);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (val && sim_busy())
        FAIL_ERRNO(EBUSY);
    sync_thread(c);
    pthread_mutex_lock(&state_lock);
    force_all = val ? 1 : 0;
    if (!force_all && c != NULL) {
        /* The power manager takes its counters back. */
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->power_bits >> i & 1)
                config[i] = 0;
    }
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_force_all_ctrs_get(int *val_out)
{
    FAULT(kpc_force_all_ctrs_get);
    PRIVILEGED();
    chip();
    if (val_out == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    *val_out = sim_busy() ? 1 : force_all; /* another client holds them */
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* KPERF                                                                     */
/* ------------------------------------------------------------------------ */

#define KPERF_PROLOGUE(fn) \
    FAULT(fn);             \
    PRIVILEGED();          \
    chip()

SIM_API int kperf_action_count_set(uint32_t count)
{
    KPERF_PROLOGUE(kperf_action_count_set);
    if (count > KPERF_ACTION_MAX)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    action_count = count;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_action_count_get(uint32_t *count)
{
    KPERF_PROLOGUE(kperf_action_count_get);
    if (count == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    *count = action_count;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/* Action ids count from 1, as in the kernel; 0 means "no action". */
#define CHECK_ACTION(id)                            \
    if ((id) == 0 || (id) > action_count) {         \
        pthread_mutex_unlock(&state_lock);          \
        FAIL_ERRNO(EINVAL);                         \
    }

SIM_API int kperf_action_samplers_set(uint32_t actionid, uint32_t sample)
{
    KPERF_PROLOGUE(kperf_action_samplers_set);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    action_samplers[actionid - 1] = sample;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_action_samplers_get(uint32_t actionid, uint32_t *sample)
{
    KPERF_PROLOGUE(kperf_action_samplers_get);
    if (sample == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    *sample = action_samplers[actionid - 1];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_action_filter_set_by_task(uint32_t actionid, int32_t port)
{
    KPERF_PROLOGUE(kperf_action_filter_set_by_task);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    action_task[actionid - 1] = port;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_action_filter_set_by_pid(uint32_t actionid, int32_t pid)
{
    KPERF_PROLOGUE(kperf_action_filter_set_by_pid);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    action_pid[actionid - 1] = pid;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_count_set(uint32_t count)
{
    KPERF_PROLOGUE(kperf_timer_count_set);
    if (count > KPERF_TIMER_MAX)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    timer_count = count;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_count_get(uint32_t *count)
{
    KPERF_PROLOGUE(kperf_timer_count_get);
    if (count == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    *count = timer_count;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

#define CHECK_TIMER(id)                     \
    if ((id) >= timer_count) {              \
        pthread_mutex_unlock(&state_lock);  \
        FAIL_ERRNO(EINVAL);                 \
    }

SIM_API int kperf_timer_period_set(uint32_t timerid, uint64_t tick)
{
    KPERF_PROLOGUE(kperf_timer_period_set);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid);
    timer_period[timerid] = tick;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_period_get(uint32_t timerid, uint64_t *tick)
{
    KPERF_PROLOGUE(kperf_timer_period_get);
    if (tick == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid);
    *tick = timer_period[timerid];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_action_set(uint32_t timerid, uint32_t actionid)
{
    KPERF_PROLOGUE(kperf_timer_action_set);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid);
    if (actionid > action_count) {
        pthread_mutex_unlock(&state_lock);
        FAIL_ERRNO(EINVAL);
    }
    timer_action[timerid] = actionid;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_action_get(uint32_t timerid, uint32_t *actionid)
{
    KPERF_PROLOGUE(kperf_timer_action_get);
    if (actionid == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid);
    *actionid = timer_action[timerid];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_pet_set(uint32_t timerid)
{
    KPERF_PROLOGUE(kperf_timer_pet_set);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid);
    pet_timer = timerid;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_pet_get(uint32_t *timerid)
{
    KPERF_PROLOGUE(kperf_timer_pet_get);
    if (timerid == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    *timerid = pet_timer;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_sample_set(uint32_t enabled)
{
    KPERF_PROLOGUE(kperf_sample_set);
    pthread_mutex_lock(&state_lock);
    /* Sampling needs a timer with a period that fires an action. */
    bool armed = false;
    for (uint32_t t = 0; t < timer_count; t++)
        if (timer_period[t] != 0 && timer_action[t] != 0)
            armed = true;
    if (enabled && !armed) {
        pthread_mutex_unlock(&state_lock);
        FAIL_ERRNO(EINVAL);
    }
    sampling = enabled ? 1 : 0;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_sample_get(uint32_t *enabled)
{
    KPERF_PROLOGUE(kperf_sample_get);
    if (enabled == NULL)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    *enabled = sampling;
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_reset(void)
{
    KPERF_PROLOGUE(kperf_reset);
    pthread_mutex_lock(&state_lock);
    action_count = 0;
    timer_count = 0;
    sampling = 0;
    pet_timer = 999;
    memset(action_samplers, 0, sizeof action_samplers);
    memset(action_task, 0, sizeof action_task);
    memset(action_pid, 0, sizeof action_pid);
    memset(timer_period, 0, sizeof timer_period);
    memset(timer_action, 0, sizeof timer_action);
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/* mach_absolute_time runs at 24 MHz on Apple Silicon and at 1 GHz on Intel. */
SIM_API uint64_t kperf_ns_to_ticks(uint64_t ns)
{
    const sim_chip *c = chip();
    if (c != NULL && c->architecture == KPEP_ARCH_X86_64)
        return ns;
    return ns / 125 * 3 + ns % 125 * 3 / 125;
}

SIM_API uint64_t kperf_ticks_to_ns(uint64_t ticks)
{
    const sim_chip *c = chip();
    if (c != NULL && c->architecture == KPEP_ARCH_X86_64)
        return ticks;
    return ticks / 3 * 125 + ticks % 3 * 125 / 3;
}

#ifndef SIM_OMIT_LAST_SYMBOL
SIM_API uint64_t kperf_tick_frequency(void)
{
    const sim_chip *c = chip();
    return c != NULL && c->architecture == KPEP_ARCH_X86_64 ? 1000000000u : 24000000u;
}
#endif
