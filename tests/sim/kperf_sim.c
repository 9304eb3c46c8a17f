/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_sim.c - a simulated kperf.framework: KPC counting state, config
 * registers, force_all_ctrs ownership, per-thread and per-CPU counters, and
 * the KPERF timer/action state, all 34 functions: the state and how the
 * counters advance here, the KPC functions in kperf_kpc_sim.c, the KPERF
 * functions in kperf_timers_sim.c, the sampling in kperf_sampling_sim.c
 * (each included below: one library, its state static).
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

#define MAX_CPUS SIM_NCPU_MAX

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t state_once = PTHREAD_ONCE_INIT;

/* Global (system-wide on a real Mac) KPC state, under state_lock. */
static _Atomic uint32_t counting;
static _Atomic uint32_t thread_counting;
static kpc_config_t fixed_ctrl;               /* Intel IA32_FIXED_CTR_CTRL */
static kpc_config_t config[KPC_MAX_COUNTERS]; /* by absolute counter */
#ifndef SIM_OMIT_OPTIONAL
static uint64_t reload[KPC_MAX_COUNTERS];     /* kpc.period: max - period */
static uint32_t pmi_action[KPC_MAX_COUNTERS]; /* kpc.actionid */
#endif
static int force_all;
static long force_all_pid;                  /* the process that forced them (0: unknown, or none) */
static atomic_uint_fast64_t generation = 1; /* bumped on every change */

/* Per-CPU counters. */
static uint64_t cpu_value[MAX_CPUS][KPC_MAX_COUNTERS];
static uint64_t cpu_busy_ns[MAX_CPUS]; /* by host CPU */
static int cpu_count;                  /* simulated CPUs (the chip's layout) */
static int host_cpus;                  /* the machine's, whose busy time drives them */

/* KPERF state. */
static uint32_t action_count;
static uint32_t action_samplers[KPERF_ACTION_MAX];
static int32_t action_task[KPERF_ACTION_MAX];
static int32_t action_pid[KPERF_ACTION_MAX];
static uint32_t timer_count;
static uint64_t timer_period[KPERF_TIMER_MAX];
static uint32_t timer_action[KPERF_TIMER_MAX];
static uint32_t pet_timer = 999;
static uint32_t lightweight_pet; /* kperf.lightweight_pet (pet.c kppet.g_lightweight) */
static uint32_t kdbg_cswitch;    /* kperf.kdbg_cswitch (action.c kperf_kdebug_cswitch) */
/* kperf.pet_idle_rate (pet.c kppet.g_idle_rate, KPERF_PET_DEFAULT_IDLE_RATE) */
#define PET_IDLE_RATE_DEFAULT 15u
static uint32_t pet_idle_rate = PET_IDLE_RATE_DEFAULT;
static uint32_t sampling;

/* What one thread saw at its last call, and what it has counted. */
typedef struct thread_state {
    bool started;
    uint64_t seen_generation;
    uint64_t last_total_ns;
    uint32_t active;                 /* counters that advance */
    uint32_t rate[KPC_MAX_COUNTERS]; /* events per microsecond */
    uint8_t mode[KPC_MAX_COUNTERS];  /* MODE_*: which CPU time counts */
    uint64_t value[KPC_MAX_COUNTERS];
    uint64_t remainder[KPC_MAX_COUNTERS]; /* sub-event part, in 1/1000 */
} thread_state;

static _Thread_local thread_state self;

#define FAIL_ERRNO(e) \
    do {              \
        errno = (e);  \
        return -1;    \
    } while (0)

#define FAULT(fn)                   \
    do {                            \
        int code_;                  \
        if (sim_fault(#fn, &code_)) \
            FAIL_ERRNO(code_);      \
    } while (0)

#define PRIVILEGED()           \
    do {                       \
        if (!sim_privileged()) \
            FAIL_ERRNO(EPERM); \
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
        *sys_ns = (uint64_t)ru.ru_stime.tv_sec * 1000000000u +
                  (uint64_t)ru.ru_stime.tv_usec * 1000u;
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
        {"a14", "T8103"},       {"a15", "T8112"}, {"a16", "T8122_T8130"}, {"as1", "T8122_T8130"},
        {"as2", "T8122_T8130"}, {"as3", "T6031"}, {"as4", "T8132"},       {"as4-1", "T6041"},
        {"as4-2", "T6041"},     {"as5", "T8132"}, {"as5-2", "T8132"},
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
            uint64_t delta = (self.mode[i] & MODE_USER ? du : 0) +
                             (self.mode[i] & MODE_KERNEL ? ds : 0);
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
        len +=
            snprintf(text + len, sizeof text - (size_t)len, "kperf.timer.count %u\n", timer_count);
    if (pet_timer < timer_count)
        len += snprintf(text + len, sizeof text - (size_t)len, "kperf.timer.pet %u\n", pet_timer);
    if (lightweight_pet)
        len += snprintf(text + len, sizeof text - (size_t)len, "kperf.lightweight_pet 1\n");
    if (pet_idle_rate != PET_IDLE_RATE_DEFAULT)
        len += snprintf(text + len, sizeof text - (size_t)len, "kperf.pet_idle_rate %u\n",
                        pet_idle_rate);
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
    else if (strcmp(key, "kperf.lightweight_pet") == 0)
        lightweight_pet = v == 1;
    else if (strcmp(key, "kperf.pet_idle_rate") == 0)
        pet_idle_rate = (uint32_t)v;
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
    if (found && force_all && pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 &&
        errno == ESRCH)
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
#include "kperf_kpc_sim.c"
#include "kperf_timers_sim.c"
