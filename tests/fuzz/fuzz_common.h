/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_common.h - helpers the fuzz targets share: splitting one input into
 * NUL-terminated pieces, and a fake sysfs event_source tree like the one
 * tests/test_perf_units.c builds.
 */
#ifndef DKPERF_FUZZ_COMMON_H
#define DKPERF_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Split data at '\n' into at most max NUL-terminated strings stored in
 * buf (size + 1 bytes, caller's); returns how many. */
size_t fz_split_lines(const uint8_t *data, size_t size, char *buf, char **out, size_t max);

/* A fake event_source tree under /tmp (made once per process, removed at
 * exit): PMU "cpu" (type 4) with formats event, umask, inv, cmask, split,
 * ldlat, bad, and events instructions, mem-loads; PMU "fz" (type 9) whose
 * format and event files fz_write_fz rewrites. Returns its path. */
const char *fz_sysfs(void);

/* Rewrite file rel (e.g. "fz/format/a") of the fake tree with len bytes. */
void fz_write(const char *rel, const char *text, size_t len);

#endif
