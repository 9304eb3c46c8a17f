/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * thread.c - dk_thread: resolving events against the sampler's database,
 * ownership by one thread, and start/sample/stop on top of the backend.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "events/tables.h"

/* "M4, M5": the chips that have an event. */
static void chips_with(dk_event ev, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int cpu = DK_CPU_M1; cpu <= DK_CPU_M5; cpu++) {
        if (dk__event_on(ev, (dk_cpu)cpu) == NULL)
            continue;
        int n =
            snprintf(buf + used, size - used, "%s%s", used ? ", " : "", dk_cpu_name((dk_cpu)cpu));
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

static const char *here(const dk_sampler *s)
{
    return s->cpu == DK_CPU_INTEL || s->cpu == DK_CPU_UNKNOWN ? s->db.name : dk_cpu_name(s->cpu);
}

/* An event enum on this sampler's chip. */
static int resolve_event(dk_sampler *s, dk_event ev, const dk_database_event **out)
{
    const char *name = NULL;
    if ((unsigned)ev >= (unsigned)DK_EVENT_COUNT)
        return dk__fail(DK_EINVAL, "%d is not a dk_event", (int)ev);
    if (s->backend->event_name != NULL) {
        int rc = s->backend->event_name(s, ev, &name);
        if (rc != 0)
            return rc;
    } else if (s->cpu == DK_CPU_INTEL) {
        /* Intel databases name their fixed counters by alias. */
        if (ev == DK_EVENT_FIXED_CYCLES)
            name = "Cycles";
        else if (ev == DK_EVENT_FIXED_INSTRUCTIONS)
            name = "Instructions";
    } else {
        const dk_event_def *def = dk__event_on(ev, s->cpu);
        if (def != NULL)
            name = def->name;
        else if (s->cpu == DK_CPU_UNKNOWN && dk__database_lookup(&s->db, dk_event_name(ev)) != NULL)
            name = dk_event_name(ev); /* no chip table: the database's own event of that name */
    }
    if (name == NULL) {
        char chips[64];
        chips_with(ev, chips, sizeof chips);
        return dk__fail(DK_EUNAVAILABLE, "event %s is not available on %s (it exists on %s)",
                        dk__event_ident(ev), here(s), chips);
    }
    *out = dk__database_lookup(&s->db, name);
    if (*out == NULL)
        return dk__fail(DK_EUNAVAILABLE, "event %s is not in this CPU's %s database",
                        dk__event_ident(ev), s->db.name);
    return 0;
}

/* A portable name, native name or alias on this sampler's database. */
int dk__resolve_name(dk_sampler *s, const char *name, const dk_database_event **out)
{
    if (name == NULL)
        return dk__fail(DK_EINVAL, "event name must not be NULL");
    if (*name == '\0')
        return dk__fail(DK_EINVAL, "event name must not be empty");

    int portable = dk__portable_index(name);
    if (portable >= 0) {
        const char *const *cand = dk__portable_candidates(portable, s->db.family);
        char tried[256] = "";
        size_t used = 0;
        for (size_t i = 0; cand != NULL && cand[i] != NULL; i++) {
            *out = dk__database_lookup(&s->db, cand[i]);
            if (*out != NULL)
                return 0;
            int n = snprintf(tried + used, sizeof tried - used, "%s%s", used ? ", " : "", cand[i]);
            if (n > 0 && (size_t)n < sizeof tried - used)
                used += (size_t)n;
        }
        return dk__fail(DK_EUNAVAILABLE, "event %s has no counterpart in the %s database%s%s%s",
                        dk_portable_name((size_t)portable), s->db.name, used ? " (tried " : "",
                        tried, used ? ")" : "");
    }

    *out = dk__database_lookup(&s->db, name);
    if (*out != NULL)
        return 0;
    for (size_t i = 0; i < s->db.event_count; i++) {
        const dk_database_event *ev = &s->db.events[i];
        if (dk__strcasecmp(ev->name, name) == 0 ||
            (ev->alias != NULL && dk__strcasecmp(ev->alias, name) == 0)) {
            *out = ev;
            return 0;
        }
    }

    if (s->backend->resolve != NULL) {
        int rc = s->backend->resolve(s, name, out);
        if (rc != DK__NOT_MINE)
            return rc;
    }

    dk_event known;
    if (s->backend->event_name == NULL && dk_event_from_name(name, &known) == 0) {
        char chips[64];
        chips_with(known, chips, sizeof chips);
        return dk__fail(DK_EUNAVAILABLE, "event %s is not available on %s (it exists on %s)",
                        dk__event_ident(known), here(s), chips);
    }

    /* Suggest the names within a typo or two, then those that contain it. */
    const char *near[3];
    size_t found = dk__database_near(&s->db, name, near, 3);
    if (found == 0)
        return dk__fail(DK_ENOEVENT, "no event named " DK__SHOWN_FMT " in the %s database",
                        DK__SHOWN(name), s->db.name);
    return dk__fail(DK_ENOEVENT,
                    "no event named " DK__SHOWN_FMT " in the %s database; did you mean %s%s%s%s%s?",
                    DK__SHOWN(name), s->db.name, near[0], found > 1 ? ", " : "",
                    found > 1 ? near[1] : "", found > 2 ? ", " : "", found > 2 ? near[2] : "");
}

int dk__resolve_spec(dk_sampler *s, const char *name, const dk_database_event **out,
                     unsigned char *mode, char **label)
{
    *mode = 0;
    if (label != NULL)
        *label = NULL;
    if (name == NULL || *name == '\0')
        return dk__resolve_name(s, name, out);
    dk_event_spec sp = {.size = sizeof sp};
    int rc = dk_event_spec_parse(name, strlen(name), &sp);
    if (rc != 0)
        return rc;
    if (sp.base_len != sp.len)
        return dk__fail(DK_EINVAL,
                        "event " DK__SHOWN_FMT ": a sampling period or frequency is not part of "
                        "an event's name here (dk_sampling_event has period and freq)",
                        DK__SHOWN(name));
    if (sp.modifiers == 0)
        return dk__resolve_name(s, name, out);
    if (sp.modifiers & DK_EVENT_MOD_HV)
        return dk__fail(DK_EINVAL,
                        "event " DK__SHOWN_FMT ": the h modifier (hypervisor) is not supported: "
                        "libdkperf never counts the hypervisor",
                        DK__SHOWN(name));
    char base[512];
    if (sp.event_len >= sizeof base)
        return dk__fail(DK_EINVAL, "event " DK__SHOWN_FMT ": the name is longer than %zu bytes",
                        DK__SHOWN(name), sizeof base - 1);
    memcpy(base, name, sp.event_len);
    base[sp.event_len] = '\0';
    rc = dk__resolve_name(s, base, out);
    if (rc != 0)
        return rc;
    unsigned char m = (unsigned char)((sp.modifiers & DK_EVENT_MOD_USER ? DK__MODE_USER : 0) |
                                      (sp.modifiers & DK_EVENT_MOD_KERNEL ? DK__MODE_KERNEL : 0));
    if ((m & DK__MODE_KERNEL) && (s->flags & DK_SAMPLER_USER_ONLY))
        return dk__fail(DK_EINVAL,
                        "event " DK__SHOWN_FMT
                        " asks for kernel mode, but the sampler was opened with "
                        "DK_SAMPLER_USER_ONLY",
                        DK__SHOWN(name));
    *mode = m;
    if (label != NULL) {
        /* As written after the native name: "cycles:u", "cpu/event=0x3c/u". */
        const char *mods = name + sp.event_len;
        size_t n = strlen((*out)->name) + strlen(mods) + 1;
        *label = malloc(n);
        if (*label == NULL)
            return dk__fail(DK_ENOMEM, "event " DK__SHOWN_FMT ": out of memory", DK__SHOWN(name));
        snprintf(*label, n, "%s%s", (*out)->name, mods);
    }
    return 0;
}

int dk_sampler_resolve(dk_sampler *s, const char *name, const dk_database_event **out)
{
    if (s == NULL || out == NULL)
        return dk__fail(DK_EINVAL, "dk_sampler_resolve: sampler and out must not be NULL");
    *out = NULL;
    unsigned char mode;
    return dk__resolve_spec(s, name, out, &mode, NULL);
}

static void free_thread(dk_thread *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->label[i]);
        free(t->asked[i]);
    }
    free(t);
}

