/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_groups.c - dk_group: a whole process or every CPU. Cases named sim_*
 * run against the simulated frameworks, linux_* against perf_event.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#include "api.h"
#include "common/clock.h"
#include "child.h"

/* A child held before its exec until released. */
typedef child_process child;

static const char *region_program(void)
{
    const char *p = getenv("DKPERF_REGION_PROGRAM");
    if (p == NULL)
        DKT_FAIL("DKPERF_REGION_PROGRAM is not set: run this test through ctest");
    return p;
}

/*
 * Once released the child runs script with sh, $0 being the region program
 * and stdin in_fd (-1: left as is), or, without a script, the region
 * program burning ms of CPU.
 */
static child hold(const char *script, double ms, int in_fd)
{
    char burn[32];
    snprintf(burn, sizeof burn, "%g", ms);
    char *prog = (char *)region_program();
    char *sh[] = {"/bin/sh", "-c", (char *)script, prog, NULL};
    char *work[] = {prog, "--work-only", "--pages", "1", "--burn-ms", burn, NULL};
    child_options o = CHILD_OPTIONS_INIT;
    o.stdin_fd = in_fd;
    child c;
    CHECK_INT(child_prepare(&c, script != NULL ? sh : work, &o), ==, 0);
    return c;
}

static child hold_child(double ms) { return hold(NULL, ms, -1); }

static void release(child *c)
{
    int exec_errno;
    CHECK_INT(child_release(c), ==, 0);
    CHECK_INT(child_exec_result(c, &exec_errno), ==, 0);
    CHECK_INT(exec_errno, ==, 0);
}

/* cpu's core_id from sysfs, or -1. */
static int sysfs_core_id(int cpu)
{
    char path[160];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f != NULL) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

static void release_and_wait(child *c)
{
    release(c);
    CHECK_INT(child_wait_exit(c, NULL), ==, 0);
}

static void reap(child *c)
{
    int status;
    CHECK_INT(child_reap(c, &status, NULL), ==, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_CASE(sim_process_scope_counts_instructions_and_cycles_of_a_child)
{
    dk_sampler *s = open_sampler();
    child c = hold_child(80);
    const char *names[] = {"instructions", "cycles", "branches"};
    dk_group *g = NULL;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_PROCESS, c.pid, names, 3, 0, &g), DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "INST_BRANCH");
    CHECK_CONTAINS(dk_last_error(), "every CPU");
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, c.pid, names, 3, DK_GROUP_PARTIAL, &g));
    CHECK_INT(dk_group_event_count(g), ==, 3);
    CHECK(dk_group_supported(g, 0) && dk_group_supported(g, 1) && !dk_group_supported(g, 2));
    CHECK_STR(dk_group_why(g, 0), "");
    CHECK_CONTAINS(dk_group_why(g, 2), "another process");
    CHECK_STR(dk_group_event_name(g, 0), "FIXED_INSTRUCTIONS");
    CHECK_STR(dk_group_event_name(g, 2), "INST_BRANCH");
    CHECK_CONTAINS(dk_group_scope(g), "process");
    CHECK_OK(dk_group_start(g));
    release_and_wait(&c);
    uint64_t v[3];
    dk_reading info[3];
    CHECK_OK(dk_group_read(g, v, info));
    CHECK_U64(v[1], >=, 3000u * 1000 * 60); /* 10 ms ticks of the child's 80 ms */
    CHECK(v[0] > v[1] * 2 && v[0] < v[1] * 3);
    CHECK_U64(v[2], ==, 0);
    CHECK(info[0].counted && !info[2].counted);
    dk_group_close(g);
    reap(&c);
    dk_sampler_close(s);
}

