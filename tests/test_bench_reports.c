/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_reports.c - libdkbench's reports and baselines on results
 * filled by hand with known values: every file format read back by a strict
 * parser (check_bench_reports.py: python's json, csv and XML parsers), the
 * terminal block's words, baselines round-tripped and malformed ones
 * rejected with the file and byte offset, write errors reported.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/compare.h"
#include "common/error.h"
#include "bench/model.h"
#include "bench/report.h"
#include "check.h"

#define N 100
/* Every character a report must escape, and a non-ASCII one. */
#define NAME "grp/fib \"20\" <&> ,x|`*\n\t\xC2\xB5"

static double *doubles(size_t n)
{
    double *d = calloc(n, sizeof *d);
    CHECK(d != NULL);
    return d;
}

static void measure(dkb_result *r, size_t j, const char *name, double per_iter, double intercept)
{
    dkb_measure *m = &r->m[j];
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->unit, sizeof m->unit, "%s", j == 0 ? "ns" : "");
    m->available = true;
    m->y = doubles(r->n_samples);
    m->outlier_class = calloc(r->n_samples, 1);
    CHECK(m->outlier_class != NULL);
    for (size_t i = 0; i < r->n_samples; i++) {
        /* A small deterministic wobble, and three high outliers. */
        double wobble = 1 + 0.002 * ((double)((i * 7) % 5) - 2);
        m->y[i] = intercept + per_iter * r->iterations[i] * wobble;
    }
    m->y[10] *= 1.3, m->y[40] *= 1.3, m->y[70] *= 2.5;
    m->outlier_class[10] = m->outlier_class[40] = DKB_OUTLIER_HIGH_MILD;
    m->outlier_class[70] = DKB_OUTLIER_HIGH_SEVERE;
    m->fit = (dkb_fit){per_iter, intercept, 0.9987};
    m->slope = (dkb_interval){per_iter, per_iter * 0.99, per_iter * 1.01};
    m->per_iter = (dkb_summary){per_iter * 1.02, per_iter, per_iter * 0.01, per_iter * 0.05,
                                per_iter * 0.99, per_iter * 2.5,
                                {per_iter * 1.02, per_iter * 1.0, per_iter * 1.04}};
    m->outliers = (dkb_outliers){0, 0, 2, 1, per_iter * 0.9, per_iter * 0.95, per_iter * 1.05,
                                 per_iter * 1.1};
    snprintf(m->estimator, sizeof m->estimator, "%s", j == 0 ? "Theil-Sen" : "OLS");
    m->ols_slope = (dkb_interval){per_iter * 1.001, per_iter * 0.98, per_iter * 1.02};
    m->n_fit = j == 0 ? r->n_samples - 3 : r->n_samples;
}

/* A result of N samples: time 1000 ns per iteration, 2000 instructions,
 * 1000 cycles, 400 branches, 8 branch misses; cache-misses unavailable. */
static void sample(dkb_result *r, const char *name, double scale)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->group, sizeof r->group, "grp");
    r->n_samples = N;
    r->iterations = doubles(N);
    for (size_t i = 0; i < N; i++)
        r->iterations[i] = 10.0 * (double)(i + 1);
    r->n_measures = 6;
    measure(r, 0, "time", 1000 * scale, 500);
    measure(r, 1, "instructions", 2000, 40);
    measure(r, 2, "cycles", 1000 * scale, 30);
    measure(r, 3, "branches", 400, 4);
    measure(r, 4, "branch-misses", 8, 1);
    snprintf(r->m[5].name, sizeof r->m[5].name, "cache-misses");
    snprintf(r->m[5].why, sizeof r->m[5].why, "no counter left, it is measured in the next pass only on M1");
    r->m[0].has_change = true;
    r->m[0].change = (dkb_change){{-0.052, -0.063, -0.041}, 0.001, DKB_IMPROVED};
    r->m[0].baseline_slope = 1052;
    r->passes = 1;
    r->throughput_kind = DKB_THROUGHPUT_BYTES;
    r->throughput_per_iter = 4096;
    snprintf(r->stop_reason, sizeof r->stop_reason, "precision reached: CI half-width 0.9%% < 1%%");
    r->warmup_s = 1.5;
    r->measure_s = 3.25;
    r->n_levels = 2;
    snprintf(r->level_name[0], sizeof r->level_name[0], "P");
    snprintf(r->level_name[1], sizeof r->level_name[1], "E");
    r->level_cycle_share[0] = 0.92;
    r->level_cycle_share[1] = 0.08;
    r->moved_levels = true;
    /* Three samples preempted (left out of the time answer: n_fit above). */
    r->switches_counted = true;
    r->preempted = calloc(N, 1);
    CHECK(r->preempted != NULL);
    r->preempted[5] = r->preempted[50] = r->preempted[95] = 1;
    r->n_preempted = 3;
}

