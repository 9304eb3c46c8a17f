/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * tables.c - lookups over the generated event tables.
 */
#include <string.h>

#include "events/cpus.h"
#include "events/intel.h"
#include "events/tables.h"
#include "util/util.h"

static const char *const event_idents[] = {
#define DK__EVENT_IDENT(name) #name,
    DK_EVENT_LIST(DK__EVENT_IDENT)
#undef DK__EVENT_IDENT
};

_Static_assert(DK__COUNT_OF(event_idents) == DK_EVENT_COUNT, "one name per event");
_Static_assert(DK_EVENT_LIST_COUNT == DK_EVENT_COUNT, "generated count matches the enum");

const dk__chip *dk__chips_all(size_t *count)
{
    *count = DK__COUNT_OF(dk__chips);
    return dk__chips;
}

const dk__chip *dk__chip_by_cpu(dk_cpu cpu)
{
    for (size_t i = 0; i < DK__COUNT_OF(dk__chips); i++)
        if (dk__chips[i].cpu == cpu)
            return &dk__chips[i];
    return NULL;
}

const dk__chip *dk__chip_by_db(const char *db_name)
{
    if (db_name == NULL)
        return NULL;
    for (size_t i = 0; i < DK__COUNT_OF(dk__chips); i++)
        for (const char *const *n = dk__chips[i].db_names; *n != NULL; n++)
            if (strcmp(*n, db_name) == 0)
                return &dk__chips[i];
    return NULL;
}

dk_cpu dk__cpu_from_db_name(const char *db_name)
{
    const dk__chip *chip = dk__chip_by_db(db_name);
    if (chip != NULL)
        return chip->cpu;
    if (db_name != NULL)
        for (const char *const *n = dk__intel_db_names; *n != NULL; n++)
            if (strcmp(*n, db_name) == 0)
                return DK_CPU_INTEL;
    return DK_CPU_UNKNOWN;
}

const dk__cpu_id *dk__cpu_ids_all(size_t *count)
{
    *count = DK__COUNT_OF(dk__cpu_ids);
    return dk__cpu_ids;
}

const dk__cpu_id *dk__cpu_id_by_db(const char *db_name)
{
    for (size_t i = 0; db_name != NULL && i < DK__COUNT_OF(dk__cpu_ids); i++)
        if (strcmp(dk__cpu_ids[i].db_name, db_name) == 0)
            return &dk__cpu_ids[i];
    return NULL;
}

const dk__cpu_id *dk__cpu_id_by_id(const char *cpu_id)
{
    for (size_t i = 0; cpu_id != NULL && i < DK__COUNT_OF(dk__cpu_ids); i++)
        if (strcmp(dk__cpu_ids[i].cpu_id, cpu_id) == 0)
            return &dk__cpu_ids[i];
    return NULL;
}

const dk__intel_db *dk__intel_dbs_all(size_t *count)
{
    *count = DK__COUNT_OF(dk__intel_dbs);
    return dk__intel_dbs;
}

const char *const *dk__intel_db_list(void) { return dk__intel_db_names; }

const char *dk__event_ident(dk_event ev)
{
    if ((unsigned)ev >= (unsigned)DK_EVENT_COUNT)
        return NULL;
    return event_idents[ev];
}

dk_event dk__event_by_ident(const char *name)
{
    for (size_t i = 0; name != NULL && i < DK__COUNT_OF(event_idents); i++)
        if (strcmp(event_idents[i], name) == 0)
            return (dk_event)i;
    return DK_EVENT_COUNT;
}

const dk_event_def *dk__event_on(dk_event ev, dk_cpu cpu)
{
    const dk__chip *chip = dk__chip_by_cpu(cpu);
    if (chip == NULL)
        return NULL;
    for (size_t i = 0; i < chip->event_count; i++)
        if (chip->events[i].event == ev)
            return &chip->events[i];
    return NULL;
}

const dk_event_def *dk__chip_event_by_name(const dk__chip *chip, const char *name)
{
    for (size_t i = 0; chip != NULL && name != NULL && i < chip->event_count; i++)
        if (strcmp(chip->events[i].name, name) == 0)
            return &chip->events[i];
    return NULL;
}
