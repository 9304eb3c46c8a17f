/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_sim_kpc.c - the simulated kperf.framework on its own: privileges,
 * busy counters, injected faults, the selector allow-list, per-CPU counters,
 * and the KPERF timer/action state. Cases that need a different simulated
 * environment get it from tests/CMakeLists.txt.
 */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "dkperf/kperf.h"
#include "util.h"

static const dk_kperf_vtable *kp;
static const dk_kperfdata_vtable *kd;

static void load(void)
{
    CHECK_INT(dk_kperf_load(NULL, &kp, NULL), ==, 0);
    CHECK_INT(dk_kperfdata_load(NULL, &kd, NULL), ==, 0);
    /* The full sim exports the optional kpc.period/kpc.actionid calls. */
    CHECK(kp->kpc_get_period != NULL && kp->kpc_set_period != NULL);
    CHECK(kp->kpc_get_actionid != NULL && kp->kpc_set_actionid != NULL);
}

/* Expect a kpc call to fail with -1 and errno e. */
#define CHECK_ERRNO(call, e)       \
    do {                           \
        errno = 0;                 \
        CHECK_INT((call), ==, -1); \
        CHECK_INT(errno, ==, (e)); \
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
    CHECK_ERRNO(kp->kpc_force_all_ctrs_get(NULL), EPERM);
    CHECK_ERRNO(kp->kperf_action_count_set(1), EPERM);
    CHECK_ERRNO(kp->kperf_reset(), EPERM);
    uint64_t period[KPC_MAX_COUNTERS] = {0};
    uint32_t action[KPC_MAX_COUNTERS] = {0};
    CHECK_ERRNO(kp->kpc_get_period(KPC_CLASS_CONFIGURABLE_MASK, period), EPERM);
    CHECK_ERRNO(kp->kpc_set_period(KPC_CLASS_CONFIGURABLE_MASK, period), EPERM);
    CHECK_ERRNO(kp->kpc_get_actionid(KPC_CLASS_CONFIGURABLE_MASK, action), EPERM);
    CHECK_ERRNO(kp->kpc_set_actionid(KPC_CLASS_CONFIGURABLE_MASK, action), EPERM);
    /* kpc.counting, kpc.thread_counting and kpc.pmu_version pass
     * ktrace_read_check: root only, read as 0 with errno EPERM. */
    errno = 0;
    CHECK_INT(kp->kpc_get_counting(), ==, 0);
    CHECK_INT(errno, ==, EPERM);
    errno = 0;
    CHECK_INT(kp->kpc_get_thread_counting(), ==, 0);
    CHECK_INT(errno, ==, EPERM);
    errno = 0;
    CHECK_INT(kp->kpc_pmu_version(), ==, KPC_PMU_ERROR);
    CHECK_INT(errno, ==, EPERM);
    /* kpc.config_count and kpc.counter_count are public. */
    CHECK_INT(kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK), ==, 2);
    CHECK_INT(kp->kpc_get_config_count(KPC_CLASS_CONFIGURABLE_MASK), ==, 8);
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

TEST_CASE(force_all_get_null_is_a_size_query)
{
    load();
    CHECK_INT(kp->kpc_force_all_ctrs_get(NULL), ==, 0);
}

