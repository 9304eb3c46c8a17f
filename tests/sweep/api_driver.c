/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * api_driver.c - the main API sequence for the fault and malloc
 * sweeps: sampler open; thread open, start, sample, stop, close; group
 * open, start, read, stop, close (process scope, then every CPU unless
 * --process-only); release; close. Event names may be given as arguments.
 * On the first failure it prints one line naming the call and the library's
 * detail, closes what it holds as a careful program does, and exits 1;
 * exit 3 when a failure came without any detail.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dkperf.h>

static dk_sampler *s;
static dk_thread *t;
static dk_group *g;

static void check(int rc, const char *what)
{
    if (rc == 0)
        return;
    const char *detail = dk_last_error();
    bool empty = detail == NULL || detail[0] == '\0';
    fprintf(stderr, "sweep_api_driver: %s: %s: %s\n", what, dk_error_name(rc),
            empty ? "(no detail)" : detail);
    dk_group_close(g);
    dk_thread_close(t);
    dk_sampler_close(s);
    exit(empty ? 3 : 1);
}

static void group(dk_scope scope, const char *const *names, size_t n)
{
    uint64_t v[8];
    check(dk_group_open(s, scope, 0, names, n, DK_GROUP_PARTIAL, &g), "dk_group_open");
    check(dk_group_start(g), "dk_group_start");
    check(dk_group_read(g, v, NULL), "dk_group_read");
    check(dk_group_stop(g), "dk_group_stop");
    dk_group_close(g);
    g = NULL;
}

int main(int argc, char **argv)
{
    /* [--process-only] [event names, at most 3] */
    bool system = true;
    if (argc > 1 && strcmp(argv[1], "--process-only") == 0) {
        system = false;
        argc--;
        argv++;
    }
    const char *names[3] = {"instructions", "cycles", "branches"};
    size_t n = 3;
    if (argc > 1) {
        n = (size_t)argc - 1 > 3 ? 3 : (size_t)argc - 1;
        for (size_t i = 0; i < n; i++)
            names[i] = argv[i + 1];
    }
    uint64_t a[3], b[3];
    check(dk_sampler_open(&s, NULL), "dk_sampler_open");
    check(dk_thread_open_names(s, names, n, &t), "dk_thread_open_names");
    check(dk_thread_start(t), "dk_thread_start");
    check(dk_thread_sample(t, a), "dk_thread_sample");
    volatile unsigned sink = 0;
    for (unsigned i = 0; i < 100000; i++)
        sink += i;
    (void)sink;
    check(dk_thread_sample(t, b), "dk_thread_sample");
    check(dk_thread_stop(t), "dk_thread_stop");
    dk_thread_close(t);
    t = NULL;
    group(DK_SCOPE_PROCESS, names, n);
    if (system)
        group(DK_SCOPE_SYSTEM, names, n);
    check(dk_sampler_release(s), "dk_sampler_release");
    dk_sampler_close(s);
    return 0;
}
