/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_api_errors.c - every error kind of the public API, provoked through
 * the simulated frameworks. Each case gets its environment (privileges,
 * busy counters, injected faults) from tests/CMakeLists.txt, and checks
 * that no failure leaves the counters acquired.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api.h"

static void check_nothing_held(void)
{
    CHECK_INT(raw_force_all(), ==, 0);
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
}

TEST_CASE(eperm_without_privileges)
{
    dk_sampler *s = (dk_sampler *)&s;
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_EPERM);
    CHECK(s == NULL);
    CHECK_CONTAINS(dk_last_error(), "root");
    CHECK_CONTAINS(dk_last_error(), "com.apple.private.kernel.kpc");
    CHECK_INT(dk_last_os_error(), ==, EPERM);
    CHECK_CONTAINS(dk_strerror(DK_EPERM), "root");
}

/* The options of a newer dkperf.h: this library's struct and more. */
typedef struct newer_options {
    dk_sampler_options known;
    uint64_t added[2];
} newer_options;

TEST_CASE(larger_options_with_a_non_zero_tail_are_refused)
{
    newer_options o;
    memset(&o, 0, sizeof o);
    o.known = (dk_sampler_options)DK_SAMPLER_OPTIONS_INIT;
    o.known.size = sizeof o;
    ((unsigned char *)&o.added[1])[3] = 1;
    dk_sampler *s = (dk_sampler *)&s;
    CHECK_ERR(dk_sampler_open(&s, &o.known), DK_EINVAL);
    CHECK(s == NULL);
    char want[96];
    snprintf(want, sizeof want, "dk_sampler_options.size is %zu", sizeof o);
    CHECK_CONTAINS(dk_last_error(), want);
    snprintf(want, sizeof want, "byte %zu is not zero", offsetof(newer_options, added) + 8 + 3);
    CHECK_CONTAINS(dk_last_error(), want);
    check_nothing_held();
}

TEST_CASE(larger_options_with_a_zero_tail_are_accepted)
{
    newer_options o;
    memset(&o, 0, sizeof o);
    o.known = (dk_sampler_options)DK_SAMPLER_OPTIONS_INIT;
    o.known.size = sizeof o;
    dk_sampler *s = NULL;
    CHECK_OK(dk_sampler_open(&s, &o.known));
    CHECK_STR(dk_sampler_backend(s), "kperf");
    dk_sampler_close(s);
    check_nothing_held();
}

/* A size inside a field (17: one byte of the backend enum) is no size the
 * struct ever had; the sizes older headers gave are taken. */
TEST_CASE(options_sizes_inside_a_field_are_refused)
{
    unsigned char buf[sizeof(dk_sampler_options)];
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.backend = DK_BACKEND_PERF_EVENT;
    const size_t inside[] = {offsetof(dk_sampler_options, backend) + 1,
                             offsetof(dk_sampler_options, flags) + 3};
    for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++) {
        memset(buf, 0, sizeof buf);
        o.size = inside[i];
        memcpy(buf, &o, sizeof o);
        dk_sampler *s = (dk_sampler *)&s;
        CHECK_ERR(dk_sampler_open(&s, (const dk_sampler_options *)buf), DK_EINVAL);
        CHECK(s == NULL);
        CHECK_CONTAINS(dk_last_error(), "ends inside a field");
    }
    /* An older header's struct, up to and with the backend: the kperf sim. */
    o.backend = DK_BACKEND_KPERF;
    o.size = offsetof(dk_sampler_options, backend) + sizeof o.backend;
    dk_sampler *s = NULL;
    CHECK_OK(dk_sampler_open(&s, &o));
    CHECK_STR(dk_sampler_backend(s), "kperf");
    dk_sampler_close(s);
    check_nothing_held();
}

TEST_CASE(ebusy_when_another_client_holds_the_counters)
{
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_EBUSY);
    CHECK_CONTAINS(dk_last_error(), "powermetrics");
    CHECK_INT(dk_last_os_error(), ==, EBUSY);
    /* force_all_ctrs stays the other client's 1; nothing counts for us. */
    CHECK_INT(raw_force_all(), ==, 1);
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
}

