/*
 * perf_event.c - the Linux backend: perf_event_open(2).
 *
 * A thread sampler is one event group on the calling thread, read with
 * PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID; counts
 * are scaled when the kernel time-shared the counters. Hybrid CPUs (several
 * core PMUs) get one instance of each generic hardware event per core PMU,
 * grouped per PMU, and the instances are summed. When every counter of a
 * group can be read from userspace (rdpmc), reads skip the system call.
 *
 * Events: perf's generic hardware, cache and software names, the events
 * sysfs lists for per-task PMUs, raw "rNNNN", and "pmu/term=value,.../".
 */
#include "core.h"

#ifdef __linux__

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend/perf_event.h"
#include "backend/perf_mmap.h"

#define SYSFS_DEVICES "/sys/bus/event_source/devices"
#define CORE_PMUS_MAX 4
#define INSTANCES_MAX (DK_MAX_EVENTS * CORE_PMUS_MAX)
#define GROUPS_MAX INSTANCES_MAX /* a group per counter when the kernel will not group them */

/* Events resolved from raw or pmu/.../ syntax, kept until the sampler goes:
 * one per distinct spec, so that resolving the same names again and again
 * (a thread sampler opened per measurement) keeps memory flat. */
typedef struct pe_dynamic {
    struct pe_dynamic *next;
    dk_database_event pub;
    pe_def def;
    char text[]; /* name, then description */
} pe_dynamic;

typedef struct session {
    pe_def *defs;               /* parallel to s->db.events */
    char **owned;               /* strings the database view points into */
    size_t owned_count, owned_cap;
    pe_dynamic *dynamic;
    size_t dynamic_count;
    pthread_mutex_t lock;       /* guards dynamic and dynamic_count */
    bool exclude_kernel;
    int paranoid;
    uint32_t core_types[CORE_PMUS_MAX];
    char core_names[CORE_PMUS_MAX][64];
    size_t core_count;          /* > 1: hybrid */
    dk__pmc_probe pmc;          /* user reads, counters per group */
    char sysfs[256];
    char cpu_id[64];
    char marketing[128];
    char pmu_text[160];
    char privilege_text[256];
} session;

/* One opened counter. */
typedef struct pe_counter {
    int fd;
    uint64_t id;
    size_t event;   /* caller's index */
    size_t group;
    struct perf_event_mmap_page *page; /* for userspace reads; NULL when none */
} pe_counter;

typedef struct pe_group {
    int leader_fd;
    size_t first, count; /* counters[first .. first + count) */
} pe_group;

typedef struct pe_thread {
    pe_counter counters[INSTANCES_MAX];
    size_t ncounters;
    pe_group groups[GROUPS_MAX];
    size_t ngroups;
    const dk__pmc_ops *pmc;    /* userspace reads for a single all-hardware group */
    bool simple;               /* one group whose counters are the events, in order */
    size_t simple_size;        /* bytes of its read() */
    uint64_t buf[3 + 2 * INSTANCES_MAX];
} pe_thread;

/* ------------------------------------------------------------------------ */
/* Generic events                                                            */
/* ------------------------------------------------------------------------ */

typedef struct generic {
    const char *name;
    const char *alias;
    uint32_t type;
    uint64_t config;
    const char *description;
    const char *unit;
} generic;

#define CACHE(id, op, res) \
    ((uint64_t)(id) | (uint64_t)(op) << 8 | (uint64_t)(res) << 16)

static const generic generics[] = {
    {"cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "core clock cycles", NULL},
    {"instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "retired instructions",
     NULL},
    {"cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
     "last-level cache accesses", NULL},
    {"cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
     "last-level cache misses", NULL},
    {"branch-instructions", "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
     "retired branch instructions", NULL},
    {"branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
     "mispredicted branches", NULL},
    {"bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus cycles", NULL},
    {"stalled-cycles-frontend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
     "cycles the front end stalled", NULL},
    {"stalled-cycles-backend", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
     "cycles the back end stalled", NULL},
    {"ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES,
     "reference cycles (not scaled by frequency)", NULL},
    {"cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "CPU clock, in ns", "ns"},
    {"task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
     "CPU time of the counted threads, in ns", "ns"},
    {"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page faults", NULL},
    {"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
     "context switches", NULL},
    {"cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
     "moves to another CPU", NULL},
    {"minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,
     "page faults served without I/O", NULL},
    {"major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
     "page faults that needed I/O", NULL},
    {"alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS,
     "alignment faults fixed up by the kernel", NULL},
    {"emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS,
     "instructions emulated by the kernel", NULL},
    {"L1-dcache-loads", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS),
     "L1 data cache loads", NULL},
    {"L1-dcache-load-misses", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS),
     "L1 data cache load misses", NULL},
    {"L1-dcache-stores", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_WRITE, PERF_COUNT_HW_CACHE_RESULT_ACCESS),
     "L1 data cache stores", NULL},
    {"L1-icache-load-misses", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS),
     "L1 instruction cache misses", NULL},
    {"LLC-loads", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS),
     "last-level cache loads", NULL},
    {"LLC-load-misses", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS),
     "last-level cache load misses", NULL},
    {"dTLB-loads", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS),
     "data TLB loads", NULL},
    {"dTLB-load-misses", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS),
     "data TLB load misses", NULL},
    {"iTLB-load-misses", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_ITLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS),
     "instruction TLB misses", NULL},
    {"branch-loads", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_BPU, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS),
     "branch predictor lookups", NULL},
    {"branch-load-misses", NULL, PERF_TYPE_HW_CACHE,
     CACHE(PERF_COUNT_HW_CACHE_BPU, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS),
     "branch predictor misses", NULL},
};

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

static int perf_open(struct perf_event_attr *attr, int group_fd)
{
    return (int)syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1 /* any CPU */,
                        group_fd, PERF_FLAG_FD_CLOEXEC);
}

static char *own(session *k, const char *text)
{
    if (k->owned_count == k->owned_cap) {
        size_t cap = k->owned_cap ? k->owned_cap * 2 : 64;
        char **grown = realloc(k->owned, cap * sizeof *grown);
        if (grown == NULL)
            return NULL;
        k->owned = grown;
        k->owned_cap = cap;
    }
    char *copy = strdup(text);
    if (copy != NULL)
        k->owned[k->owned_count++] = copy;
    return copy;
}

/* Read a small sysfs or procfs file, trailing newline removed. */
static int read_text(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return 0;
}

static bool file_exists(const char *path) { return access(path, F_OK) == 0; }

