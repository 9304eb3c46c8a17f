/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * signals.c - the signals whose default action ends a process (see
 * signals.h).
 */
#include "common/signals.h"

#include <signal.h>

/*
 * POSIX's list, and the systems' own. SIGXCPU is here, not with the
 * faults: it comes from a limit, and the hard limit's SIGKILL follows only
 * if the process goes on.
 */
static const int ending[] = {
    SIGHUP,
    SIGINT,
    SIGQUIT,
    SIGTERM,
    SIGUSR1,
    SIGUSR2,
    SIGALRM,
    SIGVTALRM,
    SIGPROF,
    SIGXCPU,
#if defined(__linux__)
    /* Linux's own: Darwin's SIGIO discards by default, and its SIGPOLL
     * (strict POSIX builds only) is SIGEMT, a fault. */
    SIGPOLL,
    SIGSTKFLT,
    SIGPWR,
#endif
};

size_t dk__ending_signals(int *out, size_t cap)
{
    size_t n = 0;
    for (size_t k = 0; k < sizeof ending / sizeof ending[0] && n < cap; k++)
        out[n++] = ending[k];
#if defined(SIGRTMIN) && defined(SIGRTMAX)
    /* Real-time signals end a process too; SIGRTMIN is a function call on
     * glibc (it leaves out the ones the C library keeps). */
    for (int sig = SIGRTMIN; sig <= SIGRTMAX && n < cap; sig++)
        out[n++] = sig;
#endif
    return n;
}
