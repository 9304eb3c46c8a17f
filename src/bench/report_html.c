/*
 * report_html.c - one self-contained HTML file: inline CSS and SVG, no
 * script, nothing fetched. Per benchmark a summary table and, per measure,
 * the distribution of per-iteration values (a histogram) and the samples
 * (iterations against the measured total) with the fitted line; a baseline,
 * when given, is overlaid in both. The document is well-formed XML, every
 * text escaped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/compare.h"
#include "bench/error.h"
#include "bench/report.h"
#include "bench/report_common.h"

#define W 520.0
#define H 280.0
#define ML 70.0 /* margins around the plot area */
#define MR 16.0
#define MT 24.0
#define MB 44.0
#define MAX_BINS 40

static const char *const STYLE =
    "body{font-family:sans-serif;margin:2em;color:#222;background:#fff}"
    "table{border-collapse:collapse;margin:0.5em 0 1em}"
    "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}"
    "td:first-child,th:first-child{text-align:left}"
    ".plots{display:flex;flex-wrap:wrap;gap:12px}"
    "svg{border:1px solid #ddd;background:#fff}"
    ".improved{color:#087f23}.regressed{color:#c62828}.warn{color:#a15c00}";

typedef struct range {
    double lo, hi;
} range;

static void widen(range *r, double v)
{
    if (!isfinite(v))
        return;
    if (v < r->lo)
        r->lo = v;
    if (v > r->hi)
        r->hi = v;
}

static void settle(range *r)
{
    if (!(r->lo <= r->hi)) {
        r->lo = 0;
        r->hi = 1;
    } else if (r->hi - r->lo <= fabs(r->hi) * 1e-12) {
        double d = r->hi != 0 ? fabs(r->hi) * 0.05 : 1;
        r->lo -= d;
        r->hi += d;
    }
}

static double sx(const range *r, double v) { return ML + (v - r->lo) / (r->hi - r->lo) * (W - ML - MR); }
static double sy(const range *r, double v) { return H - MB - (v - r->lo) / (r->hi - r->lo) * (H - MT - MB); }

static void svg_open(FILE *out, const char *title)
{
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                 "viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>", W, H, W, H);
    dk__put_html(out, title);
    fprintf(out, "</title><rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                 "stroke=\"#999\"/>",
            ML, MT, W - ML - MR, H - MT - MB);
}

static void text(FILE *out, double x, double y, const char *anchor, const char *s, bool vertical)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"%s\"", x, y, anchor);
    if (vertical)
        fprintf(out, " transform=\"rotate(-90 %.1f %.1f)\"", x, y);
    fputc('>', out);
    dk__put_html(out, s);
    fputs("</text>", out);
}

/* Axis ends and labels. */
static void axes(FILE *out, const range *xr, const range *yr, bool xtime, bool ytime, double ydiv,
                 const char *xlabel, const char *ylabel)
{
    char b[64];
    text(out, ML, H - MB + 14, "start", dkb__fmt_value(b, sizeof b, xr->lo, xtime), false);
    text(out, W - MR, H - MB + 14, "end", dkb__fmt_value(b, sizeof b, xr->hi, xtime), false);
    text(out, ML - 4, H - MB, "end", dkb__fmt_value(b, sizeof b, yr->lo * ydiv, ytime), false);
    text(out, ML - 4, MT + 10, "end", dkb__fmt_value(b, sizeof b, yr->hi * ydiv, ytime), false);
    text(out, (ML + W - MR) / 2, H - 8, "middle", xlabel, false);
    text(out, 14, (MT + H - MB) / 2, "middle", ylabel, true);
}

/* Per-iteration values of a measure into a new array (NULL if none). */
static double *per_iter(const dkb_result *r, const dkb_measure *m, size_t *n)
{
    *n = 0;
    if (r == NULL || m == NULL || m->y == NULL || r->iterations == NULL || r->n_samples == 0)
        return NULL;
    double *v = malloc(r->n_samples * sizeof *v);
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < r->n_samples; i++)
        if (r->iterations[i] > 0 && isfinite(m->y[i]))
            v[(*n)++] = m->y[i] / r->iterations[i];
    return v;
}

static void bins(const double *v, size_t n, const range *xr, size_t nb, size_t *count)
{
    memset(count, 0, nb * sizeof *count);
    for (size_t i = 0; i < n; i++) {
        double f = (v[i] - xr->lo) / (xr->hi - xr->lo) * (double)nb;
        size_t k = f <= 0 ? 0 : f >= (double)nb ? nb - 1 : (size_t)f;
        count[k]++;
    }
}

