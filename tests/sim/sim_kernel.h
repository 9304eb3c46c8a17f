/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sim_kernel.h - the simulated kernel state that both the simulated kperf
 * framework and the simulated libsystem_kernel see: ktrace ownership and
 * the kdebug trace buffer (bsd/kern/kern_ktrace.c, bsd/kern/kdebug.c).
 *
 * On a Mac this state is in the kernel, shared by every caller. Here it
 * lives in one small shared library both simulated images link, so that
 * records the kperf sim emits are read through libsystem's sysctl().
 * Test code; see README.md.
 */
#ifndef DKPERF_SIM_KERNEL_H
#define DKPERF_SIM_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIMK_API __attribute__((visibility("default")))

/* kd_buf of LP64/arm64 (bsd/sys/kdebug_private.h): 64 bytes. */
typedef struct simk_kd_buf {
    uint64_t timestamp;
    uint64_t arg1, arg2, arg3, arg4;
    uint64_t arg5; /* thread id of the emitting thread */
    uint32_t debugid;
    uint32_t cpuid;
    uint64_t unused;
} simk_kd_buf;

_Static_assert(sizeof(simk_kd_buf) == 64, "kd_buf is 64 bytes");

#define SIMK_KTRACE_KDEBUG 0x1u
#define SIMK_KTRACE_KPERF 0x2u

/* ktrace_configure(mask): 0 (the caller owns ktrace now), EPERM (not
 * root) or EBUSY (another live process owns it: DKPERF_SIM_KTRACE_BUSY). */
SIMK_API int simk_ktrace_configure(unsigned mask);
/* ktrace_reset(mask): those subsystems are no longer active; ownership is
 * released when none is. */
SIMK_API void simk_ktrace_reset(unsigned mask);
/* ktrace_read_check(): 0 or EPERM. */
SIMK_API int simk_ktrace_read_check(void);

/* Whether a record with this debug id would be kept now (tracing on and
 * the filter lets it through). */
SIMK_API bool simk_kdebug_wants(uint32_t debugid);
/* Whether tracing is on (a buffer set up and enabled), whatever the filter:
 * the sampling sources run then, each record filtered on its own. */
SIMK_API bool simk_kdebug_tracing(void);
/* Append records (dropped when tracing is off or the filter refuses). */
SIMK_API void simk_emit(const simk_kd_buf *r, size_t n);
/* Records the source could not deliver (TRACE_LOST_EVENTS at next read). */
SIMK_API void simk_lost(void);

/*
 * sysctl({CTL_KERN, KERN_KDEBUG, op[, value]}): returns 0 or an errno
 * value. Only oldp/oldlenp move data (the OID is read-only).
 */
SIMK_API int simk_kdebug_sysctl(const int *mib, unsigned miblen, void *oldp, size_t *oldlenp,
                                const void *newp, size_t newlen);

/*
 * The kperf sim registers how the kernel side reaches it: pull(timeout_ms)
 * turns what its sampling sources caught into records (0: do not wait);
 * changed() runs after tracing was enabled, disabled or removed. Both are
 * called without the kernel's lock held.
 */
SIMK_API void simk_set_hooks(void (*pull)(int timeout_ms), void (*changed)(void));

/*
 * sysctlbyname of kperf's nodes (kperf.*, osfmk/kperf/kperfbsd.c): the
 * kperf sim registers the handler when it loads; without it the names do
 * not exist (ENOENT). Returns 0 or an errno value.
 */
typedef int (*simk_sysctl_fn)(const char *name, void *oldp, size_t *oldlenp, const void *newp,
                              size_t newlen);
SIMK_API void simk_set_kperf_sysctl(simk_sysctl_fn fn);
SIMK_API int simk_kperf_sysctl(const char *name, void *oldp, size_t *oldlenp, const void *newp,
                               size_t newlen);

/* "kdebug.bufinit N\nkdebug.enabled N\nkdebug.nkdbufs N\nktrace.owning_pid PID\n
 * ktrace.active_mask M\nktrace.state S\nsim.kdebug_wraps N\nsim.source_losses N\n"
 * (PID 0: none; the last two counted since the process started) for the
 * state file. */
SIMK_API size_t simk_state_text(char *buf, size_t size);

/* One of those keys from a state file an earlier process left; a NULL key
 * ends the file (the buffer is made then). An owner named there keeps
 * tracing until it is found gone (ktrace_ownership_maintenance). */
SIMK_API void simk_adopt(const char *key, long v);

/* sysctl ktrace.owning_pid: the variable as it is, a dead owner's pid
 * until something runs ktrace_ownership_maintenance (0: none). */
SIMK_API int simk_owning_pid(void);
/* sysctl ktrace.state and ktrace.active_mask: true and *value when name is
 * one of them. */
SIMK_API bool simk_ktrace_value(const char *name, int *value);
/* sysctl ktrace.configured_by: the name of the process that last took
 * ownership ("" before any did), at most size - 1 characters. */
SIMK_API void simk_configured_by(char *name, size_t size);

#endif /* DKPERF_SIM_KERNEL_H */
