/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_sampling_kperf.c - sampling through the library's kperf backend, on
 * the simulated frameworks (tests/sim): counter-overflow samples of a busy
 * function with its real call chain, timer samples, no root, tracing owned
 * by another tool, a child sampled from its exec, the calls in any order,
 * and a failure of every kperf and kdebug call leaving nothing armed. The
 * trace buffer's own cases are in test_sampling_kperf_trace.c (the same
 * binary). Simulated only: nothing here ran on Apple hardware.
 */

#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child_sampling.h"
#include "dkperf.h"
#include "dkperf/kperf.h"
#include "sampling_kperf_helpers.h"
#include "util.h"

extern char **environ;

static bool names(uint64_t addr, const char *fn)
{
    Dl_info info;
    return dladdr((void *)(uintptr_t)addr, &info) != 0 && info.dli_sname != NULL &&
           strcmp(info.dli_sname, fn) == 0;
}

static int collect(void *ctx, const dk_sample *s)
{
    collected *c = ctx;
    if (s->kind == DK_SAMPLE_KIND_MAP) {
        CHECK(s->map_path != NULL && s->map_path[0] == '/');
        c->maps++;
        return 0;
    }
    if (s->kind == DK_SAMPLE_KIND_COMM) {
        /* This process, named before its first sample (pbi_name: the
         * executable's name). */
        CHECK_INT(s->pid, ==, getpid());
        CHECK_U64(c->samples, ==, 0);
        CHECK(s->comm != NULL && strcmp(s->comm, "test_sampling_kperf") == 0);
        c->comms++;
        return 0;
    }
    CHECK_INT(s->kind, ==, DK_SAMPLE_KIND_SAMPLE);
    CHECK_INT(s->event, ==, 0);
    c->samples++;
    if (s->pid != getpid() || s->tid != (uint64_t)syscall(SYS_gettid))
        c->bad_pid++;
    if (s->period != c->period)
        c->bad_period++;
    if (s->time_ns < c->last_time)
        c->time_backwards = true;
    c->last_time = s->time_ns;
    if (getenv("DKT_SHOW") != NULL && c->samples < 3)
        for (size_t i = 0; i < s->n_frames; i++) {
            Dl_info info;
            int ok = dladdr((void *)(uintptr_t)s->frames[i], &info);
            fprintf(stderr, "frame %zu %#llx %s\n", i, (unsigned long long)s->frames[i],
                    ok && info.dli_sname ? info.dli_sname : "?");
        }
    size_t at = 0;
    if (s->n_frames > 0 && names(s->frames[0], "dkt_hot_loop")) {
        /* Interrupted in user space: the pc is the stack's first frame. In
         * the kernel: the user stack is where it entered; no user pc. */
        if (s->user) {
            CHECK_U64(s->ip, ==, s->frames[0]);
            c->user++;
        }
        c->in_hot++;
        for (size_t i = at + 1; i < s->n_frames; i++)
            if (names(s->frames[i], "dkt_hot_caller")) {
                c->hot_from_caller++;
                break;
            }
    }
    return 0;
}

/* Sample ev (period as given) while the hot function runs for ms of CPU. */
static void sample_hot(const char *ev, uint64_t period, double ms, collected *c)
{
    /* Under valgrind the Linux kernel samples valgrind's translation of
     * this program: its stacks name none of these functions. */
    if (dkt_under_valgrind())
        SKIP("under valgrind the sampled stacks are valgrind's, not this program's");
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {ev, period, 0};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.record = DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_IP | DK_SAMPLE_PERIOD |
               DK_SAMPLE_CALLCHAIN;
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, &o, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open(%s): %d %s", ev, rc, dk_last_error());
    CHECK_INT(dk_sampling_start(p), ==, 0);
    /* Drain while it runs, as a recorder does, and once after stopping. */
    for (int i = 0; i < 4; i++) {
        dkt_hot_caller((uint64_t)(ms / 4 * 1e6));
        CHECK_INT(dk_sampling_drain(p, collect, c), >=, 0);
    }
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect, c), >=, 0);
    dk_sampling_stats st;
    CHECK_INT(dk_sampling_stats_get(p, &st), ==, 0);
    CHECK_U64(st.samples, ==, c->samples);
    dk_sampling_close(p);
    dk_sampler_close(s);
}

