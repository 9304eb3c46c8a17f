/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_kpep_config.c - placing events on counters: conflicts, too many
 * events, unknown events, forcing, fallbacks, buffers that are too small.
 */
#include <string.h>

#include "dkperf/kperf.h"
#include "events/tables.h"
#include "util.h"

static const dk_kperfdata_vtable *kd;
static kpep_db *db;
static bool intel;

static kpep_config *new_config(bool force)
{
    if (kd == NULL) {
        CHECK_INT(dk_kperfdata_load(NULL, &kd, NULL), ==, 0);
        CHECK_INT(kd->kpep_db_create(NULL, &db), ==, 0);
        intel = db->architecture == KPEP_ARCH_X86_64;
    }
    kpep_config *cfg = NULL;
    CHECK_INT(kd->kpep_config_create(db, &cfg), ==, 0);
    CHECK(cfg->db == db);
    CHECK_INT(cfg->counter_count, ==, db->fixed_counter_count + db->config_counter_count);
    if (force)
        CHECK_INT(kd->kpep_config_force_counters(cfg), ==, 0);
    CHECK_INT(cfg->force_flags & 1, ==, force ? 1 : 0);
    return cfg;
}

static int add(kpep_config *cfg, const char *name, uint32_t *conflicts)
{
    kpep_event *ev = NULL;
    int rc = kd->kpep_db_event(db, name, &ev);
    if (rc != 0)
        return rc;
    return kd->kpep_config_add_event(cfg, &ev, 0, conflicts);
}

/* The configurable events with no counter mask: they fit any counter. */
static size_t unmasked_events(kpep_event **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < db->event_count && n < max; i++)
        if (!(db->event_arr[i].flags & KPEP_EVENT_FLAG_FIXED) &&
            (db->event_arr[i].mask == 0 || db->event_arr[i].mask == db->config_counter_bits))
            out[n++] = &db->event_arr[i];
    return n;
}

TEST_CASE(unknown_event_is_not_found)
{
    kpep_config *unused = new_config(true);
    kd->kpep_config_free(unused);
    kpep_event *ev = NULL;
    CHECK_INT(kd->kpep_db_event(db, "NO_SUCH_EVENT", &ev), ==, KPEP_CONFIG_ERROR_EVENT_NOT_FOUND);
    CHECK(ev == NULL);
    /* Names are exact: no case folding, no partial match. */
    CHECK_INT(kd->kpep_db_event(db, "cycles", &ev), ==, KPEP_CONFIG_ERROR_EVENT_NOT_FOUND);
    CHECK_INT(kd->kpep_db_event(db, "Cycle", &ev), ==, KPEP_CONFIG_ERROR_EVENT_NOT_FOUND);
}

TEST_CASE(event_from_another_database_is_refused)
{
    kpep_config *cfg = new_config(true);
    kpep_db *other = NULL;
    CHECK_INT(kd->kpep_db_create(intel ? "a14" : "haswell", &other), ==, 0);
    kpep_event *ev = NULL;
    CHECK_INT(kd->kpep_db_event(other, "Cycles", &ev), ==, 0);
    CHECK_INT(kd->kpep_config_add_event(cfg, &ev, 0, NULL), ==, KPEP_CONFIG_ERROR_INVALID_ARGUMENT);
    CHECK_INT(kd->kpep_config_add_event(cfg, &ev, 7, NULL), ==, KPEP_CONFIG_ERROR_INVALID_ARGUMENT);
    kd->kpep_db_free(other);
    kd->kpep_config_free(cfg);
}

