/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sampling.c - dk_sampling: samples on counter overflow and on timers. The
 * core checks arguments, resolves names and holds the sampler's reference;
 * the backend arms the kernel and decodes its records.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

#define DK__SAMPLE_KNOWN                                                                \
    (DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_CPU | DK_SAMPLE_IP | DK_SAMPLE_PERIOD | \
     DK_SAMPLE_CALLCHAIN | DK_SAMPLE_READ | DK_SAMPLE_KERNEL_CALLCHAIN)
#define DK__SAMPLE_DEFAULT \
    (DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_CPU | DK_SAMPLE_IP | DK_SAMPLE_PERIOD)

static void free_sampling(dk_sampling *p)
{
    for (size_t i = 0; i < p->n; i++) {
        free((char *)p->asked[i].name);
        free(p->label[i]);
    }
    pthread_mutex_destroy(&p->drain_lock);
    free(p);
}

/* The drains this thread is inside of, innermost first: a callback that
 * drains its own sampling again is told so rather than blocking on the
 * drain it is called from, or decoding the buffer under it. */
typedef struct drain_frame {
    const dk_sampling *p;
    struct drain_frame *next;
} drain_frame;
static _Thread_local drain_frame *drains_here;

static bool draining_here(const dk_sampling *p)
{
    for (const drain_frame *f = drains_here; f != NULL; f = f->next)
        if (f->p == p)
            return true;
    return false;
}

/* The caller's options, of any size an older or newer header gives. */
static int copy_options(const dk_sampling_options *opts, dk_sampling_options *o)
{
    const dk_sampling_options init = DK_SAMPLING_OPTIONS_INIT;
    *o = init;
    if (opts == NULL)
        return 0;
    if (opts->size < offsetof(dk_sampling_options, max_frames) + sizeof o->max_frames)
        return dk__fail(DK_EINVAL,
                        "dk_sampling_options.size is %zu, which is no size this struct ever "
                        "had: set it to sizeof(dk_sampling_options)",
                        opts->size);
    const unsigned char *tail = (const unsigned char *)opts;
    for (size_t i = sizeof *o; i < opts->size; i++)
        if (tail[i] != 0)
            return dk__fail(DK_EINVAL,
                            "dk_sampling_options.size is %zu, larger than the %zu bytes this "
                            "libdkperf knows, and byte %zu is not zero: build against this "
                            "libdkperf's dkperf.h or use a newer libdkperf",
                            opts->size, sizeof *o, i);
    memcpy(o, opts, sizeof *o);
    o->size = sizeof *o;
    return 0;
}

