/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * stat_interval.c - dkperf stat -I: each interval's counts as it ends, in
 * the human, CSV and JSON forms, the seconds since the counting began
 * first, as perf stat -I prints them; with -a and -A, --per-core or
 * --per-level, the rows of each interval instead (stat_rows.c). The totals
 * are printed at the end by stat_print.c as without -I.
 */
#include <stdio.h>
#include <string.h>

#include "common/json.h"
#include "stat.h"

static bool in_ns(const report *rep, size_t i)
{
    return rep->unit[i] != NULL && strcmp(rep->unit[i], "ns") == 0;
}

double stat_interval_advance(stat_interval *iv, size_t n, uint64_t since_ns, const dk_reading *info,
                             uint64_t *enabled, uint64_t *running, uint64_t *span_ns)
{
    for (size_t i = 0; i < n; i++) {
        enabled[i] = info[i].time_enabled - iv->last_info[i].time_enabled;
        running[i] = info[i].time_running - iv->last_info[i].time_running;
        iv->last_info[i] = info[i];
    }
    *span_ns = since_ns - iv->last_ns;
    iv->last_ns = since_ns;
    return (double)since_ns / 1e9;
}

bool stat_interval_counted(const dk_reading *info, uint64_t running)
{
    return info->counted && (info->time_enabled == 0 || running > 0);
}

void stat_interval_print(FILE *out, const report *rep, const stat_options *o, stat_interval *iv,
                         uint64_t since_ns, const uint64_t *values, const dk_reading *info)
{
    /* With a breakdown, the rows (their last per-CPU reading is taken by
     * the caller) instead of the totals, as perf stat -I -A prints them. */
    if (stat_rows_per_interval(rep)) {
        for (size_t i = 0; i < rep->n; i++)
            if (values[i] > iv->last[i])
                iv->last[i] = values[i];
        stat_rows_interval_print(out, rep, o, iv, since_ns, info);
        return;
    }
    uint64_t delta[DK_MAX_EVENTS], enabled[DK_MAX_EVENTS], running[DK_MAX_EVENTS];
    for (size_t i = 0; i < rep->n; i++) {
        /* A scaled (time-shared) total may shrink: the interval counts 0
         * and the next ones start from the largest total seen, so that the
         * intervals still add up to the last total (or exceed it by what
         * the scaling took back). */
        delta[i] = values[i] > iv->last[i] ? values[i] - iv->last[i] : 0;
        if (values[i] > iv->last[i])
            iv->last[i] = values[i];
    }
    uint64_t span;
    double t = stat_interval_advance(iv, rep->n, since_ns, info, enabled, running, &span);

    if (o->json) {
        fprintf(out, "{\"interval\": %.9f, \"interval_ns\": %llu, \"events\": [", t,
                (unsigned long long)span);
        for (size_t i = 0; i < rep->n; i++) {
            fputs(i ? ", {\"name\": " : "{\"name\": ", out);
            dk__json_string(out, rep->names[i]);
            fputs(", \"event\": ", out);
            dk__json_string(out, rep->native[i]);
            if (rep->supported[i] && info[i].counted)
                fprintf(out, ", \"value\": %llu", (unsigned long long)delta[i]);
            else
                fputs(", \"value\": null", out);
            fputs(", \"unit\": ", out);
            dk__json_string(out, rep->unit[i]);
            fprintf(out, ", \"running_fraction\": %.4f}",
                    enabled[i] > 0 ? (double)running[i] / (double)enabled[i] : 1.0);
        }
        fputs("]}\n", out);
    } else if (o->sep != NULL || o->jsonl) {
        /* perf's line for each event, the time first. */
        double v[DK_MAX_EVENTS];
        bool ok[DK_MAX_EVENTS];
        for (size_t i = 0; i < rep->n; i++) {
            v[i] = (double)delta[i];
            /* Counters that did not run this interval: <not counted>, as perf. */
            ok[i] = rep->supported[i] && stat_interval_counted(&info[i], running[i]);
        }
        for (size_t i = 0; i < rep->n; i++) {
            stat_line l = {.i = i, .interval = t, .ok = ok[i], .value = v[i]};
            l.run_ns = running[i];
            l.pcnt = enabled[i] > 0 ? 100.0 * (double)running[i] / (double)enabled[i] : 100.0;
            l.has_metric = ok[i] &&
                           stat_metric(rep, v, ok, i, (double)span, &l.metric, &l.metric_unit);
            stat_perf_line(out, rep, o, &l);
        }
    } else {
        if (iv->printed == 0)
            fputs("#           time             counts unit events\n", out);
        for (size_t i = 0; i < rep->n; i++) {
            char num[48];
            bool ran = rep->supported[i] && stat_interval_counted(&info[i], running[i]);
            if (!ran)
                fprintf(out, "%16.9f %18s      %s\n", t,
                        rep->supported[i] ? "<not counted>" : "<not supported>", rep->names[i]);
            else if (in_ns(rep, i))
                fprintf(out, "%16.9f %18s msec %s", t,
                        fmt_fixed((double)delta[i] / 1e6, 2, num, sizeof num), rep->names[i]);
            else
                fprintf(out, "%16.9f %18s      %s", t, fmt_count(delta[i], num, sizeof num),
                        rep->names[i]);
            if (ran) {
                if (enabled[i] > 0 && running[i] < enabled[i])
                    fprintf(out, "  (%.2f%%)", 100.0 * (double)running[i] / (double)enabled[i]);
                fputc('\n', out);
            }
        }
    }
    iv->printed++;
    fflush(out); /* each interval is read as it comes */
}
