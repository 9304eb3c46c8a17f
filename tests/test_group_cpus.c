/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_group_cpus.c - per-CPU and per-level reads of dk_group
 * (dk_group_read_cpus, dk_group_read_perf_levels) against the simulated
 * frameworks, once per chip: each chip's P/E layout, counts that differ by
 * CPU, and rows that add up to the totals.
 */
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "api.h"
#include "child.h"

/* The layout the sim gives DKPERF_SIM_CPU's chip (tests/sim/README.md):
 * performance and efficiency cores. */
static void expected_layout(unsigned *p, unsigned *e)
{
    static const struct {
        const char *chip;
        unsigned p, e;
    } layouts[] = {{"a14", 4, 4},    {"a15", 4, 4}, {"a16", 2, 4},    {"as1", 4, 4},
                   {"as2", 2, 4},    {"as3", 6, 6}, {"as4", 4, 6},    {"as4-1", 10, 4},
                   {"as4-2", 12, 4}, {"as5", 4, 6}, {"as5-2", 10, 4}, {"haswell", 8, 0}};
    const char *chip = getenv("DKPERF_SIM_CPU");
    for (size_t i = 0; chip != NULL && i < sizeof layouts / sizeof layouts[0]; i++)
        if (strcmp(layouts[i].chip, chip) == 0) {
            *p = layouts[i].p;
            *e = layouts[i].e;
            return;
        }
    DKT_FAIL("DKPERF_SIM_CPU=%s: no layout known to this test", chip != NULL ? chip : "(unset)");
}