/* Run on M1 (checked) and M4 (checked and unchecked) by tests/CMakeLists.txt. */
TEST_CASE(unlisted_selector_is_refused)
{
    load();
    const char *cpu = getenv("DKPERF_SIM_CPU");
    const char *policy = getenv("DKPERF_SIM_SELECTOR_POLICY");
    bool m4 = cpu != NULL && strcmp(cpu, "as4") == 0;
    bool checked = policy == NULL || strcmp(policy, "unchecked") != 0;
    uint32_t classes = KPC_CLASS_CONFIGURABLE_MASK;
    uint32_t words = kp->kpc_get_config_count(classes);
    CHECK_INT(words, ==, 8);
    CHECK_INT(kp->kpc_force_all_ctrs_set(1), ==, 0);
    kpc_config_t good[KPC_MAX_COUNTERS] = {0}, bad[KPC_MAX_COUNTERS] = {0};
    good[0] = 0x20000 | (m4 ? 0x11 : 0x02); /* CORE_ACTIVE_CYCLE, user only */
    good[1] = 0x20000 | (m4 ? 0x21 : 0x8d); /* INST_BRANCH */
    CHECK_INT(kp->kpc_set_config(classes, good), ==, 0);
    kpc_config_t back[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(kp->kpc_get_config(classes, back), ==, 0);
    CHECK_U64(back[0], ==, good[0]);
    /* M1's cycles (0x02) is not in M4's allow-list; M4's (0x11) not in M1's.
     * A release kernel refuses with EPERM before it writes any word. */
    bad[0] = 0x20000 | 0x8c;
    bad[1] = 0x20000 | (m4 ? 0x02 : 0x11);
    if (checked) {
        CHECK_ERRNO(kp->kpc_set_config(classes, bad), EPERM);
        CHECK_INT(kp->kpc_get_config(classes, back), ==, 0);
        CHECK_U64(back[0], ==, good[0]); /* nothing was written */
        CHECK_U64(back[1], ==, good[1]);
    } else {
        CHECK_INT(kp->kpc_set_config(classes, bad), ==, 0);
        CHECK_INT(kp->kpc_get_config(classes, back), ==, 0);
        CHECK_U64(back[1], ==, bad[1]);
    }
    /* EL1 (0x40000) is dropped silently on a release kernel; a word with no
     * mode bits counts EL0 (A64) only there, every mode otherwise. */
    kpc_config_t modes[KPC_MAX_COUNTERS] = {0};
    modes[0] = 0x70000 | good[0];
    modes[1] = m4 ? 0x21 : 0x8d;
    CHECK_INT(kp->kpc_set_config(classes, modes), ==, 0);
    CHECK_INT(kp->kpc_get_config(classes, back), ==, 0);
    CHECK_U64(back[0], ==, checked ? (0x30000 | good[0]) : modes[0]);
    CHECK_U64(back[1], ==, modes[1] | (checked ? 0x20000 : 0x70000));
    CHECK_ERRNO(kp->kpc_set_config(classes, NULL), EFAULT);
    CHECK_ERRNO(kp->kpc_set_config(0, good), EINVAL); /* regsize 0 */
    CHECK_ERRNO(kp->kpc_set_counting(1u << 7), EINVAL);
    kp->kpc_force_all_ctrs_set(0);
}

TEST_CASE(power_class_is_disjoint_and_not_writable)
{
    load();
    uint32_t all = KPC_CLASS_FIXED_MASK | KPC_CLASS_CONFIGURABLE_MASK | KPC_CLASS_POWER_MASK;
    /* No power-manager handler is registered: POWER is empty, and force_all
     * changes no count (kpc_get_configurable_pmc_mask). */
    CHECK_INT(kp->kpc_get_counter_count(KPC_CLASS_POWER_MASK), ==, 0);
    CHECK_INT(kp->kpc_get_counter_count(all), ==, 10);
    CHECK_INT(kp->kpc_force_all_ctrs_set(1), ==, 0);
    CHECK_INT(kp->kpc_get_counter_count(all), ==, 10);
    CHECK_INT(kp->kpc_get_config_count(all), ==, 8);
    kpc_config_t cfg[KPC_MAX_COUNTERS] = {0};
    uint64_t period[KPC_MAX_COUNTERS] = {0};
    /* sysctl_kpc_set_config / sysctl_kpc_set_period: any POWER bit is EPERM. */
    CHECK_ERRNO(kp->kpc_set_config(KPC_CLASS_CONFIGURABLE_MASK | KPC_CLASS_POWER_MASK, cfg), EPERM);
    CHECK_ERRNO(kp->kpc_set_period(KPC_CLASS_CONFIGURABLE_MASK | KPC_CLASS_POWER_MASK, period),
                EPERM);
    /* kpc_set_actionid validates nothing. */
    uint32_t action[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(kp->kpc_set_actionid(KPC_CLASS_CONFIGURABLE_MASK | KPC_CLASS_POWER_MASK, action), ==,
              0);
    kp->kpc_force_all_ctrs_set(0);
}

TEST_CASE(periods_and_actions)
{
    load();
    bool intel = kp->kpc_pmu_version() != KPC_PMU_ARM_APPLE;
    uint32_t conf = KPC_CLASS_CONFIGURABLE_MASK;
    uint32_t n = kp->kpc_get_counter_count(conf);
    uint32_t nf = kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK);
    uint64_t p[KPC_MAX_COUNTERS] = {0}, back[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(kp->kpc_get_period(conf, back), ==, 0);
    uint64_t max = back[0]; /* no period: the counter max */
    const char *cpu = getenv("DKPERF_SIM_CPU");
    unsigned width = intel ? 48 : cpu == NULL || strcmp(cpu, "a14") == 0 ? 47 : 63;
    CHECK_U64(max, ==, (UINT64_C(1) << width) - 1);
    p[0] = 10000;
    p[n - 1] = 123;
    CHECK_INT(kp->kpc_set_period(conf, p), ==, 0);
    CHECK_INT(kp->kpc_get_period(conf, back), ==, 0);
    CHECK_U64(back[0], ==, 10000);
    CHECK_U64(back[1], ==, max); /* 0: no PMI */
    CHECK_U64(back[n - 1], ==, 123);
    CHECK_INT(kp->kpc_get_period(conf, NULL), ==, 0); /* a size query */
    CHECK_ERRNO(kp->kpc_set_period(conf, NULL), EFAULT);
    CHECK_ERRNO(kp->kpc_set_period(0, p), EINVAL);
    if (intel) { /* no FIXED_COUNTER_SHADOW on x86: only the set refuses FIXED */
        CHECK_ERRNO(kp->kpc_set_period(KPC_CLASS_FIXED_MASK | conf, p), EINVAL);
        /* kpc_get_period: kpc_fixed_max() - FIXED_RELOAD(i) on every
         * architecture, the fixed counters first. */
        uint64_t fb[KPC_MAX_COUNTERS] = {0};
        CHECK_INT(kp->kpc_get_period(KPC_CLASS_FIXED_MASK, fb), ==, 0);
        for (uint32_t i = 0; i < nf; i++)
            CHECK_U64(fb[i], ==, max);
        CHECK_INT(kp->kpc_get_period(KPC_CLASS_FIXED_MASK | conf, fb), ==, 0);
        CHECK_U64(fb[nf], ==, 10000);
    } else { /* accepted, fixed periods ignored, configurable read from index 0 */
        uint64_t q[KPC_MAX_COUNTERS] = {0};
        q[0] = 777;
        CHECK_INT(kp->kpc_set_period(KPC_CLASS_FIXED_MASK | conf, q), ==, 0);
        CHECK_INT(kp->kpc_get_period(KPC_CLASS_FIXED_MASK | conf, back), ==, 0);
        CHECK_U64(back[0], ==, max);
        CHECK_U64(back[nf], ==, 777);
    }
    uint32_t a[KPC_MAX_COUNTERS] = {0}, ab[KPC_MAX_COUNTERS] = {0};
    for (uint32_t i = 0; i < nf + n; i++)
        a[i] = i + 1;
    CHECK_INT(kp->kpc_set_actionid(KPC_CLASS_FIXED_MASK | conf, a), ==, 0);
    CHECK_INT(kp->kpc_get_actionid(conf, ab), ==, 0);
    CHECK_INT(ab[0], ==, nf + 1); /* fixed first, then configurable */
    CHECK_INT(kp->kpc_get_actionid(KPC_CLASS_FIXED_MASK | conf, ab), ==, 0);
    CHECK_INT(ab[0], ==, 1);
    CHECK_ERRNO(kp->kpc_set_actionid(conf, NULL), EFAULT);
}

TEST_CASE(intel_kernel_checks_no_selector)
{
    load();
    uint32_t fc = KPC_CLASS_FIXED_MASK | KPC_CLASS_CONFIGURABLE_MASK;
    /* Three fixed counters (instructions, core and reference cycles), one
     * fixed config word (IA32_FIXED_CTR_CTRL), the programmable ones. */
    CHECK_INT(kp->kpc_get_counter_count(KPC_CLASS_FIXED_MASK), ==, 3);
    CHECK_INT(kp->kpc_get_config_count(KPC_CLASS_FIXED_MASK), ==, 1);
    uint32_t n = kp->kpc_get_config_count(KPC_CLASS_CONFIGURABLE_MASK);
    CHECK_INT(n, ==, 4);
    CHECK_INT(kp->kpc_force_all_ctrs_set(1), ==, 0);
    kpc_config_t cfg[KPC_MAX_COUNTERS] = {0}, back[KPC_MAX_COUNTERS] = {0};
    cfg[0] = 0x333;                            /* fixed control: not written (NYI) */
    cfg[1] = 0xfe | 0x3f0000u | 0xffull << 32; /* no such event; PC/INT/ANY and high bits */
    CHECK_INT(kp->kpc_set_config(fc, cfg), ==, 0);
    CHECK_INT(kp->kpc_get_config(fc, back), ==, 0);
    CHECK_U64(back[0], ==, 0);
    CHECK_U64(back[1], ==, cfg[1] & 0xffc7ffffu);
    /* Counting FIXED enables every fixed counter in all rings, whatever the
     * config word said; CONFIGURABLE sets PMI|EN in every PERFEVTSEL. */
    CHECK_INT(kp->kpc_set_counting(fc), ==, 0);
    CHECK_INT(kp->kpc_set_thread_counting(KPC_CLASS_FIXED_MASK), ==, 0);
    CHECK_INT(kp->kpc_get_config(fc, back), ==, 0);
    CHECK_U64(back[0], ==, 0xbbb);
    CHECK_U64(back[2], ==, 0x500000);
    uint64_t a[KPC_MAX_COUNTERS] = {0}, b[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, a), ==, 0);
    dkt_burn_cpu_ms(5);
    CHECK_INT(kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, b), ==, 0);
    for (int i = 0; i < 3; i++)
        CHECK_U64(b[i], >, a[i]);
    kp->kpc_set_thread_counting(0);
    kp->kpc_set_counting(0);
    kp->kpc_force_all_ctrs_set(0);
}