static void check_hot(const collected *c, size_t expected)
{
    fprintf(stderr,
            "samples %zu (expected about %zu), in dkt_hot_loop %zu, with its caller %zu, "
            "maps %zu\n",
            c->samples, expected, c->in_hot, c->hot_from_caller, c->maps);
    /* CPU-time based: the loop's samples follow its work, not the
     * machine's load; the Linux kernel may throttle a fast sampler, hence
     * the slack. The rest of the process (draining, dladdr, a sanitizer's
     * runtime) is sampled too, but the loop has most of its CPU time. */
    CHECK_U64(c->in_hot, >=, expected / 3);
    CHECK_U64(c->in_hot, <=, expected * 2 + 10);
    CHECK_INT(c->bad_pid, ==, 0);
    CHECK_INT(c->bad_period, ==, 0);
    CHECK(!c->time_backwards);
    CHECK_U64(c->in_hot, >=, c->samples / 2);
    CHECK_U64(c->hot_from_caller, >=, c->in_hot * 9 / 10);
    CHECK_U64(c->maps, >=, 1);
    CHECK_U64(c->user, >=, c->in_hot / 2);
    CHECK_U64(c->comms, ==, 1);
}

TEST_CASE(pmi_samples_land_in_the_busy_function)
{
    fresh_state();
    collected c = {0};
    c.period = 1000000;
    /* cycles at the sim's 3 GHz: one PMI per 333 µs of CPU time. */
    sample_hot("cycles", c.period, 400, &c);
    check_hot(&c, 400 * 3000000 / 1000000);
    check_disarmed(state_path());
}

typedef struct read_values {
    size_t samples, counted;
} read_values;

static int collect_values(void *ctx, const dk_sample *x)
{
    read_values *r = ctx;
    if (x->kind != DK_SAMPLE_KIND_SAMPLE)
        return 0;
    r->samples++;
    CHECK_U64(x->n_values, ==, 2);
    CHECK(x->tid == (uint64_t)syscall(SYS_gettid));
    if (x->values[0] > 0 && x->values[1] > 0)
        r->counted++;
    return 0;
}

TEST_CASE(sampled_values_are_the_threads_running_counts)
{
    /* DK_SAMPLE_READ asks for the sampled thread's counts of every event
     * (kperf's PMC_THREAD sampler). The kernel reads them with
     * kpc_get_curthread_counters, which gives nothing (kperf logs zeros)
     * unless per-thread counting is on (osfmk/kperf/kperf_kpc.c
     * kperf_kpc_thread_sample): no dk_thread runs here to turn it on. */
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling_event e[2] = {{"cycles", 1000000, 0}, {"branches", 1000000, 0}};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.scope = DK_SCOPE_THREAD;
    o.record = DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_READ;
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, e, 2, &o, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open: %d %s", rc, dk_last_error());
    read_values r = {0};
    CHECK_INT(dk_sampling_start(p), ==, 0);
    for (int i = 0; i < 4; i++) {
        dkt_burn_cpu_ms(50);
        CHECK_INT(dk_sampling_drain(p, collect_values, &r), >=, 0);
    }
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect_values, &r), >=, 0);
    fprintf(stderr, "samples %zu, with counts %zu\n", r.samples, r.counted);
    CHECK_U64(r.samples, >=, 10);
    CHECK_U64(r.counted, >=, r.samples * 9 / 10);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
    CHECK_INT(state_value(state_path(), "thread_counting"), ==, 0);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int count_records(void *ctx, const dk_sample *x)
{
    (void)x;
    ++*(size_t *)ctx;
    return 0;
}

