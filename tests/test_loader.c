/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_loader.c - dk_kperf_load / dk_kperfdata_load: success, caching,
 * thread safety, and each kind of failure.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkperf/kperf.h"
#include "util.h"

static void variant_root(char *buf, size_t size, const char *variant)
{
    snprintf(buf, size, "%s/%s", dkt_build_dir(), variant);
}

TEST_CASE(loads_both_frameworks_from_env_root)
{
    const dk_kperf_vtable *kp = NULL;
    const dk_kperfdata_vtable *kd = NULL;
    dk_load_error err;
    CHECK_INT(dk_kperf_load(NULL, &kp, &err), ==, 0);
    CHECK_INT(err.kind, ==, DK_LOAD_OK);
    CHECK_INT(dk_kperfdata_load(NULL, &kd, &err), ==, 0);
    CHECK(kp != NULL && kd != NULL);
    /* Every entry is resolved: call a harmless one from each table. */
    const void *const *fp = (const void *const *)kp;
    for (size_t i = 0; i < sizeof *kp / sizeof(void *); i++)
        CHECK(fp[i] != NULL);
    fp = (const void *const *)kd;
    for (size_t i = 0; i < sizeof *kd / sizeof(void *); i++)
        CHECK(fp[i] != NULL);
    CHECK_INT(sizeof *kp / sizeof(void *), ==,
              DK_KPERF_SYMBOL_COUNT + DK_KPERF_OPTIONAL_SYMBOL_COUNT);
    CHECK_INT(sizeof *kd / sizeof(void *), ==, DK_KPERFDATA_SYMBOL_COUNT);
    CHECK_INT(kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK), >, 0);
    kpep_db *db = NULL;
    CHECK_INT(kd->kpep_db_create(NULL, &db), ==, 0);
    kd->kpep_db_free(db);
}

TEST_CASE(second_load_returns_the_same_vtable)
{
    const dk_kperf_vtable *a = NULL, *b = NULL;
    CHECK_INT(dk_kperf_load(NULL, &a, NULL), ==, 0);
    CHECK_INT(dk_kperf_load(getenv(DK_FRAMEWORK_ROOT_ENV), &b, NULL), ==, 0);
    CHECK(a == b);
    /* A trailing slash names the same files but is a distinct root string. */
    char root[1100];
    snprintf(root, sizeof root, "%s/", getenv(DK_FRAMEWORK_ROOT_ENV));
    const dk_kperf_vtable *c = NULL;
    CHECK_INT(dk_kperf_load(root, &c, NULL), ==, 0);
    CHECK(c != NULL);
    CHECK(c->kpc_get_counting == a->kpc_get_counting); /* same image, not reloaded */
}

#define THREADS 8
static const void *thread_results[THREADS];

static void *load_in_thread(void *arg)
{
    const dk_kperfdata_vtable *kd = NULL;
    if (dk_kperfdata_load(NULL, &kd, NULL) == 0)
        thread_results[(size_t)arg] = kd;
    return NULL;
}

