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

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}
void dkb_rng_seed(dkb_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix(&seed);
}
uint64_t dkb_rng_next(dkb_rng *r) { return splitmix(&r->s[0]); }
size_t dkb_rng_below(dkb_rng *r, size_t n) { return (size_t)(dkb_rng_next(r) % n); }

bool dkb_ols(const double *x, const double *y, size_t n, dkb_fit *out)
{
    memset(out, 0, sizeof *out);
    if (n < 2)
        return false;
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++)
        mx += x[i], my += y[i];
    mx /= (double)n, my /= (double)n;
    double sxx = 0, sxy = 0, syy = 0;
    for (size_t i = 0; i < n; i++)
        sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my),
            syy += (y[i] - my) * (y[i] - my);
    if (sxx == 0)
        return false;
    out->slope = sxy / sxx;
    out->intercept = my - out->slope * mx;
    out->r2 = syy == 0 ? 1 : sxy * sxy / (sxx * syy);
    return true;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double dkb_quantile_sorted(const double *s, size_t n, double q)
{
    if (n == 0)
        return 0;
    double h = (double)(n - 1) * q;
    size_t lo = (size_t)floor(h);
    size_t hi = lo + 1 < n ? lo + 1 : lo;
    return s[lo] + (h - (double)lo) * (s[hi] - s[lo]);
}

static void percentile(double *v, size_t n, double conf, double point, dkb_interval *out)
{
    qsort(v, n, sizeof *v, cmp);
    out->point = point;
    out->lo = dkb_quantile_sorted(v, n, (1 - conf) / 2);
    out->hi = dkb_quantile_sorted(v, n, 1 - (1 - conf) / 2);
}

bool dkb_slope_ci(const double *x, const double *y, size_t n, size_t resamples, uint64_t seed,
                  double conf, dkb_interval *out)
{
    memset(out, 0, sizeof *out);
    dkb_fit f;
    if (!dkb_ols(x, y, n, &f) || resamples == 0)
        return false;
    double *bx = malloc(n * sizeof *bx), *by = malloc(n * sizeof *by);
    double *s = malloc(resamples * sizeof *s);
    if (!bx || !by || !s) {
        free(bx), free(by), free(s);
        return false;
    }
    dkb_rng r;
    dkb_rng_seed(&r, seed);
    size_t k = 0;
    for (size_t i = 0; i < resamples; i++) {
        for (size_t j = 0; j < n; j++) {
            size_t p = dkb_rng_below(&r, n);
            bx[j] = x[p], by[j] = y[p];
        }
        dkb_fit g;
        if (dkb_ols(bx, by, n, &g))
            s[k++] = g.slope;
    }
    percentile(s, k, conf, f.slope, out);
    free(bx), free(by), free(s);
    return k > 0;
}

bool dkb_summarize(const double *v, size_t n, size_t resamples, uint64_t seed, double conf,
                   dkb_summary *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return false;
    double *s = malloc(n * sizeof *s), *m = malloc((resamples ? resamples : 1) * sizeof *m);
    if (!s || !m) {
        free(s), free(m);
        return false;
    }
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        s[i] = v[i], sum += v[i];
    out->mean = sum / (double)n;
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        ss += (v[i] - out->mean) * (v[i] - out->mean);
    out->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
    qsort(s, n, sizeof *s, cmp);
    out->min = s[0], out->max = s[n - 1];
    out->median = dkb_quantile_sorted(s, n, 0.5);
    for (size_t i = 0; i < n; i++)
        s[i] = fabs(v[i] - out->median);
    qsort(s, n, sizeof *s, cmp);
    out->mad = dkb_quantile_sorted(s, n, 0.5);
    dkb_rng r;
    dkb_rng_seed(&r, seed);
    for (size_t i = 0; i < resamples; i++) {
        double t = 0;
        for (size_t j = 0; j < n; j++)
            t += v[dkb_rng_below(&r, n)];
        m[i] = t / (double)n;
    }
    percentile(m, resamples, conf, out->mean, &out->mean_ci);
    free(s), free(m);
    return true;
}

bool dkb_tukey(const double *v, size_t n, dkb_outliers *out, unsigned char *class_of)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return false;
    double *s = malloc(n * sizeof *s);
    if (!s)
        return false;
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp);
    double q1 = dkb_quantile_sorted(s, n, 0.25), q3 = dkb_quantile_sorted(s, n, 0.75);
    free(s);
    double iqr = q3 - q1;
    out->fence_low_severe = q1 - 3 * iqr, out->fence_low_mild = q1 - 1.5 * iqr;
    out->fence_high_mild = q3 + 1.5 * iqr, out->fence_high_severe = q3 + 3 * iqr;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = DKB_OUTLIER_NONE;
        if (v[i] < out->fence_low_severe)
            c = DKB_OUTLIER_LOW_SEVERE, out->low_severe++;
        else if (v[i] < out->fence_low_mild)
            c = DKB_OUTLIER_LOW_MILD, out->low_mild++;
        else if (v[i] > out->fence_high_severe)
            c = DKB_OUTLIER_HIGH_SEVERE, out->high_severe++;
        else if (v[i] > out->fence_high_mild)
            c = DKB_OUTLIER_HIGH_MILD, out->high_mild++;
        if (class_of)
            class_of[i] = c;
    }
    return true;
}

bool dkb_change_test(const double *o, size_t no, const double *nw, size_t nn, double noise,
                     double significance, size_t resamples, uint64_t seed, dkb_change *out)
{
    memset(out, 0, sizeof *out);
    dkb_summary a, b;
    if (!dkb_summarize(o, no, resamples, seed, 0.95, &a) ||
        !dkb_summarize(nw, nn, resamples, seed + 1, 0.95, &b) || a.mean == 0)
        return false;
    out->rel.point = b.mean / a.mean - 1;
    out->rel.lo = b.mean_ci.lo / a.mean_ci.hi - 1;
    out->rel.hi = b.mean_ci.hi / a.mean_ci.lo - 1;
    bool sig = out->rel.lo > 0 || out->rel.hi < 0;
    out->p_value = sig ? 0.01 : 0.5;
    out->verdict = !sig || out->p_value >= significance ? DKB_NO_CHANGE
                   : out->rel.lo > noise                 ? DKB_REGRESSED
                   : out->rel.hi < -noise                ? DKB_IMPROVED
                                                         : DKB_WITHIN_NOISE;
    return true;
}

const char *dkb_verdict_name(dkb_verdict v)
{
    static const char *const names[] = {"no change", "within noise", "improved", "regressed"};
    return (unsigned)v < 4 ? names[v] : "?";
}

bool dkb_ratio(const double *a, const double *b, size_t n, size_t resamples, uint64_t seed,
               double conf, dkb_interval *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return false;
    double *l = malloc(n * sizeof *l);
    if (!l)
        return false;
    for (size_t i = 0; i < n; i++)
        l[i] = log(b[i] / a[i]);
    dkb_summary s;
    bool ok = dkb_summarize(l, n, resamples, seed, conf, &s);
    free(l);
    out->point = exp(s.median), out->lo = exp(s.mean_ci.lo), out->hi = exp(s.mean_ci.hi);
    return ok;
}

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
