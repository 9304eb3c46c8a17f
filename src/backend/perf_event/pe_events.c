/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_events.c - the perf_event backend's event database: perf's generic
 * hardware, cache and software events, the events sysfs lists for per-task
 * PMUs (each probed, when first asked about, to say whether it counts here),
 * and the raw and pmu/.../ events resolved by name, kept for the sampler's
 * life.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/perf_event/pe_internal.h"

typedef struct generic {
    const char *name;
    const char *alias;
    uint32_t type;
    uint64_t config;
    const char *description;
    const char *unit;
} generic;

#define CACHE(id, op, res) ((uint64_t)(id) | (uint64_t)(op) << 8 | (uint64_t)(res) << 16)

static const generic generics[] = {
    {"cpu-cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "core clock cycles",
     NULL},
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
     CACHE(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_WRITE,
           PERF_COUNT_HW_CACHE_RESULT_ACCESS),
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
     CACHE(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
           PERF_COUNT_HW_CACHE_RESULT_ACCESS),
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


static char *own(pe_session *k, const char *text)
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

static bool file_exists(const char *path) { return access(path, F_OK) == 0; }

/*
 * What the kernel answered for an event's attributes, kept for the process:
 * its answer does not change while the process runs (the sysctls that
 * could change it, perf_event_paranoid for one, shape the attributes, which
 * are the key). Answers that may change (out of files or memory) are not
 * kept.
 */
typedef struct probe_fact {
    uint32_t type;
    uint64_t config, config1, config2;
    unsigned exclusions;
    int err;
} probe_fact;

static pthread_mutex_t facts_lock = PTHREAD_MUTEX_INITIALIZER;
static probe_fact facts[256];
static size_t nfacts;

static int probe_attr(struct perf_event_attr *attr)
{
    unsigned exclusions = (unsigned)attr->exclude_kernel | (unsigned)attr->exclude_user << 1 |
                          (unsigned)attr->exclude_hv << 2;
    pthread_mutex_lock(&facts_lock);
    for (size_t i = 0; i < nfacts; i++) {
        const probe_fact *f = &facts[i];
        if (f->type == attr->type && f->config == attr->config && f->config1 == attr->config1 &&
            f->config2 == attr->config2 && f->exclusions == exclusions) {
            int err = f->err;
            pthread_mutex_unlock(&facts_lock);
            return err;
        }
    }
    int fd = dk__pe_syscall(attr, 0, -1, -1);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0)
        close(fd);
    bool passing = err == EMFILE || err == ENFILE || err == ENOMEM || err == EINTR ||
                   err == EAGAIN || err == EBUSY;
    if (!passing && nfacts < DK__COUNT_OF(facts))
        facts[nfacts++] =
            (probe_fact){attr->type, attr->config, attr->config1, attr->config2, exclusions, err};
    pthread_mutex_unlock(&facts_lock);
    return err;
}

int dk__pe_probe_def(const pe_session *k, const pe_def *def)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = def->type;
    attr.config = def->config;
    attr.config1 = def->config1;
    attr.config2 = def->config2;
    attr.disabled = 1;
    dk__pe_apply_exclusions(k, &attr, def->exclude);
    if (def->generic && k->core_count > 1)
        attr.config |= (uint64_t)k->core_types[0] << PERF_PMU_TYPE_SHIFT;
    return probe_attr(&attr);
}

