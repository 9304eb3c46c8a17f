/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_sample.h - what kperf_sample.c (sampling on the kperf backend)
 * takes from kperf.c: the session's parts and the programming of events
 * on the configurable counters, shared with thread samplers and groups
 * through the arbiter. Not installed.
 */
#ifndef DKPERF_BACKEND_KPERF_SAMPLE_H
#define DKPERF_BACKEND_KPERF_SAMPLE_H

#include "backend/backend.h"
#include "dkperf/kperf.h"
#include "sys/libsystem.h"

/* Events a PMI for a counter event given no period: kpc has no frequency
 * mode (dk_backend_caps.sample_period). */
#define DK__KPERF_SAMPLE_PERIOD 1000000u

typedef struct dk__kperf_prog dk__kperf_prog;

/* The session's framework, framework root and counter counts. */
void dk__kperf_parts(dk_sampler *s, const dk_kperf_vtable **kp, const char **root,
                     uint32_t *fixed_counters, uint32_t *config_counters);

/*
 * Configure and program n events (a fixed event may be replaced by its
 * fallback, as kperfdata places it); counter[i] receives the counter event
 * i landed on (fixed counters first). On failure nothing is programmed.
 */
int dk__kperf_program(dk_sampler *s, const dk_database_event **events, size_t n,
                      const unsigned char *mode, const char *const *label, dk__kperf_prog **out,
                      size_t *counter);
/* Count (system-wide) the program's classes, and per thread too when
 * per_thread (kperf's PMC_THREAD sampler reads the interrupted thread's
 * counters, which are zeros while thread counting is off); stop (with the
 * same per_thread); give the registers back. */
int dk__kperf_prog_start(dk_sampler *s, dk__kperf_prog *p, bool per_thread);
int dk__kperf_prog_stop(dk_sampler *s, dk__kperf_prog *p, bool per_thread);
void dk__kperf_prog_free(dk_sampler *s, dk__kperf_prog *p);

/*
 * A tracing owner that ends without its teardown (SIGKILL, a crash) leaves
 * kperf sampling, kperf's actions and timers, the counters' PMI periods
 * and actions and the trace buffer as they were: XNU drops an owner that
 * has exited (kern_ktrace.c ktrace_ownership_maintenance) but resets kperf
 * and kdebug for the next one only when it takes over from background
 * mode (ktrace_set_owning_proc), so counting would run with PMIs firing.
 *
 * dk__kperf_find_orphans: when nobody owns tracing, what of it is left
 * (o->n 0: nothing, or a check that cannot be made, a read refused). What
 * a live owner holds (Instruments, ktrace, a sampling of this process) is
 * never found. Reads only, before the counters are taken: the calls they
 * make are then bound, and a sampler that cannot take the counters
 * resets nothing.
 *
 * dk__kperf_reset_orphans: reset what was found, once the counters are
 * held, and write a sentence saying what into note ("" when nothing was
 * done). A live owner that takes tracing between the two (kperf_reset's
 * EBUSY) keeps all of it: nothing is reset or said. Returns 0, or the
 * failure of a reset (DK_EPERM, DK_EOS).
 */
typedef struct dk__kperf_orphans {
    const char *left[5]; /* what is left, for the note */
    size_t n;
    int was; /* the dead owner's pid, 0 when unknown */
    const dk__libsystem *ls;
} dk__kperf_orphans;

void dk__kperf_find_orphans(const dk_kperf_vtable *kp, const char *root, dk__kperf_orphans *o);
int dk__kperf_reset_orphans(const dk_kperf_vtable *kp, const dk__kperf_orphans *o, char *note,
                            size_t size);

int dk__kperf_sampling_open(dk_sampling *p);
int dk__kperf_sampling_start(dk_sampling *p);
int dk__kperf_sampling_stop(dk_sampling *p);
int dk__kperf_sampling_drain(dk_sampling *p, dk_sample_fn fn, void *ctx);
int dk__kperf_sampling_wait(dk_sampling *p, int timeout_ms);
void dk__kperf_sampling_close(dk_sampling *p);

#endif /* DKPERF_BACKEND_KPERF_SAMPLE_H */
