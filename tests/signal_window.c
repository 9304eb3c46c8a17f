/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * signal_window.c - an LD_PRELOAD shim that lands a signal in a window too
 * narrow to hit by timing, for dkperf (only a process whose name is
 * "dkperf" is touched; the commands it starts run unharmed).
 *
 *   DKPERF_SIGNAL_BEFORE_HOLD=N  raise SIGINT just before the N-th call of
 *                                sigprocmask(SIG_BLOCK, set) whose set holds
 *                                SIGINT: the signal arrives while no
 *                                command runs, before the next is started
 *   DKPERF_SIGNAL_AFTER_REAP=1   raise SIGTERM as soon as wait4 or waitpid
 *                                has reaped a child; a kill() of a pid that
 *                                was reaped (which may be another process
 *                                by then) is reported on stderr as
 *                                "signal_window: kill(PID, SIG) after PID
 *                                was reaped"
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHIM __attribute__((visibility("default")))

static int active = -1;
static long hold_at;
static int after_reap;
static volatile pid_t reaped[64];
static volatile int nreaped;

static void setup(void)
{
    if (active >= 0)
        return;
    active = strcmp(program_invocation_short_name, "dkperf") == 0;
    const char *v = getenv("DKPERF_SIGNAL_BEFORE_HOLD");
    hold_at = v != NULL ? atol(v) : 0;
    v = getenv("DKPERF_SIGNAL_AFTER_REAP");
    after_reap = v != NULL && atoi(v) != 0;
}

SHIM int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    static int (*real)(int, const sigset_t *, sigset_t *);
    static long calls;
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "sigprocmask");
    setup();
    if (active && hold_at > 0 && how == SIG_BLOCK && set != NULL && sigismember(set, SIGINT) &&
        ++calls == hold_at)
        raise(SIGINT);
    return real(how, set, old);
}

static void reaped_one(pid_t pid)
{
    if (!active || pid <= 0)
        return;
    if (nreaped < 64)
        reaped[nreaped++] = pid;
    if (after_reap)
        raise(SIGTERM);
}

SHIM pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    static pid_t (*real)(pid_t, int *, int, struct rusage *);
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "wait4");
    setup();
    pid_t r = real(pid, status, options, ru);
    int e = errno;
    reaped_one(r);
    errno = e;
    return r;
}

SHIM pid_t waitpid(pid_t pid, int *status, int options)
{
    static pid_t (*real)(pid_t, int *, int);
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "waitpid");
    setup();
    pid_t r = real(pid, status, options);
    int e = errno;
    reaped_one(r);
    errno = e;
    return r;
}

SHIM int kill(pid_t pid, int sig)
{
    static int (*real)(pid_t, int);
    if (real == NULL)
        *(void **)&real = dlsym(RTLD_NEXT, "kill");
    setup();
    for (int k = 0; active && k < nreaped; k++) {
        if (reaped[k] == pid) {
            char line[96];
            int n = snprintf(line, sizeof line, "signal_window: kill(%d, %d) after %d was reaped\n",
                             (int)pid, sig, (int)pid);
            if (n > 0)
                (void)!write(2, line, (size_t)n);
            break;
        }
    }
    return real(pid, sig);
}
