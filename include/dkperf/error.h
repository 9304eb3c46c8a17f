/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkperf/error.h - error codes shared by every layer of libdkperf.
 *
 * Every function of libdkperf that can fail returns 0 on success or one of
 * the negative DK_E* codes below. dk_strerror() gives a sentence for a code,
 * dk_error_name() its symbolic name, and dk_last_error() the detail of the
 * calling thread's most recent failure (which event, which symbol, which
 * errno or kperfdata code).
 *
 * The table is an X-macro so that the enum, the names and the sentences can
 * never drift apart.
 */
#ifndef DKPERF_ERROR_H
#define DKPERF_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

#ifndef DK_EXPORT
#if defined(__GNUC__) || defined(__clang__)
#define DK_EXPORT __attribute__((visibility("default")))
#else
#define DK_EXPORT
#endif
#endif

/* X(NAME, value, sentence) */
#define DK_ERROR_TABLE(X)                                                                        \
    X(EINVAL, -1, "invalid argument")                                                            \
    X(ENOMEM, -2, "out of memory")                                                               \
    X(ELOAD, -3, "a framework or one of its symbols could not be loaded")                        \
    X(EPERM, -4,                                                                                 \
      "permission denied: hardware counters need root or the "                                   \
      "com.apple.private.kernel.kpc entitlement (on Linux: CAP_PERFMON or a "                    \
      "lower perf_event_paranoid)")                                                              \
    X(EBUSY, -5,                                                                                 \
      "the counters are held by another client (powermetrics, Instruments, or "                  \
      "another profiler)")                                                                       \
    X(ECPU, -6, "unknown CPU: there is no event table for this processor")                       \
    X(ENOEVENT, -7, "no such event")                                                             \
    X(EUNAVAILABLE, -8, "the event exists but cannot be counted on this CPU or backend")         \
    X(ECONFLICT, -9, "events conflict: they cannot be counted together")                         \
    X(ETOOMANY, -10, "too many events for the available counters")                               \
    X(ESTATE, -11, "the object is not in a state that allows this call")                         \
    X(ETHREAD, -12, "a thread sampler was used from a thread other than the one that opened it") \
    X(EOS, -13, "operating system error")                                                        \
    X(EKPEP, -14, "kperfdata.framework reported an error")                                       \
    X(ENOTSUP, -15, "not supported by this backend or platform")

typedef enum dk_error {
    DK_OK = 0,
#define DK__ERROR_ENUM(name, value, text) DK_##name = value,
    DK_ERROR_TABLE(DK__ERROR_ENUM)
#undef DK__ERROR_ENUM
} dk_error;

/*
 * dk_strerror - a sentence describing an error code.
 *
 * Returns a static string for every DK_* code (DK_OK gives "success") and
 * "unknown error" for anything else. Never returns NULL.
 */
DK_EXPORT const char *dk_strerror(int err);

/*
 * dk_error_name - the symbolic name of an error code, e.g. "DK_ECONFLICT".
 *
 * Returns "DK_OK" for 0 and "DK_UNKNOWN" for codes outside the table.
 */
DK_EXPORT const char *dk_error_name(int err);

/*
 * dk_last_error - detail of the calling thread's most recent failure.
 *
 * A sentence such as "event INST_ALL: counters 7 already used by
 * INST_INT_ALU (kperfdata: conflicting events)". The string lives in
 * thread-local storage and stays valid until the next libdkperf call on the
 * same thread that fails. Returns "" when no call has failed on this thread.
 * Successful calls leave it unchanged.
 */
DK_EXPORT const char *dk_last_error(void);

/*
 * dk_last_os_error - errno of the calling thread's most recent failure, or 0
 * when that failure did not come from a system call.
 */
DK_EXPORT int dk_last_os_error(void);

/*
 * dk_last_kpep_error - the kperfdata (KPEP) error code of the calling
 * thread's most recent failure, or 0 when it did not come from kperfdata.
 */
DK_EXPORT int dk_last_kpep_error(void);

#ifdef __cplusplus
}
#endif

#endif /* DKPERF_ERROR_H */