static void run_info(dkb_run_info *run)
{
    memset(run, 0, sizeof *run);
    snprintf(run->backend, sizeof run->backend, "kperf");
    snprintf(run->cpu, sizeof run->cpu, "Apple M1 <\"Firestorm\">");
    snprintf(run->date, sizeof run->date, "2026-01-02T03:04:05Z");
    snprintf(run->host, sizeof run->host, "host&1");
    run->seed = 0xFFFFFFFFFFFFFFF1ull;
    run->noise_threshold = 0.01;
    run->target_precision = 0.01;
    snprintf(run->baseline, sizeof run->baseline, "main");
}

/* A text written by a report through an in-memory stream. */
typedef int (*render_fn)(FILE *, const dkb_run_info *, const dkb_result *const *, size_t);

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    char *buf = malloc(1 << 20);
    CHECK(buf != NULL);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static char tmpdir[512];

static void cleanup(void)
{
    char cmd[600];
    if (tmpdir[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        tmpdir[0] = 0;
        CHECK(system(cmd) == 0);
    }
}

/* A file in a folder of this case's own under $TMPDIR, removed by the case
 * or, when a check fails first, at exit. */
static const char *tmp_path(const char *file)
{
    static char path[600];
    static bool registered;
    if (tmpdir[0] == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s/dkb-reports-XXXXXX", t != NULL && *t ? t : "/tmp");
        CHECK(mkdtemp(tmpdir) != NULL);
        if (!registered)
            atexit(cleanup);
        registered = true;
    }
    snprintf(path, sizeof path, "%s/%s", tmpdir, file);
    return path;
}

/* Run the strict parser of check_bench_reports.py on a file. */
static void strict_parse(const char *format, const char *path, const char *extra)
{
    const char *script = getenv("DKB_REPORT_CHECK");
    if (script == NULL)
        SKIP("DKB_REPORT_CHECK (check_bench_reports.py) not set");
    if (system("python3 -c '' 2>/dev/null") != 0)
        SKIP("python3 is not installed");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 '%s' %s '%s' %s", script, format, path, extra ? extra : "");
    int rc = system(cmd);
    if (rc != 0)
        DKT_FAIL("%s: the %s report did not pass its strict parser (status %d)", path, format, rc);
}

static void write_file(const char *path, render_fn fn, const dkb_result *const *rs, size_t n)
{
    dkb_run_info run;
    run_info(&run);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    int rc = fn(f, &run, rs, n);
    if (rc != 0)
        DKT_FAIL("report: %s", dkb_last_error());
    CHECK(fclose(f) == 0);
}

/* Two results; the second with an unmeasured time (no samples). */
static void two_results(dkb_result *a, dkb_result *b)
{
    sample(a, NAME, 1.0);
    sample(b, "grp/empty", 1.0);
    dkb_result_free(b);
    b->n_samples = 0;
    b->n_measures = 1;
    b->m[0].n_fit = 0;
    b->n_preempted = 0;
    b->m[0].available = false;
    snprintf(b->m[0].why, sizeof b->m[0].why, "the benchmark returned before one iteration");
}

static void check_format(const char *format, render_fn fn)
{
    dkb_result a, b;
    two_results(&a, &b);
    const dkb_result *rs[] = {&a, &b};
    char file[64];
    snprintf(file, sizeof file, "report.%s", format);
    const char *path = tmp_path(file);
    write_file(path, fn, rs, 2);
    strict_parse(format, path, NULL);
    dkb_result_free(&a);
    dkb_result_free(&b);
    cleanup();
}

TEST_CASE(json_parses_strictly) { check_format("json", dkb_report_json); }
TEST_CASE(csv_parses_strictly) { check_format("csv", dkb_report_csv); }
TEST_CASE(markdown_table_is_regular) { check_format("md", dkb_report_markdown); }
TEST_CASE(gbench_json_has_google_benchmark_layout) { check_format("gbench", dkb_report_gbench); }

static int html_no_base(FILE *f, const dkb_run_info *run, const dkb_result *const *rs, size_t n)
{
    return dkb_report_html(f, run, rs, NULL, n);
}

TEST_CASE(html_is_well_formed)
{
    check_format("html", html_no_base);
}

/* The sample report check_bench_html.sh renders: a benchmark with its
 * baseline overlaid. Written to $DKB_SAMPLE_HTML when set. */
TEST_CASE(html_with_baseline_overlay)
{
    dkb_result a, base, b;
    dkb_run_info run;
    run_info(&run);
    two_results(&a, &b);
    sample(&base, NAME, 1.06);
    const dkb_result *rs[] = {&a, &b};
    const dkb_result *bs[] = {&base, NULL};
    const char *path = getenv("DKB_SAMPLE_HTML") ? getenv("DKB_SAMPLE_HTML") : tmp_path("base.html");
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    int rc = dkb_report_html(f, &run, rs, bs, 2);
    if (rc != 0)
        DKT_FAIL("html: %s", dkb_last_error());
    CHECK(fclose(f) == 0);
    strict_parse("html", path, "baseline");
    dkb_result_free(&a);
    dkb_result_free(&b);
    dkb_result_free(&base);
    cleanup();
}

static char *terminal(const dkb_result *r, bool color, bool verbose)
{
    char *buf = NULL;
    size_t len = 0;
    dkb_run_info run;
    run_info(&run);
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    int rc = dkb_report_terminal(f, &run, r, color, verbose);
    if (rc != 0)
        DKT_FAIL("terminal: %s", dkb_last_error());
    CHECK(fclose(f) == 0);
    return buf;
}

TEST_CASE(terminal_block)
{
    dkb_result r;
    sample(&r, "fib/20", 1.0);
    char *t = terminal(&r, false, false);
    fputs(t, stderr);
    CHECK(strncmp(t, "fib/20\n", 7) == 0);
    CHECK_CONTAINS(t, "time:              [0.9900 \xC2\xB5s 1.0000 \xC2\xB5s 1.0100 \xC2\xB5s]");
    CHECK_CONTAINS(t, "instructions:      [1980 2000 2020]");
    CHECK_CONTAINS(t, "insn per cycle:    2.00");
    CHECK_CONTAINS(t, "branch-miss rate:  2.00%");
    /* 4096 B in 1010, 1000, 990 ns. */
    CHECK_CONTAINS(t, "thrpt:             [3.777 GiB/s 3.815 GiB/s 3.853 GiB/s]");
    CHECK_CONTAINS(t, "change (time):     [-6.30% -5.20% -4.10%] (p = 0.00 < 0.05)");
    CHECK_CONTAINS(t, "Performance has improved.");
    CHECK_CONTAINS(t, "Found 3 outliers among 100 measurements (3.00%): 2 high mild, 1 high severe");
    CHECK_CONTAINS(t, "stopped: precision reached: CI half-width 0.9% < 1%");
    CHECK_CONTAINS(t, "cycles by level: P 92.0%, E 8.0%");
    CHECK_CONTAINS(t, "warning: the benchmark ran on more than one performance level");
    /* The reason an event is not measured is said once per run: a block
     * names the event, and repeats the reason only when verbose. */
    CHECK_CONTAINS(t, "not measured:      cache-misses (why: said above");
    CHECK(strstr(t, "no counter left") == NULL);
    CHECK(strstr(t, "\x1b[") == NULL);
    CHECK(strstr(t, "R\xC2\xB2") == NULL);
    free(t);

    t = terminal(&r, true, true);
    CHECK_CONTAINS(t, "\x1b[32mPerformance has improved.\x1b[0m");
    CHECK_CONTAINS(t, "R\xC2\xB2 = 0.9987, intercept 500 ns");
    CHECK_CONTAINS(t, "fences (time):");
    CHECK_CONTAINS(t, "cache-misses:      not measured: no counter left");
    free(t);

    r.m[0].change.verdict = DKB_REGRESSED;
    r.m[0].change.rel = (dkb_interval){0.05, 0.04, 0.06};
    t = terminal(&r, true, false);
    CHECK_CONTAINS(t, "[+4.00% +5.00% +6.00%]");
    CHECK_CONTAINS(t, "\x1b[31mPerformance has regressed.\x1b[0m");
    free(t);
    r.m[0].change.verdict = DKB_NO_CHANGE;
    r.m[0].change.p_value = 0.32;
    t = terminal(&r, true, false);
    CHECK_CONTAINS(t, "(p = 0.32 >= 0.05)");
    CHECK_CONTAINS(t, "No change in performance detected.");
    free(t);
    r.m[0].change.verdict = DKB_WITHIN_NOISE;
    t = terminal(&r, false, false);
    CHECK_CONTAINS(t, "Change within noise threshold.");
    free(t);

    /* Scaled units: 25 ms per iteration, 12,345,678 and 1.5e9 counts. */
    r.m[0].slope = (dkb_interval){25e6, 24e6, 26e6};
    r.m[1].slope = (dkb_interval){1234567, 12345.4, 1.5e9};
    r.throughput_kind = DKB_THROUGHPUT_ELEMENTS;
    r.throughput_per_iter = 1000;
    t = terminal(&r, false, false);
    CHECK_CONTAINS(t, "time:              [24.000 ms 25.000 ms 26.000 ms]");
    CHECK_CONTAINS(t, "instructions:      [12,345 1,234,567 1.5 G]");
    CHECK_CONTAINS(t, "thrpt:             [38.46 Kelem/s 40 Kelem/s 41.67 Kelem/s]");
    free(t);
    dkb_result_free(&r);
}

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
        CHECK(memcmp(&a->change, &b->change, sizeof a->change) == 0);
        CHECK(a->baseline_slope == b->baseline_slope);
    }
}

