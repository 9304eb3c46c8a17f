/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_gbench.c - google benchmark's JSON layout: the context as
 * google benchmark fills it (from a made-up /proc and /sys), one entry per
 * process with the aggregates when repetitions were asked for, counters
 * under the names asked for, and google's compare.py reading the result.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_fixtures.h"
#include "check.h"
#include "libdkbench/harness.h"
#include "libdkbench/processes.h"
#include "libdkbench/report.h"

#define PROCS 9

static void put(const char *root, const char *path, const char *text)
{
    char full[1024];
    snprintf(full, sizeof full, "%s%s", root, path);
    for (char *p = full + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        (void)mkdir(full, 0777);
        *p = '/';
    }
    FILE *f = fopen(full, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* A machine of two CPUs scaled by "powersave", two caches. */
static const char *machine(void)
{
    static char root[512];
    snprintf(root, sizeof root, "%s", tmp_path("root"));
    (void)mkdir(root, 0777);
    put(root, "/proc/cpuinfo",
        "processor\t: 0\nmodel name\t: Made-up CPU @ 2.00GHz\ncpu MHz\t\t: 1999.999\n\n"
        "processor\t: 1\nmodel name\t: Made-up CPU @ 2.00GHz\ncpu MHz\t\t: 1999.999\n\n");
    put(root, "/proc/loadavg", "0.50 1.25 2.00 1/100 123\n");
    const char *cpu = "/sys/devices/system/cpu/cpu";
    char p[256];
    snprintf(p, sizeof p, "%s0/cpufreq/scaling_governor", cpu);
    put(root, p, "performance\n");
    snprintf(p, sizeof p, "%s1/cpufreq/scaling_governor", cpu);
    put(root, p, "powersave\n");
    snprintf(p, sizeof p, "%s0/cpufreq/cpuinfo_max_freq", cpu);
    put(root, p, "3500000\n");
    static const char *const idx[][4] = {{"32K", "Data", "1", "00000003"},
                                         {"1024K", "Unified", "2", "00000000,0000000f"}};
    for (int i = 0; i < 2; i++) {
        static const char *const file[] = {"size", "type", "level", "shared_cpu_map"};
        for (int k = 0; k < 4; k++) {
            char text[64];
            snprintf(p, sizeof p, "%s0/cache/index%d/%s", cpu, i, file[k]);
            snprintf(text, sizeof text, "%s\n", idx[i][k]);
            put(root, p, text);
        }
    }
    return root;
}

static void rm_tree(const char *path)
{
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    CHECK(system(cmd) == 0);
}

static char *render(const dkb_result *const *rs, size_t n, const dkb_gbench_view *v)
{
    dkb_run_info run;
    run_info(&run);
    snprintf(run.cpu_model, sizeof run.cpu_model, "Made-up CPU @ 2.00GHz"); /* the library's */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    CHECK_INT(dkb_report_gbench_view(f, &run, rs, n, v), ==, 0);
    fclose(f);
    return text;
}

TEST_CASE(gbench_context_is_filled_as_google_benchmark_fills_it)
{
    const char *root = machine();
    dkb_result r;
    sample(&r, "grp/a", 1);
    const dkb_result *rs[] = {&r};
    dkb_gbench_view v = {.executable = "./bench", .sysroot = root, .date = "D"};
    char *t = render(rs, 1, &v);
    CHECK_CONTAINS(t, "{\n  \"context\": {\n    \"date\": \"D\",\n    \"host_name\": ");
    CHECK_CONTAINS(t, "\"executable\": \"./bench\",\n    \"num_cpus\": 2,\n"
                      "    \"mhz_per_cpu\": 3500,\n    \"cpu_scaling_enabled\": true,\n");
    CHECK_CONTAINS(t, "    \"caches\": [\n      {\n        \"type\": \"Data\",\n"
                      "        \"level\": 1,\n        \"size\": 32768,\n"
                      "        \"num_sharing\": 2\n      },\n      {\n"
                      "        \"type\": \"Unified\",\n        \"level\": 2,\n"
                      "        \"size\": 1048576,\n        \"num_sharing\": 4\n      }\n    ],\n");
    CHECK_CONTAINS(t, "    \"load_avg\": [0.5,1.25,2],\n    \"library_build_type\": \"");
    CHECK_CONTAINS(t, "\"dkbench_cpu\": \"Made-up CPU @ 2.00GHz\"\n  },\n  \"benchmarks\": [\n");
    free(t);
    /* No scaling governor but "performance": scaling is off. */
    char p[600];
    snprintf(p, sizeof p, "%s/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", root);
    CHECK(unlink(p) == 0);
    t = render(rs, 1, &v);
    CHECK_CONTAINS(t, "\"cpu_scaling_enabled\": false,\n");
    free(t);
    dkb_result_free(&r);
    rm_tree(root);
    cleanup();
}

TEST_CASE(gbench_date_is_local_time_with_its_offset)
{
    dkb_result r;
    sample(&r, "grp/a", 1);
    const dkb_result *rs[] = {&r};
    CHECK(setenv("TZ", "UTC-05:30", 1) == 0);
    tzset();
    char *t = render(rs, 1, &(dkb_gbench_view){.executable = "x"});
    const char *d = strstr(t, "\"date\": \"");
    CHECK(d != NULL);
    d += 9;
    int y, mo, da, h, mi, s;
    char tail[8] = "";
    CHECK_INT(sscanf(d, "%4d-%2d-%2dT%2d:%2d:%2d%6[-+:0-9]", &y, &mo, &da, &h, &mi, &s, tail), ==,
              7);
    CHECK_STR(tail, "+05:30");
    free(t);
    dkb_result_free(&r);
    cleanup();
}

/* PROCS processes' results of one benchmark, combined; time per
 * iteration 1000 * scale * (1 + p / 100) in process p; process 1 took
 * half its samples. */
static void combined(dkb_result *out, const char *name, double scale)
{
    dkb_result per[PROCS];
    for (size_t p = 0; p < PROCS; p++) {
        sample(&per[p], name, scale * (1 + (double)p / 100));
        for (size_t j = 0; j < per[p].n_measures; j++)
            snprintf(per[p].m[j].estimator, sizeof per[p].m[j].estimator, "OLS");
    }
    per[1].n_samples = N / 2;
    dkb_config cfg;
    dkb_config_defaults(&cfg);
    cfg.resamples = 200;
    CHECK_INT(dkb_combine_processes(&cfg, per, PROCS, out), ==, 0);
    for (size_t p = 0; p < PROCS; p++)
        dkb_result_free(&per[p]);
}

TEST_CASE(gbench_combined_result_keeps_each_process_iterations)
{
    dkb_result r;
    combined(&r, "grp/a", 1);
    CHECK_INT(r.n_processes, ==, PROCS);
    CHECK(r.proc_iterations != NULL);
    CHECK_NEAR(r.proc_iterations[0], 10.0 * N * (N + 1) / 2, 0);
    CHECK_NEAR(r.proc_iterations[1], 10.0 * (N / 2) * (N / 2 + 1) / 2, 0);
    dkb_result_free(&r);
    CHECK(r.proc_iterations == NULL);
    cleanup();
}

TEST_CASE(gbench_repetitions_give_each_process_then_the_aggregates)
{
    dkb_result r;
    combined(&r, "grp/a", 1);
    const dkb_result *rs[] = {&r};
    dkb_gbench_view v = {.executable = "x", .repetitions = PROCS};
    char *t = render(rs, 1, &v);
    CHECK_CONTAINS(t, "\"name\": \"grp/a\",\n      \"family_index\": 0,\n"
                      "      \"per_family_instance_index\": 0,\n      \"run_name\": \"grp/a\",\n"
                      "      \"run_type\": \"iteration\",\n      \"repetitions\": 9,\n"
                      "      \"repetition_index\": 1,\n      \"threads\": 1,\n"
                      "      \"iterations\": 12750,\n");
    CHECK_CONTAINS(t, "\"repetition_index\": 8,\n");
    CHECK(strstr(t, "\"repetition_index\": 9,") == NULL);
    /* The aggregates: no repetition_index, iterations the count of
     * repetitions, cv in percentage. */
    CHECK_CONTAINS(t, "\"name\": \"grp/a_mean\",\n      \"family_index\": 0,\n"
                      "      \"per_family_instance_index\": 0,\n      \"run_name\": \"grp/a\",\n"
                      "      \"run_type\": \"aggregate\",\n      \"repetitions\": 9,\n"
                      "      \"threads\": 1,\n      \"aggregate_name\": \"mean\",\n"
                      "      \"aggregate_unit\": \"time\",\n      \"iterations\": 9,\n"
                      "      \"real_time\": ");
    CHECK_CONTAINS(t, "\"name\": \"grp/a_median\"");
    CHECK_CONTAINS(t, "\"name\": \"grp/a_stddev\"");
    CHECK_CONTAINS(t, "\"aggregate_name\": \"cv\",\n      \"aggregate_unit\": \"percentage\",\n");
    /* The mean of 1000 * (1 + p / 100) over p < 9 is 1040; their median
     * 1040 too; stddev sqrt(7.5) * 10. */
    const char *mean = strstr(t, "grp/a_mean");
    CHECK(mean != NULL);
    double x = 0;
    CHECK(sscanf(strstr(mean, "\"real_time\": ") + 13, "%lf", &x) == 1);
    CHECK_NEAR(x, 1040, 1e-6);
    const char *sd = strstr(t, "grp/a_stddev");
    CHECK(sscanf(strstr(sd, "\"real_time\": ") + 13, "%lf", &x) == 1);
    CHECK_NEAR(x, 10 * 2.7386127875258306, 1e-6);
    CHECK(sscanf(strstr(sd, "\"instructions\": ") + 16, "%lf", &x) == 1);
    CHECK_NEAR(x, 0, 1e-9);
    free(t);
    /* Aggregates only; and without repetitions asked, one entry. */
    v.aggregates_only = true;
    t = render(rs, 1, &v);
    CHECK(strstr(t, "\"run_type\": \"iteration\"") == NULL);
    CHECK_CONTAINS(t, "grp/a_cv");
    free(t);
    v.repetitions = 0;
    t = render(rs, 1, &v);
    CHECK(strstr(t, "\"run_type\": \"aggregate\"") == NULL);
    CHECK_CONTAINS(t, "\"repetitions\": 1,\n      \"repetition_index\": 0,\n");
    free(t);
    dkb_result_free(&r);
    cleanup();
}

TEST_CASE(gbench_counters_take_the_names_asked_for_in_name_order)
{
    dkb_result r;
    sample(&r, "grp/a", 1);
    const dkb_result *rs[] = {&r};
    dkb_gbench_name names[] = {{"cycles", "CYCLES"}, {"instructions", "INSTRUCTIONS"}};
    dkb_gbench_view v = {.executable = "x", .names = names, .n_names = 2};
    char *t = render(rs, 1, &v);
    /* As std::map orders them: upper case first. */
    CHECK_CONTAINS(t, "\"time_unit\": \"ns\",\n      \"CYCLES\": 1.0000000000000000e+03,\n"
                      "      \"INSTRUCTIONS\": 2.0000000000000000e+03,\n"
                      "      \"branch-misses\": 8.0000000000000000e+00,\n"
                      "      \"branches\": 4.0000000000000000e+02,\n"
                      "      \"bytes_per_second\": ");
    CHECK(strstr(t, "\"cycles\"") == NULL);
    free(t);
    dkb_result_free(&r);
    cleanup();
}

typedef int (*text_fn)(FILE *, FILE *, const dkb_run_info *, const dkb_result *const *, size_t,
                       const dkb_gbench_view *);

static char *render_text(text_fn fn, const dkb_result *const *rs, size_t n,
                         const dkb_gbench_view *v)
{
    dkb_run_info run;
    run_info(&run);
    snprintf(run.cpu_model, sizeof run.cpu_model, "Made-up CPU @ 2.00GHz"); /* the library's */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    CHECK_INT(fn(f, NULL, &run, rs, n, v), ==, 0);
    fclose(f);
    return text;
}

TEST_CASE(gbench_context_of_a_damaged_machine_is_unknown_not_wrapped)
{
    /* No cpufreq, a MHz beyond any double, a cache size beyond a long
     * long, a cache without its other files: unknown (0), never a
     * wrapped or undefined number. */
    char root[512];
    snprintf(root, sizeof root, "%s", tmp_path("odd"));
    (void)mkdir(root, 0777);
    put(root, "/proc/cpuinfo", "processor\t: 0\ncpu MHz\t\t: 1e999\nbogomips\t: inf\n");
    put(root, "/sys/devices/system/cpu/cpu0/cache/index0/size", "99999999999999999999K\n");
    put(root, "/sys/devices/system/cpu/cpu0/cache/index1/size", "-64K\n");
    dkb_result r;
    sample(&r, "grp/a", 1);
    const dkb_result *rs[] = {&r};
    dkb_gbench_view v = {.executable = "./bench", .sysroot = root, .date = "D"};
    char *t = render(rs, 1, &v);
    CHECK_CONTAINS(t, "\"num_cpus\": 1,\n    \"mhz_per_cpu\": 0,\n"
                      "    \"cpu_scaling_enabled\": false,\n");
    CHECK_CONTAINS(t, "        \"type\": \"\",\n        \"level\": 0,\n        \"size\": 0,\n"
                      "        \"num_sharing\": 0\n      },\n");
    CHECK(strstr(t, "\"size\": -") == NULL);
    free(t);
    t = render_text(dkb_report_gbench_console, rs, 1, &v);
    CHECK_CONTAINS(t, "Run on (1 X 0 MHz CPU )\nCPU Caches:\n  L0  0 KiB\n  L0  0 KiB\n");
    free(t);
    dkb_result_free(&r);
    rm_tree(root);
    cleanup();
}

TEST_CASE(gbench_console_has_google_benchmarks_context_and_table)
{
    const char *root = machine();
    dkb_result r;
    sample(&r, "grp/a", 1);
    const dkb_result *rs[] = {&r};
    dkb_gbench_view v = {.executable = "./bench", .sysroot = root, .date = "D"};
    char *t = render_text(dkb_report_gbench_console, rs, 1, &v);
    CHECK_CONTAINS(t, "D\nRunning ./bench\nRun on (2 X 3500 MHz CPU s)\nCPU Caches:\n"
                      "  L1 Data 32 KiB (x1)\n  L2 Unified 1024 KiB (x0)\n"
                      "Load Average: 0.50, 1.25, 2.00\n");
    CHECK_CONTAINS(t, "dkbench_cpu: Made-up CPU @ 2.00GHz\n***WARNING*** CPU frequency scaling");
    /* Name column 10 wide at least; counters as name=value, %g scaled,
     * bytes by 1024 (4.096e9 B/s is 3.8147 GiB/s, shown "G" as google
     * benchmark 1.7 shows it), others by 1000. */
    CHECK_CONTAINS(t, "\nBenchmark           Time             CPU   Iterations UserCounters...\n");
    CHECK_CONTAINS(t, "\ngrp/a            1000 ns         1000 ns        50500 "
                      "branch-misses=8 branches=400 bytes_per_second=3.8147G/s cycles=1000 "
                      "instructions=2k\n");
    CHECK(strchr(t, '\033') == NULL);
    free(t);
    /* Tabular: a column per counter; colour when asked for. */
    v.counters_tabular = v.color = true;
    t = render_text(dkb_report_gbench_console, rs, 1, &v);
    CHECK_CONTAINS(t, "Iterations branch-misses   branches bytes_per_second     cycles "
                      "instructions\n");
    CHECK_CONTAINS(t,
                   "\033[0;32mgrp/a      \033[m\033[0;33m      1000 ns         1000 ns   "
                   "\033[m\033[0;36m     50500\033[m             8\033[m        400\033[m        "
                   "3.8147G/s\033[m");
    free(t);
    dkb_result_free(&r);
    rm_tree(root);
    cleanup();
}

TEST_CASE(gbench_console_shows_aggregates_and_cv_in_percent)
{
    dkb_result r;
    combined(&r, "grp/a", 1);
    const dkb_result *rs[] = {&r};
    dkb_gbench_view v = {.executable = "x", .repetitions = PROCS, .date = "D"};
    char *t = render_text(dkb_report_gbench_console, rs, 1, &v);
    /* The name column leaves room for "_median". */
    CHECK_CONTAINS(t,
                   "\nBenchmark                  Time             CPU   Iterations UserCounters");
    CHECK_CONTAINS(t, "\ngrp/a_mean              1040 ns         1040 ns            9 ");
    CHECK_CONTAINS(t, "\ngrp/a_cv                2.63 %          2.63 %             9 ");
    CHECK_CONTAINS(t, " instructions=0.00%\n");
    free(t);
    dkb_result_free(&r);
    cleanup();
}

TEST_CASE(gbench_csv_has_google_benchmarks_columns)
{
    dkb_result r;
    sample(&r, "grp/\"a\"", 1);
    const dkb_result *rs[] = {&r};
    dkb_gbench_view v = {.executable = "x", .date = "D"};
    char *t = render_text(dkb_report_gbench_csv, rs, 1, &v);
    CHECK_CONTAINS(t, "\nname,iterations,real_time,cpu_time,time_unit,bytes_per_second,"
                      "items_per_second,label,error_occurred,error_message,\"branch-misses\","
                      "\"branches\",\"cycles\",\"instructions\"\n"
                      "\"grp/\"\"a\"\"\",50500,1000,1000,ns,4.096e+09,,,,,8,400,1000,2000\n");
    free(t);
    dkb_result_free(&r);
    cleanup();
}

/* Google's compare.py, as Debian ships it (libbenchmark-tools). */
#define COMPARE "/usr/share/benchmark/compare.py"

/* Skips the test where compare.py is missing, but for CI, which has it. */
#define NEED_COMPARE_PY()                                                                        \
    do {                                                                                         \
        if (access(COMPARE, R_OK) != 0 || access("/usr/bin/python3", X_OK) != 0) {               \
            const char *ci = getenv("CI");                                                       \
            if (ci != NULL && ci[0] != '\0' && strcmp(ci, "0") != 0 && strcmp(ci, "false") != 0) \
                DKT_FAIL("%s is missing (scripts/setup.sh --ci installs libbenchmark-tools)",    \
                         COMPARE);                                                               \
            SKIP("%s or /usr/bin/python3 is missing", COMPARE);                                  \
        }                                                                                        \
    } while (0)

/* compare.py benchmarks a b, its output in out: it must succeed, and
 * without a warning. */
static void compare_py(const char *a, const char *b, char *out, size_t size)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s --no-color benchmarks '%s' '%s' 2>&1", COMPARE,
             a, b);
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    size_t len = fread(out, 1, size - 1, p);
    out[len] = '\0';
    int status = pclose(p);
    fputs(out, stderr);
    CHECK_INT(status, ==, 0);
    CHECK(strstr(out, "WARNING") == NULL && strstr(out, "Warning") == NULL);
    CHECK(strstr(out, "Traceback") == NULL);
}

