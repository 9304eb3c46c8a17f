/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_backends.c - choosing a backend, and the selfcounts backend against
 * the simulated libsystem_kernel.dylib. Cases get their environment
 * (privileges, forced backends, faults) from tests/CMakeLists.txt.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"

static void variant_root(char *buf, size_t size, const char *variant)
{
    snprintf(buf, size, "%s/%s", dkt_build_dir(), variant);
}

TEST_CASE(privileged_simulation_takes_kperf)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "kperf");
    CHECK_STR(dk_sampler_why(s), "");
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_OK(dk_sampler_caps(s, &caps));
    CHECK(caps.all_events && caps.per_thread && caps.system_wide && caps.per_process);
    CHECK(!caps.multiplexing);
    CHECK_INT(caps.counters, ==, 10);
    /* The facts a tool picks its defaults by: kpc samples on a period only;
     * a process's totals are proc_pid_rusage's, read before it is reaped. */
    CHECK(caps.sampling && !caps.frequency);
    CHECK_U64(caps.sample_period, ==, 1000000);
    CHECK_U64(caps.sample_freq, ==, 0);
    CHECK_STR(caps.sample_event, "cycles");
    CHECK_STR(caps.stat_events, "instructions,cycles,branches,branch-misses");
    CHECK(!caps.software_events && !caps.process_events && !caps.children && !caps.counts_outlive);
    CHECK_CONTAINS(caps.lost_means, "wrapped"); /* kdebug counts wraps, not records */
    dk_sampler_close(s);
}

TEST_CASE(unprivileged_simulation_falls_back_to_selfcounts)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    const char *why = dk_sampler_why(s);
    CHECK_CONTAINS(why, "kperf:");
    CHECK_CONTAINS(why, "need root");
    CHECK_CONTAINS(why, "using selfcounts");
    CHECK_CONTAINS(why, "every event of the a14 database");
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_OK(dk_sampler_caps(s, &caps));
    CHECK_STR(caps.name, "selfcounts");
    CHECK(caps.per_thread && caps.per_process && caps.perf_levels && !caps.all_events);
    CHECK_INT(caps.counters, ==, 2);
    CHECK(!caps.sampling && !caps.frequency && !caps.software_events && !caps.process_events);
    CHECK(caps.lost_means == NULL);
    CHECK_STR(caps.stat_events, "instructions,cycles,branches,branch-misses");
    /* The database still comes from kperfdata. */
    CHECK_INT(dk_sampler_cpu(s), ==, DK_CPU_M1);
    CHECK_STR(dk_database_name(dk_sampler_database(s)), "a14");
    dk_sampler_close(s);
}

TEST_CASE(selfcounts_counts_instructions_and_cycles)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    const char *names[] = {"instructions", "cycles"};
    dk_thread *t = open_names(s, names, 2);
    CHECK_STR(dk_thread_event_name(t, 0), "FIXED_INSTRUCTIONS");
    CHECK_OK(dk_thread_start(t));
    uint64_t a[2], b[2];
    CHECK_OK(dk_thread_sample(t, a));
    dkt_burn_cpu_ms(20);
    CHECK_OK(dk_thread_sample(t, b));
    CHECK_U64(b[0], >, a[0]);
    CHECK_U64(b[1], >, a[1]);
    /* The sim's levels run at 2.5 and 2 instructions per cycle. */
    double ipc = (double)(b[0] - a[0]) / (double)(b[1] - a[1]);
    CHECK(ipc >= 1.99 && ipc <= 2.51);
    /* The enum works too. */
    const dk_event ev[] = {DK_EVENT_FIXED_CYCLES, DK_EVENT_FIXED_INSTRUCTIONS};
    dk_thread *u = NULL;
    CHECK_OK(dk_thread_open(s, ev, 2, &u));
    dk_thread_close(u);
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(selfcounts_refuses_other_events_naming_root)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions", "branch-misses"};
    dk_thread *t = NULL;
    CHECK_ERR(dk_thread_open_names(s, names, 2, &t), DK_EPERM);
    CHECK(t == NULL);
    CHECK_CONTAINS(dk_last_error(), "BRANCH_MISPRED_NONSPEC");
    CHECK_CONTAINS(dk_last_error(), "needs the kperf backend, which needs root");
    const dk_event ev = DK_EVENT_INST_BRANCH;
    CHECK_ERR(dk_thread_open(s, &ev, 1, &t), DK_EPERM);
    dk_sampler_close(s);
}

