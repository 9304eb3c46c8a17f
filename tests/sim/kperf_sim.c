/* SPDX-License-Identifier: MIT OR Apache-2.0 */
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
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cpc_allow_lists.h"
#include "sim.h"
#include "sim_kernel.h"

#define MAX_CPUS 256

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t state_once = PTHREAD_ONCE_INIT;

/* Global (system-wide on a real Mac) KPC state, under state_lock. */
static _Atomic uint32_t counting;
static _Atomic uint32_t thread_counting;
static kpc_config_t fixed_ctrl;                /* Intel IA32_FIXED_CTR_CTRL */
static kpc_config_t config[KPC_MAX_COUNTERS];  /* by absolute counter */
#ifndef SIM_OMIT_OPTIONAL
static uint64_t reload[KPC_MAX_COUNTERS];      /* kpc.period: max - period */
static uint32_t pmi_action[KPC_MAX_COUNTERS];  /* kpc.actionid */
#endif
static int force_all;
static long force_all_pid; /* the process that forced them (0: unknown, or none) */
static atomic_uint_fast64_t generation = 1;    /* bumped on every change */

/* Per-CPU counters. */
static uint64_t cpu_value[MAX_CPUS][KPC_MAX_COUNTERS];
static uint64_t cpu_busy_ns[MAX_CPUS]; /* by host CPU */
static int cpu_count;  /* simulated CPUs (the chip's layout) */
static int host_cpus;  /* the machine's, whose busy time drives them */

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
    uint64_t last_total_ns;
    uint32_t active;                       /* counters that advance */
    uint32_t rate[KPC_MAX_COUNTERS];       /* events per microsecond */
    uint8_t mode[KPC_MAX_COUNTERS];        /* MODE_*: which CPU time counts */
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
static void rearm(void);
static size_t armed_fds(void);
static void pull_samples(int timeout_ms);
static void tracing_changed(void);
SIM_API uint64_t kperf_ns_to_ticks(uint64_t ns);
SIM_API uint64_t kperf_ticks_to_ns(uint64_t ticks);

static void init_state(void)
{
    force_all = sim_initial_force_all();
    simk_set_hooks(pull_samples, tracing_changed);
    for (unsigned i = 0; i < KPERF_ACTION_MAX; i++)
        action_pid[i] = -1; /* kperf_action_set_count: no pid filter */
    adopt_state();
    publish_state();
    unsigned n = sim_cpu_layout()->ncpu;
    cpu_count = n < 1 ? 1 : n > MAX_CPUS ? MAX_CPUS : (int)n;
    long h = sysconf(_SC_NPROCESSORS_CONF);
    host_cpus = h < 1 ? 1 : h > MAX_CPUS ? MAX_CPUS : (int)h;
}

static const sim_chip *chip(void)
{
    pthread_once(&state_once, init_state);
    return sim_current_chip();
}

/*
 * The calling thread's CPU time and the system part of it, in ns: the total
 * from the thread's CPU clock, the system part from getrusage(RUSAGE_THREAD).
 * Linux splits the total by where its ticks landed and rescales the split
 * as ticks arrive, so the system part of a short stretch jumps; a stretch
 * is split in the thread's proportion so far instead, once the thread has
 * run 100 ms (all user time before).
 */
static void thread_times(uint64_t *total_ns, uint64_t *sys_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    *total_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    struct rusage ru;
    *sys_ns = 0;
    if (getrusage(RUSAGE_THREAD, &ru) == 0)
        *sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000u;
}

static bool is_intel(const sim_chip *c) { return c->architecture == KPEP_ARCH_X86_64; }

/*
 * DKPERF_SIM_SELECTOR_POLICY: "checked" (default) is a RELEASE kernel
 * (CPC_EVPOL_RESTRICT_TO_KNOWN, kpc_allows_counting_system false);
 * "unchecked" one that allows every selector and EL1 (CPC_EVPOL_ALLOW_ALL
 * of DEVELOPMENT kernels, and the kernels before xnu-10063).
 */
static bool policy_checked(void)
{
    const char *v = getenv("DKPERF_SIM_SELECTOR_POLICY");
    if (v == NULL || *v == '\0' || strcmp(v, "checked") == 0)
        return true;
    if (strcmp(v, "unchecked") == 0)
        return false;
    fprintf(stderr, "dkperf sim: DKPERF_SIM_SELECTOR_POLICY=%s: use checked or unchecked\n", v);
    abort();
}

