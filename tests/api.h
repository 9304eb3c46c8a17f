/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * api.h - helpers for the tests of the public API against the simulated
 * frameworks.
 */
#ifndef DKPERF_TEST_API_H
#define DKPERF_TEST_API_H

#include "dkperf.h"
#include "dkperf/kperf.h"
#include "util.h"

/* The simulated kperf, to look at the state the library left behind. */
static inline const dk_kperf_vtable *raw_kperf(void)
{
    const dk_kperf_vtable *kp = NULL;
    CHECK_INT(dk_kperf_load(NULL, &kp, NULL), ==, 0);
    return kp;
}

static inline int raw_force_all(void)
{
    int v = -1;
    CHECK_INT(raw_kperf()->kpc_force_all_ctrs_get(&v), ==, 0);
    return v;
}

#define CHECK_OK(call)                                                                  \
    do {                                                                                \
        int rc_ = (call);                                                               \
        if (rc_ != 0)                                                                   \
            DKT_FAIL("%s returned %s: %s", #call, dk_error_name(rc_), dk_last_error()); \
    } while (0)

#define CHECK_ERR(call, err)                                                        \
    do {                                                                            \
        int rc_ = (call);                                                           \
        if (rc_ != (err))                                                           \
            DKT_FAIL("%s returned %s, expected %s (%s)", #call, dk_error_name(rc_), \
                     dk_error_name(err), dk_last_error());                          \
    } while (0)

static inline dk_sampler *open_sampler(void)
{
    dk_sampler *s = NULL;
    CHECK_OK(dk_sampler_open(&s, NULL));
    CHECK(s != NULL);
    return s;
}

static inline dk_thread *open_names(dk_sampler *s, const char *const *names, size_t n)
{
    dk_thread *t = NULL;
    int rc = dk_thread_open_names(s, names, n, &t);
    if (rc != 0)
        DKT_FAIL("dk_thread_open_names(%s, ...) returned %s: %s", names[0], dk_error_name(rc),
                 dk_last_error());
    return t;
}

static inline bool is_intel(const dk_sampler *s) { return dk_sampler_cpu(s) == DK_CPU_INTEL; }

#endif /* DKPERF_TEST_API_H */