TEST_CASE(sim_system_scope_reads_every_cpu)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions", "branches", "branch-misses"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 3, 0, &g));
    CHECK_CONTAINS(dk_group_scope(g), "every CPU");
    CHECK_OK(dk_group_start(g));
    CHECK_OK(dk_group_start(g)); /* idempotent */
    CHECK_INT(raw_kperf()->kpc_get_counting(), !=, 0);
    CHECK_INT(raw_kperf()->kpc_get_thread_counting(), ==, 0); /* no per-thread counting */
    uint64_t a[3], b[3], c[3];
    CHECK_OK(dk_group_read(g, a, NULL));
    dkt_burn_cpu_ms(120); /* /proc/stat counts 10 ms ticks */
    CHECK_OK(dk_group_read(g, b, NULL));
    for (int i = 0; i < 3; i++)
        CHECK_U64(b[i], >, a[i]);
    CHECK_OK(dk_group_stop(g));
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
    dkt_burn_cpu_ms(30);
    CHECK_OK(dk_group_read(g, c, NULL));
    CHECK_U64(c[0], >=, b[0]);
    CHECK_OK(dk_group_read(g, a, NULL));
    CHECK_U64(a[0], ==, c[0]); /* stopped: frozen */
    dk_group_close(g);
    CHECK_INT(raw_force_all(), ==, 1); /* the sampler still holds the counters */
    dk_sampler_close(s);
    CHECK_INT(raw_force_all(), ==, 0);
}

TEST_CASE(sim_system_scope_shares_counters_with_thread_samplers)
{
    dk_sampler *s = open_sampler();
    const char *one[] = {"INST_INT_ST"}, *other[] = {"INST_INT_ALU"};
    dk_thread *t = open_names(s, one, 1);
    dk_group *g = NULL;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, other, 1, 0, &g), DK_ECONFLICT);
    CHECK_CONTAINS(dk_last_error(), "INST_INT_ST");
    CHECK_OK(dk_group_open(s, DK_SCOPE_SYSTEM, 0, one, 1, 0, &g));
    /* Both count; stopping the group leaves the thread sampler counting. */
    CHECK_OK(dk_thread_start(t));
    CHECK_OK(dk_group_start(g));
    CHECK_OK(dk_group_stop(g));
    CHECK_INT(raw_kperf()->kpc_get_thread_counting(), !=, 0);
    uint64_t a, b;
    CHECK_OK(dk_thread_sample(t, &a));
    dkt_burn_cpu_ms(2);
    CHECK_OK(dk_thread_sample(t, &b));
    CHECK_U64(b, >, a);
    dk_group_close(g);
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(sim_release_waits_for_running_groups)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"cycles"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 1, 0, &g));
    CHECK_OK(dk_group_start(g));
    CHECK_ERR(dk_sampler_release(s), DK_ESTATE);
    dk_sampler_close(s); /* deferred until the group stops */
    CHECK_INT(raw_force_all(), ==, 1);
    CHECK_OK(dk_group_stop(g));
    CHECK_INT(raw_force_all(), ==, 0);
    CHECK_ERR(dk_group_start(g), DK_ESTATE);
    dk_group_close(g);
}

TEST_CASE(sim_unprivileged_has_no_system_scope)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "selfcounts");
    const char *names[] = {"instructions"};
    dk_group *g = NULL;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 1, 0, &g), DK_ENOTSUP);
    CHECK_CONTAINS(dk_last_error(), "root");
    /* This process's totals work without root. */
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 1, DK_GROUP_ENABLE_ON_EXEC, &g));
    uint64_t a, b;
    CHECK_OK(dk_group_read(g, &a, NULL));
    dkt_burn_cpu_ms(40);
    CHECK_OK(dk_group_read(g, &b, NULL));
    CHECK_U64(b, >, a);
    dk_group_close(g);
    dk_sampler_close(s);
}