/* The xnu board whose allow-list a kpep database's chip follows. */
static const sim_allow_list *allow_list_of(const sim_chip *c)
{
    static const struct {
        const char *db, *board;
    } boards[] = {
        {"a14", "T8103"},        {"a15", "T8112"},        {"a16", "T8122_T8130"},
        {"as1", "T8122_T8130"},  {"as2", "T8122_T8130"},  {"as3", "T6031"},
        {"as4", "T8132"},        {"as4-1", "T6041"},      {"as4-2", "T6041"},
        {"as5", "T8132"},        {"as5-2", "T8132"},
    };
    for (size_t i = 0; i < sizeof boards / sizeof boards[0]; i++) {
        if (strcmp(boards[i].db, c->db_name) != 0)
            continue;
        for (size_t j = 0; j < sizeof sim_allow_lists / sizeof sim_allow_lists[0]; j++)
            if (strcmp(sim_allow_lists[j].board, boards[i].board) == 0)
                return &sim_allow_lists[j];
    }
    return NULL; /* #else: no list, every non-zero selector denied */
}

/* H15 and H16 (M3 and later) have 16-bit event selectors (CPMU_16BIT_EVENTS). */
static bool wide_selectors(const sim_chip *c)
{
    return strcmp(c->db_name, "a14") != 0 && strcmp(c->db_name, "a15") != 0 &&
           strcmp(c->db_name, "a13") != 0;
}

/* PMESR_PMC_MASK on arm64, the event-select byte on x86. */
static unsigned selector_of(const sim_chip *c, kpc_config_t word)
{
    if (is_intel(c))
        return (unsigned)(word & 0xff);
    return (unsigned)(word & (wide_selectors(c) ? 0xffff : 0xff));
}

/* cpc_event_allowed under CPC_EVPOL_RESTRICT_TO_KNOWN. */
static bool selector_allowed(const sim_chip *c, unsigned selector)
{
    if (selector == 0)
        return true;
    const sim_allow_list *l = allow_list_of(c);
    for (size_t i = 0; l != NULL && i < l->count; i++)
        if (l->selectors[i] == selector)
            return true;
    return false;
}

#ifndef SIM_OMIT_OPTIONAL
/* Counter width: 47 bits on H13 (M1), 63 with CPMU_64BIT_PMCS; 48 on x86
 * (CPUID leaf 0xA on the Intel Macs, a guess: xnu reads it at boot). */
static uint64_t counter_max(const sim_chip *c)
{
    unsigned width = is_intel(c) ? 48 : strcmp(c->db_name, "a14") == 0 ? 47 : 63;
    return (UINT64_C(1) << width) - 1;
}
#endif

#define MODE_NONE 0
#define MODE_USER 1
#define MODE_KERNEL 2
#define MODE_ALL 3

#define ARM_EL0_A32 0x10000u
#define ARM_EL0_A64 0x20000u
#define ARM_EL1 0x40000u
#define ARM_EL3 0x80000u
#define ARM_MODES (ARM_EL0_A32 | ARM_EL0_A64 | ARM_EL1 | ARM_EL3)

/* Which CPU time a counter counts under its config word. */
static uint8_t mode_of(const sim_chip *c, unsigned counter)
{
    if (c->fixed_bits >> counter & 1)
        return MODE_ALL; /* x86: ENABLE_ALL_RINGS; arm64: PMCR1 |= 0x30303 */
    kpc_config_t w = config[counter];
    if (is_intel(c))
        return (uint8_t)(((w >> 16) & 1 ? MODE_USER : 0) | ((w >> 17) & 1 ? MODE_KERNEL : 0));
    return (uint8_t)((w & (ARM_EL0_A32 | ARM_EL0_A64) ? MODE_USER : 0) |
                     (w & ARM_EL1 ? MODE_KERNEL : 0));
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
    /* POWER is kpc_pm_pmc_mask, disjoint from CONFIGURABLE and non-empty
     * only while a power-manager kext has registered a handler without a
     * custom config (kpc_get_configurable_pmc_mask); nothing registers one
     * in the sim, so POWER is empty and force_all changes no count. */
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
    bool intel = is_intel(c);
    if (c->fixed_bits >> counter & 1)
        return counter == 2 ? 2400 : (counter == 0) == intel ? 7500 : 3000;
    unsigned number = selector_of(c, config[counter]);
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
    /* x86: kpc.counting writes ENABLE_ALL_RINGS|PMI to every fixed counter
     * (set_running_fixed), whatever kpc.config wrote. */
    if (classes & KPC_CLASS_FIXED_MASK)
        active |= c->fixed_bits;
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
            if ((c->config_bits >> i & 1) && selector_of(c, config[i]) != 0 &&
                mode_of(c, i) != MODE_NONE)
                active |= 1u << i;
    return active;
}