/* snprintf for paths and names: returns -1 instead of truncating. */
static int pathf(char *buf, size_t size, const char *fmt, ...) DK__PRINTF(3, 4);
static int pathf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* A decimal number of at most max from *p, digits only (no sign, no
 * space); *p moves past it. Kernel files are input like any other. */
static bool parse_decimal(const char **p, uint64_t max, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *p = s;
    *out = v;
    return true;
}

/* A PMU's type file: one decimal number that fits perf_event_attr.type. */
static bool parse_type(const char *text, uint32_t *type)
{
    uint64_t v;
    if (!parse_decimal(&text, UINT32_MAX, &v) || *text != '\0')
        return false;
    *type = (uint32_t)v;
    return true;
}

int dk__perf_parse_cpu_list(const char *text, int *cpus, size_t max, size_t *count)
{
    const char *p = text;
    size_t n = 0;
    uint64_t next = 0; /* lists are ascending: no CPU twice */
    *count = 0;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (*p == '\0')
        return dk__fail(DK_EINVAL, "the CPU list is empty");
    for (;;) {
        uint64_t lo, hi;
        const char *at = p;
        if (!parse_decimal(&p, DK__PE_CPU_MAX, &lo))
            return dk__fail(DK_EINVAL, "the CPU list has \"%.16s\" where a CPU number (0 to %d) "
                                       "belongs",
                            at, DK__PE_CPU_MAX);
        hi = lo;
        if (*p == '-') {
            p++;
            at = p;
            if (!parse_decimal(&p, DK__PE_CPU_MAX, &hi))
                return dk__fail(DK_EINVAL, "the CPU list has \"%.16s\" where the end of a range "
                                           "(0 to %d) belongs",
                                at, DK__PE_CPU_MAX);
        }
        if (hi < lo || lo < next)
            return dk__fail(DK_EINVAL, "the CPU list is not ascending at %llu-%llu",
                            (unsigned long long)lo, (unsigned long long)hi);
        if (hi - lo + 1 > max - n)
            return dk__fail(DK_EINVAL, "the CPU list names more than %zu CPUs", max);
        for (uint64_t c = lo; c <= hi; c++)
            cpus[n++] = (int)c;
        next = hi + 1;
        if (*p == ',') {
            p++;
            continue;
        }
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        if (*p != '\0')
            return dk__fail(DK_EINVAL, "the CPU list has \"%.16s\" after %llu", p,
                            (unsigned long long)hi);
        break;
    }
    *count = n;
    return 0;
}

static bool is_core_pmu(const char *name)
{
    return strcmp(name, "cpu") == 0 || strncmp(name, "cpu_", 4) == 0 ||
           strncmp(name, "armv8", 5) == 0 || strncmp(name, "armv9", 5) == 0;
}

static bool hardware_type(const session *k, uint32_t type);

/* Some PMUs (msr, for one) refuse every exclusion bit: ask only for what is
 * needed, and leave the hypervisor out only where hardware counts it. */
static void apply_exclusions(const session *k, struct perf_event_attr *attr, int exclude)
{
    attr->exclude_hv = hardware_type(k, attr->type);
    attr->exclude_kernel = k->exclude_kernel || exclude == 'u';
    attr->exclude_user = exclude == 'k';
}

/* Open and close an event to learn whether it can be counted here. */
static bool probe(const session *k, const pe_def *def)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = def->type;
    attr.config = def->config;
    attr.config1 = def->config1;
    attr.config2 = def->config2;
    attr.disabled = 1;
    apply_exclusions(k, &attr, def->exclude);
    if (def->generic && k->core_count > 1)
        attr.config |= (uint64_t)k->core_types[0] << PERF_PMU_TYPE_SHIFT;
    int fd = perf_open(&attr, -1);
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

/* ------------------------------------------------------------------------ */
/* pmu/term=value,.../ and rNNNN                                              */
/* ------------------------------------------------------------------------ */

/* Put value into the bits a sysfs format spec ("config:0-7,32-35") names. */
int dk__pe_apply_format(pe_def *def, const char *spec, uint64_t value)
{
    const char *colon = strchr(spec, ':');
    if (colon == NULL)
        return -1;
    uint64_t *field;
    size_t flen = (size_t)(colon - spec);
    if (flen == 6 && strncmp(spec, "config", 6) == 0)
        field = &def->config;
    else if (flen == 7 && strncmp(spec, "config1", 7) == 0)
        field = &def->config1;
    else if (flen == 7 && strncmp(spec, "config2", 7) == 0)
        field = &def->config2;
    else
        return -1;
    const char *p = colon + 1;
    unsigned used = 0; /* bits of value placed so far */
    if (*p == '\0')
        return -1;
    while (*p != '\0') {
        uint64_t lo, hi;
        if (!parse_decimal(&p, 63, &lo))
            return -1;
        hi = lo;
        if (*p == '-' && (p++, !parse_decimal(&p, 63, &hi)))
            return -1;
        if (hi < lo)
            return -1;
        for (uint64_t b = lo; b <= hi; b++, used++)
            if (used < 64 && (value >> used & 1))
                *field |= (uint64_t)1 << b;
        if (*p == ',' && p[1] != '\0')
            p++;
        else if (*p != '\0')
            return -1;
    }
    if (used < 64 && (value >> used) != 0)
        return -2; /* the value does not fit the field */
    return 0;
}

static int parse_terms(const char *sysfs, const char *pmu, char *terms, pe_def *def,
                       const char *whole, int depth);

/* One term of a pmu/.../ event. */
static int parse_term(const char *sysfs, const char *pmu, char *term, pe_def *def,
                      const char *whole, int depth)
{
    char path[512], spec[256];
    char *eq = strchr(term, '=');
    uint64_t value = 1;
    if (eq != NULL) {
        *eq = '\0';
        char *end;
        errno = 0;
        value = strtoull(eq + 1, &end, 0);
        if (errno != 0 || end == eq + 1 || *end != '\0' || eq[1] < '0' || eq[1] > '9')
            return dk__fail(DK_EINVAL, "event %s: \"%s\" is not a number", whole, eq + 1);
    }
    if (term[0] == '\0' || term[0] == '.' || strchr(term, '/') != NULL)
        return dk__fail(DK_EINVAL, "event %s: \"%s\" is not a term name", whole, term);
    if (strcmp(term, "config") == 0)
        def->config = value;
    else if (strcmp(term, "config1") == 0)
        def->config1 = value;
    else if (strcmp(term, "config2") == 0)
        def->config2 = value;
    else if (strcmp(term, "name") == 0)
        ; /* a label only */
    else {
        if (pathf(path, sizeof path, "%s/%s/format/%s", sysfs, pmu, term) == 0 &&
            read_text(path, spec, sizeof spec) == 0) {
            int rc = dk__pe_apply_format(def, spec, value);
            if (rc == -2)
                return dk__fail(DK_EINVAL, "event %s: %s=0x%llx does not fit %s", whole, term,
                                (unsigned long long)value, spec);
            if (rc != 0)
                return dk__fail(DK_EINVAL, "event %s: cannot use the format \"%s\" of %s", whole,
                                spec, term);
            return 0;
        }
        /* A named event of the PMU stands for its definition. */
        if (eq == NULL && depth == 0 &&
            pathf(path, sizeof path, "%s/%s/events/%s", sysfs, pmu, term) == 0 &&
            read_text(path, spec, sizeof spec) == 0)
            return parse_terms(sysfs, pmu, spec, def, whole, depth + 1);
        return dk__fail(DK_ENOEVENT, "event %s: PMU %s has no format term or event called %s",
                        whole, pmu, term);
    }
    return 0;
}

