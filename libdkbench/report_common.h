/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_common.h - what the report formats share: checked writes, text
 * escaping for JSON, HTML and CSV, number formatting with units. Internal.
 */
#ifndef DKPERF_BENCH_REPORT_COMMON_H
#define DKPERF_BENCH_REPORT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "libdkbench/model.h"
#include "common/text.h"

/* 0 when every write to out so far succeeded (flushes it), else a DK_EOS
 * failure naming the format and errno. */
int dkb__report_done(FILE *out, const char *format);

/* Names are read with dk__utf8_next (common/text.h): malformed UTF-8 gives
 * U+FFFD one byte at a time, so every report is valid UTF-8 whatever a name
 * holds. Write code point cp as UTF-8. */
void dkb__put_utf8(FILE *out, unsigned long cp);

/* JSON strings, numbers and members: dk__json_* (common/json.h); HTML
 * text and CSV fields: dk__put_html and dk__put_csv (common/text.h). */

/* A per-iteration value with its unit, into buf: time in ns scaled to
 * ns/µs/ms/s, counts with thousands separators or k/M/G. Returns buf. */
char *dkb__fmt_value(char *buf, size_t size, double v, bool is_time);
/* The scale for a time value: divisor for ns and the unit name. */
double dkb__time_scale(double ns, const char **unit);

/* The measure named name (or one of its aliases) when it is available
 * with estimates, else NULL. */
const dkb_measure *dkb__find_measure(const dkb_result *r, const char *const *names);

/* The estimates of m are usable (available and at least two samples). */
bool dkb__has_estimates(const dkb_result *r, const dkb_measure *m);


/* Which events the results could not measure here, and why, said once for
 * the report: one line per reason naming its events over every result
 * (common/unavailable.h), each as lead, text, tail, with header before
 * the first and footer after the last; put writes the text. When no
 * counters could be opened at all (backend "none"), or when no event
 * measure is unavailable, the run's why_no_counters is the one line, if
 * set. The time measure is left out: why a benchmark has no time is its
 * own, said in its row. Returns 0, or DK_ENOMEM with nothing written. */
int dkb__put_unmeasured(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                        size_t n, const char *header, const char *lead, const char *tail,
                        const char *footer, void (*put)(FILE *, const char *));

#endif /* DKPERF_BENCH_REPORT_COMMON_H */
