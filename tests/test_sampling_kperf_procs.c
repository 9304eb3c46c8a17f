/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_sampling_kperf_procs.c - the processes a kperf sampling names and
 * sees end, through the library's API on the simulated frameworks: an
 * exec while sampled names the new image (TRACE_STRING_EXEC), an exit
 * carries its wait status (BSD_PROC_EXIT's p_xstat), and a pid taken by a
 * new process after an exit is named again. Part of test_sampling_kperf.
 * Simulated only: nothing here ran on Apple hardware.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dkperf.h"
#include "sampling_kperf_helpers.h"

/* bsd/sys/kdebug.h BSDDBG_CODE(DBG_BSD_PROC, BSD_PROC_EXIT) | DBG_FUNC_END. */
#define ID_PROC_EXIT_END 0x04010006u

/* What the records of one pid said, in order. */
typedef struct proc_records {
    int pid;
    char comms[8][40]; /* the names, in order */
    bool execs[8];     /* and whether each came with an exec */
    size_t ncomms, samples, exits, comm_after_exit, samples_after_exit, other;
    size_t samples_before_comm;
    size_t nexec, plain_after_exec; /* exec names; plain names after one */
    bool has_status;
    int status;
} proc_records;

static int collect_proc(void *ctx, const dk_sample *s)
{
    proc_records *c = ctx;
    if (s->kind == DK_SAMPLE_KIND_MAP)
        return 0;
    if (s->pid != c->pid) {
        c->other++;
        return 0;
    }
    if (s->kind == DK_SAMPLE_KIND_COMM) {
        if (c->ncomms < 8) {
            snprintf(c->comms[c->ncomms], sizeof c->comms[0], "%s", s->comm);
            c->execs[c->ncomms] = s->exec;
        }
        c->ncomms++;
        c->plain_after_exec += !s->exec && c->nexec > 0;
        c->nexec += s->exec;
        c->comm_after_exit += c->exits > 0;
    } else if (s->kind == DK_SAMPLE_KIND_EXIT) {
        c->exits++;
        c->has_status = s->has_exit_status;
        c->status = s->exit_status;
    } else {
        c->samples++;
        c->samples_after_exit += c->exits > 0 && c->comm_after_exit == 0;
        c->samples_before_comm += c->ncomms == 0;
    }
    return 0;
}

/* A child that execs sh -c script, sampled by pid from before its exec
 * until it is a zombie. */
static void sample_execs(const char *script_text, proc_records *r, int *wait_status)
{
    memset(r, 0, sizeof *r);
    int go[2];
    CHECK_INT(pipe(go), ==, 0);
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        close(go[1]);
        if (read(go[0], &b, 1) != 1)
            _exit(120);
        char sh[] = "sh", c_opt[] = "-c";
        char *argv[] = {sh, c_opt, (char *)script_text, NULL};
        execvp("/bin/sh", argv);
        _exit(121);
    }
    CHECK(pid > 0);
    close(go[0]);
    r->pid = pid;
    dk_sampler *s = open_sampler();
    dk_sampling_event e = {"cycles", 1000000, 0};
    dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
    o.pid = pid;
    o.record = DK_SAMPLE_TIME | DK_SAMPLE_TID | DK_SAMPLE_IP;
    dk_sampling *p = NULL;
    CHECK_INT(dk_sampling_open(s, &e, 1, &o, &p), ==, 0);
    CHECK_INT(dk_sampling_start(p), ==, 0);
    CHECK_INT((int)write(go[1], "x", 1), ==, 1);
    close(go[1]);
    for (int i = 0; i < 600; i++) {
        siginfo_t si;
        memset(&si, 0, sizeof si);
        bool gone = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                    si.si_pid == pid;
        (void)dk_sampling_wait(p, 50);
        CHECK_INT(dk_sampling_drain(p, collect_proc, r), >=, 0);
        if (gone)
            break;
    }
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect_proc, r), >=, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    CHECK_INT(waitpid(pid, wait_status, 0), ==, pid);
    fprintf(stderr, "child %d: %zu samples, %zu names:", (int)pid, r->samples, r->ncomms);
    for (size_t i = 0; i < r->ncomms && i < 8; i++)
        fprintf(stderr, " %s%s", r->comms[i], r->execs[i] ? "(exec)" : "");
    fprintf(stderr, "; %zu exits, status %s0x%x\n", r->exits, r->has_status ? "" : "(none) ",
            (unsigned)r->status);
}

/* The names r's execs gave, in order, separated by spaces. */
static const char *exec_names(const proc_records *r)
{
    static char out[8 * 41];
    out[0] = '\0';
    for (size_t i = 0; i < r->ncomms && i < 8; i++)
        if (r->execs[i])
            snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", out[0] ? " " : "",
                     r->comms[i]);
    return out;
}