static int parse_terms(const char *sysfs, const char *pmu, char *terms, pe_def *def,
                       const char *whole, int depth)
{
    char *save = NULL;
    for (char *term = strtok_r(terms, ",", &save); term != NULL; term = strtok_r(NULL, ",", &save)) {
        while (*term == ' ')
            term++;
        if (*term == '\0')
            continue;
        int rc = parse_term(sysfs, pmu, term, def, whole, depth);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* "pmu/terms/[modifiers]" into def; DK__NOT_MINE when name is not of that form. */
static int parse_pmu_event(const char *sysfs, const char *name, pe_def *def)
{
    const char *slash = strchr(name, '/');
    const char *last = strrchr(name, '/');
    if (slash == NULL || slash == name || last == slash)
        return DK__NOT_MINE;
    char pmu[64], terms[256], path[512], type[32];
    size_t plen = (size_t)(slash - name), tlen = (size_t)(last - slash - 1);
    if (plen >= sizeof pmu || tlen >= sizeof terms)
        return dk__fail(DK_EINVAL, "event %s is too long", name);
    memcpy(pmu, name, plen);
    pmu[plen] = '\0';
    if (pmu[0] == '.')
        return dk__fail(DK_EINVAL, "event %s: \"%s\" is not a PMU name", name, pmu);
    memcpy(terms, slash + 1, tlen);
    terms[tlen] = '\0';
    if (pathf(path, sizeof path, "%s/%s/type", sysfs, pmu) != 0 ||
        read_text(path, type, sizeof type) != 0)
        return dk__fail(DK_ENOEVENT, "event %s: there is no PMU called %s (see %s)", name, pmu,
                        sysfs);
    memset(def, 0, sizeof *def);
    if (!parse_type(type, &def->type))
        return dk__fail(DK_EINVAL, "event %s: %s holds \"%.32s\", not a PMU type number", name,
                        path, type);
    for (const char *m = last + 1; *m != '\0'; m++) {
        if (*m != 'u' && *m != 'k')
            return dk__fail(DK_EINVAL, "event %s: unknown modifier '%c' (u: user, k: kernel)",
                            name, *m);
        def->exclude = *m;
    }
    return parse_terms(sysfs, pmu, terms, def, name, 0);
}

int dk__pe_parse_terms(const char *sysfs, const char *pmu, const char *terms, const char *whole,
                       pe_def *def)
{
    char buf[256];
    if (strlen(terms) >= sizeof buf)
        return dk__fail(DK_EINVAL, "event %s: its terms are longer than %zu bytes", whole,
                        sizeof buf - 1);
    if (pmu[0] == '\0' || pmu[0] == '.' || strchr(pmu, '/') != NULL)
        return dk__fail(DK_EINVAL, "event %s: \"%s\" is not a PMU name", whole, pmu);
    memcpy(buf, terms, strlen(terms) + 1);
    return parse_terms(sysfs, pmu, buf, def, whole, 0);
}

int dk__pe_parse_raw(const char *name, pe_def *def)
{
    if (name[0] != 'r' || name[1] == '\0')
        return DK__NOT_MINE;
    for (const char *p = name + 1; *p != '\0'; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
            return DK__NOT_MINE;
    if (strlen(name + 1) > 16)
        return dk__fail(DK_EINVAL, "raw event %s has more than 64 bits", name);
    memset(def, 0, sizeof *def);
    def->type = PERF_TYPE_RAW;
    for (const char *p = name + 1; *p != '\0'; p++)
        def->config = def->config << 4 |
                      (uint64_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
    return 0;
}

int dk__pe_parse(const char *sysfs, const char *name, pe_def *def)
{
    int rc = dk__pe_parse_raw(name, def);
    if (rc == DK__NOT_MINE)
        rc = parse_pmu_event(sysfs, name, def);
    return rc;
}

static int pe_resolve(dk_sampler *s, const char *name, const dk_database_event **out)
{
    session *k = s->impl;
    pe_def def;
    int rc = dk__pe_parse(k->sysfs, name, &def);
    if (rc != 0)
        return rc;
    pthread_mutex_lock(&k->lock);
    for (pe_dynamic *d = k->dynamic; d != NULL; d = d->next)
        if (strcmp(d->text, name) == 0) {
            pthread_mutex_unlock(&k->lock);
            *out = &d->pub;
            return 0;
        }
    pthread_mutex_unlock(&k->lock);
    size_t len = strlen(name);
    pe_dynamic *d = calloc(1, sizeof *d + 2 * len + 32);
    if (d == NULL)
        return dk__fail(DK_ENOMEM, "event %s: out of memory", name);
    memcpy(d->text, name, len + 1);
    char *desc = d->text + len + 1;
    snprintf(desc, len + 31, "%s", def.type == PERF_TYPE_RAW ? "raw event" : name);
    d->def = def;
    d->pub.name = d->text;
    d->pub.description = desc;
    d->pub.source = def.type == PERF_TYPE_RAW ? "raw" : "sysfs";
    d->pub.supported = true;
    pthread_mutex_lock(&k->lock);
    /* Another thread may have added the same spec meanwhile. */
    for (pe_dynamic *o = k->dynamic; o != NULL; o = o->next)
        if (strcmp(o->text, name) == 0) {
            pthread_mutex_unlock(&k->lock);
            free(d);
            *out = &o->pub;
            return 0;
        }
    d->next = k->dynamic;
    k->dynamic = d;
    k->dynamic_count++;
    pthread_mutex_unlock(&k->lock);
    *out = &d->pub;
    return 0;
}

size_t dk__pe_dynamic_count(const dk_sampler *s)
{
    session *k = s->impl;
    pthread_mutex_lock(&k->lock);
    size_t n = k->dynamic_count;
    pthread_mutex_unlock(&k->lock);
    return n;
}

/* How to open an event of the thread sampler. */
static const pe_def *def_of(const dk_sampler *s, const dk_database_event *ev)
{
    const session *k = s->impl;
    if (ev >= s->db.events && ev < s->db.events + s->db.event_count)
        return &k->defs[ev - s->db.events];
    const pe_dynamic *d = (const pe_dynamic *)((const char *)ev - offsetof(pe_dynamic, pub));
    return &d->def;
}

/* How to open an event with the modifiers it was given (DK__MODE_*): they
 * override a pmu/.../u or /k suffix. */
static int def_with_mode(const dk_sampler *s, const dk_database_event *ev, unsigned mode,
                         const char *label, pe_def *out)
{
    const session *k = s->impl;
    *out = *def_of(s, ev);
    if (mode == 0)
        return 0;
    if ((mode & DK__MODE_KERNEL) && k->exclude_kernel)
        return dk__fail(DK_EPERM,
                        "event %s counts kernel mode, which kernel.perf_event_paranoid %d allows "
                        "only with CAP_PERFMON (or a paranoid level of 1 or below); drop the :k",
                        label, k->paranoid);
    out->exclude = mode == DK__MODE_USER ? 'u' : mode == DK__MODE_KERNEL ? 'k' : 0;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Session                                                                   */
/* ------------------------------------------------------------------------ */

static void find_core_pmus(session *k)
{
    DIR *dir = opendir(k->sysfs);
    if (dir == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL && k->core_count < CORE_PMUS_MAX) {
        if (de->d_name[0] == '.' || !is_core_pmu(de->d_name))
            continue;
        char path[512], type[32];
        if (pathf(path, sizeof path, "%s/%s/type", k->sysfs, de->d_name) != 0 ||
            read_text(path, type, sizeof type) != 0)
            continue;
        if (parse_type(type, &k->core_types[k->core_count])) {
            snprintf(k->core_names[k->core_count], sizeof k->core_names[0], "%.63s", de->d_name);
            k->core_count++;
        }
    }
    closedir(dir);
    /* A stable order: by PMU type. */
    for (size_t i = 1; i < k->core_count; i++)
        for (size_t j = i; j > 0 && k->core_types[j - 1] > k->core_types[j]; j--) {
            uint32_t t = k->core_types[j];
            k->core_types[j] = k->core_types[j - 1];
            k->core_types[j - 1] = t;
            char name[sizeof k->core_names[0]];
            memcpy(name, k->core_names[j], sizeof name);
            memcpy(k->core_names[j], k->core_names[j - 1], sizeof name);
            memcpy(k->core_names[j - 1], name, sizeof name);
        }
}

static void describe_cpu(session *k, dk_sampler *s)
{
    char line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    char vendor[64] = "", family[16] = "", model[16] = "";
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        char *value = colon + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        value[strcspn(value, "\n")] = '\0';
        if (strncmp(line, "model name", 10) == 0 && k->marketing[0] == '\0')
            snprintf(k->marketing, sizeof k->marketing, "%s", value);
        else if (strncmp(line, "vendor_id", 9) == 0 && vendor[0] == '\0')
            snprintf(vendor, sizeof vendor, "%s", value);
        else if (strncmp(line, "cpu family", 10) == 0 && family[0] == '\0')
            snprintf(family, sizeof family, "%s", value);
        else if (strncmp(line, "model\t", 6) == 0 && model[0] == '\0')
            snprintf(model, sizeof model, "%s", value);
        else if (strncmp(line, "CPU implementer", 15) == 0 && vendor[0] == '\0')
            snprintf(vendor, sizeof vendor, "%s", value);
        else if (strncmp(line, "CPU part", 8) == 0 && model[0] == '\0')
            snprintf(model, sizeof model, "%s", value);
    }
    if (f != NULL)
        fclose(f);
    if (vendor[0] != '\0')
        (void)pathf(k->cpu_id, sizeof k->cpu_id, "%s%s%s%s%s", vendor, family[0] ? "-" : "",
                    family, model[0] ? "-" : "", model);
    struct utsname u;
    if (uname(&u) == 0) {
        if (strcmp(u.machine, "x86_64") == 0)
            s->db.arch = DK_ARCH_X86_64;
        else if (strcmp(u.machine, "aarch64") == 0 || strcmp(u.machine, "arm64") == 0)
            s->db.arch = DK_ARCH_ARM64;
        if (k->marketing[0] == '\0')
            snprintf(k->marketing, sizeof k->marketing, "%s", u.machine);
    }
}

typedef struct builder {
    dk_database_event *events;
    pe_def *defs;
    size_t count, cap;
} builder;

static int add_event(builder *b, const dk_database_event *ev, const pe_def *def)
{
    if (b->count == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        dk_database_event *e = realloc(b->events, cap * sizeof *e);
        if (e == NULL)
            return -1;
        b->events = e;
        pe_def *d = realloc(b->defs, cap * sizeof *d);
        if (d == NULL)
            return -1;
        b->defs = d;
        b->cap = cap;
    }
    b->events[b->count] = *ev;
    b->defs[b->count] = *def;
    b->count++;
    return 0;
}

/* The events sysfs lists for PMUs that count per task (no cpumask). */
static int add_sysfs_events(session *k, builder *b)
{
    DIR *dir = opendir(k->sysfs);
    if (dir == NULL)
        return 0;
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(dir)) != NULL) {
        char path[512];
        if (de->d_name[0] == '.')
            continue;
        if (pathf(path, sizeof path, "%s/%s/cpumask", k->sysfs, de->d_name) != 0 ||
            file_exists(path))
            continue; /* uncore and other per-CPU PMUs */
        if (pathf(path, sizeof path, "%s/%s/events", k->sysfs, de->d_name) != 0)
            continue;
        DIR *events = opendir(path);
        if (events == NULL)
            continue;
        struct dirent *ee;
        while (rc == 0 && (ee = readdir(events)) != NULL) {
            if (ee->d_name[0] == '.' || strchr(ee->d_name, '.') != NULL)
                continue; /* .unit, .scale and friends */
            char name[256], definition[256], file[768], unit[32] = "";
            if (pathf(name, sizeof name, "%s/%s/", de->d_name, ee->d_name) != 0 ||
                pathf(file, sizeof file, "%s/%s", path, ee->d_name) != 0 ||
                read_text(file, definition, sizeof definition) != 0)
                continue;
            if (pathf(file, sizeof file, "%s/%s.unit", path, ee->d_name) == 0)
                (void)read_text(file, unit, sizeof unit);
            pe_def def;
            if (parse_pmu_event(k->sysfs, name, &def) != 0)
                continue;
            dk_database_event ev = {0};
            ev.name = own(k, name);
            ev.description = own(k, definition);
            ev.source = own(k, de->d_name);
            ev.unit = unit[0] ? own(k, unit) : NULL;
            ev.supported = probe(k, &def);
            if (ev.name == NULL || ev.description == NULL || ev.source == NULL ||
                add_event(b, &ev, &def) != 0)
                rc = dk__fail(DK_ENOMEM, "listing the sysfs events: out of memory");
        }
        closedir(events);
    }
    closedir(dir);
    return rc;
}

static void free_session(session *k)
{
    if (k == NULL)
        return;
    for (size_t i = 0; i < k->owned_count; i++)
        free(k->owned[i]);
    free(k->owned);
    while (k->dynamic != NULL) {
        pe_dynamic *next = k->dynamic->next;
        free(k->dynamic);
        k->dynamic = next;
    }
    free(k->defs);
    pthread_mutex_destroy(&k->lock);
    free(k);
}

/* The PMU and privilege sentences of the capabilities. */
static void describe_pmus(session *k)
{
    if (k->core_count == 0)
        snprintf(k->pmu_text, sizeof k->pmu_text,
                 "no hardware PMU visible (software events only)");
    else if (k->core_count == 1 && k->pmc.counters > k->pmc.general)
        snprintf(k->pmu_text, sizeof k->pmu_text,
                 "%.63s (perf_event): %zu general counters and %zu for cycles only",
                 k->core_names[0], k->pmc.general, k->pmc.counters - k->pmc.general);
    else if (k->core_count == 1 && k->pmc.counters > 0)
        snprintf(k->pmu_text, sizeof k->pmu_text, "%.63s (perf_event): %zu counters",
                 k->core_names[0], k->pmc.counters);
    else if (k->core_count == 1)
        snprintf(k->pmu_text, sizeof k->pmu_text, "%.63s (perf_event): counters unknown",
                 k->core_names[0]);
    else
        snprintf(k->pmu_text, sizeof k->pmu_text, "%.40s+%.40s%s (perf_event, hybrid): counters unknown",
                 k->core_names[0], k->core_names[1], k->core_count > 2 ? "+..." : "");
    if (geteuid() == 0)
        snprintf(k->privilege_text, sizeof k->privilege_text,
                 "root: every event, user and kernel mode, per thread, per process and on every "
                 "CPU");
    else
        snprintf(k->privilege_text, sizeof k->privilege_text,
                 "not root, kernel.perf_event_paranoid %d: %s", k->paranoid,
                 k->paranoid >= 3   ? "no counting at all for unprivileged users"
                 : k->paranoid == 2 ? "user mode of own threads and processes only"
                 : k->paranoid == 1 ? "own threads and processes, user and kernel mode"
                                    : "own threads and processes, and every CPU");
}

static int pe_open(dk_sampler *s, const dk_sampler_options *opts)
{
    (void)opts;
    session *k = calloc(1, sizeof *k);
    if (k == NULL)
        return dk__fail(DK_ENOMEM, "opening the perf_event backend: out of memory");
    pthread_mutex_init(&k->lock, NULL);
    const char *sysfs = getenv("DKPERF_SYSFS_EVENT_SOURCE");
    snprintf(k->sysfs, sizeof k->sysfs, "%s", sysfs != NULL && *sysfs ? sysfs : SYSFS_DEVICES);

    char text[32];
    k->paranoid = read_text("/proc/sys/kernel/perf_event_paranoid", text, sizeof text) == 0
                      ? atoi(text)
                      : 2;
    /* Above 1, unprivileged users may only count user mode. */
    k->exclude_kernel = (s->flags & DK_SAMPLER_USER_ONLY) || (k->paranoid > 1 && geteuid() != 0);

    /* Is perf_event_open there at all? A software event always exists. */
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.disabled = 1;
    attr.exclude_kernel = k->exclude_kernel;
    attr.exclude_hv = 1;
    int fd = perf_open(&attr, -1);
    if (fd < 0) {
        int e = errno, paranoid = k->paranoid;
        free_session(k);
        if (e == EACCES || e == EPERM)
            return dk__fail_os(DK_EPERM, e,
                               "perf_event_open is refused (kernel.perf_event_paranoid is %d): "
                               "counting needs CAP_PERFMON or a lower perf_event_paranoid",
                               paranoid);
        return dk__fail_os(e == ENOSYS ? DK_ENOTSUP : DK_EOS, e, "perf_event_open is unavailable");
    }
    close(fd);

    s->impl = k;
    find_core_pmus(k);
    describe_cpu(k, s);
    builder b = {0};
    int rc = 0;
    for (size_t i = 0; i < DK__COUNT_OF(generics) && rc == 0; i++) {
        const generic *g = &generics[i];
        pe_def def = {.type = g->type, .config = g->config,
                      .generic = g->type != PERF_TYPE_SOFTWARE};
        dk_database_event ev = {0};
        ev.name = g->name;
        ev.alias = g->alias;
        ev.description = g->description;
        ev.unit = g->unit;
        ev.source = g->type == PERF_TYPE_HARDWARE ? "hardware"
                    : g->type == PERF_TYPE_HW_CACHE ? "hw-cache"
                                                    : "software";
        ev.supported = probe(k, &def);
        if (add_event(&b, &ev, &def) != 0)
            rc = dk__fail(DK_ENOMEM, "building the event list: out of memory");
    }
    if (rc == 0)
        rc = add_sysfs_events(k, &b);
    if (rc != 0) {
        free(b.events);
        free(b.defs);
        s->impl = NULL;
        free_session(k);
        return rc;
    }
    /* Sort by name, keeping defs alongside. */
    s->db.events = b.events;
    s->db.event_count = b.count;
    size_t *perm = calloc(b.count + 1, sizeof *perm);
    k->defs = calloc(b.count + 1, sizeof *k->defs);
    if (perm == NULL || k->defs == NULL || dk__database_sort(&s->db, perm) != 0) {
        free(perm);
        free(b.events);
        free(b.defs);
        s->db.events = NULL;
        s->impl = NULL;
        free_session(k);
        return dk__fail(DK_ENOMEM, "building the event list: out of memory");
    }
    for (size_t i = 0; i < b.count; i++)
        k->defs[i] = b.defs[perm[i]];
    free(perm);
    free(b.defs);

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
    dk__pmc_probe_pmu(&k->pmc, k->core_count > 0);
    describe_pmus(k);
    s->caps.pmu = k->pmu_text;
    s->caps.counters = k->core_count == 1 ? k->pmc.counters : 0; /* hybrid: per PMU */
    s->caps.user_reads = k->pmc.user_text;
    s->caps.privileges = k->privilege_text;
    return 0;
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
    free_session(s->impl);
}

/* ------------------------------------------------------------------------ */
/* Thread samplers                                                           */
/* ------------------------------------------------------------------------ */

static bool hardware_type(const session *k, uint32_t type)
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
                               "cpu PMU in " SYSFS_DEVICES "; virtual machines often have none)",
                               event);
        return dk__fail_os(DK_EUNAVAILABLE, e, "event %s is not supported by this kernel or CPU",
                           event);
    case EINVAL:
        if (sibling)
            return dk__fail_os(DK_ECONFLICT, e, "event %s cannot be counted in one group with the "
                                                "events before it",
                               event);
        return dk__fail_os(DK_EUNAVAILABLE, e, "the kernel refused the attributes of event %s",
                           event);
    case EMFILE:
    case ENFILE:
    case ENOSPC:
        return dk__fail_os(DK_ETOOMANY, e, "event %s: too many counters open", event);
    case EBUSY:
        return dk__fail_os(DK_EBUSY, e, "event %s: its counter is held exclusively by another "
                                        "user",
                           event);
    default:
        return dk__fail_os(DK_EOS, e, "perf_event_open for event %s failed", event);
    }
}

