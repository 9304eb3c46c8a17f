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
#include "internal.h"

_Static_assert(sizeof(void *) == sizeof(void (*)(void)),
               "dlsym results must fit a function pointer");

typedef struct loaded_kperf {
    struct loaded_kperf *next;
    char root[DK_LOAD_PATH_MAX];
    dk_kperf_vtable vt;
} loaded_kperf;

typedef struct loaded_kperfdata {
    struct loaded_kperfdata *next;
    char root[DK_LOAD_PATH_MAX];
    dk_kperfdata_vtable vt;
} loaded_kperfdata;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static loaded_kperf *kperf_list;
static loaded_kperfdata *kperfdata_list;

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

/*
 * Build <root><framework path> without a doubled slash. Returns 0, or -1
 * when it does not fit.
 */
static int join_root(char *out, size_t size, const char *root, const char *path)
{
    size_t len = strlen(root);
    while (len > 0 && root[len - 1] == '/')
        len--;
    int n = snprintf(out, size, "%.*s%s", (int)len, root, path);
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

/* Resolve one symbol into a vtable field; remember the first one missing. */
#define DK__RESOLVE(name)                                \
    if (missing == NULL) {                               \
        void *sym = dlsym(handle, #name);                \
        if (sym == NULL)                                 \
            missing = #name;                             \
        else                                             \
            memcpy(&entry->vt.name, &sym, sizeof sym);   \
    }

int dk_kperf_load(const char *root, const dk_kperf_vtable **out, dk_load_error *err)
{
    clear_error(err);
    if (out == NULL) {
        if (err != NULL)
            err->kind = DK_LOAD_ARGUMENT;
        return dk__fail(DK_EINVAL, "dk_kperf_load: out must not be NULL");
    }
    *out = NULL;
    root = dk_framework_root(root);

    int rc = 0;
    pthread_mutex_lock(&load_lock);
    for (loaded_kperf *e = kperf_list; e != NULL; e = e->next) {
        if (strcmp(e->root, root) == 0) {
            *out = &e->vt;
            goto done;
        }
    }

    char path[DK_LOAD_PATH_MAX];
    void *handle = open_framework("kperf.framework", root, DK_KPERF_PATH, path, sizeof path,
                                  err, &rc);
    if (handle == NULL)
        goto done;

    loaded_kperf *entry = calloc(1, sizeof *entry);
    if (entry == NULL) {
        dlclose(handle);
        rc = dk__fail(DK_ENOMEM, "loading kperf.framework: out of memory");
        goto done;
    }
    const char *missing = NULL;
    DK_KPERF_SYMBOLS(DK__RESOLVE)
    if (missing != NULL) {
        free(entry);
        rc = missing_symbol(handle, "kperf.framework", path, missing, err);
        goto done;
    }
    dk__strlcpy(entry->root, root, sizeof entry->root);
    entry->next = kperf_list;
    kperf_list = entry;
    *out = &entry->vt;
done:
    pthread_mutex_unlock(&load_lock);
    return rc;
}

int dk_kperfdata_load(const char *root, const dk_kperfdata_vtable **out, dk_load_error *err)
{
    clear_error(err);
    if (out == NULL) {
        if (err != NULL)
            err->kind = DK_LOAD_ARGUMENT;
        return dk__fail(DK_EINVAL, "dk_kperfdata_load: out must not be NULL");
    }
    *out = NULL;
    root = dk_framework_root(root);

    int rc = 0;
    pthread_mutex_lock(&load_lock);
    for (loaded_kperfdata *e = kperfdata_list; e != NULL; e = e->next) {
        if (strcmp(e->root, root) == 0) {
            *out = &e->vt;
            goto done;
        }
    }

    char path[DK_LOAD_PATH_MAX];
    void *handle = open_framework("kperfdata.framework", root, DK_KPERFDATA_PATH, path,
                                  sizeof path, err, &rc);
    if (handle == NULL)
        goto done;

    loaded_kperfdata *entry = calloc(1, sizeof *entry);
    if (entry == NULL) {
        dlclose(handle);
        rc = dk__fail(DK_ENOMEM, "loading kperfdata.framework: out of memory");
        goto done;
    }
    const char *missing = NULL;
    DK_KPERFDATA_SYMBOLS(DK__RESOLVE)
    if (missing != NULL) {
        free(entry);
        rc = missing_symbol(handle, "kperfdata.framework", path, missing, err);
        goto done;
    }
    dk__strlcpy(entry->root, root, sizeof entry->root);
    entry->next = kperfdata_list;
    kperfdata_list = entry;
    *out = &entry->vt;
done:
    pthread_mutex_unlock(&load_lock);
    return rc;
}

#undef DK__RESOLVE

/* ------------------------------------------------------------------------ */
/* KPEP error codes                                                          */
/* ------------------------------------------------------------------------ */

#define DK__KPEP_ERRORS(X)                                                   \
    X(NONE, "no error")                                                      \
    X(INVALID_ARGUMENT, "invalid argument")                                  \
    X(OUT_OF_MEMORY, "out of memory")                                        \
    X(IO, "I/O error")                                                       \
    X(BUFFER_TOO_SMALL, "buffer too small")                                  \
    X(CUR_SYSTEM_UNKNOWN, "the current system is unknown")                   \
    X(DB_PATH_INVALID, "the database path is invalid")                       \
    X(DB_NOT_FOUND, "no database for this CPU")                              \
    X(DB_ARCH_UNSUPPORTED, "the database architecture is unsupported")       \
    X(DB_VERSION_UNSUPPORTED, "the database version is unsupported")         \
    X(DB_CORRUPT, "the database is corrupt")                                 \
    X(EVENT_NOT_FOUND, "event not found")                                    \
    X(CONFLICTING_EVENTS, "conflicting events")                              \
    X(COUNTERS_NOT_FORCED, "all counters must be forced")                    \
    X(EVENT_UNAVAILABLE, "event unavailable")                                \
    X(ERRNO, "check errno")

const char *dk_kpep_error_name(int code)
{
    switch (code) {
#define DK__KPEP_NAME(name, text)       \
    case KPEP_CONFIG_ERROR_##name:      \
        return "KPEP_CONFIG_ERROR_" #name;
        DK__KPEP_ERRORS(DK__KPEP_NAME)
#undef DK__KPEP_NAME
    default:
        return "KPEP_CONFIG_ERROR_UNKNOWN";
    }
}

const char *dk_kpep_strerror(int code)
{
    switch (code) {
#define DK__KPEP_TEXT(name, text)  \
    case KPEP_CONFIG_ERROR_##name: \
        return text;
        DK__KPEP_ERRORS(DK__KPEP_TEXT)
#undef DK__KPEP_TEXT
    default:
        return "unknown kperfdata error";
    }
}
