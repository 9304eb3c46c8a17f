/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_api.c - the public API (dkperf.h) against the simulated frameworks of
 * one chip (DKPERF_SIM_CPU): the behaviours of the seed's own suite and
 * those libdkperf adds.
 */
#include <pthread.h>
#include <string.h>

#include "api.h"
#include "core/core.h"
#include "events/tables.h"

static const char *branch_event(const dk_sampler *s)
{
    return is_intel(s) ? "BR_INST_RETIRED.ALL_BRANCHES" : "INST_BRANCH";
}

TEST_CASE(sampler_metadata)
{
    dk_sampler *s = open_sampler();
    const char *chip = getenv("DKPERF_SIM_CPU");
    CHECK_STR(dk_sampler_backend(s), "kperf");
    CHECK_INT(dk_sampler_cpu(s), ==, dk__cpu_from_db_name(chip));
    const dk_database *db = dk_sampler_database(s);
    CHECK_STR(dk_database_name(db), chip);
    CHECK(strncmp(dk_database_cpu_id(db), "cpu_", 4) == 0);
    CHECK(strlen(dk_database_marketing_name(db)) > 0);
    CHECK_INT(dk_database_arch(db), ==, is_intel(s) ? DK_ARCH_X86_64 : DK_ARCH_ARM64);
    CHECK_INT(dk_database_counter_count(db, DK_COUNTERS_FIXED), ==, is_intel(s) ? 3 : 2);
    CHECK_INT(dk_database_counter_count(db, DK_COUNTERS_CONFIGURABLE), ==, is_intel(s) ? 4 : 8);
    CHECK_INT(dk_database_counter_count(db, DK_COUNTERS_POWER), ==, is_intel(s) ? 0 : 3);
    CHECK_INT(dk_database_counter_count(db, DK_COUNTERS_FIXED | DK_COUNTERS_CONFIGURABLE), ==,
              is_intel(s) ? 7 : 10);
    if (!is_intel(s))
        CHECK_INT(dk_database_event_count(db), ==, dk__chip_by_cpu(dk_sampler_cpu(s))->event_count);
    /* Sorted by name, each with a description. */
    for (size_t i = 0; i < dk_database_event_count(db); i++) {
        const dk_database_event *ev = dk_database_event_at(db, i);
        CHECK(ev->description != NULL);
        if (i > 0)
            CHECK(strcmp(dk_database_event_at(db, i - 1)->name, ev->name) < 0);
    }
    CHECK(dk_database_event_at(db, dk_database_event_count(db)) == NULL);
    /* Fixed events and their aliases. */
    CHECK_INT(dk_database_fixed_count(db), ==, is_intel(s) ? 3 : 2);
    const dk_database_event *cycles = dk_database_find(db, "Cycles");
    const dk_database_event *insts = dk_database_find(db, "Instructions");
    CHECK(cycles != NULL && cycles->fixed && insts != NULL && insts->fixed);
    CHECK(dk_database_fixed_event(db, 0) == (is_intel(s) ? insts : cycles));
    CHECK(dk_database_fixed_event(db, 1) == (is_intel(s) ? cycles : insts));
    CHECK(dk_database_fixed_event(db, 2) == NULL);
    CHECK(insts->fallback != NULL && dk_database_find(db, insts->fallback) != NULL);
    CHECK(dk_database_find(db, cycles->name) == cycles);
    CHECK(dk_database_find(db, "cycles") == NULL); /* exact */
    dk_sampler_close(s);
}

TEST_CASE(database_partial_match)
{
    dk_sampler *s = open_sampler();
    const dk_database *db = dk_sampler_database(s);
    const dk_database_event *m[64];
    size_t all = dk_database_match(db, "", NULL, 0);
    CHECK_INT(all, ==, dk_database_event_count(db));
    const char *part = is_intel(s) ? "br_" : "inst_br";
    size_t n = dk_database_match(db, part, m, 64);
    CHECK_INT(n, >=, 2);
    for (size_t i = 0; i < n; i++)
        CHECK(dk__strcasestr(m[i]->name, part));
    /* Aliases match too, and max bounds what is stored, not what is counted. */
    CHECK_INT(dk_database_match(db, "CYCLE", m, 1), >=, 1);
    CHECK_INT(dk_database_match(db, "no-such-thing", m, 64), ==, 0);
    dk_sampler_close(s);
}

