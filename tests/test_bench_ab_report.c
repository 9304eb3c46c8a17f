/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_bench_ab_report.c - a change from --ab, measured in pairs of
 * processes run side by side: the terminal block's exact lines, and the
 * JSON report's basis "pairs" read back by the baseline reader.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "libdkbench/model.h"
#include "libdkbench/report.h"
#include "bench_fixtures.h"
#include "check.h"

/* The fixture's time change, as dkb_compare_paired leaves it. */
static void paired(dkb_result *r)
{
    sample(r, "fib/20", 1.0);
    r->m[0].change_by_process = true;
    r->m[0].change_paired = true;
    r->m[0].change.resolution = 0.0123;
}

static char *terminal(const dkb_result *r, bool color)
{
    char *buf = NULL;
    size_t len = 0;
    dkb_run_info run;
    run_info(&run);
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (dkb_report_terminal(f, &run, r, color, false) != 0)
        DKT_FAIL("terminal: %s", dkb_last_error());
    CHECK(fclose(f) == 0);
    return buf;
}

TEST_CASE(terminal_paired_change_lines)
{
    dkb_result r;
    paired(&r);
    char *t = terminal(&r, false);
    CHECK_CONTAINS(t, "\n  change (time):     [-6.30% -5.20% -4.10%] (p = 0.00 < 0.05), paired, "
                      "resolves +-1.23%\n"
                      "                     Performance has improved.\n");
    CHECK(strstr(t, "within one process") == NULL);
    free(t);

    r.m[0].change.verdict = DKB_REGRESSED;
    r.m[0].change.rel = (dkb_interval){0.2147, 0.2116, 0.2177};
    r.m[0].change.resolution = 0.0025;
    t = terminal(&r, true);
    CHECK_CONTAINS(t, "\n  change (time):     [+21.16% +21.47% +21.77%] (p = 0.00 < 0.05), "
                      "paired, resolves +-0.25%\n"
                      "                     \x1b[31mPerformance has regressed.\x1b[0m\n");
    free(t);

    r.m[0].change.verdict = DKB_UNRESOLVED;
    r.m[0].change.rel = (dkb_interval){0.0174, -0.0489, 0.0884};
    r.m[0].change.p_value = 0.47;
    r.m[0].change.resolution = 0.0697;
    t = terminal(&r, false);
    CHECK_CONTAINS(t, "\n  change (time):     [-4.89% +1.74% +8.84%] (p = 0.47 >= 0.05), paired, "
                      "resolves +-6.97%\n"
                      "                     Cannot be resolved here: the spread between "
                      "processes is wider than the noise threshold.\n");
    free(t);

    /* Across processes but not paired (a baseline): no "paired". */
    r.m[0].change_paired = false;
    t = terminal(&r, false);
    CHECK_CONTAINS(t, "(p = 0.47 >= 0.05), resolves +-6.97%\n");
    CHECK(strstr(t, "paired") == NULL);
    free(t);
    dkb_result_free(&r);
}

TEST_CASE(json_pairs_basis_read_back)
{
    dkb_result r;
    paired(&r);
    const dkb_result *rp[1] = {&r};
    dkb_run_info run;
    run_info(&run);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    CHECK(dkb_report_json(f, &run, rp, 1) == 0);
    CHECK(fclose(f) == 0);
    CHECK_CONTAINS(buf, "\"basis\":\"pairs\"");

    dkb_result *back = NULL;
    size_t n = 0;
    if (dkb__baseline_parse("ab.json", buf, len, &back, &n) != 0)
        DKT_FAIL("read back: %s", dkb_last_error());
    CHECK(n == 1);
    CHECK(back[0].m[0].has_change);
    CHECK(back[0].m[0].change_paired);
    CHECK(back[0].m[0].change_by_process);
    CHECK(back[0].m[0].change.verdict == DKB_IMPROVED);
    for (size_t i = 0; i < n; i++)
        dkb_result_free(&back[i]);
    free(back);
    free(buf);
    dkb_result_free(&r);
}

TEST_MAIN()