TEST_CASE(selfcounts_stop_leaves_work_out)
{
    dk_sampler *s = open_sampler();
    const char *name = "cycles";
    dk_thread *t = open_names(s, &name, 1);
    uint64_t a, b, c;
    CHECK_ERR(dk_thread_sample(t, &a), DK_ESTATE);
    dkt_burn_cpu_ms(10); /* before the first start: not counted */
    CHECK_OK(dk_thread_start(t));
    CHECK_OK(dk_thread_sample(t, &a));
    CHECK_U64(a, <, 2000u * 1000 * 5);
    CHECK_OK(dk_thread_stop(t));
    dkt_burn_cpu_ms(20); /* stopped: not counted */
    CHECK_OK(dk_thread_start(t));
    CHECK_OK(dk_thread_sample(t, &b));
    CHECK_U64(b - a, <, 2000u * 1000 * 5);
    dkt_burn_cpu_ms(10);
    CHECK_OK(dk_thread_sample(t, &c));
    CHECK_U64(c - b, >=, 2000u * 1000 * 9); /* at least 2 GHz over 10 ms */
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(selfcounts_splits_by_performance_level)
{
    dk_sampler *s = open_sampler();
    size_t levels = dk_sampler_perf_levels(s);
    CHECK_INT(levels, ==, 2);
    CHECK_STR(dk_sampler_perf_level_name(s, 0), "P");
    CHECK_STR(dk_sampler_perf_level_name(s, 1), "E");
    CHECK(dk_sampler_perf_level_name(s, 2) == NULL);
    const char *names[] = {"instructions", "cycles"};
    dk_thread *t = open_names(s, names, 2);
    CHECK_OK(dk_thread_start(t));
    dkt_burn_cpu_ms(30);
    uint64_t before[2], split[4], after[2];
    CHECK_OK(dk_thread_sample(t, before));
    CHECK_OK(dk_thread_sample_perf_levels(t, split, 2));
    CHECK_OK(dk_thread_sample(t, after));
    /* The levels add up to the total at that moment. */
    for (int i = 0; i < 2; i++) {
        uint64_t sum = split[i] + split[2 + i];
        CHECK_U64(sum, >=, before[i]);
        CHECK_U64(sum, <=, after[i]);
    }
    CHECK_ERR(dk_thread_sample_perf_levels(t, split, 3), DK_EINVAL);
    CHECK_ERR(dk_thread_sample_perf_levels(NULL, split, 2), DK_EINVAL);
    CHECK_OK(dk_thread_stop(t));
    CHECK_ERR(dk_thread_sample_perf_levels(t, split, 2), DK_ESTATE);
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(three_performance_levels)
{
    dk_sampler *s = open_sampler();
    CHECK_INT(dk_sampler_perf_levels(s), ==, 3);
    CHECK_STR(dk_sampler_perf_level_name(s, 2), "2");
    dk_sampler_close(s);
}

TEST_CASE(intel_has_one_level)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    CHECK_INT(dk_sampler_cpu(s), ==, DK_CPU_INTEL);
    CHECK_INT(dk_sampler_perf_levels(s), ==, 1);
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_OK(dk_sampler_caps(s, &caps));
    CHECK(!caps.perf_levels);
    const char *names[] = {"instructions", "cycles"};
    dk_thread *t = open_names(s, names, 2);
    CHECK_STR(dk_thread_event_name(t, 0), "INST_RETIRED.ANY");
    dk_thread_close(t);
    dk_sampler_close(s);
}

/* A failure the caller has seen: the options struct is too small. */
static void fail_known(char *detail, size_t size)
{
    dk_sampler *s = NULL;
    dk_sampler_options bad = {.size = 1};
    CHECK_ERR(dk_sampler_open(&s, &bad), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "dk_sampler_options.size is 1");
    snprintf(detail, size, "%s", dk_last_error());
}

TEST_CASE(successful_fallback_keeps_the_last_error)
{
    /* kperf fails for want of privileges on the way to selfcounts; the open
     * succeeds, so the caller's last error stays what it was. */
    char detail[1024];
    fail_known(detail, sizeof detail);
    dk_sampler *s = NULL;
    CHECK_OK(dk_sampler_open(&s, NULL));
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    CHECK_CONTAINS(dk_sampler_why(s), "need root");
    CHECK_STR(dk_last_error(), detail);
    CHECK_INT(dk_last_os_error(), ==, 0);
    dk_sampler_close(s);
}

TEST_CASE(partial_group_keeps_the_last_error)
{
    /* Two events the group cannot count: one the core finds unavailable on
     * this chip, one the backend refuses. Both get their reason; the open
     * succeeds and leaves the caller's last error alone. */
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    const char *elsewhere = NULL;
    for (int ev = 0; ev < DK_EVENT_COUNT && elsewhere == NULL; ev++)
        if (dk_event_on((dk_event)ev, dk_sampler_cpu(s)) == NULL)
            elsewhere = dk_event_name((dk_event)ev);
    CHECK(elsewhere != NULL);
    char detail[1024];
    fail_known(detail, sizeof detail);
    const char *names[] = {"cycles", "INST_BRANCH", elsewhere};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 3, DK_GROUP_PARTIAL, &g));
    CHECK(dk_group_supported(g, 0));
    CHECK(!dk_group_supported(g, 1));
    CHECK(!dk_group_supported(g, 2));
    CHECK_CONTAINS(dk_group_why(g, 1), "root");
    CHECK_CONTAINS(dk_group_why(g, 2), elsewhere);
    CHECK_CONTAINS(dk_group_why(g, 2), "not available");
    CHECK_STR(dk_last_error(), detail);
    CHECK_INT(dk_last_os_error(), ==, 0);
    dk_group_close(g);
    dk_sampler_close(s);
}

