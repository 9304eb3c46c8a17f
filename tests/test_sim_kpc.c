/*
 * test_sim_kpc.c - the simulated kperf.framework on its own: privileges,
 * busy counters, injected faults, the selector allow-list, per-CPU counters,
 * and the KPERF timer/action state. Cases that need a different simulated
 * environment get it from tests/CMakeLists.txt.
 */
#include <errno.h>
#include <string.h>

#include "dkperf/kperf.h"
#include "util.h"

static const dk_kperf_vtable *kp;
static const dk_kperfdata_vtable *kd;

static void load(void)
{
    CHECK_INT(dk_kperf_load(NULL, &kp, NULL), ==, 0);
    CHECK_INT(dk_kperfdata_load(NULL, &kd, NULL), ==, 0);
}

/* Expect a kpc call to fail with -1 and errno e. */
#define CHECK_ERRNO(call, e)              \
    do {                                  \
        errno = 0;                        \
        CHECK_INT((call), ==, -1);        \
        CHECK_INT(errno, ==, (e));        \
    } while (0)

TEST_CASE(unprivileged_calls_fail)
{
    load();
    int v = 0;
    uint64_t buf[KPC_MAX_COUNTERS];
    kpc_config_t cfg[KPC_MAX_COUNTERS] = {0};
    CHECK_ERRNO(kp->kpc_force_all_ctrs_get(&v), EPERM);
    CHECK_ERRNO(kp->kpc_force_all_ctrs_set(1), EPERM);
    CHECK_ERRNO(kp->kpc_set_counting(KPC_CLASS_FIXED_MASK), EPERM);
    CHECK_ERRNO(kp->kpc_set_thread_counting(KPC_CLASS_FIXED_MASK), EPERM);
    CHECK_ERRNO(kp->kpc_set_config(KPC_CLASS_CONFIGURABLE_MASK, cfg), EPERM);
    CHECK_ERRNO(kp->kpc_get_config(KPC_CLASS_CONFIGURABLE_MASK, cfg), EPERM);
    CHECK_ERRNO(kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, buf), EPERM);
    CHECK_ERRNO(kp->kpc_get_cpu_counters(true, KPC_CLASS_FIXED_MASK, NULL, buf), EPERM);
    CHECK_ERRNO(kp->kperf_action_count_set(1), EPERM);
    CHECK_ERRNO(kp->kperf_reset(), EPERM);
    /* What any user may read still works. */
    CHECK_INT(kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK), ==, 2);
    CHECK_INT(kp->kpc_get_config_count(KPC_CLASS_CONFIGURABLE_MASK), ==, 8);
    CHECK_INT(kp->kpc_pmu_version(), ==, KPC_PMU_ARM_APPLE);
    CHECK_INT(kp->kpc_get_counting(), ==, 0);
    char s[64];
    CHECK_INT(kp->kpc_cpu_string(s, sizeof s), >, 0);
    CHECK_STR(s, "cpu_100000c_2_1b588bb3");
    /* kperfdata needs no privileges. */
    kpep_db *db = NULL;
    CHECK_INT(kd->kpep_db_create(NULL, &db), ==, 0);
    kd->kpep_db_free(db);
}

TEST_CASE(busy_counters_refuse_acquisition)
{
    load();
    /* Another client holds them: force_all_ctrs reads 1 throughout. */
    int v = -1;
    CHECK_INT(kp->kpc_force_all_ctrs_get(&v), ==, 0);
    CHECK_INT(v, ==, 1);
    CHECK_ERRNO(kp->kpc_force_all_ctrs_set(1), EBUSY);
    CHECK_INT(kp->kpc_force_all_ctrs_get(&v), ==, 0);
    CHECK_INT(v, ==, 1);
    /* Giving back what one does not hold is harmless. */
    CHECK_INT(kp->kpc_force_all_ctrs_set(0), ==, 0);
}

TEST_CASE(initial_force_all)
{
    load();
    int v = -1;
    CHECK_INT(kp->kpc_force_all_ctrs_get(&v), ==, 0);
    CHECK_INT(v, ==, 1);
}