void dk__pe_probe_event(dk_sampler *s, const dk_database_event *ev)
{
    pe_session *k = s->impl;
    size_t i = dk__event_index(s, ev);
    if (__atomic_load_n(&k->probed[i], __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&k->lock);
    if (!k->probed[i]) {
        s->db.events[i].supported = dk__pe_probe_def(k, &k->defs[i]) == 0;
        __atomic_store_n(&k->probed[i], 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&k->lock);
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
static int add_sysfs_events(pe_session *k, builder *b)
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
        if (dk__pe_pathf(path, sizeof path, "%s/%s/cpumask", k->sysfs, de->d_name) != 0 ||
            file_exists(path))
            continue; /* uncore and other per-CPU PMUs */
        if (dk__pe_pathf(path, sizeof path, "%s/%s/events", k->sysfs, de->d_name) != 0)
            continue;
        DIR *events = opendir(path);
        if (events == NULL)
            continue;
        struct dirent *ee;
        while (rc == 0 && (ee = readdir(events)) != NULL) {
            if (ee->d_name[0] == '.' || strchr(ee->d_name, '.') != NULL)
                continue; /* .unit, .scale and friends */
            char name[256], definition[256], file[768], unit[32] = "";
            if (dk__pe_pathf(name, sizeof name, "%s/%s/", de->d_name, ee->d_name) != 0 ||
                dk__pe_pathf(file, sizeof file, "%s/%s", path, ee->d_name) != 0 ||
                dk__pe_read_text(file, definition, sizeof definition) != 0)
                continue;
            if (dk__pe_pathf(file, sizeof file, "%s/%s.unit", path, ee->d_name) == 0)
                (void)dk__pe_read_text(file, unit, sizeof unit);
            pe_def def;
            if (dk__pe_parse(k->sysfs, name, &def) != 0)
                continue;
            dk_database_event ev = {0};
            ev.name = own(k, name);
            ev.description = own(k, definition);
            ev.source = own(k, de->d_name);
            ev.unit = unit[0] ? own(k, unit) : NULL;
            ev.supported = true; /* not known to fail until probed (dk__pe_probe_event) */
            if (ev.name == NULL || ev.description == NULL || ev.source == NULL ||
                add_event(b, &ev, &def) != 0)
                rc = dk__fail(DK_ENOMEM, "listing the sysfs events: out of memory");
        }
        closedir(events);
    }
    closedir(dir);
    return rc;
}

int dk__pe_build_database(dk_sampler *s, pe_session *k)
{
    builder b = {0};
    int rc = 0;
    for (size_t i = 0; i < DK__COUNT_OF(generics) && rc == 0; i++) {
        const generic *g = &generics[i];
        pe_def def = {.type = g->type,
                      .config = g->config,
                      .generic = g->type != PERF_TYPE_SOFTWARE};
        dk_database_event ev = {0};
        ev.name = g->name;
        ev.alias = g->alias;
        ev.description = g->description;
        ev.unit = g->unit;
        ev.source = g->type == PERF_TYPE_HARDWARE   ? "hardware"
                    : g->type == PERF_TYPE_HW_CACHE ? "hw-cache"
                                                    : "software";
        ev.supported = true; /* not known to fail until probed (dk__pe_probe_event) */
        if (add_event(&b, &ev, &def) != 0)
            rc = dk__fail(DK_ENOMEM, "building the event list: out of memory");
    }
    if (rc == 0)
        rc = add_sysfs_events(k, &b);
    if (rc != 0) {
        free(b.events);
        free(b.defs);
        return rc;
    }
    /* Sort by name, keeping defs alongside. */
    s->db.events = b.events;
    s->db.event_count = b.count;
    size_t *perm = calloc(b.count + 1, sizeof *perm);
    k->defs = calloc(b.count + 1, sizeof *k->defs);
    /* Whether each event counts here is found when it is first asked about
     * (dk__pe_probe_event), not for the whole list at every open. */
    k->probed = calloc(b.count + 1, sizeof *k->probed);
    if (perm == NULL || k->defs == NULL || k->probed == NULL ||
        dk__database_sort(&s->db, perm) != 0) {
        free(perm);
        free(b.events);
        free(b.defs);
        s->db.events = NULL;
        return dk__fail(DK_ENOMEM, "building the event list: out of memory");
    }
    for (size_t i = 0; i < b.count; i++)
        k->defs[i] = b.defs[perm[i]];
    free(perm);
    free(b.defs);
    return 0;
}

void dk__pe_session_free(pe_session *k)
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
    free(k->probed);
    pthread_mutex_destroy(&k->lock);
    free(k);
}

int dk__pe_resolve(dk_sampler *s, const char *name, const dk_database_event **out)
{
    pe_session *k = s->impl;
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
    pe_session *k = s->impl;
    pthread_mutex_lock(&k->lock);
    size_t n = k->dynamic_count;
    pthread_mutex_unlock(&k->lock);
    return n;
}

/* How to open an event of the thread sampler. */
static const pe_def *def_of(const dk_sampler *s, const dk_database_event *ev)
{
    const pe_session *k = s->impl;
    if (ev >= s->db.events && ev < s->db.events + s->db.event_count)
        return &k->defs[ev - s->db.events];
    const pe_dynamic *d = (const pe_dynamic *)((const char *)ev - offsetof(pe_dynamic, pub));
    return &d->def;
}

/* How to open an event with the modifiers it was given (DK__MODE_*): they
 * override a pmu/.../u or /k suffix. */
int dk__pe_def_with_mode(const dk_sampler *s, const dk_database_event *ev, unsigned mode,
                         const char *label, pe_def *out)
{
    const pe_session *k = s->impl;
    *out = *def_of(s, ev);
    if (mode == 0)
        return 0;
    if ((mode & DK__MODE_KERNEL) && k->exclude_kernel)
        return dk__fail(DK_EPERM,
                        "event " DK__SHOWN_FMT " counts kernel mode, which "
                        "kernel.perf_event_paranoid %d allows only with CAP_PERFMON (or a "
                        "paranoid level of 1 or below); %s",
                        DK__SHOWN(label), k->paranoid,
                        mode & DK__MODE_USER ? "use :u to count user mode alone"
                                             : "use :u to count user mode instead");
    out->exclude = mode == DK__MODE_USER ? 'u' : mode == DK__MODE_KERNEL ? 'k' : 0;
    return 0;
}