static volatile unsigned burn_sink;

/* Time in the kernel: open and close /dev/null until the thread has some. */
static void burn_system_time(void)
{
    struct rusage ru;
    for (int round = 0; round < 4000; round++) {
        /* Some user time too: the sim splits a stretch by getrusage's
         * user/system ticks, and a stretch of system calls alone may get
         * no user tick at all. */
        for (unsigned k = 0; k < 200000; k++)
            burn_sink += k;
        for (int i = 0; i < 1000; i++) {
            int fd = open("/dev/null", O_RDONLY);
            if (fd >= 0)
                close(fd);
        }
        if (getrusage(RUSAGE_THREAD, &ru) == 0 &&
            ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec > 100000)
            return;
    }
}

TEST_CASE(mode_bits_select_user_or_all_time)
{
    load();
    uint32_t conf = KPC_CLASS_CONFIGURABLE_MASK;
    CHECK_INT(kp->kpc_force_all_ctrs_set(1), ==, 0);
    const char *cpu = getenv("DKPERF_SIM_CPU");
    unsigned branch = cpu != NULL && strcmp(cpu, "as4") == 0 ? 0x21 : 0x8d;
    kpc_config_t cfg[KPC_MAX_COUNTERS] = {0};
    cfg[0] = 0x20000 | branch;           /* INST_BRANCH, EL0 only */
    cfg[1] = 0x20000 | 0x40000 | branch; /* INST_BRANCH, EL0 and EL1 */
    CHECK_INT(kp->kpc_set_config(conf, cfg), ==, 0);
    CHECK_INT(kp->kpc_set_counting(conf), ==, 0);
    CHECK_INT(kp->kpc_set_thread_counting(conf), ==, 0);
    uint64_t a[KPC_MAX_COUNTERS] = {0}, b[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, a), ==, 0);
    burn_system_time();
    CHECK_INT(kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, b), ==, 0);
    uint64_t user = b[0] - a[0], all = b[1] - a[1];
    CHECK_U64(user, >, 0);
    const char *policy = getenv("DKPERF_SIM_SELECTOR_POLICY");
    if (policy != NULL && strcmp(policy, "unchecked") == 0)
        CHECK_U64(all, >, user + user / 10); /* kernel time counts too */
    else
        CHECK_U64(all, ==, user); /* a release kernel dropped EL1 */
    kp->kpc_set_thread_counting(0);
    kp->kpc_set_counting(0);
    kp->kpc_force_all_ctrs_set(0);
}

