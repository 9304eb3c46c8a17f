/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sim_common.c - the simulated CPUs, their databases, and the environment
 * knobs shared by the simulated kperf and kperfdata frameworks.
 *
 * Each simulated framework links its own copy of this file, just as the
 * real frameworks keep their own state.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "sim.h"

#define SIM_MAX_CHIPS 32
#define SIM_MAX_FAULTS 16

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static sim_chip chips[SIM_MAX_CHIPS];
static size_t chip_count;
static const sim_chip *current;

static bool env_privileged = true;
static bool env_busy;
static int env_force_all;

typedef struct fault {
    char fn[64];
    int code;
    unsigned long nth; /* 0: every call */
    bool and_later;
    atomic_ulong calls;
} fault;

static fault faults[SIM_MAX_FAULTS];
static size_t fault_count;

/* DKPERF_SIM_SLOW: a function that takes this long (to race signals against). */
typedef struct slow {
    char fn[64];
    long ms;
} slow;

static slow slows[SIM_MAX_FAULTS];
static size_t slow_count;

unsigned sim_popcount(uint32_t v)
{
    unsigned n = 0;
    for (; v != 0; v &= v - 1)
        n++;
    return n;
}

static sim_chip *new_chip(const char *db_name)
{
    if (chip_count == SIM_MAX_CHIPS) {
        fprintf(stderr, "dkperf sim: too many chips\n");
        abort();
    }
    sim_chip *c = &chips[chip_count++];
    c->db_name = db_name;
    const dk__cpu_id *id = dk__cpu_id_by_db(db_name);
    /* The data names no CPU id for M4 Pro/Max or M5: use a placeholder. */
    c->cpu_id = id != NULL ? id->cpu_id : "cpu_100000c_2_0";
    return c;
}

static void add_event(sim_chip *c, const sim_event *ev)
{
    if (c->event_count == sizeof c->events / sizeof c->events[0]) {
        fprintf(stderr, "dkperf sim: too many events for %s\n", c->db_name);
        abort();
    }
    c->events[c->event_count++] = *ev;
}

static void add_apple(const dk__chip *chip, const char *db_name)
{
    sim_chip *c = new_chip(db_name);
    const dk__cpu_id *id = dk__cpu_id_by_db(db_name);
    if (id != NULL)
        snprintf(c->marketing, sizeof c->marketing, "Apple %s", id->marketing);
    else
        snprintf(c->marketing, sizeof c->marketing, "Apple %s (%s)", chip->name, db_name);
    c->architecture = KPEP_ARCH_ARM64;
    c->pmu_version = KPC_PMU_ARM_APPLE;
    c->fixed_bits = chip->fixed_mask;
    c->config_bits = chip->config_mask;
    c->power_bits = chip->power_mask;
    c->fixed_config_words = 0; /* arm64 fixed counters have no config register */
    for (size_t i = 0; i < chip->event_count; i++) {
        const dk_event_def *d = &chip->events[i];
        sim_event ev = {d->name,          d->aliases[0], d->fallback,
                        d->counters_mask, d->number,     d->fixed_counter};
        add_event(c, &ev);
    }
}

/* Intel: three fixed counters (instructions, core cycles, reference
 * cycles; the data names no event for the third) and four programmable
 * ones. kpc counts come from CPUID leaf 0xA (kpc_x86.c); three fixed
 * counters is what architectural PMU v3 parts report. */
static void add_intel(const dk__intel_db *db)
{
    sim_chip *c = new_chip(db->db_name);
    const dk__cpu_id *id = dk__cpu_id_by_db(db->db_name);
    snprintf(c->marketing, sizeof c->marketing, "%s", id != NULL ? id->marketing : db->db_name);
    c->architecture = KPEP_ARCH_X86_64;
    c->pmu_version = KPC_PMU_INTEL_V3;
    c->fixed_bits = 0x7;
    c->config_bits = 0x78;
    c->power_bits = 0;
    c->fixed_config_words = 1; /* IA32_FIXED_CTR_CTRL */
    for (size_t i = 0; i < db->count; i++) {
        const dk__intel_event *e = &db->events[i];
        uint32_t mask = e->fixed_counter >= 0 ? 1u << e->fixed_counter : 0;
        sim_event ev = {e->name, e->alias, e->fallback, mask, e->number, e->fixed_counter};
        add_event(c, &ev);
    }
    /* kpep databases are sorted by name. */
    for (size_t i = 1; i < c->event_count; i++)
        for (size_t j = i; j > 0 && strcmp(c->events[j - 1].name, c->events[j].name) > 0; j--) {
            sim_event t = c->events[j];
            c->events[j] = c->events[j - 1];
            c->events[j - 1] = t;
        }
}

