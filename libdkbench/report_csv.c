/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_csv.c - one row per benchmark and measure, RFC 4180: CRLF line
 * ends, fields with a comma, quote or line break quoted, quotes doubled.
 * Per-iteration values; empty cells where there is no value.
 */
#include <math.h>
#include <stdio.h>

#include "common/error.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"

static void cell(FILE *out, double v)
{
    fputc(',', out);
    if (isfinite(v))
        fprintf(out, "%.17g", v);
}

static void count(FILE *out, size_t v) { fprintf(out, ",%zu", v); }

/* A text field after a comma, control characters escaped (common/text.h):
 * a CSV is printed and read line by line as often as it is parsed. */
static void text(FILE *out, const char *s)
{
    fputc(',', out);
    dk__put_csv(out, NULL, s, true);
}

int dkb_report_csv(FILE *out, const dkb_run_info *run, const dkb_result *const *results, size_t n)
{
    if (out == NULL || (results == NULL && n > 0))
        return dkb_fail(DK_EINVAL, "dkb_report_csv: out and results must not be NULL");
    (void)run;
    fputs("benchmark,group,measure,unit,available,why,samples,lower,estimate,upper,r2,intercept,"
          "mean,median,stddev,mad,min,max,outliers_low_severe,outliers_low_mild,outliers_high_mild,"
          "outliers_high_severe,change_lower,change_estimate,change_upper,p_value,verdict,"
          "baseline_estimate,estimator\r\n",
          out);
    for (size_t i = 0; i < n; i++) {
        const dkb_result *r = results[i];
        if (r == NULL)
            return dkb_fail(DK_EINVAL, "dkb_report_csv: result %zu is NULL", i);
        size_t nm = r->n_measures < DKB_MAX_MEASURES ? r->n_measures : DKB_MAX_MEASURES;
        for (size_t j = 0; j < nm; j++) {
            const dkb_measure *m = &r->m[j];
            bool est = dkb__has_estimates(r, m);
            dk__put_csv(out, NULL, r->name, true);
            text(out, r->group);
            text(out, m->name);
            text(out, m->unit);
            fputs(m->available ? ",true" : ",false", out);
            text(out, m->why);
            count(out, r->n_samples);
            if (est) {
                cell(out, m->slope.lo);
                cell(out, m->slope.point);
                cell(out, m->slope.hi);
                cell(out, m->fit.r2);
                cell(out, m->fit.intercept);
                cell(out, m->per_iter.mean);
                cell(out, m->per_iter.median);
                cell(out, m->per_iter.stddev);
                cell(out, m->per_iter.mad);
                cell(out, m->per_iter.min);
                cell(out, m->per_iter.max);
                count(out, m->outliers.low_severe);
                count(out, m->outliers.low_mild);
                count(out, m->outliers.high_mild);
                count(out, m->outliers.high_severe);
            } else {
                fputs(",,,,,,,,,,,,,,,", out);
            }
            if (est && m->has_change) {
                cell(out, m->change.rel.lo);
                cell(out, m->change.rel.point);
                cell(out, m->change.rel.hi);
                cell(out, m->change.p_value);
                text(out, dkb_verdict_name(m->change.verdict));
                cell(out, m->baseline_slope);
            } else {
                fputs(",,,,,,", out);
            }
            /* Which estimator gave lower, estimate, upper (time: Theil-Sen;
             * r2 and intercept are the OLS fit's whatever it is). */
            if (est)
                text(out, m->estimator);
            else
                fputc(',', out);
            fputs("\r\n", out);
        }
    }
    return dkb__report_done(out, "CSV");
}
