/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_terminal.c - one block per benchmark, in the manner of
 * Criterion.rs: the per-iteration estimates with their intervals, derived
 * ratios, throughput, outliers, why sampling stopped, and the change
 * against a baseline in words. Prints only what the model holds.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "libdkbench/report.h"
#include "libdkbench/report_common.h"

#define GREEN "\x1b[32m"
#define RED "\x1b[31m"
#define YELLOW "\x1b[33m"
#define BOLD "\x1b[1m"
#define RESET "\x1b[0m"

/* Criterion's significance level for the change test. */
#define SIGNIFICANCE 0.05

static const char *const INSTRUCTIONS[] = {"instructions", NULL};
static const char *const CYCLES[] = {"cycles", NULL};
static const char *const BRANCHES[] = {"branches", NULL};
static const char *const BRANCH_MISSES[] = {"branch-misses", NULL};
static const char *const CACHE_REFS[] = {"cache-references", NULL};
static const char *const CACHE_MISSES[] = {"cache-misses", NULL};
static const char *const L1D_MISSES[] = {"l1d-load-misses", NULL};
static const char *const LLC_MISSES[] = {"llc-misses", NULL};

/* Criterion's precision: five significant digits or so. */
static void short_num(FILE *out, double v)
{
    double a = fabs(v);
    int decimals = a < 10 ? 4 : a < 100 ? 3 : a < 1000 ? 2 : a < 10000 ? 1 : 0;
    fprintf(out, "%.*f", decimals, v);
}

static void estimate_line(FILE *out, const char *label, const dkb_measure *m, bool is_time)
{
    char lo[48], pt[48], hi[48];
    if (is_time) {
        /* All three in the unit of the estimate. */
        const char *unit;
        double div = dkb__time_scale(m->slope.point, &unit);
        double v[3] = {m->slope.lo, m->slope.point, m->slope.hi};
        fprintf(out, "  %-18s [", label);
        for (int i = 0; i < 3; i++) {
            fputs(i ? " " : "", out);
            short_num(out, v[i] / div);
            fprintf(out, " %s", unit);
        }
        fputs("]\n", out);
        return;
    }
    fprintf(out, "  %-18s [%s %s %s]\n", label, dkb__fmt_value(lo, sizeof lo, m->slope.lo, is_time),
            dkb__fmt_value(pt, sizeof pt, m->slope.point, is_time),
            dkb__fmt_value(hi, sizeof hi, m->slope.hi, is_time));
}

