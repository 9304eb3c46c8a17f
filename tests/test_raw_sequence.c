/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_raw_sequence.c - the whole privileged kperf/kperfdata sequence of
 * the design guide, through the raw vtables, against the simulated
 * frameworks of one chip (DKPERF_SIM_CPU):
 *
 *   open db -> detect chip -> save and force-acquire counters -> build a
 *   config with fixed and configurable events -> set config -> count ->
 *   read thread counters around work -> stop -> restore force_all_ctrs.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "dkperf/kperf.h"
#include "events/tables.h"
#include "util.h"

#define NEVENTS 5

typedef struct session {
    const dk_kperf_vtable *kp;
    const dk_kperfdata_vtable *kd;
    kpep_db *db;
    kpep_config *cfg;
    dk_cpu cpu;
    int saved_force_all;
    uint32_t classes;
    size_t map[NEVENTS];
    kpep_event *events[NEVENTS];
} session;

static void event_names(dk_cpu cpu, const char *names[NEVENTS])
{
    if (cpu == DK_CPU_INTEL) {
        const char *intel[NEVENTS] = {"Cycles", "Instructions", "BR_INST_RETIRED.ALL_BRANCHES",
                                      "BR_MISP_RETIRED.ALL_BRANCHES", "LONGEST_LAT_CACHE.MISS"};
        memcpy(names, intel, sizeof intel);
    } else {
        const char *apple[NEVENTS] = {"Cycles", "Instructions", "INST_BRANCH",
                                      "BRANCH_MISPRED_NONSPEC", "L1D_CACHE_MISS_LD"};
        memcpy(names, apple, sizeof apple);
    }
}

