/*
 * standins.c - small local versions of libdkbench's statistics, reports
 * and baselines (stats.h, report.h), linked into the harness's tests only
 * while src/bench lacks the real ones. Simple and correct, not complete:
 * the tests of the harness need estimates and a readable report, nothing
 * more.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/error.h"
#include "bench/report.h"

int dkb_report_terminal(FILE *f, const dkb_run_info *run, const dkb_result *r, bool color,
                        bool verbose)
{
    (void)run, (void)color;
    fprintf(f, "%s (%zu samples, %zu passes; %s)\n", r->name, r->n_samples, r->passes,
            r->stop_reason);
    for (size_t i = 0; i < r->n_measures; i++) {
        const dkb_measure *m = &r->m[i];
        if (!m->available) {
            fprintf(f, "  %-16s unavailable\n", m->name);
            continue;
        }
        fprintf(f, "  %-16s %.4g [%.4g, %.4g] %s/iter", m->name, m->slope.point, m->slope.lo,
                m->slope.hi, m->unit);
        if (verbose)
            fprintf(f, " R2=%.6f", m->fit.r2);
        if (m->has_change)
            fprintf(f, " change %+.2f%% %s", 100 * m->change.rel.point,
                    dkb_verdict_name(m->change.verdict));
        fputc('\n', f);
    }
    for (size_t l = 0; l < r->n_levels; l++)
        fprintf(f, "  level %s: %.1f%% of cycles\n", r->level_name[l],
                100 * r->level_cycle_share[l]);
    return ferror(f) ? dkb_fail(DK_EOS, "write error") : 0;
}

static int unsupported(const char *what)
{
    return dkb_fail(DK_ENOTSUP, "the %s report is not in this build", what);
}
int dkb_report_json(FILE *o, const dkb_run_info *run, const dkb_result *const *r, size_t n)
{
    (void)o, (void)run, (void)r, (void)n;
    return unsupported("JSON");
}
int dkb_report_csv(FILE *o, const dkb_run_info *run, const dkb_result *const *r, size_t n)
{
    (void)o, (void)run, (void)r, (void)n;
    return unsupported("CSV");
}
int dkb_report_markdown(FILE *o, const dkb_run_info *run, const dkb_result *const *r, size_t n)
{
    (void)o, (void)run, (void)r, (void)n;
    return unsupported("Markdown");
}
int dkb_report_gbench(FILE *o, const dkb_run_info *run, const dkb_result *const *r, size_t n)
{
    (void)o, (void)run, (void)r, (void)n;
    return unsupported("gbench");
}
int dkb_report_html(FILE *o, const dkb_run_info *run, const dkb_result *const *r,
                    const dkb_result *const *b, size_t n)
{
    (void)o, (void)run, (void)r, (void)b, (void)n;
    return unsupported("HTML");
}

/* Baselines as text: "result NAME N M", the iterations, then per measure
 * "measure NAME AVAILABLE" and its samples. */
int dkb_baseline_save(const char *dir, const char *name, const dkb_run_info *run,
                      const dkb_result *const *rs, size_t n)
{
    (void)run;
    char path[1024];
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return dkb_fail(DK_EOS, "cannot create %s: %s", dir, strerror(errno));
    snprintf(path, sizeof path, "%s/%s.txt", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return dkb_fail(DK_EOS, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "%zu\n", n);
    for (size_t i = 0; i < n; i++) {
        const dkb_result *r = rs[i];
        fprintf(f, "%s %zu %zu\n", r->name, r->n_samples, r->n_measures);
        for (size_t k = 0; k < r->n_samples; k++)
            fprintf(f, "%.17g\n", r->iterations[k]);
        for (size_t j = 0; j < r->n_measures; j++) {
            const dkb_measure *m = &r->m[j];
            fprintf(f, "%s %d %.17g\n", m->name, m->available && m->y, m->slope.point);
            for (size_t k = 0; m->available && m->y && k < r->n_samples; k++)
                fprintf(f, "%.17g\n", m->y[k]);
        }
    }
    return fclose(f) == 0 ? 0 : dkb_fail(DK_EOS, "writing %s failed", path);
}

int dkb_baseline_load(const char *dir, const char *name, dkb_result **out, size_t *n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.txt", dir, name);
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return dkb_fail(DK_EINVAL, "cannot read baseline %s: %s", path, strerror(errno));
    size_t count;
    dkb_result *rs = NULL;
    if (fscanf(f, "%zu", &count) != 1 || count > 100000 || !(rs = calloc(count ? count : 1, sizeof *rs)))
        goto bad;
    for (size_t i = 0; i < count; i++) {
        dkb_result *r = &rs[i];
        if (fscanf(f, "%255s %zu %zu", r->name, &r->n_samples, &r->n_measures) != 3 ||
            r->n_measures > DKB_MAX_MEASURES || r->n_samples > 10000000)
            goto bad;
        r->iterations = calloc(r->n_samples + 1, sizeof *r->iterations);
        if (!r->iterations)
            goto bad;
        *n = i + 1;
        for (size_t k = 0; k < r->n_samples; k++)
            if (fscanf(f, "%lf", &r->iterations[k]) != 1)
                goto bad;
        for (size_t j = 0; j < r->n_measures; j++) {
            dkb_measure *m = &r->m[j];
            int avail;
            if (fscanf(f, "%127s %d %lf", m->name, &avail, &m->slope.point) != 3)
                goto bad;
            m->available = avail;
            if (!avail)
                continue;
            m->y = calloc(r->n_samples + 1, sizeof *m->y);
            if (!m->y)
                goto bad;
            for (size_t k = 0; k < r->n_samples; k++)
                if (fscanf(f, "%lf", &m->y[k]) != 1)
                    goto bad;
        }
    }
    fclose(f);
    *out = rs;
    *n = count;
    return 0;
bad:
    fclose(f);
    for (size_t i = 0; i < *n; i++)
        dkb_result_free(&rs[i]);
    free(rs);
    *n = 0;
    return dkb_fail(DK_EINVAL, "baseline %s is malformed", path);
}
