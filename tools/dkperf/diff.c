/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * diff.c - dkperf diff OLD NEW: per function and image, the change in its
 * self and children (total) share of each event from one recording to
 * another, laid out as perf diff's table (Baseline, Delta or Delta Abs),
 * with the children columns after. Each recording is read into the
 * report's model (report.h) once; functions are matched by name and image.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/text.h"
#include "options.h"
#include "report.h"

void help_diff(FILE *out)
{
    fputs("usage: dkperf diff [-c delta|delta-abs] [--children] OLD NEW\n"
          "\n"
          "Compare two recordings of dkperf record of the same events: for each function\n"
          "(and image), its share of each event's samples in OLD (Baseline) and the change\n"
          "in NEW, in percentage points, as perf diff shows them; then the same for its\n"
          "children (total) share, its own samples and those of the functions it called.\n"
          "\n"
          "  -c, --compute KIND   delta-abs: rows by the size of the change (the default);\n"
          "                       delta: rows by the change, the largest growth first\n"
          "      --children       order the rows by the change of the children share\n"
          "\n"
          "A Baseline left blank: the function is not in OLD; a Delta left blank: it is\n"
          "not in NEW. Exit status: 0, 1 when a file cannot be read or the recordings\n"
          "are of different events, 2 for a usage error.\n",
          out);
}

/* One function's row: its weights in OLD [0] and NEW [1]. */
typedef struct drow {
    const char *name, *dso;
    uint64_t self[2], children[2];
    bool in[2];
    double base, delta, cbase, cdelta;
} drow;

static int by_name(const void *a, const void *b)
{
    const drow *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : strcmp(x->dso, y->dso);
}

static bool order_abs, order_children;

static int by_change(const void *a, const void *b)
{
    const drow *x = a, *y = b;
    double kx = order_children ? x->cdelta : x->delta, ky = order_children ? y->cdelta : y->delta;
    if (order_abs)
        kx = fabs(kx), ky = fabs(ky);
    if (kx != ky)
        return kx > ky ? -1 : 1;
    double bx = order_children ? x->cbase : x->base, by = order_children ? y->cbase : y->base;
    if (bx != by)
        return bx > by ? -1 : 1;
    return by_name(a, b);
}

/* Reads path into *rec and *p; EXIT_SETUP after an error line. */
static int load(const char *path, dkrec **rec, rprofile *p)
{
    char err[512];
    rraws raws;
    *rec = NULL;
    int rc = rprofile_read(path, NULL, rec, &raws, err, sizeof err);
    if (rc == -1)
        cli_error("diff", "%s", err);
    if (rc != 0)
        return EXIT_SETUP;
    if (!(*rec)->complete)
        cli_error("diff", "warning: %s is incomplete: %s; comparing the %zu samples before it",
                  path, (*rec)->tail_note, (*rec)->n_samples);
    rc = rprofile_build_raws(p, *rec, &raws, path, NULL);
    rraws_free(&raws);
    if (rc != 0) {
        dkrec_free(*rec);
        *rec = NULL;
        return EXIT_SETUP;
    }
    return 0;
}

/* The index of the event called name in r, or -1. */
static int event_named(const dkrec *r, const char *name)
{
    for (size_t e = 0; e < r->n_events; e++)
        if (strcmp(r->events[e].name, name) == 0)
            return (int)e;
    return -1;
}

/* Every event of a is one of b's: else an error line naming it. */
static bool same_events(const dkrec *a, const char *apath, const dkrec *b, const char *bpath)
{
    for (size_t e = 0; e < a->n_events; e++)
        if (event_named(b, a->events[e].name) < 0) {
            cli_error("diff",
                      "%s records %s and %s does not: compare recordings of the same events", apath,
                      a->events[e].name, bpath);
            return false;
        }
    return true;
}

static void put_share(FILE *out, bool shown, double v, int width, bool sign)
{
    if (!shown)
        fprintf(out, "%*s", width + 1, "");
    else
        fprintf(out, sign ? "%+*.2f%%" : "%*.2f%%", width, v);
}

