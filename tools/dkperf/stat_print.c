/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat_print.c - dkperf stat's report: derived metrics, and the human,
 * CSV and JSON forms, in the manner of perf stat.
 */
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "common/stats.h"
#include "common/text.h"
#include "common/unavailable.h"
#include "stat.h"

/* The measured quantities of a run. */
typedef enum quantity { Q_COUNT, Q_ELAPSED, Q_USER, Q_SYSTEM } quantity;

static double quantity_of(const run *x, size_t i, quantity q)
{
    switch (q) {
    case Q_COUNT:
        return (double)x->values[i];
    case Q_ELAPSED:
        return (double)x->elapsed_ns;
    case Q_USER:
        return (double)x->user_ns;
    case Q_SYSTEM:
        return (double)x->system_ns;
    }
    return 0;
}

/* Mean and relative standard deviation of the mean, in percent, of
 * quantity q (of event i for Q_COUNT) over the runs. */
static void summarize(const report *rep, size_t i, quantity q, double *mean, double *rel)
{
    dkb_moments acc;
    dkb_moments_init(&acc);
    for (size_t r = 0; r < rep->nruns; r++)
        dkb_moments_add(&acc, quantity_of(&rep->runs[r], i, q));
    *mean = dkb_moments_get(&acc, DKB_MOMENT_MEAN);
    *rel = dkb_moments_get(&acc, DKB_MOMENT_REL_STDDEV_MEAN);
}

static double running_fraction(const report *rep, size_t i)
{
    double sum = 0;
    size_t k = 0;
    for (size_t r = 0; r < rep->nruns; r++) {
        const dk_reading *info = &rep->runs[r].info[i];
        if (info->time_enabled > 0) {
            sum += (double)info->time_running / (double)info->time_enabled;
            k++;
        }
    }
    return k ? sum / (double)k : 1.0;
}

static bool counted(const report *rep, size_t i)
{
    for (size_t r = 0; r < rep->nruns; r++)
        if (rep->runs[r].info[i].counted)
            return true;
    return false;
}

static int find_role(const report *rep, const bool *ok, int role)
{
    for (size_t i = 0; i < rep->n; i++)
        if (rep->role[i] == role && ok[i])
            return (int)i;
    return -1;
}

/* x divided by the count of the counted event playing role, times scale:
 * 1 with *out set, 0 when that count is 0, -1 when no event plays it. */
static int per(const report *rep, const double *v, const bool *ok, int role, double x, double scale,
               double *out)
{
    int j = find_role(rep, ok, role);
    if (j < 0)
        return -1;
    if (v[j] <= 0)
        return 0;
    *out = x / v[j] * scale;
    return 1;
}

bool stat_metric(const report *rep, const double *v, const bool *ok, size_t i, double elapsed,
                 double *value, const char **unit)
{
    int r = -1;
    switch (rep->role[i]) {
    case ROLE_CLOCK:
        if (elapsed <= 0)
            return false;
        *value = v[i] / elapsed;
        *unit = "CPUs utilized";
        return true;
    case ROLE_INSTRUCTIONS:
        r = per(rep, v, ok, ROLE_CYCLES, v[i], 1, value);
        *unit = "insn per cycle";
        break;
    case ROLE_MISSES:
        r = per(rep, v, ok, ROLE_BRANCHES, v[i], 100, value);
        *unit = "% of all branches";
        break;
    case ROLE_CYCLES:
        r = per(rep, v, ok, ROLE_CLOCK, v[i], 1, value);
        *unit = "GHz";
        break;
    default:
        break;
    }
    if (r >= 0)
        return r == 1;
    /* Otherwise a rate per second of CPU time, when task-clock is counted. */
    double rate;
    if (find_role(rep, ok, ROLE_CLOCK) == (int)i ||
        per(rep, v, ok, ROLE_CLOCK, v[i], 1e9, &rate) != 1)
        return false;
    *unit = rate >= 1e9 ? "G/sec" : rate >= 1e6 ? "M/sec" : rate >= 1e3 ? "K/sec" : "/sec";
    *value = rate >= 1e9 ? rate / 1e9 : rate >= 1e6 ? rate / 1e6 : rate >= 1e3 ? rate / 1e3 : rate;
    return true;
}

/* A derived metric of the means for event i: value and unit, or false. */
static bool metric(const report *rep, size_t i, double elapsed, double *value, const char **unit)
{
    double v[DK_MAX_EVENTS], rel;
    bool ok[DK_MAX_EVENTS];
    for (size_t j = 0; j < rep->n; j++) {
        ok[j] = rep->supported[j] && counted(rep, j);
        v[j] = 0;
        if (ok[j])
            summarize(rep, j, Q_COUNT, &v[j], &rel);
    }
    return stat_metric(rep, v, ok, i, elapsed, value, unit);
}