TEST_CASE(terminal_names_the_samples_of_the_time_answer)
{
    dkb_result r;
    sample(&r, "fib/20", 1.0);
    snprintf(r.m[0].estimator, sizeof r.m[0].estimator, "Theil-Sen");
    r.switches_counted = true;
    r.n_preempted = 30;
    r.m[0].n_fit = 70;
    char *t = terminal(&r, false, false);
    CHECK_CONTAINS(t, "Theil-Sen slope of 70 samples; 30 preempted (context switch) left out of it");
    free(t);
    /* Too few clean samples: the answer is of every sample, and says so. */
    r.n_preempted = 97;
    r.m[0].n_fit = N;
    t = terminal(&r, false, false);
    CHECK(strstr(t, "left out of it") == NULL);
    CHECK_CONTAINS(t, "Theil-Sen slope of all 100 samples: 97 preempted (context switch), too many "
                      "to leave out");
    free(t);
    dkb_result_free(&r);
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
        DKT_FAIL("accepted a malformed baseline (%zu bytes): %.*s", len, (int)(len < 200 ? len : 200), text);
    CHECK_INT(rc, ==, DK_EINVAL);
    CHECK(out == NULL);
    CHECK_CONTAINS(dkb_last_error(), path);
    CHECK_CONTAINS(dkb_last_error(), ": byte ");
    if (why)
        CHECK_CONTAINS(dkb_last_error(), why);
}