TEST_CASE(wait_returns_when_records_are_ready)
{
    /* dk_sampling_wait gives 1 when some records are ready to drain. The
     * kernel's KERN_KDBUFWAIT wakes only once the trace buffer is half
     * full (bsd/kern/kdebug.c kdbg_wait): a few hundred samples in its
     * 16 MB are ready long before that. */
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_sampling(s, "cycles", 1000000, 0);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    dkt_burn_cpu_ms(30);
    uint64_t t0 = now_ns();
    CHECK_INT(dk_sampling_wait(p, 3000), ==, 1);
    CHECK_U64(now_ns() - t0, <, 1000000000ull);
    size_t n = 0;
    CHECK_INT(dk_sampling_drain(p, count_records, &n), >, 0);
    CHECK_U64(n, >, 0);
    /* Stopped and drained: nothing ready (records already drained are not
     * counted again), and a short wait times out. (While sampling runs,
     * this thread's own cycles make new records between a drain and the
     * next wait: under valgrind, within one call.) */
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    (void)dk_sampling_drain(p, count_records, &n);
    CHECK_INT(dk_sampling_wait(p, 0), ==, 0);
    t0 = now_ns();
    CHECK_INT(dk_sampling_wait(p, 100), ==, 0);
    CHECK_U64(now_ns() - t0, >=, 90000000ull);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

TEST_CASE(timer_samples_land_in_the_busy_function)
{
    fresh_state();
    collected c = {0};
    c.period = 1000000; /* ns: 1 kHz */
    sample_hot("timer", c.period, 400, &c);
    check_hot(&c, 400);
    check_disarmed(state_path());
}

TEST_CASE(period_of_a_fixed_counter_event_uses_its_configurable_twin)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {"instructions", 5000000, 0};
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, NULL, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open(instructions): %d %s", rc, dk_last_error());
    /* kpc.pmi shows the configurable counter that carries the period. */
    long pmi = state_value(state_path(), "kpc.pmi");
    CHECK(pmi != 0);
    CHECK_INT(pmi & 0x3, ==, 0); /* never a fixed counter (0, 1 on Apple; 0-2 on Intel) */
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* An event given no rate samples on the period the caps announce, and the
 * sampling says so; a timer at a frequency reports its period in ns. */
TEST_CASE(the_rate_used_is_the_one_the_caps_announce)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_INT(dk_sampler_caps(s, &caps), ==, 0);
    CHECK(caps.sampling && !caps.frequency);
    CHECK_U64(caps.sample_period, ==, 1000000);
    CHECK_U64(caps.sample_freq, ==, 0);
    dk_sampling_event e[2] = {{caps.sample_event, 0, 0}, {"timer", 0, 2000}};
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, e, 2, NULL, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open(%s, timer@2000): %d %s", caps.sample_event, rc, dk_last_error());
    uint64_t period = 1, freq = 1;
    CHECK_INT(dk_sampling_event_rate(p, 0, &period, &freq), ==, 0);
    CHECK_U64(period, ==, caps.sample_period);
    CHECK_U64(freq, ==, 0);
    CHECK_INT(dk_sampling_event_rate(p, 1, &period, NULL), ==, 0);
    CHECK_U64(period, ==, 500000); /* ns */
    CHECK_INT(dk_sampling_event_rate(p, 2, &period, &freq), ==, DK_EINVAL);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* kperf raises a timer's period to its minimum (50 us on arm64, 20 us on
 * x86): the rate reported is the period the timer fires at. */
TEST_CASE(a_timer_below_its_minimum_reports_the_period_it_uses)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {"timer", 0, 100000}; /* 10 us */
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, NULL, &p);
    if (rc != 0)
        DKT_FAIL("dk_sampling_open(timer@100000): %d %s", rc, dk_last_error());
    uint64_t period = 0, freq = 1;
    CHECK_INT(dk_sampling_event_rate(p, 0, &period, &freq), ==, 0);
    bool x86 = dk_database_arch(dk_sampler_database(s)) == DK_ARCH_X86_64;
    CHECK_U64(period, ==, x86 ? 20000 : 50000); /* ns */
    CHECK_U64(freq, ==, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

TEST_CASE(frequency_on_a_counter_is_refused_with_the_reason)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {"cycles", 0, 999};
    dk_sampling *p = NULL;
    CHECK_INT(dk_sampling_open(s, &e, 1, NULL, &p), ==, DK_ENOTSUP);
    CHECK(strstr(dk_last_error(), "frequency") != NULL);
    CHECK(strstr(dk_last_error(), "timer") != NULL);
    CHECK(p == NULL);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

TEST_CASE(unprivileged_sampling_says_it_needs_root)
{
    /* DKPERF_SIM_PRIVILEGED=0. The auto backend falls back to selfcounts,
     * which cannot sample; kperf, which samples, was passed over for
     * privileges: DK_EPERM, as dk_sampling_open documents for a privilege
     * the caller lacks. The error says why kperf was not used and that
     * sampling needs root. */
    dk_sampler *s = NULL;
    CHECK_INT(dk_sampler_open(&s, NULL), ==, 0);
    dk_sampling_event e = {"cycles", 1000000, 0};
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, NULL, &p);
    fprintf(stderr, "%s\n", dk_last_error());
    CHECK_INT(rc, ==, DK_EPERM);
    CHECK(strstr(dk_last_error(), "needs root") != NULL);
    CHECK(strstr(dk_last_error(), "kdebug") != NULL);
    CHECK(p == NULL);
    dk_sampler_close(s);

    /* The kperf backend asked for: DK_EPERM from the first tracing call. */
    dk_sampler_options so = DK_SAMPLER_OPTIONS_INIT;
    so.backend = DK_BACKEND_KPERF;
    rc = dk_sampler_open(&s, &so);
    if (rc == 0) {
        rc = dk_sampling_open(s, &e, 1, NULL, &p);
        fprintf(stderr, "%s\n", dk_last_error());
        CHECK(p == NULL);
        dk_sampler_close(s);
    }
    CHECK_INT(rc, ==, DK_EPERM);
    CHECK(strstr(dk_last_error(), "root") != NULL);
}

