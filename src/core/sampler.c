/*
 * sampler.c - dk_sampler: choosing a backend, taking and giving back the
 * counters, and the reference count that keeps a sampler alive while
 * thread samplers use it.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define DK__BACKEND_ENV "DKPERF_BACKEND"

static const struct {
    const char *name;
    dk_backend_kind kind;
    const dk__backend *backend;
} backends[] = {
    {"kperf", DK_BACKEND_KPERF, &dk__backend_kperf},
};

static const dk__backend *backend_of(dk_backend_kind kind)
{
    for (size_t i = 0; i < DK__COUNT_OF(backends); i++)
        if (backends[i].kind == kind)
            return backends[i].backend;
    return NULL;
}

/* The backend DKPERF_BACKEND names; DK_BACKEND_AUTO when unset. */
static int backend_from_env(dk_backend_kind *kind)
{
    const char *v = getenv(DK__BACKEND_ENV);
    *kind = DK_BACKEND_AUTO;
    if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0)
        return 0;
    for (size_t i = 0; i < DK__COUNT_OF(backends); i++) {
        if (strcmp(backends[i].name, v) == 0) {
            *kind = backends[i].kind;
            return 0;
        }
    }
    return dk__fail(DK_EINVAL, "%s=%s names no backend this build has (kperf)", DK__BACKEND_ENV,
                    v);
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

int dk__sampler_settle(dk_sampler *s)
{
    if (!s->released || !s->holding || s->running > 0)
        return 0;
    s->holding = false;
    return s->backend->release(s);
}

int dk_sampler_open(dk_sampler **out, const dk_sampler_options *opts)
{
    if (out == NULL)
        return dk__fail(DK_EINVAL, "dk_sampler_open: out must not be NULL");
    *out = NULL;

    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    if (opts != NULL) {
        size_t known = offsetof(dk_sampler_options, framework_root);
        if (opts->size < known + sizeof o.framework_root)
            return dk__fail(DK_EINVAL,
                            "dk_sampler_options.size is %zu: set it to sizeof(dk_sampler_options)",
                            opts->size);
        memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
        o.size = sizeof o;
    }
    if (o.flags & ~DK_SAMPLER_USER_ONLY)
        return dk__fail(DK_EINVAL, "dk_sampler_options.flags has unknown bits 0x%x",
                        o.flags & ~DK_SAMPLER_USER_ONLY);

    dk_backend_kind kind = o.backend;
    if (kind == DK_BACKEND_AUTO) {
        int rc = backend_from_env(&kind);
        if (rc != 0)
            return rc;
    }
    if (kind == DK_BACKEND_AUTO)
        kind = DK_BACKEND_KPERF;
    const dk__backend *b = backend_of(kind);
    if (b == NULL)
        return dk__fail(DK_EINVAL, "dk_sampler_options.backend %d is not a backend of this build",
                        (int)kind);

    dk_sampler *s = calloc(1, sizeof *s);
    if (s == NULL)
        return dk__fail(DK_ENOMEM, "dk_sampler_open: out of memory");
    s->backend = b;
    s->flags = o.flags;
    s->refs = 1;
    pthread_mutex_init(&s->lock, NULL);

    int rc = b->open(s, &o);
    if (rc != 0) {
        pthread_mutex_destroy(&s->lock);
        free(s);
        return rc;
    }
    rc = b->acquire(s);
    if (rc != 0) {
        destroy(s);
        return rc;
    }
    s->holding = true;
    *out = s;
    return 0;
}

int dk_sampler_release(dk_sampler *s)
{
    if (s == NULL)
        return dk__fail(DK_EINVAL, "dk_sampler_release: sampler must not be NULL");
    pthread_mutex_lock(&s->lock);
    if (s->running > 0) {
        int running = s->running;
        pthread_mutex_unlock(&s->lock);
        return dk__fail(DK_ESTATE,
                        "cannot release the counters: %d thread sampler%s still running; stop "
                        "them first",
                        running, running == 1 ? " is" : "s are");
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

const dk_database *dk_sampler_database(const dk_sampler *s) { return s != NULL ? &s->db : NULL; }
