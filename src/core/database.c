/*
 * database.c - the read-only event database view a sampler owns.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

const char *dk_database_name(const dk_database *db) { return db != NULL ? db->name : NULL; }

const char *dk_database_cpu_id(const dk_database *db) { return db != NULL ? db->cpu_id : NULL; }

const char *dk_database_marketing_name(const dk_database *db)
{
    return db != NULL ? db->marketing_name : NULL;
}

dk_arch dk_database_arch(const dk_database *db) { return db != NULL ? db->arch : DK_ARCH_UNKNOWN; }

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
    return db != NULL && i < db->event_count ? &db->events[i] : NULL;
}

size_t dk_database_fixed_count(const dk_database *db) { return db != NULL ? db->fixed_count : 0; }

const dk_database_event *dk_database_fixed_event(const dk_database *db, size_t i)
{
    return db != NULL && i < db->fixed_count ? db->fixed[i] : NULL;
}

const dk_database_event *dk_database_find(const dk_database *db, const char *name)
{
    if (db == NULL || name == NULL)
        return NULL;
    for (size_t i = 0; i < db->event_count; i++)
        if (db->events[i].alias != NULL && strcmp(db->events[i].alias, name) == 0)
            return &db->events[i];
    for (size_t i = 0; i < db->event_count; i++)
        if (strcmp(db->events[i].name, name) == 0)
            return &db->events[i];
    return NULL;
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
                matches[n] = ev;
            n++;
        }
    }
    return n;
}