TEST_CASE(tracing_owned_by_another_tool_is_busy)
{
    fresh_state();
    /* DKPERF_SIM_KTRACE_BUSY=1: Instruments or ktrace owns tracing. */
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {"cycles", 1000000, 0};
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, NULL, &p);
    fprintf(stderr, "%s\n", dk_last_error());
    CHECK_INT(rc, ==, DK_EBUSY);
    CHECK(strstr(dk_last_error(), "another tool owns tracing") != NULL);
    CHECK(strstr(dk_last_error(), "Instruments") != NULL);
    CHECK(p == NULL);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* The whole sequence, errors ignored: what a fault sweep child runs. */
static void sequence(void)
{
    dk_sampler *s = NULL;
    dk_sampler_options so = DK_SAMPLER_OPTIONS_INIT;
    so.backend = DK_BACKEND_KPERF;
    if (dk_sampler_open(&s, &so) != 0)
        return;
    dk_sampling_event e[2] = {{"cycles", 1000000, 0}, {"timer", 1000000, 0}};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.record = DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_CALLCHAIN | DK_SAMPLE_READ;
    dk_sampling *p = NULL;
    collected c = {0};
    if (dk_sampling_open(s, e, 2, &o, &p) == 0) {
        if (dk_sampling_start(p) == 0) {
            dkt_burn_cpu_ms(20);
            (void)dk_sampling_wait(p, 10);
            (void)dk_sampling_drain(p, collect_any, &c);
        }
        (void)dk_sampling_stop(p);
        (void)dk_sampling_drain(p, collect_any, &c);
        dk_sampling_close(p);
    }
    dk_sampler_close(s);
}

/* Run this binary's sweep case as a child with extra environment. */
static int run_child(const char *const *extra, size_t n)
{
    size_t have = 0;
    while (environ[have] != NULL)
        have++;
    char **env = calloc(have + n + 2, sizeof *env);
    CHECK(env != NULL);
    size_t w = 0;
    for (size_t i = 0; i < have; i++)
        if (strncmp(environ[i], "DKPERF_SIM_FAIL=", 16) != 0 &&
            strncmp(environ[i], "DKPERF_SIM_CALLS=", 17) != 0)
            env[w++] = environ[i];
    for (size_t i = 0; i < n; i++)
        env[w++] = (char *)extra[i];
    env[w++] = (char *)"DKT_SWEEP_CHILD=1";
    env[w] = NULL;
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0);
    self[len] = '\0';
    char *argv[] = {self, (char *)"every_failure_leaves_nothing_armed", NULL};
    pid_t pid;
    CHECK_INT(posix_spawn(&pid, self, NULL, NULL, argv, env), ==, 0);
    free(env);
    int status = 0;
    CHECK_INT(waitpid(pid, &status, 0), ==, pid);
    return status;
}

/* Functions of the sampling sequence that the sweep fails in turn. */
static const char *const swept[] = {
    "sysctl",
    "kperf_reset",
    "kperf_action_count_get",
    "kperf_action_count_set",
    "kperf_action_samplers_set",
    "kperf_action_filter_set_by_pid",
    "kperf_timer_count_set",
    "kperf_timer_period_set",
    "kperf_timer_action_set",
    "kperf_timer_period_get",
    "kperf_sample_set",
    "kpc_set_period",
    "kpc_set_actionid",
    "kpc_set_config",
    "kpc_set_counting",
    "kpc_force_all_ctrs_set",
    "proc_pidinfo",
};

