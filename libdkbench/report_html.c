/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_html.c - one self-contained HTML file: inline CSS and SVG, no
 * script, nothing fetched. Per benchmark a summary table and, per measure,
 * the distribution of per-iteration values (a histogram) and the samples
 * (iterations against the measured total) with the fitted line; a baseline,
 * when given, is overlaid in both. Each axis has round ticks and its unit,
 * each plot a legend in words. The document is well-formed XML, every
 * text escaped.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdkbench/compare.h"
#include "common/error.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"
#include "common/stats.h"

#define W 480.0
#define H 280.0
#define ML 62.0 /* margins around the plot area */
#define MR 22.0
#define MT 12.0
#define MB 44.0
#define MAX_BINS 40

/* Colours shared by the plots and the legend keys under them. */
#define C_SAMPLE "#1f77b4"
#define C_MILD "#ff9800"
#define C_SEVERE "#9467bd"
#define C_FIT "#d62728"
#define C_BASE "#666"
#define C_BASE_PT "#aaa"

/* Numbers never wrap inside a cell (a row is one line); the plots of a
 * measure sit side by side from about 880 px and shrink with the window. */
static const char *const STYLE =
    "body{font-family:sans-serif;margin:1.5em;color:#222;background:#fff}"
    "table{border-collapse:collapse;margin:0.5em 0 1em;font-size:13px}"
    "td,th{border:1px solid #bbb;padding:2px 5px;text-align:right;white-space:nowrap}"
    "td:first-child,th:first-child,td.why{text-align:left}"
    "td.why{white-space:normal}"
    ".plots{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:12px}"
    "figure{flex:1 1 400px;max-width:600px;min-width:0;margin:0}"
    "figure svg{display:block;width:100%;height:auto;border:1px solid #ddd;background:#fff}"
    "figcaption{font-size:12px;line-height:1.5;margin-top:3px}"
    "figcaption span{display:inline-block;margin-right:12px}"
    ".k{display:inline-block;width:9px;height:9px;margin-right:4px;vertical-align:-1px}"
    ".k.dot{border-radius:50%}"
    ".k.line{width:16px;height:0;border-top:2px solid;vertical-align:3px}"
    ".k.dash{border-top-style:dashed}"
    ".k.vline{width:0;height:11px;border-left:2px solid}"
    ".k.up{width:0;height:0;border:5px solid transparent;border-bottom:9px solid;border-top:0}"
    ".k.step{width:12px;height:6px;border:2px solid;border-bottom:0}"
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

static double sx(const range *r, double v)
{
    return ML + (v - r->lo) / (r->hi - r->lo) * (W - ML - MR);
}
static double sy(const range *r, double v)
{
    return H - MB - (v - r->lo) / (r->hi - r->lo) * (H - MT - MB);
}

/* A plot opens a figure (the legend below it closes it). */
static void svg_open(FILE *out, const char *title)
{
    fprintf(out,
            "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>",
            W, H, W, H);
    dk__put_html(out, title);
    fprintf(out,
            "</title><rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
            "stroke=\"#999\"/>",
            ML, MT, W - ML - MR, H - MT - MB);
}

static void text(FILE *out, double x, double y, const char *anchor, const char *cls, const char *s,
                 bool vertical)
{
    fprintf(out, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"%s\"",
            cls, x, y, anchor);
    if (vertical)
        fprintf(out, " transform=\"rotate(-90 %.1f %.1f)\"", x, y);
    fputc('>', out);
    dk__put_html(out, s);
    fputs("</text>", out);
}

/* The tick step for span: 1, 2 or 5 times a power of ten, the one nearest
 * (on a log scale) to giving want ticks. */
static double nice_step(double span, double want)
{
    double raw = span / want, p = pow(10, floor(log10(raw))), f = raw / p;
    return p * (f < 1.4142 ? 1 : f < 3.1623 ? 2 : f < 7.0711 ? 5 : 10);
}

/* Tick marks, faint grid lines and their values along one axis. r is in
 * plot units, div turns them into the units the axis label names; counts
 * of 10,000 and more read as k, M or G. integer: no step below 1. */