static int check_count(dk_sampler *s, size_t n, dk_thread **out)
{
    if (s == NULL || out == NULL)
        return dk__fail(DK_EINVAL, "dk_thread_open: sampler and out must not be NULL");
    *out = NULL;
    int rc = dk__sampler_counts(s, "dk_thread_open");
    if (rc != 0)
        return rc;
    if (n == 0)
        return dk__fail(DK_EINVAL, "dk_thread_open: no events given");
    if (n > DK_MAX_EVENTS)
        return dk__fail(DK_EINVAL, "dk_thread_open: %zu events, at most %d", n, DK_MAX_EVENTS);
    return 0;
}

static int open_resolved(dk_sampler *s, dk_thread *t, dk_thread **out)
{
    t->sampler = s;
    t->owner = pthread_self();
    /* Under the lock, so that a release cannot hand the counters back while
     * the backend programs them. */
    pthread_mutex_lock(&s->lock);
    if (s->released) {
        pthread_mutex_unlock(&s->lock);
        free_thread(t);
        return dk__fail(DK_ESTATE, "the sampler has given its counters back");
    }
    int rc = s->backend->thread_open(t);
    if (rc == 0)
        s->refs++;
    pthread_mutex_unlock(&s->lock);
    if (rc != 0) {
        free_thread(t);
        return rc;
    }
    *out = t;
    return 0;
}