static int histogram(FILE *out, const dkb_result *r, const dkb_measure *m, const dkb_result *base,
                     const dkb_measure *bm, bool is_time)
{
    size_t n, nb_base = 0;
    double *v = per_iter(r, m, &n);
    double *b = per_iter(base, bm, &nb_base);
    if (v == NULL || (base && bm && bm->y && base->n_samples && b == NULL)) {
        free(v);
        free(b);
        return dkb_fail(DK_ENOMEM, "HTML report: out of memory for the histogram of %s", r->name);
    }
    range xr = {INFINITY, -INFINITY};
    for (size_t i = 0; i < n; i++)
        widen(&xr, v[i]);
    for (size_t i = 0; i < nb_base; i++)
        widen(&xr, b[i]);
    /* Outliers would squash the body into one bar: the plot spans the mild
     * fences at most, and values beyond them count in the edge bars. */
    const dkb_outliers *o = &m->outliers;
    bool clipped = false;
    if (dkb__has_estimates(r, m) && isfinite(o->fence_low_mild) && isfinite(o->fence_high_mild) &&
        o->fence_low_mild < o->fence_high_mild && (xr.lo < o->fence_low_mild || xr.hi > o->fence_high_mild)) {
        xr.lo = xr.lo > o->fence_low_mild ? xr.lo : o->fence_low_mild;
        xr.hi = xr.hi < o->fence_high_mild ? xr.hi : o->fence_high_mild;
        clipped = true;
    }
    settle(&xr);
    size_t nb = (size_t)ceil(sqrt((double)(n > nb_base ? n : nb_base)));
    nb = nb < 5 ? 5 : nb > MAX_BINS ? MAX_BINS : nb;
    size_t c[MAX_BINS], cb[MAX_BINS], top = 1;
    bins(v, n, &xr, nb, c);
    bins(b, nb_base, &xr, nb, cb);
    for (size_t k = 0; k < nb; k++) {
        if (c[k] > top)
            top = c[k];
        if (nb_base && cb[k] > top)
            top = cb[k];
    }
    range yr = {0, (double)top};
    char title[512];
    snprintf(title, sizeof title, "%s: distribution of %s per iteration", r->name, m->name);
    svg_open(out, title);
    double bw = (W - ML - MR) / (double)nb;
    for (size_t k = 0; k < nb; k++)
        if (c[k])
            fprintf(out, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                         "fill=\"#1f77b4\" fill-opacity=\"0.75\"/>",
                    ML + bw * (double)k, sy(&yr, (double)c[k]), bw - 1, sy(&yr, 0) - sy(&yr, (double)c[k]));
    if (nb_base) {
        fprintf(out, "<path class=\"baseline\" fill=\"none\" stroke=\"#ff7f0e\" stroke-width=\"2\" d=\"M%.2f %.2f",
                ML, sy(&yr, 0));
        for (size_t k = 0; k < nb; k++)
            fprintf(out, " L%.2f %.2f L%.2f %.2f", ML + bw * (double)k, sy(&yr, (double)cb[k]),
                    ML + bw * (double)(k + 1), sy(&yr, (double)cb[k]));
        fprintf(out, " L%.2f %.2f\"/>", W - MR, sy(&yr, 0));
    }
    if (dkb__has_estimates(r, m) && isfinite(m->slope.point) && m->slope.point >= xr.lo &&
        m->slope.point <= xr.hi)
        fprintf(out, "<line class=\"estimate\" x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" "
                     "stroke=\"#d62728\" stroke-width=\"2\"/>",
                sx(&xr, m->slope.point), MT, sx(&xr, m->slope.point), H - MB);
    char xl[200];
    snprintf(xl, sizeof xl, "%s per iteration%s%s", m->name, nb_base ? " (orange: baseline)" : "",
             clipped ? ", outliers in the edge bars" : "");
    axes(out, &xr, &yr, is_time, false, 1, xl, "samples");
    fputs("</svg>\n", out);
    free(v);
    free(b);
    return 0;
}

static void points(FILE *out, const dkb_result *r, const dkb_measure *m, const range *xr,
                   const range *yr, double ydiv, bool base)
{
    static const char *const colour[] = {"#1f77b4", "#ff9800", "#c62828", "#ff9800", "#c62828"};
    for (size_t i = 0; i < r->n_samples; i++) {
        if (!isfinite(m->y[i]) || !isfinite(r->iterations[i]))
            continue;
        unsigned cls = m->outlier_class && m->outlier_class[i] <= 4 ? m->outlier_class[i] : 0;
        fprintf(out, "<circle class=\"%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"%s/>",
                base ? "bpoint" : "point", sx(xr, r->iterations[i]), sy(yr, m->y[i] / ydiv),
                base ? "#aaa" : colour[cls], base ? " fill-opacity=\"0.7\"" : "");
    }
}