static void open_session(session *s)
{
    memset(s, 0, sizeof *s);
    CHECK_INT(dk_kperf_load(NULL, &s->kp, NULL), ==, 0);
    CHECK_INT(dk_kperfdata_load(NULL, &s->kd, NULL), ==, 0);

    /* Open this CPU's database and detect the chip from its name. */
    CHECK_INT(s->kd->kpep_db_create(NULL, &s->db), ==, KPEP_CONFIG_ERROR_NONE);
    CHECK_STR(s->db->name, getenv("DKPERF_SIM_CPU"));
    s->cpu = dk__cpu_from_db_name(s->db->name);
    CHECK(s->cpu != DK_CPU_UNKNOWN);
    char cpu_string[128];
    CHECK_INT(s->kp->kpc_cpu_string(cpu_string, sizeof cpu_string), >, 0);
    CHECK_STR(cpu_string, s->db->cpu_id);
    CHECK_INT(s->kp->kpc_pmu_version(), ==,
              s->cpu == DK_CPU_INTEL ? KPC_PMU_INTEL_V3 : KPC_PMU_ARM_APPLE);

    /* Counter counts come from the running system, and agree with the db. */
    CHECK_INT(s->kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK), ==, s->db->fixed_counter_count);
    CHECK_INT(s->kp->kpc_get_counter_count(KPC_CLASS_CONFIGURABLE_MASK), ==,
              s->db->config_counter_count);

    /* Save, then force-acquire every counter. */
    CHECK_INT(s->kp->kpc_force_all_ctrs_get(&s->saved_force_all), ==, 0);
    CHECK_INT(s->kp->kpc_force_all_ctrs_set(1), ==, 0);
    int now = -1;
    CHECK_INT(s->kp->kpc_force_all_ctrs_get(&now), ==, 0);
    CHECK_INT(now, ==, 1);

    /* Build the config: fixed and configurable events. */
    CHECK_INT(s->kd->kpep_config_create(s->db, &s->cfg), ==, 0);
    CHECK_INT(s->kd->kpep_config_force_counters(s->cfg), ==, 0);
    const char *names[NEVENTS];
    event_names(s->cpu, names);
    for (int i = 0; i < NEVENTS; i++) {
        CHECK_INT(s->kd->kpep_db_event(s->db, names[i], &s->events[i]), ==, 0);
        uint32_t conflicts = 0xdead;
        CHECK_INT(s->kd->kpep_config_add_event(s->cfg, &s->events[i], KPEP_CONFIG_ADD_ALL_MODES,
                                               &conflicts),
                  ==, 0);
        CHECK_INT(conflicts, ==, 0);
    }
    size_t count = 0;
    CHECK_INT(s->kd->kpep_config_events_count(s->cfg, &count), ==, 0);
    CHECK_INT(count, ==, NEVENTS);
    CHECK_INT(s->kd->kpep_config_kpc_classes(s->cfg, &s->classes), ==, 0);
    CHECK_INT(s->classes, ==, KPC_CLASS_FIXED_MASK | KPC_CLASS_CONFIGURABLE_MASK);

    size_t words = 0;
    CHECK_INT(s->kd->kpep_config_kpc_count(s->cfg, &words), ==, 0);
    CHECK_INT(words, ==, s->kp->kpc_get_config_count(s->classes));
    kpc_config_t regs[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(s->kd->kpep_config_kpc(s->cfg, regs, sizeof regs), ==, 0);
    CHECK_INT(s->kd->kpep_config_kpc_map(s->cfg, s->map, sizeof s->map), ==, 0);

    /* Register words carry the selectors kperfdata chose. */
    size_t fixed_words = s->cpu == DK_CPU_INTEL ? 1 : 0;
    for (int i = 2; i < NEVENTS; i++) {
        int found = 0;
        unsigned sel_mask = s->cpu == DK_CPU_INTEL ? 0xff : 0xffff;
        for (size_t w = fixed_words; w < words; w++)
            found += (regs[w] & sel_mask) == s->events[i]->number;
        if (found != 1)
            DKT_FAIL("%s: selector 0x%x in %d register words", names[i], s->events[i]->number,
                     found);
    }
    /* The map points fixed events at fixed counters, others past them. */
    for (int i = 0; i < NEVENTS; i++) {
        bool fixed = s->events[i]->flags & KPEP_EVENT_FLAG_FIXED;
        CHECK(fixed == (s->map[i] < s->db->fixed_counter_count));
        for (int j = 0; j < i; j++)
            CHECK(s->map[i] != s->map[j]);
    }

    CHECK_INT(s->kp->kpc_set_config(s->classes, regs), ==, 0);
    kpc_config_t back[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(s->kp->kpc_get_config(s->classes, back), ==, 0);
    if (s->cpu == DK_CPU_INTEL) {
        /* kpc_x86.c: the fixed control word is not written (NYI) and reads
         * back the MSR, 0 before counting starts; PERFEVTSELs keep
         * 0xffc7ffff of each word. */
        CHECK_U64(back[0], ==, 0);
        for (size_t w = fixed_words; w < words; w++)
            CHECK_U64(back[w], ==, regs[w] & 0xffc7ffffu);
    } else {
        /* A release kernel drops EL1 (0x40000) silently (arm64 set_modes). */
        for (size_t w = 0; w < words; w++)
            CHECK_U64(back[w], ==, regs[w] & ~(kpc_config_t)0xc0000);
    }
}

static void read_counters(session *s, uint64_t out[NEVENTS])
{
    uint64_t buf[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(s->kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, buf), ==, 0);
    for (int i = 0; i < NEVENTS; i++)
        out[i] = buf[s->map[i]];
}

static void close_session(session *s)
{
    CHECK_INT(s->kp->kpc_force_all_ctrs_set(s->saved_force_all), ==, 0);
    int now = -1;
    CHECK_INT(s->kp->kpc_force_all_ctrs_get(&now), ==, 0);
    CHECK_INT(now, ==, s->saved_force_all);
    s->kd->kpep_config_free(s->cfg);
    s->kd->kpep_db_free(s->db);
}

static void *other_work(void *arg)
{
    uint64_t t0 = dkt_thread_cpu_ns();
    dkt_burn_cpu_ms(60);
    *(uint64_t *)arg = dkt_thread_cpu_ns() - t0;
    return NULL;
}

TEST_CASE(full_sequence)
{
    session s;
    open_session(&s);

    CHECK_INT(s.kp->kpc_set_counting(s.classes), ==, 0);
    CHECK_INT(s.kp->kpc_set_thread_counting(s.classes), ==, 0);
    CHECK_INT(s.kp->kpc_get_counting(), ==, s.classes);
    CHECK_INT(s.kp->kpc_get_thread_counting(), ==, s.classes);

    /* Work on this thread makes every counter grow, each at its own rate. */
    uint64_t a[NEVENTS], b[NEVENTS], c[NEVENTS], d[NEVENTS], e[NEVENTS];
    uint64_t t0 = dkt_thread_cpu_ns();
    read_counters(&s, a);
    uint64_t t1 = dkt_thread_cpu_ns();
    dkt_burn_cpu_ms(30);
    uint64_t t2 = dkt_thread_cpu_ns();
    read_counters(&s, b);
    uint64_t t3 = dkt_thread_cpu_ns();
    for (int i = 0; i < NEVENTS; i++)
        CHECK_U64(b[i], >, a[i]);
    for (int i = 0; i < NEVENTS; i++)
        for (int j = i + 1; j < NEVENTS; j++)
            CHECK_U64(b[i] - a[i], !=, b[j] - a[j]);
    /* Cycles track this thread's CPU time between the reads (3 GHz in the
     * sim): at least [t1, t2] of it, at most [t0, t3]. */
    CHECK_U64(b[0] - a[0], >=, 3 * (t2 - t1) * 95 / 100);
    CHECK_U64(b[0] - a[0], <=, 3 * (t3 - t0) * 105 / 100);

    /* Another thread's work does not show in this thread's counters: they
     * grow only with this thread's own CPU time meanwhile (in proportion to
     * the first phase), however much the other thread burns. */
    pthread_t t;
    uint64_t other_ns = 0;
    CHECK_INT(pthread_create(&t, NULL, other_work, &other_ns), ==, 0);
    pthread_join(t, NULL);
    read_counters(&s, c);
    uint64_t t4 = dkt_thread_cpu_ns();
    CHECK_U64(other_ns, >=, 50000000);
    for (int i = 0; i < NEVENTS; i++) {
        double own = (double)(t4 - t2), first = (double)(t2 - t1);
        CHECK_U64(c[i] - b[i], <=, (uint64_t)((double)(b[i] - a[i]) * own / first * 1.05) + 1);
    }

    /* Stopping freezes them: work while stopped is not counted. With no
     * class counting per thread, a read returns no counters at all. */
    CHECK_INT(s.kp->kpc_set_thread_counting(0), ==, 0);
    CHECK_INT(s.kp->kpc_set_counting(0), ==, 0);
    uint64_t none[KPC_MAX_COUNTERS];
    memset(none, 0xab, sizeof none);
    CHECK_INT(s.kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, none), ==, 0);
    CHECK_U64(none[0], ==, 0xababababababababull);
    dkt_burn_cpu_ms(30);
    CHECK_INT(s.kp->kpc_set_counting(s.classes), ==, 0);
    CHECK_INT(s.kp->kpc_set_thread_counting(s.classes), ==, 0);
    read_counters(&s, d);
    for (int i = 0; i < NEVENTS; i++) {
        CHECK_U64(d[i], >=, c[i]);
        CHECK_U64(d[i] - c[i], <, (b[i] - a[i]) / 10 + 1);
    }
    /* And counting resumes where it stopped. */
    dkt_burn_cpu_ms(10);
    read_counters(&s, e);
    for (int i = 0; i < NEVENTS; i++)
        CHECK_U64(e[i], >, d[i]);
    CHECK_INT(s.kp->kpc_set_thread_counting(0), ==, 0);
    CHECK_INT(s.kp->kpc_set_counting(0), ==, 0);
    close_session(&s);
}