static void ticks(FILE *out, const range *r, double div, bool vertical, bool integer)
{
    double lo = r->lo / div, hi = r->hi / div, big = fmax(fabs(lo), fabs(hi)), sdiv = 1;
    const char *suffix = "";
    if (div == 1 && big >= 1e4) {
        sdiv = big >= 1e9 ? 1e9 : big >= 1e6 ? 1e6 : 1e3;
        suffix = big >= 1e9 ? "G" : big >= 1e6 ? "M" : "k";
    }
    double step = nice_step(hi - lo, 5);
    if (!isfinite(step) || step <= 0)
        return;
    if (integer && step < 1)
        step = 1;
    int k = (int)floor(log10(step / sdiv) + 1e-9), decimals = k < 0 ? (k < -15 ? 15 : -k) : 0;
    double first = ceil(lo / step - 1e-9) * step;
    for (int i = 0; i < 50; i++) {
        double t = first + i * step;
        if (t > hi + step * 1e-9)
            break;
        if (fabs(t) < step * 1e-9)
            t = 0;
        char b[48];
        snprintf(b, sizeof b, "%.*f%s", decimals, t / sdiv, t == 0 ? "" : suffix);
        if (vertical) {
            double y = sy(r, t * div);
            fprintf(out,
                    "<path class=\"grid\" d=\"M%.0f %.2fH%.0fM%.0f %.2fH%.0f\" stroke=\"#ddd\"/>"
                    "<path d=\"M%.0f %.2fH%.0f\" stroke=\"#999\"/>",
                    ML, y, W - MR, ML, y, ML, ML - 4, y, ML);
            text(out, ML - 6, y + 4, "end", "ytick", b, false);
        } else {
            double x = sx(r, t * div);
            fprintf(out,
                    "<path class=\"grid\" d=\"M%.2f %.0fV%.0f\" stroke=\"#ddd\"/>"
                    "<path d=\"M%.2f %.0fV%.0f\" stroke=\"#999\"/>",
                    x, MT, H - MB, x, H - MB, H - MB + 4);
            text(out, x, H - MB + 16, "middle", "xtick", b, false);
        }
    }
}

/* Both axes: ticks with their values, and each axis named with its unit.
 * Drawn first, so the grid lies under the data. */
static void axes(FILE *out, const range *xr, const range *yr, double xdiv, double ydiv, bool yint,
                 const char *xlabel, const char *ylabel)
{
    ticks(out, xr, xdiv, false, false);
    ticks(out, yr, ydiv, true, yint);
    text(out, (ML + W - MR) / 2, H - 8, "middle", "xlabel", xlabel, false);
    text(out, 14, (MT + H - MB) / 2, "middle", "ylabel", ylabel, true);
}

/* One legend entry: a key drawn in CSS (shape and colour) and its words. */
static void key(FILE *out, const char *shape, const char *colour, const char *words)
{
    fprintf(out, "<span><i class=\"k %s\" style=\"%s:%s\"></i>", shape,
            strcmp(shape, "dot") == 0 || strcmp(shape, "square") == 0 ? "background"
            : strcmp(shape, "up") == 0                                ? "border-bottom-color"
                                                                      : "border-color",
            colour);
    dk__put_html(out, words);
    fputs("</span>", out);
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
        o->fence_low_mild < o->fence_high_mild &&
        (xr.lo < o->fence_low_mild || xr.hi > o->fence_high_mild)) {
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
    /* The x axis in the unit its largest value reads best in. */
    const char *unit = "";
    double xdiv = is_time ? dkb__time_scale(fmax(fabs(xr.lo), fabs(xr.hi)), &unit) : 1;
    char title[512], xl[200], words[300], est[64];
    snprintf(title, sizeof title, "%s: distribution of %s per iteration", r->name, m->name);
    svg_open(out, title);
    if (is_time)
        snprintf(xl, sizeof xl, "%s per iteration (%s)", m->name, unit);
    else
        snprintf(xl, sizeof xl, "%s per iteration", m->name);
    axes(out, &xr, &yr, xdiv, 1, true, xl, "samples in the bin");
    double bw = (W - ML - MR) / (double)nb;
    for (size_t k = 0; k < nb; k++)
        if (c[k])
            fprintf(out,
                    "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
                    "fill=\"" C_SAMPLE "\" fill-opacity=\"0.75\"/>",
                    ML + bw * (double)k, sy(&yr, (double)c[k]), bw - 1,
                    sy(&yr, 0) - sy(&yr, (double)c[k]));
    if (nb_base) {
        fprintf(out,
                "<path class=\"baseline\" fill=\"none\" stroke=\"" C_BASE "\" stroke-width=\"2\" "
                "d=\"M%.2f %.2f",
                ML, sy(&yr, 0));
        for (size_t k = 0; k < nb; k++)
            fprintf(out, " L%.2f %.2f L%.2f %.2f", ML + bw * (double)k, sy(&yr, (double)cb[k]),
                    ML + bw * (double)(k + 1), sy(&yr, (double)cb[k]));
        fprintf(out, " L%.2f %.2f\"/>", W - MR, sy(&yr, 0));
    }
    bool drawn_est = dkb__has_estimates(r, m) && isfinite(m->slope.point) &&
                     m->slope.point >= xr.lo && m->slope.point <= xr.hi;
    if (drawn_est)
        fprintf(out,
                "<line class=\"estimate\" x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" "
                "stroke=\"" C_FIT "\" stroke-width=\"2\"/>",
                sx(&xr, m->slope.point), MT, sx(&xr, m->slope.point), H - MB);
    fputs("</svg>\n<figcaption>", out);
    snprintf(words, sizeof words, "samples, by %s per iteration", m->name);
    key(out, "square", C_SAMPLE, words);
    if (nb_base)
        key(out, "step", C_BASE, "baseline samples, same bins");
    if (drawn_est) {
        dkb__fmt_value(est, sizeof est, m->slope.point, is_time);
        if (is_time)
            snprintf(words, sizeof words, "estimate: %s per iteration (slope of the fit)", est);
        else
            snprintf(words, sizeof words, "estimate: %s %s per iteration (slope of the fit)", est,
                     m->name);
        key(out, "vline", C_FIT, words);
    }
    if (clipped) {
        fputs("<span>", out);
        dk__put_html(out, "outliers beyond the plot count in the edge bars");
        fputs("</span>", out);
    }
    fputs("</figcaption></figure>\n", out);
    free(v);
    free(b);
    return 0;
}

