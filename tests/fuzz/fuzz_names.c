/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_names.c - event names given to dk_thread_open_names and
 * dk_group_open, one per input line (at most 16), on one backend: built
 * once against the simulated kperf frameworks (FUZZ_SIM_ROOT defined) and
 * once against perf_event with a fake sysfs tree. Whatever opens is
 * started, read, stopped and closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkperf.h"
#include "fuzz_common.h"

#define MAX_NAMES 16

static dk_sampler *sampler;

static dk_sampler *get_sampler(void)
{
    if (sampler != NULL)
        return sampler;
#ifdef FUZZ_SIM_ROOT
    setenv("DKPERF_FRAMEWORK_ROOT", FUZZ_SIM_ROOT, 1);
    setenv("DKPERF_BACKEND", "kperf", 1);
#else
    setenv("DKPERF_FRAMEWORK_ROOT", "", 1);
    setenv("DKPERF_BACKEND", "perf_event", 1);
    setenv("DKPERF_SYSFS_EVENT_SOURCE", fz_sysfs(), 1);
#endif
    if (dk_sampler_open(&sampler, NULL) != 0) {
        fprintf(stderr, "fuzz_names: dk_sampler_open: %s\n", dk_last_error());
        abort();
    }
    return sampler;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    dk_sampler *s = get_sampler();
    char *buf = malloc(size + 1);
    if (buf == NULL)
        return 0;
    char *names[MAX_NAMES];
    size_t n = fz_split_lines(data, size, buf, names, MAX_NAMES);
    uint64_t values[MAX_NAMES * 2];

    dk_thread *t = NULL;
    if (dk_thread_open_names(s, (const char *const *)names, n, &t) == 0) {
        if (dk_thread_start(t) == 0) {
            dk_thread_sample(t, values);
            dk_thread_stop(t);
        }
        dk_thread_close(t);
    } else if (t != NULL || dk_last_error()[0] == '\0') {
        abort(); /* a failure sets no handle and always says why */
    }

    for (unsigned flags = 0; flags <= DK_GROUP_PARTIAL; flags += DK_GROUP_PARTIAL) {
        dk_group *g = NULL;
        if (dk_group_open(s, DK_SCOPE_PROCESS, 0, (const char *const *)names, n, flags, &g) == 0) {
            if (dk_group_start(g) == 0) {
                dk_group_read(g, values, NULL);
                dk_group_stop(g);
            }
            dk_group_close(g);
        } else if (g != NULL || dk_last_error()[0] == '\0') {
            abort();
        }
    }
    free(buf);
    return 0;
}
