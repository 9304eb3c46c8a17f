/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_modifiers.c - perf's privilege-mode modifiers (":u", ":k", ":uk")
 * on the Darwin backends: kperf maps :u to kpep's user-only flag and
 * refuses what kpep cannot express; thread_selfcounts and proc_pid_rusage
 * cannot restrict modes at all. Cases named noroot_* run unprivileged
 * (tests/CMakeLists.txt).
 */
#include <string.h>

#include "api.h"

#define EL1 0x40000u /* arm64 word bit: count kernel mode */

/* The configurable register word programmed with selector number. */
static kpc_config_t word_of(unsigned number)
{
    kpc_config_t cfg[KPC_MAX_COUNTERS] = {0};
    CHECK_INT(raw_kperf()->kpc_get_config(KPC_CLASS_CONFIGURABLE_MASK, cfg), ==, 0);
    for (size_t i = 0; i < KPC_MAX_COUNTERS; i++)
        if ((cfg[i] & 0xffff) == number)
            return cfg[i];
    DKT_FAIL("no register counts selector 0x%x", number);
}

TEST_CASE(kperf_user_modifier_sets_user_only)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "kperf");
    const dk_database_event *br = NULL;
    CHECK_OK(dk_sampler_resolve(s, "INST_BRANCH", &br));
    const char *plain[] = {"INST_BRANCH"};
    dk_thread *t = open_names(s, plain, 1);
    CHECK_U64(word_of(br->number) & EL1, ==, EL1);
    dk_thread_close(t);

    const char *names[] = {"instructions:u", "cycles", "INST_BRANCH:u", "branch-misses:uk"};
    t = open_names(s, names, 4);
    CHECK_STR(dk_thread_event_name(t, 0), "FIXED_INSTRUCTIONS:u");
    CHECK_STR(dk_thread_event_name(t, 1), "FIXED_CYCLES");
    CHECK_STR(dk_thread_event_name(t, 2), "INST_BRANCH:u");
    CHECK_CONTAINS(dk_thread_event_name(t, 3), ":uk");
    CHECK_U64(word_of(br->number) & EL1, ==, 0);
    CHECK_OK(dk_thread_start(t));
    uint64_t a[4], b[4];
    CHECK_OK(dk_thread_sample(t, a));
    dkt_burn_cpu_ms(5);
    CHECK_OK(dk_thread_sample(t, b));
    CHECK_U64(b[2], >, a[2]);
    dk_thread_close(t);

    /* Every CPU, with the modifier kept in the name. */
    const char *sys[] = {"branches:u", "cycles"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_SYSTEM, 0, sys, 2, 0, &g));
    CHECK_STR(dk_group_event_name(g, 0), "INST_BRANCH:u");
    CHECK_STR(dk_group_event_name(g, 1), "FIXED_CYCLES");
    CHECK_U64(word_of(br->number) & EL1, ==, 0);
    dk_group_close(g);
    dk_sampler_close(s);
}

TEST_CASE(kperf_refuses_what_kpep_cannot_express)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions", "INST_BRANCH:k"};
    dk_thread *t = (dk_thread *)&t;
    CHECK_ERR(dk_thread_open_names(s, names, 2, &t), DK_ENOTSUP);
    CHECK(t == NULL);
    CHECK_CONTAINS(dk_last_error(), "INST_BRANCH:k");
    CHECK_CONTAINS(dk_last_error(), "kernel mode");
    dk_group *g = (dk_group *)&g;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 2, 0, &g), DK_ENOTSUP);
    CHECK_CONTAINS(dk_last_error(), "INST_BRANCH:k");
    /* A process's totals come from proc_pid_rusage, which has no modes. */
    const char *proc[] = {"instructions:u"};
    CHECK_ERR(dk_group_open(s, DK_SCOPE_PROCESS, 0, proc, 1, 0, &g), DK_ENOTSUP);
    CHECK_CONTAINS(dk_last_error(), "FIXED_INSTRUCTIONS:u");
    CHECK_CONTAINS(dk_last_error(), "proc_pid_rusage");
    /* Unknown letters name the event. */
    const char *odd[] = {"cycles:upp"};
    CHECK_ERR(dk_thread_open_names(s, odd, 1, &t), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "cycles:upp");
    CHECK_CONTAINS(dk_last_error(), "'p'");
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
    dk_sampler_close(s);
}

TEST_CASE(noroot_selfcounts_cannot_restrict_modes)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    const char *names[] = {"cycles", "instructions:u"};
    dk_thread *t = (dk_thread *)&t;
    CHECK_ERR(dk_thread_open_names(s, names, 2, &t), DK_ENOTSUP);
    CHECK(t == NULL);
    CHECK_CONTAINS(dk_last_error(), "FIXED_INSTRUCTIONS:u");
    CHECK_CONTAINS(dk_last_error(), "thread_selfcounts");
    const char *kernel[] = {"cycles:k"};
    CHECK_ERR(dk_thread_open_names(s, kernel, 1, &t), DK_ENOTSUP);
    CHECK_CONTAINS(dk_last_error(), ":k");
    dk_group *g = (dk_group *)&g;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_PROCESS, 0, kernel, 1, 0, &g), DK_ENOTSUP);
    CHECK_CONTAINS(dk_last_error(), "proc_pid_rusage");
    /* Both modes is what it counts anyway. */
    const char *both[] = {"cycles:uk"};
    t = open_names(s, both, 1);
    CHECK_CONTAINS(dk_thread_event_name(t, 0), ":uk");
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_MAIN()
