/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_baseline.c - libFuzzer target for libdkbench's baseline reader
 * (libdkbench/baseline.c on the JSON reader src/common/json.c, the code
 * behind dkb_baseline_load): any input is parsed; a refusal must be
 * DK_EINVAL or DK_ENOMEM with one line naming the file, an accepted baseline must hold together (each result's arrays one
 * value per sample, its counts within them) and be freed whole. What a
 * dkbench program does with a baseline follows: each result is compared
 * with a second reading of itself, and every report is written with it
 * (to /dev/null).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdkbench/compare.h"
#include "common/error.h"
#include "libdkbench/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dkb_result *rs = NULL;
    size_t n = 0;
    int rc = dkb__baseline_parse("fuzz.json", (const char *)data, size, &rs, &n);
    if (rc != 0) {
        const char *why = dkb_last_error();
        if (rs != NULL || (rc != DK_EINVAL && rc != DK_ENOMEM) ||
            strncmp(why, "baseline fuzz.json: ", 20) != 0 || strchr(why, '\n') != NULL)
            abort();
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        const dkb_result *r = &rs[i];
        if (r->n_preempted > r->n_samples || (r->n_preempted != 0 && r->preempted == NULL) ||
            r->n_levels > DKB_MAX_LEVELS || r->n_measures > DKB_MAX_MEASURES)
            abort();
        /* Touch every value the arrays promise, for ASan. */
        volatile double sink = 0;
        for (size_t k = 0; r->iterations != NULL && k < r->n_samples; k++)
            sink += r->iterations[k] + (r->preempted ? r->preempted[k] : 0);
        for (size_t q = 0; q < r->n_measures; q++) {
            const dkb_measure *m = &r->m[q];
            if (m->n_fit > r->n_samples || memchr(m->name, 0, sizeof m->name) == NULL)
                abort();
            for (size_t k = 0; m->y != NULL && k < r->n_samples; k++)
                sink += m->y[k] + (m->outlier_class ? m->outlier_class[k] : 0);
        }
        (void)sink;
    }
    dkb_result *old = NULL;
    size_t n_old = 0;
    if (dkb__baseline_parse("fuzz.json", (const char *)data, size, &old, &n_old) != 0 || n_old != n)
        abort();
    static FILE *null;
    if (null == NULL && (null = fopen("/dev/null", "w")) == NULL)
        abort();
    const dkb_result **cur = calloc(n ? n : 1, sizeof *cur),
                     **base = calloc(n ? n : 1, sizeof *base);
    if (cur == NULL || base == NULL)
        abort();
    dkb_run_info run;
    memset(&run, 0, sizeof run);
    snprintf(run.baseline, sizeof run.baseline, "fuzz");
    for (size_t i = 0; i < n; i++) {
        dkb_compare_baseline(&rs[i], &old[i], 0.01, 20, 1);
        cur[i] = &rs[i];
        base[i] = &old[i];
        dkb_report_terminal(null, &run, &rs[i], true, true);
    }
    dkb_report_json(null, &run, cur, n);
    dkb_report_csv(null, &run, cur, n);
    dkb_report_markdown(null, &run, cur, n);
    dkb_report_gbench(null, &run, cur, n);
    dkb_report_html(null, &run, cur, base, n);
    for (size_t i = 0; i < n; i++) {
        dkb_result_free(&rs[i]);
        dkb_result_free(&old[i]);
    }
    free(rs);
    free(old);
    free(cur);
    free(base);
    return 0;
}
