/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_perf_event.c - the perf_event backend through the real system calls.
 * Software events work on every Linux machine, with or without a hardware
 * PMU; hardware events are checked to fail clearly where there is none.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"
#include "backend/perf_event/perf_event.h"
#include "pmu.h"

static bool have_cpu_pmu(void) { return dkt_have_hw_pmu(NULL); }

static dk_sampler *open_linux(void)
{
    dk_sampler *s = open_sampler();
    CHECK_STR(dk_sampler_backend(s), "perf_event");
    return s;
}

/* Touch n fresh pages; returns them for munmap. Not instrumented: ASan's
 * shadow memory would add a fault per eight pages. */
#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize_address))
#endif
static void *
touch_pages(size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    char *p =
        mmap(NULL, n * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
#ifdef MADV_NOHUGEPAGE
    madvise(p, n * (size_t)page, MADV_NOHUGEPAGE); /* one fault per page */
#endif
    for (size_t i = 0; i < n; i++)
        p[i * (size_t)page] = (char)i;
    return p;
}

TEST_CASE(backend_and_database)
{
    dk_sampler *s = open_linux();
    CHECK_STR(dk_sampler_why(s), "");
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_OK(dk_sampler_caps(s, &caps));
    CHECK_STR(caps.name, "perf_event");
    CHECK(caps.per_thread && caps.multiplexing && caps.all_events && !caps.perf_levels);
    CHECK(caps.per_process);
    CHECK(caps.system_wide == (geteuid() == 0));
    CHECK(caps.pmu != NULL && caps.privileges != NULL);
    if (!have_cpu_pmu())
        CHECK_CONTAINS(caps.pmu, "no hardware PMU");
    /* The facts a tool picks its defaults by, as perf's. */
    CHECK(caps.sampling && caps.frequency);
    CHECK_U64(caps.sample_period, ==, 0);
    CHECK_U64(caps.sample_freq, ==, 4000);
    CHECK_STR(caps.stat_events, "task-clock,context-switches,page-faults,instructions,cycles,"
                                "branches,branch-misses");
    CHECK(caps.software_events && caps.process_events && caps.children && caps.counts_outlive);
    /* User mode only where perf_event_paranoid keeps a user from the kernel. */
    int paranoid = 2;
    FILE *pf = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    if (pf != NULL) {
        if (fscanf(pf, "%d", &paranoid) != 1)
            paranoid = 2;
        fclose(pf);
    }
    CHECK(caps.user_only == (paranoid > 1 && geteuid() != 0));
    CHECK_CONTAINS(caps.lost_means, "ring buffer");
    const dk_database_event *cycles = dk_database_find(dk_sampler_database(s), "cycles");
    CHECK(cycles != NULL);
    CHECK_STR(caps.sample_event, cycles->supported ? "cycles" : "cpu-clock");
    CHECK_INT(dk_sampler_perf_levels(s), ==, 0);
    const dk_database *db = dk_sampler_database(s);
    CHECK_STR(dk_database_name(db), "linux");
    CHECK(dk_database_arch(db) != DK_ARCH_UNKNOWN);
    CHECK(strlen(dk_database_marketing_name(db)) > 0);
    static const char *software[] = {"task-clock",       "cpu-clock",      "page-faults",
                                     "context-switches", "cpu-migrations", "minor-faults",
                                     "major-faults"};
    for (size_t i = 0; i < sizeof software / sizeof software[0]; i++) {
        const dk_database_event *ev = dk_database_find(db, software[i]);
        if (ev == NULL)
            DKT_FAIL("%s is not listed", software[i]);
        CHECK(ev->supported);
        CHECK_STR(ev->source, "software");
    }
    CHECK_STR(dk_database_find(db, "task-clock")->unit, "ns");
    CHECK(dk_database_find(db, "page-faults")->unit == NULL);
    /* perf's aliases */
    CHECK_STR(dk_database_find(db, "faults")->name, "page-faults");
    CHECK_STR(dk_database_find(db, "cs")->name, "context-switches");
    CHECK_STR(dk_database_find(db, "cycles")->name, "cpu-cycles");
    const dk_database_event *insts = dk_database_find(db, "instructions");
    CHECK(insts != NULL);
    CHECK_STR(insts->source, "hardware");
    CHECK(insts->supported == have_cpu_pmu());
    const dk_database_event *l1 = dk_database_find(db, "L1-dcache-load-misses");
    CHECK(l1 != NULL);
    CHECK_STR(l1->source, "hw-cache");
    /* Partial match, case-insensitive. */
    CHECK_INT(dk_database_match(db, "FAULTS", NULL, 0), >=, 4);
    dk_sampler_close(s);
}

/* Burns 60 ms and stores the CPU time it took, as its own thread clock saw it. */
static void *other_work(void *arg)
{
    uint64_t t0 = dkt_thread_cpu_ns();
    dkt_burn_cpu_ms(60);
    *(uint64_t *)arg = dkt_thread_cpu_ns() - t0;
    return NULL;
}

TEST_CASE(task_clock_counts_this_thread_only)
{
    dk_sampler *s = open_linux();
    const char *names[] = {"task-clock"};
    dk_thread *t = open_names(s, names, 1);
    CHECK_OK(dk_thread_start(t));
    uint64_t a, b, c;
    uint64_t t0 = dkt_thread_cpu_ns();
    CHECK_OK(dk_thread_sample(t, &a));
    uint64_t t1 = dkt_thread_cpu_ns();
    dkt_burn_cpu_ms(30);
    uint64_t t2 = dkt_thread_cpu_ns();
    CHECK_OK(dk_thread_sample(t, &b));
    uint64_t t3 = dkt_thread_cpu_ns();
    /* task-clock is this thread's CPU time in ns: between [t1,t2] and [t0,t3]. */
    CHECK_U64(b - a, >=, (t2 - t1) * 90 / 100);
    CHECK_U64(b - a, <=, (t3 - t0) * 110 / 100 + 1000000);

    /* Another thread's 60 ms do not show. This thread's own time while it
     * creates and joins the other is not 0 (valgrind makes it tens of ms),
     * so the bound is its own clock plus half of the other's. */
    pthread_t th;
    uint64_t other = 0;
    CHECK_INT(pthread_create(&th, NULL, other_work, &other), ==, 0);
    pthread_join(th, NULL);
    CHECK_OK(dk_thread_sample(t, &c));
    uint64_t t5 = dkt_thread_cpu_ns();
    CHECK_U64(other, >=, 55000000);
    CHECK_U64(c - b, <=, (t5 - t3) * 105 / 100 + 1000000);
    CHECK_U64(c - b, <, (t5 - t3) + other / 2);
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(page_faults_count_fresh_pages)
{
    dk_sampler *s = open_linux();
    const char *names[] = {"page-faults", "minor-faults", "major-faults"};
    dk_thread *t = open_names(s, names, 3);
    CHECK_OK(dk_thread_start(t));
    uint64_t a[3], b[3];
    const size_t pages = 4000;
    CHECK_OK(dk_thread_sample(t, a));
    void *p = touch_pages(pages);
    CHECK_OK(dk_thread_sample(t, b));
    uint64_t faults = b[0] - a[0];
    if (faults < pages * 95 / 100 || faults > pages * 105 / 100)
        DKT_FAIL("%llu page faults for %zu fresh pages", (unsigned long long)faults, pages);
    CHECK_U64(b[1] - a[1] + (b[2] - a[2]), ==, faults);
    munmap(p, pages * (size_t)sysconf(_SC_PAGESIZE));
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(many_software_events_in_one_group)
{
    dk_sampler *s = open_linux();
    const char *names[] = {"task-clock",     "cpu-clock",    "page-faults",  "context-switches",
                           "cpu-migrations", "minor-faults", "major-faults", "alignment-faults"};
    dk_thread *t = open_names(s, names, 8);
    CHECK_OK(dk_thread_start(t));
    uint64_t a[8], b[8];
    dk_reading info;
    CHECK_OK(dk_thread_read(t, a, &info));
    CHECK(info.counted);
    CHECK(!info.multiplexed);
    void *p = touch_pages(200);
    dkt_burn_cpu_ms(5);
    CHECK_OK(dk_thread_read(t, b, &info));
    CHECK_U64(b[0], >, a[0]);
    CHECK_U64(b[1], >, a[1]);
    CHECK_U64(b[2] - a[2], >=, 190);
    CHECK_U64(info.time_enabled, >, 0);
    CHECK_U64(info.time_running, ==, info.time_enabled);
    munmap(p, 200 * (size_t)sysconf(_SC_PAGESIZE));
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(start_stop_sample_semantics)
{
    dk_sampler *s = open_linux();
    const char *names[] = {"task-clock"};
    dk_thread *t = open_names(s, names, 1);
    uint64_t v[4];
    CHECK_ERR(dk_thread_sample(t, v), DK_ESTATE);
    CHECK_OK(dk_thread_start(t));
    CHECK_OK(dk_thread_start(t));
    CHECK(dk_thread_is_running(t));
    CHECK_OK(dk_thread_sample(t, &v[0]));
    CHECK_OK(dk_thread_sample(t, &v[1]));
    CHECK_U64(v[1], >=, v[0]);
    CHECK_OK(dk_thread_stop(t));
    CHECK_OK(dk_thread_stop(t));
    CHECK_ERR(dk_thread_sample(t, v), DK_ESTATE);
    dkt_burn_cpu_ms(20); /* not counted */
    CHECK_OK(dk_thread_start(t));
    CHECK_OK(dk_thread_sample(t, &v[2]));
    CHECK_U64(v[2] - v[1], <, 10000000);
    dkt_burn_cpu_ms(5);
    CHECK_OK(dk_thread_sample(t, &v[3]));
    CHECK_U64(v[3], >, v[2]);
    dk_thread_close(t); /* closes while running */
    dk_sampler_close(s);
}

static dk_thread *foreign;
static int foreign_rc[3];

static void *use_foreign(void *arg)
{
    (void)arg;
    uint64_t v;
    foreign_rc[0] = dk_thread_start(foreign);
    foreign_rc[1] = dk_thread_sample(foreign, &v);
    foreign_rc[2] = dk_thread_stop(foreign);
    return NULL;
}

TEST_CASE(thread_sampler_belongs_to_its_thread)
{
    dk_sampler *s = open_linux();
    const char *names[] = {"task-clock"};
    foreign = open_names(s, names, 1);
    CHECK_OK(dk_thread_start(foreign));
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, use_foreign, NULL), ==, 0);
    pthread_join(th, NULL);
    for (int i = 0; i < 3; i++)
        CHECK_INT(foreign_rc[i], ==, DK_ETHREAD);
    dk_thread_close(foreign);
    dk_sampler_close(s);
}

TEST_CASE(hardware_events_without_a_pmu)
{
    dk_sampler *s = open_linux();
    const char *names[] = {"task-clock", "instructions"};
    dk_thread *t = NULL;
    int rc = dk_thread_open_names(s, names, 2, &t);
    if (have_cpu_pmu()) {
        CHECK_OK(rc);
        dk_thread_close(t);
        dk_sampler_close(s);
        SKIP("this machine has a hardware PMU; the no-PMU path was not exercised");
    }
    CHECK_ERR(rc, DK_EUNAVAILABLE);
    CHECK(t == NULL);
    CHECK_CONTAINS(dk_last_error(), "instructions");
    CHECK_CONTAINS(dk_last_error(), "no hardware PMU is visible");
    CHECK_INT(dk_last_os_error(), ==, ENOENT);
    /* The same through the enum and the portable names. */
    const dk_event ev = DK_EVENT_FIXED_INSTRUCTIONS;
    CHECK_ERR(dk_thread_open(s, &ev, 1, &t), DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "instructions");
    const char *portable[] = {"cycles",     "branches",    "branch-misses", "l1d-load-misses",
                              "l1i-misses", "dtlb-misses", "llc-misses"};
    const char *perf_names[] = {"cpu-cycles",
                                "branch-instructions",
                                "branch-misses",
                                "L1-dcache-load-misses",
                                "L1-icache-load-misses",
                                "dTLB-load-misses",
                                "LLC-load-misses"};
    for (size_t i = 0; i < 7; i++) {
        CHECK_ERR(dk_thread_open_names(s, &portable[i], 1, &t), DK_EUNAVAILABLE);
        CHECK_CONTAINS(dk_last_error(), perf_names[i]);
    }
    dk_sampler_close(s);
}

TEST_CASE(apple_events_are_not_perf_events)
{
    dk_sampler *s = open_linux();
    const dk_event ev = DK_EVENT_INST_BRANCH;
    dk_thread *t = NULL;
    CHECK_ERR(dk_thread_open(s, &ev, 1, &t), DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), "Apple PMU event");
    const char *name = "INST_BRANCH";
    CHECK_ERR(dk_thread_open_names(s, &name, 1, &t), DK_ENOEVENT);
    const char *typo = "task-clok";
    CHECK_ERR(dk_thread_open_names(s, &typo, 1, &t), DK_ENOEVENT);
    CHECK_CONTAINS(dk_last_error(), "task-clok");
    dk_sampler_close(s);
}

TEST_CASE(sysfs_and_raw_syntax)
{
    dk_sampler *s = open_linux();
    dk_thread *t = NULL;
    if (access("/sys/bus/event_source/devices/msr/events/tsc", F_OK) == 0) {
        /* The msr PMU's tsc event, by sysfs name and by its definition. */
        const char *names[] = {"msr/tsc/", "msr/event=0x00/", "task-clock"};
        t = open_names(s, names, 3);
        CHECK_OK(dk_thread_start(t));
        uint64_t a[3], b[3];
        CHECK_OK(dk_thread_sample(t, a));
        dkt_burn_cpu_ms(5);
        CHECK_OK(dk_thread_sample(t, b));
        CHECK_U64(b[0], >, a[0]);
        CHECK_U64(b[1], >, a[1]);
        CHECK_STR(dk_thread_event_name(t, 1), "msr/event=0x00/");
        dk_thread_close(t);
        const dk_database_event *tsc = dk_database_find(dk_sampler_database(s), "msr/tsc/");
        CHECK(tsc != NULL && tsc->supported);
        CHECK_STR(tsc->source, "msr");
    }
    const char *bad[] = {"nopmu/event=0x1/", "software/bogus=1/", "software/config=zz/",
                         "software/config=1/x"};
    int want[] = {DK_ENOEVENT, DK_ENOEVENT, DK_EINVAL, DK_EINVAL};
    const char *says[] = {"no PMU called nopmu", "no format term or event called bogus",
                          "not a number", "unknown modifier"};
    for (int i = 0; i < 4; i++) {
        CHECK_ERR(dk_thread_open_names(s, &bad[i], 1, &t), want[i]);
        CHECK_CONTAINS(dk_last_error(), says[i]);
    }
    /* config= works on any PMU: software event 0 is cpu-clock. */
    const char *sw[] = {"software/config=0/", "cpu-clock"};
    t = open_names(s, sw, 2);
    CHECK_OK(dk_thread_start(t));
    uint64_t v[2];
    CHECK_OK(dk_thread_sample(t, v));
    dk_thread_close(t);
    /* A raw event is a hardware event. */
    const char *raw = "r00c0";
    int rc = dk_thread_open_names(s, &raw, 1, &t);
    if (have_cpu_pmu())
        dk_thread_close(t);
    else
        CHECK_ERR(rc, DK_EUNAVAILABLE);
    const char *too_long = "r11112222333344445";
    CHECK_ERR(dk_thread_open_names(s, &too_long, 1, &t), DK_EINVAL);
    dk_sampler_close(s);
}

TEST_CASE(too_many_open_files)
{
    dk_sampler *s = open_linux();
    struct rlimit old, low;
    CHECK_INT(getrlimit(RLIMIT_NOFILE, &old), ==, 0);
    /* Leave room for the first events only. */
    int probe = dup(0);
    CHECK(probe >= 0);
    close(probe);
    low = old;
    low.rlim_cur = (rlim_t)probe + 2;
    CHECK_INT(setrlimit(RLIMIT_NOFILE, &low), ==, 0);
    const char *names[] = {"task-clock", "page-faults", "context-switches", "cpu-migrations"};
    dk_thread *t = NULL;
    int rc = dk_thread_open_names(s, names, 4, &t);
    setrlimit(RLIMIT_NOFILE, &old);
    CHECK_ERR(rc, DK_ETOOMANY);
    CHECK_INT(dk_last_os_error(), ==, EMFILE);
    CHECK(t == NULL);
    /* Nothing leaked: the same now works. */
    t = open_names(s, names, 4);
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(unprivileged_user)
{
    if (geteuid() != 0)
        SKIP("needs root to switch to an unprivileged user");
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        dk_sampler *s = NULL;
        int rc = dk_sampler_open(&s, NULL);
        const char *names[] = {"task-clock", "page-faults"};
        dk_thread *t = NULL;
        uint64_t a[2], b[2];
        if (rc == 0)
            rc = dk_thread_open_names(s, names, 2, &t);
        if (rc == DK_EPERM) /* refused: it must say that perf_event_paranoid is why */
            _exit(strstr(dk_last_error(), "perf_event_paranoid") != NULL ? 5 : 6);
        if (rc != 0)
            _exit(4);
        if (dk_thread_start(t) != 0 || dk_thread_sample(t, a) != 0)
            _exit(7);
        dkt_burn_cpu_ms(5);
        if (dk_thread_sample(t, b) != 0 || b[0] <= a[0])
            _exit(8);
        dk_thread_close(t);
        dk_sampler_close(s);
        _exit(0);
    }
    int status = 0;
    CHECK_INT(waitpid(pid, &status, 0), ==, pid);
    CHECK(WIFEXITED(status));
    int code = WEXITSTATUS(status);
    /* kernel.perf_event_paranoid 3 and up (Debian's default) forbids every
     * unprivileged perf_event_open: then the refusal, explained, is right. */
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
    int paranoid = 2;
    CHECK(f != NULL && fscanf(f, "%d", &paranoid) == 1);
    fclose(f);
    CHECK_INT(code, ==, paranoid >= 3 ? 5 : 0);
}

TEST_CASE(user_only_counting)
{
    dk_sampler *s = NULL;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.flags = DK_SAMPLER_USER_ONLY;
    CHECK_OK(dk_sampler_open(&s, &o));
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_OK(dk_sampler_caps(s, &caps));
    CHECK(caps.user_only); /* the flag says so whatever the privileges */
    const char *names[] = {"task-clock", "page-faults"};
    dk_thread *t = open_names(s, names, 2);
    CHECK_OK(dk_thread_start(t));
    uint64_t a[2], b[2];
    CHECK_OK(dk_thread_sample(t, a));
    void *p = touch_pages(100);
    CHECK_OK(dk_thread_sample(t, b));
    CHECK_U64(b[1] - a[1], >=, 95); /* faults are raised from user mode */
    munmap(p, 100 * (size_t)sysconf(_SC_PAGESIZE));
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(no_process_totals_on_linux)
{
    dk_sampler *s = open_linux();
    uint64_t i, c;
    CHECK_ERR(dk_process_cpi(s, 0, &i, &c), DK_ENOTSUP);
    CHECK_CONTAINS(dk_last_error(), "perf_event");
    /* pid 0 is this process, not another one; the error says what to use. */
    CHECK(strstr(dk_last_error(), "another process") == NULL);
    CHECK_CONTAINS(dk_last_error(), "dk_group_open");
    const char *name = "task-clock";
    dk_thread *t = open_names(s, &name, 1);
    uint64_t v[2];
    CHECK_ERR(dk_thread_sample_perf_levels(t, v, 2), DK_ENOTSUP);
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(resolving_raw_events_again_keeps_memory_flat)
{
    /* 32 raw and pmu/.../ specs opened, read and closed many times on one
     * sampler: each distinct spec is kept once. */
    dk_sampler *s = open_linux();
    char specs[DK_MAX_EVENTS][32];
    const char *names[DK_MAX_EVENTS];
    for (int i = 0; i < DK_MAX_EVENTS; i++) {
        if (i % 2 == 0)
            snprintf(specs[i], sizeof specs[i], "r%04x", 0x3c + i);
        else
            snprintf(specs[i], sizeof specs[i], "software/config=%d/", i % 10);
        names[i] = specs[i];
    }
    const char *sw[] = {"software/config=0/", "software/config=1/", "r00c0"};
    for (int round = 0; round < 200; round++) {
        dk_thread *t = NULL;
        /* Raw events need a PMU; the resolution happens either way. */
        if (dk_thread_open_names(s, names, DK_MAX_EVENTS, &t) == 0)
            dk_thread_close(t);
        dk_group *g = NULL;
        if (dk_group_open(s, DK_SCOPE_PROCESS, 0, names, DK_MAX_EVENTS, DK_GROUP_PARTIAL, &g) == 0)
            dk_group_close(g);
        if (dk_thread_open_names(s, sw, 2, &t) == 0)
            dk_thread_close(t);
        const dk_database_event *ev = NULL;
        CHECK_OK(dk_sampler_resolve(s, sw[2], &ev));
    }
    /* 16 raw specs, software/config=N/ for N = 0, 1, 3, 5, 7, 9, and r00c0. */
    CHECK_INT(dk__pe_dynamic_count(s), ==, 16 + 6 + 1);
    dk_sampler_close(s);
}

/* A sampling reports the rate each event samples at: the backend's
 * default (the caps' sample_freq) for an event given none, else what was
 * asked. cpu-clock samples on any machine. */
TEST_CASE(sampling_reports_the_rate_it_used)
{
    dk_sampler *s = open_linux();
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_OK(dk_sampler_caps(s, &caps));
    dk_sampling_event e[3] = {{"cpu-clock", 0, 0}, {"cpu-clock", 250000, 0}, {"task-clock", 0, 99}};
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, e, 3, NULL, &p);
    if (rc == DK_EPERM)
        SKIP("sampling is refused here: %s", dk_last_error());
    CHECK_OK(rc);
    uint64_t period = 1, freq = 1;
    CHECK_OK(dk_sampling_event_rate(p, 0, &period, &freq));
    CHECK_U64(period, ==, 0);
    CHECK_U64(freq, ==, caps.sample_freq);
    CHECK_OK(dk_sampling_event_rate(p, 1, &period, &freq));
    CHECK_U64(period, ==, 250000);
    CHECK_U64(freq, ==, 0);
    CHECK_OK(dk_sampling_event_rate(p, 2, NULL, &freq));
    CHECK_U64(freq, ==, 99);
    CHECK_ERR(dk_sampling_event_rate(p, 3, &period, &freq), DK_EINVAL);
    CHECK_ERR(dk_sampling_event_rate(NULL, 0, &period, &freq), DK_EINVAL);
    dk_sampling_close(p);
    dk_sampler_close(s);
}

TEST_CASE(privilege_mode_modifiers)
{
    /* page-faults of user-mode touches are taken in user mode: :u counts
     * them, :k leaves them out. */
    dk_sampler *s = open_linux();
    const char *names[] = {"page-faults:u", "page-faults:k", "faults:uk", "software/config=2/:u"};
    dk_thread *t = open_names(s, names, 4);
    CHECK_STR(dk_thread_event_name(t, 0), "page-faults:u");
    CHECK_STR(dk_thread_event_name(t, 1), "page-faults:k");
    CHECK_STR(dk_thread_event_name(t, 2), "page-faults:uk");
    CHECK_STR(dk_thread_event_name(t, 3), "software/config=2/:u");
    CHECK_OK(dk_thread_start(t));
    uint64_t a[4], b[4];
    const size_t pages = 2000;
    CHECK_OK(dk_thread_sample(t, a));
    void *p = touch_pages(pages);
    CHECK_OK(dk_thread_sample(t, b));
    CHECK_U64(b[0] - a[0], >=, pages * 95 / 100);
    CHECK_U64(b[1] - a[1], <, pages / 10);
    CHECK_U64(b[2] - a[2], >=, pages * 95 / 100);
    CHECK_U64(b[3] - a[3], >=, pages * 95 / 100);
    munmap(p, pages * (size_t)sysconf(_SC_PAGESIZE));
    dk_thread_close(t);

    const char *group[] = {"task-clock:u", "page-faults:k"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, 0, group, 2, 0, &g));
    CHECK_STR(dk_group_event_name(g, 0), "task-clock:u");
    CHECK_STR(dk_group_event_name(g, 1), "page-faults:k");
    dk_group_close(g);

    const char *unknown = "task-clock:ux";
    CHECK_ERR(dk_thread_open_names(s, &unknown, 1, &t), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "task-clock:ux");
    CHECK_CONTAINS(dk_last_error(), "'x'");
    CHECK_ERR(dk_group_open(s, DK_SCOPE_PROCESS, 0, &unknown, 1, 0, &g), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "'x'");
    const char *empty = "task-clock:";
    CHECK_ERR(dk_thread_open_names(s, &empty, 1, &t), DK_EINVAL);
    const char *none = ":u";
    CHECK_ERR(dk_thread_open_names(s, &none, 1, &t), DK_EINVAL);
    dk_sampler_close(s);

    /* A user-only sampler cannot count kernel mode. */
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.flags = DK_SAMPLER_USER_ONLY;
    CHECK_OK(dk_sampler_open(&s, &o));
    const char *kernel = "task-clock:k";
    CHECK_ERR(dk_thread_open_names(s, &kernel, 1, &t), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "DK_SAMPLER_USER_ONLY");
    dk_sampler_close(s);
}

/* The event grammar (dkperf.h) as the core and a group use it. */
TEST_CASE(the_core_reads_names_with_the_grammar)
{
    dk_sampler *s = open_linux();
    const dk_database_event *ev = NULL, *plain = NULL;
    CHECK_OK(dk_sampler_resolve(s, "task-clock", &plain));
    CHECK_OK(dk_sampler_resolve(s, "task-clock:u", &ev));
    CHECK(ev == plain);
    CHECK_ERR(dk_sampler_resolve(s, "task-clock:q", &ev), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "at position 12: unknown modifier 'q'");
    CHECK_ERR(dk_sampler_resolve(s, "task-clock:h", &ev), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "the h modifier");
    CHECK_ERR(dk_sampler_resolve(s, "task-clock/1000", &ev), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "period or frequency");
    /* A modified pmu event keeps its spelling as its name. */
    const char *pmu = "software/config=1/u"; /* task-clock */
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open_names(s, &pmu, 1, &t));
    CHECK_STR(dk_thread_event_name(t, 0), "software/config=1/u");
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(a_group_reports_the_event_of_each_member)
{
    dk_sampler *s = open_linux();
    const char *names[] = {"task-clock:u", "page-faults", "cpu-clock"};
    dk_group *g = NULL;
    CHECK_OK(dk_group_open(s, DK_SCOPE_PROCESS, 0, names, 3, DK_GROUP_PARTIAL, &g));
    for (size_t i = 0; i < 3; i++) {
        const dk_database_event *want = NULL;
        char base[32];
        snprintf(base, sizeof base, "%.*s", (int)strcspn(names[i], ":"), names[i]);
        CHECK_OK(dk_sampler_resolve(s, base, &want));
        CHECK(dk_group_event(g, i) == want);
    }
    CHECK(dk_group_event(g, 3) == NULL);
    CHECK(dk_group_event(NULL, 0) == NULL);
    dk_group_close(g);
    dk_sampler_close(s);
}
TEST_MAIN()