static void fit_line(FILE *out, const dkb_fit *f, const range *xr, const range *yr, double ydiv,
                     const char *cls, const char *stroke, const char *dash)
{
    if (!isfinite(f->slope) || !isfinite(f->intercept))
        return;
    /* Clip x so the line stays inside the plot area. */
    double x0 = xr->lo, x1 = xr->hi;
    double y0 = (f->intercept + f->slope * x0) / ydiv, y1 = (f->intercept + f->slope * x1) / ydiv;
    if (f->slope != 0) {
        for (int e = 0; e < 2; e++) {
            double *x = e ? &x1 : &x0, *y = e ? &y1 : &y0;
            double lim = *y > yr->hi ? yr->hi : *y < yr->lo ? yr->lo : *y;
            if (lim != *y) {
                *x = (lim * ydiv - f->intercept) / f->slope;
                *y = lim;
            }
        }
    }
    fprintf(out, "<line class=\"%s\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                 "stroke-width=\"2\"%s/>",
            cls, sx(xr, x0), sy(yr, y0), sx(xr, x1), sy(yr, y1), stroke, dash);
}

static void scatter(FILE *out, const dkb_result *r, const dkb_measure *m, const dkb_result *base,
                    const dkb_measure *bm, bool is_time)
{
    range xr = {0, -INFINITY}, yr = {0, -INFINITY};
    bool with_base = base && bm && bm->y && base->iterations;
    for (size_t i = 0; i < r->n_samples; i++) {
        widen(&xr, r->iterations[i]);
        widen(&yr, m->y[i]);
    }
    for (size_t i = 0; with_base && i < base->n_samples; i++) {
        widen(&xr, base->iterations[i]);
        widen(&yr, bm->y[i]);
    }
    settle(&xr);
    settle(&yr);
    /* Totals in a readable unit: ydiv scales the axis, labels show the true value. */
    const char *unit = "";
    double ydiv = is_time ? dkb__time_scale(yr.hi, &unit) : 1;
    yr.lo /= ydiv;
    yr.hi /= ydiv;
    char title[512];
    snprintf(title, sizeof title, "%s: %s against iterations", r->name, m->name);
    svg_open(out, title);
    dkb_fit line;
    if (with_base) {
        points(out, base, bm, &xr, &yr, ydiv, true);
        if (dkb_headline_line(base, bm, &line))
            fit_line(out, &line, &xr, &yr, ydiv, "bfit", "#888", " stroke-dasharray=\"6 4\"");
    }
    points(out, r, m, &xr, &yr, ydiv, false);
    /* The line of the estimate the table and the terminal give (for time
     * the Theil-Sen slope of the unpreempted samples), not always OLS. */
    if (dkb__has_estimates(r, m) && dkb_headline_line(r, m, &line))
        fit_line(out, &line, &xr, &yr, ydiv, "fit", "#d62728", "");
    char yl[200];
    snprintf(yl, sizeof yl, "total %s per sample", m->name);
    axes(out, &xr, &yr, false, is_time, ydiv, with_base ? "iterations (grey: baseline)" : "iterations",
         yl);
    fputs("</svg>\n", out);
}

static void td_num(FILE *out, double v, bool is_time)
{
    char b[64];
    fputs("<td>", out);
    dk__put_html(out, dkb__fmt_value(b, sizeof b, v, is_time));
    fputs("</td>", out);
}

