/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * error.c - the error table, and the per-thread detail of the last failure.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

static _Thread_local char last_detail[sizeof(((dk__error_state *)0)->detail)];
static _Thread_local int last_os_error;
static _Thread_local int last_kpep_error;

const char *dk_strerror(int err)
{
    switch (err) {
    case DK_OK:
        return "success";
#define DK__ERROR_TEXT(name, value, text) \
    case DK_##name:                       \
        return text;
        DK_ERROR_TABLE(DK__ERROR_TEXT)
#undef DK__ERROR_TEXT
    default:
        return "unknown error";
    }
}

const char *dk_error_name(int err)
{
    switch (err) {
    case DK_OK:
        return "DK_OK";
#define DK__ERROR_NAME(name, value, text) \
    case DK_##name:                       \
        return "DK_" #name;
        DK_ERROR_TABLE(DK__ERROR_NAME)
#undef DK__ERROR_NAME
    default:
        return "DK_UNKNOWN";
    }
}

const char *dk_last_error(void) { return last_detail; }

int dk_last_os_error(void) { return last_os_error; }

int dk_last_kpep_error(void) { return last_kpep_error; }

static void set_detail(int os_err, int kpep_err, const char *suffix, const char *fmt, va_list ap)
    DK__PRINTF(4, 0);

static void set_detail(int os_err, int kpep_err, const char *suffix, const char *fmt, va_list ap)
{
    /* Formatted aside first: an argument may be dk_last_error() itself
     * ("%s; then ...", the detail so far made longer). */
    char text[sizeof last_detail];
    int n = vsnprintf(text, sizeof text, fmt, ap);
    if (n < 0) {
        text[0] = '\0';
        n = 0;
    }
    if (suffix != NULL && (size_t)n < sizeof text)
        dk__strlcpy(text + n, suffix, sizeof text - (size_t)n);
    dk__strlcpy(last_detail, text, sizeof last_detail);
    last_os_error = os_err;
    last_kpep_error = kpep_err;
}

int dk__vfail_with(int code, int os_err, int kpep_err, const char *suffix, const char *fmt,
                   va_list ap)
{
    set_detail(os_err, kpep_err, suffix, fmt, ap);
    return code;
}

void dk__error_save(dk__error_state *st)
{
    memcpy(st->detail, last_detail, sizeof st->detail);
    st->os_error = last_os_error;
    st->kpep_error = last_kpep_error;
}

void dk__error_restore(const dk__error_state *st)
{
    memcpy(last_detail, st->detail, sizeof last_detail);
    last_os_error = st->os_error;
    last_kpep_error = st->kpep_error;
}

int dk__fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_detail(0, 0, NULL, fmt, ap);
    va_end(ap);
    return code;
}

/* strerror() is not thread-safe, and strerror_r() has two signatures. */
static const char *os_strerror(int err, char *buf, size_t size)
{
#if defined(__GLIBC__) && defined(_GNU_SOURCE)
    return strerror_r(err, buf, size);
#else
    if (strerror_r(err, buf, size) != 0)
        snprintf(buf, size, "unknown error");
    return buf;
#endif
}

int dk__fail_os(int code, int os_err, const char *fmt, ...)
{
    char text[128], suffix[192];
    va_list ap;
    snprintf(suffix, sizeof suffix, ": %s (errno %d)", os_strerror(os_err, text, sizeof text),
             os_err);
    va_start(ap, fmt);
    set_detail(os_err, 0, suffix, fmt, ap);
    va_end(ap);
    return code;
}
