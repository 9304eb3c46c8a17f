/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * signals.c - the signal policy of the commands that hold machine state
 * (see signals.h): one table, read by every command.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "signals.h"

#include "common/signals.h"

/* Ignored: a write past the limit or to a closed pipe fails with EFBIG or
 * EPIPE and is reported as a write error instead of ending dkperf with the
 * counters held. */
static const int ignored[] = {SIGPIPE, SIGXFSZ};
#define NIGNORED (sizeof ignored / sizeof ignored[0])

/*
 * Caught: every catchable signal whose default action ends the process
 * (common/signals.c has the list, which libdkbench follows too). Passed on
 * to the command while it runs, remembered otherwise; dkperf exits 128 +
 * the signal once the counters are back.
 */
static int all_caught[DK_ENDING_SIGNALS_MAX];
static size_t ncaught;
static struct sigaction saved[DK_ENDING_SIGNALS_MAX], saved_ignored[NIGNORED], saved_chld;

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

static void list_caught(void)
{
    if (ncaught == 0)
        ncaught = dk__ending_signals(all_caught, DK_ENDING_SIGNALS_MAX);
}

void signals_catch(void)
{
    struct sigaction sa, ign;
    list_caught();
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < ncaught; k++) {
        /* A signal dkperf was told to ignore (nohup) stays ignored, for both. */
        sigaction(all_caught[k], NULL, &saved[k]);
        if (saved[k].sa_handler != SIG_IGN)
            sigaction(all_caught[k], &sa, NULL);
    }
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    for (size_t k = 0; k < NIGNORED; k++)
        sigaction(ignored[k], &ign, &saved_ignored[k]);
    /* dkperf waits for its commands and reads them before it reaps them:
     * with SIGCHLD ignored (or SA_NOCLDWAIT) the kernel would reap them
     * at once, and their counts, exit status and wait would be lost. */
    sigaction(SIGCHLD, NULL, &saved_chld);
    if (saved_chld.sa_handler == SIG_IGN || (saved_chld.sa_flags & SA_NOCLDWAIT) != 0) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGCHLD, &dfl, NULL);
    }
}

void signals_restore(void)
{
    for (size_t k = 0; k < ncaught; k++)
        sigaction(all_caught[k], &saved[k], NULL);
    for (size_t k = 0; k < NIGNORED; k++)
        sigaction(ignored[k], &saved_ignored[k], NULL);
    sigaction(SIGCHLD, &saved_chld, NULL);
}

int signals_got(void) { return got_signal; }

int signals_pending(void) { return pending_signal; }

void signals_hold_set(sigset_t *set)
{
    list_caught();
    sigemptyset(set);
    for (size_t k = 0; k < ncaught; k++)
        sigaddset(set, all_caught[k]);
}

int signals_child_prepare(child_process *c, char *const argv[], child_options *so)
{
    sigset_t hold;
    signals_hold_set(&hold);
    so->hold = &hold;
    so->pid_out = &signals_child_pid;
    so->in_child = signals_restore;
    int rc = child_prepare(c, argv, so);
    so->hold = NULL; /* child_prepare is done with it */
    return rc;
}

void signals_default_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t k = 0; k < NIGNORED; k++)
        if (saved_ignored[k].sa_handler != SIG_IGN)
            sigaddset(set, ignored[k]);
}

void signals_end(int rc)
{
    int sig = got_signal;
    if (sig == 0 || rc != 128 + sig)
        return;
    /* Everything is given back and written: end by the signal, so that a
     * shell sees dkperf killed by it (bash stops a script's loop on a
     * SIGINT its child died of, not on one the child exited 130 after).
     * The disposition is the one dkperf was started with, the default (an
     * ignored signal is never caught); a core of a process that has
     * finished its work would tell nothing. */
    fflush(NULL);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
}
