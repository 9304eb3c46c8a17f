/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_recording.c - libFuzzer target for the recording reader
 * (tools/common/dkrec/dkrec.c): any input is parsed; a refusal must name the
 * file, an accepted recording must hold together (every sample's event and
 * stack nodes, user and kernel, defined, every node's parent before it) and be freed whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dkrec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dkrec *r = NULL;
    char err[512];
    if (dkrec_parse(data, size, "fuzz.data", &r, err, sizeof err) != 0) {
        if (r != NULL || strncmp(err, "fuzz.data: ", 11) != 0)
            abort();
        return 0;
    }
    for (size_t i = 0; i < r->n_samples; i++)
        if (r->samples[i].event >= r->n_events || r->samples[i].node >= r->n_nodes ||
            r->samples[i].knode >= r->n_nodes)
            abort();
    for (size_t k = 1; k < r->n_nodes; k++)
        if (r->nodes[k].parent >= k ||
            r->nodes[k].depth != (r->nodes[k].parent ? r->nodes[r->nodes[k].parent].depth + 1 : 1))
            abort();
    for (size_t i = 0; i < r->n_maps; i++)
        if (r->maps[i].path == NULL || r->maps[i].id_len > DKREC_ID_MAX)
            abort();
    if (r->complete != (r->tail_note[0] == '\0'))
        abort();
    dkrec_free(r);
    return 0;
}