TEST_CASE(fixed_counters_grow)
{
    dk_sampler *s = open_sampler();
    const dk_event ev[] = {DK_EVENT_FIXED_INSTRUCTIONS, DK_EVENT_FIXED_CYCLES};
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, ev, 2, &t));
    CHECK_INT(dk_thread_event_count(t), ==, 2);
    CHECK(!dk_thread_is_running(t));
    CHECK_OK(dk_thread_start(t));
    CHECK(dk_thread_is_running(t));
    uint64_t a[2], b[2];
    uint64_t t0 = dkt_thread_cpu_ns();
    CHECK_OK(dk_thread_sample(t, a));
    uint64_t t1 = dkt_thread_cpu_ns();
    dkt_burn_cpu_ms(20);
    uint64_t t2 = dkt_thread_cpu_ns();
    CHECK_OK(dk_thread_sample(t, b));
    uint64_t t3 = dkt_thread_cpu_ns();
    CHECK_U64(b[0], >, a[0]);
    CHECK_U64(b[1], >, a[1]);
    /* The sim runs at 3 GHz and an IPC of 2.5, over this thread's CPU time
     * between the two reads (at least [t1, t2], at most [t0, t3]). */
    double ipc = (double)(b[0] - a[0]) / (double)(b[1] - a[1]);
    CHECK(ipc > 2.4 && ipc < 2.6);
    CHECK_U64(b[1] - a[1], >=, 3 * (t2 - t1) * 95 / 100);
    CHECK_U64(b[1] - a[1], <=, 3 * (t3 - t0) * 105 / 100);
    CHECK_OK(dk_thread_stop(t));
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(configurable_events_grow)
{
    dk_sampler *s = open_sampler();
    const char *names[] = {"cycles", "branches", "branch-misses", branch_event(s)};
    dk_thread *t = open_names(s, names, 4);
    CHECK_STR(dk_thread_event_name(t, 3), branch_event(s));
    CHECK_STR(dk_thread_event_name(t, 1), branch_event(s));
    CHECK(dk_thread_event_name(t, 4) == NULL);
    CHECK_OK(dk_thread_start(t));
    uint64_t a[4], b[4];
    CHECK_OK(dk_thread_sample(t, a));
    dkt_burn_cpu_ms(10);
    CHECK_OK(dk_thread_sample(t, b));
    for (int i = 0; i < 4; i++)
        CHECK_U64(b[i], >, a[i]);
    /* The same event twice counts the same. */
    uint64_t d1 = b[1] - a[1], d3 = b[3] - a[3];
    CHECK_U64(d1 > d3 ? d1 - d3 : d3 - d1, <, d1 / 20 + 1);
    dk_thread_close(t);
    dk_sampler_close(s);
}

/* A release kernel refuses selectors off its board's allow-list with
 * EPERM although the caller is root: the error names the event and the
 * allow-list, not privileges. */
TEST_CASE(allow_list_refusal_names_the_event)
{
    const char *policy = getenv("DKPERF_SIM_SELECTOR_POLICY");
    if (policy != NULL && strcmp(policy, "unchecked") == 0)
        SKIP("this simulated kernel allows every selector");
    dk_sampler *s = open_sampler();
    if (is_intel(s)) {
        dk_sampler_close(s);
        SKIP("x86 kernels have no selector allow-list");
    }
    const dk__chip *chip = dk__chip_by_cpu(dk_sampler_cpu(s));
    size_t refused = 0;
    for (size_t i = 0; i < chip->event_count; i++) {
        dk_event ev = chip->events[i].event;
        dk_thread *t = NULL;
        int rc = dk_thread_open(s, &ev, 1, &t);
        if (rc == 0) {
            dk_thread_close(t);
            continue;
        }
        refused++;
        CHECK_INT(rc, ==, DK_EUNAVAILABLE);
        CHECK(strstr(dk_last_error(), chip->events[i].name) != NULL);
        CHECK(strstr(dk_last_error(), "allow-list") != NULL);
        CHECK(strstr(dk_last_error(), "root") == NULL);
    }
    /* Every arm64 table lists events that release kernels do not allow. */
    CHECK(refused > 0);
    dk_sampler_close(s);
}

TEST_CASE(every_dk_event_of_the_chip_counts)
{
    dk_sampler *s = open_sampler();
    if (is_intel(s))
        SKIP("Intel events come from the database, not the dk_event tables");
    const dk__chip *chip = dk__chip_by_cpu(dk_sampler_cpu(s));
    for (size_t i = 0; i < chip->event_count; i++) {
        dk_event ev = chip->events[i].event;
        dk_thread *t = NULL;
        CHECK_OK(dk_thread_open(s, &ev, 1, &t));
        CHECK_STR(dk_thread_event_name(t, 0), chip->events[i].name);
        CHECK_OK(dk_thread_start(t));
        uint64_t a, b;
        CHECK_OK(dk_thread_sample(t, &a));
        dkt_burn_cpu_ms(1);
        CHECK_OK(dk_thread_sample(t, &b));
        if (b <= a)
            DKT_FAIL("%s did not count", chip->events[i].name);
        dk_thread_close(t);
    }
    dk_sampler_close(s);
}

