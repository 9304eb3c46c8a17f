/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * signals.h - the signals whose default action ends a process, shared by
 * the dkperf tool and libdkbench (compiled into each, never into libdkperf;
 * see CMakeLists.txt here). Internal: hidden in every library it is part
 * of.
 *
 * A process that holds a sampler catches these, gives the counters back
 * from ordinary code and then ends (dkperf.h, "Signals and exit"); the list
 * is one, so that the tool and the harness follow one policy.
 */
#ifndef DKPERF_COMMON_SIGNALS_H
#define DKPERF_COMMON_SIGNALS_H

#include <stddef.h>

/* Fills out[] with every catchable signal whose default action ends the
 * process and that is no fault (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1,
 * SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, and where the system has
 * them SIGPOLL, SIGSTKFLT, SIGPWR and the real-time signals), at most cap of
 * them, and returns how many. SIGPIPE and SIGXFSZ are not in it: they are
 * to be ignored, so that the write fails instead. */
size_t dk__ending_signals(int *out, size_t cap);

/* An upper bound of dk__ending_signals's count. */
#define DK_ENDING_SIGNALS_MAX 96

#endif /* DKPERF_COMMON_SIGNALS_H */
