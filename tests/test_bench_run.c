/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_run.c - libdkbench's external bodies and dk_bench_run
 * (dkbench.h), on synthetic runs of known values: the median estimate,
 * the run count rule, the change test against a saved baseline, the
 * size-versioned structs and the errors.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dkbench.h"

/* A body whose run i takes walls[i % n] seconds and retires 1000 * (i + 1)
 * instructions (counted unless uncounted_at is i). */
typedef struct fake {
    const double *walls;
    size_t n, calls, warmups;
    double scale;
    long uncounted_at;
    int fail_at; /* run index that fails with DK_EOS, -1: none */
} fake;

static int fake_run(void *ctx, dk_bench_body_run *run)
{
    fake *f = ctx;
    CHECK(run->size == sizeof *run);
    if (run->warmup) {
        f->warmups++;
        return 0;
    }
    size_t i = f->calls++;
    CHECK(run->index == i);
    if (f->fail_at >= 0 && (size_t)f->fail_at == i)
        return dk_bench_fail(DK_EOS, "run %zu: the command could not start", i);
    run->wall_s = f->walls[i % f->n] * f->scale;
    run->user_s = run->wall_s / 2;
    run->max_rss = 4096;
    run->counters[0] = 1000 * (i + 1);
    run->counted[0] = (long)i != f->uncounted_at;
    return 0;
}

static const char *const counters[] = {"instructions"};
static const double walls[] = {0.010,  0.012,  0.011,  0.013, 0.009, 0.0105,
                               0.0115, 0.0125, 0.0095, 0.014, 0.0108};

static void add(const char *name, fake *f)
{
    dk_bench_body b = {sizeof b, name, fake_run, f, counters, 1};
    CHECK_INT(dk_bench_register_body(&b), ==, 0);
}