#define REJECT(dir, lit, why) rejected(dir, lit, sizeof lit - 1, why)

/* The text with its first `from` replaced by `to` (same length) is rejected
 * with `why`. */
static void swapped(const char *dir, const char *text, size_t len, const char *from, const char *to,
                    const char *why)
{
    CHECK_INT(strlen(from), ==, strlen(to));
    const char *at = strstr(text, from);
    if (at == NULL)
        DKT_FAIL("the saved baseline has no %s", from);
    char *copy = malloc(len + 1);
    CHECK(copy != NULL);
    memcpy(copy, text, len + 1);
    memcpy(copy + (at - text), to, strlen(to));
    rejected(dir, copy, len, why);
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
    REJECT(dir, "{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[{}]}", "result \"name\": missing");
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
            "\"estimator\": must be OLS, Theil-Sen, mean or empty");
    swapped(dir, text, len, "\"n_fit\":100", "\"n_fit\":999", "\"n_fit\": is more than the samples");
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
    free(text);
    dkb_result_free(&a);
    dkb_result_free(&b);
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

    static const struct { size_t members; long at; size_t dup_of; } cases[] = {
        {3, 2, 0},       {3, 0, 0},       {15, 14, 0},    {16, 15, 3},     {17, 16, 16},
        {64, 63, 0},     {65, 64, 31},    {5000, 4999, 0}, {5000, 4999, 4999}, {5000, 2500, 1},
        {5000, 100, 99},
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

/* What fn writes for rs, as a string (malloc'ed). */
static char *rendered(render_fn fn, const dkb_run_info *run, const dkb_result *const *rs, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    CHECK(fn(f, run, rs, n) == 0);
    CHECK(fclose(f) == 0);
    return buf;
}

/* How often needle occurs in s. */
static size_t occurrences(const char *s, const char *needle)
{
    size_t k = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        k++;
    return k;
}

/* Without a PMU every benchmark's hardware events are unavailable, each
 * with a message naming its own event: the HTML and Markdown reports say
 * the reason once, naming the events once, and a second reason on a line
 * of its own; the rows say <not supported>. */
TEST_CASE(unavailable_events_said_once_per_report)
{
    static const char pmu[] = "not supported here: no hardware PMU is visible";
    const char *hw[] = {"instructions", "cycles", "branches", "branch-misses"};
    const char *native[] = {"instructions", "cpu-cycles", "branch-instructions", "branch-misses"};
    dkb_result a, b;
    dkb_run_info run;
    run_info(&run);
    sample(&a, "sum/forward", 1.0);
    sample(&b, "sum/strided", 2.0);
    for (dkb_result *r = &a; r != NULL; r = r == &a ? &b : NULL)
        for (size_t j = 1; j <= 4; j++) {
            r->m[j].available = false;
            snprintf(r->m[j].name, sizeof r->m[j].name, "%s", hw[j - 1]);
            snprintf(r->m[j].why, sizeof r->m[j].why, "DK_EUNAVAILABLE: event %s is %s",
                     native[j - 1], pmu);
        }
    const dkb_result *rs[] = {&a, &b};
    char *html = rendered(html_no_base, &run, rs, 2);
    CHECK_INT((int)occurrences(html, "no hardware PMU"), ==, 1);
    CHECK_CONTAINS(html, "<li>instructions, cycles, branches, branch-misses: not supported here: "
                         "no hardware PMU is visible</li>");
    CHECK_INT((int)occurrences(html, "no counter left"), ==, 1);
    CHECK_CONTAINS(html, "<li>cache-misses: no counter left");
    CHECK_INT((int)occurrences(html, "<td colspan=\"11\" class=\"why\">&lt;not supported&gt;</td>"), ==, 10);
    free(html);
    char *md = rendered(dkb_report_markdown, &run, rs, 2);
    CHECK_INT((int)occurrences(md, "no hardware PMU"), ==, 1);
    CHECK_CONTAINS(md, "\n- instructions, cycles, branches, branch-misses: not supported here: "
                       "no hardware PMU is visible\n");
    CHECK_INT((int)occurrences(md, " \\<not supported\\> |"), ==, 10);
    free(md);
    /* When no counters could be opened at all, that reason alone. */
    run_info(&run);
    snprintf(run.backend, sizeof run.backend, "none");
    snprintf(run.why_no_counters, sizeof run.why_no_counters, "no counters could be opened");
    html = rendered(html_no_base, &run, rs, 2);
    CHECK_INT((int)occurrences(html, "<li>"), ==, 1);
    CHECK_CONTAINS(html, "<li>no counters could be opened</li>");
    free(html);
    dkb_result_free(&a);
    dkb_result_free(&b);
}

/* A name that is not UTF-8 still gives valid UTF-8 files: U+FFFD. */
TEST_CASE(invalid_utf8_names_replaced)
{
    dkb_result r;
    dkb_run_info run;
    run_info(&run);
    sample(&r, "bad\xff\xC0\x80name\xE2\x82", 1.0);
    const dkb_result *rs[] = {&r};
    render_fn fns[] = {dkb_report_json, dkb_report_csv, dkb_report_markdown, dkb_report_gbench,
                       html_no_base};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        char *buf = rendered(fns[i], &run, rs, 1);
        CHECK_CONTAINS(buf, "bad\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBDname\xEF\xBF\xBD\xEF\xBF\xBD");
        CHECK(strchr(buf, '\xff') == NULL && strstr(buf, "\xC0\x80") == NULL);
        free(buf);
    }
    dkb_result_free(&r);
}