TEST_CASE(concurrent_first_loads_agree)
{
    pthread_t t[THREADS];
    for (size_t i = 0; i < THREADS; i++)
        CHECK_INT(pthread_create(&t[i], NULL, load_in_thread, (void *)i), ==, 0);
    for (size_t i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (size_t i = 0; i < THREADS; i++) {
        CHECK(thread_results[i] != NULL);
        CHECK(thread_results[i] == thread_results[0]);
    }
}

TEST_CASE(missing_framework_names_path_and_dlerror)
{
    const dk_kperf_vtable *kp = (const dk_kperf_vtable *)&kp;
    dk_load_error err;
    CHECK_INT(dk_kperf_load("/nonexistent-dkperf-root", &kp, &err), ==, DK_ELOAD);
    CHECK(kp == NULL);
    CHECK_INT(err.kind, ==, DK_LOAD_OPEN);
    CHECK_STR(err.path,
              "/nonexistent-dkperf-root/System/Library/PrivateFrameworks/kperf.framework/kperf");
    CHECK_CONTAINS(err.message, "cannot open kperf.framework at /nonexistent-dkperf-root/");
    CHECK_CONTAINS(err.message, "No such file"); /* dlerror() text */
    CHECK_STR(dk_last_error(), err.message);

    const dk_kperfdata_vtable *kd = NULL;
    CHECK_INT(dk_kperfdata_load("/nonexistent-dkperf-root", &kd, &err), ==, DK_ELOAD);
    CHECK_INT(err.kind, ==, DK_LOAD_OPEN);
    CHECK_CONTAINS(err.message, "kperfdata.framework/kperfdata");
}

TEST_CASE(empty_root_means_the_system_frameworks)
{
    const dk_kperf_vtable *kp = NULL;
    dk_load_error err;
    CHECK_STR(dk_framework_root(""), "");
    int rc = dk_kperf_load("", &kp, &err);
#ifdef __APPLE__
    CHECK_INT(rc, ==, 0);
#else
    CHECK_INT(rc, ==, DK_ELOAD);
    CHECK_STR(err.path, DK_KPERF_PATH);
#endif
}

TEST_CASE(root_defaults_to_the_environment)
{
    CHECK_STR(dk_framework_root(NULL), getenv(DK_FRAMEWORK_ROOT_ENV));
    CHECK_STR(dk_framework_root("/x"), "/x");
    unsetenv(DK_FRAMEWORK_ROOT_ENV);
    CHECK_STR(dk_framework_root(NULL), "");
}

TEST_CASE(missing_kperf_symbol_is_named)
{
    char root[1100];
    variant_root(root, sizeof root, "sim-root-kperf-nosym");
    const dk_kperf_vtable *kp = NULL;
    dk_load_error err;
    CHECK_INT(dk_kperf_load(root, &kp, &err), ==, DK_ELOAD);
    CHECK(kp == NULL);
    CHECK_INT(err.kind, ==, DK_LOAD_SYMBOL);
    CHECK_STR(err.symbol, "kperf_tick_frequency");
    CHECK_CONTAINS(err.message, "lacks the symbol kperf_tick_frequency");
    CHECK_CONTAINS(err.message, root);
    CHECK_CONTAINS(dk_last_error(), "kperf_tick_frequency");
    /* The complete kperfdata next to it loads. */
    const dk_kperfdata_vtable *kd = NULL;
    CHECK_INT(dk_kperfdata_load(root, &kd, &err), ==, 0);
    /* A failed load is not cached: it fails the same way again. */
    CHECK_INT(dk_kperf_load(root, &kp, &err), ==, DK_ELOAD);
    CHECK_INT(err.kind, ==, DK_LOAD_SYMBOL);
}

TEST_CASE(optional_symbols_load_when_present)
{
    const dk_kperf_vtable *kp = NULL;
    CHECK_INT(dk_kperf_load(NULL, &kp, NULL), ==, 0);
    CHECK(kp->kpc_get_period != NULL && kp->kpc_set_period != NULL);
    CHECK(kp->kpc_get_actionid != NULL && kp->kpc_set_actionid != NULL);
    uint32_t n = kp->kpc_get_counter_count(KPC_CLASS_CONFIGURABLE_MASK);
    uint64_t period[KPC_MAX_COUNTERS] = {0};
    period[0] = 1000000;
    CHECK_INT(kp->kpc_set_period(KPC_CLASS_CONFIGURABLE_MASK, period), ==, 0);
    uint64_t back[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(kp->kpc_get_period(KPC_CLASS_CONFIGURABLE_MASK, back), ==, 0);
    CHECK_U64(back[0], ==, 1000000);
    CHECK_U64(back[n - 1], >, 1000000); /* 0: no PMI, read back as the counter max */
}

TEST_CASE(absent_optional_symbols_do_not_fail_the_load)
{
    char root[1100];
    variant_root(root, sizeof root, "sim-root-kperf-noopt");
    const dk_kperf_vtable *kp = NULL;
    dk_load_error err;
    CHECK_INT(dk_kperf_load(root, &kp, &err), ==, 0);
    CHECK_INT(err.kind, ==, DK_LOAD_OK);
    CHECK(kp->kpc_get_period == NULL && kp->kpc_set_period == NULL);
    CHECK(kp->kpc_get_actionid == NULL && kp->kpc_set_actionid == NULL);
    CHECK(kp->kperf_tick_frequency != NULL);
    CHECK_INT(kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK), >, 0);
}

TEST_CASE(bundle_paths_name_one_image)
{
    /* kperf.framework/kperf and Versions/A/kperf are the same file, as in a
     * real framework bundle: a client may open either. */
    char top[1200], versioned[1200], current[1200];
    snprintf(top, sizeof top, "%s%s", getenv(DK_FRAMEWORK_ROOT_ENV), DK_KPERF_PATH);
    snprintf(versioned, sizeof versioned,
             "%s/System/Library/PrivateFrameworks/"
             "kperf.framework/Versions/A/kperf",
             getenv(DK_FRAMEWORK_ROOT_ENV));
    snprintf(current, sizeof current,
             "%s/System/Library/PrivateFrameworks/"
             "kperf.framework/Versions/Current/kperf",
             getenv(DK_FRAMEWORK_ROOT_ENV));
    void *a = dlopen(top, RTLD_LAZY | RTLD_LOCAL);
    void *b = dlopen(versioned, RTLD_LAZY | RTLD_LOCAL);
    void *c = dlopen(current, RTLD_LAZY | RTLD_LOCAL);
    CHECK(a != NULL && b != NULL && c != NULL);
    CHECK(dlsym(a, "kpc_set_config") == dlsym(b, "kpc_set_config"));
    CHECK(dlsym(c, "kpc_set_config") == dlsym(b, "kpc_set_config"));
    char path[1200];
    snprintf(path, sizeof path,
             "%s/System/Library/PrivateFrameworks/kperfdata.framework/"
             "Versions/A/kperfdata",
             getenv(DK_FRAMEWORK_ROOT_ENV));
    void *d = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    CHECK(d != NULL);
    dlclose(a);
    dlclose(b);
    dlclose(c);
    dlclose(d);
}

TEST_CASE(missing_kperfdata_symbol_is_named)
{
    char root[1100];
    variant_root(root, sizeof root, "sim-root-kperfdata-nosym");
    const dk_kperf_vtable *kp = NULL;
    const dk_kperfdata_vtable *kd = NULL;
    dk_load_error err;
    CHECK_INT(dk_kperf_load(root, &kp, &err), ==, 0);
    CHECK_INT(dk_kperfdata_load(root, &kd, &err), ==, DK_ELOAD);
    CHECK_INT(err.kind, ==, DK_LOAD_SYMBOL);
    CHECK_STR(err.symbol, "kpep_event_description");
    CHECK_CONTAINS(err.message, "kperfdata.framework at ");
}

TEST_CASE(overlong_root_is_refused)
{
    char root[DK_LOAD_PATH_MAX + 16];
    memset(root, 'a', sizeof root - 1);
    root[0] = '/';
    root[sizeof root - 1] = '\0';
    const dk_kperf_vtable *kp = NULL;
    dk_load_error err;
    CHECK_INT(dk_kperf_load(root, &kp, &err), ==, DK_ELOAD);
    CHECK_INT(err.kind, ==, DK_LOAD_PATH);
    CHECK_CONTAINS(err.message, "longer than");
}

TEST_CASE(null_output_is_invalid)
{
    dk_load_error err;
    CHECK_INT(dk_kperf_load(NULL, NULL, &err), ==, DK_EINVAL);
    CHECK_INT(err.kind, ==, DK_LOAD_ARGUMENT);
    CHECK_INT(dk_kperfdata_load(NULL, NULL, NULL), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "out must not be NULL");
}

TEST_CASE(kpep_error_names)
{
    CHECK_STR(dk_kpep_error_name(KPEP_CONFIG_ERROR_CONFLICTING_EVENTS),
              "KPEP_CONFIG_ERROR_CONFLICTING_EVENTS");
    CHECK_STR(dk_kpep_strerror(KPEP_CONFIG_ERROR_COUNTERS_NOT_FORCED),
              "all counters must be forced");
    CHECK_STR(dk_kpep_error_name(KPEP_CONFIG_ERROR_ERRNO), "KPEP_CONFIG_ERROR_ERRNO");
    CHECK_STR(dk_kpep_error_name(99), "KPEP_CONFIG_ERROR_UNKNOWN");
    for (int i = 0; i < KPEP_CONFIG_ERROR_MAX; i++)
        CHECK(strcmp(dk_kpep_error_name(i), "KPEP_CONFIG_ERROR_UNKNOWN") != 0);
}

TEST_CASE(error_table)
{
    CHECK_STR(dk_error_name(DK_ECONFLICT), "DK_ECONFLICT");
    CHECK_STR(dk_error_name(0), "DK_OK");
    CHECK_STR(dk_error_name(-999), "DK_UNKNOWN");
    CHECK_CONTAINS(dk_strerror(DK_EPERM), "root");
    CHECK_CONTAINS(dk_strerror(DK_ECONFLICT), "events conflict");
    CHECK_STR(dk_strerror(12345), "unknown error");
    /* Every code from -1 down is named until the table ends. */
    int named = 0;
    for (int e = -1; e > -100; e--)
        if (strcmp(dk_error_name(e), "DK_UNKNOWN") != 0)
            named++;
    CHECK_INT(named, >=, 15);
}

TEST_MAIN()
