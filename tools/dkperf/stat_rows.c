/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat_rows.c - dkperf stat's breakdowns: with -a the counts of each CPU
 * (-A), physical core (--per-core) or performance level (--per-level),
 * from dk_group_read_cpus_info (each CPU's counts and run time, as perf
 * stat -A prints them), and -C's restriction to a CPU list; without -a
 * the command's own split by performance level where the OS gives one
 * (macOS: P and E cores), from dk_group_read_perf_levels.
 *
 * With -C the counters are opened on every CPU and the report sums the
 * listed ones. With any breakdown the totals reported are the sums of the
 * rows, read at the same moment, so that the rows add up to them.
 */
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "stat.h"

#define LEVELS_MAX 4

typedef struct row {
    char label[40];
    size_t cpus;
    int id, core, package, level;
    double v[DK_MAX_EVENTS]; /* means over the runs */
    /* The counters' enabled and running ns, means over the runs, summed
     * over the row's CPUs as perf aggregates them. */
    double ena[DK_MAX_EVENTS], run[DK_MAX_EVENTS];
} row;

typedef struct stat_rows {
    bool system;        /* rows per CPU; otherwise a process's levels */
    size_t group_ncpus; /* CPUs the group reads */
    uint64_t *buf;      /* one reading: group_ncpus * n */
    dk_reading *ibuf;   /* its times, as many */
    size_t ncpus;       /* CPUs reported (-C's, else every one) */
    size_t *index;      /* each one's position among the group's CPUs */
    int *id, *core, *package, *level;
    double *sum;       /* [k * n + i]: counts summed over the runs */
    double *ena, *run; /* and their times */
    size_t levels;
    char level_names[LEVELS_MAX][16];
    double level_sum[LEVELS_MAX][DK_MAX_EVENTS];
    size_t runs;
    /* -I: each reported CPU's counts at the last interval, the interval's
     * differences, and room for its rows (allocated with -I only). */
    uint64_t *prev;
    double *delta;
    dk_reading *iprev; /* and the times */
    double *dena, *drun;
    row *rows;
    /* -p: each attached process's last split by level, kept for one that
     * ends and cannot be read any more. */
    uint64_t (*glevels)[LEVELS_MAX * DK_MAX_EVENTS];
    size_t ngroups;
} stat_rows;

void stat_rows_free(report *rep)
{
    stat_rows *r = rep->rows;
    if (r == NULL)
        return;
    free(r->buf);
    free(r->ibuf);
    free(r->ena);
    free(r->run);
    free(r->iprev);
    free(r->dena);
    free(r->drun);
    free(r->index);
    free(r->id);
    free(r->core);
    free(r->package);
    free(r->level);
    free(r->sum);
    free(r->prev);
    free(r->delta);
    free(r->rows);
    free(r->glevels);
    free(r);
    rep->rows = NULL;
}

static int out_of_memory(void)
{
    cli_error("stat", "out of memory while setting up the per-CPU counts");
    return EXIT_SETUP;
}

/* The group's CPU ids as a list ("0-7"), for messages. */
static void id_list(dk_group *g, size_t ncpus, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t c = 0; c < ncpus && used < size; c++) {
        dk_cpu_info ci = {.size = sizeof ci};
        if (dk_group_cpu_info(g, c, &ci) != 0)
            break;
        size_t last = c;
        dk_cpu_info next = {.size = sizeof next};
        while (last + 1 < ncpus && dk_group_cpu_info(g, last + 1, &next) == 0 &&
               next.id == ci.id + (int)(last + 1 - c))
            last++;
        int w = last > c ? snprintf(buf + used, size - used, "%s%d-%d", c ? "," : "", ci.id,
                                    ci.id + (int)(last - c))
                         : snprintf(buf + used, size - used, "%s%d", c ? "," : "", ci.id);
        used += w > 0 ? (size_t)w : 0;
        c = last;
    }
}

