/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kperf_arbiter.c - one arbiter per loaded kperf.framework for the KPC
 * state every sampler of the process shares: force_all_ctrs, the
 * configurable and Intel fixed-counter registers, and the counting classes
 * (kperf_arbiter.h says the rules).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/kperf/kperf_arbiter.h"
#include "backend/darwin/kpep_common.h"

#define FIXED_FIELDS 8 /* 4-bit fields of Intel's fixed-counter control word */

struct dk__arbiter {
    struct dk__arbiter *next;
    const void *image; /* identifies the loaded framework: one kernel state per image */
    pthread_mutex_t lock;
    int holders;                            /* samplers holding force_all_ctrs */
    int saved;                              /* force_all_ctrs before the first holder */
    unsigned generation;                    /* bumped whenever the counters are given back */
    kpc_config_t words[DK__KPC_CONFIG_MAX]; /* configurable registers in use */
    unsigned word_refs[DK__KPC_CONFIG_MAX];
    const char *word_owner[DK__KPC_CONFIG_MAX]; /* event programmed there, for errors */
    unsigned field[FIXED_FIELDS];               /* Intel fixed control fields in use */
    unsigned field_refs[FIXED_FIELDS];
    unsigned counting_refs[4]; /* running thread samplers and system groups, per class */
    unsigned thread_refs[4];   /* running thread samplers, per class */
};

static pthread_mutex_t arbiters_lock = PTHREAD_MUTEX_INITIALIZER;
static dk__arbiter *arbiters;

int dk__kpc_fail(const char *call, int rc)
{
    int e = dk__kpc_errno(rc);
    if (e == EPERM || e == EACCES)
        return dk__fail_os(DK_EPERM, e,
                           "%s was refused: hardware counters need root or the "
                           "com.apple.private.kernel.kpc entitlement",
                           call);
    if (e == EBUSY)
        return dk__fail_os(DK_EBUSY, e,
                           "%s: the counters are held by another client (usually powermetrics, "
                           "Instruments or another kperf client); stop it, then try again",
                           call);
    return dk__fail_os(DK_EOS, e, "%s failed", call);
}

/* Two vtables (say, loaded under roots "R" and "R/") may point into one
 * image, which is one set of kernel state: key by a function's address, not
 * by the vtable. */
dk__arbiter *dk__arbiter_for(const dk_kperf_vtable *kp)
{
    const void *image;
    memcpy(&image, &kp->kpc_force_all_ctrs_set, sizeof image);
    pthread_mutex_lock(&arbiters_lock);
    dk__arbiter *a = arbiters;
    while (a != NULL && a->image != image)
        a = a->next;
    if (a == NULL) {
        a = calloc(1, sizeof *a);
        if (a != NULL) {
            a->image = image;
            pthread_mutex_init(&a->lock, NULL);
            a->next = arbiters;
            arbiters = a;
        }
    }
    pthread_mutex_unlock(&arbiters_lock);
    return a;
}

void dk__arbiter_lock(dk__arbiter *a) { pthread_mutex_lock(&a->lock); }

void dk__arbiter_unlock(dk__arbiter *a) { pthread_mutex_unlock(&a->lock); }

static uint32_t class_union(const unsigned refs[4])
{
    uint32_t classes = 0;
    for (unsigned c = 0; c < 4; c++)
        if (refs[c] > 0)
            classes |= 1u << c;
    return classes;
}

static void add_refs(unsigned refs[4], uint32_t classes, int delta)
{
    for (unsigned c = 0; c < 4; c++)
        if ((classes >> c & 1) && (delta > 0 || refs[c] > 0))
            refs[c] += (unsigned)delta;
}

/* ------------------------------------------------------------------------ */
/* force_all_ctrs                                                            */
/* ------------------------------------------------------------------------ */

int dk__arbiter_acquire(dk__arbiter *a, const dk_kperf_vtable *kp)
{
    int rc = 0;
    pthread_mutex_lock(&a->lock);
    if (a->holders == 0) {
        int saved = 0;
        int r = kp->kpc_force_all_ctrs_get(&saved);
        if (r != 0) {
            rc = dk__kpc_fail("reading kpc.force_all_ctrs (kpc_force_all_ctrs_get)", r);
            goto out;
        }
        r = kp->kpc_force_all_ctrs_set(1);
        if (r != 0) {
            rc = dk__kpc_fail("taking the counters (kpc_force_all_ctrs_set(1))", r);
            goto out;
        }
        a->saved = saved;
        /* What earlier holders programmed is gone with the counters. */
        memset(a->words, 0, sizeof a->words);
        memset(a->word_refs, 0, sizeof a->word_refs);
        memset(a->field, 0, sizeof a->field);
        memset(a->field_refs, 0, sizeof a->field_refs);
        a->generation++;
    }
    a->holders++;
out:
    pthread_mutex_unlock(&a->lock);
    return rc;
}