/* The table of one event, e in NEW and oe in OLD; -1 when out of memory. */
static int diff_event(FILE *out, const rprofile *pp[2], const uint32_t ev[2])
{
    uint64_t total[2] = {0, 0};
    size_t cap = pp[0]->n_frames + pp[1]->n_frames;
    drow *rows = calloc(cap ? cap : 1, sizeof *rows);
    uint64_t *self = NULL, *children = NULL;
    int rc = -1;
    if (rows == NULL)
        goto out;
    size_t n = 0;
    for (int w = 0; w < 2; w++) {
        const rprofile *p = pp[w];
        for (size_t i = 0; i < p->n_entries; i++)
            if (p->entries[i].event == ev[w])
                total[w] += p->entries[i].weight;
        size_t nf = p->n_frames ? p->n_frames : 1;
        free(self);
        free(children);
        self = calloc(nf, sizeof *self);
        children = calloc(nf, sizeof *children);
        if (self == NULL || children == NULL)
            goto out;
        if (total[w] > 0 && report_frame_totals(p, ev[w], self, children) != 0)
            goto out;
        for (size_t f = 0; f < p->n_frames; f++) {
            if (children[f] == 0)
                continue;
            drow *r = &rows[n++];
            r->name = p->frames[f].name;
            r->dso = p->frames[f].dso;
            r->self[w] = self[f];
            r->children[w] = children[f];
            r->in[w] = true;
        }
    }
    /* One row per name and image, from either recording or both. */
    qsort(rows, n, sizeof *rows, by_name);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && by_name(&rows[m - 1], &rows[i]) == 0) {
            drow *r = &rows[m - 1];
            for (int w = 0; w < 2; w++)
                if (rows[i].in[w]) {
                    r->self[w] += rows[i].self[w];
                    r->children[w] += rows[i].children[w];
                    r->in[w] = true;
                }
            continue;
        }
        rows[m++] = rows[i];
    }
    for (size_t i = 0; i < m; i++) {
        drow *r = &rows[i];
        double s[2], c[2];
        for (int w = 0; w < 2; w++) {
            double t = total[w] ? (double)total[w] : 1.0;
            s[w] = 100.0 * (double)r->self[w] / t;
            c[w] = 100.0 * (double)r->children[w] / t;
        }
        r->base = s[0], r->delta = s[1] - s[0];
        r->cbase = c[0], r->cdelta = c[1] - c[0];
    }
    qsort(rows, m, sizeof *rows, by_change);
    const char *d = order_abs ? "Delta Abs" : "    Delta";
    size_t width = REPORT_DSO_COLUMN;
    for (size_t i = 0; i < m; i++)
        width = report_dso_width(width, rows[i].dso);
    fprintf(out, "# Baseline  %s  Base Children  %s Children  Shared Object%*sSymbol\n", d, d,
            (int)(width + 2 - strlen("Shared Object")), "");
    fputs("# ........  .........  .............  ..................  ", out);
    for (size_t k = 0; k < width; k++)
        fputc('.', out);
    fputs("  ......\n#\n", out);
    for (size_t i = 0; i < m; i++) {
        const drow *r = &rows[i];
        /* A function without own samples in one recording has no self
         * share there, as perf diff leaves it blank. */
        fputs(" ", out);
        put_share(out, r->in[0] && r->self[0] > 0, r->base, 8, false);
        fputs("  ", out);
        put_share(out, r->in[1] && r->self[1] > 0, r->delta, 8, true);
        fputs("  ", out);
        put_share(out, r->in[0], r->cbase, 12, false);
        fputs("  ", out);
        put_share(out, r->in[1], r->cdelta, 17, true);
        fputs("  ", out);
        report_put_column(out, r->dso, width);
        fputs("  ", out);
        if (strcmp(r->dso, RFRAME_KERNEL_DSO) == 0)
            fputs("[k] ", out); /* as perf diff marks kernel symbols */
        dk__put_untrusted(out, r->name);
        fputc('\n', out);
    }
    rc = 0;
out:
    free(rows);
    free(self);
    free(children);
    return rc;
}

int cmd_diff(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    size_t npaths = 0;
    order_abs = true;
    order_children = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (opt_takes("diff", argc, argv, &i, "-c", "--compute", &v)) {
            if (v == NULL)
                return EXIT_USAGE;
            if (strcmp(v, "delta") == 0)
                order_abs = false;
            else if (strcmp(v, "delta-abs") == 0)
                order_abs = true;
            else {
                cli_error("diff", "--compute %s: compute delta or delta-abs", v);
                return EXIT_USAGE;
            }
        } else if (opt_is(a, NULL, "--children")) {
            order_children = true;
        } else if (opt_is(a, "-h", "--help")) {
            help_diff(stdout);
            return 0;
        } else if (a[0] == '-' && a[1] != '\0') {
            cli_error("diff", "unknown option %s (see dkperf help diff)", a);
            return EXIT_USAGE;
        } else if (npaths == 2) {
            cli_error("diff", "one recording too many: %s (give OLD and NEW)", a);
            return EXIT_USAGE;
        } else {
            paths[npaths++] = a;
        }
    }
    if (npaths != 2) {
        cli_error("diff", "give two recordings, OLD and NEW (see dkperf help diff)");
        return EXIT_USAGE;
    }
    dkrec *rec[2] = {NULL, NULL};
    rprofile p[2];
    int rc = load(paths[0], &rec[0], &p[0]);
    if (rc != 0)
        return rc;
    if ((rc = load(paths[1], &rec[1], &p[1])) != 0) {
        rprofile_free(&p[0]);
        dkrec_free(rec[0]);
        return rc;
    }
    if (!same_events(rec[0], paths[0], rec[1], paths[1]) ||
        !same_events(rec[1], paths[1], rec[0], paths[0])) {
        rc = EXIT_SETUP;
        goto out;
    }
    for (int w = 0; w < 2; w++)
        if (p[w].missing_reader != NULL) {
            cli_error("diff", "note: %s", p[w].missing_reader);
            break;
        }
    char b[32];
    fputs("# Data files:\n", stdout);
    for (int w = 0; w < 2; w++) {
        fprintf(stdout, "#  [%d] ", w);
        dk__put_untrusted(stdout, paths[w]);
        fprintf(stdout, "%s: %s samples", w == 0 ? " (Baseline)" : "",
                fmt_count(p[w].n_samples, b, sizeof b));
        const char *cmd = dkrec_meta(rec[w], "command");
        if (cmd != NULL) {
            fputs(" of '", stdout);
            dk__put_untrusted(stdout, cmd);
            fputc('\'', stdout);
        }
        fputc('\n', stdout);
    }
    const rprofile *pp[2] = {&p[0], &p[1]};
    for (size_t e = 0; e < rec[1]->n_events; e++) {
        uint32_t ev[2] = {(uint32_t)event_named(rec[0], rec[1]->events[e].name), (uint32_t)e};
        fputs("#\n# Event '", stdout);
        dk__put_untrusted(stdout, rec[1]->events[e].name);
        fputs("'\n#\n", stdout);
        if (diff_event(stdout, pp, ev) != 0) {
            cli_error("diff", "out of memory while comparing the recordings");
            rc = EXIT_SETUP;
            break;
        }
    }
out:
    for (int w = 0; w < 2; w++) {
        rprofile_free(&p[w]);
        dkrec_free(rec[w]);
    }
    return rc;
}