static int fail_open(const session *k, const dk_database_event *ev, const pe_def *def, int e,
                     bool sibling)
{
    return dk__pe_fail_open(ev->name, hardware_type(k, def->type), k->core_count > 0,
                            k->paranoid, e, sibling);
}

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
 * (arm64: attr.config1 bits, see dk__pmc_probe_pmu); 0 elsewhere. */
static uint64_t user_read_config1(const session *k, uint32_t type)
{
    return k->pmc.user_reads && hardware_type(k, type) ? k->pmc.config1 : 0;
}

static int open_counter(pe_thread *pt, const session *k, const dk_database_event *ev,
                        const pe_def *def, struct perf_event_attr *attr, size_t event,
                        size_t group_key, size_t *group_of_key)
{
    attr->read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
                        PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
    apply_exclusions(k, attr, def->exclude);
    attr->config1 |= user_read_config1(k, attr->type);
    if (pt->ncounters == INSTANCES_MAX || pt->ngroups == GROUPS_MAX)
        return dk__fail(DK_ETOOMANY, "event %s: more than %d counters", ev->name, INSTANCES_MAX);
    pe_counter *c = &pt->counters[pt->ncounters];
    c->fd = -1;
    c->event = event;
    size_t g = group_of_key[group_key];
    int e = 0;
    if (g != SIZE_MAX) {
        attr->disabled = 0; /* siblings follow their leader */
        c->fd = perf_open(attr, pt->groups[g].leader_fd);
        e = errno;
        if (c->fd < 0 && e != EINVAL)
            return fail_open(k, ev, def, e, true);
    }
    if (c->fd < 0) {
        /* A new group: the first of this key, or one the kernel would not
         * take into the group it belongs with. The arm64 driver leaves a
         * disabled leader out when it checks that a group fits the counters,
         * unless the leader is to be enabled at exec, and so would accept
         * one sibling too many for a group it can then never schedule (every
         * count 0). Marked so, the leader is counted, the extra sibling
         * fails with EINVAL and starts a group of its own. (The counters are
         * close-on-exec: an exec ends them before they could start.) */
        attr->disabled = 1;
        attr->enable_on_exec = 1;
        c->fd = perf_open(attr, -1);
        attr->enable_on_exec = 0;
        if (c->fd < 0)
            return fail_open(k, ev, def, errno, g != SIZE_MAX && e == EINVAL);
        g = pt->ngroups++;
        pt->groups[g].leader_fd = c->fd;
        pt->groups[g].first = pt->ncounters;
        pt->groups[g].count = 0;
        if (group_of_key[group_key] == SIZE_MAX)
            group_of_key[group_key] = g;
    }
    if (ioctl(c->fd, PERF_EVENT_IOC_ID, &c->id) != 0) {
        int err = errno;
        close(c->fd);
        return dk__fail_os(DK_EOS, err, "PERF_EVENT_IOC_ID for event %s failed", ev->name);
    }
    c->group = g;
    pt->groups[g].count++;
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

static void describe(dk_reading *info, uint64_t enabled, uint64_t running)
{
    info->time_enabled = enabled;
    info->time_running = running;
    info->multiplexed = running < enabled;
    info->counted = running > 0;
}

static int read_groups(dk_thread *t, uint64_t *values, dk_reading *info)
{
    pe_thread *pt = t->impl;
    uint64_t min_run = UINT64_MAX, max_ena = 0;
    for (size_t i = 0; i < t->n; i++)
        values[i] = 0;
    for (size_t g = 0; g < pt->ngroups; g++) {
        const pe_group *grp = &pt->groups[g];
        size_t want = (3 + 2 * grp->count) * sizeof(uint64_t);
        ssize_t got = read(grp->leader_fd, pt->buf, want);
        if (DK__UNLIKELY(got != (ssize_t)want))
            return dk__fail_os(DK_EOS, got < 0 ? errno : EIO,
                               "reading the counters of event %s failed",
                               t->events[pt->counters[grp->first].event]->name);
        uint64_t enabled = pt->buf[1], running = pt->buf[2];
        for (size_t j = 0; j < grp->count; j++) {
            const pe_counter *c = &pt->counters[grp->first + j];
            uint64_t value = pt->buf[3 + 2 * j];
            if (DK__UNLIKELY(pt->buf[4 + 2 * j] != c->id))
                return dk__fail(DK_EOS, "the kernel returned the group's counters out of order");
            values[c->event] += dk_scale_count(value, enabled, running);
        }
        if (running < min_run)
            min_run = running;
        if (enabled > max_ena)
            max_ena = enabled;
    }
    if (info != NULL)
        describe(info, max_ena, min_run == UINT64_MAX ? 0 : min_run);
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
    size_t want = (3 + 2 * pt->ncounters) * sizeof(uint64_t);
    if (read(pt->groups[0].leader_fd, pt->buf, want) != (ssize_t)want || pt->buf[0] != t->n)
        return false;
    for (size_t i = 0; i < pt->ncounters; i++)
        if (pt->buf[4 + 2 * i] != pt->counters[i].id)
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
        uint64_t enabled = pt->buf[1], running = pt->buf[2];
        if (DK__LIKELY(running >= enabled))
            for (size_t i = 0; i < pt->ncounters; i++)
                values[i] = pt->buf[3 + 2 * i];
        else
            for (size_t i = 0; i < pt->ncounters; i++)
                values[i] = dk_scale_count(pt->buf[3 + 2 * i], enabled, running);
        if (info != NULL)
            describe(info, enabled, running);
        return 0;
    }
    if (pt->pmc != NULL) {
        uint64_t ena = 0, run = 0;
        size_t i = 0;
        for (; i < pt->ncounters; i++) {
            uint64_t count, e, r;
            if (!dk__pmc_read(pt->counters[i].page, pt->pmc, &count, &e, &r))
                break; /* not on the PMU right now: ask the kernel */
            values[pt->counters[i].event] = dk_scale_count(count, e, r);
            ena = e;
            run = r;
        }
        if (i == pt->ncounters) {
            if (info != NULL)
                describe(info, ena, run);
            return 0;
        }
    }
    return read_groups(t, values, info);
}