TEST_CASE(sim_system_group_reads_each_cpu_and_level)
{
    unsigned p, e;
    expected_layout(&p, &e);
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions", "cycles", "branches"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 3, 0, &g));
    size_t ncpu = dk_group_cpu_count(g);
    CHECK_INT(ncpu, ==, p + e);
    size_t levels = dk_group_perf_levels(g);
    CHECK_INT(levels, ==, e > 0 ? 2 : 1);
    size_t per_level[2] = {0, 0};
    for (size_t c = 0; c < ncpu; c++) {
        dk_cpu_info ci = {.size = sizeof ci};
        CHECK_OK(dk_group_cpu_info(g, c, &ci));
        CHECK_INT(ci.id, ==, (int)c);
        CHECK(ci.level >= 0 && (size_t)ci.level < levels);
        CHECK_STR(ci.level_name, dk_group_perf_level_name(g, (size_t)ci.level));
        per_level[ci.level]++;
        /* The efficiency cores take the lowest numbers. */
        if (e > 0)
            CHECK_INT(ci.level, ==, c < e ? 1 : 0);
        /* Apple cores have one CPU each; the Intel layout two. */
        CHECK_INT(ci.core, ==, (int)(e > 0 ? c : c / 2));
    }
    if (e > 0) {
        CHECK_STR(dk_group_perf_level_name(g, 0), "P");
        CHECK_STR(dk_group_perf_level_name(g, 1), "E");
        CHECK_INT(per_level[0], ==, p);
        CHECK_INT(per_level[1], ==, e);
    } else {
        CHECK_STR(dk_group_perf_level_name(g, 0), "all");
    }
    dk_cpu_info bad = {.size = sizeof bad};
    CHECK_ERR(dk_group_cpu_info(g, ncpu, &bad), DK_EINVAL);
    bad.size = 4;
    CHECK_ERR(dk_group_cpu_info(g, 0, &bad), DK_EINVAL);

    CHECK_OK(dk_group_start(g));
    dkt_burn_cpu_ms(200); /* /proc/stat counts 10 ms ticks */
    uint64_t *cpus = calloc(ncpu * 3, sizeof *cpus);
    CHECK(cpus != NULL);
    CHECK_ERR(dk_group_read_cpus(g, cpus, ncpu + 1), DK_EINVAL);
    CHECK_OK(dk_group_read_cpus(g, cpus, ncpu)); /* while running */
    CHECK_OK(dk_group_stop(g));
    uint64_t total[3], lv[2 * 3];
    CHECK_OK(dk_group_read(g, total, NULL));
    CHECK_OK(dk_group_read_cpus(g, cpus, ncpu));
    CHECK_OK(dk_group_read_perf_levels(g, lv, levels));
    /* With each CPU's reading: the same counts; kpc never time-shares, so
     * every CPU's reading is the group's (counted, its times). */
    uint64_t *again = calloc(ncpu * 3, sizeof *again);
    dk_reading *info = calloc(ncpu * 3, sizeof *info), whole[3];
    CHECK(again != NULL && info != NULL);
    CHECK_ERR(dk_group_read_cpus_info(g, again, NULL, ncpu), DK_EINVAL);
    CHECK_ERR(dk_group_read_cpus_info(g, again, info, ncpu + 1), DK_EINVAL);
    CHECK_OK(dk_group_read_cpus_info(g, again, info, ncpu));
    CHECK_OK(dk_group_read(g, total, whole));
    for (size_t j = 0; j < ncpu * 3; j++) {
        CHECK_U64(again[j], ==, cpus[j]);
        CHECK_U64(info[j].time_enabled, ==, whole[j % 3].time_enabled);
        CHECK_U64(info[j].time_running, ==, whole[j % 3].time_running);
        CHECK(info[j].counted && !info[j].multiplexed);
    }
    free(again);
    free(info);
    /* Stopped, the rows are frozen: they add up to the totals exactly. */
    for (size_t i = 0; i < 3; i++) {
        uint64_t sum = 0, lsum = 0;
        for (size_t c = 0; c < ncpu; c++)
            sum += cpus[c * 3 + i];
        for (size_t l = 0; l < levels; l++)
            lsum += lv[l * 3 + i];
        CHECK_U64(total[i], >, 0);
        CHECK_U64(sum, ==, total[i]);
        CHECK_U64(lsum, ==, total[i]);
    }
    /* CPUs differ: CPU 0 and the next CPU on the same host CPU count alike
     * only if the sim gave every CPU the same rate. */
    size_t distinct = 0;
    for (size_t c = 1; c < ncpu; c++)
        if (cpus[c * 3 + 1] != cpus[0 * 3 + 1] && cpus[c * 3 + 1] > 0)
            distinct++;
    CHECK_INT(distinct, >, 0);
    if (e > 0) {
        CHECK_U64(lv[0 * 3 + 1], >, 0); /* P cycles */
        CHECK_U64(lv[1 * 3 + 1], >, 0); /* E cycles */
    }
    free(cpus);
    dk_group_close(g);
    dk_sampler_close(s);
}

/* Without root (selfcounts) and with it (kperf), a process group on macOS
 * splits instructions and cycles by level where the machine has two. */
static void process_split(dk_backend_kind backend)
{
    unsigned p, e;
    expected_layout(&p, &e);
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.backend = backend;
    dk_sampler *s = NULL;
    CHECK_OK(dk_sampler_open(&s, &o));
    const char *names[] = {"instructions", "cycles"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 2, 0, &g));
    CHECK_INT(dk_group_cpu_count(g), ==, 0);
    uint64_t cpus[2];
    CHECK_ERR(dk_group_read_cpus(g, cpus, 1), DK_ENOTSUP);
    dk_reading info[2];
    CHECK_ERR(dk_group_read_cpus_info(g, cpus, info, 1), DK_ENOTSUP);
    if (e == 0) {
        CHECK_INT(dk_group_perf_levels(g), ==, 0);
        uint64_t lv[2];
        CHECK_ERR(dk_group_read_perf_levels(g, lv, 1), DK_ENOTSUP);
        dk_group_close(g);
        dk_sampler_close(s);
        return;
    }
    CHECK_INT(dk_group_perf_levels(g), ==, 2);
    CHECK_STR(dk_group_perf_level_name(g, 0), "P");
    CHECK_STR(dk_group_perf_level_name(g, 1), "E");
    CHECK(dk_group_perf_level_name(g, 2) == NULL);
    CHECK_OK(dk_group_start(g));
    dkt_burn_cpu_ms(60);
    CHECK_OK(dk_group_stop(g));
    uint64_t total[2], lv[4];
    CHECK_ERR(dk_group_read_perf_levels(g, lv, 3), DK_EINVAL);
    CHECK_OK(dk_group_read(g, total, NULL));
    CHECK_OK(dk_group_read_perf_levels(g, lv, 2));
    for (size_t i = 0; i < 2; i++) {
        CHECK_U64(total[i], >, 0);
        CHECK_U64(lv[i] + lv[2 + i], ==, total[i]);
        CHECK_U64(lv[i], >, 0);
        CHECK_U64(lv[2 + i], >, 0);
    }
    dk_group_close(g);
    dk_sampler_close(s);
}