TEST_CASE(every_failure_leaves_nothing_armed)
{
    if (getenv("DKT_SWEEP_CHILD") != NULL) {
        sequence();
        exit(0);
    }
    fresh_state();
    const char *state = state_path();
    char calls[4200], state_env[4200], calls_env[4300];
    snprintf(calls, sizeof calls, "%s.calls", state);
    snprintf(calls_env, sizeof calls_env, "DKPERF_SIM_CALLS=%s", calls);
    snprintf(state_env, sizeof state_env, "DKPERF_SIM_STATE=%s", state);
    unlink(calls);
    const char *clean[] = {calls_env, state_env};
    CHECK_INT(run_child(clean, 2), ==, 0);
    check_disarmed(state);
    size_t runs = 0;
    for (size_t f = 0; f < sizeof swept / sizeof swept[0]; f++) {
        /* How often the clean run called it (each framework appends its own line). */
        FILE *cf = fopen(calls, "r");
        CHECK(cf != NULL);
        char name[128];
        unsigned long n, total = 0;
        while (fscanf(cf, "%127s %lu", name, &n) == 2)
            if (strcmp(name, swept[f]) == 0)
                total += n;
        fclose(cf);
        if (total == 0 && strcmp(swept[f], "kperf_timer_period_get") != 0 &&
            strcmp(swept[f], "proc_pidinfo") != 0)
            DKT_FAIL("the clean run never called %s: the sweep would test nothing", swept[f]);
        /* Every index of the set-up calls; the first and last 6 of the
         * many reads of a drain. */
        for (unsigned long k = 1; k <= total; k++) {
            if (total > 12 && k > 6 && k + 6 <= total)
                continue;
            char fail[256];
            snprintf(fail, sizeof fail, "DKPERF_SIM_FAIL=%s:5@%lu", swept[f], k);
            unlink(state);
            const char *extra[] = {fail, state_env};
            int status = run_child(extra, 2);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                DKT_FAIL("%s: the sequence did not exit cleanly (status 0x%x)", fail, status);
            fprintf(stderr, "%s\n", fail);
            /* A failed kpc_set_counting(0) or kpc_force_all_ctrs_set(0)
             * leaves the counters counting or forced (the counters' own
             * discipline, whose error says so and how to undo it); sampling
             * must still be disarmed. */
            bool counters = strcmp(swept[f], "kpc_set_counting") == 0 ||
                            strcmp(swept[f], "kpc_force_all_ctrs_set") == 0;
            if (access(state, F_OK) == 0) /* a failure before any state change writes none */
                check_disarmed_but(state, counters ? 2 : 0);
            runs++;
        }
    }
    fprintf(stderr, "%zu injected failures, each left nothing armed\n", runs);
    CHECK_U64(runs, >=, 20);
    unlink(calls);
}

/* Sample a child that execs /bin/sh running a busy loop, until it exits
 * (a zombie, not reaped), as dkperf record does. */
static void sample_child(dkt_child_records *c)
{
    dk_sampler *s = open_sampler();
    int rc =
        dkt_sample_child(s, "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done; exit 3", 600, c);
    dk_sampler_close(s);
    if (rc != 0)
        DKT_FAIL("%s", c->err);
    CHECK(WIFEXITED(c->status) && WEXITSTATUS(c->status) == 3);
    fprintf(stderr,
            "child %d: %zu samples, %zu names (%s), %zu exits (tid %llu), %zu records "
            "of other processes\n",
            (int)c->pid, c->samples, c->comms, c->comm, c->exits, (unsigned long long)c->exit_tid,
            c->other);
}

TEST_CASE(a_child_is_named_before_its_samples_and_its_exit_recorded)
{
    fresh_state();
    dkt_child_records c;
    sample_child(&c);
    CHECK_U64(c.samples, >=, 5);
    /* proc_pidinfo(PROC_PIDTBSDINFO) once, before the first sample: the
     * name it took at its exec (and the exec's own after a sample of the
     * forked child before it, on a slow machine). */
    CHECK_U64(c.comms, ==, 1 + c.execs_after_sample);
    CHECK_U64(c.comm_after_sample, ==, 0);
    CHECK_STR(c.comm, "sh");
    /* BSD_PROC_EXIT, once, after every sample; no other process's records
     * (the pid filter). */
    CHECK_U64(c.exits, ==, 1);
    CHECK_U64(c.exit_tid, ==, (uint64_t)c.pid);
    CHECK_U64(c.samples_after_exit, ==, 0);
    CHECK_U64(c.other, ==, 0);
    check_disarmed(state_path());
}