static int pe_thread_open(dk_thread *t)
{
    dk_sampler *s = t->sampler;
    session *k = s->impl;
    pe_thread *pt = calloc(1, sizeof *pt);
    if (pt == NULL)
        return dk__fail(DK_ENOMEM, "dk_thread_open: out of memory");
    const pe_def *defs[DK_MAX_EVENTS];
    pe_def moded[DK_MAX_EVENTS];
    for (size_t i = 0; i < t->n; i++) {
        int rc = def_with_mode(s, t->events[i], t->mode[i], dk__thread_label(t, i), &moded[i]);
        if (rc != 0) {
            free(pt);
            return rc;
        }
        defs[i] = &moded[i];
    }
    struct perf_event_attr *attrs = calloc(INSTANCES_MAX, sizeof *attrs);
    if (attrs == NULL) {
        free(pt);
        return dk__fail(DK_ENOMEM, "dk_thread_open: out of memory");
    }
    size_t events[INSTANCES_MAX], keys[INSTANCES_MAX];
    size_t m = dk__pe_plan(k->core_types, k->core_count, defs, t->n, attrs, events, keys);
    size_t group_of_key[CORE_PMUS_MAX];
    for (size_t i = 0; i < CORE_PMUS_MAX; i++)
        group_of_key[i] = SIZE_MAX;
    int rc = 0;
    /* Open key by key so that each group is built in one go. */
    for (size_t key = 0; key < CORE_PMUS_MAX && rc == 0; key++)
        for (size_t i = 0; i < m && rc == 0; i++)
            if (keys[i] == key)
                rc = open_counter(pt, k, t->events[events[i]], defs[events[i]], &attrs[i],
                                  events[i], key, group_of_key);
    free(attrs);
    if (rc != 0) {
        close_counters(pt);
        free(pt);
        return rc;
    }
    order_counters(pt);
    bool hardware = true;
    for (size_t i = 0; i < pt->ncounters; i++)
        hardware &= hardware_type(k, defs[pt->counters[i].event]->type);
    if (hardware && k->pmc.user_reads && map_pages(pt))
        pt->pmc = dk__pmc_native();
    pt->simple = check_simple(t, pt);
    t->impl = pt;
    t->read = pe_read;
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

static int pe_thread_stop(dk_thread *t) { return pe_ioctl_all(t, PERF_EVENT_IOC_DISABLE, "disabling"); }

static void pe_thread_close(dk_thread *t)
{
    pe_thread *pt = t->impl;
    close_counters(pt);
    free(pt);
}

/* ------------------------------------------------------------------------ */
/* Groups: a process and what it starts (inherit), or every CPU              */
/* ------------------------------------------------------------------------ */

typedef struct pe_fd {
    int fd;
    size_t event;
} pe_fd;

typedef struct pe_pgroup {
    pe_fd *fds;
    size_t nfds, cap;
    bool exec_pending; /* enabled by the kernel at exec: the first start is a no-op */
} pe_pgroup;

#define CPU_ONLINE "/sys/devices/system/cpu/online"

/* The online CPUs, from CPU_ONLINE ("0-3,6"); without that file, the first
 * sysconf(_SC_NPROCESSORS_ONLN). Returns 0 or DK_EINVAL for a file that
 * cannot be read as a CPU list. */
static int online_cpus(int *cpus, size_t max, size_t *n)
{
    char text[4096];
    *n = 0;
    if (read_text(CPU_ONLINE, text, sizeof text) == 0) {
        int rc = dk__perf_parse_cpu_list(text, cpus, max, n);
        if (rc != 0)
            return dk__fail(rc, "counting every CPU: " CPU_ONLINE ": %s", dk_last_error());
        return 0;
    }
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < count && *n < max; c++)
        cpus[(*n)++] = (int)c;
    if (*n == 0)
        return dk__fail(DK_EOS, "counting every CPU: neither " CPU_ONLINE " nor sysconf tells "
                                "which CPUs are online");
    return 0;
}