static int open_process(dk_group *g, const stat_options *o, report *rep)
{
    size_t levels = dk_group_perf_levels(g);
    if (o->aggr == STAT_AGGR_LEVEL && levels == 0) {
        cli_error("stat",
                  "--per-level without -a needs %s counts split by performance level, "
                  "which this backend does not give (macOS 12 and later give "
                  "instructions and cycles per level on Macs with P and E cores); add "
                  "-a to split every CPU's counts",
                  o->npids > 0 ? "the processes'" : "CMD's");
        return EXIT_USAGE;
    }
    /* Shown by default only where there is something to split. */
    if (levels < 2 && o->aggr != STAT_AGGR_LEVEL)
        return 0;
    if (rep->rows != NULL)
        return 0;
    stat_rows *r = calloc(1, sizeof *r);
    if (r == NULL)
        return out_of_memory();
    r->levels = levels < LEVELS_MAX ? levels : LEVELS_MAX;
    for (size_t l = 0; l < r->levels; l++)
        snprintf(r->level_names[l], sizeof r->level_names[l], "%s", dk_group_perf_level_name(g, l));
    rep->rows = r;
    return 0;
}

int stat_rows_open_attached(dk_group *const *g, size_t ng, const stat_options *o, report *rep)
{
    int rc = open_process(g[0], o, rep);
    stat_rows *r = rep->rows;
    if (rc != 0 || r == NULL)
        return rc;
    r->glevels = calloc(ng, sizeof *r->glevels);
    if (r->glevels == NULL)
        return out_of_memory();
    r->ngroups = ng;
    return 0;
}

void stat_rows_note_levels(report *rep, size_t k, dk_group *g)
{
    stat_rows *r = rep->rows;
    if (r == NULL || r->system || r->glevels == NULL || k >= r->ngroups)
        return;
    uint64_t lv[LEVELS_MAX * DK_MAX_EVENTS];
    if (dk_group_read_perf_levels(g, lv, r->levels) == 0) /* else the last one stands */
        memcpy(r->glevels[k], lv, r->levels * rep->n * sizeof *lv);
}

void stat_rows_capture_attached(report *rep)
{
    stat_rows *r = rep->rows;
    if (r == NULL || r->system || r->glevels == NULL)
        return;
    for (size_t k = 0; k < r->ngroups; k++)
        for (size_t l = 0; l < r->levels; l++)
            for (size_t i = 0; i < rep->n; i++)
                r->level_sum[l][i] += (double)r->glevels[k][l * rep->n + i];
    r->runs++;
}

