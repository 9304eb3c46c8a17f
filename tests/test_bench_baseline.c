/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_baseline.c - libdkbench's baselines: saved and read back
 * value for value, malformed, oversized and special files rejected with
 * the file and byte offset, and older baselines read as they were meant.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "libdkbench/compare.h"
#include "common/error.h"
#include "libdkbench/model.h"
#include "libdkbench/report.h"
#include "bench_fixtures.h"
#include "check.h"

static void same_measure(const dkb_measure *a, const dkb_measure *b, size_t n)
{
    CHECK_STR(a->name, b->name);
    CHECK_STR(a->unit, b->unit);
    CHECK_STR(a->why, b->why);
    CHECK(a->available == b->available && a->multiplexed == b->multiplexed);
    CHECK((a->y == NULL) == (b->y == NULL));
    CHECK(a->y == NULL || memcmp(a->y, b->y, n * sizeof *a->y) == 0);
    CHECK((a->outlier_class == NULL) == (b->outlier_class == NULL));
    CHECK(a->outlier_class == NULL || memcmp(a->outlier_class, b->outlier_class, n) == 0);
    if (a->available && n >= 2 && a->y != NULL) {
        CHECK(memcmp(&a->fit, &b->fit, sizeof a->fit) == 0);
        CHECK(memcmp(&a->slope, &b->slope, sizeof a->slope) == 0);
        CHECK(memcmp(&a->per_iter, &b->per_iter, sizeof a->per_iter) == 0);
        CHECK(memcmp(&a->outliers, &b->outliers, sizeof a->outliers) == 0);
        CHECK(memcmp(&a->ols_slope, &b->ols_slope, sizeof a->ols_slope) == 0);
    } else {
        /* Not measured: written as null, read back as zeros. */
        static const dkb_measure zero;
        CHECK(memcmp(&zero.fit, &b->fit, sizeof b->fit) == 0);
        CHECK(memcmp(&zero.slope, &b->slope, sizeof b->slope) == 0);
        CHECK(memcmp(&zero.per_iter, &b->per_iter, sizeof b->per_iter) == 0);
        CHECK(memcmp(&zero.outliers, &b->outliers, sizeof b->outliers) == 0);
        CHECK(memcmp(&zero.ols_slope, &b->ols_slope, sizeof b->ols_slope) == 0);
    }
    CHECK_STR(a->estimator, b->estimator);
    CHECK_INT(a->n_fit, ==, b->n_fit);
    CHECK(a->has_change == b->has_change);
    if (a->has_change) {
        /* Field by field: a dkb_change has padding after its verdict,
         * which an assignment need not copy. */
        CHECK(memcmp(&a->change.rel, &b->change.rel, sizeof a->change.rel) == 0);
        CHECK(memcmp(&a->change.p_value, &b->change.p_value, sizeof a->change.p_value) == 0);
        CHECK(a->change.verdict == b->change.verdict);
        CHECK(memcmp(&a->change.resolution, &b->change.resolution, sizeof a->change.resolution) ==
              0);
        CHECK(a->baseline_slope == b->baseline_slope);
    }
}

