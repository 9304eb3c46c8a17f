/*
 * internal.h - helpers shared by every part of libdkperf. Not installed.
 */
#ifndef DKPERF_INTERNAL_H
#define DKPERF_INTERNAL_H

#include <stddef.h>

#include "dkperf/error.h"

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

/*
 * Record a failure for dk_last_error() and return code. The message is a
 * sentence fragment naming what failed ("event FOO: ..."); os_err and
 * kpep_err are kept for dk_last_os_error() / dk_last_kpep_error().
 */
int dk__fail(int code, const char *fmt, ...) DK__PRINTF(2, 3);
/* As dk__fail, and append ": <strerror(os_err)>" and keep os_err. */
int dk__fail_os(int code, int os_err, const char *fmt, ...) DK__PRINTF(3, 4);
/* As dk__fail, and append " (kperfdata: <name>)" and keep kpep_err. */
int dk__fail_kpep(int code, int kpep_err, const char *fmt, ...) DK__PRINTF(3, 4);

/* Copy src into dst (size bytes), always terminated; returns strlen(src). */
size_t dk__strlcpy(char *dst, const char *src, size_t size);

/* The root a load with root uses (dk_framework_root), without trailing
 * slashes, into key (size bytes): "R" and "R/" name the same files, so
 * they share one cache entry. */
void dk__root_key(const char *root, char *key, size_t size);

#endif /* DKPERF_INTERNAL_H */