static bool severe(const dkb_measure *m, size_t i)
{
    return m->outlier_class && (m->outlier_class[i] == DKB_OUTLIER_LOW_SEVERE ||
                                m->outlier_class[i] == DKB_OUTLIER_HIGH_SEVERE);
}

/* Samples as dots (outliers in their own colour and shape); a sample
 * above the plot is a triangle on its top edge. Counts the mild, severe
 * and clipped samples into seen[0..2]. */
static void points(FILE *out, const dkb_result *r, const dkb_measure *m, const range *xr,
                   const range *yr, double ydiv, bool base, size_t seen[3])
{
    for (size_t i = 0; i < r->n_samples; i++) {
        if (!isfinite(m->y[i]) || !isfinite(r->iterations[i]))
            continue;
        unsigned cls = m->outlier_class && m->outlier_class[i] <= 4 ? m->outlier_class[i] : 0;
        bool sev = severe(m, i), above = m->y[i] / ydiv > yr->hi;
        double x = sx(xr, r->iterations[i]), y = sy(yr, above ? yr->hi : m->y[i] / ydiv);
        const char *fill = base ? C_BASE_PT : sev ? C_SEVERE : cls ? C_MILD : C_SAMPLE;
        const char *name = base ? "bpoint" : sev ? "point severe" : cls ? "point mild" : "point";
        if (above)
            fprintf(out, "<path class=\"%s clipped\" d=\"M%.2f %.2fl4 7h-8z\" fill=\"%s\"/>", name,
                    x, y, fill);
        else if (base)
            fprintf(out,
                    "<circle class=\"bpoint\" cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\" "
                    "fill-opacity=\"0.7\"/>",
                    x, y, fill);
        else if (sev)
            fprintf(
                out,
                "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"6\" height=\"6\" fill=\"%s\"/>",
                name, x - 3, y - 3, fill);
        else
            fprintf(out, "<circle class=\"%s\" cx=\"%.2f\" cy=\"%.2f\" r=\"%s\" fill=\"%s\"/>",
                    name, x, y, cls ? "3" : "2.5", fill);
        if (cls && !above)
            seen[sev]++;
        if (above)
            seen[2]++;
    }
}

/* Draws the line inside the plot area; false when it has no finite line. */
static bool fit_line(FILE *out, const dkb_fit *f, const range *xr, const range *yr, double ydiv,
                     const char *cls, const char *stroke, const char *dash)
{
    if (!isfinite(f->slope) || !isfinite(f->intercept))
        return false;
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
    fprintf(out,
            "<line class=\"%s\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
            "stroke-width=\"2\"%s/>",
            cls, sx(xr, x0), sy(yr, y0), sx(xr, x1), sy(yr, y1), stroke, dash);
    return true;
}

