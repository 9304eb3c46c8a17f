/*
 * signals.h - the signals dkperf stat and dkperf bench hold while they own
 * counters: SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to the
 * running command, or remembered while none runs, so that the counters are
 * always given back before dkperf acts on them. A signal dkperf was started
 * ignoring (nohup) stays ignored. SIGPIPE is ignored meanwhile: a command
 * that dies before it is let go must not take dkperf with it.
 */
#ifndef DKPERF_SIGNALS_H
#define DKPERF_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/* Catch the forwarded signals and ignore SIGPIPE, saving the dispositions
 * dkperf was started with. */
void signals_catch(void);
/* Give back the dispositions signals_catch saved; also run in the child
 * before its exec, so the command sees what it would have without dkperf. */
void signals_restore(void);

/* Where the pid of the running command is kept for the handler (0: none
 * runs; a signal is then remembered, not sent). spawn_options.pid_out may
 * point here. */
extern volatile sig_atomic_t signals_child_pid;

/* The last signal caught, or 0. */
int signals_got(void);
/* The last signal caught while no command ran to take it, or 0. */
int signals_pending(void);

/* The forwarded signals, to hold from before a fork until
 * signals_child_pid names the child. */
void signals_hold_set(sigset_t *set);

/* Whether dkperf was started with SIGPIPE ignored. */
bool signals_pipe_was_ignored(void);

#endif /* DKPERF_SIGNALS_H */
