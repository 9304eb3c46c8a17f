/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * database.c - the read-only event database view a sampler owns.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

const dk_database_event *dk__database_probe(const dk_database *db, const dk_database_event *ev)
{
    if (db == NULL || ev == NULL)
        return ev;
    /* Every database is the one a sampler holds. */
    dk_sampler *s = (dk_sampler *)((const char *)db - offsetof(dk_sampler, db));
    if (s->backend->probe_event != NULL && ev >= db->events && ev < db->events + db->event_count)
        s->backend->probe_event(s, ev);
    return ev;
}

const char *dk_database_name(const dk_database *db) { return db != NULL ? db->name : NULL; }

/* The CPU's description, which a backend may read only when it is asked for. */
static const dk_database *described(const dk_database *db)
{
    if (db != NULL) {
        dk_sampler *s = (dk_sampler *)((const char *)db - offsetof(dk_sampler, db));
        if (s->backend->describe_cpu != NULL)
            s->backend->describe_cpu(s);
    }
    return db;
}

const char *dk_database_cpu_id(const dk_database *db)
{
    return db != NULL ? described(db)->cpu_id : NULL;
}

const char *dk_database_marketing_name(const dk_database *db)
{
    return db != NULL ? described(db)->marketing_name : NULL;
}

dk_arch dk_database_arch(const dk_database *db)
{
    return db != NULL ? described(db)->arch : DK_ARCH_UNKNOWN;
}

size_t dk_database_counter_count(const dk_database *db, unsigned classes)
{
    if (db == NULL)
        return 0;
    size_t n = 0;
    if (classes & DK_COUNTERS_FIXED)
        n += db->counters[0];
    if (classes & DK_COUNTERS_CONFIGURABLE)
        n += db->counters[1];
    if (classes & DK_COUNTERS_POWER)
        n += db->counters[2];
    return n;
}

size_t dk_database_event_count(const dk_database *db) { return db != NULL ? db->event_count : 0; }

const dk_database_event *dk_database_event_at(const dk_database *db, size_t i)
{
    return db != NULL && i < db->event_count ? dk__database_probe(db, &db->events[i]) : NULL;
}

size_t dk_database_fixed_count(const dk_database *db) { return db != NULL ? db->fixed_count : 0; }

const dk_database_event *dk_database_fixed_event(const dk_database *db, size_t i)
{
    return db != NULL && i < db->fixed_count ? dk__database_probe(db, db->fixed[i]) : NULL;
}

const dk_database_event *dk__database_lookup(const dk_database *db, const char *name)
{
    return db != NULL && name != NULL ? dk__database_find(db, name) : NULL;
}

const dk_database_event *dk_database_find(const dk_database *db, const char *name)
{
    return dk__database_probe(db, dk__database_lookup(db, name));
}

size_t dk_database_match(const dk_database *db, const char *partial,
                         const dk_database_event **matches, size_t max)
{
    if (db == NULL || partial == NULL)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < db->event_count; i++) {
        const dk_database_event *ev = &db->events[i];
        if (dk__strcasestr(ev->name, partial) ||
            (ev->alias != NULL && dk__strcasestr(ev->alias, partial))) {
            if (matches != NULL && n < max)
                matches[n] = dk__database_probe(db, ev);
            n++;
        }
    }
    return n;
}

/* Keep name in near[] (ordered by distance, then first seen), at most max. */
static void near_add(const char **near, size_t *dist, size_t *n, size_t max, const char *name,
                     size_t d)
{
    for (size_t i = 0; i < *n; i++)
        if (dk__strcasecmp(near[i], name) == 0)
            return;
    size_t at = *n;
    while (at > 0 && dist[at - 1] > d)
        at--;
    if (at >= max)
        return;
    size_t last = *n < max ? *n : max - 1;
    for (size_t i = last; i > at; i--) {
        near[i] = near[i - 1];
        dist[i] = dist[i - 1];
    }
    near[at] = name;
    dist[at] = d;
    if (*n < max)
        (*n)++;
}

size_t dk__database_near(const dk_database *db, const char *name, const char **near, size_t max)
{
    if (db == NULL || name == NULL || max == 0)
        return 0;
    /* One typo in a short name, two in a longer one: more would suggest
     * names that have nothing to do with what was typed. */
    size_t len = strlen(name), limit = len < 4 ? 1 : 2;
    size_t dist[8], n = 0;
    if (max > 8)
        max = 8;
    for (size_t i = 0; dk_portable_name(i) != NULL; i++) {
        size_t d = dk__edit_distance(name, dk_portable_name(i), limit);
        if (d <= limit)
            near_add(near, dist, &n, max, dk_portable_name(i), d);
    }
    for (size_t i = 0; i < db->event_count; i++) {
        const dk_database_event *ev = &db->events[i];
        size_t d = dk__edit_distance(name, ev->name, limit);
        if (d <= limit)
            near_add(near, dist, &n, max, ev->name, d);
        if (ev->alias != NULL && (d = dk__edit_distance(name, ev->alias, limit)) <= limit)
            near_add(near, dist, &n, max, ev->alias, d);
    }
    /* Then the names that contain what was typed ("clock": cpu-clock). */
    for (size_t i = 0; i < db->event_count && n < max; i++) {
        const dk_database_event *ev = &db->events[i];
        if (dk__strcasestr(ev->name, name) ||
            (ev->alias != NULL && dk__strcasestr(ev->alias, name)))
            near_add(near, dist, &n, max, ev->name, limit + 1);
    }
    return n;
}
