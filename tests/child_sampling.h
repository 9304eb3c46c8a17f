/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * child_sampling.h - a child sampled by pid from its exec to its exit, as
 * dkperf record samples a command: what tests/test_sampling_kperf.c (on the
 * simulated frameworks) and tests/hardware/hw_record.c (on a Mac) both
 * check. Plain C over the public API and POSIX, no test framework: failures
 * come back as a message for the caller's own checks.
 */
#ifndef DKPERF_TEST_CHILD_SAMPLING_H
#define DKPERF_TEST_CHILD_SAMPLING_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dkperf.h"

/* A child's records: its name, its samples, its exit. */
typedef struct dkt_child_records {
    pid_t pid;
    size_t samples, comms, exits, samples_after_exit, other;
    size_t comm_after_sample;  /* names after a sample, not at an exec */
    size_t execs_after_sample; /* execs after a sample (of the forked image) */
    char comm[64];
    uint64_t exit_tid;
    int status;     /* waitpid's, once reaped */
    char err[1024]; /* the step that failed, "" when none did */
} dkt_child_records;

static __attribute__((unused)) int dkt_collect_child(void *ctx, const dk_sample *s)
{
    dkt_child_records *c = ctx;
    if (s->kind == DK_SAMPLE_KIND_MAP)
        return 0;
    if (s->pid != c->pid) {
        c->other++;
        return 0;
    }
    switch (s->kind) {
    case DK_SAMPLE_KIND_COMM:
        c->comms++;
        if (c->samples > 0 && s->exec)
            c->execs_after_sample++;
        else if (c->samples > 0)
            c->comm_after_sample++;
        snprintf(c->comm, sizeof c->comm, "%s", s->comm != NULL ? s->comm : "(null)");
        break;
    case DK_SAMPLE_KIND_EXIT:
        c->exits++;
        c->exit_tid = s->tid;
        break;
    default:
        c->samples++;
        if (c->exits > 0)
            c->samples_after_exit++;
        break;
    }
    return 0;
}

/*
 * Fork a child held on a pipe until the sampling has started, then let it
 * exec /bin/sh -c script; sample it by pid (cycles every 10^6) with s,
 * waiting and draining for at most rounds * 50 ms until it exits (a zombie,
 * not yet reaped), then stop, drain, close and reap it. Returns 0, or -1
 * with c->err naming the step that failed (the child is killed and reaped).
 */
static __attribute__((unused)) int dkt_sample_child(dk_sampler *s, const char *script, int rounds,
                                                    dkt_child_records *c)
{
    memset(c, 0, sizeof *c);
    int go[2];
    if (pipe(go) != 0) {
        snprintf(c->err, sizeof c->err, "pipe failed");
        return -1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        close(go[1]);
        if (read(go[0], &b, 1) != 1)
            _exit(120);
        char sh[] = "sh", c_opt[] = "-c";
        char *argv[] = {sh, c_opt, (char *)script, NULL};
        /* execvp, not execl: a Mac program may import only what
         * scripts/macos-imports.allow lists. */
        execvp("/bin/sh", argv);
        _exit(121);
    }
    close(go[0]);
    if (pid < 0) {
        close(go[1]);
        snprintf(c->err, sizeof c->err, "fork failed");
        return -1;
    }
    c->pid = pid;
    dk_sampling_event e = {"cycles", 1000000, 0};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.pid = pid;
    o.record = DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_IP | DK_SAMPLE_PERIOD;
    dk_sampling *p = NULL;
    int rc = dk_sampling_open(s, &e, 1, &o, &p);
    const char *step = "dk_sampling_open";
    if (rc == 0) {
        step = "dk_sampling_start";
        rc = dk_sampling_start(p);
    }
    if (rc == 0) {
        step = "releasing the child";
        rc = write(go[1], "x", 1) == 1 ? 0 : -1;
    }
    close(go[1]);
    for (int i = 0; i < rounds && rc == 0; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        bool gone = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                    si.si_pid == pid;
        (void)dk_sampling_wait(p, 50);
        step = "dk_sampling_drain";
        int n = dk_sampling_drain(p, dkt_collect_child, c);
        rc = n >= 0 ? 0 : n;
        if (gone)
            break;
    }
    if (rc == 0) {
        step = "dk_sampling_stop";
        rc = dk_sampling_stop(p);
    }
    if (rc == 0) {
        step = "dk_sampling_drain after the stop";
        int n = dk_sampling_drain(p, dkt_collect_child, c);
        rc = n >= 0 ? 0 : n;
    }
    if (rc != 0) {
        snprintf(c->err, sizeof c->err, "%s (pid %d): %d %s", step, (int)pid, rc, dk_last_error());
        kill(pid, SIGKILL);
    }
    dk_sampling_close(p);
    if (waitpid(pid, &c->status, 0) != pid && rc == 0) {
        snprintf(c->err, sizeof c->err, "waitpid(%d) failed", (int)pid);
        rc = -1;
    }
    return rc == 0 ? 0 : -1;
}

#endif /* DKPERF_TEST_CHILD_SAMPLING_H */