TEST_CASE(gbench_json_with_repetitions_is_compared_by_compare_py)
{
    NEED_COMPARE_PY();
    char path[2][1024]; /* tmp_path's buffer is its own */
    snprintf(path[0], sizeof path[0], "%s", tmp_path("a.json"));
    snprintf(path[1], sizeof path[1], "%s", tmp_path("b.json"));
    for (int k = 0; k < 2; k++) {
        dkb_result a, b;
        combined(&a, "grp/a", 1 + 0.5 * k);
        combined(&b, "grp/b", 1);
        const dkb_result *rs[] = {&a, &b};
        dkb_run_info run;
        run_info(&run);
        snprintf(run.cpu_model, sizeof run.cpu_model, "Made-up CPU @ 2.00GHz"); /* the library's */
        FILE *f = fopen(path[k], "w");
        CHECK(f != NULL);
        dkb_gbench_view v = {.executable = "./bench", .repetitions = PROCS};
        CHECK_INT(dkb_report_gbench_view(f, &run, rs, 2, &v), ==, 0);
        fclose(f);
        dkb_result_free(&a);
        dkb_result_free(&b);
    }
    char out[16384];
    compare_py(path[0], path[1], out, sizeof out);
    /* Each benchmark's rows, the U test of each. grp/a got 50 % slower. */
    CHECK_CONTAINS(out, "grp/a_pvalue");
    CHECK_CONTAINS(out, "grp/b_pvalue");
    CHECK_CONTAINS(out, "grp/a_mean");
    CHECK_CONTAINS(out, "+0.5000");
    CHECK_CONTAINS(out, "OVERALL_GEOMEAN");
    unlink(path[0]);
    unlink(path[1]);
    cleanup();
}

TEST_CASE(gbench_json_writes_undefined_numbers_as_google_benchmark_does)
{
    NEED_COMPARE_PY();
    /* Times of 0 (an unresolved clock): the cv of their mean of 0 is
     * undefined, NaN as google benchmark writes it, never a null that
     * stops compare.py. */
    dkb_result r;
    combined(&r, "grp/a", 1);
    for (size_t p = 0; p < r.n_processes; p++)
        r.m[0].proc[p] = 0;
    const dkb_result *rs[] = {&r};
    dkb_gbench_view v = {.executable = "./bench", .repetitions = PROCS};
    char *t = render(rs, 1, &v);
    const char *cv = strstr(t, "\"grp/a_cv\"");
    CHECK(cv != NULL);
    CHECK_CONTAINS(cv, "\"real_time\": NaN,\n      \"cpu_time\": NaN,\n");
    CHECK(strstr(t, "null") == NULL);
    const char *path = tmp_path("nan.json");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(t, f);
    fclose(f);
    char out[16384];
    compare_py(path, path, out, sizeof out);
    CHECK_CONTAINS(out, "grp/a_cv");
    unlink(path);
    free(t);
    dkb_result_free(&r);
    cleanup();
}

TEST_MAIN()
