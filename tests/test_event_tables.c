/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_event_tables.c - validates every generated event table; runs on any
 * host, without the data files.
 */
#include <stdbool.h>
#include <string.h>

#include "dkperf/events.h"
#include "events/tables.h"
#include "util.h"

static bool is_power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

TEST_CASE(apple_chips_are_m1_to_m5)
{
    size_t n = 0;
    const dk__chip *chips = dk__chips_all(&n);
    CHECK_INT(n, ==, 5);
    for (size_t i = 0; i < n; i++) {
        CHECK_INT(chips[i].cpu, ==, DK_CPU_M1 + (int)i);
        CHECK(chips[i].db_names[0] != NULL);
        CHECK(chips[i].event_count > 0);
        /* Fixed and configurable counters are disjoint; power ones are configurable. */
        CHECK_INT(chips[i].fixed_mask & chips[i].config_mask, ==, 0);
        CHECK_INT(chips[i].power_mask & ~chips[i].config_mask, ==, 0);
        CHECK(dk__chip_by_cpu(chips[i].cpu) == &chips[i]);
    }
}

TEST_CASE(event_names_are_unique_and_sorted_per_chip)
{
    size_t n = 0;
    const dk__chip *chips = dk__chips_all(&n);
    for (size_t c = 0; c < n; c++)
        for (size_t i = 1; i < chips[c].event_count; i++)
            if (strcmp(chips[c].events[i - 1].name, chips[c].events[i].name) >= 0)
                DKT_FAIL("%s: %s is not before %s", chips[c].name, chips[c].events[i - 1].name,
                         chips[c].events[i].name);
}

TEST_CASE(numbers_masks_and_fixed_counters_are_consistent)
{
    size_t n = 0;
    const dk__chip *chips = dk__chips_all(&n);
    for (size_t c = 0; c < n; c++) {
        const dk__chip *chip = &chips[c];
        int fixed_seen = 0;
        for (size_t i = 0; i < chip->event_count; i++) {
            const dk_event_def *e = &chip->events[i];
            CHECK_STR(dk__event_ident(e->event), e->name);
            if (e->fixed_counter >= 0) {
                /* Fixed counters 0 (cycles) and 1 (instructions), one event each. */
                CHECK(e->fixed_counter == 0 || e->fixed_counter == 1);
                CHECK_INT(e->counters_mask, ==, 1u << e->fixed_counter);
                CHECK_INT(e->counters_mask & ~chip->fixed_mask, ==, 0);
                CHECK(!(fixed_seen & (1 << e->fixed_counter)));
                fixed_seen |= 1 << e->fixed_counter;
                CHECK_INT(e->number, ==, 0);
            } else {
                if (e->number == 0)
                    DKT_FAIL("%s %s: configurable event without a selector", chip->name, e->name);
                if (e->counters_mask & ~chip->config_mask)
                    DKT_FAIL("%s %s: mask 0x%x outside the configurable counters 0x%x", chip->name,
                             e->name, e->counters_mask, chip->config_mask);
            }
        }
        CHECK_INT(fixed_seen, ==, 3);
    }
}

TEST_CASE(selectors_are_unique_per_chip)
{
    size_t n = 0;
    const dk__chip *chips = dk__chips_all(&n);
    for (size_t c = 0; c < n; c++)
        for (size_t i = 0; i < chips[c].event_count; i++)
            for (size_t j = i + 1; j < chips[c].event_count; j++) {
                const dk_event_def *a = &chips[c].events[i], *b = &chips[c].events[j];
                if (a->fixed_counter < 0 && b->fixed_counter < 0 && a->number == b->number)
                    DKT_FAIL("%s: %s and %s share selector %u", chips[c].name, a->name, b->name,
                             a->number);
            }
}