static int terminal_one(FILE *f, const dkb_run_info *run, const dkb_result *const *rs, size_t n)
{
    (void)n;
    return dkb_report_terminal(f, run, rs[0], false, true);
}

/* Names, reasons and levels with terminal escapes, as a result loaded from
 * a baseline may hold them: the terminal, Markdown and CSV reports print no
 * raw control byte (the layout's own newlines aside; CSV's \r\n too). */
TEST_CASE(control_characters_in_names_are_escaped)
{
    const char *hostile = "x\x1b]0;TITLE\x07\r\t\n\x7f\xc2\x9b[2J\xff\xc0\xaf\xed\xa0\x80"
                          "\xe2\x80\xae" "gnp.exe";
    dkb_result r;
    dkb_run_info run;
    run_info(&run);
    sample(&r, hostile, 1.0);
    snprintf(r.m[1].name, sizeof r.m[1].name, "%s", hostile);
    r.m[5].available = false;
    snprintf(r.m[5].why, sizeof r.m[5].why, "%s", hostile);
    snprintf(r.stop_reason, sizeof r.stop_reason, "%s", hostile);
    r.n_levels = 1;
    snprintf(r.level_name[0], sizeof r.level_name[0], "%s", "P\x1b[2J\x07\xc2\x9b");
    r.level_cycle_share[0] = 1;
    for (int verbose = 0; verbose < 2; verbose++) {
        char *t = terminal(&r, false, verbose);
        CHECK_CONTAINS(t, "x\\x1b]0;TITLE\\x07\\x0d\\x09\\x0a\\x7f\\xc2\\x9b[2J\\xff\\xc0\\xaf");
        CHECK_NO_RAW_CONTROLS(t, 0);
        free(t);
    }
    const dkb_result *rs[] = {&r};
    render_fn fns[] = {dkb_report_csv, dkb_report_markdown, terminal_one, dkb_report_json,
                       dkb_report_gbench, html_no_base};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        char *buf = rendered(fns[i], &run, rs, 1);
        /* CSV's line ends are \r\n: those of its layout only. */
        for (char *c = buf; i == 0 && (c = strstr(c, "\r\n")) != NULL; c += 2)
            *c = ' ';
        CHECK_NO_RAW_CONTROLS(buf, 0);
        free(buf);
    }
    dkb_result_free(&r);
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