int stat_rows_open(dk_group *g, const stat_options *o, report *rep)
{
    if (!o->all_cpus)
        return open_process(g, o, rep);
    size_t gn = dk_group_cpu_count(g);
    if (o->aggr == STAT_AGGR_TOTAL && o->cpus == NULL)
        return 0;
    if (gn == 0) {
        cli_error("stat", "%s: this backend cannot count CPUs apart (perf_event and kperf can)",
                  o->cpus != NULL             ? "-C"
                  : o->aggr == STAT_AGGR_CPU  ? "-A"
                  : o->aggr == STAT_AGGR_CORE ? "--per-core"
                                              : "--per-level");
        return EXIT_SETUP;
    }
    /* Every CPU of -C must be one the group counts. */
    for (size_t j = 0; j < o->ncpus; j++) {
        bool found = false;
        for (size_t c = 0; c < gn && !found; c++) {
            dk_cpu_info ci = {.size = sizeof ci};
            found = dk_group_cpu_info(g, c, &ci) == 0 && ci.id == o->cpus[j];
        }
        if (!found) {
            char ids[256];
            id_list(g, gn, ids, sizeof ids);
            cli_error("stat",
                      "-C %s: CPU %d does not exist or is offline; this machine counts "
                      "CPUs %s",
                      o->cpu_text, o->cpus[j], ids);
            return EXIT_USAGE;
        }
    }
    stat_rows *r = rep->rows;
    if (r != NULL) {
        if (r->group_ncpus != gn) {
            cli_error("stat", "the online CPUs changed between runs (%zu, then %zu)",
                      r->group_ncpus, gn);
            return EXIT_SETUP;
        }
        return 0;
    }
    size_t k = o->cpus != NULL ? o->ncpus : gn;
    size_t n = rep->n;
    r = calloc(1, sizeof *r);
    if (r == NULL)
        return out_of_memory();
    rep->rows = r;
    r->system = true;
    r->group_ncpus = gn;
    r->ncpus = k;
    r->buf = calloc(gn * n, sizeof *r->buf);
    r->ibuf = calloc(gn * n, sizeof *r->ibuf);
    r->sum = calloc(k * n, sizeof *r->sum);
    r->ena = calloc(k * n, sizeof *r->ena);
    r->run = calloc(k * n, sizeof *r->run);
    r->index = calloc(k, sizeof *r->index);
    r->id = calloc(k, sizeof *r->id);
    r->core = calloc(k, sizeof *r->core);
    r->package = calloc(k, sizeof *r->package);
    r->level = calloc(k, sizeof *r->level);
    if (r->buf == NULL || r->ibuf == NULL || r->sum == NULL || r->ena == NULL || r->run == NULL ||
        r->index == NULL || r->id == NULL || r->core == NULL || r->package == NULL ||
        r->level == NULL)
        return out_of_memory(); /* stat.c frees what was allocated */
    if (o->interval_ms > 0 && o->aggr != STAT_AGGR_TOTAL) {
        r->prev = calloc(k * n, sizeof *r->prev);
        r->delta = calloc(k * n, sizeof *r->delta);
        r->iprev = calloc(k * n, sizeof *r->iprev);
        r->dena = calloc(k * n, sizeof *r->dena);
        r->drun = calloc(k * n, sizeof *r->drun);
        r->rows = calloc(k, sizeof *r->rows);
        if (r->prev == NULL || r->delta == NULL || r->iprev == NULL || r->dena == NULL ||
            r->drun == NULL || r->rows == NULL)
            return out_of_memory();
    }
    r->levels = dk_group_perf_levels(g);
    if (r->levels > LEVELS_MAX)
        r->levels = LEVELS_MAX;
    for (size_t l = 0; l < r->levels; l++)
        snprintf(r->level_names[l], sizeof r->level_names[l], "%s", dk_group_perf_level_name(g, l));
    size_t w = 0;
    for (size_t c = 0; c < gn && w < k; c++) {
        dk_cpu_info ci = {.size = sizeof ci};
        if (dk_group_cpu_info(g, c, &ci) != 0)
            continue;
        bool listed = o->cpus == NULL;
        for (size_t j = 0; j < o->ncpus && !listed; j++)
            listed = o->cpus[j] == ci.id;
        if (!listed)
            continue;
        r->index[w] = c;
        r->id[w] = ci.id;
        r->core[w] = ci.core;
        r->package[w] = ci.package;
        r->level[w] = ci.level >= 0 && (size_t)ci.level < r->levels ? ci.level : 0;
        w++;
    }
    r->ncpus = w;
    if (o->cpus != NULL)
        snprintf(rep->scope, sizeof rep->scope, "CPUs %.64s of %zu", o->cpu_text, gn);
    return 0;
}

/* One per-CPU reading into r->buf and r->ibuf: 0, or the exit status
 * after one line. */
static int read_rows(dk_group *g, stat_rows *r)
{
    if (dk_group_read_cpus_info(g, r->buf, r->ibuf, r->group_ncpus) == 0)
        return 0;
    cli_error("stat", "reading the per-CPU counts failed: %s", dk_last_error());
    return EXIT_SETUP;
}

