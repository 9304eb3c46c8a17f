/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_layout.c - the documented struct layouts, checked at run time against
 * what the (simulated) kperfdata hands out.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dkperf/kperf.h"
#include "events/tables.h"
#include "util.h"

static const dk_kperfdata_vtable *kd;

static kpep_db *open_db(void)
{
    CHECK_INT(dk_kperfdata_load(NULL, &kd, NULL), ==, 0);
    kpep_db *db = NULL;
    CHECK_INT(kd->kpep_db_create(NULL, &db), ==, KPEP_CONFIG_ERROR_NONE);
    CHECK(db != NULL);
    return db;
}

static int cmp_ptr(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    return x < y ? -1 : x > y;
}

TEST_CASE(offsets_match_the_guide)
{
    CHECK_INT(sizeof(kpep_event), ==, 56);
    CHECK_INT(offsetof(kpep_event, mask), ==, 40);
    CHECK_INT(offsetof(kpep_event, number), ==, 44);
    CHECK_INT(offsetof(kpep_event, flags), ==, 48);
    CHECK_INT(sizeof(kpep_db), ==, 152);
    CHECK_INT(offsetof(kpep_db, event_count), ==, 88);
    CHECK_INT(offsetof(kpep_db, architecture), ==, 128);
    CHECK_INT(offsetof(kpep_db, internal_known), ==, 149);
    CHECK_INT(sizeof(kpep_config), ==, 80);
    CHECK_INT(offsetof(kpep_config, force_flags), ==, 72);
}

TEST_CASE(database_fields_read_through_the_layout)
{
    kpep_db *db = open_db();
    const char *want = getenv("DKPERF_SIM_CPU");
    CHECK_STR(db->name, want);
    CHECK(db->cpu_id != NULL && strncmp(db->cpu_id, "cpu_", 4) == 0);
    const char *marketing = NULL;
    CHECK_INT(kd->kpep_db_name(db, &marketing), ==, 0);
    CHECK(marketing == db->marketing_name);

    dk_cpu cpu = dk__cpu_from_db_name(db->name);
    CHECK(cpu != DK_CPU_UNKNOWN);
    CHECK_INT(db->architecture, ==, cpu == DK_CPU_INTEL ? KPEP_ARCH_X86_64 : KPEP_ARCH_ARM64);
    if (cpu != DK_CPU_INTEL) {
        const dk__chip *chip = dk__chip_by_cpu(cpu);
        CHECK_INT(db->event_count, ==, chip->event_count);
        CHECK_INT(db->fixed_counter_bits, ==, chip->fixed_mask);
        CHECK_INT(db->config_counter_bits, ==, chip->config_mask);
        CHECK_INT(db->power_counter_bits, ==, chip->power_mask);
    }
    CHECK_INT(db->fixed_counter_count, ==, __builtin_popcount(db->fixed_counter_bits));
    CHECK_INT(db->config_counter_count, ==, __builtin_popcount(db->config_counter_bits));
    CHECK_INT(db->power_counter_count, ==, __builtin_popcount(db->power_counter_bits));

    size_t n = 0;
    CHECK_INT(kd->kpep_db_counters_count(db, KPC_CLASS_FIXED_MASK, &n), ==, 0);
    CHECK_INT(n, ==, db->fixed_counter_count);
    CHECK_INT(kd->kpep_db_counters_count(db, KPC_CLASS_FIXED_MASK | KPC_CLASS_CONFIGURABLE_MASK,
                                         &n),
              ==, 0);
    CHECK_INT(n, ==, db->fixed_counter_count + db->config_counter_count);
    kd->kpep_db_free(db);
}

TEST_CASE(event_array_stride_is_56)
{
    kpep_db *db = open_db();
    size_t n = 0;
    CHECK_INT(kd->kpep_db_events_count(db, &n), ==, 0);
    CHECK_INT(n, ==, db->event_count);
    kpep_event **evs = calloc(n, sizeof *evs);
    CHECK_INT(kd->kpep_db_events(db, evs, n * sizeof *evs), ==, 0);
    qsort(evs, n, sizeof *evs, cmp_ptr);
    for (size_t i = 1; i < n; i++)
        CHECK_INT((const char *)evs[i] - (const char *)evs[i - 1], ==, sizeof(kpep_event));
    CHECK(evs[0] == db->event_arr);
    /* A buffer one pointer short is refused. */
    CHECK_INT(kd->kpep_db_events(db, evs, (n - 1) * sizeof *evs), ==,
              KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL);
    free(evs);
    kd->kpep_db_free(db);
}

TEST_CASE(fixed_events_and_aliases)
{
    kpep_db *db = open_db();
    for (size_t i = 0; i < db->fixed_counter_count; i++) {
        kpep_event *ev = db->fixed_event_arr[i];
        /* Intel's third fixed counter (reference cycles): the data names no
         * event for it. */
        if (ev == NULL && db->architecture == KPEP_ARCH_X86_64 && i == 2)
            continue;
        CHECK(ev != NULL);
        CHECK(ev->flags & KPEP_EVENT_FLAG_FIXED);
        CHECK_INT(ev->mask, ==, 1u << i);
    }
    kpep_event *cycles = NULL, *insts = NULL;
    CHECK_INT(kd->kpep_db_event(db, "Cycles", &cycles), ==, 0);
    CHECK_INT(kd->kpep_db_event(db, "Instructions", &insts), ==, 0);
    CHECK(cycles->flags & KPEP_EVENT_FLAG_FIXED);
    CHECK_STR(cycles->alias, "Cycles");
    CHECK(insts->fallback != NULL);
    kpep_event *fallback = NULL;
    CHECK_INT(kd->kpep_db_event(db, insts->fallback, &fallback), ==, 0);
    CHECK(!(fallback->flags & KPEP_EVENT_FLAG_FIXED));
    /* The alias resolves to the same event as its name. */
    kpep_event *by_name = NULL;
    CHECK_INT(kd->kpep_db_event(db, cycles->name, &by_name), ==, 0);
    CHECK(by_name == cycles);

    size_t aliases = 0;
    CHECK_INT(kd->kpep_db_aliases_count(db, &aliases), ==, 0);
    CHECK_INT(aliases, ==, db->alias_count);
    CHECK_INT(aliases, >=, 2);
    const char **list = calloc(aliases, sizeof *list);
    CHECK_INT(kd->kpep_db_aliases(db, list, aliases * sizeof *list), ==, 0);
    int found = 0;
    for (size_t i = 0; i < aliases; i++)
        found += strcmp(list[i], "Cycles") == 0 || strcmp(list[i], "Instructions") == 0;
    CHECK_INT(found, ==, 2);
    free(list);

    const char *s = NULL;
    CHECK_INT(kd->kpep_event_name(cycles, &s), ==, 0);
    CHECK_STR(s, cycles->name);
    CHECK_INT(kd->kpep_event_alias(cycles, &s), ==, 0);
    CHECK_STR(s, "Cycles");
    CHECK_INT(kd->kpep_event_description(cycles, &s), ==, 0);
    CHECK_CONTAINS(s, cycles->name);
    kd->kpep_db_free(db);
}

TEST_MAIN()
