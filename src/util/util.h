/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * util/util.h - the bottom layer of libdkperf: the per-thread error detail,
 * string helpers and sorting. Everything may use it; it uses nothing of
 * libdkperf but the public headers. Not installed.
 */
#ifndef DKPERF_UTIL_H
#define DKPERF_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "dkperf.h"

#if defined(__GNUC__) || defined(__clang__)
#define DK__PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define DK__LIKELY(x) __builtin_expect(!!(x), 1)
#define DK__UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define DK__PRINTF(fmt, args)
#define DK__LIKELY(x) (x)
#define DK__UNLIKELY(x) (x)
#endif

#define DK__COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* Text the caller gave (an event name, a term), echoed in a message: at
 * most 64 bytes and "..." so that what follows, the cause, is not cut off.
 * Use as dk__fail(code, "event " DK__SHOWN_FMT ": ...", DK__SHOWN(name)). */
#define DK__SHOWN_FMT "%.64s%s"
#define DK__SHOWN(text) (text), (strlen(text) > 64 ? "..." : "")

/*
 * Record a failure for dk_last_error() and return code. The message is a
 * sentence fragment naming what failed ("event FOO: ..."); os_err and
 * kpep_err are kept for dk_last_os_error() / dk_last_kpep_error().
 */
int dk__fail(int code, const char *fmt, ...) DK__PRINTF(2, 3);
/* As dk__fail, and append ": <strerror(os_err)>" and keep os_err. */
int dk__fail_os(int code, int os_err, const char *fmt, ...) DK__PRINTF(3, 4);
/* As dk__fail, with the message formatted from fmt and ap, then suffix
 * (may be NULL) appended; keeps os_err and kpep_err. For layers that add
 * their own suffix (kperfdata's error names). */
int dk__vfail_with(int code, int os_err, int kpep_err, const char *suffix, const char *fmt,
                   va_list ap) DK__PRINTF(5, 0);

/* The calling thread's error detail, saved so that a call which fails on
 * the way to succeeding (a backend that falls back, a group whose events
 * are partly unsupported) can leave dk_last_error() as it found it. */
typedef struct dk__error_state {
    char detail[1024];
    int os_error;
    int kpep_error;
} dk__error_state;

void dk__error_save(dk__error_state *st);
void dk__error_restore(const dk__error_state *st);

/* Whether /proc says process pid has exited and waits to be reaped (a
 * zombie, state Z or X); false when it runs, is gone or /proc cannot tell. */
bool dk__proc_is_zombie(long pid);

/* Nanoseconds on CLOCK_MONOTONIC (util/clock.c; the tools have theirs in
 * src/common/clock.c, a layer libdkperf is not built on). */
uint64_t dk__now_ns(void);

/* Copy src into dst (size bytes), always terminated; returns strlen(src). */
size_t dk__strlcpy(char *dst, const char *src, size_t size);

/* root (a framework root as dk_framework_root gives it) without trailing
 * slashes, into key (size bytes): "R" and "R/" name the same files, so
 * they share one cache entry. */
void dk__root_key(const char *root, char *key, size_t size);

/* Case-insensitive ASCII comparison and substring search. */
int dk__strcasecmp(const char *a, const char *b);
bool dk__strcasestr(const char *hay, const char *needle);

/* Case-insensitive edit distance (insertions, deletions, substitutions)
 * between a and b, or limit + 1 when it is above limit or either string is
 * longer than 64 bytes: for "did you mean" suggestions. */
size_t dk__edit_distance(const char *a, const char *b, size_t limit);

/* Sort n events by name; perm receives, for each sorted position, the
 * event's index before sorting. Returns 0 or DK_ENOMEM. */
int dk__sort_events(dk_database_event *events, size_t n, size_t *perm);

#endif /* DKPERF_UTIL_H */