static void close_pgroup(pe_pgroup *pg)
{
    for (size_t i = 0; i < pg->nfds; i++)
        close(pg->fds[i].fd);
    free(pg->fds);
    free(pg);
}

static int add_fd(pe_pgroup *pg, int fd, size_t event)
{
    if (pg->nfds == pg->cap) {
        size_t cap = pg->cap ? pg->cap * 2 : 16;
        pe_fd *grown = realloc(pg->fds, cap * sizeof *grown);
        if (grown == NULL)
            return -1;
        pg->fds = grown;
        pg->cap = cap;
    }
    pg->fds[pg->nfds].fd = fd;
    pg->fds[pg->nfds].event = event;
    pg->nfds++;
    return 0;
}

#define MAX_CPUS 8192 /* Linux's largest NR_CPUS */

static int pe_group_open(dk_group *g)
{
    dk_sampler *s = g->sampler;
    session *k = s->impl;
    bool system = g->scope == DK_SCOPE_SYSTEM;
    int *cpus = calloc(system ? MAX_CPUS : 1, sizeof *cpus);
    if (cpus == NULL)
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    size_t ncpus = 1;
    if (system) {
        int rc = online_cpus(cpus, MAX_CPUS, &ncpus);
        if (rc != 0) {
            free(cpus);
            return rc;
        }
    } else {
        cpus[0] = -1;
        if (g->pid == 0)
            g->pid = getpid();
    }
    pe_pgroup *pg = calloc(1, sizeof *pg);
    struct perf_event_attr *attrs = calloc(CORE_PMUS_MAX, sizeof *attrs);
    if (pg == NULL || attrs == NULL) {
        free(pg);
        free(attrs);
        free(cpus);
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < g->n && rc == 0; i++) {
        if (!g->supported[i])
            continue;
        pe_def moded;
        rc = def_with_mode(s, g->events[i], g->mode[i], dk__group_label(g, i), &moded);
        if (rc != 0)
            break;
        const pe_def *def = &moded;
        size_t events[CORE_PMUS_MAX], keys[CORE_PMUS_MAX];
        size_t m = dk__pe_plan(k->core_types, k->core_count, &def, 1, attrs, events, keys);
        size_t first = pg->nfds;
        int failed = 0;
        for (size_t j = 0; j < m && !failed; j++) {
            struct perf_event_attr *a = &attrs[j];
            a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
            a->disabled = 1;
            a->inherit = !system;
            a->enable_on_exec = !system && (g->flags & DK_GROUP_ENABLE_ON_EXEC) != 0;
            apply_exclusions(k, a, def->exclude);
            for (size_t c = 0; c < ncpus && !failed; c++) {
                int fd = (int)syscall(SYS_perf_event_open, a, system ? -1 : g->pid, cpus[c], -1,
                                      PERF_FLAG_FD_CLOEXEC);
                if (fd < 0) {
                    failed = errno;
                    break;
                }
                if (add_fd(pg, fd, i) != 0) {
                    close(fd);
                    rc = dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
                    break;
                }
            }
        }
        if (failed == 0 || rc != 0)
            continue;
        /* Undo this event's counters, then decide what the failure means. */
        while (pg->nfds > first)
            close(pg->fds[--pg->nfds].fd);
        if (system && (failed == EACCES || failed == EPERM))
            rc = dk__fail_os(DK_EPERM, failed,
                             "counting every CPU needs CAP_PERFMON or kernel.perf_event_paranoid "
                             "at 0 or below (it is %d)",
                             k->paranoid);
        else if (failed == ESRCH)
            rc = dk__fail_os(DK_EOS, failed, "there is no process %d", g->pid);
        else
            rc = fail_open(k, g->events[i], def, failed, false);
        if (rc == DK_EUNAVAILABLE && (g->flags & DK_GROUP_PARTIAL)) {
            dk__group_unsupported(g, i);
            rc = 0;
        }
    }
    free(attrs);
    free(cpus);
    if (rc != 0) {
        close_pgroup(pg);
        return rc;
    }
    pg->exec_pending = !system && (g->flags & DK_GROUP_ENABLE_ON_EXEC) != 0;
    if (system)
        snprintf(g->scope_text, sizeof g->scope_text, "every CPU (%zu online)", ncpus);
    else
        snprintf(g->scope_text, sizeof g->scope_text,
                 "process %d and the threads and processes it starts", g->pid);
    g->impl = pg;
    return 0;
}