TEST_CASE(invalid_group_arguments)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"cycles"}, *none[] = {"NO_SUCH_EVENT"};
    dk_group *g = NULL;
    CHECK_ERR(dk_group_open(NULL, DK_SCOPE_SYSTEM, 0, names, 1, 0, &g), DK_EINVAL);
    CHECK_ERR(dk_group_open(s, (dk_scope)7, 0, names, 1, 0, &g), DK_EINVAL);
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 0, 0, &g), DK_EINVAL);
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 1, 0x80, &g), DK_EINVAL);
    CHECK_ERR(dk_group_open(s, DK_SCOPE_PROCESS, -5, names, 1, 0, &g), DK_EINVAL);
    CHECK_ERR(dk_group_open(s, DK_SCOPE_PROCESS, 1, names, 1, DK_GROUP_CHILDREN, &g), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "DK_GROUP_CHILDREN");
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 1, DK_GROUP_CHILDREN, &g), DK_EINVAL);
    CHECK_ERR(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 1,
                            DK_GROUP_CHILDREN | DK_GROUP_ENABLE_ON_EXEC, &g),
              DK_EINVAL);
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, none, 1, DK_GROUP_PARTIAL, &g), DK_ENOEVENT);
    CHECK(g == NULL);
    CHECK_ERR(dk_group_start(NULL), DK_EINVAL);
    CHECK_ERR(dk_group_stop(NULL), DK_EINVAL);
    uint64_t v;
    CHECK_ERR(dk_group_read(NULL, &v, NULL), DK_EINVAL);
    CHECK(dk_group_event_name(NULL, 0) == NULL);
    CHECK(!dk_group_supported(NULL, 0));
    dk_group_close(NULL);
    CHECK_OK(dk_sampler_release(s));
    CHECK_ERR(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 1, 0, &g), DK_ESTATE);
    dk_sampler_close(s);
}

/* macOS has no counters that processes inherit. */
TEST_CASE(sim_children_group_is_not_supported)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions"};
    dk_group *g = NULL;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 1, DK_GROUP_CHILDREN, &g), DK_ENOTSUP);
    CHECK_CONTAINS(dk_last_error(), "perf_event");
    CHECK(g == NULL);
    dk_sampler_close(s);
}

TEST_CASE(sim_a_reaped_process_is_gone)
{
    dk_sampler *s = open_sampler();
    child c = hold_child(1);
    pid_t pid = c.pid;
    const char *names[] = {"instructions"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, c.pid, names, 1, 0, &g));
    CHECK_OK(dk_group_start(g));
    release_and_wait(&c);
    reap(&c);
    uint64_t v;
    CHECK_ERR(dk_group_read(g, &v, NULL), DK_EOS);
    CHECK_CONTAINS(dk_last_error(), "proc_pid_rusage");
    dk_group_close(g);
    CHECK_ERR(dk_group_open(s, DK_SCOPE_PROCESS, pid, names, 1, 0, &g), DK_EOS);
    dk_sampler_close(s);
}

/* A start that fails half-way (the first per-CPU read) leaves nothing counting. */
TEST_CASE(sim_a_failed_start_leaves_nothing_counting)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"cycles", "branches"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 2, 0, &g));
    CHECK_ERR(dk_group_start(g), DK_EOS); /* DKPERF_SIM_FAIL=kpc_get_cpu_counters:5 */
    CHECK_CONTAINS(dk_last_error(), "kpc_get_cpu_counters");
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
    CHECK_OK(dk_group_stop(g));      /* not running: nothing to do */
    CHECK_OK(dk_sampler_release(s)); /* no running group holds the counters */
    CHECK_INT(raw_force_all(), ==, 0);
    dk_group_close(g);
    dk_sampler_close(s);
}

/* Any thread may start, stop or read a group; the sampler's count of running
 * groups stays exact and counts never go back (TSan checks the locking). */
typedef struct toggler {
    dk_group *g;
    int errors;
    bool reader;
} toggler;