/* DKPERF_SIM_FAIL=proc_pidinfo (ctest): no name can be read, the samples
 * and the exit still come; the name is the exec record's (the child
 * execs after the start). */
TEST_CASE(a_process_whose_name_cannot_be_read_is_still_sampled)
{
    fresh_state();
    dkt_child_records c;
    sample_child(&c);
    CHECK_U64(c.samples, >=, 5);
    CHECK_U64(c.comms, ==, 1);
    CHECK_STR(c.comm, "sh");
    CHECK_U64(c.exits, ==, 1);
    CHECK_U64(c.samples_after_exit, ==, 0);
    check_disarmed(state_path());
}

/* The calls in any order: drain and wait before the start, start and stop
 * twice, drain after the stop, start again after a stop, a callback that
 * stops the sampling; every one answers, and the close disarms it all. */
static int stop_from_callback(void *ctx, const dk_sample *x)
{
    (void)x;
    dk_sampling *p = ctx;
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    return 0;
}

TEST_CASE(calls_in_any_order_leave_nothing_armed)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_sampling(s, "cycles", 1000000, 0);
    collected c = {0};
    CHECK_INT(dk_sampling_drain(p, collect, &c), >=, 0);
    CHECK_INT(dk_sampling_wait(p, 0), >=, 0);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    dkt_hot_caller(50000000);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect, &c), >=, 0);
    CHECK_INT(dk_sampling_drain(p, collect, &c), ==, 0);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    dkt_hot_caller(50000000);
    CHECK_INT(dk_sampling_drain(p, stop_from_callback, p), >=, 0);
    CHECK_INT(dk_sampling_drain(p, collect, &c), >=, 0);
    CHECK_INT(state_value(state_path(), "kperf.sampling"), ==, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

/* A second sampler taking the counters while this process samples finds
 * tracing owned by a live process (this one): it resets nothing, says
 * nothing, and the sampling goes on delivering. */
TEST_CASE(a_second_sampler_leaves_this_process_sampling_alone)
{
    fresh_state();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_sampling(s, "cycles", 1000000, 0);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    collected c = {0};
    dkt_hot_caller(20000000);
    CHECK_INT(dk_sampling_drain(p, collect_any, &c), >=, 0);
    size_t before = c.samples;
    CHECK_U64(before, >, 0);
    dk_sampler *s2 = NULL;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.backend = DK_BACKEND_KPERF;
    CHECK_INT(dk_sampler_open(&s2, &o), ==, 0);
    CHECK(strcmp(dk_sampler_notes(s2), "") == 0);
    dk_sampler_close(s2);
    CHECK_INT(state_value(state_path(), "kperf.sampling"), ==, 1);
    CHECK_INT(state_value(state_path(), "kpc.pmi"), !=, 0);
    CHECK_INT(state_value(state_path(), "ktrace.owning_pid"), ==, getpid());
    /* Drained before the stop: the sim's samples not yet pulled go with
     * its Linux events. */
    dkt_hot_caller(20000000);
    CHECK_INT(dk_sampling_drain(p, collect_any, &c), >=, 0);
    CHECK_U64(c.samples, >, before);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    check_disarmed(state_path());
}

TEST_CASE(sim_kpc_actionid_checks_what_the_kernel_checks)
{
    /* sysctl_getset_bigarray: EINVAL only when the classes name no counter;
     * other bits are ignored by kpc_set_actionid. */
    const dk_kperf_vtable *kp = NULL;
    CHECK_INT(dk_kperf_load(NULL, &kp, NULL), ==, 0);
    CHECK(kp->kpc_set_actionid != NULL && kp->kpc_get_actionid != NULL);
    uint32_t ids[KPC_MAX_COUNTERS] = {0}, back[KPC_MAX_COUNTERS] = {0};
    ids[0] = 3;
    CHECK_INT(kp->kpc_set_actionid(KPC_CLASS_CONFIGURABLE_MASK | 0x10u, ids), ==, 0);
    CHECK_INT(kp->kpc_get_actionid(KPC_CLASS_CONFIGURABLE_MASK, back), ==, 0);
    CHECK_INT(back[0], ==, 3);
    errno = 0;
    CHECK(kp->kpc_set_actionid(0x10u, ids) != 0);
    CHECK_INT(errno, ==, EINVAL);
    ids[0] = 0;
    CHECK_INT(kp->kpc_set_actionid(KPC_CLASS_CONFIGURABLE_MASK, ids), ==, 0);
}

TEST_MAIN()