static bool in_ns(const report *rep, size_t i)
{
    return rep->unit[i] != NULL && strcmp(rep->unit[i], "ns") == 0;
}

static void print_command(FILE *out, char **cmd)
{
    for (char **a = cmd; *a != NULL; a++)
        fprintf(out, "%s%s", a == cmd ? "" : " ", *a);
}

/* Print a line without trailing blanks. */
static void put_line(FILE *out, char *line)
{
    size_t len = strlen(line);
    while (len > 0 && line[len - 1] == ' ')
        line[--len] = '\0';
    fputs(line, out);
    fputc('\n', out);
}

void stat_print_title(FILE *out, const report *rep, const stat_options *o)
{
    if (rep->attached) {
        fprintf(out, "\n Performance counter stats for %s id '", o->threads ? "thread" : "process");
        for (size_t k = 0; k < o->npids; k++)
            fprintf(out, "%s%d", k ? "," : "", o->pids[k]);
        fputc('\'', out);
    } else {
        fputs("\n Performance counter stats for '", out);
        print_command(out, o->cmd);
        fputc('\'', out);
    }
}

void stat_print_human(FILE *out, const report *rep, const stat_options *o, dk_sampler *s)
{
    double elapsed, erel;
    summarize(rep, 0, Q_ELAPSED, &elapsed, &erel);
    stat_print_title(out, rep, o);
    if (rep->nruns > 1)
        fprintf(out, " (%zu runs)", rep->nruns);
    fputs(":\n", out);
    fprintf(out, " scope: %s (%s backend)\n", rep->scope, dk_sampler_backend(s));
    if (rep->notes[0] != '\0')
        fprintf(out, " %s\n", rep->notes);
    fputc('\n', out);
    for (size_t i = 0; i < rep->n; i++) {
        char num[48], line[256];
        size_t used;
        if (!rep->supported[i] || !counted(rep, i)) {
            snprintf(line, sizeof line, "%18s      %s",
                     rep->supported[i] ? "<not counted>" : "<not supported>", rep->names[i]);
            put_line(out, line);
            continue;
        }
        double v, rel;
        summarize(rep, i, Q_COUNT, &v, &rel);
        if (in_ns(rep, i))
            snprintf(line, sizeof line, "%18s msec %-33s", fmt_fixed(v / 1e6, 2, num, sizeof num),
                     rep->names[i]);
        else
            snprintf(line, sizeof line, "%18s      %-33s",
                     fmt_count((uint64_t)(v + 0.5), num, sizeof num), rep->names[i]);
        used = strlen(line);
        double mv;
        const char *mu;
        if (metric(rep, i, elapsed, &mv, &mu))
            used += (size_t)snprintf(line + used, sizeof line - used, " # %8.3f %-16s", mv, mu);
        double frac = running_fraction(rep, i);
        if (rep->nruns > 1 && used < sizeof line)
            used += (size_t)snprintf(line + used, sizeof line - used, "  ( +- %5.2f%% )", rel);
        if (frac < 0.9999 && used < sizeof line)
            snprintf(line + used, sizeof line - used, "  (%.2f%%)", frac * 100);
        put_line(out, line);
    }
    stat_rows_human_levels(out, rep);
    fprintf(out, "\n%18.9f seconds time elapsed", elapsed / 1e9);
    if (rep->nruns > 1)
        fprintf(out, "  ( +- %5.2f%% )", erel);
    fputc('\n', out);
    if (rep->nruns == 1 && !rep->attached) { /* another process's times are not dkperf's to read */
        fprintf(out, "\n%18.9f seconds user\n", (double)rep->runs[0].user_ns / 1e9);
        fprintf(out, "%18.9f seconds sys\n", (double)rep->runs[0].system_ns / 1e9);
    }
    fputc('\n', out);
    stat_print_unavailable(out, rep);
}

void stat_print_unavailable(FILE *out, const report *rep)
{
    /* Each reason once, naming its events: the rows above say only
     * <not supported>, however many CPUs or levels they stand for. */
    const char *why[DK_MAX_EVENTS];
    for (size_t i = 0; i < rep->n; i++)
        why[i] = rep->supported[i] ? NULL : rep->why[i];
    dk__put_unavailable(out, rep->n, rep->names, why, " ", "\n", dk__put_untrusted);
}