/* Settle the calling thread's counts up to now, then look at the new state. */
static void sync_thread(const sim_chip *c)
{
    uint64_t total, sys;
    thread_times(&total, &sys);
    if (self.started && self.active != 0) {
        uint64_t dt = total > self.last_total_ns ? total - self.last_total_ns : 0;
        /* Below ~10 ticks the split says nothing (a young thread's one
         * tick in the kernel makes all of its time system time). */
        double share = total < 100000000u ? 0 : (double)(sys < total ? sys : total) / (double)total;
        uint64_t ds = (uint64_t)((double)dt * share);
        uint64_t du = dt - ds;
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
            if (!(self.active >> i & 1))
                continue;
            uint64_t delta = (self.mode[i] & MODE_USER ? du : 0) + (self.mode[i] & MODE_KERNEL ? ds : 0);
            uint64_t milli = delta * self.rate[i] + self.remainder[i];
            self.value[i] += milli / 1000;
            self.remainder[i] = milli % 1000;
        }
    }
    self.started = true;
    self.last_total_ns = total;
    uint64_t gen = atomic_load_explicit(&generation, memory_order_acquire);
    if (gen != self.seen_generation) {
        pthread_mutex_lock(&state_lock);
        self.active = active_counters(c, counting & thread_counting);
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
            self.rate[i] = (self.active >> i & 1) ? rate_of(c, i) : 0;
            self.mode[i] = (self.active >> i & 1) ? mode_of(c, i) : MODE_NONE;
        }
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
            cpu >= 0 && cpu < host_cpus) {
            busy[cpu] = (user + nice + sys + irq + softirq) * (1000000000ull / (uint64_t)hz);
            n++;
        }
    }
    fclose(f);
    return n;
}

/* A simulated CPU's share of its host CPU's busy time, in thousandths of
 * its weight: performance cores weigh 3, efficiency cores 2 (their clock
 * ratio in libsystem_sim.c), and each CPU a little less than the one
 * before it, so that no two CPUs count alike. */
static uint64_t cpu_weight(const sim_layout *l, int cpu)
{
    unsigned level = sim_cpu_level(l, (unsigned)cpu);
    return (level == 0 ? 3 : 2) * (uint64_t)(1000 - 10 * (cpu % 64));
}

/*
 * Settle every CPU's counters under the state in force. Simulated CPU k
 * runs on host CPU k % host_cpus and takes its weighted share of that
 * CPU's busy time. Caller holds state_lock.
 */