static void *toggle(void *arg)
{
    toggler *t = arg;
    uint64_t last[2] = {0, 0}, v[2];
    for (int i = 0; i < 300; i++) {
        if (t->reader) {
            /* Counts never go back, whatever the other threads do. */
            if (dk_group_read(t->g, v, NULL) != 0 || v[0] < last[0] || v[1] < last[1])
                t->errors++;
            memcpy(last, v, sizeof last);
        } else if (dk_group_start(t->g) != 0 || dk_group_stop(t->g) != 0) {
            t->errors++;
        }
    }
    return NULL;
}

TEST_CASE(sim_groups_start_and_stop_from_many_threads)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions", "branches"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 2, 0, &g));
    toggler t[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        t[i] = (toggler){g, 0, i == 3};
        CHECK_INT(pthread_create(&th[i], NULL, toggle, &t[i]), ==, 0);
    }
    for (int i = 0; i < 4; i++) {
        CHECK_INT(pthread_join(th[i], NULL), ==, 0);
        CHECK_INT(t[i].errors, ==, 0);
    }
    /* Every start was matched by a stop: nothing counts, release succeeds. */
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
    CHECK_OK(dk_sampler_release(s));
    CHECK_INT(raw_force_all(), ==, 0);
    dk_group_close(g);
    dk_sampler_close(s);
}

/* ------------------------------------------------------------------------ */
/* Linux                                                                     */
/* ------------------------------------------------------------------------ */

TEST_CASE(linux_process_scope_follows_children_from_exec)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "perf_event");
    /* A shell whose own child touches 3000 pages. */
    child c = hold("\"$0\" --work-only --pages 3000 --burn-ms 20", 0, -1);
    pid_t pid = c.pid;
    const char *names[] = {"page-faults", "task-clock", "instructions"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, pid, names, 3,
                           DK_GROUP_ENABLE_ON_EXEC | DK_GROUP_PARTIAL, &g));
    CHECK_CONTAINS(dk_group_scope(g), "processes it starts");
    CHECK_STR(dk_group_event_unit(g, 1), "ns");
    uint64_t v[3];
    CHECK_OK(dk_group_read(g, v, NULL));
    CHECK_U64(v[0], ==, 0); /* nothing before the exec */
    release(&c);
    int status;
    CHECK_INT(waitpid(pid, &status, 0), ==, pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    dk_reading info[3];
    CHECK_OK(dk_group_read(g, v, info));
    CHECK_U64(v[0], >=, 3000); /* the grandchild's faults are counted */
    CHECK_U64(v[1], >=, 20000000);
    CHECK(info[0].counted && info[1].counted);
    if (!dk_group_supported(g, 2))
        CHECK_CONTAINS(dk_group_why(g, 2), "no hardware PMU");
    dk_group_close(g);
    dk_sampler_close(s);
}

/* Counting the kernel started at exec stops and starts again like any other. */
TEST_CASE(linux_enable_on_exec_group_resumes_after_stop)
{
    dk_sampler *s = open_sampler();
    int more[2];
    CHECK_INT(pipe(more), ==, 0);
    CHECK_INT(fcntl(more[1], F_SETFD, FD_CLOEXEC), ==, 0); /* the shell gets the read end only */
    /* 2000 page faults, wait for a line, 2000 more. */
    child c = hold("\"$0\" --work-only --pages 2000 --burn-ms 1 && read x && "
                   "\"$0\" --work-only --pages 2000 --burn-ms 1",
                   0, more[0]);
    close(more[0]);
    pid_t pid = c.pid;
    const char *names[] = {"page-faults"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, pid, names, 1, DK_GROUP_ENABLE_ON_EXEC, &g));
    release(&c);
    /* The first half is done when its faults are in (the shell then waits). */
    uint64_t a = 0;
    for (int i = 0; i < 1000 && a < 2000; i++) {
        dkt_sleep_ms(10);
        CHECK_OK(dk_group_read(g, &a, NULL));
    }
    CHECK_U64(a, >=, 2000);
    CHECK_OK(dk_group_stop(g));
    CHECK_OK(dk_group_read(g, &a, NULL));
    CHECK_OK(dk_group_start(g));
    CHECK_INT(write(more[1], "\n", 1), ==, 1);
    close(more[1]);
    siginfo_t si;
    CHECK_INT(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), ==, 0);
    CHECK_INT(si.si_code, ==, CLD_EXITED);
    CHECK_INT(si.si_status, ==, 0);
    uint64_t b;
    CHECK_OK(dk_group_read(g, &b, NULL));
    CHECK_U64(b - a, >=, 2000); /* the second half counted */
    dk_group_close(g);
    CHECK_INT(waitpid(pid, NULL, 0), ==, pid);
    dk_sampler_close(s);
}

