/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * info.c - dkperf info: the backend in use and why, the CPU, its PMU and
 * counters, what the privileges allow, where the frameworks come from.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "cli.h"
#include "common/json.h"

#define KPERF_REL "/System/Library/PrivateFrameworks/kperf.framework/kperf"
#define KPERFDATA_REL "/System/Library/PrivateFrameworks/kperfdata.framework/kperfdata"

void help_info(FILE *out)
{
    fputs("usage: dkperf info [--json] [--backend NAME]\n"
          "\n"
          "Show the backend in use and why it was chosen, the CPU (chip, marketing name,\n"
          "database name, CPU id), the PMU and its counters per class, what the current\n"
          "privileges allow, the framework paths and the OS.\n"
          "\n"
          "  --json           one JSON object\n"
          "  --backend NAME   auto, kperf, selfcounts or perf_event\n",
          out);
}

static void capabilities(const dk_backend_caps *c, char *buf, size_t size)
{
    const char *parts[6];
    size_t n = 0;
    if (c->per_thread)
        parts[n++] = "per thread";
    if (c->per_process)
        parts[n++] = "per process";
    if (c->system_wide)
        parts[n++] = "every CPU";
    parts[n++] = c->all_events ? "every event of the database" : "instructions and cycles only";
    if (c->multiplexing)
        parts[n++] = "time-shared counters (scaled)";
    if (c->perf_levels)
        parts[n++] = "split by performance level";
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, "%s%s", i ? ", " : "", parts[i]);
    }
}