static void sync_cpus(const sim_chip *c)
{
    uint64_t busy[MAX_CPUS] = {0};
    if (read_cpu_busy(busy) == 0)
        return;
    const sim_layout *l = sim_cpu_layout();
    uint32_t active = active_counters(c, counting);
    uint64_t weights[MAX_CPUS] = {0};
    for (int cpu = 0; cpu < cpu_count; cpu++)
        weights[cpu % host_cpus] += cpu_weight(l, cpu);
    for (int cpu = 0; cpu < cpu_count; cpu++) {
        int h = cpu % host_cpus;
        uint64_t delta = busy[h] > cpu_busy_ns[h] ? busy[h] - cpu_busy_ns[h] : 0;
        if (cpu_busy_ns[h] == 0 || weights[h] == 0)
            continue;
        uint64_t share = delta / 1000 * cpu_weight(l, cpu) / weights[h];
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
            if (active >> i & 1)
                cpu_value[cpu][i] += share * rate_of(c, i);
    }
    for (int h = 0; h < host_cpus; h++)
        cpu_busy_ns[h] = busy[h];
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
    char tmp[4096], text[8192];
    if (snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return;
    /* Sampling: kperf.sampling, actions with samplers, timers with a
     * period, counters with a PMI period and action, the kdebug buffer and
     * the ktrace owner, and the Linux events the sim samples with. */
    unsigned actions = 0, timers = 0;
    uint32_t pmi = 0;
    for (unsigned i = 0; i < action_count; i++)
        actions += action_samplers[i] != 0 || action_pid[i] != -1;
    for (unsigned i = 0; i < KPERF_TIMER_MAX; i++)
        timers += timer_period[i] != 0;
#ifndef SIM_OMIT_OPTIONAL
    for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
        if (reload[i] != 0 && pmi_action[i] != 0)
            pmi |= 1u << i;
#endif
    int len = snprintf(text, sizeof text,
                       "force_all_ctrs %d\ncounting 0x%x\nthread_counting 0x%x\n"
                       "kperf.sampling %u\nkperf.actions_set %u\nkperf.timers_set %u\n"
                       "kpc.pmi 0x%x\nsim.perf_events %zu\nforce_all_ctrs.pid %ld\n",
                       force_all, (unsigned)counting, (unsigned)thread_counting, sampling, actions,
                       timers, (unsigned)pmi, armed_fds(), force_all ? force_all_pid : 0L);
    if (len < 0 || (size_t)len >= sizeof text)
        return;
    /* What a next process takes over (adopt_state): kperf's actions and
     * timers, the PMI reloads and actions, only where they differ from a
     * reset, so that a machine left clean reads all zeros. The counts go
     * with the entries they make room for (XNU keeps them across a reset;
     * a next process that needs actions sets the count again). */
    if (actions > 0)
        len += snprintf(text + len, sizeof text - (size_t)len, "kperf.action.count %u\n",
                        action_count);
    bool timer_set = pet_timer < timer_count;
    for (unsigned i = 0; i < KPERF_TIMER_MAX; i++)
        timer_set = timer_set || timer_period[i] != 0 || timer_action[i] != 0;
    if (timer_set)
        len += snprintf(text + len, sizeof text - (size_t)len, "kperf.timer.count %u\n",
                        timer_count);
    if (pet_timer < timer_count)
        len += snprintf(text + len, sizeof text - (size_t)len, "kperf.timer.pet %u\n", pet_timer);
    for (unsigned i = 0; i < action_count && len < (int)sizeof text; i++) {
        if (action_samplers[i] != 0)
            len += snprintf(text + len, sizeof text - (size_t)len,
                            "kperf.action.%u.samplers 0x%x\n", i + 1, action_samplers[i]);
        if (action_pid[i] != -1 && len < (int)sizeof text)
            len += snprintf(text + len, sizeof text - (size_t)len, "kperf.action.%u.pid %d\n",
                            i + 1, action_pid[i]);
    }
    for (unsigned i = 0; i < KPERF_TIMER_MAX && len < (int)sizeof text; i++)
        if (timer_period[i] != 0 || timer_action[i] != 0)
            len += snprintf(text + len, sizeof text - (size_t)len,
                            "kperf.timer.%u.period %llu\nkperf.timer.%u.action %u\n", i,
                            (unsigned long long)timer_period[i], i, timer_action[i]);
#ifndef SIM_OMIT_OPTIONAL
    for (unsigned i = 0; i < KPC_MAX_COUNTERS && len < (int)sizeof text; i++)
        if (reload[i] != 0 || pmi_action[i] != 0)
            len += snprintf(text + len, sizeof text - (size_t)len,
                            "kpc.reload.%u %llu\nkpc.actionid.%u %u\n", i,
                            (unsigned long long)reload[i], i, pmi_action[i]);
#endif
    if (len < 0 || (size_t)len >= sizeof text)
        return;
    len += (int)simk_state_text(text + len, sizeof text - (size_t)len);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    bool ok = write(fd, text, (size_t)len) == len;
    if (close(fd) != 0 || !ok || rename(tmp, path) != 0)
        unlink(tmp);
}

/* One "kperf.action.N.field", "kperf.timer.N.field" or "kpc.field.N" key
 * of a state file: the index (N, bounded by max) and the field. */
static bool indexed(const char *key, const char *prefix, unsigned max, unsigned *n,
                    const char **field)
{
    size_t len = strlen(prefix);
    if (strncmp(key, prefix, len) != 0)
        return false;
    char *end;
    unsigned long v = strtoul(key + len, &end, 10);
    if (end == key + len || v >= max)
        return false;
    *n = (unsigned)v;
    *field = *end == '.' ? end + 1 : end;
    return true;
}

/* A key of the sampling state (kperf, the PMIs); false: not one. */
static bool adopt_sampling(const char *key, long v)
{
    unsigned n;
    const char *f;
    if (strcmp(key, "kperf.sampling") == 0)
        sampling = v != 0;
    else if (strcmp(key, "kperf.action.count") == 0)
        action_count = v < 0 ? 0 : v > KPERF_ACTION_MAX ? KPERF_ACTION_MAX : (uint32_t)v;
    else if (strcmp(key, "kperf.timer.count") == 0)
        timer_count = v < 0 ? 0 : v > KPERF_TIMER_MAX ? KPERF_TIMER_MAX : (uint32_t)v;
    else if (strcmp(key, "kperf.timer.pet") == 0)
        pet_timer = (uint32_t)v;
    else if (indexed(key, "kperf.action.", KPERF_ACTION_MAX + 1, &n, &f) && n > 0 &&
             strcmp(f, "samplers") == 0)
        action_samplers[n - 1] = (uint32_t)v;
    else if (indexed(key, "kperf.action.", KPERF_ACTION_MAX + 1, &n, &f) && n > 0 &&
             strcmp(f, "pid") == 0)
        action_pid[n - 1] = (int32_t)v;
    else if (indexed(key, "kperf.timer.", KPERF_TIMER_MAX, &n, &f) && strcmp(f, "period") == 0)
        timer_period[n] = (uint64_t)v;
    else if (indexed(key, "kperf.timer.", KPERF_TIMER_MAX, &n, &f) && strcmp(f, "action") == 0)
        timer_action[n] = (uint32_t)v;
#ifndef SIM_OMIT_OPTIONAL
    else if (indexed(key, "kpc.reload.", KPC_MAX_COUNTERS, &n, &f) && *f == '\0')
        reload[n] = (uint64_t)v;
    else if (indexed(key, "kpc.actionid.", KPC_MAX_COUNTERS, &n, &f) && *f == '\0')
        pmi_action[n] = (uint32_t)v;
#endif
    else
        return false;
    return true;
}

/*
 * A state file left by an earlier process is the machine's state now:
 * kperf's sampling, actions and timers, the counters' PMI periods and
 * actions, the trace buffer and the ktrace owner stay as a killed owner
 * left them (XNU resets none of it when its owner ends; a dead owner is
 * only dropped when someone next configures tracing or asks who owns it,
 * kern_ktrace.c ktrace_ownership_maintenance). But for force_all_ctrs:
 * the kernel gives it back when the task that forced the counters ends
 * (osfmk/kern/task.c calls kpc_force_all_ctrs(task, 0) for a task with
 * TASK_KPC_FORCED_ALL_CTRS), so a holder that is gone left nothing
 * forced. A file that names no holder (written by hand) is adopted as it
 * is.
 */
static void adopt_state(void)
{
    const char *path = getenv("DKPERF_SIM_STATE");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    char key[64];
    long v;
    int found = 0;
    long pid = 0;
    while (fscanf(f, "%63s %li", key, &v) == 2) {
        if (strcmp(key, "force_all_ctrs") == 0) {
            force_all = v ? 1 : 0;
            found = 1;
        } else if (strcmp(key, "force_all_ctrs.pid") == 0) {
            pid = v;
        } else if (!adopt_sampling(key, v)) {
            simk_adopt(key, v);
        }
    }
    fclose(f);
    simk_adopt(NULL, 0);
    /* kill(pid, 0): ESRCH when no such process (pid reuse not modelled:
     * XNU tells tasks apart, not pids). */
    if (found && force_all && pid > 0 && pid != (long)getpid() &&
        kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        force_all = 0;
    force_all_pid = force_all ? pid : 0;
}

static void changed(void)
{
    atomic_fetch_add_explicit(&generation, 1, memory_order_release);
    rearm();
    publish_state();
}

#define chip_or_null() sim_current_chip()
#include "kperf_sampling_sim.c"

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
    if (!sim_privileged()) { /* kpc.pmu_version is not in the public list */
        errno = EPERM;
        return KPC_PMU_ERROR;
    }
    return c->pmu_version;
}

SIM_API uint32_t kpc_get_counting(void)
{
    int code;
    chip();
    if (sim_fault("kpc_get_counting", &code))
        return 0;
    if (!sim_privileged()) { /* ktrace_read_check */
        errno = EPERM;
        return 0;
    }
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
    if (c != NULL && is_intel(c)) {
        /* set_running_fixed: ENABLE_ALL_RINGS|PMI (0xb) per fixed counter,
         * never turned off; set_running_configurable: PMI|EN in every
         * PERFEVTSEL. */
        if (classes & KPC_CLASS_FIXED_MASK)
            for (unsigned i = 0; i < fixed_count(c); i++)
                fixed_ctrl |= (kpc_config_t)0xb << (4 * i);
        if (classes & KPC_CLASS_CONFIGURABLE_MASK)
            for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
                if (c->config_bits >> i & 1)
                    config[i] |= 0x500000u;
    }
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
    if (!sim_privileged()) { /* ktrace_read_check */
        errno = EPERM;
        return 0;
    }
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
    /* POWER: empty, see counters_of(). */
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
    if (c == NULL || kpc_get_config_count(classes) == 0) /* regsize 0 */
        FAIL_ERRNO(EINVAL);
    if (cfg == NULL) /* oldp NULL: a size query */
        return 0;
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

/*
 * What the kernel writes for a configurable word. x86: kpc_set_configurable_config
 * masks with 0xffc7ffff. arm64 set_modes: a word with no mode bits means all
 * modes; on a release kernel EL1 is dropped without an error (and EL3 with it).
 */
static kpc_config_t stored_word(const sim_chip *c, kpc_config_t w)
{
    if (is_intel(c))
        return w & 0xffc7ffffu;
    bool el1 = !policy_checked();
    if (w != 0 && !(w & ARM_MODES))
        w |= el1 ? ARM_EL0_A32 | ARM_EL0_A64 | ARM_EL1 : ARM_EL0_A64;
    if (!el1)
        w &= ~(kpc_config_t)(ARM_EL1 | ARM_EL3);
    return w;
}

SIM_API int kpc_set_config(uint32_t classes, kpc_config_t *cfg)
{
    FAULT(kpc_set_config);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (classes & KPC_CLASS_POWER_MASK) /* sysctl_kpc_set_config */
        FAIL_ERRNO(EPERM);
    if (c == NULL || (classes & ~0xfu) || kpc_get_config_count(classes) == 0)
        FAIL_ERRNO(EINVAL);
    if (cfg == NULL) /* copyin from a NULL newp */
        FAIL_ERRNO(EFAULT);
    /* kpc_set_config_arch, secure: check every word first, so a refused
     * write changes nothing. x86 checks nothing. */
    size_t w = (classes & KPC_CLASS_FIXED_MASK) ? c->fixed_config_words : 0;
    if (!is_intel(c) && policy_checked() && (classes & KPC_CLASS_CONFIGURABLE_MASK))
        for (unsigned i = 0, k = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->config_bits >> i & 1)
                if (!selector_allowed(c, selector_of(c, cfg[w + k++])))
                    FAIL_ERRNO(EPERM);
    sync_thread(c);
    pthread_mutex_lock(&state_lock);
    sync_cpus(c);
    w = 0;
    /* x86 kpc_set_fixed_config is NYI: the word is skipped, the call succeeds. */
    w = (classes & KPC_CLASS_FIXED_MASK) ? c->fixed_config_words : 0;
    if (classes & KPC_CLASS_CONFIGURABLE_MASK) {
        for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++) {
            if (!(c->config_bits >> i & 1))
                continue;
            kpc_config_t word = cfg[w++];
            /* The power manager keeps its counters unless they were forced. */
            if ((c->power_bits >> i & 1) && !force_all)
                continue;
            config[i] = stored_word(c, word);
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
    force_all_pid = force_all ? (long)getpid() : 0;
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
    if (val_out == NULL) /* oldp NULL: a size query, as for every int sysctl */
        return 0;
    pthread_mutex_lock(&state_lock);
    *val_out = sim_busy() ? 1 : force_all; /* another client holds them */
    pthread_mutex_unlock(&state_lock);
    return 0;
}

#ifndef SIM_OMIT_OPTIONAL
/*
 * kpc.period and kpc.actionid (bsd/kern/kern_kpc.c, osfmk/kern/kpc_common.c
 * kpc_get_period/kpc_set_period/kpc_get_actionid/kpc_set_actionid): one
 * entry per counter of the classes, fixed first. A NULL output is a size
 * query; a NULL input cannot be copied in.
 */
static int period_args(const sim_chip *c, uint32_t classes)
{
    /* sysctl_getset_bigarray: regsize = kpc_get_counter_count(classes) * n;
     * 0 → EINVAL. Bits of no class count nothing and are otherwise
     * ignored. */
    if (c == NULL || counters_of(c, classes) == 0)
        return EINVAL;
    return 0;
}

SIM_API int kpc_get_period(uint32_t classes, uint64_t *val)
{
    FAULT(kpc_get_period);
    PRIVILEGED();
    const sim_chip *c = chip();
    int e = period_args(c, classes);
    if (e != 0)
        FAIL_ERRNO(e);
    if ((classes & KPC_CLASS_FIXED_MASK) && is_intel(c)) /* no FIXED_COUNTER_SHADOW */
        FAIL_ERRNO(EINVAL);
    if (val == NULL)
        return 0;
    uint64_t max = counter_max(c);
    size_t w = 0;
    pthread_mutex_lock(&state_lock);
    for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
        if (((c->fixed_bits >> i & 1) && (classes & KPC_CLASS_FIXED_MASK)) ||
            ((c->config_bits >> i & 1) && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
            val[w++] = max - reload[i];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_set_period(uint32_t classes, uint64_t *val)
{
    FAULT(kpc_set_period);
    PRIVILEGED();
    const sim_chip *c = chip();
    if (classes & KPC_CLASS_POWER_MASK) /* sysctl_kpc_set_period */
        FAIL_ERRNO(EPERM);
    int e = period_args(c, classes);
    if (e != 0)
        FAIL_ERRNO(e);
    if ((classes & KPC_CLASS_FIXED_MASK) && is_intel(c))
        FAIL_ERRNO(EINVAL);
    if (val == NULL)
        FAIL_ERRNO(EFAULT);
    uint64_t max = counter_max(c);
    pthread_mutex_lock(&state_lock);
    /* arm64 ignores the fixed periods (fixed PMIs belong to monotonic), and
     * its reload xcall reads the configurable periods from index 0 even when
     * FIXED is in classes; x86 has refused FIXED above. */
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        for (unsigned i = 0, k = 0; i < KPC_MAX_COUNTERS; i++)
            if (c->config_bits >> i & 1) {
                uint64_t p = val[k++];
                reload[i] = p == 0 || p > max ? 0 : max - p; /* 0: no PMI */
            }
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kpc_get_actionid(uint32_t classes, uint32_t *val)
{
    FAULT(kpc_get_actionid);
    PRIVILEGED();
    const sim_chip *c = chip();
    int e = period_args(c, classes);
    if (e != 0)
        FAIL_ERRNO(e);
    if (val == NULL)
        return 0;
    size_t w = 0;
    pthread_mutex_lock(&state_lock);
    for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
        if (((c->fixed_bits >> i & 1) && (classes & KPC_CLASS_FIXED_MASK)) ||
            ((c->config_bits >> i & 1) && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
            val[w++] = pmi_action[i];
    pthread_mutex_unlock(&state_lock);
    return 0;
}

/* sysctl_kpc_set_actionid → kpc_set_actionid: only the bigarray wrapper's
 * check (no counter in classes → EINVAL); unlike config and period, POWER is
 * not refused, and the ids are not checked against kperf's actions. */
SIM_API int kpc_set_actionid(uint32_t classes, uint32_t *val)
{
    FAULT(kpc_set_actionid);
    PRIVILEGED();
    const sim_chip *c = chip();
    int e = period_args(c, classes);
    if (e != 0)
        FAIL_ERRNO(e);
    if (val == NULL)
        FAIL_ERRNO(EFAULT);
    size_t w = 0;
    pthread_mutex_lock(&state_lock);
    for (unsigned i = 0; i < KPC_MAX_COUNTERS; i++)
        if (((c->fixed_bits >> i & 1) && (classes & KPC_CLASS_FIXED_MASK)) ||
            ((c->config_bits >> i & 1) && (classes & KPC_CLASS_CONFIGURABLE_MASK)))
            pmi_action[i] = val[w++];
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}
#endif

/* ------------------------------------------------------------------------ */
/* KPERF                                                                     */
/* ------------------------------------------------------------------------ */

#define KPERF_PROLOGUE(fn) \
    FAULT(fn);             \
    PRIVILEGED();          \
    chip()

/* A kperf write (oldp NULL, newp given) takes ktrace ownership
 * (kperfbsd.c kperf_sysctl → ktrace_configure(KTRACE_KPERF)): EPERM, or
 * EBUSY while another live process owns tracing. */
#define KPERF_SET_PROLOGUE(fn)                                \
    FAULT(fn);                                                \
    PRIVILEGED();                                             \
    do {                                                      \
        int busy_ = simk_ktrace_configure(SIMK_KTRACE_KPERF); \
        if (busy_ != 0)                                       \
            FAIL_ERRNO(busy_);                                \
    } while (0);                                              \
    chip()

SIM_API int kperf_action_count_set(uint32_t count)
{
    KPERF_SET_PROLOGUE(kperf_action_count_set);
    if (count > KPERF_ACTION_MAX)
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    if (count < action_count) { /* kperf_action_set_count: actions never shrink */
        pthread_mutex_unlock(&state_lock);
        FAIL_ERRNO(EINVAL);
    }
    action_count = count;
    changed();
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

/* kptimer_set_*: timers cannot change while sampling. */
#define NOT_SAMPLING()                      \
    if (sampling) {                         \
        pthread_mutex_unlock(&state_lock);  \
        FAIL_ERRNO(EBUSY);                  \
    }

/* Action ids count from 1, as in the kernel; 0 means "no action". */
#define CHECK_ACTION(id)                            \
    if ((id) == 0 || (id) > action_count) {         \
        pthread_mutex_unlock(&state_lock);          \
        FAIL_ERRNO(EINVAL);                         \
    }

SIM_API int kperf_action_samplers_set(uint32_t actionid, uint32_t sample)
{
    KPERF_SET_PROLOGUE(kperf_action_samplers_set);
    /* kperf_action_set_samplers: the thread's and the CPU's PMCs exclude each other. */
    if ((sample & KPERF_SAMPLER_PMC_THREAD) && (sample & KPERF_SAMPLER_PMC_CPU))
        FAIL_ERRNO(EINVAL);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    action_samplers[actionid - 1] = sample;
    changed();
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
    KPERF_SET_PROLOGUE(kperf_action_filter_set_by_task);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    action_task[actionid - 1] = port;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_action_filter_set_by_pid(uint32_t actionid, int32_t pid)
{
    KPERF_SET_PROLOGUE(kperf_action_filter_set_by_pid);
    pthread_mutex_lock(&state_lock);
    CHECK_ACTION(actionid);
    action_pid[actionid - 1] = pid;
    changed();
    pthread_mutex_unlock(&state_lock);
    return 0;
}

SIM_API int kperf_timer_count_set(uint32_t count)
{
    KPERF_SET_PROLOGUE(kperf_timer_count_set);
    pthread_mutex_lock(&state_lock);
    NOT_SAMPLING(); /* kptimer_set_count: EBUSY before the count is looked at */
    if (count > KPERF_TIMER_MAX) {
        pthread_mutex_unlock(&state_lock);
        FAIL_ERRNO(EINVAL);
    }
    timer_count = count;
    changed();
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
    KPERF_SET_PROLOGUE(kperf_timer_period_set);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid); /* kptimer_set_period: the id first, then EBUSY */
    NOT_SAMPLING();
    /* A period under the minimum is raised to it when set, so reading it
     * back gives what the timer will use (the PET timer's minimum for the
     * PET timer). */
    uint64_t min = timer_min_ticks(chip_or_null(), pet_timer == timerid);
    timer_period[timerid] = tick != 0 && tick < min ? min : tick;
    changed();
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
    KPERF_SET_PROLOGUE(kperf_timer_action_set);
    pthread_mutex_lock(&state_lock);
    CHECK_TIMER(timerid); /* kptimer_set_action: the id first, then EBUSY */
    NOT_SAMPLING();
    timer_action[timerid] = actionid; /* kptimer_set_action validates no action id */
    changed();
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
    KPERF_SET_PROLOGUE(kperf_timer_pet_set);
    pthread_mutex_lock(&state_lock);
    NOT_SAMPLING();
    /* kptimer_set_pet_timerid: an id past the timers turns PET off (999 is
     * how clients say so); a timer made the PET timer has its period
     * raised to the PET minimum. */
    if (timerid < timer_count) {
        uint64_t min = timer_min_ticks(chip_or_null(), true);
        if (timer_period[timerid] < min)
            timer_period[timerid] = min;
    }
    pet_timer = timerid;
    changed();
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
    KPERF_SET_PROLOGUE(kperf_sample_set);
    pthread_mutex_lock(&state_lock);
    /* kperf_enable_sampling: ECANCELED without actions; no timer needed. */
    if (enabled && action_count == 0) {
        pthread_mutex_unlock(&state_lock);
        FAIL_ERRNO(ECANCELED);
    }
    sampling = enabled ? 1 : 0;
    changed();
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
    KPERF_SET_PROLOGUE(kperf_reset);
    pthread_mutex_lock(&state_lock);
    /* kperf_reset keeps the action and timer counts. */
    sampling = 0;
    pet_timer = 999;
    memset(action_samplers, 0, sizeof action_samplers);
    memset(action_task, 0, sizeof action_task);
    for (unsigned i = 0; i < KPERF_ACTION_MAX; i++)
        action_pid[i] = -1;
    memset(timer_period, 0, sizeof timer_period);
    memset(timer_action, 0, sizeof timer_action);
    simk_ktrace_reset(SIMK_KTRACE_KPERF); /* ktrace_reset(KTRACE_KPERF) → kperf_reset */
    changed();
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
