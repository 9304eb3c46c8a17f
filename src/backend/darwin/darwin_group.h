/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * darwin_group.h - the process scope of the Darwin backends: a process's
 * instructions and cycles from proc_pid_rusage(). Not installed.
 */
#ifndef DKPERF_BACKEND_DARWIN_GROUP_H
#define DKPERF_BACKEND_DARWIN_GROUP_H

#include "backend/backend.h"

/* Configure g over proc_pid_rusage under a framework root; events other
 * than instructions and cycles are refused (or marked, with
 * DK_GROUP_PARTIAL) with "<event> " + why_others. */
int dk__rusage_group_open(dk_group *g, const char *root, const char *why_others);
/* DK_ENOTSUP for DK_SCOPE_THREAD, recorded with the reason: macOS has no
 * counters of another process's thread without injecting code into it. */
int dk__darwin_thread_scope(const dk_group *g);
int dk__rusage_group_start(dk_group *g);
int dk__rusage_group_stop(dk_group *g);
int dk__rusage_group_read(dk_group *g, uint64_t *values, dk_reading *info);
void dk__rusage_group_close(dk_group *g);

/* A process group's counts by performance level (RUSAGE_INFO_V6), for
 * the backend's group_read_levels; g->levels > 0 when it splits. */
int dk__rusage_group_read_levels(dk_group *g, uint64_t *values);

/* The CPUs kpc_get_cpu_counters(all CPUs) reports: hw.ncpu through the
 * libsystem indirection under root, else sysconf. At least 1. */
size_t dk__darwin_ncpu(const char *root);

/* g->cpus (ncpu of them) and g->levels: levels from hw.nperflevels and
 * hw.perflevelN.{logicalcpu,physicalcpu,name}. Returns 0 or DK_ENOMEM. */
int dk__darwin_describe_cpus(dk_group *g, const char *root, size_t ncpu);

/* Whether a DK__MODE_* asks for one privilege mode alone. */
static inline bool dk__mode_restricts(unsigned mode)
{
    return mode == DK__MODE_USER || mode == DK__MODE_KERNEL;
}

/* DK_ENOTSUP for an event (label, with its modifiers) whose mode source
 * (the call that counts, e.g. "thread_selfcounts") cannot restrict. */
int dk__fail_mode(const char *label, const char *source);

/* 0 for the instructions event, 1 for cycles, -1 for any other. */
int dk__fixed_slot(const dk_database_event *ev);

#endif /* DKPERF_BACKEND_DARWIN_GROUP_H */
