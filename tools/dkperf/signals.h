/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * signals.h - the signal policy of the dkperf commands that hold machine
 * state (stat, bench and record), in one place (the table in signals.c):
 *
 * - Every catchable signal whose default action ends the process (SIGHUP,
 *   SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
 *   SIGPROF, SIGXCPU, and where the system has them SIGPOLL/SIGIO,
 *   SIGSTKFLT, SIGPWR and the real-time signals) is caught from before the
 *   counters are taken until they are given back: passed on to the running
 *   command, or remembered while none runs, so that the counters are always
 *   given back before dkperf acts on it; dkperf then ends by that signal
 *   (a shell's $? is 128 plus its number), as perf does.
 * - SIGPIPE and SIGXFSZ are ignored meanwhile: a write to a closed pipe or
 *   past the file size limit then fails (EPIPE, EFBIG) and is reported as a
 *   write error, and a command that dies before it is let go cannot take
 *   dkperf with it.
 * - A signal dkperf was started ignoring (nohup) stays ignored, by dkperf
 *   and by the command; the command gets every disposition dkperf was
 *   started with.
 * - SIGCHLD takes its default meanwhile if dkperf was started ignoring it
 *   (or with SA_NOCLDWAIT): dkperf reads a command after it exits and
 *   before it is reaped, which an ignored SIGCHLD would forbid. A command
 *   started with a fork gets it ignored back; one started with posix_spawn
 *   (bench -N) gets the default.
 * - Faults (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS) keep
 *   their default action: a handler cannot safely run after one. They,
 *   SIGKILL and SIGSTOP cannot be cleaned up after; the next command that
 *   finds state left by a process that no longer exists resets it.
 */
#ifndef DKPERF_SIGNALS_H
#define DKPERF_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

#include "child.h"

/* At the very end of dkperf, with rc its exit status: when that is 128 +
 * a signal dkperf caught (passed on to a command that died of it, or acted
 * on itself), end by that signal instead, as perf does; otherwise return. */
void signals_end(int rc);

/* Catch the terminating signals, ignore SIGPIPE and SIGXFSZ and give
 * SIGCHLD its default if it was ignored, saving the dispositions dkperf was
 * started with. */
void signals_catch(void);
/* Give back the dispositions signals_catch saved; also run in the child
 * before its exec, so the command sees what it would have without dkperf. */
void signals_restore(void);

/* Where the pid of the running command is kept for the handler (0: none
 * runs; a signal is then remembered, not sent). child_options.pid_out may
 * point here. */
extern volatile sig_atomic_t signals_child_pid;

/* The last signal caught, or 0. */
int signals_got(void);
/* The last signal caught while no command ran to take it, or 0. */
int signals_pending(void);

/* The caught signals, to hold from before a fork until signals_child_pid
 * names the child. */
void signals_hold_set(sigset_t *set);

/* child_prepare for a command the caught signals are passed on to: they
 * are held from before the fork until signals_child_pid names the child,
 * which gets signals_restore before its exec. so's other fields are the
 * caller's; its hold, pid_out and in_child are set here. */
int signals_child_prepare(child_process *c, char *const argv[], child_options *so);

/* The signals dkperf ignores that it was not started ignoring: a command
 * started without signals_restore (posix_spawn) takes their default. */
void signals_default_set(sigset_t *set);

#endif /* DKPERF_SIGNALS_H */
