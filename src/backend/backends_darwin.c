/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * backends_darwin.c - the backends of a macOS build: kperf when the process
 * may take the counters, else selfcounts. perf_event is Linux only.
 */
#include "backend/backends.h"

const dk__backend_entry dk__backends[] = {
    {"kperf", DK_BACKEND_KPERF, &dk__backend_kperf, "macOS"},
    {"selfcounts", DK_BACKEND_SELFCOUNTS, &dk__backend_selfcounts, "macOS"},
    {"perf_event", DK_BACKEND_PERF_EVENT, NULL, "Linux"},
};
const size_t dk__backend_count = DK__COUNT_OF(dk__backends);

size_t dk__backend_probe_order(bool framework_root, const dk__backend **order)
{
    (void)framework_root; /* on a Mac, with or without one */
    order[0] = &dk__backend_kperf;
    order[1] = &dk__backend_selfcounts;
    return 2;
}
