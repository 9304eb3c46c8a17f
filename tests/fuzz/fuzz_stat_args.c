/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_stat_args.c - libFuzzer target for dkperf stat's command line: the
 * input, split on NUL bytes, is argv after "stat"; the parser runs (it never
 * executes anything) and everything it allocated is freed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stat_options.h"

#define MAX_ARGS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* One copy with a NUL at the end, so the last argument is terminated too. */
    char *text = malloc(size + 1);
    char *argv[MAX_ARGS + 2];
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int argc = 0;
    argv[argc++] = "stat";
    for (size_t at = 0; at <= size && argc <= MAX_ARGS; at += strlen(text + at) + 1)
        argv[argc++] = text + at;
    argv[argc] = NULL;

    stat_options o;
    int rc = stat_parse_args(argc, argv, &o);
    if (rc == 0) {
        /* What a successful parse promises. */
        /* A command, or ids to attach to (-p, -t), never both. */
        bool attached = o.npids > 0;
        if (attached ? o.cmd != NULL || o.pids == NULL : o.cmd == NULL || o.cmd[0] == NULL)
            abort();
        if (o.repeat < 1 || o.repeat > STAT_MAX_RUNS || (attached && o.repeat != 1) ||
            (o.sep != NULL && o.json) || (o.events == NULL) != (o.nevents == 0))
            abort();
        /* A thread is not split by CPU; rows of CPUs need every CPU counted. */
        if (o.threads && (o.all_cpus || o.cpus != NULL || o.aggr != STAT_AGGR_TOTAL))
            abort();
        if ((o.aggr == STAT_AGGR_CPU || o.aggr == STAT_AGGR_CORE) && !o.all_cpus)
            abort();
        if ((o.interval_ms != 0 && o.interval_ms < STAT_MIN_INTERVAL_MS) ||
            (o.interval_ms > 0 && o.repeat != 1))
            abort();
        for (size_t i = 0; i < o.nevents; i++)
            if (o.events[i][0] == '\0')
                abort();
    }
    stat_options_free(&o);
    free(text);
    return 0;
}