static int sampling_open(dk_sampler *s, const dk_sampling_event *events, size_t n,
                         const dk_sampling_options *opts, dk_sampling **out)
{
    if (s == NULL || events == NULL || out == NULL)
        return dk__fail(DK_EINVAL, "dk_sampling_open: sampler, events and out must not be NULL");
    *out = NULL;
    int rc = dk__sampler_counts(s, "dk_sampling_open");
    if (rc != 0)
        return rc;
    if (n == 0 || n > DK_MAX_EVENTS)
        return dk__fail(DK_EINVAL, "dk_sampling_open: %zu events; give 1 to %d", n, DK_MAX_EVENTS);
    dk_sampling_options o;
    rc = copy_options(opts, &o);
    if (rc != 0)
        return rc;
    if (o.scope != DK_SCOPE_THREAD && o.scope != DK_SCOPE_PROCESS && o.scope != DK_SCOPE_SYSTEM)
        return dk__fail(DK_EINVAL, "dk_sampling_open: %d is not a scope", (int)o.scope);
    if (o.pid < 0)
        return dk__fail(DK_EINVAL, "dk_sampling_open: pid %d", o.pid);
    if (o.record == 0)
        o.record = DK__SAMPLE_DEFAULT;
    if (o.record & ~(unsigned)DK__SAMPLE_KNOWN)
        return dk__fail(DK_EINVAL, "dk_sampling_options.record has unknown bits 0x%x",
                        o.record & ~(unsigned)DK__SAMPLE_KNOWN);
    const unsigned known = DK_SAMPLING_ENABLE_ON_EXEC | DK_SAMPLING_INHERIT | DK_SAMPLING_OFF_CPU;
    if (o.flags & ~known)
        return dk__fail(DK_EINVAL, "dk_sampling_options.flags has unknown bits 0x%x",
                        o.flags & ~known);
    for (size_t i = 0; i < n; i++) {
        if (events[i].name == NULL || events[i].name[0] == '\0')
            return dk__fail(DK_EINVAL, "dk_sampling_open: event %zu has no name", i);
        if (events[i].period != 0 && events[i].freq != 0)
            return dk__fail(DK_EINVAL,
                            "dk_sampling_open: %s has both a period (%llu) and a frequency "
                            "(%llu Hz): give one",
                            events[i].name, (unsigned long long)events[i].period,
                            (unsigned long long)events[i].freq);
    }
    /* The backend probed first (kperf) samples; the one in use cannot: say
     * why the first was passed over. */
    /* Passed over for privileges (or another client holding the
     * counters): that is the error, as dk_thread_open gives for an event
     * only kperf counts; for any other reason the backend cannot sample. */
    if (s->backend->sampling_open == NULL && s->passed_rc != 0)
        return dk__fail(s->passed_rc == DK_EPERM || s->passed_rc == DK_EBUSY ? s->passed_rc
                                                                             : DK_ENOTSUP,
                        "the %s backend cannot sample, and the kperf backend, which samples, "
                        "could not be used: %s. Sampling needs root: kperf's and kdebug's "
                        "sysctls are configured only by root or the owner of tracing",
                        s->backend->name, s->passed);
    if (s->backend->sampling_open == NULL)
        return dk__fail(DK_ENOTSUP,
                        "the %s backend cannot sample: it has no counter-overflow interrupts "
                        "or timers (on macOS, sampling needs the kperf backend, which needs root)",
                        s->backend->name);

    dk_sampling *p = calloc(1, sizeof *p);
    if (p == NULL)
        return dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
    pthread_mutex_init(&p->drain_lock, NULL);
    p->sampler = s;
    p->opts = o;
    for (size_t i = 0; i < n; i++) {
        p->asked[i] = events[i];
        p->asked[i].name = strdup(events[i].name);
        if (p->asked[i].name == NULL) {
            free_sampling(p);
            return dk__fail(DK_ENOMEM, "dk_sampling_open: out of memory");
        }
        p->n = i + 1;
    }
    for (size_t i = 0; i < n && rc == 0; i++)
        if (strcmp(events[i].name, "timer") != 0)
            rc = dk__resolve_spec(s, events[i].name, &p->events[i], &p->mode[i], &p->label[i]);
    if (rc != 0) {
        free_sampling(p);
        return rc;
    }

    pthread_mutex_lock(&s->lock);
    if (s->released) {
        pthread_mutex_unlock(&s->lock);
        free_sampling(p);
        return dk__fail(DK_ESTATE, "the sampler has given its counters back");
    }
    rc = s->backend->sampling_open(p);
    if (rc == 0)
        s->refs++;
    pthread_mutex_unlock(&s->lock);
    if (rc != 0) {
        free_sampling(p);
        return rc;
    }
    *out = p;
    if (o.flags & DK_SAMPLING_ENABLE_ON_EXEC) {
        rc = dk_sampling_start(p);
        if (rc != 0) {
            dk_sampling_close(p);
            *out = NULL;
        }
    }
    return rc;
}

int dk_sampling_open(dk_sampler *s, const dk_sampling_event *events, size_t n,
                     const dk_sampling_options *opts, dk_sampling **out)
{
    return sampling_open(s, events, n, opts, out);
}

