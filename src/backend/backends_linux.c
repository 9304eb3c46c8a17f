/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * backends_linux.c - the backends of a Linux build: perf_event, and the
 * Darwin backends, which run here against the simulated frameworks.
 */
#include "backend/backends.h"

const dk__backend_entry dk__backends[] = {
    {"kperf", DK_BACKEND_KPERF, &dk__backend_kperf, "macOS"},
    {"selfcounts", DK_BACKEND_SELFCOUNTS, &dk__backend_selfcounts, "macOS"},
    {"perf_event", DK_BACKEND_PERF_EVENT, &dk__backend_perf_event, "Linux"},
};
const size_t dk__backend_count = DK__COUNT_OF(dk__backends);

size_t dk__backend_probe_order(bool framework_root, const dk__backend **order)
{
    size_t n = 0;
    /* The Darwin backends only when a framework root says where they are. */
    if (framework_root) {
        order[n++] = &dk__backend_kperf;
        order[n++] = &dk__backend_selfcounts;
    }
    order[n++] = &dk__backend_perf_event;
    return n;
}