TEST_CASE(process_totals)
{
    dk_sampler *s = open_sampler();
    uint64_t i0, c0, i1, c1;
    CHECK_OK(dk_process_cpi(s, 0, &i0, &c0));
    dkt_burn_cpu_ms(20);
    CHECK_OK(dk_process_cpi(s, 0, &i1, &c1));
    CHECK_U64(i1, >, i0);
    CHECK_U64(c1 - c0, >=, 3000u * 1000 * 19);

    /* A child that has exited but is not reaped yet. */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dkt_burn_cpu_ms(150);
        _exit(0);
    }
    siginfo_t info;
    CHECK_INT(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), ==, 0);
    uint64_t ci, cc;
    CHECK_OK(dk_process_cpi(s, pid, &ci, &cc));
    CHECK_U64(cc, >=, 3000u * 1000 * 100); /* ticks of 10 ms: well over 100 ms */
    CHECK_U64(ci, >, cc);
    CHECK_INT(waitpid(pid, NULL, 0), ==, pid);
    CHECK_ERR(dk_process_cpi(s, pid, &ci, &cc), DK_EOS); /* reaped: gone */
    CHECK_INT(dk_last_os_error(), ==, ESRCH);
    CHECK_ERR(dk_process_cpi(s, 0, NULL, &cc), DK_EINVAL);
    dk_sampler_close(s);
}