int stat_rows_capture(dk_group *g, const stat_options *o, report *rep, run *out)
{
    (void)o;
    stat_rows *r = rep->rows;
    if (r == NULL)
        return 0;
    size_t n = rep->n;
    if (!r->system) {
        uint64_t lv[LEVELS_MAX * DK_MAX_EVENTS];
        if (dk_group_read_perf_levels(g, lv, r->levels) != 0) {
            cli_error("stat", "reading the counts by performance level failed: %s",
                      dk_last_error());
            return EXIT_SETUP;
        }
        for (size_t l = 0; l < r->levels; l++)
            for (size_t i = 0; i < n; i++)
                r->level_sum[l][i] += (double)lv[l * n + i];
        r->runs++;
        return 0;
    }
    if (read_rows(g, r) != 0)
        return EXIT_SETUP;
    uint64_t total[DK_MAX_EVENTS] = {0};
    for (size_t k = 0; k < r->ncpus; k++)
        for (size_t i = 0; i < n; i++) {
            uint64_t v = r->buf[r->index[k] * n + i];
            r->sum[k * n + i] += (double)v;
            r->ena[k * n + i] += (double)r->ibuf[r->index[k] * n + i].time_enabled;
            r->run[k * n + i] += (double)r->ibuf[r->index[k] * n + i].time_running;
            r->level_sum[r->level[k]][i] += (double)v;
            total[i] += v;
        }
    for (size_t i = 0; i < n; i++)
        if (rep->supported[i])
            out->values[i] = total[i];
    r->runs++;
    return 0;
}

int stat_rows_restrict(dk_group *g, const stat_options *o, report *rep, uint64_t *values)
{
    stat_rows *r = rep->rows;
    if (r == NULL || !r->system || o->cpus == NULL)
        return 0;
    size_t n = rep->n;
    if (read_rows(g, r) != 0)
        return EXIT_SETUP;
    for (size_t i = 0; i < n; i++)
        if (rep->supported[i])
            values[i] = 0;
    for (size_t k = 0; k < r->ncpus; k++)
        for (size_t i = 0; i < n; i++)
            if (rep->supported[i])
                values[i] += r->buf[r->index[k] * n + i];
    return 0;
}

/* ---- grouping ----------------------------------------------------------- */


/* The rows of the breakdown asked for; returns how many (rows has r->ncpus
 * entries). */
static size_t make_rows(const stat_rows *r, size_t n, int aggr, row *rows)
{
    size_t m = 0;
    double runs = r->runs > 0 ? (double)r->runs : 1;
    for (size_t k = 0; k < r->ncpus; k++) {
        size_t at = m;
        if (aggr == STAT_AGGR_CORE && r->core[k] >= 0) {
            for (size_t j = 0; j < m && at == m; j++)
                if (rows[j].core == r->core[k] && rows[j].package == r->package[k])
                    at = j;
        } else if (aggr == STAT_AGGR_LEVEL) {
            for (size_t j = 0; j < m && at == m; j++)
                if (rows[j].level == r->level[k])
                    at = j;
        }
        row *w = &rows[at];
        if (at == m) {
            memset(w, 0, sizeof *w);
            w->id = r->id[k];
            w->core = r->core[k];
            w->package = r->package[k];
            w->level = r->level[k];
            if (aggr == STAT_AGGR_CPU)
                snprintf(w->label, sizeof w->label, "CPU%d", r->id[k]);
            else if (aggr == STAT_AGGR_CORE && r->core[k] >= 0)
                snprintf(w->label, sizeof w->label, "S%d-C%d",
                         r->package[k] < 0 ? 0 : r->package[k], r->core[k]);
            else if (aggr == STAT_AGGR_CORE)
                snprintf(w->label, sizeof w->label, "CPU%d", r->id[k]);
            else
                snprintf(w->label, sizeof w->label, "%s", r->level_names[r->level[k]]);
            m++;
        }
        w->cpus++;
        for (size_t i = 0; i < n; i++) {
            w->v[i] += r->sum[k * n + i] / runs;
            w->ena[i] += r->ena[k * n + i] / runs;
            w->run[i] += r->run[k * n + i] / runs;
        }
    }
    /* Levels in their order (P first), whatever CPU numbers they hold. */
    if (aggr == STAT_AGGR_LEVEL)
        for (size_t a = 1; a < m; a++)
            for (size_t b = a; b > 0 && rows[b - 1].level > rows[b].level; b--) {
                row t = rows[b];
                rows[b] = rows[b - 1];
                rows[b - 1] = t;
            }
    return m;
}

static bool in_ns(const report *rep, size_t i)
{
    return rep->unit[i] != NULL && strcmp(rep->unit[i], "ns") == 0;
}