/*
 * A CPU whose database libdkperf has no chip table for: the A13's database
 * exists on iPhones, but its events are not in our data, so the sim gives
 * it the two fixed events only. It exists to exercise the unknown-CPU path.
 */
static void add_unknown_chip(void)
{
    sim_chip *c = new_chip("a13");
    snprintf(c->marketing, sizeof c->marketing, "Apple A13");
    c->architecture = KPEP_ARCH_ARM64;
    c->pmu_version = KPC_PMU_ARM_APPLE;
    c->fixed_bits = 0x3;
    c->config_bits = 0x3fc;
    c->power_bits = 0xe0;
    sim_event cycles = {"FIXED_CYCLES", "Cycles", NULL, 1, 0, 0};
    sim_event insts = {"FIXED_INSTRUCTIONS", "Instructions", NULL, 2, 0, 1};
    add_event(c, &cycles);
    add_event(c, &insts);
}

static bool env_flag(const char *name, bool dflt)
{
    const char *v = getenv(name);
    if (v == NULL || *v == '\0')
        return dflt;
    return strcmp(v, "0") != 0 && strcmp(v, "false") != 0 && strcmp(v, "no") != 0;
}

/* Every function a fault may name: the frameworks' and libsystem's. */
#define SIM__NAME(name) #name,
static const char *const known_functions[] = {
    DK_KPERF_SYMBOLS(SIM__NAME) DK_KPERF_OPTIONAL_SYMBOLS(SIM__NAME)
        DK_KPERFDATA_SYMBOLS(SIM__NAME) "thread_selfcounts",
    "proc_pid_rusage",
    "sysctl",
    "proc_pidinfo",
};
#undef SIM__NAME

#define SIM_KNOWN_COUNT (sizeof known_functions / sizeof known_functions[0])

static bool known_function(const char *fn)
{
    for (size_t i = 0; i < SIM_KNOWN_COUNT; i++)
        if (strcmp(known_functions[i], fn) == 0)
            return true;
    return false;
}

/*
 * DKPERF_SIM_CALLS=FILE: how often each function was called, appended to
 * FILE as "name count" lines when the process exits, so a fault sweep
 * knows how many call indices a sequence has. Only the process that
 * loaded the framework writes (not a forked child that exits).
 */
static char calls_path[4096];
static pid_t calls_pid;
static atomic_ulong call_counts[SIM_KNOWN_COUNT];

