/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_internal.h - what kperf.c (the backend's objects) and
 * kperf_config.c (placing events on counters with kperfdata) share: the
 * session of a sampler, the configuration of a thread sampler or group,
 * and the request that configures it. Not installed.
 */
#ifndef DKPERF_BACKEND_KPERF_INTERNAL_H
#define DKPERF_BACKEND_KPERF_INTERNAL_H

#include "backend/backend.h"
#include "backend/darwin/kpep_common.h"
#include "backend/kperf/kperf_arbiter.h"

typedef struct session {
    char root[DK_LOAD_PATH_MAX]; /* for proc_pid_rusage */
    const dk_kperf_vtable *kp;
    const dk_kperfdata_vtable *kd;
    dk__arbiter *arb;
    kpep_db *kdb;
    kpep_event **handles;     /* kpep event of each database view entry */
    dk__kpc_shape shape;      /* register and fixed counter counts, checked */
    uint32_t config_counters; /* kpc_get_counter_count(CONFIGURABLE), checked */
    uint64_t *flush;          /* buffer for an all-CPU read; see thread_start */
    size_t flush_len;
} session;

typedef struct kthread {
    const dk_kperf_vtable *kp;
    kpep_config *cfg;
    uint32_t classes;            /* the config's classes */
    size_t index[DK_MAX_EVENTS]; /* position of each event in the thread counters */
    dk__kpc_claim claim;         /* its register words, as the arbiter shares them */
} kthread;

/* The events of a thread sampler or system group, for configuring. */
typedef struct request {
    dk_sampler *s;
    const dk_database_event **events; /* may be updated to a fallback event */
    size_t n;
    const unsigned char *mode; /* DK__MODE_* of each event */
    const char *const *label;  /* names with modifiers, NULL entries without */
    const char *const *asked;  /* the names given; NULL, or NULL entries, when none */
} request;

/* Configure kt for q's events and program them through the arbiter; on
 * failure leaves nothing programmed. */
int dk__kperf_setup(const request *q, session *k, kthread *kt);
/* Give kt's configurable registers back to the arbiter. */
void dk__kperf_unprogram(session *k, kthread *kt);

#endif
