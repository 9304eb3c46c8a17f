/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * launch.h - a command started with posix_spawn, for callers that need no
 * hold before its exec. (Named apart from spawn.h, which would hide the
 * system's <spawn.h> from the files of this directory.)
 */
#ifndef DKPERF_TOOLS_LAUNCH_H
#define DKPERF_TOOLS_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* Starts argv[0] (searched in PATH) with stdin on null_fd, and stdout and
 * stderr on it too unless show_output; the child takes the signal mask
 * *mask and the default action of every signal in *dfl (NULL: none).
 * Returns 0 and sets
 * *pid, or the errno of the failure, the exec's included (the child then
 * never ran). */
int launch_spawn(pid_t *pid, char *const argv[], int null_fd, bool show_output,
                 const sigset_t *mask, const sigset_t *dfl);

#endif /* DKPERF_TOOLS_LAUNCH_H */