TEST_CASE(injected_faults)
{
    load();
    /* kpc_set_counting:5@2 - only the second call fails, with EIO. */
    CHECK_INT(kp->kpc_set_counting(KPC_CLASS_FIXED_MASK), ==, 0);
    CHECK_ERRNO(kp->kpc_set_counting(0), EIO);
    CHECK_INT(kp->kpc_set_counting(0), ==, 0);
    /* kpep_db_create:7 - every call fails with that KPEP code. */
    kpep_db *db = NULL;
    CHECK_INT(kd->kpep_db_create(NULL, &db), ==, KPEP_CONFIG_ERROR_DB_NOT_FOUND);
    CHECK_INT(kd->kpep_db_create("a15", &db), ==, KPEP_CONFIG_ERROR_DB_NOT_FOUND);
    /* Functions returning a count report failure as 0. */
    CHECK_INT(kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK), ==, 0);
}

TEST_CASE(unknown_cpu)
{
    load();
    kpep_db *db = NULL;
    CHECK_INT(kd->kpep_db_create(NULL, &db), ==, KPEP_CONFIG_ERROR_DB_NOT_FOUND);
    CHECK_INT(kp->kpc_pmu_version(), ==, KPC_PMU_ERROR);
    CHECK_INT(kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK), ==, 0);
    char s[64];
    CHECK_ERRNO(kp->kpc_cpu_string(s, sizeof s), EINVAL);
}