TEST_CASE(baseline_round_trip)
{
    dkb_result a, b;
    dkb_run_info run;
    run_info(&run);
    two_results(&a, &b);
    /* Values that only an exact decimal form brings back. */
    a.m[0].slope.point = 1.0 / 3.0;
    a.m[1].fit.r2 = 0.1 + 0.2;
    a.m[2].per_iter.mad = 1e-300;
    a.m[3].fit.intercept = NAN;
    const dkb_result *rs[] = {&a, &b};
    /* The directory is created. */
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp_path("baselines"));
    CHECK(access(dir, F_OK) != 0);
    int rc = dkb_baseline_save(dir, "main", &run, rs, 2);
    if (rc != 0)
        DKT_FAIL("save: %s", dkb_last_error());
    dkb_result *back = NULL;
    size_t n = 0;
    rc = dkb_baseline_load(dir, "main", &back, &n);
    if (rc != 0)
        DKT_FAIL("load: %s", dkb_last_error());
    CHECK_INT(n, ==, 2);
    for (size_t k = 0; k < 2; k++) {
        const dkb_result *x = rs[k], *y = &back[k];
        CHECK_STR(x->name, y->name);
        CHECK_STR(x->group, y->group);
        CHECK_INT(x->n_samples, ==, y->n_samples);
        CHECK((x->iterations == NULL) == (y->iterations == NULL));
        CHECK(x->iterations == NULL ||
              memcmp(x->iterations, y->iterations, x->n_samples * sizeof(double)) == 0);
        CHECK_INT(x->n_measures, ==, y->n_measures);
        for (size_t j = 0; j < x->n_measures; j++) {
            if (j == 3 && k == 0) {
                CHECK(isnan(y->m[3].fit.intercept));
                back[0].m[3].fit.intercept = NAN; /* memcmp of NaN's bits below */
            }
            same_measure(&x->m[j], &y->m[j], x->n_samples);
        }
        CHECK_INT(x->passes, ==, y->passes);
        CHECK_INT(x->throughput_kind, ==, y->throughput_kind);
        CHECK(x->throughput_per_iter == y->throughput_per_iter);
        CHECK_STR(x->stop_reason, y->stop_reason);
        CHECK(x->warmup_s == y->warmup_s && x->measure_s == y->measure_s);
        CHECK_INT(x->n_levels, ==, y->n_levels);
        for (size_t l = 0; l < x->n_levels; l++) {
            CHECK_STR(x->level_name[l], y->level_name[l]);
            CHECK(x->level_cycle_share[l] == y->level_cycle_share[l]);
        }
        CHECK(x->moved_levels == y->moved_levels);
        CHECK(x->switches_counted == y->switches_counted);
        CHECK_INT(x->n_preempted, ==, y->n_preempted);
        CHECK((x->preempted == NULL) == (y->preempted == NULL));
        CHECK(x->preempted == NULL || memcmp(x->preempted, y->preempted, x->n_samples) == 0);
        dkb_result_free(&back[k]);
    }
    free(back);
    /* No temporary file is left beside it. */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = main.json", dir);
    CHECK(system(cmd) == 0);
    /* The file is the JSON report itself. */
    char *mem = NULL;
    size_t mlen = 0;
    FILE *f = open_memstream(&mem, &mlen);
    CHECK(f != NULL);
    CHECK(dkb_report_json(f, &run, rs, 2) == 0);
    CHECK(fclose(f) == 0);
    char *file = slurp(tmp_path("baselines/main.json"));
    CHECK_STR(file, mem);
    free(file);
    free(mem);
    dkb_result_free(&a);
    dkb_result_free(&b);
    cleanup();
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    CHECK(fwrite(text, 1, len, f) == len);
    CHECK(fclose(f) == 0);
}

/* Load must fail naming the file and a byte offset. */
static void rejected(const char *dir, const char *text, size_t len, const char *why)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad.json", dir);
    write_text(path, text, len);
    dkb_result *out = NULL;
    size_t n = 0;
    int rc = dkb_baseline_load(dir, "bad", &out, &n);
    if (rc == 0)
        DKT_FAIL("accepted a malformed baseline (%zu bytes): %.*s", len,
                 (int)(len < 200 ? len : 200), text);
    CHECK_INT(rc, ==, DK_EINVAL);
    CHECK(out == NULL);
    CHECK_CONTAINS(dkb_last_error(), path);
    CHECK_CONTAINS(dkb_last_error(), ": byte ");
    if (why)
        CHECK_CONTAINS(dkb_last_error(), why);
}

#define REJECT(dir, lit, why) rejected(dir, lit, sizeof lit - 1, why)

/* The text with its first `from` replaced by `to` is rejected with `why`. */
static void swapped(const char *dir, const char *text, size_t len, const char *from, const char *to,
                    const char *why)
{
    const char *at = strstr(text, from);
    if (at == NULL)
        DKT_FAIL("the saved baseline has no %s", from);
    size_t head = (size_t)(at - text), nf = strlen(from), nt = strlen(to);
    char *copy = malloc(len - nf + nt + 1);
    CHECK(copy != NULL);
    memcpy(copy, text, head);
    memcpy(copy + head, to, nt);
    memcpy(copy + head + nt, at + nf, len - head - nf + 1);
    rejected(dir, copy, len - nf + nt, why);
    free(copy);
}