TEST_CASE(write_errors_reported)
{
    struct {
        const char *name;
        render_fn fn;
    } formats[] = {{"terminal", terminal_one}, {"JSON", dkb_report_json},
                   {"CSV", dkb_report_csv},    {"Markdown", dkb_report_markdown},
                   {"google benchmark JSON", dkb_report_gbench}, {"HTML", html_no_base}};
    dkb_result a, b;
    dkb_run_info run;
    run_info(&run);
    two_results(&a, &b);
    const dkb_result *rs[] = {&a, &b};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        FILE *f = fopen("/dev/full", "w");
        if (f == NULL)
            SKIP("/dev/full: %s", strerror(errno));
        int rc = formats[i].fn(f, &run, rs, 2);
        fclose(f);
        if (rc != DK_EOS)
            DKT_FAIL("%s report to /dev/full returned %d (%s)", formats[i].name, rc, dkb_last_error());
        CHECK_CONTAINS(dkb_last_error(), formats[i].name);
        CHECK_CONTAINS(dkb_last_error(), "writing failed (No space left on device)");
    }
    /* A baseline that cannot be written leaves nothing behind. */
    CHECK_INT(dkb_baseline_save("/dev/full/x", "main", &run, rs, 2), ==, DK_EOS);
    CHECK_CONTAINS(dkb_last_error(), "/dev/full/x");
    dkb_result_free(&a);
    dkb_result_free(&b);
}

/* A result of one exact-count measure and time on its own iteration
 * schedule: yᵢ = intercept + per_iter · xᵢ · (1 + wobbleᵢ). */
static void line_result(dkb_result *r, double step, double intercept, double per_iter,
                        double wobble)
{
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "line");
    r->n_samples = 40;
    r->iterations = doubles(r->n_samples);
    r->n_measures = 2;
    for (size_t j = 0; j < 2; j++) {
        dkb_measure *m = &r->m[j];
        snprintf(m->name, sizeof m->name, "%s", j == 0 ? "time" : "instructions");
        m->available = true;
        m->y = doubles(r->n_samples);
        for (size_t i = 0; i < r->n_samples; i++) {
            r->iterations[i] = step * (double)(i + 1);
            double w = j == 0 ? wobble * ((double)((i * 7) % 5) - 2) : 0;
            m->y[i] = intercept + per_iter * r->iterations[i] * (1 + w);
        }
        m->fit = (dkb_fit){per_iter, intercept, 1};
        m->slope = (dkb_interval){per_iter, per_iter, per_iter};
        m->n_fit = r->n_samples;
        snprintf(m->estimator, sizeof m->estimator, "%s", j == 0 ? "Theil-Sen" : "OLS");
    }
}

/* Two runs of the same code on different iteration counts: a per-sample
 * cost (the counter reads) spread over fewer iterations is not a change
 * of the per-iteration cost. */
TEST_CASE(change_is_of_the_per_iteration_cost_not_the_per_sample_cost)
{
    dkb_result old, cur;
    line_result(&old, 10, 50000, 2000, 0.002);
    line_result(&cur, 37, 50000, 2000, 0.002);
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 1000, 7), ==, 2);
    const dkb_measure *ins = &cur.m[1];
    CHECK(ins->has_change);
    /* Exact counts on the same line: no change at all. */
    CHECK(ins->change.rel.point == 0);
    CHECK_INT(ins->change.verdict, ==, DKB_NO_CHANGE);
    CHECK(ins->baseline_slope == 2000);
    CHECK(fabs(cur.m[0].change.rel.point) < 0.002);
    CHECK(cur.m[0].change.verdict != DKB_REGRESSED && cur.m[0].change.verdict != DKB_IMPROVED);
    /* A real 5% increase of the per-iteration cost is found. */
    dkb_result slower;
    line_result(&slower, 37, 50000, 2100, 0.002);
    dkb_compare_baseline(&slower, &old, 0.01, 1000, 7);
    CHECK_INT(slower.m[1].change.verdict, ==, DKB_REGRESSED);
    CHECK(fabs(slower.m[1].change.rel.point - 0.05) < 1e-9);
    CHECK_INT(slower.m[0].change.verdict, ==, DKB_REGRESSED);
    dkb_result_free(&old);
    dkb_result_free(&cur);
    dkb_result_free(&slower);
}