/* The percentage of its enabled time a row's counters of event i ran
 * (100 where the backend keeps no times). */
static double row_pcnt(const row *w, size_t i)
{
    return w->ena[i] > 0 ? 100.0 * w->run[i] / w->ena[i] : 100.0;
}

static bool counted(const report *rep, size_t i)
{
    for (size_t r = 0; r < rep->nruns; r++)
        if (rep->runs[r].info[i].counted)
            return true;
    return false;
}

static double mean_elapsed(const report *rep)
{
    double sum = 0;
    for (size_t r = 0; r < rep->nruns; r++)
        sum += (double)rep->runs[r].elapsed_ns;
    return rep->nruns ? sum / (double)rep->nruns : 0;
}

static const char *aggr_name(int aggr)
{
    return aggr == STAT_AGGR_CPU ? "cpu" : aggr == STAT_AGGR_CORE ? "core" : "level";
}

/* "  123,456      cycles" or "12.34 msec task-clock" after the label,
 * and as perf the percentage of the time the row's counters ran when the
 * kernel time-shared them. */
static void put_count(FILE *out, const report *rep, size_t i, const row *w)
{
    char num[48];
    if (!rep->supported[i] || !counted(rep, i)) {
        fprintf(out, "%18s      %s\n", rep->supported[i] ? "<not counted>" : "<not supported>",
                rep->names[i]);
        return;
    }
    if (in_ns(rep, i))
        fprintf(out, "%18s msec %s", fmt_fixed(w->v[i] / 1e6, 2, num, sizeof num), rep->names[i]);
    else
        fprintf(out, "%18s      %s", fmt_count((uint64_t)(w->v[i] + 0.5), num, sizeof num),
                rep->names[i]);
    if (row_pcnt(w, i) < 99.99)
        fprintf(out, "  (%.2f%%)", row_pcnt(w, i));
    fputc('\n', out);
}

static void print_human(FILE *out, const report *rep, const stat_options *o, dk_sampler *s,
                        const row *rows, size_t m)
{
    stat_print_title(out, rep, o);
    if (rep->nruns > 1)
        fprintf(out, " (%zu runs, means)", rep->nruns);
    fputs(":\n", out);
    fprintf(out, " scope: %s (%s backend), per %s\n", rep->scope, dk_sampler_backend(s),
            aggr_name(o->aggr));
    if (rep->notes[0] != '\0')
        fprintf(out, " %s\n", rep->notes);
    fputc('\n', out);
    for (size_t i = 0; i < rep->n; i++)
        for (size_t j = 0; j < m; j++) {
            if (o->aggr == STAT_AGGR_CPU)
                fprintf(out, "%-10s", rows[j].label);
            else
                fprintf(out, "%-10s %4zu", rows[j].label, rows[j].cpus);
            put_count(out, rep, i, &rows[j]);
        }
    fprintf(out, "\n%18.9f seconds time elapsed\n", mean_elapsed(rep) / 1e9);
    if (rep->nruns == 1 && !rep->attached) {
        fprintf(out, "\n%18.9f seconds user\n", (double)rep->runs[0].user_ns / 1e9);
        fprintf(out, "%18.9f seconds sys\n", (double)rep->runs[0].system_ns / 1e9);
    }
    fputc('\n', out);
    stat_print_unavailable(out, rep);
}

/* The rows of one event (-A: perf prints each event's CPUs together) or
 * one row's events (--per-core, --per-level), in perf's -x or -j form,
 * each with its own run time; ok[]: counted. */