/* Throughput from the time estimate: the slowest time gives the lowest rate. */
static void throughput_line(FILE *out, const dkb_result *r, const dkb_measure *t)
{
    static const char *const bytes[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"};
    static const char *const elems[] = {"elem/s", "Kelem/s", "Melem/s", "Gelem/s", "Telem/s"};
    const char *const *units = r->throughput_kind == DKB_THROUGHPUT_BYTES ? bytes : elems;
    double base = r->throughput_kind == DKB_THROUGHPUT_BYTES ? 1024 : 1000;
    double ns[3] = {t->slope.hi, t->slope.point, t->slope.lo};
    if (!(ns[0] > 0 && ns[1] > 0 && ns[2] > 0) || !(r->throughput_per_iter > 0))
        return;
    double mid = r->throughput_per_iter / (ns[1] * 1e-9);
    size_t u = 0;
    double div = 1;
    while (u + 1 < 5 && mid / div >= base) {
        div *= base;
        u++;
    }
    fprintf(out, "  %-18s [", "thrpt:");
    for (int i = 0; i < 3; i++)
        fprintf(out, "%s%.4g %s", i ? " " : "", r->throughput_per_iter / (ns[i] * 1e-9) / div,
                units[u]);
    fputs("]\n", out);
}

static void derived_lines(FILE *out, const dkb_result *r)
{
    const dkb_measure *insn = dkb__find_measure(r, INSTRUCTIONS);
    const dkb_measure *cyc = dkb__find_measure(r, CYCLES);
    const dkb_measure *br = dkb__find_measure(r, BRANCHES);
    const dkb_measure *brm = dkb__find_measure(r, BRANCH_MISSES);
    const dkb_measure *cr = dkb__find_measure(r, CACHE_REFS);
    const dkb_measure *cm = dkb__find_measure(r, CACHE_MISSES);
    if (insn && cyc && cyc->slope.point > 0)
        fprintf(out, "  %-18s %.2f\n", "insn per cycle:", insn->slope.point / cyc->slope.point);
    if (br && brm && br->slope.point > 0)
        fprintf(out, "  %-18s %.2f%%\n",
                "branch-miss rate:", 100 * brm->slope.point / br->slope.point);
    if (cr && cm && cr->slope.point > 0)
        fprintf(out, "  %-18s %.2f%%\n",
                "cache-miss rate:", 100 * cm->slope.point / cr->slope.point);
    const char *const *mpki[] = {L1D_MISSES, LLC_MISSES};
    for (size_t i = 0; insn && insn->slope.point > 0 && i < 2; i++) {
        const dkb_measure *m = dkb__find_measure(r, mpki[i]);
        if (m)
            fprintf(out, "  %-18s %.3f per 1k insn\n", mpki[i][0],
                    1000 * m->slope.point / insn->slope.point);
    }
}

static void change_lines(FILE *out, const dkb_measure *m, bool color)
{
    const dkb_change *c = &m->change;
    char label[160], name[128];
    dk__untrusted(name, sizeof name, m->name);
    snprintf(label, sizeof label, "change (%s):", name);
    fprintf(out, "  %-18s [%+.2f%% %+.2f%% %+.2f%%] (p = %.2f %s %.2f)", label, 100 * c->rel.lo,
            100 * c->rel.point, 100 * c->rel.hi, c->p_value,
            c->p_value < SIGNIFICANCE ? "<" : ">=", SIGNIFICANCE);
    if (m->change_by_process)
        fprintf(out, "%s, resolves +-%.2f%%\n", m->change_paired ? ", paired" : "",
                100 * c->resolution);
    else
        fputs(", within one process\n", out);
    const char *words, *paint = NULL;
    switch (c->verdict) {
    case DKB_IMPROVED:
        words = "Performance has improved.";
        paint = GREEN;
        break;
    case DKB_REGRESSED:
        words = "Performance has regressed.";
        paint = RED;
        break;
    case DKB_WITHIN_NOISE:
        words = "Change within noise threshold.";
        break;
    case DKB_UNRESOLVED:
        words = "Cannot be resolved here: the spread between processes is wider than the noise "
                "threshold.";
        paint = YELLOW;
        break;
    default:
        words = "No change in performance detected.";
        break;
    }
    fprintf(out, "  %-18s %s%s%s\n", "", color && paint ? paint : "", words,
            color && paint ? RESET : "");
}

/* Where the estimates come from: several processes (the process is the
 * unit: how much of the spread is between them), or one. */
static void processes_line(FILE *out, const dkb_result *r, const dkb_measure *t)
{
    if (r->n_processes >= 2 && t != NULL && t->procs.n >= 2) {
        fprintf(out,
                "  %-18s %zu, each estimated alone; %.0f%% of the time's spread is between them\n",
                "processes:", r->n_processes, 100 * t->procs.between_share);
        /* What the machine allows: the change two runs like this one
         * could tell apart (doc/BENCH-STATISTICS.md §13). */
        if (isfinite(t->procs.resolution))
            fprintf(out, "  %-18s changes of time beyond +-%.2f%% between two runs like this one\n",
                    "resolves:", 100 * t->procs.resolution);
    } else if (r->n_processes >= 2)
        fprintf(out, "  %-18s %zu\n", "processes:", r->n_processes);
    else if (r->n_processes == 1) {
        fprintf(out, "  %-18s 1 (", "processes:");
        dk__put_untrusted(out, r->one_process[0] ? r->one_process : "one process");
        fputs("): the intervals describe this process only, not the spread between processes\n",
              out);
    }
}

static void outlier_line(FILE *out, const dkb_result *r, const dkb_measure *t, bool verbose)
{
    const dkb_outliers *o = &t->outliers;
    size_t total = o->low_severe + o->low_mild + o->high_mild + o->high_severe;
    if (total > 0) {
        fprintf(out, "  Found %zu outlier%s among %zu measurements (%.2f%%):", total,
                total == 1 ? "" : "s", r->n_samples, 100.0 * (double)total / (double)r->n_samples);
        const char *sep = " ";
        size_t counts[4] = {o->low_severe, o->low_mild, o->high_mild, o->high_severe};
        const char *names[4] = {"low severe", "low mild", "high mild", "high severe"};
        for (int i = 0; i < 4; i++)
            if (counts[i] > 0) {
                fprintf(out, "%s%zu %s", sep, counts[i], names[i]);
                sep = ", ";
            }
        fputc('\n', out);
    }
    if (verbose) {
        char a[48], b[48], c[48], d[48];
        fprintf(out, "  %-18s severe < %s, mild < %s, mild > %s, severe > %s\n",
                "fences (time):", dkb__fmt_value(a, sizeof a, o->fence_low_severe, true),
                dkb__fmt_value(b, sizeof b, o->fence_low_mild, true),
                dkb__fmt_value(c, sizeof c, o->fence_high_mild, true),
                dkb__fmt_value(d, sizeof d, o->fence_high_severe, true));
    }
}

int dkb_report_terminal(FILE *out, const dkb_run_info *run, const dkb_result *r, bool color,
                        bool verbose)
{
    if (out == NULL || r == NULL)
        return dkb_fail(DK_EINVAL, "dkb_report_terminal: %s is NULL",
                        out == NULL ? "out" : "the result");
    (void)run;
    size_t nm = r->n_measures < DKB_MAX_MEASURES ? r->n_measures : DKB_MAX_MEASURES;
    /* Names, reasons and levels may come from a baseline file, which may
     * come from anywhere: escaped (common/text.h). */
    fputs(color ? BOLD : "", out);
    dk__put_untrusted(out, r->name);
    fprintf(out, "%s\n", color ? RESET : "");
    /* Why an event cannot be counted is said once for the run (by
     * dk_bench_main, before the first block): each block names them, and
     * only verbose blocks repeat the reason. */
    char unmeasured[512] = "";
    for (size_t i = 0; i < nm; i++) {
        const dkb_measure *m = &r->m[i];
        char label[160], name[128];
        dk__untrusted(name, sizeof name, m->name);
        snprintf(label, sizeof label, "%s:", name);
        if (!m->available) {
            if (verbose) {
                fprintf(out, "  %-18s not measured: ", label);
                dk__put_untrusted(out, m->why[0] ? m->why : "no reason given");
                fputc('\n', out);
            } else {
                size_t len = strlen(unmeasured);
                snprintf(unmeasured + len, sizeof unmeasured - len, "%s%s", len ? ", " : "", name);
            }
            continue;
        }
        if (!dkb__has_estimates(r, m)) {
            fprintf(out, "  %-18s no estimate: %zu sample%s (2 needed)\n", label, r->n_samples,
                    r->n_samples == 1 ? "" : "s");
            continue;
        }
        estimate_line(out, label, m, i == 0);
        if (i == 0 && r->n_processes >= 2 && m->procs.n >= 2) {
            fprintf(out, "  %-18s the mean of %zu processes' %s slopes (%zu samples",
                    "estimator:", m->procs.n, m->estimator, r->n_samples);
            if (r->n_preempted > 0)
                fprintf(out, ", %zu preempted by a context switch", r->n_preempted);
            fputs(")\n", out);
            if (verbose)
                estimate_line(out, "OLS slope:", &(dkb_measure){.slope = m->ols_slope}, true);
        } else if (i == 0 && strcmp(m->estimator, "Theil-Sen") == 0) {
            /* Which estimator gave the headline, and from which samples. */
            size_t used = m->n_fit ? m->n_fit : r->n_samples - r->n_preempted;
            if (r->n_preempted > 0 && used < r->n_samples)
                fprintf(out,
                        "  %-18s Theil-Sen slope of %zu samples; %zu preempted (context "
                        "switch) left out of it\n",
                        "estimator:", used, r->n_samples - used);
            else if (r->n_preempted > 0)
                fprintf(out,
                        "  %-18s Theil-Sen slope of all %zu samples: %zu preempted (context "
                        "switch), too many to leave out\n",
                        "estimator:", r->n_samples, r->n_preempted);
            else
                fprintf(out, "  %-18s Theil-Sen slope of %zu samples%s\n",
                        "estimator:", r->n_samples, r->switches_counted ? ", none preempted" : "");
            if (verbose)
                estimate_line(out, "OLS slope:", &(dkb_measure){.slope = m->ols_slope}, true);
        }
        if (verbose) {
            char b[48];
            fprintf(out, "  %-18s R\xC2\xB2 = %.4f, intercept %s\n", "", m->fit.r2,
                    dkb__fmt_value(b, sizeof b, m->fit.intercept, i == 0));
        }
    }
    const dkb_measure *t = nm > 0 && dkb__has_estimates(r, &r->m[0]) ? &r->m[0] : NULL;
    processes_line(out, r, t);
    derived_lines(out, r);
    if (t && r->throughput_kind != DKB_THROUGHPUT_NONE)
        throughput_line(out, r, t);
    /* Counts first: where the hardware counts events, an instruction count
     * does not move with where the process landed in memory, as time does,
     * and its verdict is the one to lean on (doc/BENCH-STATISTICS.md §13). */
    for (int counts = 1; counts >= 0; counts--)
        for (size_t i = 0; i < nm; i++)
            if (r->m[i].available && r->m[i].has_change && (r->m[i].unit[0] == '\0') == counts)
                change_lines(out, &r->m[i], color);
    if (unmeasured[0] != '\0')
        fprintf(out, "  %-18s %s (why: said above; -v repeats it here)\n",
                "not measured:", unmeasured);
    if (t)
        outlier_line(out, r, t, verbose);
    if (r->passes > 1)
        fprintf(out, "  measured in %zu passes: the events did not fit the counters at once\n",
                r->passes);
    if (r->stop_reason[0]) {
        fputs("  stopped: ", out);
        dk__put_untrusted(out, r->stop_reason);
        fputc('\n', out);
    }
    if (r->n_levels > 0) {
        fprintf(out, "  cycles by level:");
        for (size_t i = 0; i < r->n_levels && i < DKB_MAX_LEVELS; i++) {
            fputs(i ? ", " : " ", out);
            dk__put_untrusted(out, r->level_name[i]);
            fprintf(out, " %.1f%%", 100 * r->level_cycle_share[i]);
        }
        fputc('\n', out);
    }
    if (r->moved_levels)
        fprintf(out,
                "  %swarning:%s the benchmark ran on more than one performance level; its "
                "counts mix cores of different speeds (pin it, or raise its QoS)\n",
                color ? YELLOW : "", color ? RESET : "");
    if (verbose)
        fprintf(out, "  warm-up %.2f s, measurement %.2f s, %zu samples\n", r->warmup_s,
                r->measure_s, r->n_samples);
    fputc('\n', out);
    return dkb__report_done(out, "terminal");
}