TEST_CASE(baseline_rejects_malformed)
{
    dkb_result a, b;
    dkb_run_info run;
    run_info(&run);
    two_results(&a, &b);
    const dkb_result *rs[] = {&a, &b};
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp_path("bl"));
    CHECK(dkb_baseline_save(dir, "good", &run, rs, 2) == 0);
    char good[512];
    snprintf(good, sizeof good, "%s/good.json", dir);
    char *text = slurp(good);
    size_t len = strlen(text);

    /* Every truncation, at every byte up to the last value. */
    for (size_t cut = 0; cut < len - 1; cut += cut < 2000 ? 1 : 97)
        rejected(dir, text, cut, NULL);
    rejected(dir, text, 0, "byte 0: unexpected end of file");
    rejected(dir, text, len / 2, "byte ");

    /* Garbage and near misses. */
    REJECT(dir, "\x89PNG\r\n\x1a\n", "byte 0: expected a value");
    REJECT(dir, "{\"schema\":\"dkbench-1\"} x", "byte 23: data after the end");
    REJECT(dir, "{\"schema\":\"dkbench-2\",\"run\":{},\"results\":[]}", "byte 10: schema is not");
    REJECT(dir, "{\"schema\":\"dkbench-1\",\"schema\":\"x\"}", "duplicate member name");
    REJECT(dir, "{\"schema\":\"dk\xff\"}", "byte 13: invalid UTF-8");
    REJECT(dir, "{\"schema\":\"a\nb\"}", "control character");
    REJECT(dir, "{\"schema\":\"\\ud800\"}", "surrogate");
    REJECT(dir, "{\"schema\":01}", "expected ',' or '}'");
    REJECT(dir, "{\"schema\":1.}", "digit after the decimal point");
    REJECT(dir, "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]", "nested too deeply");
    REJECT(dir, "{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[{}]}",
           "result \"name\": missing");
    /* An older dkperf bench's times are seconds: one that is no duration in
     * ns (1e300 s is infinite there) is refused as such, not as memory. */
    REJECT(dir,
           "{\"schema\":\"dkperf-bench/1\",\"results\":[{\"command\":\"x\","
           "\"times\":[1e300,1e300]}]}",
           "\"times\": must hold durations");
    /* An older dkperf bench's baseline is said to be one, once: not "not a
     * dkbench-1 baseline", not "save it again" twice. */
    REJECT(dir, "{\"schema\":\"dkperf-bench/1\",\"results\":[{\"command\":\"x\"}]}",
           "older dkperf bench");
    CHECK(strstr(dkb_last_error(), "dkbench-1") == NULL);
    CHECK(strstr(strstr(dkb_last_error(), "--save-baseline") + 1, "--save-baseline") == NULL);
    REJECT(dir,
           "{\"schema\":\"dkperf-bench/1\",\"results\":[{\"command\":\"x\","
           "\"times\":[\"1\"]}]}",
           "\"times\": must hold numbers");
    CHECK(strstr(dkb_last_error(), "not a dkbench-1 baseline") == NULL);
    /* Numbers where values of another kind belong, and the reverse. */
    REJECT(dir, "{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[ 1 ]}",
           "byte 43: a result must be an object");
    REJECT(dir, "{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[null,{}]}",
           "byte 42: a result must be an object");
    /* A field of the wrong type, deep inside: replace the first "passes":1. */
    char *p = strstr(text, "\"passes\":1");
    CHECK(p != NULL);
    char *typed = malloc(len + 3);
    CHECK(typed != NULL);
    snprintf(typed, len + 3, "%.*s\"passes\":\"1\"%s", (int)(p - text), text, p + 10);
    rejected(dir, typed, len + 2, "\"passes\": must be a number");
    free(typed);
    /* The estimate's estimator, sample count and preempted samples. */
    swapped(dir, text, len, "\"estimator\":\"OLS\"", "\"estimator\":\"XYZ\"",
            "\"estimator\": must be OLS, Theil-Sen, mean, median or empty");
    swapped(dir, text, len, "\"n_fit\":100", "\"n_fit\":999",
            "\"n_fit\": is more than the samples");
    swapped(dir, text, len, "\"iterations\":[10,20,30,", "\"iterations\":[10,{},30,",
            "\"iterations\": must hold numbers");
    swapped(dir, text, len, "\"preempted\":[0,0,0,0,0,1", "\"preempted\":[0,0,0,0,0,2",
            "\"preempted\": must hold 0 or 1 per sample");
    swapped(dir, text, len, "\"n_preempted\":3", "\"n_preempted\":4",
            "\"preempted\": does not agree with n_preempted");
    /* The empty result lists no preempted sample: it cannot count one. */
    swapped(dir, text, len, "\"n_preempted\":0", "\"n_preempted\":5",
            "\"n_preempted\": counts preempted samples but none are listed");
    /* The time estimate's sample count is its unpreempted samples (97 of
     * 100 here), or every sample; an OLS estimate uses every sample. */
    swapped(dir, text, len, "\"n_fit\":97", "\"n_fit\":95",
            "\"n_fit\": does not agree with the preempted samples");
    swapped(dir, text, len, "\"n_fit\":100", "\"n_fit\": 98",
            "\"n_fit\": must be n_samples for an OLS or mean estimate");
    /* The samples must match n_samples. */
    p = strstr(text, "\"n_samples\":100");
    CHECK(p != NULL);
    p[12] = '2';
    rejected(dir, text, len, "\"iterations\": must hold one value per sample");

    /* A missing baseline names its path and what to do. */
    dkb_result *out = NULL;
    size_t n = 0;
    CHECK_INT(dkb_baseline_load(dir, "nothere", &out, &n), ==, DK_EINVAL);
    CHECK_CONTAINS(dkb_last_error(), "nothere.json: cannot open it");
    CHECK_CONTAINS(dkb_last_error(), "--save-baseline");
    CHECK_INT(dkb_baseline_load(dir, "../x", &out, &n), ==, DK_EINVAL);
    CHECK_CONTAINS(dkb_last_error(), "must be non-empty and have no '/'");
    /* An empty results directory is no directory: not the root's "/x.json". */
    CHECK_INT(dkb_baseline_load("", "x", &out, &n), ==, DK_EINVAL);
    CHECK_CONTAINS(dkb_last_error(), "the results directory must not be empty");
    free(text);
    dkb_result_free(&a);
    dkb_result_free(&b);
    cleanup();
}