int dk_thread_open(dk_sampler *s, const dk_event *events, size_t n, dk_thread **out)
{
    int rc = check_count(s, n, out);
    if (rc != 0)
        return rc;
    if (events == NULL)
        return dk__fail(DK_EINVAL, "dk_thread_open: events must not be NULL");
    dk_thread *t = calloc(1, sizeof *t);
    if (t == NULL)
        return dk__fail(DK_ENOMEM, "dk_thread_open: out of memory");
    t->n = n;
    for (size_t i = 0; i < n; i++) {
        rc = resolve_event(s, events[i], &t->events[i]);
        if (rc != 0) {
            free_thread(t);
            return rc;
        }
    }
    return open_resolved(s, t, out);
}

int dk_thread_open_names(dk_sampler *s, const char *const *names, size_t n, dk_thread **out)
{
    int rc = check_count(s, n, out);
    if (rc != 0)
        return rc;
    if (names == NULL)
        return dk__fail(DK_EINVAL, "dk_thread_open_names: names must not be NULL");
    dk_thread *t = calloc(1, sizeof *t);
    if (t == NULL)
        return dk__fail(DK_ENOMEM, "dk_thread_open_names: out of memory");
    t->n = n;
    for (size_t i = 0; i < n; i++) {
        rc = dk__resolve_spec(s, names[i], &t->events[i], &t->mode[i], &t->label[i]);
        if (rc != 0) {
            free_thread(t);
            return rc;
        }
        t->asked[i] = strdup(names[i]);
        if (t->asked[i] == NULL) {
            free_thread(t);
            return dk__fail(DK_ENOMEM, "dk_thread_open_names: out of memory");
        }
    }
    return open_resolved(s, t, out);
}

static int check_owner(const dk_thread *t, const char *what)
{
    if (t == NULL)
        return dk__fail(DK_EINVAL, "%s: thread sampler must not be NULL", what);
    if (!pthread_equal(t->owner, pthread_self()))
        return dk__fail(DK_ETHREAD,
                        "%s: this thread sampler counts the thread that opened it; open one on "
                        "this thread instead",
                        what);
    return 0;
}

