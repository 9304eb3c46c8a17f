/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * hw_raw_sequence.c - the raw kperf/kperfdata sequence against the real
 * frameworks of this Mac. Run as root: sudo ./hw_raw_sequence
 *
 * It cannot run anywhere else; tests/test_raw_sequence.c is its twin for
 * the simulated frameworks.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkperf/kperf.h"
#include "hw.h"

static const dk_kperf_vtable *kp;
static const dk_kperfdata_vtable *kd;

static void *other_work(void *arg)
{
    (void)arg;
    hw_spin(50000000);
    return NULL;
}

static void read_counters(const size_t *map, size_t n, uint64_t *out)
{
    uint64_t buf[KPC_MAX_COUNTERS] = {0};
    HW_CHECK(kp->kpc_get_thread_counters(0, KPC_MAX_COUNTERS, buf) == 0);
    for (size_t i = 0; i < n; i++)
        out[i] = buf[map[i]];
}

int main(void)
{
    dk_load_error err;
    if (dk_kperf_load(NULL, &kp, &err) != 0 || dk_kperfdata_load(NULL, &kd, &err) != 0) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    kpep_db *db = NULL;
    HW_CHECK(kd->kpep_db_create(NULL, &db) == 0);
    printf("database %s (%s), cpu %s, %zu events, %zu fixed + %zu configurable counters\n",
           db->name, db->marketing_name, db->cpu_id, db->event_count, db->fixed_counter_count,
           db->config_counter_count);
    HW_CHECK(kp->kpc_get_counter_count(KPC_CLASS_CONFIGURABLE_MASK) == db->config_counter_count);

    int saved = -1;
    if (kp->kpc_force_all_ctrs_get(&saved) != 0) {
        fprintf(stderr, "kpc_force_all_ctrs_get failed: run as root\n");
        return 1;
    }
    HW_CHECK(kp->kpc_force_all_ctrs_set(1) == 0);

    const char *names[] = {"Cycles", "Instructions",
                           db->architecture == KPEP_ARCH_X86_64 ? "BR_INST_RETIRED.ALL_BRANCHES"
                                                                : "INST_BRANCH"};
    size_t n = sizeof names / sizeof names[0];
    kpep_config *cfg = NULL;
    HW_CHECK(kd->kpep_config_create(db, &cfg) == 0);
    HW_CHECK(kd->kpep_config_force_counters(cfg) == 0);
    for (size_t i = 0; i < n; i++) {
        kpep_event *ev = NULL;
        HW_CHECK(kd->kpep_db_event(db, names[i], &ev) == 0);
        HW_CHECK(kd->kpep_config_add_event(cfg, &ev, 0, NULL) == 0);
    }
    uint32_t classes = 0;
    size_t words = 0, map[3] = {0};
    kpc_config_t regs[KPC_MAX_COUNTERS] = {0};
    HW_CHECK(kd->kpep_config_kpc_classes(cfg, &classes) == 0);
    HW_CHECK(kd->kpep_config_kpc_count(cfg, &words) == 0);
    HW_CHECK(kd->kpep_config_kpc_map(cfg, map, sizeof map) == 0);
    HW_CHECK(kd->kpep_config_kpc(cfg, regs, sizeof regs) == 0);
    HW_CHECK(kp->kpc_set_config(classes, regs) == 0);
    HW_CHECK(kp->kpc_set_counting(classes) == 0);
    HW_CHECK(kp->kpc_set_thread_counting(classes) == 0);

    uint64_t a[3], b[3], c[3];
    read_counters(map, n, a);
    hw_spin(10000000);
    read_counters(map, n, b);
    for (size_t i = 0; i < n; i++) {
        printf("%-30s %12llu\n", names[i], (unsigned long long)(b[i] - a[i]));
        HW_CHECK(b[i] > a[i]);
    }
    /* 10M iterations of a loop with a branch: at least 10M branches and 20M instructions. */
    HW_CHECK(b[1] - a[1] >= 20000000);
    HW_CHECK(b[2] - a[2] >= 10000000);

    pthread_t t;
    HW_CHECK(pthread_create(&t, NULL, other_work, NULL) == 0);
    pthread_join(t, NULL);
    read_counters(map, n, c);
    HW_CHECK(c[1] - b[1] < (b[1] - a[1]) / 2); /* the other thread's 50M iterations do not show */

    HW_CHECK(kp->kpc_set_thread_counting(0) == 0);
    HW_CHECK(kp->kpc_set_counting(0) == 0);
    HW_CHECK(kp->kpc_force_all_ctrs_set(saved) == 0);
    int now = -1;
    HW_CHECK(kp->kpc_force_all_ctrs_get(&now) == 0 && now == saved);
    kd->kpep_config_free(cfg);
    kd->kpep_db_free(db);
    printf("ok\n");
    return 0;
}