int cmd_info(int argc, char **argv)
{
    bool json;
    const char *backend;
    int rc = cli_simple_options("info", argc, argv, help_info, &json, &backend, NULL);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    dk_sampler *s = cli_open_sampler_flags("info", backend, DK_SAMPLER_QUERY_ONLY);
    if (s == NULL)
        return EXIT_SETUP;
    const dk_database *db = dk_sampler_database(s);
    dk_backend_caps caps = {.size = sizeof caps};
    dk_sampler_caps(s, &caps);
    const char *arch = dk_database_arch(db) == DK_ARCH_ARM64    ? "arm64"
                       : dk_database_arch(db) == DK_ARCH_X86_64 ? "x86_64"
                                                                : "unknown";
    size_t fixed = dk_database_counter_count(db, DK_COUNTERS_FIXED);
    size_t config = dk_database_counter_count(db, DK_COUNTERS_CONFIGURABLE);
    size_t power = dk_database_counter_count(db, DK_COUNTERS_POWER);
    const char *root = dk_sampler_framework_root(s);
    struct utsname u;
    if (uname(&u) != 0)
        memset(&u, 0, sizeof u);
    char can[256];
    capabilities(&caps, can, sizeof can);
    FILE *out = stdout;

    if (json) {
        fputs("{\"version\": ", out);
        dk__json_string(out, dk_version());
        fputs(", \"backend\": ", out);
        dk__json_string(out, dk_sampler_backend(s));
        fputs(", \"why\": ", out);
        dk__json_string(out, dk_sampler_why(s));
        fputs(", \"cpu\": ", out);
        dk__json_string(out, dk_cpu_name(dk_sampler_cpu(s)));
        fputs(", \"marketing_name\": ", out);
        dk__json_string(out, dk_database_marketing_name(db));
        fputs(", \"database\": ", out);
        dk__json_string(out, dk_database_name(db));
        fputs(", \"cpu_id\": ", out);
        dk__json_string(out, dk_database_cpu_id(db));
        fputs(", \"arch\": ", out);
        dk__json_string(out, arch);
        fputs(", \"pmu\": ", out);
        dk__json_string(out, caps.pmu);
        fprintf(out, ", \"counters\": {\"fixed\": %zu, \"configurable\": %zu, \"power\": %zu",
                fixed, config, power);
        if (fixed + config == 0 && caps.counters > 0)
            fprintf(out, ", \"per_group\": %zu", caps.counters);
        fputc('}', out);
        if (caps.user_reads != NULL) {
            fputs(", \"user_reads\": ", out);
            dk__json_string(out, caps.user_reads);
        }
        fputs(", \"privileges\": ", out);
        dk__json_string(out, caps.privileges);
        fprintf(
            out,
            ", \"capabilities\": {\"per_thread\": %s, \"per_process\": %s, \"system_wide\": %s, "
            "\"all_events\": %s, \"multiplexing\": %s, \"perf_levels\": %s}",
            caps.per_thread ? "true" : "false", caps.per_process ? "true" : "false",
            caps.system_wide ? "true" : "false", caps.all_events ? "true" : "false",
            caps.multiplexing ? "true" : "false", caps.perf_levels ? "true" : "false");
        fputs(", \"perf_levels\": [", out);
        for (size_t i = 0; i < dk_sampler_perf_levels(s); i++) {
            fputs(i ? ", " : "", out);
            dk__json_string(out, dk_sampler_perf_level_name(s, i));
        }
        fputs("], \"frameworks\": ", out);
        if (root != NULL) {
            fputs("{\"root\": ", out);
            dk__json_string(out, root);
            fprintf(out, ", \"kperf\": \"%s%s\", \"kperfdata\": \"%s%s\"}", root, KPERF_REL, root,
                    KPERFDATA_REL);
        } else {
            fputs("null", out);
        }
        fputs(", \"os\": {\"sysname\": ", out);
        dk__json_string(out, u.sysname);
        fputs(", \"release\": ", out);
        dk__json_string(out, u.release);
        fputs(", \"machine\": ", out);
        dk__json_string(out, u.machine);
        fputs("}}\n", out);
    } else {
        fprintf(out, "%-14s %s\n", "libdkperf", dk_version());
        fprintf(out, "%-14s %s\n", "backend", dk_sampler_backend(s));
        if (dk_sampler_why(s)[0] != '\0')
            fprintf(out, "%-14s %s\n", "why", dk_sampler_why(s));
        if (dk_sampler_cpu(s) == DK_CPU_UNKNOWN)
            fprintf(out, "%-14s %s\n", "cpu", dk_database_marketing_name(db));
        else
            fprintf(out, "%-14s %s (%s)\n", "cpu", dk_cpu_name(dk_sampler_cpu(s)),
                    dk_database_marketing_name(db));
        fprintf(out, "%-14s %s, cpu id %s, %s\n", "database", dk_database_name(db),
                dk_database_cpu_id(db)[0] ? dk_database_cpu_id(db) : "unknown", arch);
        fprintf(out, "%-14s %s\n", "pmu", caps.pmu != NULL ? caps.pmu : "unknown");
        if (fixed + config > 0) {
            fprintf(out, "%-14s %zu fixed, %zu configurable", "counters", fixed, config);
            if (power > 0)
                fprintf(out, " (%zu shared with the power manager)", power);
            fputc('\n', out);
        } else if (caps.counters > 0) {
            fprintf(out, "%-14s %zu at once in one group (found by opening one)\n", "counters",
                    caps.counters);
        } else {
            fprintf(out, "%-14s %s\n", "counters", "not reported (the kernel schedules them)");
        }
        if (caps.user_reads != NULL)
            fprintf(out, "%-14s %s\n", "user reads", caps.user_reads);
        fprintf(out, "%-14s %s\n", "privileges", caps.privileges != NULL ? caps.privileges : "");
        fprintf(out, "%-14s %s\n", "can count", can);
        if (dk_sampler_perf_levels(s) > 0) {
            fprintf(out, "%-14s", "perf levels");
            for (size_t i = 0; i < dk_sampler_perf_levels(s); i++)
                fprintf(out, "%s%s", i ? ", " : " ", dk_sampler_perf_level_name(s, i));
            fputc('\n', out);
        }
        if (root != NULL) {
            fprintf(out, "%-14s %s%s\n", "frameworks", root, KPERF_REL);
            fprintf(out, "%-14s %s%s\n", "", root, KPERFDATA_REL);
        }
        fprintf(out, "%-14s %s %s %s\n", "os", u.sysname, u.release, u.machine);
    }
    return cli_close_sampler("info", s, 0);
}