/* Samples a disturbance moved that were not seen as preempted (the backend
 * does not count switches, or an interrupt or the host took the time): the
 * Theil-Sen answer ignores them, and so must the change of that answer.
 * The same code run twice, the baseline with 4 of its 40 samples late by
 * 0.2 to 0.8 ms, is no change, not a 30% improvement. */
TEST_CASE(change_of_time_is_not_moved_by_disturbed_samples_the_answer_ignores)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    for (size_t i = 1; i < old.n_samples; i += 10)
        old.m[0].y[i] += 2e5 * (double)(1 + i % 4);
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 1000, 7), ==, 2);
    CHECK(fabs(cur.m[0].change.rel.point) < 0.01);
    CHECK(cur.m[0].change.verdict != DKB_IMPROVED && cur.m[0].change.verdict != DKB_REGRESSED);
    /* And the other way round: disturbed samples in the new run. */
    dkb_result_free(&cur);
    line_result(&cur, 10, 300, 50, 0.002);
    dkb_result clean;
    line_result(&clean, 10, 300, 50, 0.002);
    CHECK_INT(dkb_compare_baseline(&old, &clean, 0.01, 1000, 7), ==, 2);
    CHECK(fabs(old.m[0].change.rel.point) < 0.01);
    CHECK(old.m[0].change.verdict != DKB_IMPROVED && old.m[0].change.verdict != DKB_REGRESSED);
    /* A real 5% slower body is still found. */
    dkb_result slower;
    line_result(&slower, 10, 300, 52.5, 0.002);
    for (size_t i = 1; i < slower.n_samples; i += 10)
        slower.m[0].y[i] += 2e5 * (double)(1 + i % 4);
    CHECK_INT(dkb_compare_baseline(&slower, &clean, 0.01, 1000, 7), ==, 2);
    CHECK(fabs(slower.m[0].change.rel.point - 0.05) < 0.005);
    CHECK_INT(slower.m[0].change.verdict, ==, DKB_REGRESSED);
    dkb_result_free(&old);
    dkb_result_free(&cur);
    dkb_result_free(&clean);
    dkb_result_free(&slower);
}

/* A third of the new run's samples made 20% slower by a neighbour, none
 * seen as preempted: the Theil-Sen answer (a median of pair slopes) is
 * not moved by them, and the change of that answer, of medians, is not
 * either. The means differ by about 7%; severe fences do not help here,
 * as a third of the values widens them. The instruction counts (OLS,
 * means) are exact and equal: no change. */
/* Every third sample's time above the intercept (300) made 20% longer. */
static void slow_every_third(dkb_result *r)
{
    for (size_t i = 0; i < r->n_samples; i += 3)
        r->m[0].y[i] = 300 + (r->m[0].y[i] - 300) * 1.2;
}

TEST_CASE(change_of_time_is_not_moved_by_a_disturbed_third_of_the_samples)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    slow_every_third(&cur);
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 2000, 7), ==, 2);
    fprintf(stderr, "time change %.4f [%.4f, %.4f] %s\n", cur.m[0].change.rel.point,
            cur.m[0].change.rel.lo, cur.m[0].change.rel.hi,
            dkb_verdict_name(cur.m[0].change.verdict));
    CHECK(fabs(cur.m[0].change.rel.point) < 0.01);
    CHECK(cur.m[0].change.verdict != DKB_IMPROVED && cur.m[0].change.verdict != DKB_REGRESSED);
    CHECK_INT(cur.m[1].change.verdict, ==, DKB_NO_CHANGE);
    /* A real 5% slower body, disturbed alike, is still found. */
    dkb_result slower;
    line_result(&slower, 10, 300, 52.5, 0.002);
    slow_every_third(&slower);
    CHECK_INT(dkb_compare_baseline(&slower, &old, 0.01, 2000, 7), ==, 2);
    CHECK(fabs(slower.m[0].change.rel.point - 0.05) < 0.01);
    CHECK_INT(slower.m[0].change.verdict, ==, DKB_REGRESSED);
    dkb_result_free(&old);
    dkb_result_free(&cur);
    dkb_result_free(&slower);
}