TEST_CASE(eperm_when_taking_the_counters)
{
    /* kpc_force_all_ctrs_set:1@1 - the first write is refused with EPERM. */
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_EPERM);
    CHECK_CONTAINS(dk_last_error(), "kpc_force_all_ctrs_set");
    check_nothing_held();
    CHECK_OK(dk_sampler_open(&s, NULL)); /* a later attempt works */
    dk_sampler_close(s);
    check_nothing_held();
}

TEST_CASE(ecpu_for_a_database_without_a_chip_table)
{
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_ECPU);
    CHECK_CONTAINS(dk_last_error(), "\"a13\"");
    CHECK_CONTAINS(dk_last_error(), "Apple A13");
    check_nothing_held();
}

TEST_CASE(ecpu_without_a_database)
{
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_ECPU);
    CHECK_CONTAINS(dk_last_error(), "no event database");
    CHECK_INT(dk_last_kpep_error(), ==, KPEP_CONFIG_ERROR_DB_NOT_FOUND);
}

TEST_CASE(eload_for_a_missing_framework_or_symbol)
{
    dk_sampler *s = NULL;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.framework_root = "/nonexistent-root";
    CHECK_ERR(dk_sampler_open(&s, &o), DK_ELOAD);
    CHECK_CONTAINS(dk_last_error(), "kperf.framework");
    char root[1100];
    snprintf(root, sizeof root, "%s/sim-root-kperfdata-nosym", dkt_build_dir());
    o.framework_root = root;
    CHECK_ERR(dk_sampler_open(&s, &o), DK_ELOAD);
    CHECK_CONTAINS(dk_last_error(), "kpep_event_description");
}

TEST_CASE(ekpep_keeps_the_code)
{
    /* kpep_db_create:10 (database corrupt) */
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_EKPEP);
    CHECK_INT(dk_last_kpep_error(), ==, KPEP_CONFIG_ERROR_DB_CORRUPT);
    CHECK_CONTAINS(dk_last_error(), "KPEP_CONFIG_ERROR_DB_CORRUPT");
    CHECK_CONTAINS(dk_last_error(), "kpep_db_create");
}

TEST_CASE(enomem_from_kperfdata)
{
    /* kpep_config_create:2 (out of memory) */
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    dk_thread *t = NULL;
    CHECK_ERR(dk_thread_open(s, &ev, 1, &t), DK_ENOMEM);
    CHECK(t == NULL);
    dk_sampler_close(s);
    check_nothing_held();
}

TEST_CASE(eos_when_reading_fails)
{
    /* kpc_get_thread_counters:5 (EIO) */
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    CHECK_OK(dk_thread_start(t));
    uint64_t v;
    CHECK_ERR(dk_thread_sample(t, &v), DK_EOS);
    CHECK_INT(dk_last_os_error(), ==, EIO);
    CHECK_CONTAINS(dk_last_error(), "kpc_get_thread_counters");
    dk_thread_close(t);
    dk_sampler_close(s);
    check_nothing_held();
}

TEST_CASE(eos_when_starting_fails_rolls_back)
{
    /* kpc_set_thread_counting:5@1 - the first start fails half way. */
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    CHECK_ERR(dk_thread_start(t), DK_EOS);
    CHECK(!dk_thread_is_running(t));
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0); /* kpc.counting was undone */
    CHECK_OK(dk_thread_start(t));
    CHECK(dk_thread_is_running(t));
    dk_thread_close(t);
    dk_sampler_close(s);
    check_nothing_held();
}

TEST_CASE(eos_when_stopping_fails_still_stops)
{
    /* kpc_set_counting:5@2 - start works, the stop's write fails. */
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    CHECK_OK(dk_thread_start(t));
    CHECK_ERR(dk_thread_stop(t), DK_EOS);
    CHECK(!dk_thread_is_running(t));
    CHECK_INT(raw_kperf()->kpc_get_thread_counting(), ==, 0); /* the other write was tried */
    dk_thread_close(t);
    dk_sampler_close(s);
    CHECK_INT(raw_force_all(), ==, 0);
}