TEST_CASE(unlisted_selector_is_refused)
{
    load();
    uint32_t classes = KPC_CLASS_CONFIGURABLE_MASK;
    uint32_t words = kp->kpc_get_config_count(classes);
    CHECK_INT(words, ==, 8);
    CHECK_INT(kp->kpc_force_all_ctrs_set(1), ==, 0);
    kpc_config_t good[KPC_MAX_COUNTERS] = {0}, bad[KPC_MAX_COUNTERS] = {0};
    good[0] = 0x70000 | 141; /* INST_BRANCH on M1 */
    CHECK_INT(kp->kpc_set_config(classes, good), ==, 0);
    /* 0x11 is cycles on M4, not a selector M1 lists: macOS 26.6 refuses it. */
    bad[0] = 0x70000 | 0x11;
    CHECK_ERRNO(kp->kpc_set_config(classes, bad), EINVAL);
    kpc_config_t back[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(kp->kpc_get_config(classes, back), ==, 0);
    CHECK_U64(back[0], ==, good[0]); /* the refused write changed nothing */
    CHECK_ERRNO(kp->kpc_set_config(classes, NULL), EINVAL);
    CHECK_ERRNO(kp->kpc_set_counting(1u << 7), EINVAL);
    kp->kpc_force_all_ctrs_set(0);
}

TEST_CASE(power_counters_stay_with_the_power_manager_unless_forced)
{
    load();
    uint32_t classes = KPC_CLASS_CONFIGURABLE_MASK;
    kpc_config_t cfg[KPC_MAX_COUNTERS] = {0};
    for (int i = 0; i < 8; i++)
        cfg[i] = 0x70000 | 141;
    CHECK_INT(kp->kpc_set_config(classes, cfg), ==, 0);
    kpc_config_t back[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(kp->kpc_get_config(classes, back), ==, 0);
    /* Counters 5..7 (words 3..5) were not written. */
    for (int i = 0; i < 8; i++)
        CHECK_U64(back[i], ==, (i >= 3 && i <= 5) ? 0 : cfg[i]);
    CHECK_INT(kp->kpc_force_all_ctrs_set(1), ==, 0);
    CHECK_INT(kp->kpc_set_config(classes, cfg), ==, 0);
    CHECK_INT(kp->kpc_get_config(classes, back), ==, 0);
    for (int i = 0; i < 8; i++)
        CHECK_U64(back[i], ==, cfg[i]);
    /* Releasing gives them back. */
    CHECK_INT(kp->kpc_force_all_ctrs_set(0), ==, 0);
    CHECK_INT(kp->kpc_get_config(classes, back), ==, 0);
    CHECK_U64(back[4], ==, 0);
}

TEST_CASE(cpu_counters_follow_system_busy_time)
{
    load();
    uint32_t classes = KPC_CLASS_FIXED_MASK;
    uint32_t per_cpu = kp->kpc_get_counter_count(classes);
    CHECK_INT(per_cpu, ==, 2);
    CHECK_INT(kp->kpc_force_all_ctrs_set(1), ==, 0);
    CHECK_INT(kp->kpc_set_counting(classes), ==, 0);
    uint64_t before[256 * 2] = {0}, after[256 * 2] = {0};
    int cur = -1;
    CHECK_INT(kp->kpc_get_cpu_counters(true, classes, &cur, before), ==, 0);
    CHECK_INT(cur, >=, 0);
    dkt_burn_cpu_ms(120); /* /proc/stat counts in 10 ms ticks */
    CHECK_INT(kp->kpc_get_cpu_counters(true, classes, NULL, after), ==, 0);
    uint64_t grew = 0;
    for (int i = 0; i < 256 * 2; i++)
        grew += after[i] - before[i];
    CHECK_U64(grew, >, 0);
    uint64_t one[2];
    CHECK_INT(kp->kpc_get_cpu_counters(false, classes, &cur, one), ==, 0);
    CHECK_INT(kp->kpc_set_counting(0), ==, 0);
    kp->kpc_force_all_ctrs_set(0);
}

TEST_CASE(kperf_timers_and_actions)
{
    load();
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_ERRNO(kp->kperf_action_count_set(KPERF_ACTION_MAX + 1), EINVAL);
    CHECK_INT(kp->kperf_action_count_set(2), ==, 0);
    uint32_t u = 0;
    CHECK_INT(kp->kperf_action_count_get(&u), ==, 0);
    CHECK_INT(u, ==, 2);
    CHECK_INT(kp->kperf_action_samplers_set(1, KPERF_SAMPLER_PMC_THREAD | KPERF_SAMPLER_TH_INFO),
              ==, 0);
    CHECK_INT(kp->kperf_action_samplers_get(1, &u), ==, 0);
    CHECK_INT(u, ==, KPERF_SAMPLER_PMC_THREAD | KPERF_SAMPLER_TH_INFO);
    CHECK_ERRNO(kp->kperf_action_samplers_set(3, 1), EINVAL);
    CHECK_ERRNO(kp->kperf_action_samplers_set(0, 1), EINVAL);
    CHECK_INT(kp->kperf_action_filter_set_by_pid(1, 1234), ==, 0);
    CHECK_INT(kp->kperf_action_filter_set_by_task(1, -1), ==, 0);

    CHECK_ERRNO(kp->kperf_sample_set(1), EINVAL); /* no timer yet */
    CHECK_ERRNO(kp->kperf_timer_count_set(KPERF_TIMER_MAX + 1), EINVAL);
    CHECK_INT(kp->kperf_timer_count_set(1), ==, 0);
    CHECK_INT(kp->kperf_timer_count_get(&u), ==, 0);
    CHECK_INT(u, ==, 1);
    uint64_t ticks = kp->kperf_ns_to_ticks(1000000);
    CHECK_U64(ticks, ==, 24000); /* 1 ms at 24 MHz */
    CHECK_U64(kp->kperf_ticks_to_ns(ticks), ==, 1000000);
    CHECK_U64(kp->kperf_tick_frequency(), ==, 24000000);
    CHECK_INT(kp->kperf_timer_period_set(0, ticks), ==, 0);
    uint64_t p = 0;
    CHECK_INT(kp->kperf_timer_period_get(0, &p), ==, 0);
    CHECK_U64(p, ==, ticks);
    CHECK_ERRNO(kp->kperf_timer_period_set(1, ticks), EINVAL);
    CHECK_INT(kp->kperf_timer_action_set(0, 1), ==, 0);
    CHECK_INT(kp->kperf_timer_action_get(0, &u), ==, 0);
    CHECK_INT(u, ==, 1);
    CHECK_INT(kp->kperf_timer_pet_set(0), ==, 0);
    CHECK_INT(kp->kperf_timer_pet_get(&u), ==, 0);
    CHECK_INT(u, ==, 0);
    CHECK_INT(kp->kperf_sample_set(1), ==, 0);
    CHECK_INT(kp->kperf_sample_get(&u), ==, 0);
    CHECK_INT(u, ==, 1);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(kp->kperf_sample_get(&u), ==, 0);
    CHECK_INT(u, ==, 0);
    CHECK_INT(kp->kperf_action_count_get(&u), ==, 0);
    CHECK_INT(u, ==, 0);
}

TEST_MAIN()