int dk_sampling_start(dk_sampling *p)
{
    if (p == NULL)
        return dk__fail(DK_EINVAL, "dk_sampling_start: sampling must not be NULL");
    dk_sampler *s = p->sampler;
    pthread_mutex_lock(&s->lock);
    int rc = 0;
    if (!p->running) {
        if (s->released)
            rc = dk__fail(DK_ESTATE, "dk_sampling_start: the sampler has given its counters back");
        else
            rc = s->backend->sampling_start(p);
        if (rc == 0) {
            p->running = true;
            s->running++;
            s->running_samplings++;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static int stop(dk_sampling *p)
{
    dk_sampler *s = p->sampler;
    pthread_mutex_lock(&s->lock);
    if (!p->running) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    int rc = s->backend->sampling_stop(p);
    p->running = false;
    s->running--;
    s->running_samplings--;
    int settled = dk__sampler_settle(s);
    pthread_mutex_unlock(&s->lock);
    return rc != 0 ? rc : settled;
}

int dk_sampling_stop(dk_sampling *p)
{
    if (p == NULL)
        return dk__fail(DK_EINVAL, "dk_sampling_stop: sampling must not be NULL");
    return stop(p);
}

int dk_sampling_drain(dk_sampling *p, dk_sample_fn fn, void *ctx)
{
    if (p == NULL || fn == NULL)
        return dk__fail(DK_EINVAL, "dk_sampling_drain: sampling and fn must not be NULL");
    if (draining_here(p))
        return dk__fail(DK_ESTATE, "dk_sampling_drain: called from the callback of a drain of "
                                   "the same sampling, which is still running; return from the "
                                   "callback and drain again");
    drain_frame here = {p, drains_here};
    drains_here = &here;
    pthread_mutex_lock(&p->drain_lock); /* drains from two threads take turns */
    int rc = p->sampler->backend->sampling_drain(p, fn, ctx);
    pthread_mutex_unlock(&p->drain_lock);
    drains_here = here.next;
    return rc;
}

int dk_sampling_wait(dk_sampling *p, int timeout_ms)
{
    if (p == NULL)
        return dk__fail(DK_EINVAL, "dk_sampling_wait: sampling must not be NULL");
    /* A backend's wait may take the drain lock this thread holds. */
    if (draining_here(p))
        return dk__fail(DK_ESTATE, "dk_sampling_wait: called from the callback of a drain of "
                                   "the same sampling, which is still running; return from the "
                                   "callback, then wait");
    return p->sampler->backend->sampling_wait(p, timeout_ms);
}

int dk_sampling_stats_get(const dk_sampling *p, dk_sampling_stats *out)
{
    if (p == NULL || out == NULL)
        return dk__fail(DK_EINVAL, "dk_sampling_stats_get: sampling and out must not be NULL");
    /* A drain in another thread may be counting (dk__stat_add). */
    out->samples = __atomic_load_n(&p->stats.samples, __ATOMIC_RELAXED);
    out->lost = __atomic_load_n(&p->stats.lost, __ATOMIC_RELAXED);
    out->throttled = __atomic_load_n(&p->stats.throttled, __ATOMIC_RELAXED);
    out->unthrottled = __atomic_load_n(&p->stats.unthrottled, __ATOMIC_RELAXED);
    return 0;
}

size_t dk_sampling_event_count(const dk_sampling *p) { return p != NULL ? p->n : 0; }

const char *dk_sampling_event_name(const dk_sampling *p, size_t i)
{
    return p != NULL && i < p->n ? dk__sampling_label(p, i) : NULL;
}

int dk_sampling_event_rate(const dk_sampling *p, size_t i, uint64_t *period, uint64_t *freq)
{
    if (p == NULL || i >= p->n)
        return dk__fail(DK_EINVAL, "dk_sampling_event_rate: no event %zu", i);
    if (period != NULL)
        *period = p->period[i];
    if (freq != NULL)
        *freq = p->freq[i];
    return 0;
}

void dk_sampling_close(dk_sampling *p)
{
    if (p == NULL)
        return;
    /* Freeing p under the drain in progress would leave it decoding freed
     * memory: refused, as a nested drain is (p stays open). */
    if (draining_here(p)) {
        (void)dk__fail(DK_ESTATE, "dk_sampling_close: called from the callback of a drain of "
                                  "the same sampling, which is still running; the sampling "
                                  "stays open: close it once the drain has returned");
        return;
    }
    (void)stop(p);
    p->sampler->backend->sampling_close(p);
    dk__sampler_unref(p->sampler);
    free_sampling(p);
}
