/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * model.c - the result model's one function; see model.h.
 */
#include <stdlib.h>

#include "libdkbench/model.h"

void dkb_result_free(dkb_result *r)
{
    if (r == NULL)
        return;
    free(r->iterations);
    r->iterations = NULL;
    free(r->preempted);
    r->preempted = NULL;
    free(r->proc_iterations);
    r->proc_iterations = NULL;
    for (size_t i = 0; i < DKB_MAX_MEASURES; i++) {
        free(r->m[i].y);
        r->m[i].y = NULL;
        free(r->m[i].outlier_class);
        r->m[i].outlier_class = NULL;
        free(r->m[i].proc);
        free(r->m[i].proc_half);
        r->m[i].proc = r->m[i].proc_half = NULL;
    }
}