TEST_CASE(power_counters_stay_with_the_power_manager_unless_forced)
{
    load();
    uint32_t classes = KPC_CLASS_CONFIGURABLE_MASK;
    kpc_config_t cfg[KPC_MAX_COUNTERS] = {0};
    for (int i = 0; i < 8; i++)
        cfg[i] = 0x30000 | 141; /* EL0 only: a release kernel would drop EL1 */
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
    CHECK_ERRNO(kp->kperf_action_samplers_set(1, KPERF_SAMPLER_PMC_THREAD | KPERF_SAMPLER_PMC_CPU),
                EINVAL);
    CHECK_ERRNO(kp->kperf_action_samplers_set(0, 1), EINVAL);
    CHECK_INT(kp->kperf_action_filter_set_by_pid(1, 1234), ==, 0);
    CHECK_INT(kp->kperf_action_filter_set_by_task(1, -1), ==, 0);

    CHECK_ERRNO(kp->kperf_action_count_set(1), EINVAL); /* actions never shrink */
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
    CHECK_INT(kp->kperf_timer_action_set(0, 9), ==, 0); /* action ids not validated */
    CHECK_INT(kp->kperf_sample_set(1), ==, 0);
    CHECK_INT(kp->kperf_sample_get(&u), ==, 0);
    CHECK_INT(u, ==, 1);
    /* Timers cannot change while sampling. */
    CHECK_ERRNO(kp->kperf_timer_period_set(0, ticks), EBUSY);
    CHECK_ERRNO(kp->kperf_timer_count_set(2), EBUSY);
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(kp->kperf_sample_get(&u), ==, 0);
    CHECK_INT(u, ==, 0);
    /* kperf_reset keeps the action and timer counts. */
    CHECK_INT(kp->kperf_action_count_get(&u), ==, 0);
    CHECK_INT(u, ==, 2);
    CHECK_INT(kp->kperf_timer_count_get(&u), ==, 0);
    CHECK_INT(u, ==, 1);
}

