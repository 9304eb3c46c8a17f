/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * backends.h - the backends this build has and the order to probe them in.
 * One backends_<os>.c per operating system defines them; the build picks
 * it, so that no backend needs a stub where it cannot run. Not installed.
 */
#ifndef DKPERF_BACKEND_BACKENDS_H
#define DKPERF_BACKEND_BACKENDS_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/backend.h"

typedef struct dk__backend_entry {
    const char *name; /* as DKPERF_BACKEND spells it */
    dk_backend_kind kind;
    const dk__backend *backend; /* NULL: not on this operating system */
    const char *os;             /* the operating system it runs on, for messages */
} dk__backend_entry;

/* Every backend libdkperf knows, whether or not this build has it. */
extern const dk__backend_entry dk__backends[];
extern const size_t dk__backend_count;

/* The largest number of backends dk__backend_probe_order returns. */
#define DK__PROBE_MAX 4

/*
 * The backends to try, best first, into order (DK__PROBE_MAX entries).
 * framework_root: a framework root was given, so that the simulated Mac
 * behaves like a Mac. Returns how many (0: none works on this system).
 */
size_t dk__backend_probe_order(bool framework_root, const dk__backend **order);

#endif /* DKPERF_BACKEND_BACKENDS_H */
