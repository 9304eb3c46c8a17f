/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkrec_dump.c - what the tests of record --switch-output check of each
 * file, read by the recording's one reader (tools/common/dkrec): one line
 * per file given,
 *
 *   PATH samples N first FIRST_NS last LAST_NS maxgap GAP_NS lost L complete C
 *
 * GAP_NS being the longest time between two samples in a row of the file.
 * usage: dkrec_dump FILE...   Exit status 1 when a file cannot be read.
 */
#include <inttypes.h>
#include <stdio.h>

#include "dkrec.h"

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        char err[512];
        dkrec *r = NULL;
        if (dkrec_read_file(argv[i], &r, err, sizeof err) != 0) {
            fprintf(stderr, "dkrec_dump: %s\n", err);
            rc = 1;
            continue;
        }
        uint64_t first = 0, last = 0, gap = 0;
        for (size_t k = 0; k < r->n_samples; k++) {
            uint64_t t = r->samples[k].time_ns;
            if (k == 0)
                first = t;
            else if (t > last && t - last > gap)
                gap = t - last;
            last = t;
        }
        printf("%s samples %zu first %" PRIu64 " last %" PRIu64 " maxgap %" PRIu64 " lost %" PRIu64
               " complete %d\n",
               argv[i], r->n_samples, first, last, gap, r->lost, r->complete ? 1 : 0);
        dkrec_free(r);
    }
    return rc;
}