/* Measured in 3 processes: each measure's estimates and halves (time's
 * 1000.5, 990.25, 1010.125), their summary as the slope, and a change
 * compared by process. */
static void in_processes(dkb_result *r)
{
    static const double spread[3] = {1.0005, 0.99025, 1.010125}, halves[3] = {5, 4.5, 6.25};
    r->n_processes = 3;
    for (size_t i = 0; i < r->n_measures; i++) {
        dkb_measure *m = &r->m[i];
        if (!m->available)
            continue;
        m->proc = doubles(3);
        m->proc_half = doubles(3);
        for (size_t j = 0; j < 3; j++) {
            m->proc[j] = m->slope.point * spread[j];
            m->proc_half[j] = halves[j] * m->slope.point / 1000;
        }
        CHECK(dkb_process_summarize(m->proc, m->proc_half, 3, 0.95, &m->procs));
        m->slope = m->procs.ci;
    }
    r->m[0].change = (dkb_change){{-0.05, -0.02, 0.01}, 0.2, DKB_UNRESOLVED, 0.0625};
    r->m[0].change_by_process = true;
}

TEST_CASE(baseline_of_processes_round_trip_and_errors)
{
    dkb_result a, one;
    dkb_run_info run;
    run_info(&run);
    sample(&a, "grp/procs", 1.0);
    in_processes(&a);
    sample(&one, "grp/one", 1.0);
    one.n_processes = 1;
    snprintf(one.one_process, sizeof one.one_process, "--processes 1");
    one.m[0].change.resolution = 0.002; /* compared by samples: basis "samples" */
    const dkb_result *rs[] = {&a, &one};
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp_path("procs"));
    if (dkb_baseline_save(dir, "p", &run, rs, 2) != 0)
        DKT_FAIL("save: %s", dkb_last_error());
    dkb_result *back = NULL;
    size_t n = 0;
    if (dkb_baseline_load(dir, "p", &back, &n) != 0)
        DKT_FAIL("load: %s", dkb_last_error());
    CHECK_INT(n, ==, 2);
    for (size_t k = 0; k < n; k++) {
        const dkb_result *x = rs[k], *y = &back[k];
        CHECK_INT(y->n_processes, ==, x->n_processes);
        CHECK_STR(y->one_process, x->one_process);
        for (size_t i = 0; i < x->n_measures; i++) {
            const dkb_measure *mx = &x->m[i], *my = &y->m[i];
            same_measure(mx, my, x->n_samples);
            CHECK(my->change_by_process == mx->change_by_process);
            CHECK((my->proc == NULL) == (mx->proc == NULL));
            CHECK((my->proc_half == NULL) == (mx->proc_half == NULL));
            if (mx->proc == NULL)
                continue;
            CHECK(memcmp(my->proc, mx->proc, 3 * sizeof *mx->proc) == 0);
            CHECK(memcmp(my->proc_half, mx->proc_half, 3 * sizeof *mx->proc_half) == 0);
            CHECK(memcmp(&my->procs, &mx->procs, sizeof mx->procs) == 0);
        }
        dkb_result_free(&back[k]);
    }
    free(back);
    CHECK(a.m[0].change.resolution > 0 && one.m[0].change.resolution > 0);

    char path[512];
    snprintf(path, sizeof path, "%s/p.json", dir);
    char *text = slurp(path);
    size_t len = strlen(text);
    CHECK_CONTAINS(text, "\"basis\":\"processes\"");
    CHECK_CONTAINS(text, "\"basis\":\"samples\"");
    swapped(dir, text, len, "\"processes\":3,\"one_process\"", "\"processes\":1001,\"one_process\"",
            "\"processes\": more than 1000 processes");
    swapped(dir, text, len, "\"processes\":3,\"one_process\"", "\"processes\":1,\"one_process\"",
            "\"processes\": is given but the result has fewer than 2 processes");
    swapped(dir, text, len, "\"estimates\":[1000.5,990.25,", "\"estimates\":[1000.5,",
            "\"estimates\": must hold one value per process");
    /* (A number out of a double's range is the JSON reader's error.) */
    swapped(dir, text, len, "\"estimates\":[1000.5,", "\"estimates\":[null,",
            "\"estimates\": must hold finite numbers");
    swapped(dir, text, len, "\"halves\":[5,", "\"halves\":[-5,",
            "\"halves\": must hold finite numbers >= 0");
    swapped(dir, text, len, "\"resolution\":0.0625", "\"resolution\":-0.0625",
            "\"resolution\": must be a number >= 0");
    swapped(dir, text, len, "\"basis\":\"processes\"", "\"basis\":\"threads\"",
            "\"basis\": must be \"processes\", \"pairs\" or \"samples\"");
    free(text);
    dkb_result_free(&a);
    dkb_result_free(&one);
    cleanup();
}