static void write_calls(void)
{
    if (calls_path[0] == '\0' || getpid() != calls_pid)
        return;
    char buf[8192];
    size_t len = 0;
    for (size_t i = 0; i < SIM_KNOWN_COUNT; i++) {
        unsigned long n = atomic_load(&call_counts[i]);
        if (n == 0)
            continue;
        int w = snprintf(buf + len, sizeof buf - len, "%s %lu\n", known_functions[i], n);
        if (w < 0 || (size_t)w >= sizeof buf - len)
            break;
        len += (size_t)w;
    }
    if (len == 0)
        return;
    /* One write with O_APPEND: several frameworks share the file. */
    int fd = open(calls_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    ssize_t unused = write(fd, buf, len);
    (void)unused;
    close(fd);
}

static void count_call(const char *fn)
{
    for (size_t i = 0; i < SIM_KNOWN_COUNT; i++)
        if (strcmp(known_functions[i], fn) == 0) {
            atomic_fetch_add(&call_counts[i], 1);
            return;
        }
}

/*
 * The next "fn:value" entry of a comma-separated variable: copies fn into
 * item, checks that it names a known function, advances *spec and returns
 * the value text. A malformed entry aborts, so a typo cannot pass silently.
 */
static const char *next_entry(const char **spec, const char *var, size_t count, char item[128])
{
    const char *end = strchr(*spec, ',');
    size_t len = end != NULL ? (size_t)(end - *spec) : strlen(*spec);
    if (len >= 128 || count == SIM_MAX_FAULTS) {
        fprintf(stderr, "dkperf sim: %s entry too long or too many\n", var);
        abort();
    }
    memcpy(item, *spec, len);
    item[len] = '\0';
    *spec = end != NULL ? end + 1 : NULL;
    char *colon = strchr(item, ':');
    if (colon == NULL) {
        fprintf(stderr, "dkperf sim: %s entry \"%s\" lacks :<value>\n", var, item);
        abort();
    }
    *colon = '\0';
    if (!known_function(item)) {
        fprintf(stderr, "dkperf sim: %s names unknown function \"%s\"\n", var, item);
        abort();
    }
    return colon + 1;
}

static void parse_faults(const char *spec)
{
    while (spec != NULL && *spec != '\0') {
        char item[128], *rest;
        const char *value = next_entry(&spec, "DKPERF_SIM_FAIL", fault_count, item);
        fault *f = &faults[fault_count++];
        snprintf(f->fn, sizeof f->fn, "%.63s", item);
        f->code = (int)strtol(value, &rest, 0);
        if (*rest == '@') {
            f->nth = strtoul(rest + 1, &rest, 10);
            if (*rest == '+') {
                f->and_later = true;
                rest++;
            }
        }
        if (*rest != '\0' || rest == value) {
            fprintf(stderr, "dkperf sim: cannot parse DKPERF_SIM_FAIL entry for %s\n", item);
            abort();
        }
        atomic_init(&f->calls, 0);
    }
}

static void parse_slows(const char *spec)
{
    while (spec != NULL && *spec != '\0') {
        char item[128], *rest;
        const char *value = next_entry(&spec, "DKPERF_SIM_SLOW", slow_count, item);
        slow *w = &slows[slow_count++];
        snprintf(w->fn, sizeof w->fn, "%.63s", item);
        w->ms = strtol(value, &rest, 10);
        if (*rest != '\0' || rest == value || w->ms < 0) {
            fprintf(stderr, "dkperf sim: DKPERF_SIM_SLOW entry for %s is not fn:ms\n", item);
            abort();
        }
    }
}

static const sim_chip *find_chip(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < chip_count; i++)
        if (strcmp(chips[i].db_name, name) == 0 || strcmp(chips[i].cpu_id, name) == 0)
            return &chips[i];
    return NULL;
}

static void init(void)
{
    size_t n;
    const dk__chip *all = dk__chips_all(&n);
    for (size_t i = 0; i < n; i++)
        for (const char *const *db = all[i].db_names; *db != NULL; db++)
            add_apple(&all[i], *db);
    const dk__intel_db *intel = dk__intel_dbs_all(&n);
    for (size_t i = 0; i < n; i++)
        add_intel(&intel[i]);
    add_unknown_chip();

    const char *cpu = getenv("DKPERF_SIM_CPU");
    current = find_chip(cpu != NULL && *cpu != '\0' ? cpu : "a14");
    env_privileged = env_flag("DKPERF_SIM_PRIVILEGED", true);
    env_busy = env_flag("DKPERF_SIM_BUSY", false);
    env_force_all = env_flag("DKPERF_SIM_FORCE_ALL", false) ? 1 : 0;
    parse_faults(getenv("DKPERF_SIM_FAIL"));
    parse_slows(getenv("DKPERF_SIM_SLOW"));
    const char *calls = getenv("DKPERF_SIM_CALLS");
    if (calls != NULL && *calls != '\0' && strlen(calls) < sizeof calls_path) {
        memcpy(calls_path, calls, strlen(calls) + 1);
        calls_pid = getpid();
        atexit(write_calls);
    }
}

static void ensure_init(void) { pthread_once(&init_once, init); }

/* P and E cores per kpep database (README.md says where each comes from). */
static const struct {
    const char *db;
    unsigned p, e;
} chip_layouts[] = {
    {"a14", 4, 4},    /* M1 */
    {"a15", 4, 4},    /* M2 */
    {"a16", 2, 4},    /* A16 */
    {"as1", 4, 4},    /* M3 */
    {"as2", 2, 4},    /* A17 Pro */
    {"as3", 6, 6},    /* M3 Pro (the database also serves M3 Max) */
    {"as4", 4, 6},    /* M4 */
    {"as4-1", 10, 4}, /* guess: M4 Pro */
    {"as4-2", 12, 4}, /* guess: M4 Max */
    {"as5", 4, 6},    /* M5 */
    {"as5-2", 10, 4}, /* guess */
    {"a13", 2, 4},    /* A13 */
};

static sim_layout layout;
static pthread_once_t layout_once = PTHREAD_ONCE_INIT;