static int pe_group_ioctl(dk_group *g, unsigned long request, const char *what)
{
    pe_pgroup *pg = g->impl;
    int rc = 0;
    for (size_t i = 0; i < pg->nfds; i++)
        if (ioctl(pg->fds[i].fd, request, 0) != 0 && rc == 0)
            rc = dk__fail_os(DK_EOS, errno, "%s the counters failed", what);
    return rc;
}

static int pe_group_start(dk_group *g)
{
    pe_pgroup *pg = g->impl;
    if (pg->exec_pending) {
        pg->exec_pending = false; /* the kernel enables the counters at the exec */
        return 0;
    }
    int rc = pe_group_ioctl(g, PERF_EVENT_IOC_ENABLE, "enabling");
    if (rc != 0)
        (void)pe_group_ioctl(g, PERF_EVENT_IOC_DISABLE, "disabling");
    return rc;
}

static int pe_group_stop(dk_group *g) { return pe_group_ioctl(g, PERF_EVENT_IOC_DISABLE, "disabling"); }

static int pe_group_read(dk_group *g, uint64_t *values, dk_reading *info)
{
    pe_pgroup *pg = g->impl;
    uint64_t enabled[DK_MAX_EVENTS] = {0}, running[DK_MAX_EVENTS] = {0};
    for (size_t i = 0; i < g->n; i++)
        values[i] = 0;
    for (size_t i = 0; i < pg->nfds; i++) {
        uint64_t buf[3];
        ssize_t got = read(pg->fds[i].fd, buf, sizeof buf);
        if (got != (ssize_t)sizeof buf)
            return dk__fail_os(DK_EOS, got < 0 ? errno : EIO, "reading event %s failed",
                               g->events[pg->fds[i].event]->name);
        size_t e = pg->fds[i].event;
        values[e] += dk_scale_count(buf[0], buf[1], buf[2]);
        enabled[e] += buf[1];
        running[e] += buf[2];
    }
    if (info != NULL)
        for (size_t i = 0; i < g->n; i++)
            if (g->supported[i])
                describe(&info[i], enabled[i], running[i]);
    return 0;
}