/* A wide object, its members "k0000".."kNNNN" (0), as the document's
 * own members after schema, run and results; with a "dup" member named
 * like member dup_of placed after member at (-1: none). Returns the
 * malloc'ed text; *dup_off is the byte offset of the duplicate's name. */
static char *wide_doc(size_t members, long at, size_t dup_of, size_t *dup_off)
{
    size_t cap = 64 + (members + 1) * 16, o = 0;
    char *t = malloc(cap);
    CHECK(t != NULL);
    o += (size_t)snprintf(t, cap, "{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[]");
    for (size_t i = 0; i < members; i++) {
        o += (size_t)snprintf(t + o, cap - o, ",\"k%04zu\":0", i);
        if ((long)i == at) {
            *dup_off = o + 1;
            o += (size_t)snprintf(t + o, cap - o, ",\"k%04zu\":1", dup_of);
        }
    }
    snprintf(t + o, cap - o, "}");
    return t;
}

/* Duplicate member names are found at any width (a wide object's names
 * are looked up, not compared with every earlier one), at the byte of the
 * first name that repeats an earlier one; distinct names never collide. */
TEST_CASE(baseline_duplicate_members)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp_path("dup"));
    CHECK(mkdir(dir, 0777) == 0);
    char path[512];
    snprintf(path, sizeof path, "%s/wide.json", dir);
    size_t off = 0;
    char *t = wide_doc(5000, -1, 0, &off);
    write_text(path, t, strlen(t));
    free(t);
    dkb_result *out = NULL;
    size_t n = 1;
    if (dkb_baseline_load(dir, "wide", &out, &n) != 0)
        DKT_FAIL("5000 distinct members refused: %s", dkb_last_error());
    CHECK_INT(n, ==, 0);
    free(out);

    static const struct {
        size_t members;
        long at;
        size_t dup_of;
    } cases[] = {
        {3, 2, 0},          {3, 0, 0},       {15, 14, 0},     {16, 15, 3},
        {17, 16, 16},       {64, 63, 0},     {65, 64, 31},    {5000, 4999, 0},
        {5000, 4999, 4999}, {5000, 2500, 1}, {5000, 100, 99},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        t = wide_doc(cases[i].members, cases[i].at, cases[i].dup_of, &off);
        char want[64];
        snprintf(want, sizeof want, "byte %zu: duplicate member name", off);
        rejected(dir, t, strlen(t), want);
        free(t);
    }
    /* The document's own names, and names in a nested object. */
    REJECT(dir, "{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[],\"run\":1}",
           "byte 44: duplicate member name");
    REJECT(dir, "{\"a\":{\"b\":1,\"c\":2,\"b\":3},\"a\":1}", "byte 18: duplicate member name");
    /* The same text written with an escape is the same name. */
    REJECT(dir, "{\"ab\":1,\"a\\u0062\":2}", "byte 8: duplicate member name");
    cleanup();
}

