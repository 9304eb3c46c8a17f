/*
 * loader.c - open kperf.framework and kperfdata.framework with dlopen() and
 * resolve every symbol, all or nothing.
 *
 * Each framework is opened at most once per root directory and never
 * unloaded: the vtables handed out point into process-lifetime storage, so
 * no caller can ever hold a function pointer into an unmapped image. A
 * mutex makes concurrent first loads safe. A failed load leaves nothing
 * behind and may be retried.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkperf/kperf.h"
#include "util/util.h"

_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "dlsym results must fit a function pointer");

/* One framework loaded under one root; the vtable lives as long as the process. */
typedef struct loaded {
    struct loaded *next;
    const char *path; /* which framework (DK_KPERF_PATH or DK_KPERFDATA_PATH) */
    char root[DK_LOAD_PATH_MAX];
    union {
        dk_kperf_vtable kperf;
        dk_kperfdata_vtable kperfdata;
    } vt;
} loaded;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static loaded *loaded_list;

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
 * NULL; the caller holds load_lock, which also serialises dlerror().
 */
static void *open_framework(const char *framework, const char *root, const char *rel,
                            char *path, size_t path_size, dk_load_error *err, int *rc)
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

static int missing_symbol(void *handle, const char *framework, const char *path,
                          const char *symbol, dk_load_error *err)
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

#define DK__RESOLVE_INTO(field, name)                    \
    if (*missing == NULL) {                              \
        void *sym = dlsym(handle, #name);                \
        if (sym == NULL)                                 \
            *missing = #name;                            \
        else                                             \
            memcpy(&e->vt.field.name, &sym, sizeof sym); \
    }
#define DK__RESOLVE_KPERF(name) DK__RESOLVE_INTO(kperf, name)
#define DK__RESOLVE_KPERFDATA(name) DK__RESOLVE_INTO(kperfdata, name)

static void fill_kperf(loaded *e, void *handle, const char **missing)
{
    DK_KPERF_SYMBOLS(DK__RESOLVE_KPERF)
}

static void fill_kperfdata(loaded *e, void *handle, const char **missing)
{
    DK_KPERFDATA_SYMBOLS(DK__RESOLVE_KPERFDATA)
}

#undef DK__RESOLVE_KPERF
#undef DK__RESOLVE_KPERFDATA
#undef DK__RESOLVE_INTO

/* Load framework (at <root><path>) once per root, all or nothing. */
static int load(const char *root, const char *framework, const char *path, fill_fn fill,
                loaded **out, dk_load_error *err)
{
    clear_error(err);
    char key[DK_LOAD_PATH_MAX];
    dk__root_key(dk_framework_root(root), key, sizeof key);
    root = key;
    int rc = 0;
    pthread_mutex_lock(&load_lock);
    for (loaded *e = loaded_list; e != NULL; e = e->next) {
        if (e->path == path && strcmp(e->root, root) == 0) {
            *out = e;
            goto done;
        }
    }
    char full[DK_LOAD_PATH_MAX];
    void *handle = open_framework(framework, root, path, full, sizeof full, err, &rc);
    if (handle == NULL)
        goto done;
    loaded *e = calloc(1, sizeof *e);
    if (e == NULL) {
        dlclose(handle);
        rc = dk__fail(DK_ENOMEM, "loading %s: out of memory", framework);
        goto done;
    }
    const char *missing = NULL;
    fill(e, handle, &missing);
    if (missing != NULL) {
        free(e);
        rc = missing_symbol(handle, framework, full, missing, err);
        goto done;
    }
    e->path = path;
    dk__strlcpy(e->root, root, sizeof e->root);
    e->next = loaded_list;
    loaded_list = e;
    *out = e;
done:
    pthread_mutex_unlock(&load_lock);
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
        *out = &e->vt.kperf;
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
        *out = &e->vt.kperfdata;
    return rc;
}