/* Runs the region program touching pages pages with posix_spawn and reaps
 * it; the ns it took. */
/* The workload the children-group tests start: touch_pages, whose own
 * start-up faults the same pages in every build (region_program carries
 * the sanitizer runtime in sanitizer builds, and its start-up varies by
 * thousands of page faults there). */
static const char *touch_program(void)
{
    const char *p = getenv("DKPERF_TOUCH_PROGRAM");
    if (p == NULL)
        DKT_FAIL("DKPERF_TOUCH_PROGRAM is not set: run this test through ctest");
    return p;
}

static uint64_t spawn_region(size_t pages)
{
    char n[32];
    snprintf(n, sizeof n, "%zu", pages);
    char *argv[] = {(char *)touch_program(), "--work-only", "--pages", n, "--burn-ms", "1", NULL};
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    CHECK(null_fd >= 0);
    sigset_t mask;
    sigprocmask(SIG_SETMASK, NULL, &mask);
    pid_t pid;
    uint64_t t0 = dk__monotonic_ns();
    CHECK_INT(child_launch(&pid, argv, null_fd, false, &mask, NULL), ==, 0);
    int status;
    CHECK_INT(waitpid(pid, &status, 0), ==, pid);
    uint64_t took = dk__monotonic_ns() - t0;
    close(null_fd);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return took;
}

/* Touch pages fresh pages of this process, and burn ms of its CPU. */
static void own_work(size_t pages, double ms)
{
    long page = sysconf(_SC_PAGESIZE);
    char *p = mmap(NULL, pages * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    CHECK(p != MAP_FAILED);
    for (size_t i = 0; i < pages; i++)
        p[i * (size_t)page] = 1;
    munmap(p, pages * (size_t)page);
    uint64_t until = dk__monotonic_ns() + (uint64_t)(ms * 1e6);
    while (dk__monotonic_ns() < until)
        ;
}

/* One group for every process the test starts: each counted from its exec,
 * the differences of the running totals give each run, the caller's own
 * work never counts. Many runs: a context the kernel swapped between the
 * test and a child once would stop every later child from counting. */
TEST_CASE(linux_children_group_counts_each_spawned_process)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"page-faults", "task-clock"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 2, DK_GROUP_CHILDREN, &g));
    CHECK_CONTAINS(dk_group_scope(g), "each from its exec");
    CHECK_OK(dk_group_start(g)); /* no-ops: enabling would count the caller */
    CHECK_OK(dk_group_stop(g));
    uint64_t v[2];
    dk_reading info[2];
    own_work(3000, 30);
    CHECK_OK(dk_group_read(g, v, info));
    CHECK_U64(v[0], ==, 0);
    CHECK_U64(v[1], ==, 0);
    CHECK_U64(info[1].time_running, ==, 0);

    /* The region program with one page: what a run costs besides the others. */
    uint64_t before[2], after[2];
    CHECK_OK(dk_group_read(g, before, NULL));
    spawn_region(1);
    CHECK_OK(dk_group_read(g, after, NULL));
    uint64_t base = after[0] - before[0];
    CHECK_U64(base, >, 0);
    for (int run = 0; run < 150; run++) {
        size_t pages = run % 2 ? 2000 : 500;
        CHECK_OK(dk_group_read(g, before, NULL));
        own_work(200, 0); /* the caller's, between the readings: not counted */
        uint64_t took = spawn_region(pages);
        CHECK_OK(dk_group_read(g, after, info));
        uint64_t faults = after[0] - before[0], ns = after[1] - before[1];
        if (faults < base + pages - 50 || faults > base + pages + 200 || ns < 1000000 ||
            ns > took) {
            fprintf(stderr,
                    "run %d: %zu pages: %llu page faults (%llu without pages), %llu ns "
                    "of task-clock in %llu ns\n",
                    run, pages, (unsigned long long)faults, (unsigned long long)base,
                    (unsigned long long)ns, (unsigned long long)took);
            DKT_FAIL("a spawned run was not counted as it ran");
        }
        CHECK(info[0].counted && info[1].counted);
    }
    dk_group_close(g);
    dk_sampler_close(s);
}