static void scatter(FILE *out, const dkb_result *r, const dkb_measure *m, const dkb_result *base,
                    const dkb_measure *bm, bool is_time)
{
    range xr = {0, -INFINITY}, yr = {0, -INFINITY}, body = {0, -INFINITY};
    bool with_base = base && bm && bm->y && base->iterations;
    for (size_t i = 0; i < r->n_samples; i++) {
        widen(&xr, r->iterations[i]);
        widen(&yr, m->y[i]);
        if (!severe(m, i))
            widen(&body, m->y[i]);
    }
    for (size_t i = 0; with_base && i < base->n_samples; i++) {
        widen(&xr, base->iterations[i]);
        widen(&yr, bm->y[i]);
        if (!severe(bm, i))
            widen(&body, bm->y[i]);
    }
    /* A preempted sample can take a hundred times the others and squash
     * them into the bottom row: then the plot spans the samples that are
     * not severe outliers, and those above sit on its top edge. */
    if (body.hi > 0 && yr.hi > 1.5 * body.hi)
        yr.hi = body.hi * 1.05;
    settle(&xr);
    settle(&yr);
    /* Totals in a readable unit: ydiv scales the axis, the label names it. */
    const char *unit = "";
    double ydiv = is_time ? dkb__time_scale(yr.hi, &unit) : 1;
    yr.lo /= ydiv;
    yr.hi /= ydiv;
    char title[512], yl[200], words[300];
    snprintf(title, sizeof title, "%s: %s against iterations", r->name, m->name);
    svg_open(out, title);
    if (is_time)
        snprintf(yl, sizeof yl, "total %s per sample (%s)", m->name, unit);
    else
        snprintf(yl, sizeof yl, "total %s per sample", m->name);
    axes(out, &xr, &yr, 1, 1, false, "iterations per sample", yl);
    dkb_fit line;
    bool base_fit = false, fit = false;
    size_t seen[3] = {0, 0, 0}, base_seen[3] = {0, 0, 0};
    if (with_base) {
        points(out, base, bm, &xr, &yr, ydiv, true, base_seen);
        if (dkb_headline_line(base, bm, &line))
            base_fit =
                fit_line(out, &line, &xr, &yr, ydiv, "bfit", C_BASE, " stroke-dasharray=\"6 4\"");
    }
    points(out, r, m, &xr, &yr, ydiv, false, seen);
    /* The line of the estimate the table and the terminal give (for time
     * the Theil-Sen slope of the unpreempted samples), not always OLS. */
    if (dkb__has_estimates(r, m) && dkb_headline_line(r, m, &line))
        fit = fit_line(out, &line, &xr, &yr, ydiv, "fit", C_FIT, "");
    fputs("</svg>\n<figcaption>", out);
    snprintf(words, sizeof words, "samples (total %s of a run of iterations)", m->name);
    key(out, "dot", C_SAMPLE, words);
    if (seen[0])
        key(out, "dot", C_MILD, "mild outliers (beyond 1.5 IQR)");
    if (seen[1])
        key(out, "square", C_SEVERE, "severe outliers (beyond 3 IQR)");
    if (seen[2])
        key(out, "up", C_SEVERE, "severe outliers above the plot, on its edge");
    if (fit) {
        snprintf(words, sizeof words, "fit%s%s%s: slope = %s per iteration",
                 m->estimator[0] ? " (" : "", m->estimator, m->estimator[0] ? ")" : "", m->name);
        key(out, "line", C_FIT, words);
    }
    if (with_base)
        key(out, "dot", C_BASE_PT, "baseline samples");
    if (base_seen[2])
        key(out, "up", C_BASE_PT, "baseline samples above the plot");
    if (base_fit)
        key(out, "line dash", C_BASE, "baseline fit");
    fputs("</figcaption></figure>\n", out);
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
    fputs(
        "<table><tr><th>measure</th><th>lower</th><th>estimate</th><th>upper</th><th>R\xC2\xB2</th>"
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
            fputs("<td colspan=\"11\" class=\"why\">", out);
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
        fprintf(out, "<td>%zu</td>",
                m->outliers.low_severe + m->outliers.low_mild + m->outliers.high_mild +
                    m->outliers.high_severe);
        if (m->has_change) {
            const char *cls = m->change.verdict == DKB_IMPROVED    ? "improved"
                              : m->change.verdict == DKB_REGRESSED ? "regressed"
                                                                   : "same";
            fprintf(out, "<td class=\"%s\">%+.2f%% [%+.2f%%, %+.2f%%] p = %.3f, ", cls,
                    100 * m->change.rel.point, 100 * m->change.rel.lo, 100 * m->change.rel.hi,
                    m->change.p_value);
            dk__put_html(out, dkb_verdict_name(m->change.verdict));
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
    fprintf(
        out,
        "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\"><head>"
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
            fputs(
                "<p class=\"warn\">The benchmark ran on more than one performance level; its counts "
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
