/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kpep_common.c - the event database view of a kperfdata database.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend/darwin/kpep_common.h"
#include "events/tables.h"

int dk__kpc_errno(int rc)
{
    int e = rc > 0 ? rc : errno;
    return e != 0 ? e : EIO;
}

int dk__fail_kpep_call(const char *call, int code)
{
    if (code == KPEP_CONFIG_ERROR_OUT_OF_MEMORY)
        return dk__fail_kpep(DK_ENOMEM, code, "%s: out of memory", call);
    return dk__fail_kpep(DK_EKPEP, code, "%s failed", call);
}

int dk__kpep_check_stride(const dk_kperfdata_vtable *kd, kpep_db *kdb)
{
    size_t n = 0;
    int rc = kd->kpep_db_events_count(kdb, &n);
    if (rc != 0)
        return dk__fail_kpep_call("kpep_db_events_count", rc);
    /* The view is built from kdb->event_count entries of kdb->event_arr:
     * the count kperfdata answers must agree with it. */
    if (n == 0 || n > DK__KPEP_EVENTS_MAX || n != kdb->event_count)
        return dk__fail(DK_EKPEP,
                        "kpep_db_events_count returned %zu, but the %s database holds %zu events "
                        "(at most %d are accepted): the database is unreadable",
                        n, kdb->name != NULL ? kdb->name : "CPU's", kdb->event_count,
                        DK__KPEP_EVENTS_MAX);
    if (kdb->event_arr == NULL)
        return dk__fail(DK_EKPEP, "the %s database has no event array",
                        kdb->name != NULL ? kdb->name : "CPU's");
    if (kdb->fixed_counter_count > KPC_MAX_COUNTERS)
        return dk__fail(DK_EKPEP, "the %s database says it has %zu fixed counters (at most %d)",
                        kdb->name != NULL ? kdb->name : "CPU's", kdb->fixed_counter_count,
                        KPC_MAX_COUNTERS);
    if (n < 2)
        return 0;
    kpep_event **evs = malloc(n * sizeof *evs);
    if (evs == NULL)
        return dk__fail(DK_ENOMEM, "checking the kpep_event layout: out of memory");
    rc = kd->kpep_db_events(kdb, evs, n * sizeof *evs);
    if (rc != 0) {
        free(evs);
        return dk__fail_kpep_call("kpep_db_events", rc);
    }
    size_t stride = SIZE_MAX;
    for (size_t i = 1; i < n; i++) {
        uintptr_t a = (uintptr_t)evs[i - 1], b = (uintptr_t)evs[i];
        size_t d = a < b ? b - a : a - b;
        if (d != 0 && d < stride)
            stride = d;
    }
    free(evs);
    if (stride != sizeof(kpep_event))
        return dk__fail(DK_ELOAD,
                        "kperfdata's events are %zu bytes apart, not the %zu of the kpep_event "
                        "layout libdkperf knows: this macOS changed the structure",
                        stride, sizeof(kpep_event));
    return 0;
}

int dk__kpep_view(dk_sampler *s, kpep_db *kdb, const size_t counters[3], kpep_event ***handles)
{
    dk_database *db = &s->db;
    size_t n = kdb->event_count;
    db->name = kdb->name != NULL ? kdb->name : "";
    db->cpu_id = kdb->cpu_id != NULL ? kdb->cpu_id : "";
    db->marketing_name = kdb->marketing_name != NULL ? kdb->marketing_name : db->name;
    db->arch = kdb->architecture == KPEP_ARCH_ARM64    ? DK_ARCH_ARM64
               : kdb->architecture == KPEP_ARCH_X86_64 ? DK_ARCH_X86_64
                                                       : DK_ARCH_UNKNOWN;
    db->family = s->cpu == DK_CPU_INTEL ? DK__FAMILY_INTEL : DK__FAMILY_APPLE;
    memcpy(db->counters, counters, sizeof db->counters);

    db->events = calloc(n + 1, sizeof *db->events);
    *handles = calloc(n + 1, sizeof **handles);
    size_t *perm = calloc(n + 1, sizeof *perm);
    db->fixed_count = kdb->fixed_counter_count;
    db->fixed = calloc(db->fixed_count + 1, sizeof *db->fixed);
    if (db->events == NULL || *handles == NULL || perm == NULL || db->fixed == NULL) {
        free(perm);
        return dk__fail(DK_ENOMEM, "building the event database: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const kpep_event *e = &kdb->event_arr[i];
        dk_database_event *d = &db->events[i];
        d->name = e->name != NULL ? e->name : "";
        d->description = e->description != NULL ? e->description : "";
        d->errata = e->errata;
        d->alias = e->alias;
        d->fallback = e->fallback;
        d->fixed = (e->flags & KPEP_EVENT_FLAG_FIXED) != 0;
        d->number = e->number;
        d->counters_mask = e->mask;
        d->source = "kpep";
        d->supported = true;
    }
    db->event_count = n;
    int rc = dk__database_sort(db, perm);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            (*handles)[i] = &kdb->event_arr[perm[i]];
        for (size_t f = 0; f < db->fixed_count; f++)
            for (size_t i = 0; i < n; i++)
                if (kdb->fixed_event_arr != NULL && (*handles)[i] == kdb->fixed_event_arr[f])
                    db->fixed[f] = &db->events[i];
    }
    free(perm);
    return rc;
}

void dk__kpep_view_free(dk_sampler *s)
{
    free(s->db.events);
    free(s->db.fixed);
    s->db.events = NULL;
    s->db.fixed = NULL;
}