/* What a child does between its fork and its exec is not counted. */
static char *prefork_pages;
static size_t prefork_count;
static void touch_before_exec(void)
{
    long page = sysconf(_SC_PAGESIZE);
    for (size_t i = 0; i < prefork_count; i++)
        prefork_pages[i * (size_t)page] = 1;
}

TEST_CASE(linux_children_group_starts_at_exec)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"page-faults"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 1, DK_GROUP_CHILDREN, &g));
    uint64_t before, after;
    CHECK_OK(dk_group_read(g, &before, NULL));
    spawn_region(1);
    CHECK_OK(dk_group_read(g, &after, NULL));
    uint64_t base = after - before;

    prefork_count = 3000;
    long page = sysconf(_SC_PAGESIZE);
    prefork_pages = mmap(NULL, prefork_count * (size_t)page, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(prefork_pages != MAP_FAILED);
    char *argv[] = {(char *)touch_program(), "--work-only", "--pages", "1", "--burn-ms", "1", NULL};
    child_options o = CHILD_OPTIONS_INIT;
    o.in_child = touch_before_exec;
    child c;
    CHECK_OK(dk_group_read(g, &before, NULL));
    CHECK_INT(child_prepare(&c, argv, &o), ==, 0);
    dkt_sleep_ms(20);
    CHECK_OK(dk_group_read(g, &after, NULL));
    CHECK_U64(after - before, ==, 0); /* forked, pages touched, not exec'd */
    release_and_wait(&c);
    reap(&c);
    CHECK_OK(dk_group_read(g, &after, NULL));
    CHECK_U64(after - before, <, base + 200); /* the 3000 pages before the exec are not in */
    CHECK_U64(after - before, >, 0);
    munmap(prefork_pages, prefork_count * (size_t)page);
    dk_group_close(g);
    dk_sampler_close(s);
}

TEST_CASE(linux_system_scope)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"cpu-clock"};
    dk_group *g = NULL;
    int rc = dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 1, 0, &g);
    if (geteuid() != 0 && rc == DK_EPERM) {
        CHECK_CONTAINS(dk_last_error(), "CAP_PERFMON");
        dk_sampler_close(s);
        SKIP("not root: system-wide counting was refused, with the reason");
    }
    CHECK_OK(rc);
    CHECK_CONTAINS(dk_group_scope(g), "every CPU");
    CHECK_OK(dk_group_start(g));
    uint64_t a, b;
    CHECK_OK(dk_group_read(g, &a, NULL));
    dkt_sleep_ms(50);
    CHECK_OK(dk_group_read(g, &b, NULL));
    /* cpu-clock on every online CPU: at least the 50 ms, once per CPU. */
    CHECK_U64(b - a, >=, 45000000);
    CHECK_OK(dk_group_stop(g));
    dk_group_close(g);
    dk_sampler_close(s);
}