/* A baseline of more results than it may hold in memory is refused
 * before any is read: each takes the same room, however small in the file. */
/* head, then n copies of item separated by commas, then tail (malloc'ed). */
static char *repeated(const char *head, const char *item, size_t n, const char *tail)
{
    size_t lh = strlen(head), li = strlen(item), lt = strlen(tail), o = lh;
    char *t = malloc(lh + n * (li + 1) + lt + 1);
    CHECK(t != NULL);
    memcpy(t, head, lh);
    for (size_t i = 0; i < n; i++) {
        if (i)
            t[o++] = ',';
        memcpy(t + o, item, li);
        o += li;
    }
    memcpy(t + o, tail, lt + 1);
    return t;
}

TEST_CASE(baseline_of_too_many_results)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp_path("many"));
    CHECK(mkdir(dir, 0777) == 0);
    char *t = repeated("{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[", "{}",
                       ((size_t)1 << 30) / sizeof(dkb_result) + 1, "]}");
    rejected(dir, t, strlen(t), "byte 41: document \"results\": more than");
    free(t);
    cleanup();
}

/* A baseline whose values would take more memory than a baseline ever
 * needs is refused while it is read: each value takes the same room in
 * memory however few bytes it fills, and "[[]]," (five bytes: an array
 * with room for 8 values, holding one) takes over 100 times its size. */
TEST_CASE(baseline_of_too_many_values)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp_path("values"));
    CHECK(mkdir(dir, 0777) == 0);
    char *t = repeated("{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[],\"x\":[", "[[]]",
                       (size_t)4 << 20, "]}");
    rejected(dir, t, strlen(t), "more values than a baseline holds (over 1 GiB in memory)");
    free(t);
    cleanup();
}

/* Arrays of numbers (a baseline's samples: one number per sample and
 * measure, most of a baseline) take 8 bytes a number in memory, so that a
 * large baseline fits the bound of baseline_of_too_many_values: 16 million
 * of them (a benchmark of a million samples and seven measures), 32 MB.
 * Arrays that mix numbers with values of other kinds are read whole. */
TEST_CASE(baseline_number_arrays)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp_path("numbers"));
    CHECK(mkdir(dir, 0777) == 0);
    char *t = repeated("{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[],"
                       "\"y\":[1,null,{},\"s\",[2,null,-3e5]],\"x\":[",
                       "0", (size_t)16 << 20, "]}");
    char path[512];
    snprintf(path, sizeof path, "%s/big.json", dir);
    write_text(path, t, strlen(t));
    free(t);
    dkb_result *out = NULL;
    size_t got = 1;
    if (dkb_baseline_load(dir, "big", &out, &got) != 0)
        DKT_FAIL("16 million numbers refused: %s", dkb_last_error());
    CHECK_INT(got, ==, 0);
    free(out);
    cleanup();
}

/* Loads path dir/name.json in a child, which must come back within 10 s
 * with DK_EINVAL naming the path and saying why: opening a FIFO without a
 * writer blocks, and a device or /proc/kmsg may never end. */
