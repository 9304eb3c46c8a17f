/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * child.h - a command run as a child process: forked and held before its
 * exec (child_prepare, child_release), or started at once with
 * posix_spawn (child_launch).
 *
 * child_prepare forks a child that waits on a pipe before it execs the
 * command: the caller learns its pid and can open counters on it first.
 * child_release lets it go; child_exec_result then tells whether the exec
 * happened (the error pipe is closed on exec) or failed (the child writes
 * its errno and exits 127 or 126, as a shell would). child_wait_exit waits
 * without reaping, so that the exited process can still be read;
 * child_reap reaps it with its resource usage. child_abandon kills a child
 * that is not to run after all.
 *
 * Every function returns 0 or a negative errno and prints nothing. A child
 * that dies before its release makes child_release fail with -EPIPE, and
 * raise SIGPIPE: a caller that must survive this ignores SIGPIPE.
 */
#ifndef DKPERF_TOOLS_CHILD_H
#define DKPERF_TOOLS_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

typedef struct child_options {
    /* Descriptors the child puts on its stdin, stdout, stderr once
     * released; -1 leaves the inherited one. */
    int stdin_fd, stdout_fd, stderr_fd;
    /* Signals blocked from before the fork until *pid_out holds the pid,
     * so that a handler passing them on never misses the child; the child
     * takes back the caller's mask. NULL: nothing held. */
    const sigset_t *hold;
    volatile sig_atomic_t *pid_out; /* NULL: nobody to tell */
    /* Runs in the child right after the fork (async-signal-safe calls
     * only), e.g. to give back signal dispositions. NULL: none. */
    void (*in_child)(void);
} child_options;

#define CHILD_OPTIONS_INIT           \
    {                                \
        -1, -1, -1, NULL, NULL, NULL \
    }

typedef struct child_process {
    pid_t pid;          /* the child, or -1 */
    int go_fd;          /* write end of the release pipe, -1 once released */
    int err_fd;         /* read end of the exec-error pipe, -1 once read */
    const char *failed; /* the call child_prepare failed in ("pipe", "fork"), for messages */
} child_process;

/* Forks the child of argv[0] (searched in PATH) and holds it. o may be
 * NULL. On failure nothing is left: no child, no descriptor. */
int child_prepare(child_process *c, char *const argv[], const child_options *o);

/* Lets the child exec. -EPIPE: it died before (killed, or the caller
 * closed its pipe). */
int child_release(child_process *c);

/* After the release, waits until the child has exec'd (*exec_errno = 0) or
 * failed to (*exec_errno = the exec's errno). */
int child_exec_result(child_process *c, int *exec_errno);

/* The exit status of a child whose exec failed with exec_errno: 127 when
 * the command was not found, 126 when it could not run. */
int child_exec_status(int exec_errno);

/* Waits for the child to exit without reaping it (its pid stays valid and
 * its totals readable); si may be NULL. Retries on EINTR. */
int child_wait_exit(const child_process *c, siginfo_t *si);

/* Reaps the child (waiting when it runs); status and ru may be NULL.
 * Retries on EINTR. Closes what is left open; c->pid becomes -1. */
int child_reap(child_process *c, int *status, struct rusage *ru);

/* Starts argv[0] (searched in PATH) with stdin on null_fd, and stdout and
 * stderr on it too unless show_output; the child takes the signal mask
 * *mask and the default action of every signal in *dfl (NULL: none), for
 * callers that need no hold before its exec. Returns 0 and sets *pid, or
 * the errno of the failure, the exec's included (the child then never
 * ran). */
int child_launch(pid_t *pid, char *const argv[], int null_fd, bool show_output,
                 const sigset_t *mask, const sigset_t *dfl);

/* The same two for a child started otherwise (child_launch): 0 or -errno. */
int child_wait_pid_exit(pid_t pid, siginfo_t *si);
int child_reap_pid(pid_t pid, int *status, struct rusage *ru);

/* Gives up on a child: closes its pipes, kills it and reaps it. */
void child_abandon(child_process *c);

#endif /* DKPERF_TOOLS_CHILD_H */