TEST_CASE(kperf_timer_periods_raised_to_the_minimum)
{
    /* kptimer_set_period raises a short period when it is set, so a client
     * reads back what the timer will use; kptimer_set_pet_timerid turns PET
     * off for an id past the timers and raises the PET timer's period. */
    load();
    CHECK_INT(kp->kperf_reset(), ==, 0);
    CHECK_INT(kp->kperf_action_count_set(1), ==, 0);
    CHECK_INT(kp->kperf_timer_count_set(2), ==, 0);
    bool intel = kp->kperf_tick_frequency() == 1000000000u;
    uint64_t min = kp->kperf_ns_to_ticks(intel ? 20000 : 50000);
    uint64_t p = 0;
    CHECK_INT(kp->kperf_timer_period_set(0, 1), ==, 0);
    CHECK_INT(kp->kperf_timer_period_get(0, &p), ==, 0);
    CHECK_U64(p, ==, min);
    CHECK_INT(kp->kperf_timer_period_set(0, 0), ==, 0); /* 0: timer off, kept */
    CHECK_INT(kp->kperf_timer_period_get(0, &p), ==, 0);
    CHECK_U64(p, ==, 0);
    CHECK_INT(kp->kperf_timer_period_set(1, min * 3), ==, 0);
    CHECK_INT(kp->kperf_timer_period_get(1, &p), ==, 0);
    CHECK_U64(p, ==, min * 3);
    CHECK_INT(kp->kperf_timer_pet_set(1), ==, 0);
    CHECK_INT(kp->kperf_timer_period_get(1, &p), ==, 0);
    CHECK_U64(p, ==, kp->kperf_ns_to_ticks(1000000)); /* the PET minimum */
    CHECK_INT(kp->kperf_timer_pet_set(999), ==, 0);   /* PET off */
    uint32_t u = 0;
    CHECK_INT(kp->kperf_timer_pet_get(&u), ==, 0);
    CHECK_INT(u, ==, 999);
    /* While sampling: a bad timer id is EINVAL, a good one EBUSY; the
     * count is EBUSY whatever it is. */
    CHECK_INT(kp->kperf_sample_set(1), ==, 0);
    CHECK_ERRNO(kp->kperf_timer_period_set(5, min), EINVAL);
    CHECK_ERRNO(kp->kperf_timer_action_set(5, 1), EINVAL);
    CHECK_ERRNO(kp->kperf_timer_period_set(0, min), EBUSY);
    CHECK_ERRNO(kp->kperf_timer_count_set(KPERF_TIMER_MAX + 1), EBUSY);
    CHECK_INT(kp->kperf_reset(), ==, 0);
}

TEST_CASE(sampling_needs_an_action_not_a_timer)
{
    load();
    uint32_t n = 0;
    CHECK_INT(kp->kperf_action_count_get(&n), ==, 0);
    CHECK_INT(n, ==, 0);
    CHECK_ERRNO(kp->kperf_sample_set(1), ECANCELED); /* kperf_enable_sampling */
    CHECK_INT(kp->kperf_action_count_set(1), ==, 0);
    CHECK_INT(kp->kperf_timer_count_get(&n), ==, 0);
    CHECK_INT(n, ==, 0);
    CHECK_INT(kp->kperf_sample_set(1), ==, 0);
    CHECK_INT(kp->kperf_sample_set(0), ==, 0);
}

TEST_MAIN()