static void refused_in_time(const char *dir, const char *name, const char *why)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dkb_result *out = NULL;
        size_t n = 0;
        int rc = dkb_baseline_load(dir, name, &out, &n);
        if (rc == 0)
            DKT_FAIL("%s/%s.json loaded as a baseline", dir, name);
        CHECK_INT(rc, ==, DK_EINVAL);
        CHECK(out == NULL);
        CHECK_CONTAINS(dkb_last_error(), dir);
        CHECK_CONTAINS(dkb_last_error(), why);
        _exit(0);
    }
    int status = 0;
    pid_t got = 0;
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 1000 && (got = waitpid(pid, &status, WNOHANG)) == 0; i++)
        nanosleep(&tick, NULL);
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        DKT_FAIL("loading %s/%s.json (%s) still blocked after 10 s", dir, name, why);
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A baseline that is a FIFO, a device, a directory or a file of a kernel
 * file system is refused before it is read, and opening it does not wait
 * for a writer. (/proc/kmsg stats as a regular file; read, it blocks and
 * takes the kernel's log from its one reader: /proc/self/status stands
 * for it here.) */
TEST_CASE(baseline_not_a_regular_file)
{
    char dir[256], path[512];
    snprintf(dir, sizeof dir, "%s", tmp_path("special"));
    CHECK(mkdir(dir, 0777) == 0);
    snprintf(path, sizeof path, "%s/fifo.json", dir);
    CHECK(mkfifo(path, 0600) == 0);
    refused_in_time(dir, "fifo", "not a regular file (a FIFO)");
    snprintf(path, sizeof path, "%s/zero.json", dir);
    CHECK(symlink("/dev/zero", path) == 0);
    refused_in_time(dir, "zero", "not a regular file (a character device)");
    snprintf(path, sizeof path, "%s/dir.json", dir);
    CHECK(mkdir(path, 0777) == 0);
    refused_in_time(dir, "dir", "not a regular file (a directory)");
#ifdef __linux__
    snprintf(path, sizeof path, "%s/proc.json", dir);
    CHECK(symlink("/proc/self/status", path) == 0);
    refused_in_time(dir, "proc", "on procfs, a kernel file system");
#endif
    cleanup();
}

/* A baseline saved before "n_fit" was written holds the Theil-Sen time
 * estimate and its preempted samples: the estimate used the unpreempted
 * ones, and so must the change against it. */
TEST_CASE(baseline_without_n_fit_leaves_out_the_preempted_samples)
{
    dkb_result a, b;
    dkb_run_info run;
    run_info(&run);
    two_results(&a, &b);
    const dkb_result *rs[] = {&a, &b};
    char dir[256];
    snprintf(dir, sizeof dir, "%s", tmp_path("bl-old"));
    CHECK(dkb_baseline_save(dir, "new", &run, rs, 2) == 0);
    char path[512];
    snprintf(path, sizeof path, "%s/new.json", dir);
    char *text = slurp(path);
    /* Every "n_fit":N, member out, as the older writer had it. */
    size_t len = strlen(text), out = 0;
    for (size_t i = 0; i < len;) {
        if (strncmp(text + i, "\"n_fit\":", 8) == 0) {
            i += 8;
            while (text[i] != ',')
                i++;
            i++;
        } else {
            text[out++] = text[i++];
        }
    }
    text[out] = '\0';
    CHECK(strstr(text, "n_fit") == NULL);
    snprintf(path, sizeof path, "%s/old.json", dir);
    write_text(path, text, out);
    free(text);
    dkb_result *back = NULL;
    size_t n = 0;
    if (dkb_baseline_load(dir, "old", &back, &n) != 0)
        DKT_FAIL("load: %s", dkb_last_error());
    CHECK_INT(n, ==, 2);
    CHECK_STR(back[0].m[0].estimator, "Theil-Sen");
    CHECK_INT(back[0].m[0].n_fit, ==, N - 3);
    CHECK(!dkb_sample_in_fit(&back[0], &back[0].m[0], 5));
    CHECK(dkb_sample_in_fit(&back[0], &back[0].m[0], 6));
    CHECK_INT(back[0].m[1].n_fit, ==, N);
    for (size_t k = 0; k < n; k++)
        dkb_result_free(&back[k]);
    free(back);
    dkb_result_free(&a);
    dkb_result_free(&b);
}
