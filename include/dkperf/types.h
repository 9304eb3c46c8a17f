/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkperf/types.h - the handles and the scopes that dkperf.h and
 * dkperf/sampling.h both name, so that each header can be included alone
 * and neither includes the other. dkperf.h documents them.
 */
#ifndef DKPERF_TYPES_H
#define DKPERF_TYPES_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dk_sampler dk_sampler;   /* a counting session; thread-safe */
typedef struct dk_thread dk_thread;     /* counters of one thread */
typedef struct dk_database dk_database; /* read-only event database, owned by a sampler */

/* What a group or a sampling covers (dkperf.h: "Process and system scopes"). */
typedef enum dk_scope {
    DK_SCOPE_PROCESS = 1, /* one process (pid) */
    DK_SCOPE_SYSTEM = 2,  /* every CPU */
    DK_SCOPE_THREAD = 3   /* one thread (pid is its thread id); where a backend supports it */
} dk_scope;

#ifdef __cplusplus
}
#endif

#endif /* DKPERF_TYPES_H */
