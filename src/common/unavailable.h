/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * unavailable.h - saying once which events cannot be counted here, and
 * why: one line per reason, naming every event it holds for, instead of
 * the same reason once per event, per CPU or per benchmark. Shared by the
 * reports of libdkbench and the tools (see text.h for where it is built).
 * Internal.
 */
#ifndef DKPERF_COMMON_UNAVAILABLE_H
#define DKPERF_COMMON_UNAVAILABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The part of an event's reason that other events can share: without a
 * leading error name ("DK_EUNAVAILABLE: ") and the "event NAME " (and
 * "is ") lead of libdkperf's messages, so that "event cpu-cycles is not
 * supported here: no PMU" and "event instructions is not supported here:
 * no PMU" both give "not supported here: no PMU". A pointer into why. */
const char *dk__why_shared(const char *why);

/* Write one line per distinct shared reason among the n events whose
 * why[i] is neither NULL nor "" (the others are available): lead, the
 * names of every event with that reason joined by ", " (each name once),
 * ": ", the reason, then tail. put writes the names and the reason
 * (dk__put_untrusted, dk__put_html, ...); lead and tail are written as
 * they are. Lines come in the order of their first event. Returns the
 * number of lines written. */
size_t dk__put_unavailable(FILE *out, size_t n, const char *const names[], const char *const why[],
                           const char *lead, const char *tail, void (*put)(FILE *, const char *));

#endif /* DKPERF_COMMON_UNAVAILABLE_H */
