/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_arbiter.h - the process-wide KPC state the kperf backend shares.
 *
 * force_all_ctrs, the counting classes and the configurable counters'
 * registers are system-wide, so one arbiter per loaded kperf.framework
 * keeps several samplers and thread samplers of a process from undoing each
 * other:
 *
 *   - force_all_ctrs is saved by the first acquisition and restored by the
 *     last release;
 *   - a register word stays programmed while any claim uses it, and another
 *     claim may share it only with the same word;
 *   - counting is on for the union of the classes of running claims, and
 *     off only when the last one stops.
 *
 * Not installed.
 */
#ifndef DKPERF_BACKEND_KPERF_ARBITER_H
#define DKPERF_BACKEND_KPERF_ARBITER_H

#include <stdbool.h>
#include <stdint.h>

#include "dkperf/kperf.h"

#define DK__KPC_CONFIG_MAX KPC_MAX_COUNTERS /* register words of one class */

typedef struct dk__arbiter dk__arbiter;

/* The register counts kpc gave when a sampler opened. */
typedef struct dk__kpc_shape {
    uint32_t fixed_words;    /* kpc_get_config_count(FIXED) */
    uint32_t config_words;   /* kpc_get_config_count(CONFIGURABLE) */
    uint32_t fixed_counters; /* kpc_get_counter_count(FIXED) */
} dk__kpc_shape;

/* The register words one thread sampler or system group programs. */
typedef struct dk__kpc_claim {
    kpc_config_t fixed[4];                   /* fixed-class words (Intel), as kperfdata made them */
    kpc_config_t config[DK__KPC_CONFIG_MAX]; /* configurable words; 0: unused */
    const char *owner[DK__KPC_CONFIG_MAX];   /* the event on each used word, for messages */
    unsigned generation;                     /* arbiter generation the words were programmed in */
    bool programmed;
    bool reprogrammed; /* the registers changed since the last start */
} dk__kpc_claim;

/* Record a failed kpc call (rc as it returned) that call names: privileges,
 * counters held by another client, or the errno. Returns the DK_E* code. */
int dk__kpc_fail(const char *call, int rc);

/* The arbiter of the framework image kp came from (created on first use,
 * never freed: the image is never unloaded). NULL when out of memory. */
dk__arbiter *dk__arbiter_for(const dk_kperf_vtable *kp);

void dk__arbiter_lock(dk__arbiter *a);
void dk__arbiter_unlock(dk__arbiter *a);

/* Take force_all_ctrs (the first holder saves it and sets 1), or give it
 * back (the last holder restores it; a failure says how to by hand). Each
 * locks the arbiter. Return 0 or a DK_E* code. */
int dk__arbiter_acquire(dk__arbiter *a, const dk_kperf_vtable *kp);
int dk__arbiter_release(dk__arbiter *a, const dk_kperf_vtable *kp);

/* Whether a sampler of this process holds force_all_ctrs (locks). */
bool dk__arbiter_holding(dk__arbiter *a);

/* Program c's words, sharing registers already in use with the same word.
 * Caller holds the lock. Returns 0, DK_ECONFLICT (a register in use with
 * another word), DK_EUNAVAILABLE or a kpc failure. */
int dk__arbiter_program(dk__arbiter *a, const dk_kperf_vtable *kp, const dk__kpc_shape *sh,
                        dk__kpc_claim *c);

/* Give back c's registers (locks the arbiter). */
void dk__arbiter_unprogram(dk__arbiter *a, const dk__kpc_shape *sh, dk__kpc_claim *c);

/* Count classes for c (and per thread when per_thread), programming c
 * again first when the counters were given back since. Caller holds the
 * lock; on failure nothing changed. */
int dk__arbiter_start(dk__arbiter *a, const dk_kperf_vtable *kp, const dk__kpc_shape *sh,
                      dk__kpc_claim *c, uint32_t classes, bool per_thread);

/* Stop counting classes for one claim; counting stays on for the classes
 * other running claims use. Caller holds the lock. A failure says what is
 * left on and how to turn it off. */
int dk__arbiter_stop(dk__arbiter *a, const dk_kperf_vtable *kp, uint32_t classes, bool per_thread);

#endif /* DKPERF_BACKEND_KPERF_ARBITER_H */