TEST_CASE(user_only_events_get_user_mode_words)
{
    const dk_kperfdata_vtable *kd = NULL;
    CHECK_INT(dk_kperfdata_load(NULL, &kd, NULL), ==, 0);
    kpep_db *db = NULL;
    kpep_config *all = NULL, *user = NULL;
    CHECK_INT(kd->kpep_db_create(NULL, &db), ==, 0);
    dk_cpu cpu = dk__cpu_from_db_name(db->name);
    const char *names[NEVENTS];
    event_names(cpu, names);
    kpep_event *ev = NULL;
    CHECK_INT(kd->kpep_db_event(db, names[2], &ev), ==, 0);
    CHECK_INT(kd->kpep_config_create(db, &all), ==, 0);
    CHECK_INT(kd->kpep_config_create(db, &user), ==, 0);
    kd->kpep_config_force_counters(all);
    kd->kpep_config_force_counters(user);
    CHECK_INT(kd->kpep_config_add_event(all, &ev, KPEP_CONFIG_ADD_ALL_MODES, NULL), ==, 0);
    CHECK_INT(kd->kpep_config_add_event(user, &ev, KPEP_CONFIG_ADD_USER_ONLY, NULL), ==, 0);
    kpc_config_t wa[KPC_MAX_COUNTERS] = {0}, wu[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(kd->kpep_config_kpc(all, wa, sizeof wa), ==, 0);
    CHECK_INT(kd->kpep_config_kpc(user, wu, sizeof wu), ==, 0);
    kpc_config_t a = 0, u = 0;
    for (int i = 0; i < KPC_MAX_COUNTERS; i++) {
        a |= wa[i];
        u |= wu[i];
    }
    if (cpu == DK_CPU_INTEL) {
        CHECK_U64(a, ==, ev->number | 0x400000u | 0x30000u);
        CHECK_U64(u, ==, ev->number | 0x400000u | 0x10000u);
    } else {
        CHECK_U64(a, ==, ev->number | 0x70000u);
        CHECK_U64(u, ==, ev->number | 0x30000u);
    }
    kd->kpep_config_free(all);
    kd->kpep_config_free(user);
    kd->kpep_db_free(db);
}

TEST_CASE(configurable_only_map_starts_at_zero)
{
    /* Without a fixed event the thread buffer holds configurable counters only. */
    session s;
    memset(&s, 0, sizeof s);
    CHECK_INT(dk_kperf_load(NULL, &s.kp, NULL), ==, 0);
    CHECK_INT(dk_kperfdata_load(NULL, &s.kd, NULL), ==, 0);
    CHECK_INT(s.kd->kpep_db_create(NULL, &s.db), ==, 0);
    dk_cpu cpu = dk__cpu_from_db_name(s.db->name);
    const char *names[NEVENTS];
    event_names(cpu, names);
    CHECK_INT(s.kp->kpc_force_all_ctrs_set(1), ==, 0);
    CHECK_INT(s.kd->kpep_config_create(s.db, &s.cfg), ==, 0);
    s.kd->kpep_config_force_counters(s.cfg);
    kpep_event *ev = NULL;
    CHECK_INT(s.kd->kpep_db_event(s.db, names[2], &ev), ==, 0);
    CHECK_INT(s.kd->kpep_config_add_event(s.cfg, &ev, 0, NULL), ==, 0);
    uint32_t classes = 0;
    size_t map = 99;
    CHECK_INT(s.kd->kpep_config_kpc_classes(s.cfg, &classes), ==, 0);
    CHECK_INT(classes, ==, KPC_CLASS_CONFIGURABLE_MASK);
    CHECK_INT(s.kd->kpep_config_kpc_map(s.cfg, &map, sizeof map), ==, 0);
    CHECK_INT(map, <, s.db->config_counter_count);
    kpc_config_t regs[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(s.kd->kpep_config_kpc(s.cfg, regs, sizeof regs), ==, 0);
    CHECK_INT(s.kp->kpc_set_config(classes, regs), ==, 0);
    CHECK_INT(s.kp->kpc_set_counting(classes), ==, 0);
    CHECK_INT(s.kp->kpc_set_thread_counting(classes), ==, 0);
    uint64_t before[KPC_MAX_COUNTERS], after[KPC_MAX_COUNTERS];
    CHECK_INT(s.kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, before), ==, 0);
    dkt_burn_cpu_ms(10);
    CHECK_INT(s.kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, after), ==, 0);
    CHECK_U64(after[map], >, before[map]);
    /* A buffer shorter than the counters of the classes is refused. */
    CHECK_INT(s.kp->kpc_get_thread_counters(0, 1, after), !=, 0);
    CHECK_INT(errno, ==, EINVAL);
    s.kp->kpc_set_thread_counting(0);
    s.kp->kpc_set_counting(0);
    s.kp->kpc_force_all_ctrs_set(0);
    s.kd->kpep_config_free(s.cfg);
    s.kd->kpep_db_free(s.db);
}

TEST_MAIN()
