/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kpc_demo_style.c - use kperfdata the way ibireme's kpc_demo.c uses the
 * real one: include only dkperf/kperf.h, dlopen the framework by hand, and
 * read the structures through the documented layout.
 *
 * usage: kpc_demo_style <path to kperfdata>
 * The simulated CPU comes from DKPERF_SIM_CPU.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkperf/kperf.h"

#define FAIL(...)                     \
    do {                              \
        fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr);          \
        exit(1);                      \
    } while (0)

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (p == NULL)
        FAIL("missing symbol %s", name);
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        FAIL("usage: %s <kperfdata>", argv[0]);
    void *lib = dlopen(argv[1], RTLD_LAZY | RTLD_LOCAL);
    if (lib == NULL)
        FAIL("dlopen: %s", dlerror());

    kpep_db_create_fn db_create;
    kpep_db_free_fn db_free;
    kpep_db_event_fn db_event;
    kpep_config_create_fn cfg_create;
    kpep_config_free_fn cfg_free;
    kpep_config_force_counters_fn cfg_force;
    kpep_config_add_event_fn cfg_add;
    kpep_config_kpc_fn cfg_kpc;
    kpep_config_kpc_count_fn cfg_kpc_count;
    kpep_config_kpc_map_fn cfg_kpc_map;
    *(void **)&db_create = sym(lib, "kpep_db_create");
    *(void **)&db_free = sym(lib, "kpep_db_free");
    *(void **)&db_event = sym(lib, "kpep_db_event");
    *(void **)&cfg_create = sym(lib, "kpep_config_create");
    *(void **)&cfg_free = sym(lib, "kpep_config_free");
    *(void **)&cfg_force = sym(lib, "kpep_config_force_counters");
    *(void **)&cfg_add = sym(lib, "kpep_config_add_event");
    *(void **)&cfg_kpc = sym(lib, "kpep_config_kpc");
    *(void **)&cfg_kpc_count = sym(lib, "kpep_config_kpc_count");
    *(void **)&cfg_kpc_map = sym(lib, "kpep_config_kpc_map");

    kpep_db *db = NULL;
    int rc = db_create(NULL, &db);
    if (rc != 0)
        FAIL("kpep_db_create: %d", rc);
    const char *want = getenv("DKPERF_SIM_CPU");
    printf("db name %s, %zu events, cpu %s\n", db->name, db->event_count, db->cpu_id);
    if (want != NULL && strcmp(db->name, want) != 0)
        FAIL("db->name is %s, expected %s", db->name, want);
    if (db->event_count < 2)
        FAIL("event_count %zu", db->event_count);

    /* The fixed cycles event, found by walking event_arr with the 56-byte stride. */
    kpep_event *cycles = NULL;
    for (size_t i = 0; i < db->event_count; i++) {
        kpep_event *ev = &db->event_arr[i];
        if (ev->alias != NULL && strcmp(ev->alias, "Cycles") == 0)
            cycles = ev;
    }
    if (cycles == NULL)
        FAIL("no event with the Cycles alias");
    if (!(cycles->flags & KPEP_EVENT_FLAG_FIXED))
        FAIL("%s: flags 0x%x lacks the fixed bit", cycles->name, cycles->flags);
    if (db->fixed_event_arr[0] != cycles && db->fixed_event_arr[1] != cycles)
        FAIL("fixed_event_arr does not point at %s", cycles->name);
    kpep_event *by_alias = NULL;
    if (db_event(db, "Cycles", &by_alias) != 0 || by_alias != cycles)
        FAIL("kpep_db_event(\"Cycles\") did not find %s", cycles->name);
    printf("Cycles = %s, flags 0x%x, mask 0x%x\n", cycles->name, cycles->flags, cycles->mask);

    /* Build a config with cycles and one configurable event; get register words. */
    kpep_config *cfg = NULL;
    if (cfg_create(db, &cfg) != 0 || cfg_force(cfg) != 0)
        FAIL("kpep_config_create");
    if (cfg_add(cfg, &cycles, 0, NULL) != 0)
        FAIL("kpep_config_add_event(%s)", cycles->name);
    kpep_event *conf = NULL;
    for (size_t i = 0; i < db->event_count && conf == NULL; i++)
        if (!(db->event_arr[i].flags & KPEP_EVENT_FLAG_FIXED))
            conf = &db->event_arr[i];
    if (conf == NULL || cfg_add(cfg, &conf, 0, NULL) != 0)
        FAIL("kpep_config_add_event(configurable)");
    size_t words = 0;
    kpc_config_t regs[KPC_MAX_COUNTERS] = {0};
    size_t map[2] = {0};
    if (cfg_kpc_count(cfg, &words) != 0 || words == 0 || cfg_kpc(cfg, regs, sizeof regs) != 0 ||
        cfg_kpc_map(cfg, map, sizeof map) != 0)
        FAIL("register words");
    int found = 0;
    for (size_t i = 0; i < words; i++)
        if ((regs[i] & (db->architecture == KPEP_ARCH_X86_64 ? 0xff : 0xffff)) == conf->number)
            found++;
    if (found != 1)
        FAIL("selector 0x%x of %s not in the register words", conf->number, conf->name);
    printf("%s -> counter %zu, %zu register words\n", conf->name, map[1], words);
    cfg_free(cfg);
    db_free(db);
    return 0;
}