static void pe_group_close(dk_group *g) { close_pgroup(g->impl); }

int dk__perf_event_group_fd(const dk_thread *t)
{
    const pe_thread *pt = t->impl;
    return pt->ngroups > 0 ? pt->groups[0].leader_fd : -1;
}

const dk__backend dk__backend_perf_event = {
    .version = DK__BACKEND_VERSION,
    .name = "perf_event",
    .open = pe_open,
    .acquire = pe_acquire,
    .release = pe_release,
    .close = pe_close,
    .resolve = pe_resolve,
    .thread_open = pe_thread_open,
    .thread_start = pe_thread_start,
    .thread_stop = pe_thread_stop,
    .thread_close = pe_thread_close,
    .group_open = pe_group_open,
    .group_start = pe_group_start,
    .group_stop = pe_group_stop,
    .group_read = pe_group_read,
    .group_close = pe_group_close,
};

#else /* !__linux__ */

static int pe_open(dk_sampler *s, const dk_sampler_options *opts)
{
    (void)s;
    (void)opts;
    return dk__fail(DK_ENOTSUP, "the perf_event backend exists only on Linux");
}

const dk__backend dk__backend_perf_event = {
    .version = DK__BACKEND_VERSION,
    .name = "perf_event",
    .open = pe_open,
};

#endif
