/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperfdata_sim.c - a simulated kperfdata.framework: the 23 KPEP functions
 * over the event databases of the simulated CPUs, with the real struct
 * layouts (dkperf/kperf.h).
 *
 * Test code. Behaviour follows what users of the real framework have
 * documented; README.md lists where it is known to differ.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* The database the caller sees comes first, so kpep_db * == sim_db *. */
typedef struct sim_db {
    kpep_db db;
    const sim_chip *chip;
    char **descriptions;
    const char **aliases;
} sim_db;

#define FAULT(fn)                   \
    do {                            \
        int code_;                  \
        if (sim_fault(#fn, &code_)) \
            return code_;           \
    } while (0)

/* ------------------------------------------------------------------------ */
/* Databases                                                                 */
/* ------------------------------------------------------------------------ */

static void free_db(sim_db *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; s->descriptions != NULL && i < s->db.event_count; i++)
        free(s->descriptions[i]);
    free(s->descriptions);
    free(s->aliases);
    free(s->db.event_arr);
    free(s->db.fixed_event_arr);
    free(s);
}

static char *describe(const sim_chip *chip, const sim_event *ev)
{
    char buf[256];
    if (ev->fixed_counter >= 0)
        snprintf(buf, sizeof buf, "%s on fixed counter %d (simulated %s database)", ev->name,
                 ev->fixed_counter, chip->db_name);
    else
        snprintf(buf, sizeof buf, "%s, selector 0x%x (simulated %s database)", ev->name, ev->number,
                 chip->db_name);
    return strdup(buf);
}

SIM_API int kpep_db_create(const char *name, kpep_db **db_ptr)
{
    FAULT(kpep_db_create);
    if (db_ptr == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *db_ptr = NULL;
    const sim_chip *chip = name != NULL ? sim_chip_named(name) : sim_current_chip();
    if (chip == NULL)
        return KPEP_CONFIG_ERROR_DB_NOT_FOUND;

    sim_db *s = calloc(1, sizeof *s);
    if (s == NULL)
        return KPEP_CONFIG_ERROR_OUT_OF_MEMORY;
    s->chip = chip;
    kpep_db *db = &s->db;
    db->name = chip->db_name;
    db->cpu_id = chip->cpu_id;
    db->marketing_name = chip->marketing;
    db->event_count = chip->event_count;
    db->fixed_counter_bits = chip->fixed_bits;
    db->config_counter_bits = chip->config_bits;
    db->power_counter_bits = chip->power_bits;
    db->fixed_counter_count = sim_popcount(chip->fixed_bits);
    db->config_counter_count = sim_popcount(chip->config_bits);
    db->power_counter_count = sim_popcount(chip->power_bits);
    db->architecture = chip->architecture;
    db->internal_known = 1;

    db->event_arr = calloc(chip->event_count, sizeof *db->event_arr);
    db->fixed_event_arr = calloc(db->fixed_counter_count, sizeof *db->fixed_event_arr);
    s->descriptions = calloc(chip->event_count, sizeof *s->descriptions);
    s->aliases = calloc(chip->event_count, sizeof *s->aliases);
    if (db->event_arr == NULL || db->fixed_event_arr == NULL || s->descriptions == NULL ||
        s->aliases == NULL)
        goto oom;
    for (size_t i = 0; i < chip->event_count; i++) {
        const sim_event *src = &chip->events[i];
        kpep_event *ev = &db->event_arr[i];
        s->descriptions[i] = describe(chip, src);
        if (s->descriptions[i] == NULL)
            goto oom;
        ev->name = src->name;
        ev->description = s->descriptions[i];
        ev->alias = src->alias;
        ev->fallback = src->fallback;
        ev->number = src->number;
        if (src->fixed_counter >= 0) {
            ev->flags = KPEP_EVENT_FLAG_FIXED;
            ev->mask = src->mask != 0 ? src->mask : 1u << src->fixed_counter;
            if ((size_t)src->fixed_counter < db->fixed_counter_count)
                db->fixed_event_arr[src->fixed_counter] = ev;
        } else {
            ev->mask = src->mask;
        }
        if (ev->alias != NULL)
            s->aliases[db->alias_count++] = ev->alias;
    }
    *db_ptr = db;
    return KPEP_CONFIG_ERROR_NONE;
oom:
    free_db(s);
    return KPEP_CONFIG_ERROR_OUT_OF_MEMORY;
}

SIM_API void kpep_db_free(kpep_db *db) { free_db((sim_db *)db); }

SIM_API int kpep_db_name(kpep_db *db, const char **name)
{
    FAULT(kpep_db_name);
    if (db == NULL || name == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *name = db->marketing_name;
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_db_aliases_count(kpep_db *db, size_t *count)
{
    FAULT(kpep_db_aliases_count);
    if (db == NULL || count == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *count = db->alias_count;
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_db_aliases(kpep_db *db, const char **buf, size_t buf_size)
{
    FAULT(kpep_db_aliases);
    if (db == NULL || buf == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    if (buf_size < db->alias_count * sizeof *buf)
        return KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL;
    memcpy(buf, ((sim_db *)db)->aliases, db->alias_count * sizeof *buf);
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_db_counters_count(kpep_db *db, uint8_t classes, size_t *count)
{
    FAULT(kpep_db_counters_count);
    if (db == NULL || count == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    size_t n = 0;
    if (classes & KPC_CLASS_FIXED_MASK)
        n += db->fixed_counter_count;
    if (classes & KPC_CLASS_CONFIGURABLE_MASK)
        n += db->config_counter_count;
    if (classes & KPC_CLASS_POWER_MASK)
        n += db->power_counter_count;
    *count = n;
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_db_events_count(kpep_db *db, size_t *count)
{
    FAULT(kpep_db_events_count);
    if (db == NULL || count == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *count = db->event_count;
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_db_events(kpep_db *db, kpep_event **buf, size_t buf_size)
{
    FAULT(kpep_db_events);
    if (db == NULL || buf == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    if (buf_size < db->event_count * sizeof *buf)
        return KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL;
    for (size_t i = 0; i < db->event_count; i++)
        buf[i] = &db->event_arr[i];
    return KPEP_CONFIG_ERROR_NONE;
}

static kpep_event *find_event(kpep_db *db, const char *name)
{
    /* Aliases first, as the real framework does. */
    for (size_t i = 0; i < db->event_count; i++)
        if (db->event_arr[i].alias != NULL && strcmp(db->event_arr[i].alias, name) == 0)
            return &db->event_arr[i];
    for (size_t i = 0; i < db->event_count; i++)
        if (strcmp(db->event_arr[i].name, name) == 0)
            return &db->event_arr[i];
    return NULL;
}

SIM_API int kpep_db_event(kpep_db *db, const char *name, kpep_event **ev_ptr)
{
    FAULT(kpep_db_event);
    if (db == NULL || name == NULL || ev_ptr == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    kpep_event *ev = find_event(db, name);
    if (ev == NULL)
        return KPEP_CONFIG_ERROR_EVENT_NOT_FOUND;
    *ev_ptr = ev;
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_event_name(kpep_event *ev, const char **name_ptr)
{
    FAULT(kpep_event_name);
    if (ev == NULL || name_ptr == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *name_ptr = ev->name;
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_event_alias(kpep_event *ev, const char **alias_ptr)
{
    FAULT(kpep_event_alias);
    if (ev == NULL || alias_ptr == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *alias_ptr = ev->alias;
    return KPEP_CONFIG_ERROR_NONE;
}

#ifndef SIM_OMIT_LAST_SYMBOL
SIM_API int kpep_event_description(kpep_event *ev, const char **str_ptr)
{
    FAULT(kpep_event_description);
    if (ev == NULL || str_ptr == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *str_ptr = ev->description;
    return KPEP_CONFIG_ERROR_NONE;
}
#endif

/* ------------------------------------------------------------------------ */
/* Configs                                                                   */
/* ------------------------------------------------------------------------ */

SIM_API int kpep_config_create(kpep_db *db, kpep_config **cfg_ptr)
{
    FAULT(kpep_config_create);
    if (db == NULL || cfg_ptr == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *cfg_ptr = NULL;
    kpep_config *cfg = calloc(1, sizeof *cfg);
    if (cfg == NULL)
        return KPEP_CONFIG_ERROR_OUT_OF_MEMORY;
    size_t n = db->fixed_counter_count + db->config_counter_count;
    cfg->db = db;
    cfg->counter_count = n;
    cfg->events = calloc(n, sizeof *cfg->events);
    cfg->event_map = calloc(n, sizeof *cfg->event_map);
    cfg->event_indices = malloc(n * sizeof *cfg->event_indices);
    cfg->flags = calloc(n, sizeof *cfg->flags);
    cfg->kpc_periods = calloc(n, sizeof *cfg->kpc_periods);
    if (cfg->events == NULL || cfg->event_map == NULL || cfg->event_indices == NULL ||
        cfg->flags == NULL || cfg->kpc_periods == NULL) {
        free(cfg->events);
        free(cfg->event_map);
        free(cfg->event_indices);
        free(cfg->flags);
        free(cfg->kpc_periods);
        free(cfg);
        return KPEP_CONFIG_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < n; i++)
        cfg->event_indices[i] = SIZE_MAX;
    *cfg_ptr = cfg;
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API void kpep_config_free(kpep_config *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->events);
    free(cfg->event_map);
    free(cfg->event_indices);
    free(cfg->flags);
    free(cfg->kpc_periods);
    free(cfg);
}

SIM_API int kpep_config_force_counters(kpep_config *cfg)
{
    FAULT(kpep_config_force_counters);
    if (cfg == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    cfg->force_flags |= 1;
    return KPEP_CONFIG_ERROR_NONE;
}

static bool event_in_db(const kpep_db *db, const kpep_event *ev)
{
    return ev >= db->event_arr && ev < db->event_arr + db->event_count;
}

/* Bitmap of the added events that sit on any counter in counters. */
static uint32_t holders(const kpep_config *cfg, uint32_t counters)
{
    uint32_t bits = 0;
    for (size_t c = 0; c < cfg->counter_count; c++)
        if ((counters >> c & 1) && cfg->event_indices[c] != SIZE_MAX)
            bits |= 1u << cfg->event_indices[c];
    return bits;
}

static void place(kpep_config *cfg, kpep_event *ev, unsigned counter, uint32_t flag)
{
    size_t idx = cfg->event_count++;
    cfg->events[idx] = ev;
    cfg->event_map[idx] = counter;
    cfg->event_indices[counter] = idx;
    cfg->flags[counter] = flag;
    cfg->occupied_counters |= 1u << counter;
    cfg->classes |= (ev->flags & KPEP_EVENT_FLAG_FIXED) ? KPC_CLASS_FIXED_MASK
                                                        : KPC_CLASS_CONFIGURABLE_MASK;
}

static unsigned lowest_bit(uint32_t v)
{
    unsigned i = 0;
    while (!(v >> i & 1))
        i++;
    return i;
}

SIM_API int kpep_config_add_event(kpep_config *cfg, kpep_event **ev_ptr, uint32_t flag,
                                  uint32_t *err)
{
    FAULT(kpep_config_add_event);
    if (err != NULL)
        *err = 0;
    if (cfg == NULL || ev_ptr == NULL || *ev_ptr == NULL || flag > KPEP_CONFIG_ADD_USER_ONLY)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    kpep_db *db = cfg->db;
    kpep_event *ev = *ev_ptr;
    if (!event_in_db(db, ev))
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;

    if (ev->flags & KPEP_EVENT_FLAG_FIXED) {
        uint32_t want = ev->mask & db->fixed_counter_bits;
        if (want == 0)
            return KPEP_CONFIG_ERROR_EVENT_UNAVAILABLE;
        uint32_t free_ctrs = want & ~cfg->occupied_counters;
        if (free_ctrs != 0) {
            place(cfg, ev, lowest_bit(free_ctrs), flag);
            return KPEP_CONFIG_ERROR_NONE;
        }
        /* The fixed counter is taken: a fallback event may stand in. */
        kpep_event *fb = ev->fallback != NULL ? find_event(db, ev->fallback) : NULL;
        if (fb == NULL) {
            if (err != NULL)
                *err = holders(cfg, want);
            return KPEP_CONFIG_ERROR_CONFLICTING_EVENTS;
        }
        ev = fb;
    }

    uint32_t allowed = (ev->mask != 0 ? ev->mask : db->config_counter_bits) &
                       db->config_counter_bits;
    if (allowed == 0)
        return KPEP_CONFIG_ERROR_EVENT_UNAVAILABLE;
    uint32_t usable = allowed;
    if (!(cfg->force_flags & 1)) {
        usable &= ~db->power_counter_bits;
        if (usable == 0)
            return KPEP_CONFIG_ERROR_COUNTERS_NOT_FORCED;
    }
    uint32_t free_ctrs = usable & ~cfg->occupied_counters;
    if (free_ctrs == 0) {
        if (err != NULL)
            *err = holders(cfg, usable);
        return KPEP_CONFIG_ERROR_CONFLICTING_EVENTS;
    }
    place(cfg, ev, lowest_bit(free_ctrs), flag);
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_config_remove_event(kpep_config *cfg, size_t idx)
{
    FAULT(kpep_config_remove_event);
    if (cfg == NULL || idx >= cfg->event_count)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    size_t counter = cfg->event_map[idx];
    cfg->event_indices[counter] = SIZE_MAX;
    cfg->occupied_counters &= ~(1u << counter);
    cfg->flags[counter] = 0;
    for (size_t i = idx + 1; i < cfg->event_count; i++) {
        cfg->events[i - 1] = cfg->events[i];
        cfg->event_map[i - 1] = cfg->event_map[i];
        cfg->event_indices[cfg->event_map[i - 1]] = i - 1;
    }
    cfg->event_count--;
    cfg->events[cfg->event_count] = NULL;
    cfg->classes = 0;
    for (size_t i = 0; i < cfg->event_count; i++)
        cfg->classes |= (cfg->events[i]->flags & KPEP_EVENT_FLAG_FIXED)
                            ? KPC_CLASS_FIXED_MASK
                            : KPC_CLASS_CONFIGURABLE_MASK;
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_config_events_count(kpep_config *cfg, size_t *count_ptr)
{
    FAULT(kpep_config_events_count);
    if (cfg == NULL || count_ptr == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *count_ptr = cfg->event_count;
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_config_events(kpep_config *cfg, kpep_event **buf, size_t buf_size)
{
    FAULT(kpep_config_events);
    if (cfg == NULL || buf == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    if (buf_size < cfg->event_count * sizeof *buf)
        return KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL;
    memcpy(buf, cfg->events, cfg->event_count * sizeof *buf);
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_config_kpc_classes(kpep_config *cfg, uint32_t *classes_ptr)
{
    FAULT(kpep_config_kpc_classes);
    if (cfg == NULL || classes_ptr == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *classes_ptr = cfg->classes;
    return KPEP_CONFIG_ERROR_NONE;
}

/* Config words kpc_set_config(cfg->classes, ...) takes. */
static size_t kpc_words(const kpep_config *cfg)
{
    const sim_chip *chip = ((const sim_db *)cfg->db)->chip;
    size_t n = 0;
    if (cfg->classes & KPC_CLASS_FIXED_MASK)
        n += chip->fixed_config_words;
    if (cfg->classes & KPC_CLASS_CONFIGURABLE_MASK)
        n += cfg->db->config_counter_count;
    return n;
}

SIM_API int kpep_config_kpc_count(kpep_config *cfg, size_t *count_ptr)
{
    FAULT(kpep_config_kpc_count);
    if (cfg == NULL || count_ptr == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    *count_ptr = kpc_words(cfg);
    return KPEP_CONFIG_ERROR_NONE;
}

/* Register word for one event on a configurable counter. */
static kpc_config_t encode(const kpep_db *db, const kpep_event *ev, uint32_t flag)
{
    bool user_only = flag == KPEP_CONFIG_ADD_USER_ONLY;
    if (db->architecture == KPEP_ARCH_X86_64)
        return (kpc_config_t)ev->number | (kpc_config_t)ev->umask << 8 | 0x400000u |
               (user_only ? 0x10000u : 0x30000u);
    /* arm64: EL0 (AArch32 and AArch64) and, unless user-only, EL1. */
    return (kpc_config_t)ev->number | 0x10000u | 0x20000u | (user_only ? 0 : 0x40000u);
}

SIM_API int kpep_config_kpc(kpep_config *cfg, kpc_config_t *buf, size_t buf_size)
{
    FAULT(kpep_config_kpc);
    if (cfg == NULL || buf == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    size_t words = kpc_words(cfg);
    if (buf_size < words * sizeof *buf)
        return KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL;
    const kpep_db *db = cfg->db;
    const sim_chip *chip = ((const sim_db *)db)->chip;
    size_t w = 0;
    if ((cfg->classes & KPC_CLASS_FIXED_MASK) && chip->fixed_config_words > 0) {
        /* IA32_FIXED_CTR_CTRL: 4 bits per fixed counter, 0x3 = user+kernel. */
        kpc_config_t ctrl = 0;
        for (size_t c = 0; c < db->fixed_counter_count; c++)
            if (cfg->event_indices[c] != SIZE_MAX)
                ctrl |= (kpc_config_t)(cfg->flags[c] == KPEP_CONFIG_ADD_USER_ONLY ? 0x2 : 0x3)
                        << (4 * c);
        buf[w++] = ctrl;
    }
    if (cfg->classes & KPC_CLASS_CONFIGURABLE_MASK) {
        for (size_t c = 0; c < cfg->counter_count; c++) {
            if (!(db->config_counter_bits >> c & 1))
                continue;
            size_t idx = cfg->event_indices[c];
            buf[w++] = idx == SIZE_MAX ? 0 : encode(db, cfg->events[idx], cfg->flags[c]);
        }
    }
    return KPEP_CONFIG_ERROR_NONE;
}

SIM_API int kpep_config_kpc_map(kpep_config *cfg, size_t *buf, size_t buf_size)
{
    FAULT(kpep_config_kpc_map);
    if (cfg == NULL || buf == NULL)
        return KPEP_CONFIG_ERROR_INVALID_ARGUMENT;
    if (buf_size < cfg->event_count * sizeof *buf)
        return KPEP_CONFIG_ERROR_BUFFER_TOO_SMALL;
    /* Indices into kpc_get_thread_counters()'s buffer, which starts with
     * the fixed counters only when the fixed class is in use. */
    size_t shift = (cfg->classes & KPC_CLASS_FIXED_MASK) ? 0 : cfg->db->fixed_counter_count;
    for (size_t i = 0; i < cfg->event_count; i++)
        buf[i] = cfg->event_map[i] - shift;
    return KPEP_CONFIG_ERROR_NONE;
}
