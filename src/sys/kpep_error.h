/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sys/kpep_error.h - failures that carry a kperfdata (KPEP) error code.
 * Not installed.
 */
#ifndef DKPERF_SYS_KPEP_ERROR_H
#define DKPERF_SYS_KPEP_ERROR_H

#include "util/util.h"

/* As dk__fail, and append " (kperfdata: <sentence>, <name>)" and keep
 * kpep_err for dk_last_kpep_error(). */
int dk__fail_kpep(int code, int kpep_err, const char *fmt, ...) DK__PRINTF(3, 4);

#endif /* DKPERF_SYS_KPEP_ERROR_H */