TEST_CASE(each_exec_names_the_new_image_and_the_exit_has_its_status)
{
    if (dkt_is_busybox("/bin/sh") || dkt_is_busybox("/usr/bin/env") || dkt_is_busybox("/bin/env"))
        SKIP("sh and env are BusyBox here: an exec of env is named busybox, not env");
    fresh_state();
    proc_records r;
    int status = 0;
    /* sh, which execs env, which execs sh, which exits 3. */
    sample_execs("i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; exec env sh -c "
                 "'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; exit 3'",
                 &r, &status);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    /* sh, then env, then sh again: one name an image, in order, each an
     * exec (a reader starts the process's maps afresh at each). A sample
     * of the forked child before its first exec (a slow machine) makes
     * one plain name more, before them. */
    CHECK_STR(exec_names(&r), "sh env sh");
    CHECK_U64(r.nexec, ==, 3);
    CHECK_U64(r.ncomms - r.nexec, <=, 1);
    CHECK_U64(r.plain_after_exec, ==, 0);
    CHECK_U64(r.samples, >=, 5);
    CHECK_U64(r.samples_before_comm, ==, 0);
    /* p_xstat: what waitpid gave. */
    CHECK_U64(r.exits, ==, 1);
    CHECK(r.has_status);
    CHECK_INT(r.status, ==, status);
    CHECK_U64(r.other, ==, 0);
    check_disarmed(state_path());
}

/* sh that execs sh: the name stays, but the second exec is a COMM record
 * too, for a reader to drop the first image's maps there. */
TEST_CASE(an_exec_of_the_same_name_is_still_marked)
{
    if (dkt_is_busybox("/bin/sh"))
        SKIP("sh is BusyBox here: its exec is named busybox");
    fresh_state();
    proc_records r;
    int status = 0;
    sample_execs("i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; exec sh -c "
                 "'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done; exit 4'",
                 &r, &status);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 4);
    CHECK_STR(exec_names(&r), "sh sh");
    CHECK_U64(r.nexec, ==, 2);
    CHECK_U64(r.ncomms - r.nexec, <=, 1);
    CHECK_U64(r.plain_after_exec, ==, 0);
    check_disarmed(state_path());
}

/* This process sampled; then a BSD_PROC_EXIT for its pid, as when the
 * process that had the pid exits and a new one takes it during a long
 * recording: the EXIT record, and the new process is named again (a COMM
 * after the EXIT, before its samples). */
TEST_CASE(a_pid_taken_again_after_an_exit_is_named_again)
{
    fresh_state();
    sim_kernel k = sim_kernel_open();
    dk_sampler *s = open_sampler();
    dk_sampling *p = open_timer_sampling(s, 1000000);
    proc_records r;
    memset(&r, 0, sizeof r);
    r.pid = getpid();
    CHECK_INT(dk_sampling_start(p), ==, 0);
    dkt_hot_caller(30000000);
    CHECK_INT(dk_sampling_drain(p, collect_proc, &r), >=, 0);
    CHECK_U64(r.ncomms, ==, 1);
    CHECK(!r.execs[0]); /* named when first seen: no exec */
    /* proc_exit's END: (pid, p_xstat), the exiting thread in arg5. */
    simk_kd_buf x;
    memset(&x, 0, sizeof x);
    x.debugid = ID_PROC_EXIT_END;
    x.arg1 = (uint64_t)getpid();
    x.arg2 = 0x200; /* exit(2) */
    x.arg5 = (uint64_t)getpid();
    k.emit(&x, 1);
    size_t before = r.samples;
    dkt_hot_caller(30000000);
    CHECK_INT(dk_sampling_stop(p), ==, 0);
    CHECK_INT(dk_sampling_drain(p, collect_proc, &r), >=, 0);
    dk_sampling_close(p);
    dk_sampler_close(s);
    fprintf(stderr, "%zu samples (%zu after the exit), %zu names, %zu exits\n", r.samples,
            r.samples - before, r.ncomms, r.exits);
    CHECK_U64(r.exits, ==, 1);
    CHECK(r.has_status);
    CHECK_INT(r.status, ==, 0x200);
    CHECK_U64(r.ncomms, ==, 2);
    CHECK_U64(r.comm_after_exit, ==, 1);
    CHECK_STR(r.comms[1], r.comms[0]);
    CHECK(!r.execs[1]);
    CHECK_U64(r.samples - before, >, 0);
    /* Every sample after the exit came after the new name. */
    CHECK_U64(r.samples_after_exit, ==, 0);
    check_disarmed(state_path());
}
