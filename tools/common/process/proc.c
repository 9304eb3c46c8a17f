/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * proc.c - what /proc says of a process, for the tools (libdkperf keeps
 * its own for its backends: the tools use only its public API).
 */
#include <stdio.h>
#include <string.h>

#include "proc.h"

bool proc_is_zombie(long pid)
{
    /* /proc/PID/stat: "pid (comm) S ..."; comm may hold spaces and ')',
     * so the state is the first field after the last ')'. */
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return false;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *close = strrchr(buf, ')');
    return close != NULL && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}