TEST_CASE(portable_names_resolve_per_chip)
{
    dk_sampler *s = open_sampler();
    for (size_t i = 0; dk_portable_name(i) != NULL; i++) {
        const char *name = dk_portable_name(i);
        CHECK(dk_portable_description(i) != NULL);
        dk_thread *t = NULL;
        int rc = dk_thread_open_names(s, &name, 1, &t);
        bool absent = is_intel(s)
                          ? (strcmp(name, "l1i-misses") == 0 || strcmp(name, "dtlb-misses") == 0 ||
                             (strcmp(name, "l1d-load-misses") == 0 &&
                              strcmp(getenv("DKPERF_SIM_CPU"), "haswell") == 0))
                          : strcmp(name, "llc-misses") == 0;
        if (absent) {
            CHECK_ERR(rc, DK_EUNAVAILABLE);
            CHECK_CONTAINS(dk_last_error(), name);
            CHECK_CONTAINS(dk_last_error(), "no counterpart");
            continue;
        }
        if (rc != 0)
            DKT_FAIL("%s: %s", name, dk_last_error());
        dk_thread_close(t);
    }
    CHECK(dk_portable_name(100) == NULL);
    /* Upper case works too; the portable name and the alias are one event. */
    const char *upper[] = {"INSTRUCTIONS", "Cycles"}, *lower = "cycles";
    dk_thread *t = open_names(s, upper, 2), *u = open_names(s, &lower, 1);
    CHECK_STR(dk_thread_event_name(t, 0), is_intel(s) ? "INST_RETIRED.ANY" : "FIXED_INSTRUCTIONS");
    CHECK_STR(dk_thread_event_name(t, 1), dk_thread_event_name(u, 0));
    dk_thread_close(u);
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(native_names_match_case_insensitively)
{
    dk_sampler *s = open_sampler();
    const char *lower = is_intel(s) ? "br_inst_retired.all_branches" : "inst_branch";
    dk_thread *t = open_names(s, &lower, 1);
    CHECK_STR(dk_thread_event_name(t, 0), branch_event(s));
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(start_and_stop_are_idempotent)
{
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    CHECK_OK(dk_thread_start(t));
    CHECK_OK(dk_thread_start(t));
    uint64_t v;
    CHECK_OK(dk_thread_sample(t, &v));
    CHECK_OK(dk_thread_stop(t));
    CHECK_OK(dk_thread_stop(t));
    CHECK(!dk_thread_is_running(t));
    /* A double start took one reference: one stop turned counting off. */
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(sample_before_start_is_a_state_error)
{
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    uint64_t v;
    CHECK_ERR(dk_thread_sample(t, &v), DK_ESTATE);
    CHECK_CONTAINS(dk_last_error(), "not running");
    CHECK_OK(dk_thread_start(t));
    CHECK_OK(dk_thread_stop(t));
    CHECK_ERR(dk_thread_sample(t, &v), DK_ESTATE);
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(counters_are_monotonic_and_resume_after_stop)
{
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_INSTRUCTIONS;
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    CHECK_OK(dk_thread_start(t));
    uint64_t v[4];
    for (int i = 0; i < 3; i++)
        CHECK_OK(dk_thread_sample(t, &v[i]));
    CHECK_U64(v[1], >=, v[0]);
    CHECK_U64(v[2], >=, v[1]);
    /* Work while stopped is not counted: the delta covers at most the
     * thread's own time in stop, start and sample (slow under valgrind),
     * never the 20 ms burnt in between. */
    uint64_t c0 = dkt_thread_cpu_ns();
    CHECK_OK(dk_thread_stop(t));
    uint64_t c1 = dkt_thread_cpu_ns();
    dkt_burn_cpu_ms(20);
    uint64_t c2 = dkt_thread_cpu_ns();
    CHECK_OK(dk_thread_start(t));
    CHECK_OK(dk_thread_sample(t, &v[3]));
    uint64_t c3 = dkt_thread_cpu_ns();
    uint64_t own_ns = (c1 - c0) + (c3 - c2) + 1000000; /* + 1 ms for the calls around */
    CHECK_U64(v[3] - v[2], <, 7500u * 1000 * 10);      /* half of the 20 ms burnt */
    CHECK_U64(v[3] - v[2], <=, own_ns * 15 / 2);       /* 7.5 simulated instructions a ns */
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(sequential_thread_samplers)
{
    dk_sampler *s = open_sampler();
    for (int round = 0; round < 3; round++) {
        const dk_event ev = round % 2 ? DK_EVENT_FIXED_CYCLES : DK_EVENT_FIXED_INSTRUCTIONS;
        const char *branch = branch_event(s);
        dk_thread *t = NULL, *u = NULL;
        CHECK_OK(dk_thread_open(s, &ev, 1, &t));
        u = open_names(s, &branch, 1);
        CHECK_OK(dk_thread_start(t));
        CHECK_OK(dk_thread_start(u));
        uint64_t a, b;
        CHECK_OK(dk_thread_sample(u, &a));
        dkt_burn_cpu_ms(2);
        CHECK_OK(dk_thread_sample(u, &b));
        CHECK_U64(b, >, a);
        CHECK_OK(dk_thread_stop(t));
        /* u still counts after t stopped: counting is shared, not per sampler. */
        CHECK_INT(raw_kperf()->kpc_get_counting(), !=, 0);
        CHECK_OK(dk_thread_sample(u, &a));
        dkt_burn_cpu_ms(2);
        CHECK_OK(dk_thread_sample(u, &b));
        CHECK_U64(b, >, a);
        dk_thread_close(u);
        dk_thread_close(t);
    }
    dk_sampler_close(s);
}

TEST_CASE(closing_a_running_thread_sampler_stops_counting)
{
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    CHECK_OK(dk_thread_start(t));
    CHECK_INT(raw_kperf()->kpc_get_counting(), !=, 0);
    CHECK_INT(raw_kperf()->kpc_get_thread_counting(), !=, 0);
    dk_thread_close(t);
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
    CHECK_INT(raw_kperf()->kpc_get_thread_counting(), ==, 0);
    /* And a new one works. */
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    CHECK(!dk_thread_is_running(t));
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(force_all_is_taken_and_restored)
{
    CHECK_INT(raw_force_all(), ==, 0);
    dk_sampler *s = open_sampler();
    CHECK_INT(raw_force_all(), ==, 1);
    dk_sampler_close(s);
    CHECK_INT(raw_force_all(), ==, 0);
}

TEST_CASE(release_gives_the_counters_back)
{
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_INSTRUCTIONS;
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    CHECK_OK(dk_thread_start(t));
    CHECK_ERR(dk_sampler_release(s), DK_ESTATE);
    CHECK_CONTAINS(dk_last_error(), "still running");
    CHECK_INT(raw_force_all(), ==, 1);
    CHECK_OK(dk_thread_stop(t));
    CHECK_OK(dk_sampler_release(s));
    CHECK_INT(raw_force_all(), ==, 0);
    CHECK_OK(dk_sampler_release(s)); /* idempotent */
    CHECK_ERR(dk_thread_start(t), DK_ESTATE);
    dk_thread *u = NULL;
    CHECK_ERR(dk_thread_open(s, &ev, 1, &u), DK_ESTATE);
    CHECK(u == NULL);
    /* The database stays readable. */
    CHECK(dk_database_find(dk_sampler_database(s), "Cycles") != NULL);
    dk_thread_close(t);
    dk_sampler_close(s);
    CHECK_INT(raw_force_all(), ==, 0);
}

TEST_CASE(several_samplers_share_the_counters)
{
    dk_sampler *a = open_sampler(), *b = open_sampler();
    CHECK_INT(raw_force_all(), ==, 1);
    dk_sampler_close(a);
    CHECK_INT(raw_force_all(), ==, 1); /* b still holds them */
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(b, &ev, 1, &t));
    CHECK_OK(dk_thread_start(t));
    uint64_t v;
    CHECK_OK(dk_thread_sample(t, &v));
    dk_thread_close(t);
    dk_sampler_close(b);
    CHECK_INT(raw_force_all(), ==, 0);
    /* And they can be taken again. */
    a = open_sampler();
    CHECK_INT(raw_force_all(), ==, 1);
    dk_sampler_close(a);
    CHECK_INT(raw_force_all(), ==, 0);
}

/* "R" and "R/" name the same frameworks: one set of counters, one owner. */
TEST_CASE(one_arbiter_for_two_spellings_of_a_root)
{
    const char *root = getenv("DKPERF_FRAMEWORK_ROOT");
    CHECK(root != NULL && *root != '\0');
    char slashed[4096];
    snprintf(slashed, sizeof slashed, "%s//", root);
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.backend = DK_BACKEND_KPERF;
    dk_sampler *a = NULL, *b = NULL;
    o.framework_root = root;
    CHECK_OK(dk_sampler_open(&a, &o));
    o.framework_root = slashed;
    CHECK_OK(dk_sampler_open(&b, &o));
    CHECK_INT(raw_force_all(), ==, 1);
    if (!is_intel(a)) {
        /* Counters programmed through one are seen by the other. */
        const char *one = "INST_INT_ST", *other = "INST_INT_ALU";
        dk_thread *t = open_names(a, &one, 1), *u = NULL;
        CHECK_ERR(dk_thread_open_names(b, &other, 1, &u), DK_ECONFLICT);
        dk_thread_close(t);
    }
    /* a took them first (it saw 0); closing it must not give them back while
     * b holds them, as it would if each had its own owner. */
    dk_sampler_close(a);
    CHECK_INT(raw_force_all(), ==, 1);
    dk_sampler_close(b);
    CHECK_INT(raw_force_all(), ==, 0);
}

TEST_CASE(closing_the_sampler_first_is_safe)
{
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    dk_thread *t = NULL, *idle = NULL;
    CHECK_OK(dk_thread_open(s, &ev, 1, &t));
    CHECK_OK(dk_thread_open(s, &ev, 1, &idle));
    CHECK_OK(dk_thread_start(t));
    dk_sampler_close(s);
    /* The running one keeps counting until it stops... */
    uint64_t a, b;
    CHECK_OK(dk_thread_sample(t, &a));
    dkt_burn_cpu_ms(2);
    CHECK_OK(dk_thread_sample(t, &b));
    CHECK_U64(b, >, a);
    CHECK_INT(raw_force_all(), ==, 1);
    /* ...then the counters go back, and nothing starts again. */
    CHECK_OK(dk_thread_stop(t));
    CHECK_INT(raw_force_all(), ==, 0);
    CHECK_ERR(dk_thread_start(t), DK_ESTATE);
    CHECK_ERR(dk_thread_start(idle), DK_ESTATE);
    dk_thread_close(idle);
    dk_thread_close(t);
}

static dk_thread *foreign;
static int foreign_rc[4];

static void *use_foreign(void *arg)
{
    (void)arg;
    uint64_t v;
    foreign_rc[0] = dk_thread_start(foreign);
    foreign_rc[1] = dk_thread_sample(foreign, &v);
    foreign_rc[2] = dk_thread_stop(foreign);
    dk_thread_close(foreign); /* closing from any thread is allowed */
    return NULL;
}

TEST_CASE(thread_sampler_belongs_to_its_thread)
{
    dk_sampler *s = open_sampler();
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    CHECK_OK(dk_thread_open(s, &ev, 1, &foreign));
    CHECK_OK(dk_thread_start(foreign));
    pthread_t th;
    CHECK_INT(pthread_create(&th, NULL, use_foreign, NULL), ==, 0);
    pthread_join(th, NULL);
    CHECK_INT(foreign_rc[0], ==, DK_ETHREAD);
    CHECK_INT(foreign_rc[1], ==, DK_ETHREAD);
    CHECK_INT(foreign_rc[2], ==, DK_ETHREAD);
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0); /* the close stopped it */
    dk_sampler_close(s);
    CHECK_INT(raw_force_all(), ==, 0);
}

#define WORKERS 4
static dk_sampler *shared;
static int worker_failures;
static pthread_mutex_t worker_lock = PTHREAD_MUTEX_INITIALIZER;

static void worker_fail(const char *what)
{
    pthread_mutex_lock(&worker_lock);
    worker_failures++;
    fprintf(stderr, "worker: %s: %s\n", what, dk_last_error());
    pthread_mutex_unlock(&worker_lock);
}

static void *worker(void *arg)
{
    size_t id = (size_t)arg;
    const char *names[] = {"cycles", "instructions", "branches"};
    for (int round = 0; round < 5; round++) {
        dk_thread *t = NULL;
        if (dk_thread_open_names(shared, names, 3, &t) != 0) {
            worker_fail("open");
            return NULL;
        }
        uint64_t a[3], b[3];
        if (dk_thread_start(t) != 0) {
            worker_fail("start");
            dk_thread_close(t);
            return NULL;
        }
        /* The counts cover at least [t1, t2] and at most [t0, t3] of this
         * thread's CPU time: the sim counts 3 cycles per ns of it. */
        uint64_t t0 = dkt_thread_cpu_ns();
        int rc = dk_thread_sample(t, a);
        uint64_t t1 = dkt_thread_cpu_ns();
        dkt_burn_cpu_ms(3 + (double)id);
        uint64_t t2 = dkt_thread_cpu_ns();
        rc |= dk_thread_sample(t, b);
        uint64_t t3 = dkt_thread_cpu_ns();
        if (rc != 0)
            worker_fail("sample");
        uint64_t cycles = b[0] - a[0];
        if (cycles < 3 * (t2 - t1) * 95 / 100 || cycles > 3 * (t3 - t0) * 105 / 100 ||
            b[2] <= a[2]) {
            pthread_mutex_lock(&worker_lock);
            worker_failures++;
            fprintf(stderr, "worker %zu: %llu cycles in %llu..%llu ns of CPU, branches %llu\n", id,
                    (unsigned long long)cycles, (unsigned long long)(t2 - t1),
                    (unsigned long long)(t3 - t0), (unsigned long long)(b[2] - a[2]));
            pthread_mutex_unlock(&worker_lock);
        }
        if (dk_thread_stop(t) != 0)
            worker_fail("stop");
        dk_thread_close(t);
    }
    return NULL;
}

TEST_CASE(many_threads_sample_concurrently)
{
    shared = open_sampler();
    pthread_t th[WORKERS];
    for (size_t i = 0; i < WORKERS; i++)
        CHECK_INT(pthread_create(&th[i], NULL, worker, (void *)i), ==, 0);
    for (size_t i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    CHECK_INT(worker_failures, ==, 0);
    CHECK_INT(raw_kperf()->kpc_get_counting(), ==, 0);
    dk_sampler_close(shared);
    CHECK_INT(raw_force_all(), ==, 0);
}

TEST_CASE(busy_fixed_counter_uses_the_fallback)
{
    dk_sampler *s = open_sampler();
    const dk_event ev[] = {DK_EVENT_FIXED_INSTRUCTIONS, DK_EVENT_FIXED_INSTRUCTIONS};
    dk_thread *t = NULL;
    CHECK_OK(dk_thread_open(s, ev, 2, &t));
    const dk_database_event *insts = dk_database_find(dk_sampler_database(s), "Instructions");
    CHECK_STR(dk_thread_event_name(t, 0), insts->name);
    CHECK_STR(dk_thread_event_name(t, 1), insts->fallback);
    CHECK_OK(dk_thread_start(t));
    uint64_t a[2], b[2];
    CHECK_OK(dk_thread_sample(t, a));
    dkt_burn_cpu_ms(10);
    CHECK_OK(dk_thread_sample(t, b));
    uint64_t d0 = b[0] - a[0], d1 = b[1] - a[1];
    CHECK_U64(d0 > d1 ? d0 - d1 : d1 - d0, <, d0 / 20 + 1); /* both count instructions */
    dk_thread_close(t);
    dk_sampler_close(s);
}

TEST_CASE(conflicting_events_are_named)
{
    dk_sampler *s = open_sampler();
    if (is_intel(s))
        SKIP("Intel events carry no counter masks");
    /* Both can only use counter 7. */
    const char *names[] = {"INST_INT_ST", "cycles", "INST_INT_ALU"};
    dk_thread *t = NULL;
    CHECK_ERR(dk_thread_open_names(s, names, 3, &t), DK_ECONFLICT);
    CHECK(t == NULL);
    CHECK_CONTAINS(dk_last_error(), "INST_INT_ALU");
    CHECK_CONTAINS(dk_last_error(), "INST_INT_ST");
    CHECK_INT(dk_last_kpep_error(), ==, KPEP_CONFIG_ERROR_CONFLICTING_EVENTS);

    /* Across thread samplers: counter 7 holds INST_INT_ST for the first. */
    dk_thread *a = open_names(s, names, 1), *b = NULL;
    CHECK_ERR(dk_thread_open_names(s, &names[2], 1, &b), DK_ECONFLICT);
    CHECK_CONTAINS(dk_last_error(), "another thread sampler");
    CHECK_CONTAINS(dk_last_error(), "INST_INT_ST");
    /* The same event shares the counter. */
    b = open_names(s, names, 1);
    CHECK_OK(dk_thread_start(a));
    CHECK_OK(dk_thread_start(b));
    uint64_t va, vb;
    CHECK_OK(dk_thread_sample(a, &va));
    CHECK_OK(dk_thread_sample(b, &vb));
    dk_thread_close(a);
    dk_thread_close(b);
    /* Once both are closed the counter is free for another event. */
    dk_thread *c = open_names(s, &names[2], 1);
    dk_thread_close(c);
    dk_sampler_close(s);
}

TEST_CASE(too_many_events)
{
    dk_sampler *s = open_sampler();
    size_t counters = dk_database_counter_count(dk_sampler_database(s),
                                                DK_COUNTERS_FIXED | DK_COUNTERS_CONFIGURABLE);
    const char *names[DK_MAX_EVENTS];
    for (size_t i = 0; i < counters + 1; i++)
        names[i] = "cycles";
    dk_thread *t = NULL;
    CHECK_ERR(dk_thread_open_names(s, names, counters + 1, &t), DK_ETOOMANY);
    CHECK_CONTAINS(dk_last_error(), "counters");
    /* The event that does not fit is named as it was asked for, and as the
     * chip knows it. */
    const dk_database_event *cycles = NULL;
    CHECK_OK(dk_sampler_resolve(s, "cycles", &cycles));
    char want[256];
    snprintf(want, sizeof want, "event cycles (%s) does not fit", cycles->name);
    CHECK_CONTAINS(dk_last_error(), want);
    /* Events without a mask: one more than the configurable counters. */
    size_t config = dk_database_counter_count(dk_sampler_database(s), DK_COUNTERS_CONFIGURABLE);
    const dk_database *db = dk_sampler_database(s);
    size_t n = 0;
    for (size_t i = 0; i < dk_database_event_count(db) && n < config + 1; i++) {
        const dk_database_event *ev = dk_database_event_at(db, i);
        if (!ev->fixed && ev->counters_mask == 0)
            names[n++] = ev->name;
    }
    CHECK_INT(n, ==, config + 1);
    int rc = dk_thread_open_names(s, names, n, &t);
    CHECK(rc == DK_ETOOMANY || rc == DK_ECONFLICT);
    dk_sampler_close(s);
}

/* A name a typo or two away from a known one gets it suggested; one far from
 * every name gets no guess. */
TEST_CASE(typos_get_the_nearest_names)
{
    dk_sampler *s = open_sampler();
    dk_thread *t = NULL;
    const char *typo = "instructons";
    CHECK_ERR(dk_thread_open_names(s, &typo, 1, &t), DK_ENOEVENT);
    CHECK_CONTAINS(dk_last_error(), "did you mean instructions");
    typo = "CYLCES";
    CHECK_ERR(dk_thread_open_names(s, &typo, 1, &t), DK_ENOEVENT);
    CHECK_CONTAINS(dk_last_error(), "did you mean cycles");

    /* A native name with one letter changed and one dropped. */
    const dk_database *db = dk_sampler_database(s);
    const char *native = dk_database_event_at(db, dk_database_event_count(db) / 2)->name;
    char changed[128];
    snprintf(changed, sizeof changed, "%s", native);
    CHECK(strlen(changed) > 4);
    changed[1] = changed[1] == 'Q' ? 'Z' : 'Q';
    memmove(changed + 3, changed + 4, strlen(changed + 4) + 1);
    typo = changed;
    CHECK_ERR(dk_thread_open_names(s, &typo, 1, &t), DK_ENOEVENT);
    CHECK_CONTAINS(dk_last_error(), "did you mean");
    CHECK_CONTAINS(dk_last_error(), native);

    typo = "QQQQQQQQQQ_NOTHING_LIKE_IT";
    CHECK_ERR(dk_thread_open_names(s, &typo, 1, &t), DK_ENOEVENT);
    CHECK(strstr(dk_last_error(), "did you mean") == NULL);
    dk_sampler_close(s);
}

TEST_CASE(unknown_and_unavailable_events)
{
    dk_sampler *s = open_sampler();
    dk_thread *t = NULL;
    const char *bogus = "NOT_AN_EVENT";
    CHECK_ERR(dk_thread_open_names(s, &bogus, 1, &t), DK_ENOEVENT);
    CHECK_CONTAINS(dk_last_error(), "NOT_AN_EVENT");
    CHECK_CONTAINS(dk_last_error(), getenv("DKPERF_SIM_CPU"));
    const char *partial = is_intel(s) ? "BR_INST" : "BRANCH_MISPRED";
    CHECK_ERR(dk_thread_open_names(s, &partial, 1, &t), DK_ENOEVENT);
    CHECK_CONTAINS(dk_last_error(), "did you mean");

    /* An event of another chip. */
    dk_cpu cpu = dk_sampler_cpu(s);
    dk_event other = cpu >= DK_CPU_M4 ? DK_EVENT_SCHEDULE_UOP : DK_EVENT_INST_BRANCH_COND;
    if (cpu == DK_CPU_INTEL)
        other = DK_EVENT_INST_BRANCH;
    CHECK_ERR(dk_thread_open(s, &other, 1, &t), DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_last_error(), dk_event_name(other));
    CHECK_CONTAINS(dk_last_error(), "exists on");
    const char *other_name = dk_event_name(other);
    CHECK_ERR(dk_thread_open_names(s, &other_name, 1, &t), DK_EUNAVAILABLE);
    CHECK(t == NULL);
    dk_sampler_close(s);
}

TEST_CASE(invalid_arguments)
{
    dk_sampler *s = open_sampler();
    dk_thread *t = NULL;
    const dk_event ev = DK_EVENT_FIXED_CYCLES;
    const char *name = "cycles", *empty = "", *null_name = NULL;
    uint64_t v;
    CHECK_ERR(dk_sampler_open(NULL, NULL), DK_EINVAL);
    CHECK_ERR(dk_thread_open(NULL, &ev, 1, &t), DK_EINVAL);
    CHECK_ERR(dk_thread_open(s, NULL, 1, &t), DK_EINVAL);
    CHECK_ERR(dk_thread_open(s, &ev, 0, &t), DK_EINVAL);
    CHECK_ERR(dk_thread_open(s, &ev, DK_MAX_EVENTS + 1, &t), DK_EINVAL);
    CHECK_ERR(dk_thread_open(s, &ev, 1, NULL), DK_EINVAL);
    dk_event bad = DK_EVENT_COUNT;
    CHECK_ERR(dk_thread_open(s, &bad, 1, &t), DK_EINVAL);
    CHECK_ERR(dk_thread_open_names(s, NULL, 1, &t), DK_EINVAL);
    CHECK_ERR(dk_thread_open_names(s, &empty, 1, &t), DK_EINVAL);
    CHECK_ERR(dk_thread_open_names(s, &null_name, 1, &t), DK_EINVAL);
    CHECK_ERR(dk_thread_start(NULL), DK_EINVAL);
    CHECK_ERR(dk_thread_stop(NULL), DK_EINVAL);
    CHECK_ERR(dk_thread_sample(NULL, &v), DK_EINVAL);
    CHECK_ERR(dk_sampler_release(NULL), DK_EINVAL);
    t = open_names(s, &name, 1);
    CHECK_ERR(dk_thread_sample(t, NULL), DK_EINVAL);
    dk_thread_close(t);
    dk_thread_close(NULL);
    dk_sampler_close(NULL);
    CHECK(!dk_thread_is_running(NULL));
    CHECK_INT(dk_thread_event_count(NULL), ==, 0);
    CHECK(dk_sampler_database(NULL) == NULL);
    CHECK(dk_database_find(NULL, "Cycles") == NULL);
    CHECK_INT(dk_database_match(NULL, "x", NULL, 0), ==, 0);
    dk_sampler_close(s);
}

TEST_CASE(options)
{
    dk_sampler *s = NULL;
    dk_sampler_options o = DK_SAMPLER_OPTIONS_INIT;
    o.size = 4;
    CHECK_ERR(dk_sampler_open(&s, &o), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "size");
    o = (dk_sampler_options)DK_SAMPLER_OPTIONS_INIT;
    o.flags = 0x80;
    CHECK_ERR(dk_sampler_open(&s, &o), DK_EINVAL);
    o = (dk_sampler_options)DK_SAMPLER_OPTIONS_INIT;
    o.backend = (dk_backend_kind)42;
    CHECK_ERR(dk_sampler_open(&s, &o), DK_EINVAL);
    o = (dk_sampler_options)DK_SAMPLER_OPTIONS_INIT;
    o.framework_root = "/nonexistent-root";
    o.backend = DK_BACKEND_KPERF;
    CHECK_ERR(dk_sampler_open(&s, &o), DK_ELOAD);
    CHECK_CONTAINS(dk_last_error(), "/nonexistent-root/System/Library/PrivateFrameworks");
    CHECK(s == NULL);
    /* The explicit root and backend, user-only counting. */
    o = (dk_sampler_options)DK_SAMPLER_OPTIONS_INIT;
    o.framework_root = getenv("DKPERF_FRAMEWORK_ROOT");
    o.backend = DK_BACKEND_KPERF;
    o.flags = DK_SAMPLER_USER_ONLY;
    CHECK_OK(dk_sampler_open(&s, &o));
    dk_backend_caps caps = {.size = sizeof caps};
    CHECK_OK(dk_sampler_caps(s, &caps));
    CHECK(caps.user_only);
    const char *name = "branches";
    dk_thread *t = open_names(s, &name, 1);
    dk_thread_close(t);
    dk_sampler_close(s);
    CHECK_INT(raw_force_all(), ==, 0);
    /* An options struct from an older, smaller header. */
    struct {
        size_t size;
        const char *root;
    } old = {sizeof old, NULL};
    CHECK_OK(dk_sampler_open(&s, (const dk_sampler_options *)&old));
    dk_sampler_close(s);
}

TEST_CASE(backend_environment)
{
    dk_sampler *s = NULL;
    setenv("DKPERF_BACKEND", "bogus", 1);
    CHECK_ERR(dk_sampler_open(&s, NULL), DK_EINVAL);
    CHECK_CONTAINS(dk_last_error(), "DKPERF_BACKEND=bogus");
    setenv("DKPERF_BACKEND", "kperf", 1);
    CHECK_OK(dk_sampler_open(&s, NULL));
    CHECK_STR(dk_sampler_backend(s), "kperf");
    dk_sampler_close(s);
}

TEST_CASE(event_enum_functions)
{
    dk_event ev;
    CHECK_STR(dk_event_name(DK_EVENT_INST_BRANCH), "INST_BRANCH");
    CHECK(dk_event_name(DK_EVENT_COUNT) == NULL);
    CHECK_OK(dk_event_from_name("inst_branch", &ev));
    CHECK_INT(ev, ==, DK_EVENT_INST_BRANCH);
    CHECK_ERR(dk_event_from_name("nope", &ev), DK_ENOEVENT);
    CHECK_ERR(dk_event_from_name(NULL, &ev), DK_EINVAL);
    const dk_event_def *d = dk_event_on(DK_EVENT_INST_BRANCH, DK_CPU_M4);
    CHECK(d != NULL && d->number == 33 && d->counters_mask == 252 && d->fixed_counter == -1);
    CHECK(dk_event_on(DK_EVENT_INST_BRANCH_COND, DK_CPU_M1) == NULL);
    CHECK_STR(dk_event_on(DK_EVENT_FIXED_INSTRUCTIONS, DK_CPU_M2)->fallback, "INST_ALL");
    CHECK_STR(dk_event_on(DK_EVENT_FIXED_CYCLES, DK_CPU_M3)->aliases[0], "Cycles");
    CHECK_STR(dk_cpu_name(DK_CPU_M3), "M3");
    CHECK_STR(dk_cpu_name(DK_CPU_INTEL), "Intel");
    CHECK_STR(dk_cpu_name((dk_cpu)99), "unknown");
    CHECK_STR(dk_version(), "0.1.0");
}

TEST_MAIN()