static void perf_rows(FILE *out, const report *rep, const stat_options *o, const row *rows,
                      size_t m, double interval, double elapsed, const bool *ok)
{
    size_t n = rep->n;
    bool by_event = o->aggr == STAT_AGGR_CPU;
    for (size_t a = 0; a < (by_event ? n : m); a++)
        for (size_t b = 0; b < (by_event ? m : n); b++) {
            size_t i = by_event ? a : b;
            const row *w = &rows[by_event ? b : a];
            /* perf names a core by socket, die and core: "S0-D0-C1"
             * (dk_cpu_info has no die: D0, as for one-die packages). */
            char core[48];
            if (o->aggr == STAT_AGGR_CORE && w->core >= 0)
                snprintf(core, sizeof core, "S%d-D0-C%d", w->package < 0 ? 0 : w->package, w->core);
            stat_line l = {.i = i, .interval = interval, .cpu = w->id};
            l.label = o->aggr == STAT_AGGR_CORE && w->core >= 0 ? core : w->label;
            l.cpus = w->cpus;
            l.ok = ok[i];
            l.value = w->v[i];
            l.run_ns = ok[i] ? (uint64_t)(w->run[i] + 0.5) : 0;
            l.pcnt = row_pcnt(w, i);
            l.has_metric = ok[i] &&
                           stat_metric(rep, w->v, ok, i, elapsed, &l.metric, &l.metric_unit);
            stat_perf_line(out, rep, o, &l);
        }
}

static void print_perf(FILE *out, const report *rep, const stat_options *o, const row *rows,
                       size_t m)
{
    bool ok[DK_MAX_EVENTS];
    for (size_t i = 0; i < rep->n; i++)
        ok[i] = rep->supported[i] && counted(rep, i);
    perf_rows(out, rep, o, rows, m, -1, mean_elapsed(rep), ok);
}

bool stat_rows_print(FILE *out, const report *rep, const stat_options *o, dk_sampler *s)
{
    const stat_rows *r = rep->rows;
    if (r == NULL || !r->system || o->aggr == STAT_AGGR_TOTAL || o->json)
        return false; /* --json has the rows in its one object */
    row *rows = calloc(r->ncpus > 0 ? r->ncpus : 1, sizeof *rows);
    if (rows == NULL) {
        cli_error("stat", "out of memory while printing the per-CPU counts");
        return false; /* the totals at least */
    }
    size_t m = make_rows(r, rep->n, o->aggr, rows);
    if (o->sep != NULL || o->jsonl)
        print_perf(out, rep, o, rows, m);
    else
        print_human(out, rep, o, s, rows, m);
    free(rows);
    return true;
}

/* Whether event i has counts split by level (events a process's split
 * leaves out read 0 at every level). */
/* Whether event i of a process has a split to show: the system splits a
 * process's instructions and cycles (shown even when the process ran
 * nothing, so the output does not depend on whether it did); another
 * event reads 0 on every level, unless the backend split it after all. */
static bool split(const stat_rows *r, const report *rep, size_t i)
{
    if (!rep->supported[i])
        return false;
    if (rep->role[i] == ROLE_INSTRUCTIONS || rep->role[i] == ROLE_CYCLES)
        return true;
    for (size_t l = 0; l < r->levels; l++)
        if (r->level_sum[l][i] > 0)
            return true;
    return false;
}

void stat_rows_human_levels(FILE *out, const report *rep)
{
    const stat_rows *r = rep->rows;
    if (r == NULL || r->system || r->runs == 0)
        return;
    bool any = false;
    for (size_t i = 0; i < rep->n; i++)
        any = any || split(r, rep, i);
    if (!any)
        return;
    int cyc = -1; /* the cycles event, for each level's insn per cycle */
    for (size_t i = 0; i < rep->n && cyc < 0; i++)
        if (rep->role[i] == ROLE_CYCLES && split(r, rep, i))
            cyc = (int)i;
    /* Below the totals, their counts in the same column. */
    fputs("\n by CPU performance level:\n", out);
    for (size_t i = 0; i < rep->n; i++)
        for (size_t l = 0; l < r->levels && split(r, rep, i); l++) {
            char num[48];
            double v = r->level_sum[l][i] / (double)r->runs;
            fprintf(out, " %-3s%14s      ", r->level_names[l],
                    fmt_count((uint64_t)(v + 0.5), num, sizeof num));
            if (rep->role[i] == ROLE_INSTRUCTIONS && cyc >= 0 && r->level_sum[l][cyc] > 0)
                fprintf(out, "%-33s # %8.3f insn per cycle\n", rep->names[i],
                        r->level_sum[l][i] / r->level_sum[l][cyc]);
            else
                fprintf(out, "%s\n", rep->names[i]);
        }
}

