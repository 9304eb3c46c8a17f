/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * core.h - what the core API's files share beyond the backend contract
 * (backend/backend.h): name resolution, the sampler's reference count,
 * portable names. Not installed.
 */
#ifndef DKPERF_CORE_H
#define DKPERF_CORE_H

#include "backend/backend.h"

/* Resolve an event name against s's database (portable names, native
 * names, aliases, the backend's own syntax). */
int dk__resolve_name(dk_sampler *s, const char *name, const dk_database_event **out);

/* As dk__resolve_name, for a name that may end in perf's privilege
 * modifiers (":u", ":k", ":uk"): *mode receives DK__MODE_* (0 without), and
 * *label, when label is not NULL and modifiers were given, a malloc'd
 * "<native name>:<modifiers>" for the caller to free. */
int dk__resolve_spec(dk_sampler *s, const char *name, const dk_database_event **out,
                     unsigned char *mode, char **label);

/* DK_EINVAL with the reason when s was opened with DK_SAMPLER_QUERY_ONLY
 * (what names the refused call); 0 otherwise. */
int dk__sampler_counts(const dk_sampler *s, const char *what);

/* Drop a reference to s; the last one frees it. */
void dk__sampler_unref(dk_sampler *s);
/* Give the counters back if s was released or closed and no thread sampler
 * of it runs any more. Caller holds s->lock. */
int dk__sampler_settle(dk_sampler *s);

/* Portable names: index of name (case-insensitive) or -1, and the native
 * candidates for a database family (NULL-terminated). */
int dk__portable_index(const char *name);
/* The names (portable, native or alias) nearest to a name the database does
 * not know: those within one or two typos first, nearest first, then those
 * that contain it. Fills near[] with up to max (at most 8) names the
 * database or the portable table owns and returns how many. */
size_t dk__database_near(const dk_database *db, const char *name, const char **near, size_t max);
const char *const *dk__portable_candidates(int index, dk__family family);

/* ev (of db, a sampler's database, or NULL) with its supported flag found:
 * the backend probes an event the first time it is handed out. */
const dk_database_event *dk__database_probe(const dk_database *db, const dk_database_event *ev);
/* dk_database_find without the probe: resolving a name opens nothing. */
const dk_database_event *dk__database_lookup(const dk_database *db, const char *name);

#endif /* DKPERF_CORE_H */