TEST_CASE(fallbacks_and_aliases_resolve)
{
    size_t n = 0;
    const dk__chip *chips = dk__chips_all(&n);
    for (size_t c = 0; c < n; c++) {
        const dk__chip *chip = &chips[c];
        for (size_t i = 0; i < chip->event_count; i++) {
            const dk_event_def *e = &chip->events[i];
            if (e->fallback != NULL) {
                const dk_event_def *fb = dk__chip_event_by_name(chip, e->fallback);
                if (fb == NULL)
                    DKT_FAIL("%s %s: fallback %s is not an event", chip->name, e->name,
                             e->fallback);
                CHECK_INT(fb->fixed_counter, ==, -1);
            }
            CHECK(e->aliases != NULL);
            for (const char *const *a = e->aliases; *a != NULL; a++) {
                /* An alias may not shadow another event's name. */
                const dk_event_def *other = dk__chip_event_by_name(chip, *a);
                CHECK(other == NULL || other == e);
            }
        }
        const dk_event_def *cycles = dk__event_on(DK_EVENT_FIXED_CYCLES, chip->cpu);
        CHECK(cycles != NULL);
        CHECK_STR(cycles->aliases[0], "Cycles");
        const dk_event_def *insts = dk__event_on(DK_EVENT_FIXED_INSTRUCTIONS, chip->cpu);
        CHECK(insts != NULL);
        CHECK_STR(insts->aliases[0], "Instructions");
    }
}

TEST_CASE(every_event_exists_on_some_chip)
{
    for (int ev = 0; ev < DK_EVENT_COUNT; ev++) {
        int found = 0;
        for (int cpu = DK_CPU_M1; cpu <= DK_CPU_M5; cpu++)
            found += dk__event_on((dk_event)ev, (dk_cpu)cpu) != NULL;
        if (found == 0)
            DKT_FAIL("%s is on no chip", dk__event_ident((dk_event)ev));
        CHECK_INT(dk__event_by_ident(dk__event_ident((dk_event)ev)), ==, ev);
    }
    CHECK_INT(dk__event_by_ident("NOT_AN_EVENT"), ==, DK_EVENT_COUNT);
    CHECK(dk__event_ident(DK_EVENT_COUNT) == NULL);
}

TEST_CASE(chip_differences_from_the_data)
{
    /* Facts the data README states; a regression here means the tables drifted. */
    const dk_event_def *m1 = dk__event_on(DK_EVENT_INST_BRANCH_CALL, DK_CPU_M1);
    const dk_event_def *m4 = dk__event_on(DK_EVENT_INST_BRANCH_CALL, DK_CPU_M4);
    CHECK_INT(m1->number, ==, 142);
    CHECK_INT(m4->number, ==, 2190);
    CHECK_INT(dk__event_on(DK_EVENT_INST_ALL, DK_CPU_M4)->number, ==, 8);
    CHECK_INT(dk__event_on(DK_EVENT_INST_ALL, DK_CPU_M1)->counters_mask, ==, 128);
    CHECK_INT(dk__event_on(DK_EVENT_INST_ALL, DK_CPU_M4)->counters_mask, ==, 252);
    CHECK_INT(dk__event_on(DK_EVENT_L1I_CACHE_MISS_DEMAND, DK_CPU_M5)->number, ==, 16390);
    CHECK(dk__event_on(DK_EVENT_INST_BRANCH_COND, DK_CPU_M3) == NULL);
    CHECK(dk__event_on(DK_EVENT_INST_BRANCH_COND, DK_CPU_M4) != NULL);
    CHECK(dk__event_on(DK_EVENT_SCHEDULE_UOP, DK_CPU_M2) == NULL);
    CHECK(dk__event_on(DK_EVENT_FIXED_CYCLES, DK_CPU_UNKNOWN) == NULL);
    CHECK(dk__event_on(DK_EVENT_FIXED_CYCLES, DK_CPU_INTEL) == NULL);
}