TEST_CASE(sim_process_group_splits_by_level_without_root)
{
    setenv("DKPERF_SIM_PRIVILEGED", "0", 1);
    process_split(DK_BACKEND_SELFCOUNTS);
}

TEST_CASE(sim_process_group_splits_by_level_with_root) { process_split(DK_BACKEND_KPERF); }

TEST_MAIN()

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* kpc never time-shares: a system group's counters run whenever it is
 * enabled, and its readings say for how long (perf stat -x's run time and
 * percentage), the same for every CPU; the time stopped is not counted. */
TEST_CASE(sim_system_group_times_its_enabled_spans)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions", "cycles"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 2, 0, &g));
    size_t ncpu = dk_group_cpu_count(g);
    uint64_t v[2], *cv = calloc(ncpu * 2, sizeof *cv);
    dk_reading r[2], *cr = calloc(ncpu * 2, sizeof *cr);
    CHECK(cv != NULL && cr != NULL);
    uint64_t t0 = now_ns();
    CHECK_OK(dk_group_start(g));
    uint64_t t1 = now_ns();
    dkt_sleep_ms(100);
    uint64_t t2 = now_ns();
    CHECK_OK(dk_group_stop(g));
    uint64_t t3 = now_ns();
    dkt_sleep_ms(200); /* stopped: not counted */
    uint64_t t4 = now_ns();
    CHECK_OK(dk_group_start(g));
    uint64_t t5 = now_ns();
    dkt_sleep_ms(100);
    uint64_t t6 = now_ns();
    CHECK_OK(dk_group_read(g, v, r)); /* while running */
    uint64_t t7 = now_ns();
    for (size_t i = 0; i < 2; i++) {
        CHECK_U64(r[i].time_enabled, >=, (t2 - t1) + (t6 - t5));
        CHECK_U64(r[i].time_enabled, <=, (t3 - t0) + (t7 - t4));
        CHECK_U64(r[i].time_running, ==, r[i].time_enabled);
        CHECK(r[i].counted && !r[i].multiplexed);
    }
    CHECK_OK(dk_group_stop(g));
    uint64_t t8 = now_ns();
    CHECK_OK(dk_group_read(g, v, r));
    dkt_sleep_ms(50);
    CHECK_OK(dk_group_read_cpus_info(g, cv, cr, ncpu));
    for (size_t i = 0; i < 2; i++) {
        CHECK_U64(r[i].time_enabled, >=, (t2 - t1) + (t6 - t5));
        CHECK_U64(r[i].time_enabled, <=, (t3 - t0) + (t8 - t4));
        CHECK_U64(r[i].time_running, ==, r[i].time_enabled);
    }
    for (size_t j = 0; j < ncpu * 2; j++) {
        CHECK_U64(cr[j].time_enabled, ==, r[j % 2].time_enabled); /* stopped: frozen */
        CHECK_U64(cr[j].time_running, ==, r[j % 2].time_running);
        CHECK(cr[j].counted && !cr[j].multiplexed);
    }
    free(cv);
    free(cr);
    dk_group_close(g);
    dk_sampler_close(s);
}
