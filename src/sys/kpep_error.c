/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kpep_error.c - names and sentences of kperfdata's error codes, and the
 * failure record that carries one.
 */
#include <stdarg.h>
#include <stdio.h>

#include "dkperf/kperf.h"
#include "sys/kpep_error.h"

#define DK__KPEP_ERRORS(X)                                             \
    X(NONE, "no error")                                                \
    X(INVALID_ARGUMENT, "invalid argument")                            \
    X(OUT_OF_MEMORY, "out of memory")                                  \
    X(IO, "I/O error")                                                 \
    X(BUFFER_TOO_SMALL, "buffer too small")                            \
    X(CUR_SYSTEM_UNKNOWN, "the current system is unknown")             \
    X(DB_PATH_INVALID, "the database path is invalid")                 \
    X(DB_NOT_FOUND, "no database for this CPU")                        \
    X(DB_ARCH_UNSUPPORTED, "the database architecture is unsupported") \
    X(DB_VERSION_UNSUPPORTED, "the database version is unsupported")   \
    X(DB_CORRUPT, "the database is corrupt")                           \
    X(EVENT_NOT_FOUND, "event not found")                              \
    X(CONFLICTING_EVENTS, "conflicting events")                        \
    X(COUNTERS_NOT_FORCED, "all counters must be forced")              \
    X(EVENT_UNAVAILABLE, "event unavailable")                          \
    X(ERRNO, "check errno")

const char *dk_kpep_error_name(int code)
{
    switch (code) {
#define DK__KPEP_NAME(name, text)  \
    case KPEP_CONFIG_ERROR_##name: \
        return "KPEP_CONFIG_ERROR_" #name;
        DK__KPEP_ERRORS(DK__KPEP_NAME)
#undef DK__KPEP_NAME
    default:
        return "KPEP_CONFIG_ERROR_UNKNOWN";
    }
}

const char *dk_kpep_strerror(int code)
{
    switch (code) {
#define DK__KPEP_TEXT(name, text)  \
    case KPEP_CONFIG_ERROR_##name: \
        return text;
        DK__KPEP_ERRORS(DK__KPEP_TEXT)
#undef DK__KPEP_TEXT
    default:
        return "unknown kperfdata error";
    }
}

int dk__fail_kpep(int code, int kpep_err, const char *fmt, ...)
{
    char suffix[160];
    va_list ap;
    snprintf(suffix, sizeof suffix, " (kperfdata: %s, %s)", dk_kpep_strerror(kpep_err),
             dk_kpep_error_name(kpep_err));
    va_start(ap, fmt);
    int rc = dk__vfail_with(code, 0, kpep_err, suffix, fmt, ap);
    va_end(ap);
    return rc;
}