static void summary(FILE *out, const dkb_result *r)
{
    fputs("<table><tr><th>measure</th><th>lower</th><th>estimate</th><th>upper</th><th>R\xC2\xB2</th>"
          "<th>mean</th><th>\xCF\x83</th><th>median</th><th>MAD</th><th>outliers</th><th>change</th>"
          "<th>estimator</th></tr>\n",
          out);
    size_t nm = r->n_measures < DKB_MAX_MEASURES ? r->n_measures : DKB_MAX_MEASURES;
    for (size_t j = 0; j < nm; j++) {
        const dkb_measure *m = &r->m[j];
        bool t = j == 0;
        fputs("<tr><td>", out);
        dk__put_html(out, m->name);
        fputs("</td>", out);
        if (!dkb__has_estimates(r, m)) {
            fputs("<td colspan=\"11\">", out);
            /* An event's reason is in the report's list above the first
             * benchmark, once; the time's is this benchmark's own. */
            dk__put_html(out, m->available ? "no estimate (fewer than 2 samples)"
                              : j > 0      ? "<not supported>"
                                           : m->why);
            fputs("</td></tr>\n", out);
            continue;
        }
        td_num(out, m->slope.lo, t);
        td_num(out, m->slope.point, t);
        td_num(out, m->slope.hi, t);
        fprintf(out, "<td>%.4f</td>", m->fit.r2);
        td_num(out, m->per_iter.mean, t);
        td_num(out, m->per_iter.stddev, t);
        td_num(out, m->per_iter.median, t);
        td_num(out, m->per_iter.mad, t);
        fprintf(out, "<td>%zu</td>", m->outliers.low_severe + m->outliers.low_mild +
                                         m->outliers.high_mild + m->outliers.high_severe);
        if (m->has_change) {
            const char *cls = m->change.verdict == DKB_IMPROVED    ? "improved"
                              : m->change.verdict == DKB_REGRESSED ? "regressed"
                                                                   : "same";
            fprintf(out, "<td class=\"%s\">%+.2f%% [%+.2f%%, %+.2f%%] p = %.3f, ", cls,
                    100 * m->change.rel.point, 100 * m->change.rel.lo, 100 * m->change.rel.hi,
                    m->change.p_value);
            dk__put_html(out, dkb__verdict_word(m->change.verdict));
            fputs("</td>", out);
        } else {
            fputs("<td></td>", out);
        }
        /* The estimator of lower, estimate, upper: the line drawn in the
         * scatter and R\xC2\xB2 are the OLS fit's whatever it is. */
        fputs("<td>", out);
        dk__put_html(out, m->estimator);
        fputs("</td>", out);
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
}

static const dkb_measure *same_measure(const dkb_result *base, const char *name)
{
    for (size_t j = 0; base && j < base->n_measures && j < DKB_MAX_MEASURES; j++)
        if (strcmp(base->m[j].name, name) == 0 && base->m[j].available)
            return &base->m[j];
    return NULL;
}

int dkb_report_html(FILE *out, const dkb_run_info *run, const dkb_result *const *results,
                    const dkb_result *const *baseline, size_t n)
{
    if (out == NULL || run == NULL || (results == NULL && n > 0))
        return dkb_fail(DK_EINVAL, "dkb_report_html: out, run and results must not be NULL");
    fprintf(out, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head>"
                 "<meta charset=\"utf-8\"/><title>dkbench report</title><style>%s</style></head>\n<body>\n"
                 "<h1>dkbench report</h1>\n<p>",
            STYLE);
    fputs("backend ", out);
    dk__put_html(out, run->backend);
    fputs(", CPU ", out);
    dk__put_html(out, run->cpu);
    fputs(", host ", out);
    dk__put_html(out, run->host);
    fputs(", ", out);
    dk__put_html(out, run->date);
    if (run->baseline[0]) {
        fputs(", compared with baseline ", out);
        dk__put_html(out, run->baseline);
    }
    fputs("</p>\n", out);
    int rc = dkb__put_unmeasured(out, run, results, n,
                                 "<div class=\"warn\"><p>Not available here:</p><ul>\n", "<li>",
                                 "</li>\n", "</ul></div>\n", dk__put_html);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const dkb_result *r = results[i];
        const dkb_result *base = baseline ? baseline[i] : NULL;
        if (r == NULL)
            return dkb_fail(DK_EINVAL, "dkb_report_html: result %zu is NULL", i);
        fputs("<section class=\"bench\"><h2>", out);
        dk__put_html(out, r->name);
        fputs("</h2>\n", out);
        summary(out, r);
        if (r->stop_reason[0]) {
            fputs("<p>stopped: ", out);
            dk__put_html(out, r->stop_reason);
            fputs("</p>\n", out);
        }
        if (r->moved_levels)
            fputs("<p class=\"warn\">The benchmark ran on more than one performance level; its counts "
                  "mix cores of different speeds.</p>\n",
                  out);
        size_t nm = r->n_measures < DKB_MAX_MEASURES ? r->n_measures : DKB_MAX_MEASURES;
        for (size_t j = 0; j < nm && rc == 0; j++) {
            const dkb_measure *m = &r->m[j];
            if (!m->available || m->y == NULL || r->iterations == NULL || r->n_samples == 0)
                continue;
            const dkb_measure *bm = same_measure(base, m->name);
            fputs("<div class=\"plots\">\n", out);
            rc = histogram(out, r, m, base, bm, j == 0);
            if (rc == 0)
                scatter(out, r, m, base, bm, j == 0);
            fputs("</div>\n", out);
        }
        fputs("</section>\n", out);
    }
    if (rc != 0)
        return rc;
    fputs("</body>\n</html>\n", out);
    return dkb__report_done(out, "HTML");
}
