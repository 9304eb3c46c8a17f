/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_report.c - libFuzzer target for dkperf report behind the recording
 * reader: any input the reader accepts is turned into the report's model
 * (report_model.c) and written in every form (report_out.c: the table by
 * each sort key and speedscope; report_stacks.c: folded stacks and the
 * flame graph) to /dev/null.
 * Built without ELF and Mach-O readers: images are named image+offset.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkrec.h"
#include "fuzz_common.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *null;
    if (null == NULL && (null = fopen("/dev/null", "w")) == NULL)
        abort();
    dkrec *r = NULL;
    char err[512];
    if (dkrec_parse(data, size, "fuzz.data", &r, err, sizeof err) != 0)
        return 0;
    rprofile p;
    if (rprofile_build(&p, r, "fuzz.data") == 0) {
        for (size_t i = 1; i < p.n_nodes; i++)
            if (p.nodes[i].parent >= i || p.nodes[i].frame >= p.n_frames ||
                p.nodes[i].depth != p.nodes[p.nodes[i].parent].depth + 1)
                abort();
        uint64_t count = 0;
        for (size_t i = 0; i < p.n_entries; i++) {
            if (p.entries[i].stack == 0 || p.entries[i].stack >= p.n_nodes ||
                p.entries[i].comm >= p.n_comms || p.entries[i].count == 0)
                abort();
            count += p.entries[i].count;
        }
        if (count != r->n_samples || p.n_samples != r->n_samples)
            abort();
        static const report_sort sorts[] = {SORT_SYM, SORT_DSO, SORT_COMM, SORT_PID};
        for (size_t k = 0; k < sizeof sorts / sizeof sorts[0]; k++)
            report_stdio(null, &p, sorts[k], k % 2 == 1);
        report_folded(null, &p, -1);
        report_folded(null, &p, 0);
        report_speedscope(null, &p);
        report_html(null, &p, 0);
        rprofile_free(&p);
    }
    dkrec_free(r);
    return 0;
}
