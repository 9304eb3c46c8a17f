/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kpep_common.h - what the kperf and selfcounts backends share: the event
 * database view built from a kperfdata database. Not installed.
 */
#ifndef DKPERF_BACKEND_KPEP_COMMON_H
#define DKPERF_BACKEND_KPEP_COMMON_H

#include "backend/backend.h"
#include "dkperf/kperf.h"
#include "sys/kpep_error.h"

/* errno of a failed kpc-style call: the framework returns the sysctl's -1
 * and leaves errno, but a positive errno return is tolerated too. */
int dk__kpc_errno(int rc);

/* Record a failed kperfdata call; returns DK_ENOMEM or DK_EKPEP. */
int dk__fail_kpep_call(const char *call, int code);

/* Most events a database may hold (the largest real one has about 500). */
#define DK__KPEP_EVENTS_MAX 65536

/* Check that kpep_db_events_count agrees with the database's own counts
 * (every count from kperfdata is input) and that the events are 56 bytes
 * apart, as kpep_event says. Returns 0, DK_EKPEP, DK_ELOAD, DK_ENOMEM. */
int dk__kpep_check_stride(const dk_kperfdata_vtable *kd, kpep_db *kdb);

/*
 * Fill s->db from kdb: every event (sorted by name), the fixed events, and
 * the counter counts given (fixed, configurable, power). *handles receives,
 * for each view entry, its kpep_event. Returns 0, DK_ENOMEM.
 */
int dk__kpep_view(dk_sampler *s, kpep_db *kdb, const size_t counters[3], kpep_event ***handles);

/* Free what dk__kpep_view allocated in s->db. */
void dk__kpep_view_free(dk_sampler *s);

#endif /* DKPERF_BACKEND_KPEP_COMMON_H */
