/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_sysfs.c - what the perf_event backend reads from sysfs and procfs
 * besides event specs: small files, the core PMUs (several on hybrid CPUs),
 * the CPU's identity, and the sentences the capabilities give.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "backend/perf_event/pe_internal.h"

/* Read a small sysfs or procfs file, trailing newline removed. */
int dk__pe_read_text(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return 0;
}

int dk__pe_pathf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static bool is_core_pmu(const char *name)
{
    return strcmp(name, "cpu") == 0 || strncmp(name, "cpu_", 4) == 0 ||
           strncmp(name, "armv8", 5) == 0 || strncmp(name, "armv9", 5) == 0;
}

void dk__pe_find_core_pmus(pe_session *k)
{
    DIR *dir = opendir(k->sysfs);
    if (dir == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL && k->core_count < DK__PE_CORE_PMUS_MAX) {
        if (de->d_name[0] == '.' || !is_core_pmu(de->d_name))
            continue;
        char path[512], type[32];
        if (dk__pe_pathf(path, sizeof path, "%s/%s/type", k->sysfs, de->d_name) != 0 ||
            dk__pe_read_text(path, type, sizeof type) != 0)
            continue;
        if (dk__pe_parse_type(type, &k->core_types[k->core_count])) {
            snprintf(k->core_names[k->core_count], sizeof k->core_names[0], "%.63s", de->d_name);
            k->core_count++;
        }
    }
    closedir(dir);
    /* A stable order: by PMU type. */
    for (size_t i = 1; i < k->core_count; i++)
        for (size_t j = i; j > 0 && k->core_types[j - 1] > k->core_types[j]; j--) {
            uint32_t t = k->core_types[j];
            k->core_types[j] = k->core_types[j - 1];
            k->core_types[j - 1] = t;
            char name[sizeof k->core_names[0]];
            memcpy(name, k->core_names[j], sizeof name);
            memcpy(k->core_names[j], k->core_names[j - 1], sizeof name);
            memcpy(k->core_names[j - 1], name, sizeof name);
        }
}

void dk__pe_describe_cpu(pe_session *k, dk_sampler *s)
{
    char line[256];
    FILE *f = fopen("/proc/cpuinfo", "r");
    char vendor[64] = "", family[16] = "", model[16] = "";
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        char *colon = strchr(line, ':');
        if (colon == NULL)
            continue;
        char *value = colon + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        value[strcspn(value, "\n")] = '\0';
        if (strncmp(line, "model name", 10) == 0 && k->marketing[0] == '\0')
            snprintf(k->marketing, sizeof k->marketing, "%s", value);
        else if (strncmp(line, "vendor_id", 9) == 0 && vendor[0] == '\0')
            snprintf(vendor, sizeof vendor, "%s", value);
        else if (strncmp(line, "cpu family", 10) == 0 && family[0] == '\0')
            snprintf(family, sizeof family, "%s", value);
        else if (strncmp(line, "model\t", 6) == 0 && model[0] == '\0')
            snprintf(model, sizeof model, "%s", value);
        else if (strncmp(line, "CPU implementer", 15) == 0 && vendor[0] == '\0')
            snprintf(vendor, sizeof vendor, "%s", value);
        else if (strncmp(line, "CPU part", 8) == 0 && model[0] == '\0')
            snprintf(model, sizeof model, "%s", value);
    }
    if (f != NULL)
        fclose(f);
    if (vendor[0] != '\0')
        (void)dk__pe_pathf(k->cpu_id, sizeof k->cpu_id, "%s%s%s%s%s", vendor, family[0] ? "-" : "",
                           family, model[0] ? "-" : "", model);
    struct utsname u;
    if (uname(&u) == 0) {
        if (strcmp(u.machine, "x86_64") == 0)
            s->db.arch = DK_ARCH_X86_64;
        else if (strcmp(u.machine, "aarch64") == 0 || strcmp(u.machine, "arm64") == 0)
            s->db.arch = DK_ARCH_ARM64;
        if (k->marketing[0] == '\0')
            snprintf(k->marketing, sizeof k->marketing, "%s", u.machine);
    }
}
/* The PMU and privilege sentences of the capabilities. */
void dk__pe_describe_pmus(pe_session *k)
{
    if (k->core_count == 0)
        snprintf(k->pmu_text, sizeof k->pmu_text, "no hardware PMU visible (software events only)");
    else if (k->core_count == 1 && k->pmc.counters > k->pmc.general)
        snprintf(k->pmu_text, sizeof k->pmu_text,
                 "%.63s (perf_event): %zu general counters and %zu for cycles only",
                 k->core_names[0], k->pmc.general, k->pmc.counters - k->pmc.general);
    else if (k->core_count == 1 && k->pmc.counters > 0)
        snprintf(k->pmu_text, sizeof k->pmu_text, "%.63s (perf_event): %zu counters",
                 k->core_names[0], k->pmc.counters);
    else if (k->core_count == 1)
        snprintf(k->pmu_text, sizeof k->pmu_text, "%.63s (perf_event): counters unknown",
                 k->core_names[0]);
    else
        snprintf(k->pmu_text, sizeof k->pmu_text,
                 "%.40s+%.40s%s (perf_event, hybrid): counters unknown", k->core_names[0],
                 k->core_names[1], k->core_count > 2 ? "+..." : "");
    if (geteuid() == 0)
        snprintf(k->privilege_text, sizeof k->privilege_text,
                 "root: every event, user and kernel mode, per thread, per process and on every "
                 "CPU");
    else
        snprintf(k->privilege_text, sizeof k->privilege_text,
                 "not root, kernel.perf_event_paranoid %d: %s", k->paranoid,
                 k->paranoid >= 3   ? "no counting at all for unprivileged users"
                 : k->paranoid == 2 ? "user mode of own threads and processes only"
                 : k->paranoid == 1 ? "own threads and processes, user and kernel mode"
                                    : "own threads and processes, and every CPU");
}
