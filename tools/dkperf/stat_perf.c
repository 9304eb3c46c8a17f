/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat_perf.c - one event's line as perf stat 6.1 writes it, for scripts
 * written for perf: with -x SEP
 *
 *   [time SEP][CPU3 SEP | S0-C1 SEP cpus SEP] value SEP unit SEP event SEP
 *   [spread% SEP] run-time SEP percent-running SEP metric SEP metric-unit
 *
 * and with -j the same fields as one JSON object, perf-stat(1)'s keys:
 * "interval", "cpu" or "core"/"level" and "aggregate-number",
 * "counter-value", "unit", "event", "variance", "event-runtime",
 * "pcnt-running", "metric-value", "metric-unit".
 */
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "stat.h"

static bool in_ns(const report *rep, size_t i)
{
    return rep->unit[i] != NULL && strcmp(rep->unit[i], "ns") == 0;
}

/* perf's unit column: msec for counts in ns, nothing for a count, the
 * event's own unit otherwise; nothing for an event that is not supported. */
static const char *unit_of(const report *rep, size_t i)
{
    if (!rep->supported[i])
        return "";
    if (in_ns(rep, i))
        return "msec";
    if (rep->unit[i] == NULL || strcmp(rep->unit[i], "count") == 0 ||
        strcmp(rep->unit[i], "events") == 0)
        return "";
    return rep->unit[i];
}

/* -r's spread column is there whenever -r asked for more than one run, as
 * in perf: in every row (perf keeps no spread per CPU or core: 0.00%) and
 * when a killed command ended the runs after the first. */
static bool spread(const stat_options *o) { return o->repeat > 1; }

static const char *why(const report *rep, size_t i)
{
    return rep->supported[i] ? "<not counted>" : "<not supported>";
}

static void put_csv(FILE *out, const report *rep, const stat_options *o, const stat_line *l)
{
    const char *x = o->sep;
    size_t i = l->i;
    if (l->interval >= 0) { /* "%6lu.%09lu" as perf: seconds right-aligned */
        unsigned long long ns = (unsigned long long)(l->interval * 1e9 + 0.5);
        fprintf(out, "%6llu.%09llu%s", ns / 1000000000ull, ns % 1000000000ull, x);
    }
    if (l->label != NULL) {
        fputs(l->label, out);
        if (o->aggr != STAT_AGGR_CPU)
            fprintf(out, "%s%zu", x, l->cpus);
        fputs(x, out);
    }
    if (!l->ok)
        fputs(why(rep, i), out);
    else if (in_ns(rep, i))
        fprintf(out, "%.2f", l->value / 1e6);
    else
        fprintf(out, "%.0f", l->value);
    fprintf(out, "%s%s%s%s%s", x, unit_of(rep, i), x, rep->names[i], x);
    if (spread(o))
        fprintf(out, "%.2f%%%s", l->rel, x);
    fprintf(out, "%llu%s%.2f%s", (unsigned long long)l->run_ns, x, l->pcnt, x);
    if (l->has_metric)
        fprintf(out, "%.3f%s%s\n", l->metric, x, l->metric_unit);
    else
        fprintf(out, "%s\n", x);
}

static void put_json(FILE *out, const report *rep, const stat_options *o, const stat_line *l)
{
    size_t i = l->i;
    fputc('{', out);
    if (l->interval >= 0)
        fprintf(out, "\"interval\" : %.9f, ", l->interval);
    if (l->label != NULL && o->aggr == STAT_AGGR_CPU) {
        fprintf(out, "\"cpu\" : \"%d\", ", l->cpu);
    } else if (l->label != NULL) {
        /* perf's key for a core; for a performance level, which perf
         * does not have, "level" in the same place. */
        fputs(o->aggr == STAT_AGGR_CORE ? "\"core\" : " : "\"level\" : ", out);
        dk__json_string(out, l->label);
        fprintf(out, ", \"aggregate-number\" : %zu, ", l->cpus);
    }
    fputs("\"counter-value\" : ", out);
    if (!l->ok)
        dk__json_string(out, why(rep, i));
    else
        fprintf(out, "\"%f\"", in_ns(rep, i) ? l->value / 1e6 : l->value);
    fputs(", \"unit\" : ", out);
    dk__json_string(out, unit_of(rep, i));
    fputs(", \"event\" : ", out);
    dk__json_string(out, rep->names[i]);
    if (spread(o))
        fprintf(out, ", \"variance\" : %.2f", l->rel);
    fprintf(out, ", \"event-runtime\" : %llu, \"pcnt-running\" : %.2f, \"metric-value\" : %f",
            (unsigned long long)l->run_ns, l->pcnt, l->has_metric ? l->metric : 0.0);
    fputs(", \"metric-unit\" : ", out);
    dk__json_string(out, l->has_metric ? l->metric_unit : "");
    fputs("}\n", out);
}

void stat_perf_line(FILE *out, const report *rep, const stat_options *o, const stat_line *l)
{
    if (o->jsonl)
        put_json(out, rep, o, l);
    else
        put_csv(out, rep, o, l);
}