int dk_thread_start(dk_thread *t)
{
    int rc = check_owner(t, "dk_thread_start");
    if (rc != 0 || t->running)
        return rc;
    dk_sampler *s = t->sampler;
    pthread_mutex_lock(&s->lock);
    if (s->released) {
        pthread_mutex_unlock(&s->lock);
        return dk__fail(DK_ESTATE, "dk_thread_start: the sampler has given its counters back");
    }
    rc = s->backend->thread_start(t);
    if (rc == 0) {
        t->running = true;
        s->running++;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int dk_thread_sample(dk_thread *t, uint64_t *values)
{
    if (DK__UNLIKELY(t == NULL || values == NULL))
        return dk__fail(DK_EINVAL, "dk_thread_sample: thread sampler and values must not be NULL");
    if (DK__UNLIKELY(!pthread_equal(t->owner, pthread_self())))
        return check_owner(t, "dk_thread_sample");
    if (DK__UNLIKELY(!t->running))
        return dk__fail(DK_ESTATE, "dk_thread_sample: the thread sampler is not running; call "
                                   "dk_thread_start first");
    return t->read(t, values, NULL);
}

int dk_thread_read(dk_thread *t, uint64_t *values, dk_reading *info)
{
    if (t == NULL || values == NULL)
        return dk__fail(DK_EINVAL, "dk_thread_read: thread sampler and values must not be NULL");
    int rc = check_owner(t, "dk_thread_read");
    if (rc != 0)
        return rc;
    if (!t->running)
        return dk__fail(DK_ESTATE, "dk_thread_read: the thread sampler is not running; call "
                                   "dk_thread_start first");
    if (info != NULL)
        memset(info, 0, sizeof *info);
    rc = t->read(t, values, info);
    if (rc == 0 && info != NULL && info->time_enabled == 0)
        info->counted = true; /* the backend does not time-share */
    return rc;
}

int dk_thread_sample_perf_levels(dk_thread *t, uint64_t *values, size_t levels)
{
    if (t == NULL || values == NULL)
        return dk__fail(DK_EINVAL, "dk_thread_sample_perf_levels: thread sampler and values must "
                                   "not be NULL");
    int rc = check_owner(t, "dk_thread_sample_perf_levels");
    if (rc != 0)
        return rc;
    dk_sampler *s = t->sampler;
    if (s->backend->thread_perf_levels == NULL || s->perf_levels == 0)
        return dk__fail(DK_ENOTSUP,
                        "the %s backend does not split counts by CPU performance "
                        "level",
                        s->backend->name);
    if (levels != s->perf_levels)
        return dk__fail(DK_EINVAL,
                        "dk_thread_sample_perf_levels: %zu levels asked, this CPU has "
                        "%zu",
                        levels, s->perf_levels);
    if (!t->running)
        return dk__fail(DK_ESTATE, "dk_thread_sample_perf_levels: the thread sampler is not "
                                   "running");
    return s->backend->thread_perf_levels(t, values);
}

static int stop(dk_thread *t)
{
    dk_sampler *s = t->sampler;
    pthread_mutex_lock(&s->lock);
    int rc = s->backend->thread_stop(t);
    t->running = false;
    s->running--;
    int settled = dk__sampler_settle(s);
    pthread_mutex_unlock(&s->lock);
    return rc != 0 ? rc : settled;
}

int dk_thread_stop(dk_thread *t)
{
    int rc = check_owner(t, "dk_thread_stop");
    if (rc != 0 || !t->running)
        return rc;
    return stop(t);
}

bool dk_thread_is_running(const dk_thread *t) { return t != NULL && t->running; }

size_t dk_thread_event_count(const dk_thread *t) { return t != NULL ? t->n : 0; }

const char *dk_thread_event_name(const dk_thread *t, size_t i)
{
    return t != NULL && i < t->n ? dk__thread_label(t, i) : NULL;
}

void dk_thread_close(dk_thread *t)
{
    if (t == NULL)
        return;
    if (t->running)
        (void)stop(t);
    t->sampler->backend->thread_close(t);
    dk__sampler_unref(t->sampler);
    free_thread(t);
}
