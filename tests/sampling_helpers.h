/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sampling_helpers.h - what test_sampling.c and test_sampling_process.c
 * share: workloads with known address ranges and the helpers that open,
 * drain and count perf_event samplings.
 *
 * The busy functions live in sections of their own, so that the linker's
 * __start_/__stop_ symbols give their exact address ranges, against which
 * the sampled instruction pointers and call chains are checked.
 */
#ifndef DKPERF_TEST_SAMPLING_HELPERS_H
#define DKPERF_TEST_SAMPLING_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "util.h"

extern const char __start_dkt_busy[], __stop_dkt_busy[];
extern const char __start_dkt_caller[], __stop_dkt_caller[];
extern const char __start_dkt_loop[], __stop_dkt_loop[];

/* About a few hundred microseconds of arithmetic, in section dkt_busy. */
void busy_chunk(void);
/* This thread's CPU time. */
uint64_t cpu_ns(void);
/* Burn ms of this thread's CPU time, nearly all of it in busy_chunk (called
 * from section dkt_caller); between chunks call between (may be NULL). */
void burn(double ms, void (*between)(void *), void *ctx);
/* A loop of exactly 2 instructions per iteration (n >= 1), in dkt_loop. */
void spin_loop(unsigned long n);
bool in_range(uint64_t ip, const char *start, const char *stop);

/* The perf_event sampler, checked to be it. */
dk_sampler *perf_sampler(void);
/* This process's open descriptors, and its perf_event mappings. */
size_t open_fds(void);
size_t maps_of_perf(void);

/* What a drain saw. */
typedef struct seen {
    size_t samples, maps, comms, exits, others;
    size_t in_busy, in_loop, caller_in_chain, with_chain, user;
    size_t wrong_tid, time_backwards, bad_event;
    uint64_t last_time, period_sum, first_time;
    uint64_t tid; /* expected tid, 0: any */
    size_t n_events;
    bool map_self, map_libc, map_touch;
    size_t comm_touch, exits_other;
    int pid; /* the process of the test, for "other" */
    size_t other_pid_samples;
    uint64_t values_last[2];
    size_t values_backwards, values_seen;
} seen;

/* The drain callback that fills a seen. */
int collect(void *ctx, const dk_sample *x);
void drain_into(dk_sampling *p, seen *w);
/* One event sampled by period or frequency; fails the case when it cannot. */
dk_sampling *open_one(dk_sampler *s, const char *name, uint64_t period, uint64_t freq,
                      dk_sampling_options *o);
uint64_t gettid_u64(void);

#endif /* DKPERF_TEST_SAMPLING_HELPERS_H */
