/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_tasks.c - the threads of a running process, from /proc/PID/task, for
 * counting a process that is already running: perf_event_open with a pid
 * counts that one task, and with inherit the tasks it creates afterwards,
 * never the threads it already has (perf stat -p opens one counter per
 * thread the same way).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "backend/perf_event/pe_internal.h"

int dk__pe_task_ids(int pid, int **tids, size_t *n)
{
    char path[64];
    *tids = NULL;
    *n = 0;
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    size_t cap = 16, count = 0;
    int *ids = malloc(cap * sizeof *ids);
    if (ids == NULL)
        return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
    DIR *d = opendir(path);
    if (d == NULL) {
        /* No /proc (or no such process): the pid alone; perf_event_open
         * then says whether the process exists. */
        ids[0] = pid;
        *tids = ids;
        *n = 1;
        return 0;
    }
    /* The process itself first: its failure is the one to report. */
    ids[count++] = pid;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long t = strtol(de->d_name, &end, 10);
        if (end == de->d_name || *end != '\0' || t <= 0 || t == pid || t > 0x7fffffffL)
            continue;
        if (count == cap) {
            int *grown = realloc(ids, cap * 2 * sizeof *ids);
            if (grown == NULL) {
                closedir(d);
                free(ids);
                return dk__fail(DK_ENOMEM, "dk_group_open: out of memory");
            }
            ids = grown;
            cap *= 2;
        }
        ids[count++] = (int)t;
    }
    closedir(d);
    *tids = ids;
    *n = count;
    return 0;
}