TEST_CASE(eunavailable_when_kpc_refuses_the_words)
{
    /* kpc_set_config:22 (EINVAL), as macOS 26.6 does for unlisted selectors */
    dk_sampler *s = open_sampler();
    const char *name = "branches";
    dk_thread *t = NULL;
    CHECK_ERR(dk_thread_open_names(s, &name, 1, &t), DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "kpc_set_config");
    CHECK_INT(dk_last_os_error(), ==, EINVAL);
    /* Fixed counters need no register words on Apple chips. */
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    dk_thread_close(t);
    dk_sampler_close(s);
    check_nothing_held();
}

TEST_CASE(eos_when_restoring_fails)
{
    /* kpc_force_all_ctrs_set:5@2 - taking works, giving back fails. */
    dk_sampler *s = open_sampler();
    CHECK_ERR(dk_sampler_release(s), DK_EOS);
    CHECK_CONTAINS(dk_last_error(), "restoring kpc.force_all_ctrs");
    CHECK_CONTAINS(dk_last_error(), "kpc_force_all_ctrs_set");
    CHECK_CONTAINS(dk_last_error(), "left at 1");
    CHECK_CONTAINS(dk_last_error(), "sudo sysctl kpc.force_all_ctrs=0");
    CHECK_INT(dk_last_os_error(), ==, 5);
    CHECK_INT(raw_force_all(), ==, 1); /* what the message says */
    CHECK_OK(dk_sampler_release(s));   /* idempotent: no second attempt */
    dk_sampler_close(s);               /* already released: nothing more to do */
}

TEST_CASE(query_only_never_takes_the_counters)
{
    /* kpc_force_all_ctrs_set:5 - every attempt to take the counters fails. */
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.flags = DK_SAMPLER_QUERY_ONLY;
    dk_sampler *s = NULL;
    CHECK_OK(dk_sampler_open(&s, &o));
    CHECK_STR(dk_sampler_backend(s), "kperf");
    CHECK_STR(dk_sampler_why(s), "");
    CHECK_INT(dk_sampler_cpu(s), !=, DK_CPU_UNKNOWN);
    CHECK_INT(dk_database_event_count(dk_sampler_database(s)), >, 10);
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_OK(dk_sampler_caps(s, &caps));
    CHECK(caps.all_events);
    CHECK_CONTAINS(caps.privileges, "root");
    const dk_database_event *ev = NULL;
    CHECK_OK(dk_sampler_resolve(s, "branches", &ev));
    CHECK_INT(raw_force_all(), ==, 0);

    const dk_event evs[] = {DK_EVENT_FIXED_CYCLES};
    const char *names[] = {"instructions"};
    dk_thread *t = (dk_thread *)&t;
    CHECK_ERR(dk_thread_open(s, evs, 1, &t), DK_EINVAL);
    CHECK(t == NULL);
    CHECK_CONTAINS(dk_last_error(), "DK_SAMPLER_QUERY_ONLY");
    CHECK_ERR(dk_thread_open_names(s, names, 1, &t), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "DK_SAMPLER_QUERY_ONLY");
    dk_group *g = (dk_group *)&g;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 1, 0, &g), DK_EINVAL);
    CHECK(g == NULL);
    CHECK_CONTAINS(dk_last_error(), "DK_SAMPLER_QUERY_ONLY");
    CHECK_OK(dk_sampler_release(s));
    dk_sampler_close(s);
    check_nothing_held();

    /* Without the flag the same machine refuses. */
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_EOS);
    CHECK_CONTAINS(dk_last_error(), "kpc_force_all_ctrs_set");
}

TEST_CASE(query_only_without_privileges_is_refused)
{
    /* DKPERF_SIM_PRIVILEGED=0: kperf is forced, and reading force_all_ctrs
     * tells that it could not count. */
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.flags = DK_SAMPLER_QUERY_ONLY;
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, &o), DK_EPERM);
    CHECK_CONTAINS(dk_last_error(), "kpc_force_all_ctrs_get");
}

