/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sampling_kperf_helpers.h - what test_sampling_kperf.c and
 * test_sampling_kperf_trace.c share: the busy functions the samples must
 * land in, opening a kperf sampler and a sampling, and the simulated
 * machine's state file (DKPERF_SIM_STATE), read to check that a closed
 * sampling left nothing armed.
 */
#ifndef DKPERF_TEST_SAMPLING_KPERF_HELPERS_H
#define DKPERF_TEST_SAMPLING_KPERF_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkperf.h"
#include "sim/sim_kernel.h"

typedef struct collected {
    size_t samples, maps, in_hot, user, hot_from_caller, bad_pid, bad_period, comms;
    uint64_t last_time;
    bool time_backwards;
    uint64_t period;
} collected;

/* The function the samples must land in, for ns of this thread's CPU
 * time, and its caller; exported, so that dladdr names them. */
void dkt_hot_loop(uint64_t ns);
void dkt_hot_caller(uint64_t ns);

/* The kperf backend's sampler, checked to open. */
dk_sampler *open_sampler(void);
dk_sampling *open_sampling(dk_sampler *s, const char *event, uint64_t period, unsigned record);
dk_sampling *open_timer_sampling(dk_sampler *s, uint64_t period_ns);
/* A drain callback counting the samples into a collected. */
int collect_any(void *ctx, const dk_sample *s);

/* The simulated libsystem's sysctl and sysctlbyname and the sim kernel's
 * simk_emit, as loaded by the library: what another client (or the
 * kernel's other writers) does beside it. */
typedef struct sim_kernel {
    int (*sysctl)(int *, unsigned, void *, size_t *, void *, size_t);
    int (*sysctlbyname)(const char *, void *, size_t *, void *, size_t);
    void (*emit)(const simk_kd_buf *, size_t);
} sim_kernel;
sim_kernel sim_kernel_open(void);

/* The sim's state file, and its "KEY VALUE" lines. */
const char *state_path(void);
long state_value(const char *path, const char *key);
/* A state file left by an earlier run would be adopted: start from none. */
void fresh_state(void);
/* Nothing armed; check_disarmed_but leaves out the last skip checks (the
 * counters' own: counting, forced). */
void check_disarmed_but(const char *path, size_t skip);
void check_disarmed(const char *path);
/* Whether path is BusyBox (a system such as the arm64 test guest's),
 * whose applets take their name from argv[0]: copied or run under another
 * name, it is not the program its name says. */
bool dkt_is_busybox(const char *path);

#endif /* DKPERF_TEST_SAMPLING_KPERF_HELPERS_H */