int dk__arbiter_release(dk__arbiter *a, const dk_kperf_vtable *kp)
{
    int rc = 0;
    pthread_mutex_lock(&a->lock);
    /* Saved as 1 (another client's, or set by hand): it is 1 now, as it
     * was, and there is nothing to restore. */
    if (a->holders > 0 && --a->holders == 0) {
        int r = a->saved == 0 ? kp->kpc_force_all_ctrs_set(0) : 0;
        if (r != 0) {
            int e = dk__kpc_errno(r);
            rc = dk__fail_os(e == EPERM || e == EACCES ? DK_EPERM
                             : e == EBUSY              ? DK_EBUSY
                                                       : DK_EOS,
                             e,
                             "restoring kpc.force_all_ctrs to 0 (kpc_force_all_ctrs_set) "
                             "failed, so force_all_ctrs was left at 1 and the power manager "
                             "cannot use its counters; restore it with `sudo sysctl "
                             "kpc.force_all_ctrs=0`");
        }
        a->generation++;
    }
    pthread_mutex_unlock(&a->lock);
    return rc;
}

bool dk__arbiter_holding(dk__arbiter *a)
{
    pthread_mutex_lock(&a->lock);
    bool held = a->holders > 0;
    pthread_mutex_unlock(&a->lock);
    return held;
}

/* ------------------------------------------------------------------------ */
/* Registers and counting                                                    */
/* ------------------------------------------------------------------------ */

/* a->words and a->field mirror what was last written. */
int dk__arbiter_program(dk__arbiter *a, const dk_kperf_vtable *kp, const dk__kpc_shape *sh,
                        dk__kpc_claim *c)
{
    kpc_config_t want[DK__KPC_CONFIG_MAX];
    unsigned fields[FIXED_FIELDS];

    /* Registers nobody uses may be rewritten; the others must stay. */
    for (size_t w = 0; w < DK__KPC_CONFIG_MAX; w++)
        want[w] = a->word_refs[w] > 0 ? a->words[w] : 0;
    for (unsigned f = 0; f < FIXED_FIELDS; f++)
        fields[f] = a->field_refs[f] > 0 ? a->field[f] : 0;

    for (size_t w = 0; w < sh->config_words; w++) {
        if (c->config[w] == 0)
            continue;
        if (a->word_refs[w] > 0 && a->words[w] != c->config[w])
            return dk__fail(DK_ECONFLICT,
                            "event %s needs configurable counter %u, which another thread "
                            "sampler or group of this process uses for %s",
                            c->owner[w], (unsigned)(sh->fixed_counters + w), a->word_owner[w]);
        want[w] = c->config[w];
    }
    for (size_t w = 0; w < sh->fixed_words; w++)
        for (unsigned f = 0; f < FIXED_FIELDS; f++) {
            unsigned v = (unsigned)(c->fixed[w] >> (4 * f)) & 0xf;
            if (v == 0)
                continue;
            if (a->field_refs[f] > 0 && a->field[f] != v)
                return dk__fail(DK_ECONFLICT,
                                "fixed counter %u is counting in another mode for another thread "
                                "sampler (user-only and all-modes samplers cannot share it)",
                                f);
            fields[f] = v;
        }

    bool change = memcmp(want, a->words, sizeof want) != 0 ||
                  memcmp(fields, a->field, sizeof fields) != 0;
    if (change) {
        kpc_config_t merged[4 + DK__KPC_CONFIG_MAX] = {0};
        size_t m = 0;
        uint32_t classes = KPC_CLASS_CONFIGURABLE_MASK;
        if (sh->fixed_words > 0) {
            classes |= KPC_CLASS_FIXED_MASK;
            kpc_config_t ctrl = 0;
            for (unsigned f = 0; f < FIXED_FIELDS; f++)
                ctrl |= (kpc_config_t)fields[f] << (4 * f);
            merged[m++] = ctrl;
            for (size_t w = 1; w < sh->fixed_words; w++)
                merged[m++] = 0;
        }
        for (size_t w = 0; w < sh->config_words; w++)
            merged[m++] = want[w];
        int r = kp->kpc_set_config(classes, merged);
        if (r != 0) {
            int e = dk__kpc_errno(r);
            if (e == EINVAL)
                return dk__fail_os(DK_EUNAVAILABLE, e,
                                   "kpc_set_config refused the register words kperfdata made "
                                   "(this macOS refuses selectors the CPU does not list)");
            /* The counters are held, so the caller is privileged: EPERM is
             * the arm64 release kernels' selector allow-list
             * (kpc_set_config_arch, cpc_event_allowed), which refuses the
             * whole configuration. Name the events new to it. */
            if (e == EPERM && sh->fixed_words == 0) { /* arm64: fixed counters have no words */
                char names[512] = "";
                size_t len = 0;
                for (size_t w = 0; w < sh->config_words && len < sizeof names; w++) {
                    if (c->config[w] == 0 || a->word_refs[w] > 0)
                        continue;
                    int k = snprintf(names + len, sizeof names - len, "%s%s (selector 0x%llx)",
                                     len > 0 ? ", " : "", c->owner[w],
                                     (unsigned long long)(c->config[w] & 0xffff));
                    len = k < 0 ? sizeof names : len + (size_t)k;
                }
                return dk__fail_os(DK_EUNAVAILABLE, e,
                                   "kpc_set_config refused %s: this macOS counts only the "
                                   "selectors on its chip's allow-list (release kernels restrict "
                                   "user clients to known events); choose another event",
                                   names[0] != '\0' ? names : "the configuration");
            }
            return dk__kpc_fail("programming the counters (kpc_set_config)", r);
        }
        memcpy(a->words, want, sizeof want);
        memcpy(a->field, fields, sizeof fields);
    }
    for (size_t w = 0; w < sh->config_words; w++) {
        if (c->config[w] == 0)
            continue;
        a->word_owner[w] = c->owner[w];
        a->word_refs[w]++;
    }
    for (unsigned f = 0; f < FIXED_FIELDS; f++)
        for (size_t w = 0; w < sh->fixed_words; w++)
            if ((c->fixed[w] >> (4 * f)) & 0xf)
                a->field_refs[f]++;
    c->generation = a->generation;
    c->programmed = true;
    c->reprogrammed = change;
    return 0;
}