TEST_CASE(database_names_map_to_one_chip)
{
    static const struct {
        const char *db;
        dk_cpu cpu;
    } want[] = {{"a14", DK_CPU_M1},        {"a15", DK_CPU_M2},        {"a16", DK_CPU_M3},
                {"as1", DK_CPU_M3},        {"as3", DK_CPU_M3},        {"as4", DK_CPU_M4},
                {"as4-2", DK_CPU_M4},      {"as5", DK_CPU_M5},        {"as5-2", DK_CPU_M5},
                {"haswell", DK_CPU_INTEL}, {"icelake", DK_CPU_INTEL}, {"a13", DK_CPU_UNKNOWN},
                {"", DK_CPU_UNKNOWN}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_INT(dk__cpu_from_db_name(want[i].db), ==, want[i].cpu);
    CHECK_INT(dk__cpu_from_db_name(NULL), ==, DK_CPU_UNKNOWN);

    size_t n = 0;
    const dk__chip *chips = dk__chips_all(&n);
    for (size_t a = 0; a < n; a++)
        for (const char *const *x = chips[a].db_names; *x; x++)
            for (size_t b = 0; b < n; b++)
                for (const char *const *y = chips[b].db_names; *y; y++)
                    CHECK(a == b || strcmp(*x, *y) != 0);
}

TEST_CASE(cpu_ids_are_unique_and_well_formed)
{
    size_t n = 0;
    const dk__cpu_id *ids = dk__cpu_ids_all(&n);
    CHECK(n > 0);
    for (size_t i = 0; i < n; i++) {
        CHECK(strncmp(ids[i].cpu_id, "cpu_", 4) == 0);
        for (const char *p = ids[i].cpu_id + 4; *p; p++)
            CHECK((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || *p == '_');
        for (size_t j = i + 1; j < n; j++)
            CHECK(strcmp(ids[i].cpu_id, ids[j].cpu_id) != 0);
        CHECK(dk__cpu_id_by_id(ids[i].cpu_id) == &ids[i]);
    }
    CHECK_STR(dk__cpu_id_by_db("a14")->cpu_id, "cpu_100000c_2_1b588bb3");
    CHECK_STR(dk__cpu_id_by_db("haswell")->marketing, "Intel Haswell");
}

TEST_CASE(intel_tables)
{
    size_t n = 0;
    const dk__intel_db *dbs = dk__intel_dbs_all(&n);
    CHECK_INT(n, >=, 7);
    for (size_t d = 0; d < n; d++) {
        const dk__intel_db *db = &dbs[d];
        CHECK_INT(dk__cpu_from_db_name(db->db_name), ==, DK_CPU_INTEL);
        int fixed = 0;
        for (size_t i = 0; i < db->count; i++) {
            const dk__intel_event *e = &db->events[i];
            for (size_t j = i + 1; j < db->count; j++)
                CHECK(strcmp(e->name, db->events[j].name) != 0);
            if (e->fixed_counter >= 0) {
                CHECK(e->fixed_counter <= 1);
                fixed |= 1 << e->fixed_counter;
                CHECK(e->alias != NULL);
            } else {
                CHECK(e->number != 0 && e->number <= 0xff);
            }
            if (e->fallback != NULL) {
                int found = 0;
                for (size_t j = 0; j < db->count; j++)
                    found += strcmp(db->events[j].name, e->fallback) == 0 &&
                             db->events[j].fixed_counter < 0;
                if (!found)
                    DKT_FAIL("%s %s: fallback %s missing", db->db_name, e->name, e->fallback);
            }
        }
        CHECK_INT(fixed, ==, 3);
    }
}

TEST_CASE(power_of_two_fixed_masks)
{
    size_t n = 0;
    const dk__chip *chips = dk__chips_all(&n);
    for (size_t c = 0; c < n; c++)
        for (size_t i = 0; i < chips[c].event_count; i++)
            if (chips[c].events[i].fixed_counter >= 0)
                CHECK(is_power_of_two(chips[c].events[i].counters_mask));
}

TEST_MAIN()