TEST_CASE(linux_system_group_reads_each_cpu)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"cpu-clock", "task-clock"};
    dk_group *g = NULL;
    int rc = dk_group_open(s, DK_SCOPE_SYSTEM, 0, names, 2, 0, &g);
    if (geteuid() != 0 && rc == DK_EPERM) {
        dk_sampler_close(s);
        SKIP("not root: system-wide counting was refused");
    }
    CHECK_OK(rc);
    size_t ncpu = dk_group_cpu_count(g);
    CHECK_INT(ncpu, ==, (size_t)sysconf(_SC_NPROCESSORS_ONLN));
    CHECK_INT(dk_group_perf_levels(g), >=, 1);
    for (size_t c = 0; c < ncpu; c++) {
        dk_cpu_info ci = {.size = sizeof ci};
        CHECK_OK(dk_group_cpu_info(g, c, &ci));
        CHECK_INT(ci.core, ==, sysfs_core_id(ci.id));
        CHECK(ci.level_name != NULL);
    }
    CHECK_OK(dk_group_start(g));
    dkt_sleep_ms(50);
    CHECK_OK(dk_group_stop(g));
    uint64_t total[2], *cpus = calloc(ncpu * 2, sizeof *cpus), lv[2 * 4];
    CHECK(cpus != NULL);
    CHECK_OK(dk_group_read(g, total, NULL));
    CHECK_OK(dk_group_read_cpus(g, cpus, ncpu));
    CHECK_OK(dk_group_read_perf_levels(g, lv, dk_group_perf_levels(g)));
    for (size_t i = 0; i < 2; i++) {
        uint64_t sum = 0, lsum = 0;
        for (size_t c = 0; c < ncpu; c++) {
            CHECK_U64(cpus[c * 2 + i], >=, 40000000); /* each CPU's clock ran the 50 ms */
            sum += cpus[c * 2 + i];
        }
        for (size_t l = 0; l < dk_group_perf_levels(g); l++)
            lsum += lv[l * 2 + i];
        CHECK_U64(sum, ==, total[i]); /* stopped: the same counts */
        CHECK_U64(lsum, ==, total[i]);
    }
    /* Each CPU's own times, as perf stat -A prints them: each ran about
     * the 50 ms (not the sum over the CPUs), and they add up to the
     * group's. */
    dk_reading whole[2], *info = calloc(ncpu * 2, sizeof *info);
    uint64_t *again = calloc(ncpu * 2, sizeof *again);
    CHECK(info != NULL && again != NULL);
    CHECK_OK(dk_group_read(g, total, whole));
    CHECK_ERR(dk_group_read_cpus_info(g, again, NULL, ncpu), DK_EINVAL);
    CHECK_ERR(dk_group_read_cpus_info(g, again, info, ncpu + 1), DK_EINVAL);
    CHECK_OK(dk_group_read_cpus_info(g, again, info, ncpu));
    for (size_t i = 0; i < 2; i++) {
        uint64_t enabled = 0, running = 0;
        for (size_t c = 0; c < ncpu; c++) {
            const dk_reading *r = &info[c * 2 + i];
            CHECK_U64(again[c * 2 + i], ==, cpus[c * 2 + i]);
            CHECK(r->counted);
            CHECK_U64(r->time_running, <=, r->time_enabled);
            CHECK_U64(r->time_enabled, >=, 40000000);
            /* One CPU's span, not every CPU's: well under twice the clock. */
            CHECK_U64(r->time_enabled, <, cpus[c * 2 + i] + cpus[c * 2 + i] / 2);
            enabled += r->time_enabled;
            running += r->time_running;
        }
        CHECK_U64(enabled, ==, whole[i].time_enabled);
        CHECK_U64(running, ==, whole[i].time_running);
    }
    free(info);
    free(again);
    free(cpus);
    dk_group_close(g);
    dk_sampler_close(s);
}

