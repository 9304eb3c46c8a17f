/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sampler.c - dk_sampler: choosing a backend, taking and giving back the
 * counters, and the reference count that keeps a sampler alive while
 * thread samplers use it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backends.h"
#include "core/core.h"
#include "dkperf/kperf.h"

#define DK__BACKEND_ENV "DKPERF_BACKEND"

/* The backend of a kind; DK_ENOTSUP for one this build lacks. */
static int backend_of(dk_backend_kind kind, const dk__backend **out)
{
    for (size_t i = 0; i < dk__backend_count; i++) {
        const dk__backend_entry *e = &dk__backends[i];
        if (e->kind != kind)
            continue;
        *out = e->backend;
        if (e->backend == NULL)
            return dk__fail(DK_ENOTSUP, "the %s backend exists only on %s", e->name, e->os);
        return 0;
    }
    return dk__fail(DK_EINVAL, "dk_sampler_options.backend %d is not a backend", (int)kind);
}

/* The backend DKPERF_BACKEND names; DK_BACKEND_AUTO when unset. */
static int backend_from_env(dk_backend_kind *kind)
{
    const char *v = getenv(DK__BACKEND_ENV);
    *kind = DK_BACKEND_AUTO;
    if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0)
        return 0;
    for (size_t i = 0; i < dk__backend_count; i++) {
        if (strcmp(dk__backends[i].name, v) == 0) {
            *kind = dk__backends[i].kind;
            return 0;
        }
    }
    return dk__fail(DK_EINVAL, "%s=%s names no backend (kperf, selfcounts, perf_event)",
                    DK__BACKEND_ENV, v);
}

/* The order to probe: backends_<os>.c decides, the Darwin backends first
 * on a Mac or wherever a framework root is given. */
static size_t probe_order(const dk_sampler_options *o, const dk__backend **order)
{
    return dk__backend_probe_order(dk_framework_root(o->framework_root)[0] != '\0', order);
}

