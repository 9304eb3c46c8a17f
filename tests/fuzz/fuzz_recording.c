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

/* The streamed samples, to compare with the ones kept. */
typedef struct seen {
    const dkrec *kept;
    size_t n;
    int stop_at; /* stop the read at this sample (-1: never) */
} seen;

static int on_sample(void *ctx, const dkrec *r, const dkrec_rsample *s)
{
    seen *w = ctx;
    if (s->event >= r->n_events || s->node >= r->n_nodes || s->knode >= r->n_nodes)
        abort();
    if (w->kept != NULL &&
        (w->n >= w->kept->n_samples || memcmp(s, &w->kept->samples[w->n], sizeof *s) != 0))
        abort();
    if ((int)w->n++ == w->stop_at)
        return 7;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dkrec *r = NULL;
    char err[512];
    int rc = dkrec_parse(data, size, "fuzz.data", &r, err, sizeof err);
    /* The stream reads the same: the same verdict, the same samples. */
    seen w = {rc == 0 ? r : NULL, 0, -1};
    dkrec *sr = NULL;
    char serr[512];
    int src = dkrec_stream_parse(data, size, "fuzz.data", on_sample, &w, &sr, serr, sizeof serr);
    if (src != rc || (rc != 0 && strcmp(err, serr) != 0) ||
        (rc == 0 && (w.n != r->n_samples || sr->n_samples != r->n_samples || sr->samples != NULL ||
                     sr->n_nodes != r->n_nodes)))
        abort();
    dkrec_free(sr);
    /* A callback that stops the read is obeyed. */
    if (rc == 0 && r->n_samples > 0) {
        seen stop = {r, 0, (int)(r->n_samples / 2)};
        if (dkrec_stream_parse(data, size, "fuzz.data", on_sample, &stop, &sr, serr, sizeof serr) !=
                7 ||
            sr != NULL || serr[0] != '\0')
            abort();
    }
    if (rc != 0) {
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