TEST_CASE(forced_kperf_without_privileges_fails_clearly)
{
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_EPERM);
    CHECK(s == NULL);
    CHECK_CONTAINS(dk_last_error(), "root");
}

TEST_CASE(forced_selfcounts_before_macos_12_4)
{
    char root[1100];
    variant_root(root, sizeof root, "sim-root-old-macos");
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.framework_root = root;
    o.backend = DK_BACKEND_SELFCOUNTS;
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, &o), DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "thread_selfcounts is missing");
    CHECK_CONTAINS(dk_last_error(), "12.4");
}

TEST_CASE(selfcounts_unsupported_by_the_cpu)
{
    /* thread_selfcounts:95 (ENOTSUP on Linux), as on hardware without the counters. */
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.backend = DK_BACKEND_SELFCOUNTS;
    dk_sampler *s = NULL;
    CHECK_ERR(dk_sampler_open(&s, &o), DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "does not count instructions and cycles per thread");
    /* Probing goes on to the next backend, and says why. */
    CHECK_OK(dk_sampler_open(&s, NULL));
#ifdef __linux__
    CHECK_STR(dk_sampler_backend(s), "perf_event");
    CHECK_CONTAINS(dk_sampler_why(s), "selfcounts: ");
    CHECK_CONTAINS(dk_sampler_why(s), "using perf_event");
#endif
    dk_sampler_close(s);
}

TEST_CASE(selfcounts_without_kperfdata)
{
    char root[1100];
    variant_root(root, sizeof root, "sim-root-libsystem-only");
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.framework_root = root;
    dk_sampler *s = NULL;
    CHECK_OK(dk_sampler_open(&s, &o));
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    CHECK_CONTAINS(dk_sampler_why(s), "kperf.framework");
    const dk_database *db = dk_sampler_database(s);
    CHECK_STR(dk_database_name(db), "selfcounts");
    CHECK_INT(dk_database_event_count(db), ==, 2);
    CHECK_INT(dk_sampler_cpu(s), ==, DK_CPU_UNKNOWN);
    const char *names[] = {"instructions", "cycles"};
    dk_thread *t = open_names(s, names, 2);
    CHECK_OK(dk_thread_start(t));
    uint64_t v[2];
    CHECK_OK(dk_thread_sample(t, v));
    dk_thread_close(t);
    const char *other = "branches";
    CHECK_ERR(dk_thread_open_names(s, &other, 1, &t), DK_EUNAVAILABLE);
    dk_sampler_close(s);
}

