/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_markdown.c - a table like hyperfine's --export-markdown: per
 * benchmark the per-iteration time with its interval, mean +- sigma, min,
 * max and the time relative to the fastest, then one column per event.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"

/* Markdown text in a table cell: the characters that would end the cell or
 * start markup are backslash-escaped; line breaks, other control
 * characters (C1 too) and bidi format characters become spaces
 * (dk__must_escape). */
static void md_text(FILE *out, const char *s)
{
    unsigned long cp;
    while ((cp = dk__utf8_next(&s)) != 0) {
        if (dk__must_escape(cp)) {
            fputc(' ', out);
            continue;
        }
        if (cp < 0x80 && strchr("|\\`*_[]<>#!~&", (int)cp) != NULL)
            fputc('\\', out);
        dkb__put_utf8(out, cp);
    }
}

static bool has_time(const dkb_result *r)
{
    return r->n_measures > 0 && dkb__has_estimates(r, &r->m[0]);
}

int dkb_report_markdown(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                        size_t n)
{
    if (out == NULL || (results == NULL && n > 0))
        return dkb_fail(DK_EINVAL, "dkb_report_markdown: out and results must not be NULL");
    /* One unit for the table, from the fastest benchmark; event columns in
     * the order they first appear. */
    double fastest = INFINITY;
    const char *names[DKB_MAX_MEASURES * 4];
    size_t n_names = 0;
    for (size_t i = 0; i < n; i++) {
        const dkb_result *r = results[i];
        if (r == NULL)
            return dkb_fail(DK_EINVAL, "dkb_report_markdown: result %zu is NULL", i);
        if (has_time(r) && r->m[0].slope.point < fastest)
            fastest = r->m[0].slope.point;
        size_t nm = r->n_measures < DKB_MAX_MEASURES ? r->n_measures : DKB_MAX_MEASURES;
        for (size_t j = 1; j < nm; j++) {
            size_t k = 0;
            while (k < n_names && strcmp(names[k], r->m[j].name) != 0)
                k++;
            if (k == n_names && n_names < sizeof names / sizeof names[0])
                names[n_names++] = r->m[j].name;
        }
    }
    const char *unit = "ns";
    double div = isfinite(fastest) ? dkb__time_scale(fastest, &unit) : 1;
    fprintf(
        out,
        "| Benchmark | Time [%s] | Mean \xC2\xB1 \xCF\x83 [%s] | Min [%s] | Max [%s] | Relative |",
        unit, unit, unit, unit);
    for (size_t k = 0; k < n_names; k++) {
        fputc(' ', out);
        md_text(out, names[k]);
        fputs(" |", out);
    }
    fputs("\n|:---|---:|---:|---:|---:|---:|", out);
    for (size_t k = 0; k < n_names; k++)
        fputs("---:|", out);
    fputc('\n', out);
    for (size_t i = 0; i < n; i++) {
        const dkb_result *r = results[i];
        fputs("| ", out);
        md_text(out, r->name);
        if (has_time(r)) {
            const dkb_measure *t = &r->m[0];
            fprintf(out, " | %.4g [%.4g, %.4g] | %.4g \xC2\xB1 %.4g | %.4g | %.4g | ",
                    t->slope.point / div, t->slope.lo / div, t->slope.hi / div,
                    t->per_iter.mean / div, t->per_iter.stddev / div, t->per_iter.min / div,
                    t->per_iter.max / div);
            if (fastest > 0)
                fprintf(out, "%.2f |", t->slope.point / fastest);
            else
                fputs("n/a |", out);
        } else {
            fputs(" | n/a | n/a | n/a | n/a | n/a |", out);
        }
        for (size_t k = 0; k < n_names; k++) {
            const char *alias[] = {names[k], NULL};
            const dkb_measure *m = dkb__find_measure(r, alias);
            char b[48];
            if (m != NULL) {
                fprintf(out, " %s |", dkb__fmt_value(b, sizeof b, m->slope.point, false));
                continue;
            }
            /* Unavailable here (why: below the table, once), or no estimate. */
            bool unsupported = false;
            for (size_t j = 1; j < r->n_measures && j < DKB_MAX_MEASURES; j++)
                unsupported = unsupported ||
                              (!r->m[j].available && strcmp(r->m[j].name, names[k]) == 0);
            fputc(' ', out);
            md_text(out, unsupported ? "<not supported>" : "n/a");
            fputs(" |", out);
        }
        fputc('\n', out);
    }
    int rc = dkb__put_unmeasured(out, run, results, n, "\nNot available here:\n\n", "- ", "\n", "",
                                 md_text);
    return rc != 0 ? rc : dkb__report_done(out, "Markdown");
}
