/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_reports.c - libdkbench's reports on results filled by hand
 * with known values: every file format read back by a strict parser
 * (check_bench_reports.py: python's json, csv and XML parsers), the
 * terminal block's words, what is escaped or replaced, write errors
 * reported. Baselines are in test_bench_baseline.c, changes against them
 * in test_bench_change.c; the three build one binary, test_bench_reports.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdkbench/compare.h"
#include "common/error.h"
#include "libdkbench/model.h"
#include "libdkbench/report.h"
#include "bench_fixtures.h"
#include "check.h"

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

TEST_CASE(html_is_well_formed) { check_format("html", html_no_base); }

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
    const char *path = getenv("DKB_SAMPLE_HTML") ? getenv("DKB_SAMPLE_HTML")
                                                 : tmp_path("base.html");
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
    CHECK_CONTAINS(t,
                   "Found 3 outliers among 100 measurements (3.00%): 2 high mild, 1 high severe");
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

TEST_CASE(terminal_names_the_samples_of_the_time_answer)
{
    dkb_result r;
    sample(&r, "fib/20", 1.0);
    snprintf(r.m[0].estimator, sizeof r.m[0].estimator, "Theil-Sen");
    r.switches_counted = true;
    r.n_preempted = 30;
    r.m[0].n_fit = 70;
    char *t = terminal(&r, false, false);
    CHECK_CONTAINS(t,
                   "Theil-Sen slope of 70 samples; 30 preempted (context switch) left out of it");
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

TEST_CASE(terminal_says_the_processes_and_what_a_change_resolves)
{
    dkb_result r;
    sample(&r, "fib/20", 1.0);
    r.n_processes = 10;
    r.m[0].procs.n = 10;
    r.m[0].procs.between_share = 0.8;
    r.m[0].procs.resolution = 0.0213;
    /* Time unresolved by the processes' spread; instructions compared too. */
    r.m[0].change = (dkb_change){{0.01, -0.03, 0.05}, 0.6, DKB_UNRESOLVED, 0.0425};
    r.m[0].change_by_process = true;
    r.m[1].has_change = true;
    r.m[1].change = (dkb_change){{-0.02, -0.02, -0.02}, 0, DKB_IMPROVED, 0};
    r.m[1].change_by_process = true;
    r.m[1].baseline_slope = 2040;
    char *t = terminal(&r, false, false);
    CHECK_CONTAINS(t, "  processes:         10, each estimated alone; 80% of the time's spread is "
                      "between them\n"
                      "  resolves:          changes of time beyond +-2.13% between two runs like "
                      "this one\n");
    /* Counts before time: their verdict does not move with placement. */
    const char *insn = strstr(t, "change (instructions):"), *time = strstr(t, "change (time):");
    CHECK(insn != NULL && time != NULL && insn < time);
    CHECK_CONTAINS(t, "change (time):     [-3.00% +1.00% +5.00%] (p = 0.60 >= 0.05), resolves "
                      "+-4.25%\n");
    CHECK_CONTAINS(t, "Cannot be resolved here: the spread between processes is wider than the "
                      "noise threshold.");
    free(t);
    t = terminal(&r, true, false);
    CHECK_CONTAINS(t, "\x1b[33mCannot be resolved here");
    free(t);
    /* Within one process: said on the processes line and on each change. */
    r.n_processes = 1;
    snprintf(r.one_process, sizeof r.one_process, "--processes 1");
    r.m[0].procs.n = 0;
    r.m[0].change = (dkb_change){{-0.052, -0.063, -0.041}, 0.001, DKB_IMPROVED, 0};
    r.m[0].change_by_process = r.m[1].change_by_process = false;
    t = terminal(&r, false, false);
    CHECK_CONTAINS(t, "  processes:         1 (--processes 1): the intervals describe this "
                      "process only, not the spread between processes\n");
    CHECK_CONTAINS(t, "change (time):     [-6.30% -5.20% -4.10%] (p = 0.00 < 0.05), within one "
                      "process\n");
    CHECK(strstr(t, "resolves") == NULL);
    free(t);
    dkb_result_free(&r);
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
    CHECK_INT((int)occurrences(html, "<td colspan=\"11\" class=\"why\">&lt;not supported&gt;</td>"),
              ==, 10);
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
                          "\xe2\x80\xae"
                          "gnp.exe";
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
    render_fn fns[] = {dkb_report_csv,  dkb_report_markdown, terminal_one,
                       dkb_report_json, dkb_report_gbench,   html_no_base};
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

TEST_CASE(write_errors_reported)
{
    struct {
        const char *name;
        render_fn fn;
    } formats[] = {{"terminal", terminal_one},
                   {"JSON", dkb_report_json},
                   {"CSV", dkb_report_csv},
                   {"Markdown", dkb_report_markdown},
                   {"google benchmark JSON", dkb_report_gbench},
                   {"HTML", html_no_base}};
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
            DKT_FAIL("%s report to /dev/full returned %d (%s)", formats[i].name, rc,
                     dkb_last_error());
        CHECK_CONTAINS(dkb_last_error(), formats[i].name);
        CHECK_CONTAINS(dkb_last_error(), "writing failed (No space left on device)");
    }
    /* A baseline that cannot be written leaves nothing behind. */
    CHECK_INT(dkb_baseline_save("/dev/full/x", "main", &run, rs, 2), ==, DK_EOS);
    CHECK_CONTAINS(dkb_last_error(), "/dev/full/x");
    dkb_result_free(&a);
    dkb_result_free(&b);
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

TEST_MAIN()