/* perf stat -x SEP and -j: one line per event (stat_perf.c prints it). */
void stat_print_perf(FILE *out, const report *rep, const stat_options *o)
{
    double elapsed, erel;
    summarize(rep, 0, Q_ELAPSED, &elapsed, &erel);
    for (size_t i = 0; i < rep->n; i++) {
        stat_line l = {.i = i, .interval = -1};
        l.ok = rep->supported[i] && counted(rep, i);
        if (l.ok) {
            summarize(rep, i, Q_COUNT, &l.value, &l.rel);
            if (rep->nruns < 2)
                l.rel = 0; /* one run has no spread */
            l.has_metric = metric(rep, i, elapsed, &l.metric, &l.metric_unit);
        }
        uint64_t run_ns = 0;
        for (size_t r = 0; r < rep->nruns; r++)
            run_ns += rep->runs[r].info[i].time_running;
        l.run_ns = rep->nruns ? run_ns / rep->nruns : 0;
        l.pcnt = l.ok ? running_fraction(rep, i) * 100 : 100;
        stat_perf_line(out, rep, o, &l);
    }
    stat_rows_csv_levels(out, rep, o);
}

void stat_print_json(FILE *out, const report *rep, const stat_options *o, dk_sampler *s)
{
    double elapsed, erel, user, urel, sys, srel;
    summarize(rep, 0, Q_ELAPSED, &elapsed, &erel);
    summarize(rep, 0, Q_USER, &user, &urel);
    summarize(rep, 0, Q_SYSTEM, &sys, &srel);
    fputs("{\"command\": [", out);
    for (char **a = o->cmd; a != NULL && *a != NULL; a++) {
        fputs(a == o->cmd ? "" : ", ", out);
        dk__json_string(out, *a);
    }
    fprintf(out, "], \"exit_status\": %d, \"runs\": %zu, \"backend\": ", rep->exit_status,
            rep->nruns);
    dk__json_string(out, dk_sampler_backend(s));
    fputs(", \"scope\": ", out);
    dk__json_string(out, rep->scope);
    fprintf(out, ", \"all_cpus\": %s, \"elapsed_ns\": %.0f, \"elapsed_relative_stddev\": %.4f",
            o->all_cpus ? "true" : "false", elapsed, erel);
    if (rep->attached) {
        fprintf(out, ", \"%s\": [", o->threads ? "threads" : "processes");
        for (size_t k = 0; k < o->npids; k++)
            fprintf(out, "%s%d", k ? ", " : "", o->pids[k]);
        fputs("], \"notes\": ", out);
        dk__json_string(out, rep->notes);
        fputs(", \"user_ns\": null, \"system_ns\": null, \"events\": [", out);
    } else {
        fprintf(out, ", \"user_ns\": %.0f, \"system_ns\": %.0f, \"events\": [", user, sys);
    }
    for (size_t i = 0; i < rep->n; i++) {
        double v = 0, rel = 0, mv = 0;
        const char *mu = NULL;
        bool ok = rep->supported[i] && counted(rep, i);
        if (ok)
            summarize(rep, i, Q_COUNT, &v, &rel);
        bool has_metric = ok && metric(rep, i, elapsed, &mv, &mu);
        fputs(i ? ", {\"name\": " : "{\"name\": ", out);
        dk__json_string(out, rep->names[i]);
        fputs(", \"event\": ", out);
        dk__json_string(out, rep->native[i]);
        if (ok)
            fprintf(out, rep->nruns > 1 ? ", \"value\": %.2f" : ", \"value\": %.0f", v);
        else
            fputs(", \"value\": null", out);
        fputs(", \"unit\": ", out);
        dk__json_string(out, rep->unit[i]);
        fprintf(out, ", \"supported\": %s, \"counted\": %s, \"running_fraction\": %.4f",
                rep->supported[i] ? "true" : "false", ok ? "true" : "false",
                ok ? running_fraction(rep, i) : 0.0);
        fprintf(out, ", \"relative_stddev\": %.4f", rel);
        if (has_metric) {
            fprintf(out, ", \"metric\": {\"value\": %.6f, \"unit\": ", mv);
            dk__json_string(out, mu);
            fputc('}', out);
        } else {
            fputs(", \"metric\": null", out);
        }
        fputs(", \"reason\": ", out);
        dk__json_string(out, rep->supported[i] ? NULL : rep->why[i]);
        fputc('}', out);
    }
    fputc(']', out);
    stat_rows_json(out, rep, o);
    fputs("}\n", out);
}
