/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_framework_counts.c - every count kperf and kperfdata answer is
 * input: a count of 0 (how the count-returning calls fail) or one that does
 * not cover what is read must end in a clear error naming the call, never
 * in a buffer sized from it. Each case gets its injected fault from
 * tests/CMakeLists.txt; the kperf backend is forced.
 */
#include <string.h>

#include "api.h"

static void check_nothing_held(void)
{
    CHECK_INT(raw_force_all(), ==, 0);
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
}

static void open_fails(int err, const char *call)
{
    dk_sampler *s = (dk_sampler *)&s;
    CHECK_ERR(dk_sampler_open(&s, NULL), err);
    CHECK(s == NULL);
    CHECK_CONTAINS(dk_last_error(), call);
    check_nothing_held();
}

static void thread_open_fails(int err, const char *call)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions", "cycles", "branches"};
    dk_thread *t = (dk_thread *)&t;
    CHECK_ERR(dk_thread_open_names(s, names, 3, &t), err);
    CHECK(t == NULL);
    CHECK_CONTAINS(dk_last_error(), call);
    dk_sampler_close(s);
    check_nothing_held();
}

TEST_CASE(per_cpu_counter_count_zero)
{
    /* kpc_get_counter_count:5@4 - the sampler's three calls work, the
     * system group's fails. */
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions", "cycles", "branches"};
    dk_group *g = (dk_group *)&g;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 3, 0, &g), DK_EOS);
    CHECK(g == NULL);
    CHECK_CONTAINS(dk_last_error(), "kpc_get_counter_count(0x3) returned 0");
    /* Nothing of the group stays programmed: a thread sampler still opens. */
    dk_thread *t = open_names(s, names, 3);
    dk_thread_close(t);
    dk_sampler_close(s);
    check_nothing_held();
}

TEST_CASE(fixed_counter_count_zero) { open_fails(DK_EOS, "kpc_get_counter_count(0x1) returned 0"); }

TEST_CASE(configurable_counter_count_zero)
{
    open_fails(DK_EOS, "kpc_get_counter_count(0x2) returned 0");
}

TEST_CASE(configurable_config_count_zero)
{
    open_fails(DK_EOS, "kpc_get_config_count(0x2) returned 0");
}

TEST_CASE(database_events_count_zero)
{
    /* kpep_db_events_count:0 - "succeeds" without writing the count. */
    open_fails(DK_EKPEP, "kpep_db_events_count returned 0");
}

TEST_CASE(config_events_count_zero)
{
    thread_open_fails(DK_EKPEP, "kpep_config_events_count returned 0");
}

TEST_CASE(config_register_count_zero)
{
    thread_open_fails(DK_EKPEP, "kpep_config_kpc_count returned 0");
}

TEST_CASE(config_map_unwritten) { thread_open_fails(DK_EKPEP, "kpep_config_kpc_map placed event"); }

TEST_MAIN()