/* With --per-level, after the totals: each level's counts as perf's
 * aggregated rows (label, then the CPUs, unknown here: 0). */
void stat_rows_csv_levels(FILE *out, const report *rep, const stat_options *o)
{
    const stat_rows *r = rep->rows;
    if (r == NULL || r->system || r->runs == 0 || o->aggr != STAT_AGGR_LEVEL)
        return;
    for (size_t i = 0; i < rep->n; i++)
        for (size_t l = 0; l < r->levels && split(r, rep, i); l++) {
            stat_line line = {.i = i, .interval = -1, .label = r->level_names[l], .ok = true};
            line.value = r->level_sum[l][i] / (double)r->runs;
            line.pcnt = 100;
            stat_perf_line(out, rep, o, &line);
        }
}

/* One row's count of event i as a JSON object. */
static void json_row(FILE *out, const stat_rows *r, const report *rep, const stat_options *o,
                     const row *w, size_t i, bool ok)
{
    if (o->aggr == STAT_AGGR_CPU)
        fprintf(out, "{\"cpu\": %d, \"core\": %d, \"package\": %d, ", w->id, w->core, w->package);
    else if (o->aggr == STAT_AGGR_CORE)
        fprintf(out, "{\"core\": %d, \"package\": %d, \"cpus\": %zu, ", w->core, w->package,
                w->cpus);
    else
        fprintf(out, "{\"cpus\": %zu, ", w->cpus);
    fputs("\"label\": ", out);
    dk__json_string(out, w->label);
    fputs(", \"level\": ", out);
    dk__json_string(out, r->level_names[w->level]);
    fputs(", \"event\": ", out);
    dk__json_string(out, rep->names[i]);
    if (ok)
        fprintf(out, ", \"value\": %.0f, \"run_ns\": %.0f, \"running_fraction\": %.4f}", w->v[i],
                w->run[i], row_pcnt(w, i) / 100);
    else
        fputs(", \"value\": null, \"run_ns\": null, \"running_fraction\": null}", out);
}

void stat_rows_json(FILE *out, const report *rep, const stat_options *o)
{
    const stat_rows *r = rep->rows;
    if (r == NULL || r->runs == 0)
        return;
    double runs = (double)r->runs;
    if (!r->system) {
        fputs(", \"levels\": [", out);
        bool first = true;
        for (size_t i = 0; i < rep->n; i++)
            for (size_t l = 0; l < r->levels && split(r, rep, i); l++) {
                fputs(first ? "{\"level\": " : ", {\"level\": ", out);
                first = false;
                dk__json_string(out, r->level_names[l]);
                fputs(", \"event\": ", out);
                dk__json_string(out, rep->names[i]);
                fprintf(out, ", \"value\": %.0f}", r->level_sum[l][i] / runs);
            }
        fputc(']', out);
        return;
    }
    if (o->cpus != NULL) {
        fputs(", \"cpus\": [", out);
        for (size_t k = 0; k < r->ncpus; k++)
            fprintf(out, "%s%d", k ? ", " : "", r->id[k]);
        fputc(']', out);
    }
    if (o->aggr == STAT_AGGR_TOTAL)
        return;
    row *rows = calloc(r->ncpus > 0 ? r->ncpus : 1, sizeof *rows);
    if (rows == NULL) {
        fputs(", \"rows\": null", out);
        return;
    }
    size_t m = make_rows(r, rep->n, o->aggr, rows);
    fputs(", \"aggregation\": ", out);
    dk__json_string(out, aggr_name(o->aggr));
    fputs(", \"rows\": [", out);
    bool first = true;
    for (size_t i = 0; i < rep->n; i++)
        for (size_t j = 0; j < m; j++) {
            fputs(first ? "" : ", ", out);
            first = false;
            json_row(out, r, rep, o, &rows[j], i, rep->supported[i] && counted(rep, i));
        }
    fputc(']', out);
    free(rows);
}

