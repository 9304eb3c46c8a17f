/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sysinfo.h - the machine a run was made on, as google benchmark's JSON
 * context describes it: the CPU's name, how many, their clock, whether
 * frequency scaling is on, the caches and the load average. Read on Linux
 * from /proc and /sys, on macOS from sysctl.
 */
#ifndef DKPERF_COMMON_SYSINFO_H
#define DKPERF_COMMON_SYSINFO_H

#include <stddef.h>

#define DK__SYSINFO_MAX_CACHES 16

typedef struct dk__cache_info {
    char type[16]; /* "Data", "Instruction", "Unified" */
    int level;
    long long size;  /* bytes */
    int num_sharing; /* logical CPUs sharing it */
} dk__cache_info;

typedef struct dk__sysinfo {
    int num_cpus;             /* 0 when unknown */
    double cycles_per_second; /* 0 when unknown */
    int scaling;              /* 1 enabled, 0 disabled, -1 unknown */
    size_t n_caches;
    dk__cache_info caches[DK__SYSINFO_MAX_CACHES];
    size_t n_load;
    double load_avg[3];
} dk__sysinfo;

/* Fill *s. root prefixes /proc and /sys (NULL or "": the real ones), so
 * that tests can give a made-up machine; macOS reads sysctl when root is
 * empty. A fact that cannot be read is left unknown, never an error. */
void dk__sysinfo_read(dk__sysinfo *s, const char *root);

#endif /* DKPERF_COMMON_SYSINFO_H */