static double median(const double *v, size_t n)
{
    double s[64];
    memcpy(s, v, n * sizeof *s);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
            double t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

TEST_CASE(body_runs_are_samples_and_the_median_is_the_estimate)
{
    fake f = {walls, 11, 0, 0, 1, -1, -1};
    add("cmd", &f);
    dk_bench_options o;
    dk_bench_options_init(&o);
    o.runs = 11;
    o.warmup_runs = 2;
    dk_bench_results *r = NULL;
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    CHECK(f.calls == 11 && f.warmups == 2);
    CHECK(dk_bench_results_count(r) == 1);
    CHECK_STR(dk_bench_results_name(r, 0), "cmd");
    dk_bench_estimate e = {.size = sizeof e};
    CHECK_INT(dk_bench_results_estimate(r, 0, "time", &e), ==, 0);
    CHECK(e.n == 11);
    CHECK_STR(e.unit, "ns");
    CHECK_STR(e.estimator, "median");
    CHECK(fabs(e.point - median(walls, 11) * 1e9) < 1e-3);
    CHECK(fabs(e.median - e.point) < 1e-3);
    CHECK(e.lo <= e.point && e.point <= e.hi && e.lo >= 9e6 && e.hi <= 14e6);
    CHECK(fabs(e.min - 9e6) < 1e-3 && fabs(e.max - 14e6) < 1e-3);
    CHECK(!e.has_change);
    CHECK_INT(dk_bench_results_estimate(r, 0, "instructions", &e), ==, 0);
    CHECK(e.point == 6000 && e.mean == 6000 && e.min == 1000 && e.max == 11000);
    CHECK_STR(e.unit, "");
    CHECK_INT(dk_bench_results_estimate(r, 0, "max-rss", &e), ==, 0);
    CHECK(e.point == 4096);
    CHECK_STR(e.unit, "B");
    CHECK_INT(dk_bench_results_estimate(r, 0, "user-time", &e), ==, 0);
    CHECK(fabs(e.point - median(walls, 11) * 0.5e9) < 1e-3);
    CHECK_INT(dk_bench_results_estimate(r, 0, "cycles", &e), ==, DK_ENOEVENT);
    CHECK_INT(dk_bench_results_estimate(r, 1, "time", &e), ==, DK_EINVAL);
    dk_bench_results_free(r);
}

TEST_CASE(the_first_run_says_how_many_fill_the_time)
{
    static const double slow[] = {0.01};
    fake f = {slow, 1, 0, 0, 1, -1, -1};
    add("cmd", &f);
    dk_bench_options o;
    dk_bench_options_init(&o);
    o.min_time = 0.035; /* ceil(0.035 / 0.01) = 4 runs */
    o.min_runs = 2;
    dk_bench_results *r = NULL;
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    CHECK(f.calls == 4);
    dk_bench_results_free(r);
    f.calls = 0;
    o.min_runs = 10; /* at least min_runs */
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    CHECK(f.calls == 10);
    dk_bench_results_free(r);
}

static char dir[512];

static void cleanup(void)
{
    char path[700];
    const char *files[] = {"base.json", "same.json"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    rmdir(dir);
}

TEST_CASE(a_change_is_the_test_of_the_medians_with_a_p_value)
{
    snprintf(dir, sizeof dir, "%s/dkb-run-XXXXXX", dkt_tmpdir());
    CHECK(mkdtemp(dir) != NULL);
    atexit(cleanup);
    fake f = {walls, 11, 0, 0, 1, -1, -1};
    add("cmd", &f);
    dk_bench_options o;
    dk_bench_options_init(&o);
    o.runs = 11;
    o.results_dir = dir;
    o.save_baseline = "base";
    dk_bench_results *r = NULL;
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    dk_bench_results_free(r);
    /* The same runs: no change at all. */
    o.save_baseline = NULL;
    o.baseline = "base";
    f.calls = 0;
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    dk_bench_estimate e = {.size = sizeof e};
    CHECK_INT(dk_bench_results_estimate(r, 0, "time", &e), ==, 0);
    CHECK(e.has_change && e.change == 0 && e.verdict == DK_BENCH_NO_CHANGE && e.p_value > 0.5);
    CHECK(dk_bench_results_baseline_count(r) == 1);
    CHECK_STR(dk_bench_results_baseline_name(r, 0), "cmd");
    dk_bench_results_free(r);
    /* Every run 30% slower: regressed, with a small p-value. */
    f.calls = 0;
    f.scale = 1.3;
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    CHECK_INT(dk_bench_results_estimate(r, 0, "time", &e), ==, 0);
    CHECK(e.has_change && e.verdict == DK_BENCH_REGRESSED && e.p_value < 0.05);
    CHECK(fabs(e.change - 0.3) < 1e-9 && e.change_lo > 0.01);
    dk_bench_results_free(r);
    /* A baseline that is not there: refused before any run. */
    f.calls = 0;
    o.baseline = "none";
    CHECK_INT(dk_bench_run(&o, &r), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_bench_last_error(), "none.json");
    CHECK(f.calls == 0 && dk_bench_results_count(r) == 0);
    dk_bench_results_free(r);
}

/* "Not in the baseline" is a member, not a reason's words; a caller
 * built before the member was added still gets the rest. */
TEST_CASE(a_result_missing_from_the_baseline_says_so_in_a_member)
{
    snprintf(dir, sizeof dir, "%s/dkb-run-XXXXXX", dkt_tmpdir());
    CHECK(mkdtemp(dir) != NULL);
    atexit(cleanup);
    fake f = {walls, 11, 0, 0, 1, -1, -1}, g = f;
    add("cmd", &f);
    add("new", &g);
    dk_bench_options o;
    dk_bench_options_init(&o);
    o.runs = 5;
    o.results_dir = dir;
    o.name = "cmd";
    o.save_baseline = "base";
    dk_bench_results *r = NULL;
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    dk_bench_results_free(r);
    o.name = NULL;
    o.save_baseline = NULL;
    o.baseline = "base";
    f.calls = 0;
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    CHECK_INT(dk_bench_results_count(r), ==, 2);
    dk_bench_estimate e = {.size = sizeof e};
    CHECK_INT(dk_bench_results_estimate(r, 0, "time", &e), ==, 0);
    CHECK(e.has_change && e.not_in_baseline == 0);
    CHECK_INT(dk_bench_results_estimate(r, 1, "instructions", &e), ==, 0);
    CHECK(!e.has_change && e.not_in_baseline == 1);
    /* The size that ends at no_change: taken, the later member untouched. */
    memset(&e, 0, sizeof e);
    e.size = offsetof(dk_bench_estimate, not_in_baseline);
    e.not_in_baseline = 7;
    CHECK_INT(dk_bench_results_estimate(r, 1, "time", &e), ==, 0);
    CHECK(e.n == 5 && !e.has_change && e.no_change[0] != '\0' && e.not_in_baseline == 7);
    e.size = offsetof(dk_bench_estimate, no_change); /* smaller still: refused */
    CHECK_INT(dk_bench_results_estimate(r, 1, "time", &e), ==, DK_EINVAL);
    dk_bench_results_free(r);
}

TEST_CASE(structs_are_size_versioned)
{
    fake f = {walls, 11, 0, 0, 1, -1, -1};
    add("cmd", &f);
    struct {
        dk_bench_options o;
        char more[16];
    } big;
    memset(&big, 0, sizeof big);
    dk_bench_options_init(&big.o);
    big.o.runs = 3;
    big.o.size = sizeof big; /* larger, the unknown bytes zero: taken */
    dk_bench_results *r = NULL;
    CHECK_INT(dk_bench_run(&big.o, &r), ==, 0);
    dk_bench_results_free(r);
    big.more[3] = 1; /* an unknown member set: refused */
    CHECK_INT(dk_bench_run(&big.o, &r), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_bench_last_error(), "newer libdkbench");
    dk_bench_results_free(r);
    /* A size no struct has (a garbage size, an unset member) is refused
     * without reading that far, as perf_event_open refuses an attr larger
     * than a page. */
    unsigned char *wide = calloc(1, 65536);
    CHECK(wide != NULL);
    dk_bench_options_init((dk_bench_options *)wide);
    ((dk_bench_options *)wide)->runs = 3;
    ((dk_bench_options *)wide)->size = 65536;
    CHECK_INT(dk_bench_run((dk_bench_options *)wide, &r), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_bench_last_error(), "size 65536 is no struct's size");
    dk_bench_results_free(r);
    free(wide);
    big.o.size = 8; /* smaller: refused */
    CHECK_INT(dk_bench_run(&big.o, &r), ==, DK_EINVAL);
    CHECK(r == NULL);
    dk_bench_options o;
    dk_bench_options_init(&o);
    o.runs = 3;
    f.calls = 0;
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    dk_bench_estimate e;
    memset(&e, 0, sizeof e);
    CHECK_INT(dk_bench_results_estimate(r, 0, "time", &e), ==, DK_EINVAL); /* size 0 */
    dk_bench_results_free(r);
}

TEST_CASE(bad_bodies_and_failing_runs)
{
    fake f = {walls, 11, 0, 0, 1, -1, -1};
    static const char *const dup[] = {"a", "a"};
    static const char *const own[] = {"time"};
    dk_bench_body b = {sizeof b, "x", fake_run, &f, dup, 2};
    CHECK_INT(dk_bench_register_body(&b), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_bench_last_error(), "given twice");
    b.counters = own;
    b.n_counters = 1;
    CHECK_INT(dk_bench_register_body(&b), ==, DK_EINVAL);
    b.run = NULL;
    CHECK_INT(dk_bench_register_body(&b), ==, DK_EINVAL);
    CHECK_INT(dk_bench_register_body(NULL), ==, DK_EINVAL);
    /* A run that fails ends the run with its code and words; the
     * benchmarks before it keep their results. */
    fake ok = {walls, 11, 0, 0, 1, -1, -1}, bad = {walls, 11, 0, 0, 1, -1, 2};
    add("first", &ok);
    add("second", &bad);
    dk_bench_options o;
    dk_bench_options_init(&o);
    o.runs = 5;
    dk_bench_results *r = NULL;
    CHECK_INT(dk_bench_run(&o, &r), ==, DK_EOS);
    CHECK_CONTAINS(dk_bench_last_error(), "run 2: the command could not start");
    CHECK(dk_bench_results_count(r) == 1);
    CHECK_STR(dk_bench_results_name(r, 0), "first");
    dk_bench_results_free(r);
    o.name = "nothing";
    CHECK_INT(dk_bench_run(&o, &r), ==, DK_EINVAL);
    CHECK_CONTAINS(dk_bench_last_error(), "no benchmark named \"nothing\"");
}

TEST_CASE(a_counter_not_counted_in_every_run_is_unavailable)
{
    fake f = {walls, 11, 0, 0, 1, 3, -1};
    add("cmd", &f);
    dk_bench_options o;
    dk_bench_options_init(&o);
    o.runs = 6;
    dk_bench_results *r = NULL;
    CHECK_INT(dk_bench_run(&o, &r), ==, 0);
    dk_bench_estimate e = {.size = sizeof e};
    CHECK_INT(dk_bench_results_estimate(r, 0, "instructions", &e), ==, DK_EUNAVAILABLE);
    CHECK_CONTAINS(dk_bench_last_error(), "counted in 5 of 6 runs");
    CHECK_INT(dk_bench_results_estimate(r, 0, "time", &e), ==, 0);
    dk_bench_results_free(r);
}

TEST_MAIN()

/* A baseline to save whose path is a directory is refused before any run,
 * as a directory that cannot take a file is: not after every run. */
TEST_CASE(a_baseline_path_that_is_a_directory_is_refused_before_any_run)
{
    char d[512], sub[600];
    snprintf(d, sizeof d, "%s/dkb-dir-XXXXXX", dkt_tmpdir());
    CHECK(mkdtemp(d) != NULL);
    snprintf(sub, sizeof sub, "%s/base.json", d);
    CHECK(mkdir(sub, 0700) == 0);
    fake f = {walls, 11, 0, 0, 1, -1, -1};
    add("cmd", &f);
    dk_bench_options o;
    dk_bench_options_init(&o);
    o.runs = 3;
    o.results_dir = d;
    o.save_baseline = "base";
    dk_bench_results *r = NULL;
    CHECK_INT(dk_bench_run(&o, &r), ==, DK_EOS);
    CHECK_CONTAINS(dk_bench_last_error(), "base.json: is a directory");
    CHECK(f.calls == 0 && dk_bench_results_count(r) == 0);
    dk_bench_results_free(r);
    CHECK(rmdir(sub) == 0 && rmdir(d) == 0);
}

static void spin(dk_bench *b) { DK_BENCH_LOOP(b) dk_bench_do_not_optimize(b); }

/* dk_bench_run measures in the calling process (no argv to run again):
 * a loop benchmark's estimates come from 1 process, an external body's
 * from 0 (its every run is a process); no change is by process. A caller
 * whose struct ends before processes gets none of the later members. */
TEST_CASE(dk_bench_run_measures_in_the_calling_process)
{
    snprintf(dir, sizeof dir, "%s/dkb-run-XXXXXX", dkt_tmpdir());
    CHECK(mkdtemp(dir) != NULL);
    atexit(cleanup);
    fake f = {walls, 11, 0, 0, 1, -1, -1};
    add("cmd", &f);
    CHECK_INT(dk_bench_register("loop", spin, NULL), ==, 0);
    dk_bench_options o;
    dk_bench_options_init(&o);
    o.runs = 5;
    o.min_time = 0.02;
    o.results_dir = dir;
    o.save_baseline = "base";
    dk_bench_results *r = NULL;
    if (dk_bench_run(&o, &r) != 0)
        DKT_FAIL("dk_bench_run: %s", dk_bench_last_error());
    dk_bench_results_free(r);
    o.save_baseline = NULL;
    o.baseline = "base";
    f.calls = 0;
    if (dk_bench_run(&o, &r) != 0)
        DKT_FAIL("dk_bench_run: %s", dk_bench_last_error());
    CHECK_INT(dk_bench_results_count(r), ==, 2);
    for (size_t i = 0; i < 2; i++) {
        int body = strcmp(dk_bench_results_name(r, i), "cmd") == 0;
        dk_bench_estimate e = {.size = sizeof e};
        CHECK_INT(dk_bench_results_estimate(r, i, "time", &e), ==, 0);
        CHECK_INT(e.processes, ==, body ? 0 : 1);
        CHECK(isnan(e.between_share));
        CHECK(e.has_change && e.change_by_process == 0 && e.resolution == 0);
        CHECK(e.verdict != DK_BENCH_UNRESOLVED);
        /* Ending at not_in_baseline: the later members are not written. */
        dk_bench_estimate old;
        memset(&old, 0x5a, sizeof old);
        old.size = offsetof(dk_bench_estimate, processes);
        CHECK_INT(dk_bench_results_estimate(r, i, "time", &old), ==, 0);
        CHECK(old.n == e.n && old.verdict == e.verdict && old.not_in_baseline == 0);
        unsigned char later[sizeof old - offsetof(dk_bench_estimate, processes)];
        memset(later, 0x5a, sizeof later);
        CHECK(memcmp((unsigned char *)&old + offsetof(dk_bench_estimate, processes), later,
                     sizeof later) == 0);
    }
    dk_bench_results_free(r);
}