static void destroy(dk_sampler *s)
{
    s->backend->close(s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

void dk__sampler_unref(dk_sampler *s)
{
    pthread_mutex_lock(&s->lock);
    bool last = --s->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (last)
        destroy(s);
}

int dk__sampler_counts(const dk_sampler *s, const char *what)
{
    if (!(s->flags & DK_SAMPLER_QUERY_ONLY))
        return 0;
    return dk__fail(DK_EINVAL,
                    "%s: the sampler was opened with DK_SAMPLER_QUERY_ONLY, which reads the event "
                    "database but never takes the counters; open another sampler without that "
                    "flag to count",
                    what);
}

int dk__sampler_settle(dk_sampler *s)
{
    if (!s->released || !s->holding || s->running > 0)
        return 0;
    s->holding = false;
    return s->backend->release(s);
}

/* Open and acquire one backend into a fresh sampler. */
static int try_backend(const dk__backend *b, const dk_sampler_options *o, dk_sampler **out)
{
    dk_sampler *s = calloc(1, sizeof *s);
    if (s == NULL)
        return dk__fail(DK_ENOMEM, "dk_sampler_open: out of memory");
    s->backend = b;
    s->flags = o->flags;
    s->refs = 1;
    s->caps.size = sizeof s->caps;
    s->caps.name = b->name;
    dk__strlcpy(s->root, dk_framework_root(o->framework_root), sizeof s->root);
    pthread_mutex_init(&s->lock, NULL);
    int rc = b->open(s, o);
    if (rc != 0) {
        pthread_mutex_destroy(&s->lock);
        free(s);
        return rc;
    }
    /* A query-only sampler only checks that it could take the counters. */
    if (o->flags & DK_SAMPLER_QUERY_ONLY)
        rc = b->check != NULL ? b->check(s) : 0;
    else
        rc = b->acquire(s);
    if (rc != 0) {
        destroy(s);
        return rc;
    }
    s->holding = !(o->flags & DK_SAMPLER_QUERY_ONLY);
    *out = s;
    return 0;
}

static void append(char *buf, size_t size, const char *text)
{
    size_t used = strlen(buf);
    if (used < size)
        snprintf(buf + used, size - used, "%s", text);
}

/* What the chosen backend lacks compared with the ones that failed: the
 * real cause first, then what the fallback still does. */
static void explain(dk_sampler *s, const char *failures)
{
    if (failures[0] == '\0')
        return;
    snprintf(s->why, sizeof s->why, "%s", failures);
    if (s->backend->explain != NULL) {
        char more[400] = "";
        s->backend->explain(s, more, sizeof more);
        append(s->why, sizeof s->why, more);
    } else {
        append(s->why, sizeof s->why, "; using ");
        append(s->why, sizeof s->why, s->backend->name);
    }
}

static int sampler_open(dk_sampler **out, const dk_sampler_options *opts)
{
    if (out == NULL)
        return dk__fail(DK_EINVAL, "dk_sampler_open: out must not be NULL");
    *out = NULL;

    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    if (opts != NULL) {
        /* Sizes an older dkperf.h gave: each ends at a field's end. A size
         * inside a field would copy part of it (a byte of an enum, say). */
        const size_t ends[] = {offsetof(dk_sampler_options, framework_root) +
                                   sizeof o.framework_root,
                               offsetof(dk_sampler_options, backend) + sizeof o.backend,
                               offsetof(dk_sampler_options, flags) + sizeof o.flags};
        bool at_end = opts->size >= sizeof o;
        for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++)
            at_end = at_end || opts->size == ends[i];
        if (!at_end)
            return dk__fail(DK_EINVAL,
                            "dk_sampler_options.size is %zu, which is no size this struct ever "
                            "had (it ends inside a field): set it to sizeof(dk_sampler_options)",
                            opts->size);
        /* A newer caller's larger struct is accepted only when this library
         * would ignore nothing it asks for (cf. libpfm4's pfmlib_check_struct). */
        const unsigned char *tail = (const unsigned char *)opts;
        for (size_t i = sizeof o; i < opts->size; i++)
            if (tail[i] != 0)
                return dk__fail(DK_EINVAL,
                                "dk_sampler_options.size is %zu, larger than the %zu bytes this "
                                "libdkperf knows, and byte %zu is not zero: the caller sets "
                                "options this version cannot honour; build against this "
                                "libdkperf's dkperf.h or use a newer libdkperf",
                                opts->size, sizeof o, i);
        memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
        o.size = sizeof o;
    }
    const unsigned known_flags = DK_SAMPLER_USER_ONLY | DK_SAMPLER_QUERY_ONLY;
    if (o.flags & ~known_flags)
        return dk__fail(DK_EINVAL, "dk_sampler_options.flags has unknown bits 0x%x",
                        o.flags & ~known_flags);

    dk_backend_kind kind = o.backend;
    if (kind == DK_BACKEND_AUTO) {
        int rc = backend_from_env(&kind);
        if (rc != 0)
            return rc;
    }
    if (kind != DK_BACKEND_AUTO) {
        const dk__backend *b = NULL;
        int rc = backend_of(kind, &b);
        return rc != 0 ? rc : try_backend(b, &o, out);
    }

    const dk__backend *order[DK__PROBE_MAX];
    size_t n = probe_order(&o, order);
    if (n == 0)
        return dk__fail(DK_ENOTSUP, "no backend of libdkperf works on this operating system");
    char failures[1024] = "";
    int first_rc = 0;
    char first[640] = "";
    for (size_t i = 0; i < n; i++) {
        int rc = try_backend(order[i], &o, out);
        if (rc == 0) {
            (*out)->passed_rc = first_rc;
            dk__strlcpy((*out)->passed, first, sizeof(*out)->passed);
            explain(*out, failures);
            return 0;
        }
        if (first_rc == 0) {
            first_rc = rc;
            dk__strlcpy(first, dk_last_error(), sizeof first);
        }
        char line[600];
        snprintf(line, sizeof line, "%s%s: %.500s", failures[0] ? "; " : "", order[i]->name,
                 dk_last_error());
        append(failures, sizeof failures, line);
    }
    /* Report the first backend's error: it is the one that counts most. */
    return dk__fail(first_rc, "no backend can count: %s", failures);
}

/* Success leaves dk_last_error() as the caller left it, though the way
 * there may fail (this call falls back to another backend). */
int dk_sampler_open(dk_sampler **out, const dk_sampler_options *opts)
{
    dk__error_state saved;
    dk__error_save(&saved);
    int rc = sampler_open(out, opts);
    if (rc == 0)
        dk__error_restore(&saved);
    return rc;
}

int dk_sampler_release(dk_sampler *s)
{
    if (s == NULL)
        return dk__fail(DK_EINVAL, "dk_sampler_release: sampler must not be NULL");
    pthread_mutex_lock(&s->lock);
    if (s->running > 0) {
        /* Say what runs, and how to stop each kind. */
        int n[3] = {s->running - s->running_groups - s->running_samplings, s->running_groups,
                    s->running_samplings};
        pthread_mutex_unlock(&s->lock);
        static const char *const kind[3] = {"thread sampler", "group", "sampling"};
        static const char *const stop[3] = {"dk_thread_stop", "dk_group_stop", "dk_sampling_stop"};
        char what[160] = "", how[80] = "";
        int kinds = 0, parts = 0;
        for (int i = 0; i < 3; i++)
            kinds += n[i] > 0;
        for (int i = 0; i < 3; i++) {
            if (n[i] <= 0)
                continue;
            size_t w = strlen(what), h = strlen(how);
            const char *sep = parts == 0 ? "" : parts + 1 == kinds ? " and " : ", ";
            snprintf(what + w, sizeof what - w, "%s%d %s%s", sep, n[i], kind[i],
                     n[i] == 1 ? "" : "s");
            snprintf(how + h, sizeof how - h, "%s%s", parts == 0 ? "" : ", ", stop[i]);
            parts++;
        }
        int all = n[0] + n[1] + n[2];
        return dk__fail(DK_ESTATE,
                        "cannot release the counters: %s %s still running; stop %s first (%s)",
                        what, all == 1 ? "is" : "are", all == 1 ? "it" : "them", how);
    }
    s->released = true;
    int rc = dk__sampler_settle(s);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

void dk_sampler_close(dk_sampler *s)
{
    if (s == NULL)
        return;
    pthread_mutex_lock(&s->lock);
    s->released = true;
    (void)dk__sampler_settle(s);
    pthread_mutex_unlock(&s->lock);
    dk__sampler_unref(s);
}

dk_cpu dk_sampler_cpu(const dk_sampler *s) { return s != NULL ? s->cpu : DK_CPU_UNKNOWN; }

const char *dk_sampler_backend(const dk_sampler *s) { return s != NULL ? s->backend->name : NULL; }

const char *dk_sampler_why(const dk_sampler *s) { return s != NULL ? s->why : NULL; }

const char *dk_sampler_notes(const dk_sampler *s) { return s != NULL ? s->notes : NULL; }

const dk_database *dk_sampler_database(const dk_sampler *s) { return s != NULL ? &s->db : NULL; }

const char *dk_sampler_framework_root(const dk_sampler *s)
{
    return s != NULL && s->backend->uses_framework_root ? s->root : NULL;
}

int dk_sampler_caps(const dk_sampler *s, dk_backend_caps *caps)
{
    if (s == NULL || caps == NULL)
        return dk__fail(DK_EINVAL, "dk_sampler_caps: sampler and caps must not be NULL");
    if (caps->size < offsetof(dk_backend_caps, name) + sizeof caps->name)
        return dk__fail(DK_EINVAL, "dk_backend_caps.size is %zu: set it to sizeof(dk_backend_caps)",
                        caps->size);
    /* Facts that take probing are found at the first call (each once). */
    if (s->backend->probe_caps != NULL)
        s->backend->probe_caps((dk_sampler *)s);
    size_t size = caps->size < sizeof s->caps ? caps->size : sizeof s->caps;
    memcpy(caps, &s->caps, size);
    if (size >= offsetof(dk_backend_caps, user_only) + sizeof caps->user_only)
        caps->user_only = s->caps.user_only || (s->flags & DK_SAMPLER_USER_ONLY);
    caps->size = size;
    return 0;
}

int dk_process_cpi(dk_sampler *s, int pid, uint64_t *instructions, uint64_t *cycles)
{
    if (s == NULL || instructions == NULL || cycles == NULL)
        return dk__fail(DK_EINVAL, "dk_process_cpi: sampler, instructions and cycles must not be "
                                   "NULL");
    if (s->backend->process_cpi == NULL)
        return dk__fail(DK_ENOTSUP,
                        "dk_process_cpi(%d): the %s backend has no running totals of a process "
                        "(macOS's proc_pid_rusage); count one with a process group instead "
                        "(dk_group_open with DK_SCOPE_PROCESS)",
                        pid, s->backend->name);
    return s->backend->process_cpi(s, pid, instructions, cycles);
}

size_t dk_sampler_perf_levels(const dk_sampler *s) { return s != NULL ? s->perf_levels : 0; }

const char *dk_sampler_perf_level_name(const dk_sampler *s, size_t level)
{
    return s != NULL && level < s->perf_levels ? s->perf_level_names[level] : NULL;
}