void dk__arbiter_unprogram(dk__arbiter *a, const dk__kpc_shape *sh, dk__kpc_claim *c)
{
    pthread_mutex_lock(&a->lock);
    if (c->programmed && c->generation == a->generation) {
        for (size_t w = 0; w < sh->config_words; w++)
            if (c->config[w] != 0 && a->word_refs[w] > 0)
                a->word_refs[w]--;
        for (unsigned f = 0; f < FIXED_FIELDS; f++)
            for (size_t w = 0; w < sh->fixed_words; w++)
                if (((c->fixed[w] >> (4 * f)) & 0xf) && a->field_refs[f] > 0)
                    a->field_refs[f]--;
    }
    c->programmed = false;
    pthread_mutex_unlock(&a->lock);
}

/* Set kpc.counting and kpc.thread_counting to the unions of what runs.
 * Caller holds the arbiter lock; on failure the refs are as before. */
static int apply_counting(dk__arbiter *a, const dk_kperf_vtable *kp, uint32_t counting_before,
                          uint32_t thread_before, bool starting)
{
    uint32_t counting = class_union(a->counting_refs), thread = class_union(a->thread_refs);
    int r;
    if (starting) {
        if (counting != counting_before && (r = kp->kpc_set_counting(counting)) != 0)
            return dk__kpc_fail("starting counting (kpc_set_counting)", r);
        if (thread != thread_before && (r = kp->kpc_set_thread_counting(thread)) != 0) {
            int rc = dk__kpc_fail("starting per-thread counting (kpc_set_thread_counting)", r);
            if (counting != counting_before)
                (void)kp->kpc_set_counting(counting_before);
            return rc;
        }
        return 0;
    }
    /* Stopping: try both even when the first fails. */
    int r1 = thread != thread_before ? kp->kpc_set_thread_counting(thread) : 0;
    int r2 = counting != counting_before ? kp->kpc_set_counting(counting) : 0;
    /* What is left on is machine state: say what and how to turn it off. */
    char what[160];
    if (r1 != 0) {
        snprintf(what, sizeof what,
                 "stopping per-thread counting (kpc_set_thread_counting) left kpc.thread_counting "
                 "at 0x%x (turn it off with 'sudo sysctl kpc.thread_counting=0')",
                 (unsigned)thread_before);
        return dk__kpc_fail(what, r1);
    }
    if (r2 != 0) {
        snprintf(what, sizeof what,
                 "stopping counting (kpc_set_counting) left kpc.counting at 0x%x (turn it off "
                 "with 'sudo sysctl kpc.counting=0')",
                 (unsigned)counting_before);
        return dk__kpc_fail(what, r2);
    }
    return 0;
}

int dk__arbiter_start(dk__arbiter *a, const dk_kperf_vtable *kp, const dk__kpc_shape *sh,
                      dk__kpc_claim *c, uint32_t classes, bool per_thread)
{
    if (c->generation != a->generation) {
        /* The counters were given back and taken again since it was programmed. */
        c->programmed = false;
        int rc = dk__arbiter_program(a, kp, sh, c);
        if (rc != 0)
            return rc;
    }
    uint32_t counting_before = class_union(a->counting_refs);
    uint32_t thread_before = class_union(a->thread_refs);
    add_refs(a->counting_refs, classes, +1);
    if (per_thread)
        add_refs(a->thread_refs, classes, +1);
    int rc = apply_counting(a, kp, counting_before, thread_before, true);
    if (rc != 0) {
        add_refs(a->counting_refs, classes, -1);
        if (per_thread)
            add_refs(a->thread_refs, classes, -1);
        return rc;
    }
    return 0;
}

int dk__arbiter_stop(dk__arbiter *a, const dk_kperf_vtable *kp, uint32_t classes, bool per_thread)
{
    uint32_t counting_before = class_union(a->counting_refs);
    uint32_t thread_before = class_union(a->thread_refs);
    add_refs(a->counting_refs, classes, -1);
    if (per_thread)
        add_refs(a->thread_refs, classes, -1);
    return apply_counting(a, kp, counting_before, thread_before, false);
}