/* One thread (DK_SCOPE_THREAD): a thread id above 0, nothing inherited. */
TEST_CASE(thread_scope_arguments)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions"};
    dk_group *g = NULL;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_THREAD, 0, names, 1, 0, &g), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "DK_SCOPE_THREAD");
    CHECK_ERR(dk_group_open(s, DK_SCOPE_THREAD, getpid(), names, 1, DK_GROUP_ENABLE_ON_EXEC, &g),
              DK_EINVAL);
    CHECK_ERR(dk_group_open(s, DK_SCOPE_THREAD, getpid(), names, 1, DK_GROUP_CHILDREN, &g),
              DK_EINVAL);
    CHECK(g == NULL);
    dk_sampler_close(s);
}

/* macOS counts a thread only from inside its own process. */
TEST_CASE(sim_thread_scope_is_not_supported)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"instructions"};
    dk_group *g = NULL;
    CHECK_ERR(dk_group_open(s, DK_SCOPE_THREAD, getpid(), names, 1, DK_GROUP_PARTIAL, &g),
              DK_ENOTSUP);
    CHECK_CONTAINS(dk_last_error(), "without injecting code");
    CHECK(g == NULL);
    dk_sampler_close(s);
}

static atomic_int spin_stop;
static atomic_int spin_tid;

static uint64_t cpu_clock_ns(clockid_t c)
{
    struct timespec ts;
    CHECK_INT(clock_gettime(c, &ts), ==, 0);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *spin_thread(void *arg)
{
    (void)arg;
    spin_tid = (int)syscall(SYS_gettid);
    while (!spin_stop)
        ;
    return NULL;
}

/* A thread group counts that thread alone: a spinning thread's time, and
 * next to nothing of the sleeping main thread of the same process. */
TEST_CASE(linux_thread_scope_counts_one_thread)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"task-clock"};
    pthread_t th;
    spin_stop = 0;
    spin_tid = 0;
    CHECK_INT(pthread_create(&th, NULL, spin_thread, NULL), ==, 0);
    while (spin_tid == 0)
        dkt_sleep_ms(1);
    dk_group *busy = NULL, *idle = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_THREAD, spin_tid, names, 1, 0, &busy));
    CHECK_OK(dk_group_open(s, DK_SCOPE_THREAD, getpid(), names, 1, 0, &idle));
    CHECK_CONTAINS(dk_group_scope(busy), "thread");
    /* The spinner's own CPU clock brackets what its group counts, however
     * loaded the machine: no less than it ran between the start and the
     * read, no more than from before the start to after the read. */
    clockid_t spin_clock;
    CHECK_INT(pthread_getcpuclockid(th, &spin_clock), ==, 0);
    uint64_t c0 = cpu_clock_ns(spin_clock);
    CHECK_OK(dk_group_start(busy));
    CHECK_OK(dk_group_start(idle));
    uint64_t c1 = cpu_clock_ns(spin_clock);
    dkt_sleep_ms(300);
    uint64_t c2 = cpu_clock_ns(spin_clock);
    uint64_t b, i;
    CHECK_OK(dk_group_read(busy, &b, NULL));
    uint64_t c3 = cpu_clock_ns(spin_clock);
    CHECK_OK(dk_group_read(idle, &i, NULL));
    spin_stop = 1;
    pthread_join(th, NULL);
    fprintf(stderr, "spinner: counted %llu ns; its clock %llu..%llu ns; main thread %llu ns\n",
            (unsigned long long)b, (unsigned long long)(c2 - c1), (unsigned long long)(c3 - c0),
            (unsigned long long)i);
    CHECK_U64(c3 - c0, >, 0);
    /* 5 ms: the two clocks read the same runtime at different moments. */
    CHECK_U64(b + 5000000, >=, c2 - c1);
    CHECK_U64(b, <=, c3 - c0 + 5000000);
    CHECK_U64(i, <, 30000000);
    dk_group_close(busy);
    dk_group_close(idle);
    dk_sampler_close(s);
}

TEST_MAIN()
