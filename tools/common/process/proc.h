/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * proc.h - what the system says of another process, for the tools.
 */
#ifndef DKPERF_TOOLS_PROC_H
#define DKPERF_TOOLS_PROC_H

#include <stdbool.h>

/* Whether /proc says process pid has exited and waits to be reaped (a
 * zombie, state Z or X); false when it runs, is gone or /proc cannot tell
 * (no /proc: not Linux, or not mounted). */
bool proc_is_zombie(long pid);

#endif /* DKPERF_TOOLS_PROC_H */