/* Runs of 3 samples (--samples 3): a median's bootstrap of so few values
 * is too narrow to test, so the time is not compared and the reason says
 * how many values there were; the instructions (means) still are. */
TEST_CASE(change_of_time_needs_five_values_a_side)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    old.n_samples = cur.n_samples = 3;
    old.m[0].n_fit = old.m[1].n_fit = cur.m[0].n_fit = cur.m[1].n_fit = 3;
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 1000, 7), ==, 1);
    CHECK(!cur.m[0].has_change);
    CHECK_STR(cur.m[0].no_change, "3 baseline values; at least 5 are needed");
    CHECK(cur.m[1].has_change);
    dkb_result_free(&old);
    dkb_result_free(&cur);
}

/* The time answer leaves preempted samples out; so does its change. */
TEST_CASE(change_of_time_leaves_out_the_preempted_samples)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    cur.switches_counted = true;
    cur.preempted = calloc(cur.n_samples, 1);
    CHECK(cur.preempted != NULL);
    for (size_t i = 3; i < cur.n_samples; i += 8) {
        cur.preempted[i] = 1;
        cur.n_preempted++;
        cur.m[0].y[i] += 2e6; /* 2 ms switched out */
    }
    cur.m[0].n_fit = cur.n_samples - cur.n_preempted;
    dkb_fit line;
    CHECK(dkb_headline_line(&cur, &cur.m[0], &line));
    CHECK(fabs(line.intercept - 300) < 5);
    CHECK(line.slope == 50);
    size_t k = 0;
    double *v = dkb_change_values(&cur, &cur.m[0], &k);
    CHECK(v != NULL);
    CHECK_INT(k, ==, cur.n_samples - cur.n_preempted);
    free(v);
    CHECK_INT(dkb_compare_baseline(&cur, &old, 0.01, 1000, 7), ==, 2);
    CHECK(fabs(cur.m[0].change.rel.point) < 0.002);
    CHECK(cur.m[0].change.verdict != DKB_REGRESSED);
    /* Every sample counts when too few were left clean (n_fit = all); the
     * 2 ms ones, an eighth of them, move the medians the change compares
     * as little as they move the median slope, so the change still follows
     * the answer. */
    cur.m[0].n_fit = cur.n_samples;
    CHECK(dkb_sample_in_fit(&cur, &cur.m[0], 3));
    dkb_compare_baseline(&cur, &old, 0.01, 1000, 7);
    CHECK(fabs(cur.m[0].change.rel.point) < 0.01);
    dkb_result_free(&old);
    dkb_result_free(&cur);
}

/* The scatter plot draws the line of the estimate the table gives: the
 * Theil-Sen time answer, even when the OLS fit is undefined. */
TEST_CASE(html_scatter_draws_the_headline_line)
{
    dkb_result r;
    line_result(&r, 10, 300, 50, 0.002);
    r.m[0].fit = (dkb_fit){NAN, NAN, NAN};
    dkb_run_info run;
    run_info(&run);
    const dkb_result *rs[] = {&r};
    char *mem = NULL;
    size_t mlen = 0;
    FILE *f = open_memstream(&mem, &mlen);
    CHECK(f != NULL);
    CHECK(dkb_report_html(f, &run, rs, NULL, 1) == 0);
    CHECK(fclose(f) == 0);
    size_t lines = 0;
    for (const char *p = mem; (p = strstr(p, "<line class=\"fit\"")) != NULL; p++)
        lines++;
    CHECK_INT(lines, ==, 2);
    free(mem);
    dkb_result_free(&r);
}

/* A baseline value that is not a number (null in the file): the time
 * answer's line has no intercept, and no change is computed from it. */
TEST_CASE(a_null_time_value_gives_no_headline_line)
{
    dkb_result old, cur;
    line_result(&old, 10, 300, 50, 0.002);
    line_result(&cur, 10, 300, 50, 0.002);
    old.m[0].y[7] = NAN;
    dkb_fit line;
    CHECK(!dkb_headline_line(&old, &old.m[0], &line));
    CHECK(dkb_headline_line(&cur, &cur.m[0], &line));
    dkb_compare_baseline(&cur, &old, 0.01, 1000, 7);
    CHECK(!cur.m[0].has_change);
    CHECK_CONTAINS(cur.m[0].no_change, "null value");
    dkb_result_free(&old);
    dkb_result_free(&cur);
}

TEST_MAIN()
