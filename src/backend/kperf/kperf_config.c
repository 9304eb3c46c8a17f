/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_config.c - placing a thread sampler's or group's events on the
 * counters with kperfdata (fixed events first, then the most constrained),
 * mapping each to its place in a counter buffer, and programming the
 * register words through the arbiter.
 */
#include <stdio.h>
#include <string.h>

#include "backend/kperf/kperf_internal.h"
#include "sys/kpep_error.h"

static unsigned popcount(uint32_t v)
{
    unsigned n = 0;
    for (; v != 0; v &= v - 1)
        n++;
    return n;
}

/* Fixed events first, then the events with the fewest usable counters, so
 * that kperfdata's placement cannot paint itself into a corner. */
static unsigned constraint(const dk_database_event *ev, uint32_t config_bits)
{
    if (ev->fixed)
        return 0;
    return 1 + popcount(ev->counters_mask != 0 ? ev->counters_mask : config_bits);
}

/* Describe the events of a conflict bitmap (indices in added order). */
static void conflict_names(const request *q, const size_t *order, uint32_t bits, char *buf,
                           size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < q->n && i < 32; i++) {
        if (!(bits >> i & 1))
            continue;
        int n =
            snprintf(buf + used, size - used, "%s%s", used ? ", " : "", q->events[order[i]]->name);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

static int add_events(const request *q, session *k, kthread *kt, size_t *order)
{
    dk_sampler *s = q->s;
    uint32_t flag = (s->flags & DK_SAMPLER_USER_ONLY) ? KPEP_CONFIG_ADD_USER_ONLY
                                                      : KPEP_CONFIG_ADD_ALL_MODES;
    /* kpep adds an event for user mode or for every mode, nothing else. */
    for (size_t i = 0; q->mode != NULL && i < q->n; i++)
        if (q->mode[i] == DK__MODE_KERNEL)
            return dk__fail(DK_ENOTSUP,
                            "event %s: kperf cannot count kernel mode alone (kpep adds an event "
                            "for user mode, :u, or for every mode); drop the :%s",
                            q->label != NULL && q->label[i] != NULL ? q->label[i]
                                                                    : q->events[i]->name,
                            q->label != NULL ? dk__label_modifiers(q->label[i]) : "k");
    size_t counters = s->db.counters[0] + s->db.counters[1];
    if (q->n > counters) {
        char buf[1024];
        return dk__fail(DK_ETOOMANY,
                        "event %s does not fit: %zu events, but this CPU has %zu "
                        "counters (%zu fixed, %zu configurable)",
                        dk__event_shown(q->asked != NULL ? q->asked[counters] : NULL,
                                        q->label != NULL && q->label[counters] != NULL
                                            ? q->label[counters]
                                            : q->events[counters]->name,
                                        buf, sizeof buf),
                        q->n, counters, s->db.counters[0], s->db.counters[1]);
    }

    for (size_t i = 0; i < q->n; i++)
        order[i] = i;
    for (size_t i = 1; i < q->n; i++)
        for (size_t j = i; j > 0; j--) {
            unsigned a = constraint(q->events[order[j - 1]], k->kdb->config_counter_bits);
            unsigned b = constraint(q->events[order[j]], k->kdb->config_counter_bits);
            if (a <= b)
                break;
            size_t tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }

    for (size_t i = 0; i < q->n; i++) {
        const dk_database_event *ev = q->events[order[i]];
        kpep_event *handle = k->handles[dk__event_index(s, ev)];
        uint32_t conflicts = 0;
        uint32_t event_flag = flag;
        unsigned mode = q->mode != NULL ? q->mode[order[i]] : 0;
        if (mode == DK__MODE_USER)
            event_flag = KPEP_CONFIG_ADD_USER_ONLY;
        else if (mode == (DK__MODE_USER | DK__MODE_KERNEL))
            event_flag = KPEP_CONFIG_ADD_ALL_MODES;
        int code = k->kd->kpep_config_add_event(kt->cfg, &handle, event_flag, &conflicts);
        if (code == 0)
            continue;
        if (code == KPEP_CONFIG_ERROR_CONFLICTING_EVENTS) {
            char with[256];
            conflict_names(q, order, conflicts, with, sizeof with);
            if (with[0] == '\0')
                return dk__fail_kpep(DK_ETOOMANY, code, "event %s: no counter it may use is left",
                                     ev->name);
            return dk__fail_kpep(DK_ECONFLICT, code,
                                 "event %s cannot be counted together with %s: they need the "
                                 "same counters",
                                 ev->name, with);
        }
        if (code == KPEP_CONFIG_ERROR_EVENT_UNAVAILABLE)
            return dk__fail_kpep(DK_EUNAVAILABLE, code, "event %s cannot be counted on this CPU",
                                 ev->name);
        return dk__fail_kpep(code == KPEP_CONFIG_ERROR_OUT_OF_MEMORY ? DK_ENOMEM : DK_EKPEP, code,
                             "adding event %s to the configuration failed", ev->name);
    }
    return 0;
}

/* Where each event's count sits in a counter buffer. Counting always
 * includes the fixed class (see start), so buffers are fixed counters, then
 * configurable ones. */
static int map_events(const request *q, session *k, kthread *kt, const size_t *order)
{
    size_t map[DK_MAX_EVENTS];
    kpep_event *placed[DK_MAX_EVENTS];
    size_t placed_count = 0;
    /* A call that claims success without writing leaves these recognisable. */
    memset(map, 0xff, sizeof map);
    memset(placed, 0, sizeof placed);
    int code = k->kd->kpep_config_events_count(kt->cfg, &placed_count);
    if (code != 0)
        return dk__fail_kpep_call("kpep_config_events_count", code);
    /* The map and event buffers below hold q->n entries, one per event added. */
    if (placed_count != q->n)
        return dk__fail(DK_EKPEP,
                        "kpep_config_events_count returned %zu for a configuration of %zu "
                        "events",
                        placed_count, q->n);
    code = k->kd->kpep_config_kpc_map(kt->cfg, map, sizeof map);
    if (code != 0)
        return dk__fail_kpep_call("kpep_config_kpc_map", code);
    code = k->kd->kpep_config_events(kt->cfg, placed, sizeof placed);
    if (code != 0)
        return dk__fail_kpep_call("kpep_config_events", code);
    size_t shift = (kt->classes & KPC_CLASS_FIXED_MASK) ? 0 : k->shape.fixed_counters;
    /* Reads return the fixed counters, then the configurable ones. */
    size_t counters = (size_t)k->shape.fixed_counters + k->config_counters;
    for (size_t i = 0; i < q->n; i++) {
        size_t idx = map[i] + shift;
        if (map[i] >= counters || idx >= counters)
            return dk__fail(DK_EKPEP,
                            "kpep_config_kpc_map placed event %s at index %zu, but kpc reads "
                            "give %zu counters",
                            q->events[order[i]]->name, map[i], counters);
        kt->index[order[i]] = idx;
        /* A busy fixed counter makes kperfdata place the fallback event. */
        if (placed[i] != k->handles[dk__event_index(q->s, q->events[order[i]])])
            for (size_t j = 0; j < q->s->db.event_count; j++)
                if (k->handles[j] == placed[i])
                    q->events[order[i]] = &q->s->db.events[j];
    }
    return 0;
}

static int build_words(session *k, kthread *kt)
{
    size_t words = 0;
    int code = k->kd->kpep_config_kpc_count(kt->cfg, &words);
    if (code != 0)
        return dk__fail_kpep_call("kpep_config_kpc_count", code);
    size_t fixed = (kt->classes & KPC_CLASS_FIXED_MASK) ? k->shape.fixed_words : 0;
    size_t config = (kt->classes & KPC_CLASS_CONFIGURABLE_MASK) ? k->shape.config_words : 0;
    if (words != fixed + config)
        return dk__fail(DK_EKPEP,
                        "kpep_config_kpc_count returned %zu register words; kpc expects %zu", words,
                        fixed + config);
    kpc_config_t regs[4 + DK__KPC_CONFIG_MAX] = {0};
    if (words > 0) {
        code = k->kd->kpep_config_kpc(kt->cfg, regs, sizeof regs);
        if (code != 0)
            return dk__fail_kpep_call("kpep_config_kpc", code);
    }
    memcpy(kt->claim.fixed, regs, fixed * sizeof *regs);
    memcpy(kt->claim.config, regs + fixed, config * sizeof *regs);
    return 0;
}

/* Build kt's configuration for q's events: placement, map, register words. */
static int configure(const request *q, session *k, kthread *kt)
{
    size_t order[DK_MAX_EVENTS];
    kt->kp = k->kp;
    int code = k->kd->kpep_config_create(k->kdb, &kt->cfg);
    if (code != 0) {
        kt->cfg = NULL;
        return dk__fail_kpep_call("kpep_config_create", code);
    }
    code = k->kd->kpep_config_force_counters(kt->cfg);
    if (code != 0)
        return dk__fail_kpep_call("kpep_config_force_counters", code);
    int rc = add_events(q, k, kt, order);
    if (rc != 0)
        return rc;
    code = k->kd->kpep_config_kpc_classes(kt->cfg, &kt->classes);
    if (code != 0)
        return dk__fail_kpep_call("kpep_config_kpc_classes", code);
    rc = map_events(q, k, kt, order);
    return rc == 0 ? build_words(k, kt) : rc;
}

/* The event q placed on configurable register w. */
static const char *owner_of(const request *q, const kthread *kt, const session *k, size_t w)
{
    size_t counter = k->shape.fixed_counters + w;
    for (size_t i = 0; i < q->n; i++)
        if (kt->index[i] == counter)
            return q->events[i]->name;
    return "another event";
}

void dk__kperf_unprogram(session *k, kthread *kt)
{
    dk__arbiter_unprogram(k->arb, &k->shape, &kt->claim);
}

int dk__kperf_setup(const request *q, session *k, kthread *kt)
{
    int rc = configure(q, k, kt);
    if (rc == 0) {
        for (size_t w = 0; w < k->shape.config_words; w++)
            kt->claim.owner[w] = owner_of(q, kt, k, w);
        dk__arbiter_lock(k->arb);
        rc = dk__arbiter_program(k->arb, k->kp, &k->shape, &kt->claim);
        dk__arbiter_unlock(k->arb);
    }
    if (rc != 0 && kt->cfg != NULL) {
        k->kd->kpep_config_free(kt->cfg);
        kt->cfg = NULL;
    }
    return rc;
}