TEST_CASE(selfcounts_read_failure)
{
    /* thread_selfcounts:5@7+ - the calls of opening, of the thread sampler
     * and of starting work; the first sample's call fails. */
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    const char *name = "instructions";
    dk_thread *t = open_names(s, &name, 1);
    CHECK_OK(dk_thread_start(t));
    uint64_t v;
    CHECK_ERR(dk_thread_sample(t, &v), DK_EOS);
    CHECK_INT(dk_last_os_error(), ==, EIO);
    CHECK_CONTAINS(dk_last_error(), "thread_selfcounts");
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(forced_backends_that_cannot_work)
{
    dk_sampler *s = NULL;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.framework_root = "";
    o.backend = DK_BACKEND_SELFCOUNTS;
#ifdef __APPLE__
    SKIP("on a Mac the system's selfcounts works");
#endif
    CHECK_ERR(dk_sampler_open(&s, &o), DK_ELOAD);
    CHECK_CONTAINS(dk_last_error(), "only on macOS");
    o.backend = DK_BACKEND_KPERF;
    CHECK_ERR(dk_sampler_open(&s, &o), DK_ELOAD);
    CHECK_CONTAINS(dk_last_error(), "/System/Library/PrivateFrameworks/kperf.framework/kperf");
    setenv("DKPERF_BACKEND", "perf_event", 1);
    o.backend = DK_BACKEND_AUTO;
    CHECK_OK(dk_sampler_open(&s, &o));
    CHECK_STR(dk_sampler_backend(s), "perf_event");
    dk_sampler_close(s);
}

TEST_CASE(each_failed_backend_is_named)
{
    /* Neither Darwin backend works under this root; on Linux perf_event is
     * the last resort, and the summary names why each before it failed. */
    char root[1100];
    variant_root(root, sizeof root, "sim-root-old-macos");
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.framework_root = root;
    dk_sampler *s = NULL;
#ifdef __linux__
    CHECK_OK(dk_sampler_open(&s, &o));
    CHECK_STR(dk_sampler_backend(s), "perf_event");
    CHECK_CONTAINS(dk_sampler_why(s), "kperf: cannot open kperf.framework");
    CHECK_CONTAINS(dk_sampler_why(s), "selfcounts: thread_selfcounts is missing");
    dk_sampler_close(s);
#endif
}

#define CHECK_LACKS(hay, needle)                                                   \
    do {                                                                           \
        const char *h_ = (hay);                                                    \
        if (h_ == NULL || strstr(h_, (needle)) != NULL)                            \
            DKT_FAIL("CHECK failed: %s lacks \"%s\" (got \"%s\")", #hay, (needle), \
                     h_ ? h_ : "(null)");                                          \
    } while (0)

/* The messages of a selfcounts fallback for a reason other than
 * privileges: the cause named, root never blamed. */
static void check_fallback_says(const char *cause, const char *cause2, bool database)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    const char *why = dk_sampler_why(s);
    CHECK_CONTAINS(why, cause);
    CHECK_CONTAINS(why, cause2);
    CHECK_CONTAINS(why, "using selfcounts");
    CHECK_LACKS(why, "root");
    CHECK_LACKS(why, "selfcounts database");
    /* The cause comes before what the fallback does. */
    CHECK(strstr(why, cause) < strstr(why, "using selfcounts"));

    const char *all[] = {"instructions"};
    dk_group *g = (dk_group *)&g;
    CHECK(dk_group_open(s, DK_SCOPE_SYSTEM, 0, all, 1, 0, &g) != 0);
    CHECK(g == NULL);
    CHECK_CONTAINS(dk_last_error(), "counting every CPU");
    CHECK_CONTAINS(dk_last_error(), cause);
    CHECK_LACKS(dk_last_error(), "root");

    const char *names[] = {"cycles", "INST_BRANCH"};
    dk_thread *t = NULL;
    CHECK(dk_thread_open_names(s, names, 2, &t) != 0);
    CHECK_CONTAINS(dk_last_error(), "INST_BRANCH");
    if (database) /* else no chip table names it at all */
        CHECK_CONTAINS(dk_last_error(), cause);
    CHECK_LACKS(dk_last_error(), "root");
    if (!database) {
        dk_sampler_close(s);
        return;
    }

    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 2, DK_GROUP_PARTIAL, &g));
    CHECK(dk_group_supported(g, 0));
    CHECK(!dk_group_supported(g, 1));
    CHECK_CONTAINS(dk_group_why(g, 1), cause);
    CHECK_LACKS(dk_group_why(g, 1), "root");
    dk_group_close(g);
    dk_sampler_close(s);
}

TEST_CASE(busy_counters_are_named_not_privileges)
{
    /* DKPERF_SIM_BUSY=1: another tool holds the counters; we are root. */
    check_fallback_says("powermetrics", "stop it", true);
}

TEST_CASE(unknown_cpu_names_the_database_not_privileges)
{
    /* DKPERF_SIM_CPU=a13: a database libdkperf has no chip table for. */
    check_fallback_says("\"a13\"", "/usr/share/kpep/", false);
}

TEST_CASE(database_failure_names_the_kpep_error_not_privileges)
{
    /* DKPERF_SIM_FAIL=kpep_db_create:3: kperfdata cannot read the database. */
    check_fallback_says("kpep_db_create", "I/O error", false);
}

TEST_MAIN()
