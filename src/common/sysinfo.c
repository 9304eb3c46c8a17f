/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sysinfo.c - the machine's facts for google benchmark's JSON context,
 * found where google benchmark finds them, so that the two agree on one
 * machine; see sysinfo.h.
 */
#define _DEFAULT_SOURCE
#include "common/sysinfo.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __APPLE__
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

/* The first line of root/path, its end trimmed; false when unreadable. */
static bool read_line(const char *root, const char *path, char *buf, size_t size)
{
    char full[512];
    snprintf(full, sizeof full, "%s%s", root, path);
    FILE *f = fopen(full, "r");
    if (f == NULL)
        return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\r\n")] = '\0';
    return ok;
}

static bool read_long(const char *root, const char *path, long *v)
{
    char buf[64], *end;
    if (!read_line(root, path, buf, sizeof buf))
        return false;
    *v = strtol(buf, &end, 10);
    return end != buf;
}

/* Logical CPUs in a shared_cpu_map: hex words separated by commas. */
static int count_map(const char *map)
{
    int n = 0;
    for (const char *p = map; *p; p++) {
        char c = (char)(*p | 0x20); /* lower case; digits keep their value */
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 0;
        for (; d; d >>= 1)
            n += d & 1;
    }
    return n;
}

/* A "key : value" line of /proc/cpuinfo whose key starts with key (any
 * case, as google benchmark matches "cpu MHz"); the value or NULL. */
static const char *cpuinfo_value(char *line, const char *key)
{
    for (size_t i = 0; key[i]; i++)
        if (line[i] == '\0' || (line[i] | 0x20) != (key[i] | 0x20))
            return NULL;
    char *colon = strchr(line, ':');
    if (colon == NULL)
        return NULL;
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    v[strcspn(v, "\r\n")] = '\0';
    return v;
}

static void read_proc(dk__sysinfo *s, const char *root)
{
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
    FILE *f = fopen(path, "r");
    double mhz = 0, bogo = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        const char *v;
        if ((v = cpuinfo_value(line, "processor")) != NULL)
            s->num_cpus++;
        else if ((v = cpuinfo_value(line, "cpu MHz")) != NULL && mhz <= 0)
            mhz = strtod(v, NULL);
        else if ((v = cpuinfo_value(line, "bogomips")) != NULL)
            bogo = strtod(v, NULL);
    }
    if (f != NULL)
        fclose(f);
    /* A rate beyond any CPU's (a damaged or made-up /proc) is unknown:
     * the context rounds it to a long. */
    if (!(mhz <= 1e9))
        mhz = 0;
    if (!(bogo <= 1e9))
        bogo = 0;

    s->scaling = s->num_cpus > 0 ? 0 : -1;
    for (int c = 0; c < s->num_cpus && s->scaling == 0; c++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", c);
        if (read_line(root, path, line, sizeof line) && strcmp(line, "performance") != 0)
            s->scaling = 1;
    }

    /* The TSC's rate; else the current one when nothing scales it; else
     * the highest; else /proc/cpuinfo's (bogomips last). */
    long khz;
    if (read_long(root, "/sys/devices/system/cpu/cpu0/tsc_freq_khz", &khz) ||
        (s->scaling == 0 &&
         read_long(root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", &khz)) ||
        read_long(root, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", &khz))
        s->cycles_per_second = khz > 0 && khz <= 1000000000000L ? (double)khz * 1000.0 : 0;
    else if (mhz > 0)
        s->cycles_per_second = mhz * 1e6;
    else if (bogo > 0)
        s->cycles_per_second = bogo * 1e6;

    for (int i = 0; s->n_caches < DK__SYSINFO_MAX_CACHES; i++) {
        dk__cache_info *c = &s->caches[s->n_caches];
        char base[128], size[32];
        snprintf(base, sizeof base, "/sys/devices/system/cpu/cpu0/cache/index%d/", i);
        snprintf(path, sizeof path, "%ssize", base);
        if (!read_line(root, path, size, sizeof size))
            break;
        char *end;
        c->size = strtol(size, &end, 10);
        if (*end == 'K')
            c->size = c->size >= 0 && c->size <= LLONG_MAX / 1024 ? c->size * 1024 : 0;
        if (c->size < 0)
            c->size = 0; /* unknown, as an unreadable one */
        long level = 0;
        snprintf(path, sizeof path, "%slevel", base);
        (void)read_long(root, path, &level);
        c->level = (int)level;
        snprintf(path, sizeof path, "%stype", base);
        if (!read_line(root, path, c->type, sizeof c->type))
            c->type[0] = '\0';
        snprintf(path, sizeof path, "%sshared_cpu_map", base);
        c->num_sharing = read_line(root, path, line, sizeof line) ? count_map(line) : 0;
        s->n_caches++;
    }

    if (root[0] != '\0') {
        char *p = line, *end;
        if (read_line(root, "/proc/loadavg", line, sizeof line))
            for (; s->n_load < 3; p = end) {
                double v = strtod(p, &end);
                if (end == p)
                    break;
                s->load_avg[s->n_load++] = v;
            }
    } else {
        int n = getloadavg(s->load_avg, 3);
        s->n_load = n > 0 ? (size_t)n : 0;
    }
}

#ifdef __APPLE__
static void read_sysctl(dk__sysinfo *s)
{
    int ncpu = 0;
    size_t len = sizeof ncpu;
    if (sysctlbyname("hw.ncpu", &ncpu, &len, NULL, 0) == 0)
        s->num_cpus = ncpu;
    unsigned long long hz = 0;
    len = sizeof hz;
    if (sysctlbyname("hw.cpufrequency", &hz, &len, NULL, 0) == 0)
        s->cycles_per_second = (double)hz;
    /* google benchmark looks for cpufreq governors here too and, finding
     * none, says scaling is off. */
    s->scaling = s->num_cpus > 0 ? 0 : -1;
    unsigned long long config[16] = {0}; /* hw.cacheconfig: per level, CPUs sharing */
    len = sizeof config;
    if (sysctlbyname("hw.cacheconfig", config, &len, NULL, 0) != 0)
        memset(config, 0, sizeof config);
    static const struct {
        const char *name, *type;
        int level;
    } caches[] = {{"hw.l1dcachesize", "Data", 1},
                  {"hw.l1icachesize", "Instruction", 1},
                  {"hw.l2cachesize", "Unified", 2},
                  {"hw.l3cachesize", "Unified", 3}};
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        long long size = 0;
        len = sizeof size;
        if (sysctlbyname(caches[i].name, &size, &len, NULL, 0) != 0 || size <= 0)
            continue;
        dk__cache_info *c = &s->caches[s->n_caches++];
        snprintf(c->type, sizeof c->type, "%s", caches[i].type);
        c->level = caches[i].level;
        c->size = size;
        c->num_sharing = (int)config[caches[i].level];
    }
    int n = getloadavg(s->load_avg, 3);
    s->n_load = n > 0 ? (size_t)n : 0;
}
#endif

void dk__sysinfo_read(dk__sysinfo *s, const char *root)
{
    memset(s, 0, sizeof *s);
    s->scaling = -1;
    if (root == NULL)
        root = "";
#ifdef __APPLE__
    if (root[0] == '\0') {
        read_sysctl(s);
        return;
    }
#endif
    read_proc(s, root);
}