TEST_CASE(too_many_events_conflict_with_a_bitmap)
{
    kpep_config *cfg = new_config(true);
    kpep_event *evs[64];
    size_t n = unmasked_events(evs, 64);
    CHECK_INT(n, >, db->config_counter_count);
    size_t added = 0;
    for (; added < db->config_counter_count; added++)
        CHECK_INT(kd->kpep_config_add_event(cfg, &evs[added], 0, NULL), ==, 0);
    CHECK_INT(cfg->occupied_counters, ==, db->config_counter_bits);
    uint32_t conflicts = 0;
    CHECK_INT(kd->kpep_config_add_event(cfg, &evs[added], 0, &conflicts), ==,
              KPEP_CONFIG_ERROR_CONFLICTING_EVENTS);
    /* Every added event holds a counter the new one could use. */
    CHECK_INT(conflicts, ==, (1u << db->config_counter_count) - 1);
    /* Removing one frees its counter for the newcomer. */
    CHECK_INT(kd->kpep_config_remove_event(cfg, 3), ==, 0);
    CHECK_INT(kd->kpep_config_add_event(cfg, &evs[added], 0, &conflicts), ==, 0);
    CHECK_INT(kd->kpep_config_remove_event(cfg, 99), ==, KPEP_CONFIG_ERROR_INVALID_ARGUMENT);
    kd->kpep_config_free(cfg);
}

TEST_CASE(single_counter_events_conflict)
{
    kpep_config *cfg = new_config(true);
    if (intel)
        SKIP("Intel events carry no counter masks");
    /* INST_INT_ST and INST_INT_ALU can only use counter 7, on every chip. */
    kpep_event *first = NULL;
    CHECK_INT(kd->kpep_db_event(db, "INST_INT_ST", &first), ==, 0);
    CHECK_INT(first->mask, ==, 0x80);
    CHECK_INT(add(cfg, "Cycles", NULL), ==, 0);
    CHECK_INT(kd->kpep_config_add_event(cfg, &first, 0, NULL), ==, 0);
    uint32_t conflicts = 0;
    CHECK_INT(add(cfg, "INST_INT_ALU", &conflicts), ==, KPEP_CONFIG_ERROR_CONFLICTING_EVENTS);
    CHECK_INT(conflicts, ==, 1u << 1); /* event index 1 holds counter 7 */
    kd->kpep_config_free(cfg);
}

TEST_CASE(power_counters_need_forcing)
{
    kpep_config *cfg = new_config(false);
    if (intel)
        SKIP("Intel Macs share no counters with the power manager");
    /* Mask 0xe0 / 0xfc events: counters 5..7 are the power manager's unless forced. */
    kpep_event *ev = NULL;
    CHECK_INT(kd->kpep_db_event(db, "INST_INT_ALU", &ev), ==, 0);
    CHECK_INT(ev->mask & ~db->power_counter_bits, ==, 0);
    CHECK_INT(kd->kpep_config_add_event(cfg, &ev, 0, NULL), ==,
              KPEP_CONFIG_ERROR_COUNTERS_NOT_FORCED);
    /* Events that may use other counters still fit. */
    CHECK_INT(add(cfg, "L1D_TLB_MISS", NULL), ==, 0);
    CHECK_INT(cfg->occupied_counters & db->power_counter_bits, ==, 0);
    CHECK_INT(kd->kpep_config_force_counters(cfg), ==, 0);
    CHECK_INT(kd->kpep_config_add_event(cfg, &ev, 0, NULL), ==, 0);
    kd->kpep_config_free(cfg);
}

TEST_CASE(busy_fixed_counter_falls_back)
{
    kpep_config *cfg = new_config(true);
    kpep_event *insts = NULL;
    CHECK_INT(kd->kpep_db_event(db, "Instructions", &insts), ==, 0);
    CHECK(insts->fallback != NULL);
    CHECK_INT(kd->kpep_config_add_event(cfg, &insts, 0, NULL), ==, 0);
    CHECK_INT(kd->kpep_config_add_event(cfg, &insts, 0, NULL), ==, 0);
    kpep_event *placed[2] = {0};
    CHECK_INT(kd->kpep_config_events(cfg, placed, sizeof placed), ==, 0);
    CHECK(placed[0] == insts);
    CHECK_STR(placed[1]->name, insts->fallback);
    uint32_t classes = 0;
    CHECK_INT(kd->kpep_config_kpc_classes(cfg, &classes), ==, 0);
    CHECK_INT(classes, ==, KPC_CLASS_FIXED_MASK | KPC_CLASS_CONFIGURABLE_MASK);
    /* Apple's Cycles has no fallback: a second one conflicts with the first. */
    kpep_event *cycles = NULL;
    CHECK_INT(kd->kpep_db_event(db, "Cycles", &cycles), ==, 0);
    CHECK_INT(add(cfg, "Cycles", NULL), ==, 0);
    uint32_t conflicts = 0;
    if (cycles->fallback == NULL) {
        CHECK(!intel);
        CHECK_INT(add(cfg, "Cycles", &conflicts), ==, KPEP_CONFIG_ERROR_CONFLICTING_EVENTS);
        CHECK_INT(conflicts, ==, 1u << 2);
    } else {
        CHECK(intel);
        CHECK_INT(add(cfg, "Cycles", &conflicts), ==, 0);
        CHECK_INT(conflicts, ==, 0);
    }
    kd->kpep_config_free(cfg);
}

