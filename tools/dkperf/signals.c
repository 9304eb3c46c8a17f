/*
 * signals.c - the signals dkperf holds while it owns counters (see
 * signals.h).
 */
#include <string.h>
#include <sys/types.h>

#include "signals.h"

/*
 * Signals dkperf passes on to the command while it runs, and the
 * dispositions dkperf was started with: the command gets those back before
 * exec, so it sees what it would have seen without dkperf.
 */
static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])
static struct sigaction saved[NFORWARDED], saved_pipe;

volatile sig_atomic_t signals_child_pid;
static volatile sig_atomic_t got_signal;     /* the last signal caught, or 0 */
static volatile sig_atomic_t pending_signal; /* the last one caught while no command ran */

static void forward_signal(int sig)
{
    got_signal = sig;
    if (signals_child_pid > 0)
        kill((pid_t)signals_child_pid, sig);
    else
        pending_signal = sig;
}

void signals_catch(void)
{
    struct sigaction sa, ign;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < NFORWARDED; k++) {
        /* A signal dkperf was told to ignore (nohup) stays ignored, for both. */
        sigaction(forwarded[k], NULL, &saved[k]);
        if (saved[k].sa_handler != SIG_IGN)
            sigaction(forwarded[k], &sa, NULL);
    }
    /* A command that dies before it is let go must not take dkperf with it. */
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &saved_pipe);
}

void signals_restore(void)
{
    for (size_t k = 0; k < NFORWARDED; k++)
        sigaction(forwarded[k], &saved[k], NULL);
    sigaction(SIGPIPE, &saved_pipe, NULL);
}

int signals_got(void) { return got_signal; }

int signals_pending(void) { return pending_signal; }

void signals_hold_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t k = 0; k < NFORWARDED; k++)
        sigaddset(set, forwarded[k]);
}

bool signals_pipe_was_ignored(void) { return saved_pipe.sa_handler == SIG_IGN; }