/* ---- -I with a breakdown ------------------------------------------------ */

bool stat_rows_per_interval(const report *rep)
{
    const stat_rows *r = rep->rows;
    return r != NULL && r->system && r->rows != NULL;
}

int stat_rows_read(dk_group *g, report *rep) { return read_rows(g, rep->rows); }

void stat_rows_interval_print(FILE *out, const report *rep, const stat_options *o,
                              stat_interval *iv, uint64_t since_ns, const dk_reading *info)
{
    stat_rows *r = rep->rows;
    size_t n = rep->n;
    /* Each CPU's counts since the last interval (from 0 at the first: the
     * counters of each run start at 0). */
    for (size_t k = 0; k < r->ncpus; k++)
        for (size_t i = 0; i < n; i++) {
            uint64_t now = r->buf[r->index[k] * n + i];
            uint64_t before = iv->printed > 0 ? r->prev[k * n + i] : 0;
            r->delta[k * n + i] = now > before ? (double)(now - before) : 0;
            r->prev[k * n + i] = now > before ? now : before;
            const dk_reading *t = &r->ibuf[r->index[k] * n + i];
            dk_reading *last = &r->iprev[k * n + i];
            if (iv->printed == 0)
                memset(last, 0, sizeof *last);
            r->dena[k * n + i] = (double)(t->time_enabled - last->time_enabled);
            r->drun[k * n + i] = (double)(t->time_running - last->time_running);
            *last = *t;
        }
    stat_rows once = *r;
    once.sum = r->delta;
    once.ena = r->dena;
    once.run = r->drun;
    once.runs = 1;
    size_t m = make_rows(&once, n, o->aggr, r->rows);
    uint64_t enabled[DK_MAX_EVENTS], running[DK_MAX_EVENTS], span;
    double t = stat_interval_advance(iv, n, since_ns, info, enabled, running, &span);
    const char *x = o->sep;
    if (x != NULL || o->jsonl) {
        bool ok[DK_MAX_EVENTS];
        for (size_t i = 0; i < n; i++)
            ok[i] = rep->supported[i] && stat_interval_counted(&info[i], running[i]);
        perf_rows(out, rep, o, r->rows, m, t, (double)span, ok);
        iv->printed++;
        fflush(out);
        return;
    }
    if (o->json) {
        fprintf(out, "{\"interval\": %.9f, \"interval_ns\": %llu, \"aggregation\": ", t,
                (unsigned long long)span);
        dk__json_string(out, aggr_name(o->aggr));
        fputs(", \"rows\": [", out);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++) {
                fputs(i + j > 0 ? ", " : "", out);
                json_row(out, r, rep, o, &r->rows[j], i, rep->supported[i] && info[i].counted);
            }
        fputs("]}\n", out);
    } else {
        if (iv->printed == 0)
            fprintf(out, "#           time %-10s%s %18s unit events\n",
                    o->aggr == STAT_AGGR_CPU ? "CPU" : aggr_name(o->aggr),
                    o->aggr == STAT_AGGR_CPU ? "" : " cpus", "counts");
        for (size_t i = 0; i < n; i++) {
            bool ok = rep->supported[i] && info[i].counted;
            const char *why = rep->supported[i] ? "<not counted>" : "<not supported>";
            for (size_t j = 0; j < m; j++) {
                const row *w = &r->rows[j];
                fprintf(out, "%16.9f %-10s", t, w->label);
                if (o->aggr != STAT_AGGR_CPU)
                    fprintf(out, " %4zu", w->cpus);
                char num[48];
                if (!ok)
                    fprintf(out, " %18s      %s\n", why, rep->names[i]);
                else if (in_ns(rep, i))
                    fprintf(out, " %18s msec %s\n", fmt_fixed(w->v[i] / 1e6, 2, num, sizeof num),
                            rep->names[i]);
                else
                    fprintf(out, " %18s      %s\n",
                            fmt_count((uint64_t)(w->v[i] + 0.5), num, sizeof num), rep->names[i]);
            }
        }
    }
    iv->printed++;
    fflush(out);
}