TEST_CASE(small_buffers_are_refused)
{
    kpep_config *cfg = new_config(true);
    CHECK_INT(add(cfg, "Cycles", NULL), ==, 0);
    CHECK_INT(add(cfg, intel ? "BR_INST_RETIRED.ALL_BRANCHES" : "INST_BRANCH", NULL), ==, 0);
    size_t words = 0;
    CHECK_INT(kd->kpep_config_kpc_count(cfg, &words), ==, 0);
    CHECK_INT(words, ==, db->config_counter_count + (intel ? 1 : 0));
    kpc_config_t regs[KPC_MAX_COUNTERS];
    CHECK_INT(kd->kpep_config_kpc(cfg, regs, (words - 1) * sizeof *regs), ==,
              KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL);
    size_t map[2];
    CHECK_INT(kd->kpep_config_kpc_map(cfg, map, sizeof map[0]), ==,
              KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL);
    kpep_event *evs[2];
    CHECK_INT(kd->kpep_config_events(cfg, evs, sizeof evs[0]), ==,
              KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL);
    const char *aliases[1];
    CHECK_INT(kd->kpep_db_aliases(db, aliases, sizeof aliases), ==,
              KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL);
    kd->kpep_config_free(cfg);
}

TEST_CASE(null_arguments_are_invalid)
{
    kpep_config *cfg = new_config(true), *none_cfg = NULL;
    size_t n;
    CHECK_INT(kd->kpep_config_create(NULL, &none_cfg), ==, KPEP_CONFIG_ERROR_INVALID_ARGUMENT);
    CHECK_INT(kd->kpep_db_create(NULL, NULL), ==, KPEP_CONFIG_ERROR_INVALID_ARGUMENT);
    CHECK_INT(kd->kpep_db_events_count(NULL, &n), ==, KPEP_CONFIG_ERROR_INVALID_ARGUMENT);
    CHECK_INT(kd->kpep_config_add_event(cfg, NULL, 0, NULL), ==,
              KPEP_CONFIG_ERROR_INVALID_ARGUMENT);
    kpep_db *none = NULL;
    CHECK_INT(kd->kpep_db_create("no-such-db", &none), ==, KPEP_CONFIG_ERROR_DB_NOT_FOUND);
    CHECK(none == NULL);
    kd->kpep_config_free(NULL);
    kd->kpep_db_free(NULL);
    kd->kpep_config_free(cfg);
}

TEST_CASE(every_database_opens_by_name_and_cpu_id)
{
    kpep_config *unused = new_config(false);
    kd->kpep_config_free(unused);
    static const char *names[] = {"a14",   "a15",   "a16", "as1",   "as2",     "as3",     "as4",
                                  "as4-1", "as4-2", "as5", "as5-2", "haswell", "skylake", "a13"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        kpep_db *d = NULL;
        CHECK_INT(kd->kpep_db_create(names[i], &d), ==, 0);
        CHECK_STR(d->name, names[i]);
        kpep_db *by_id = NULL;
        if (strcmp(d->cpu_id, "cpu_100000c_2_0") != 0) {
            CHECK_INT(kd->kpep_db_create(d->cpu_id, &by_id), ==, 0);
            CHECK_STR(by_id->cpu_id, d->cpu_id);
            kd->kpep_db_free(by_id);
        }
        kd->kpep_db_free(d);
    }
}

TEST_MAIN()