static void init_layout(void)
{
    const sim_chip *c = sim_current_chip();
    unsigned p = 4, e = 0, smt = 1;
    if (c != NULL && c->architecture == KPEP_ARCH_X86_64) {
        p = 8; /* guess: a four-core Intel Mac with Hyper-Threading */
        smt = 2;
    } else if (c != NULL) {
        for (size_t i = 0; i < sizeof chip_layouts / sizeof chip_layouts[0]; i++)
            if (strcmp(chip_layouts[i].db, c->db_name) == 0) {
                p = chip_layouts[i].p;
                e = chip_layouts[i].e;
            }
    }
    /* DKPERF_SIM_NCPU: a machine of that many CPUs, the chip's P:E shares
     * kept (a server-sized Mac, to exercise many CPUs; not a real chip). */
    const char *nv = getenv("DKPERF_SIM_NCPU");
    if (nv != NULL && *nv != '\0') {
        char *end;
        errno = 0;
        long n = strtol(nv, &end, 10);
        if (errno != 0 || *end != '\0' || n < 1 || n > SIM_NCPU_MAX) {
            fprintf(stderr, "dkperf sim: DKPERF_SIM_NCPU=%s: not a count from 1 to %d\n", nv,
                    SIM_NCPU_MAX);
            abort();
        }
        unsigned want = (unsigned)n;
        unsigned np = e > 0 && want > 1 ? want * p / (p + e) : want;
        if (e > 0 && want > 1 && np == 0)
            np = 1;
        e = want - np;
        p = np;
    }
    unsigned ncpu = p + e;
    unsigned levels = e > 0 ? 2 : 1;
    const char *v = getenv("DKPERF_SIM_PERFLEVELS");
    if (v != NULL && *v != '\0') {
        int n = atoi(v);
        levels = n < 1 ? 1 : n > SIM_LEVELS_MAX ? SIM_LEVELS_MAX : (unsigned)n;
    }
    layout.levels = levels;
    layout.ncpu = ncpu;
    if (levels == 2 && e > 0) {
        layout.logical[0] = p;
        layout.logical[1] = e;
    } else {
        /* One level, or a forced count: the CPUs in near-equal shares. */
        for (unsigned l = 0; l < levels; l++)
            layout.logical[l] = ncpu / levels + (l < ncpu % levels ? 1 : 0);
    }
    for (unsigned l = 0; l < levels; l++)
        layout.physical[l] = layout.logical[l] / smt > 0 ? layout.logical[l] / smt : 1;
}

const sim_layout *sim_cpu_layout(void)
{
    pthread_once(&layout_once, init_layout);
    return &layout;
}

unsigned sim_cpu_level(const sim_layout *l, unsigned cpu)
{
    unsigned first = 0;
    for (unsigned k = l->levels; k-- > 0;) {
        if (cpu < first + l->logical[k])
            return k;
        first += l->logical[k];
    }
    return 0;
}

const sim_chip *sim_chip_named(const char *name)
{
    ensure_init();
    return find_chip(name);
}

const sim_chip *sim_current_chip(void)
{
    ensure_init();
    return current;
}

const sim_event *sim_event_by_number(const sim_chip *chip, unsigned number)
{
    for (size_t i = 0; chip != NULL && i < chip->event_count; i++)
        if (chip->events[i].fixed_counter < 0 && chip->events[i].number == number)
            return &chip->events[i];
    return NULL;
}

bool sim_privileged(void)
{
    ensure_init();
    return env_privileged;
}

bool sim_busy(void)
{
    ensure_init();
    return env_busy;
}

int sim_initial_force_all(void)
{
    ensure_init();
    return env_force_all;
}

bool sim_fault(const char *fn, int *code)
{
    ensure_init();
    if (calls_path[0] != '\0')
        count_call(fn);
    for (size_t i = 0; i < slow_count; i++) {
        if (strcmp(slows[i].fn, fn) != 0)
            continue;
        struct timespec ts = {slows[i].ms / 1000, (slows[i].ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    for (size_t i = 0; i < fault_count; i++) {
        fault *f = &faults[i];
        if (strcmp(f->fn, fn) != 0)
            continue;
        unsigned long call = atomic_fetch_add(&f->calls, 1) + 1;
        if (f->nth == 0 || call == f->nth || (f->and_later && call > f->nth)) {
            *code = f->code;
            return true;
        }
    }
    return false;
}
