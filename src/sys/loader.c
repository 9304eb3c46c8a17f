/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * loader.c - open kperf.framework and kperfdata.framework with dlopen() and
 * resolve every symbol, all or nothing (the optional kpc.period/kpc.actionid
 * symbols are NULL when absent).
 *
 * Each framework is opened at most once per root directory and never
 * unloaded (image_cache.h): the vtables handed out point into
 * process-lifetime storage, so no caller can ever hold a function pointer
 * into an unmapped image. A failed load leaves nothing behind and may be
 * retried.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkperf/kperf.h"
#include "sys/image_cache.h"
#include "util/util.h"

_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "dlsym results must fit a function pointer");

/* What one framework's load resolves: its vtable, kept by image_cache.c. */
typedef union loaded {
    dk_kperf_vtable kperf;
    dk_kperfdata_vtable kperfdata;
} loaded;

const char *dk_framework_root(const char *root)
{
    if (root != NULL)
        return root;
    const char *env = getenv(DK_FRAMEWORK_ROOT_ENV);
    return env != NULL ? env : "";
}

static void clear_error(dk_load_error *err)
{
    if (err == NULL)
        return;
    err->kind = DK_LOAD_OK;
    err->path[0] = '\0';
    err->symbol[0] = '\0';
    err->message[0] = '\0';
}

static int load_failed(dk_load_error *err, dk_load_failure kind, const char *path,
                       const char *symbol, const char *message)
{
    if (err != NULL) {
        err->kind = kind;
        dk__strlcpy(err->path, path, sizeof err->path);
        dk__strlcpy(err->symbol, symbol != NULL ? symbol : "", sizeof err->symbol);
        dk__strlcpy(err->message, message, sizeof err->message);
    }
    return dk__fail(DK_ELOAD, "%s", message);
}

/* <root><path>, root being a dk__root_key (so no slash is doubled); -1
 * when it does not fit. */
static int join_root(char *out, size_t size, const char *root, const char *path)
{
    int n = snprintf(out, size, "%s%s", root, path);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/*
 * Open the framework at <root><path>. On failure fills err and returns
 * NULL; the caller holds the image cache's lock, which also serialises
 * dlerror().
 */
static void *open_framework(const char *framework, const char *root, const char *rel, char *path,
                            size_t path_size, dk_load_error *err, int *rc)
{
    char message[sizeof err->message];
    if (join_root(path, path_size, root, rel) != 0) {
        snprintf(message, sizeof message,
                 "cannot open %s: the root \"%.256s...\" makes its path longer than %d bytes",
                 framework, root, DK_LOAD_PATH_MAX - 1);
        *rc = load_failed(err, DK_LOAD_PATH, root, NULL, message);
        return NULL;
    }
    void *handle = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) {
        const char *why = dlerror();
        snprintf(message, sizeof message, "cannot open %s at %.1023s: %.400s", framework, path,
                 why != NULL ? why : "unknown dlopen error");
        *rc = load_failed(err, DK_LOAD_OPEN, path, NULL, message);
    }
    return handle;
}

static int missing_symbol(void *handle, const char *framework, const char *path, const char *symbol,
                          dk_load_error *err)
{
    char message[sizeof err->message];
    snprintf(message, sizeof message, "%s at %.1023s lacks the symbol %.63s", framework, path,
             symbol);
    dlclose(handle);
    return load_failed(err, DK_LOAD_SYMBOL, path, symbol, message);
}

/* Resolve every symbol of one framework into its vtable; *missing names the
 * first one absent. */
typedef void (*fill_fn)(loaded *e, void *handle, const char **missing);

#define DK__RESOLVE_INTO(field, name)                 \
    if (*missing == NULL) {                           \
        void *sym = dlsym(handle, #name);             \
        if (sym == NULL)                              \
            *missing = #name;                         \
        else                                          \
            memcpy(&e->field.name, &sym, sizeof sym); \
    }
#define DK__RESOLVE_KPERF(name) DK__RESOLVE_INTO(kperf, name)
#define DK__RESOLVE_KPERFDATA(name) DK__RESOLVE_INTO(kperfdata, name)

/* An optional symbol: NULL when absent, never a failed load. */
#define DK__RESOLVE_OPTIONAL(name)                    \
    if (*missing == NULL) {                           \
        void *sym = dlsym(handle, #name);             \
        e->kperf.name = NULL;                         \
        if (sym != NULL)                              \
            memcpy(&e->kperf.name, &sym, sizeof sym); \
    }

static void fill_kperf(loaded *e, void *handle, const char **missing)
{
    DK_KPERF_SYMBOLS(DK__RESOLVE_KPERF)
    DK_KPERF_OPTIONAL_SYMBOLS(DK__RESOLVE_OPTIONAL)
}

static void fill_kperfdata(loaded *e, void *handle, const char **missing)
{
    DK_KPERFDATA_SYMBOLS(DK__RESOLVE_KPERFDATA)
}

#undef DK__RESOLVE_OPTIONAL
#undef DK__RESOLVE_KPERF
#undef DK__RESOLVE_KPERFDATA
#undef DK__RESOLVE_INTO

typedef struct load_args {
    const char *framework; /* "kperf.framework" */
    const char *path;      /* DK_KPERF_PATH or DK_KPERFDATA_PATH */
    fill_fn fill;
    dk_load_error *err;
} load_args;

/* dk__image_fill: open one framework and resolve all its symbols, or nothing. */
static int load_framework(const char *root, void *slot, void *ctx)
{
    const load_args *a = ctx;
    int rc = 0;
    char full[DK_LOAD_PATH_MAX];
    void *handle = open_framework(a->framework, root, a->path, full, sizeof full, a->err, &rc);
    if (handle == NULL)
        return rc;
    const char *missing = NULL;
    a->fill(slot, handle, &missing);
    if (missing != NULL)
        return missing_symbol(handle, a->framework, full, missing, a->err);
    return 0;
}

/* Load framework (at <root><path>) once per root, all or nothing. */
static int load(const char *root, const char *framework, const char *path, fill_fn fill,
                loaded **out, dk_load_error *err)
{
    clear_error(err);
    load_args a = {framework, path, fill, err};
    void *slot = NULL;
    int rc = dk__image_once(framework, root, sizeof(loaded), load_framework, &a, &slot);
    *out = slot;
    return rc;
}

static int no_output(const char *who, dk_load_error *err)
{
    clear_error(err);
    if (err != NULL)
        err->kind = DK_LOAD_ARGUMENT;
    return dk__fail(DK_EINVAL, "%s: out must not be NULL", who);
}

int dk_kperf_load(const char *root, const dk_kperf_vtable **out, dk_load_error *err)
{
    if (out == NULL)
        return no_output("dk_kperf_load", err);
    *out = NULL;
    loaded *e = NULL;
    int rc = load(root, "kperf.framework", DK_KPERF_PATH, fill_kperf, &e, err);
    if (rc == 0)
        *out = &e->kperf;
    return rc;
}

int dk_kperfdata_load(const char *root, const dk_kperfdata_vtable **out, dk_load_error *err)
{
    if (out == NULL)
        return no_output("dk_kperfdata_load", err);
    *out = NULL;
    loaded *e = NULL;
    int rc = load(root, "kperfdata.framework", DK_KPERFDATA_PATH, fill_kperfdata, &e, err);
    if (rc == 0)
        *out = &e->kperfdata;
    return rc;
}
