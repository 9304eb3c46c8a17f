/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * proc.h - what the system says of another process, for the tools.
 */
#ifndef DKPERF_TOOLS_PROC_H
#define DKPERF_TOOLS_PROC_H

#include <stdbool.h>
#include <stdio.h>

/* Whether process (thread false) or thread id still runs. A zombie does
 * not: a process whose first thread has ended does while another of its
 * threads runs (Linux shows its first thread as a zombie then). A process
 * that cannot be looked at (another user's) is taken to run. Without
 * /proc, whether kill(id, 0) finds it (a zombie then counts as running). */
bool proc_alive(int id, bool thread);

#ifdef __linux__
/* /proc/PID/maps, open for reading; once the process's first thread has
 * ended (its maps then read empty while the process runs on), a running
 * thread's /proc/PID/task/TID/maps, which are the same. NULL when neither
 * can be read or the process maps nothing. */
FILE *proc_open_maps(int pid);
#endif

#endif /* DKPERF_TOOLS_PROC_H */
