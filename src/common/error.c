/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * error.c - the per-thread error detail of libdkbench and the statistics;
 * see error.h.
 */
#include <stdarg.h>
#include <stdio.h>

#include "common/error.h"

static _Thread_local char detail[1024];

int dkb_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    return code;
}

const char *dkb_last_error(void) { return detail; }
