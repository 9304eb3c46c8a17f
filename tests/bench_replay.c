/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * bench_replay.c - a dkbench program with one external body that replays
 * runs recorded by dkperf bench, so that the two engines can be compared
 * on the same samples (check_bench_engine.py).
 *
 * usage: bench_replay RUNS_FILE [dk_bench_main options...]
 * RUNS_FILE: the command (the benchmark's name) on its first line; the
 * counter names on the second, space-separated ("-" for none); then one
 * line per run: its wall time in seconds (%.17g) and each counter's value,
 * "-" when not counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkbench.h"

#define MAX_RUNS 4096

typedef struct replay {
    size_t n, next, k;
    double wall[MAX_RUNS];
    unsigned long long v[MAX_RUNS][DK_BENCH_MAX_COUNTERS];
    unsigned char counted[MAX_RUNS][DK_BENCH_MAX_COUNTERS];
} replay;

static replay rp;

static int replay_run(void *ctx, dk_bench_body_run *run)
{
    replay *r = ctx;
    if (run->warmup)
        return 0;
    if (r->next == r->n)
        return dk_bench_fail(DK_EINVAL, "asked for run %zu; %zu were recorded", r->next + 1, r->n);
    size_t i = r->next++;
    run->wall_s = r->wall[i];
    for (size_t c = 0; c < r->k; c++) {
        run->counters[c] = r->v[i][c];
        run->counted[c] = r->counted[i][c];
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_replay RUNS_FILE [options]\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    static char name[4096], line[8192];
    static char names[DK_BENCH_MAX_COUNTERS][128];
    const char *counters[DK_BENCH_MAX_COUNTERS];
    if (f == NULL || fgets(name, sizeof name, f) == NULL || fgets(line, sizeof line, f) == NULL) {
        fprintf(stderr, "bench_replay: cannot read %s\n", argv[1]);
        return 2;
    }
    name[strcspn(name, "\n")] = '\0';
    for (char *t = strtok(line, " \n"); t != NULL && strcmp(t, "-") != 0; t = strtok(NULL, " \n")) {
        snprintf(names[rp.k], sizeof names[rp.k], "%s", t);
        counters[rp.k] = names[rp.k];
        rp.k++;
    }
    while (rp.n < MAX_RUNS && fgets(line, sizeof line, f) != NULL) {
        char *t = strtok(line, " \n");
        if (t == NULL)
            continue;
        rp.wall[rp.n] = strtod(t, NULL);
        for (size_t c = 0; c < rp.k; c++) {
            t = strtok(NULL, " \n");
            rp.counted[rp.n][c] = t != NULL && strcmp(t, "-") != 0;
            rp.v[rp.n][c] = rp.counted[rp.n][c] ? strtoull(t, NULL, 10) : 0;
        }
        rp.n++;
    }
    fclose(f);
    dk_bench_body body = {sizeof body, name, replay_run, &rp, counters, rp.k};
    if (dk_bench_register_body(&body) != 0) {
        fprintf(stderr, "bench_replay: %s\n", dk_bench_last_error());
        return 2;
    }
    argv[1] = argv[0];
    return dk_bench_main(argc - 1, argv + 1);
}