TEST_CASE(previous_force_all_state_is_restored)
{
    /* DKPERF_SIM_FORCE_ALL=1: another tool had set it before us. */
    CHECK_INT(raw_force_all(), ==, 1);
    dk_sampler *s = open_sampler();
    dk_sampler_close(s);
    CHECK_INT(raw_force_all(), ==, 1);
}

TEST_CASE(database_read_failure_leaves_nothing_held)
{
    /* kpep_db_events:3 (I/O) fails the layout check after the database opened. */
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_EKPEP);
    check_nothing_held();
}

TEST_MAIN()

/* dk_sampler_release refuses while anything of the sampler counts, and
 * says what: a group or a sampling is not a thread sampler. */
TEST_CASE(release_names_what_is_still_running)
{
    dk_sampler *s = NULL;
    CHECK_INT(dk_sampler_open(&s, NULL), ==, 0);
    const char *names[] = {"instructions", "branches"};
    dk_group *g = NULL;
    CHECK_INT(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 2, 0, &g), ==, 0);
    CHECK_INT(dk_group_start(g), ==, 0);
    CHECK_ERR(dk_sampler_release(s), DK_ESTATE);
    CHECK_CONTAINS(dk_last_error(), "1 group is still running");
    CHECK_CONTAINS(dk_last_error(), "dk_group_stop");
    CHECK(strstr(dk_last_error(), "thread sampler") == NULL);
    dk_thread *t = NULL;
    CHECK_INT(dk_thread_open_names(s, names, 1, &t), ==, 0);
    CHECK_INT(dk_thread_start(t), ==, 0);
    CHECK_ERR(dk_sampler_release(s), DK_ESTATE);
    CHECK_CONTAINS(dk_last_error(), "1 thread sampler and 1 group are still running");
    CHECK_INT(dk_thread_stop(t), ==, 0);
    CHECK_INT(dk_group_stop(g), ==, 0);
    CHECK_INT(dk_sampler_release(s), ==, 0);
    dk_thread_close(t);
    dk_group_close(g);
    dk_sampler_close(s);
    check_nothing_held();
}

/* A Mac whose chip libdkperf has no table for (a newer one): kperf is
 * refused (DK_ECPU) and selfcounts counts instructions and cycles from its
 * own database. DK_EVENT_FIXED_INSTRUCTIONS and DK_EVENT_FIXED_CYCLES, the
 * enums of dkperf.h's example, come from that database as their names do
 * (dk_event_on: on DK_CPU_UNKNOWN events come from the database). */
TEST_CASE(fixed_event_enums_count_on_an_unknown_chip)
{
    dk_sampler *s = NULL;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.backend = DK_BACKEND_SELFCOUNTS;
    CHECK_INT(dk_sampler_open(&s, &o), ==, 0);
    CHECK_INT(dk_sampler_cpu(s), ==, DK_CPU_UNKNOWN);
    const dk_event ev[] = {DK_EVENT_FIXED_INSTRUCTIONS, DK_EVENT_FIXED_CYCLES};
    dk_thread *t = NULL;
    int rc = dk_thread_open(s, ev, 2, &t);
    if (rc != 0)
        DKT_FAIL("dk_thread_open: %s", dk_last_error());
    CHECK_STR(dk_thread_event_name(t, 0), "FIXED_INSTRUCTIONS");
    CHECK_STR(dk_thread_event_name(t, 1), "FIXED_CYCLES");
    uint64_t a[2], b[2];
    CHECK_INT(dk_thread_start(t), ==, 0);
    CHECK_INT(dk_thread_sample(t, a), ==, 0);
    for (volatile int i = 0; i < 1000000; i++)
        ;
    CHECK_INT(dk_thread_sample(t, b), ==, 0);
    CHECK(b[0] > a[0] && b[1] > a[1]);
    dk_thread_close(t);
    /* An event only kperf counts still says it is not available. */
    const dk_event br = DK_EVENT_INST_BRANCH;
    CHECK_ERR(dk_thread_open(s, &br, 1, &t), DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "INST_BRANCH");
    dk_sampler_close(s);
    check_nothing_held();
}
