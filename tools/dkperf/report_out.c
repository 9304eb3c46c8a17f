/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_out.c - dkperf report's outputs from the model (report.h): the
 * perf-report-like table and speedscope JSON. Folded stacks and the HTML
 * flame graph, drawn from the stacks merged by name, are in
 * report_stacks.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/json.h"
#include "common/text.h"
#include "report.h"
#include "symbols.h"

/* ------------------------------------------------------------------ */
/* The table                                                            */
/* ------------------------------------------------------------------ */

typedef struct row {
    uint64_t self, children, samples;
    const char *label, *dso;
    int32_t pid;
} row;

/* Whether a recorded event is one of perf's clocks (cpu-clock, task-clock,
 * with or without modifiers), whose periods are nanoseconds. */
static bool by_children_order;

/* An event's samples and their weight. */
typedef struct evtotal {
    uint64_t n, weight;
} evtotal;

static int row_order(const void *a, const void *b)
{
    const row *x = a, *y = b;
    uint64_t kx = by_children_order ? x->children : x->self;
    uint64_t ky = by_children_order ? y->children : y->self;
    if (kx != ky)
        return kx > ky ? -1 : 1;
    uint64_t cx = by_children_order ? x->self : x->children;
    uint64_t cy = by_children_order ? y->self : y->children;
    if (cx != cy)
        return cx > cy ? -1 : 1;
    int c = strcmp(x->label, y->label);
    if (c != 0)
        return c;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Children and first-child lists of the stack tree, for walks down it. */
typedef struct kids {
    uint32_t *first, *next; /* 0: none (node 0 is never a child) */
} kids;

static int kids_make(kids *k, const rnode *nodes, size_t n)
{
    k->first = calloc(n ? n : 1, sizeof *k->first);
    k->next = calloc(n ? n : 1, sizeof *k->next);
    if (k->first == NULL || k->next == NULL)
        return -1;
    /* From the last: each list ends up in id order. */
    for (size_t v = n; v-- > 1;) {
        k->next[v] = k->first[nodes[v].parent];
        k->first[nodes[v].parent] = (uint32_t)v;
    }
    return 0;
}

static void kids_free(kids *k)
{
    free(k->first);
    free(k->next);
}

/*
 * The rows of one event keyed by stack frame (key[frame]): self and sample
 * count from each stack's own samples, children (total) from the weight
 * under the outermost node of each key on a path, so that a key that recurs
 * in a stack counts its samples once. Linear in the tree's size.
 */
static int tree_rows(const rprofile *p, const kids *k, uint32_t e, const size_t *key, row *rows,
                     size_t nkeys)
{
    size_t n = p->n_nodes;
    uint64_t *self = calloc(n, sizeof *self), *sub = calloc(n, sizeof *sub);
    uint64_t *cnt = calloc(n, sizeof *cnt);
    uint32_t *active = calloc(nkeys ? nkeys : 1, sizeof *active);
    uint32_t *stack = calloc(2 * n, sizeof *stack);
    int rc = -1;
    if (self == NULL || sub == NULL || cnt == NULL || active == NULL || stack == NULL)
        goto out;
    for (size_t i = 0; i < p->n_entries; i++) {
        const rsample *s = &p->entries[i];
        if (s->event == e) {
            self[s->stack] += s->weight;
            cnt[s->stack] += s->count;
        }
    }
    for (size_t v = n; v-- > 1;)
        sub[v] += self[v], sub[p->nodes[v].parent] += sub[v];
    /* Depth first; the top bit marks the way back up from a node. */
    size_t sp = 0;
    for (uint32_t c = k->first[0]; c != 0; c = k->next[c])
        stack[sp++] = c;
    while (sp > 0) {
        uint32_t v = stack[--sp];
        if (v & 0x80000000u) {
            active[key[p->nodes[v & 0x7fffffffu].frame]]--;
            continue;
        }
        if (sub[v] == 0)
            continue;
        size_t kk = key[p->nodes[v].frame];
        if (active[kk]++ == 0)
            rows[kk].children += sub[v];
        rows[kk].self += self[v];
        rows[kk].samples += cnt[v];
        /* The way back is pushed before the children: the stack holds at
         * most one entry per node plus one per node on the path. */
        stack[sp++] = v | 0x80000000u;
        for (uint32_t c = k->first[v]; c != 0; c = k->next[c])
            stack[sp++] = c;
    }
    rc = 0;
out:
    free(self);
    free(sub);
    free(cnt);
    free(active);
    free(stack);
    return rc;
}

int report_frame_totals(const rprofile *p, uint32_t e, uint64_t *self, uint64_t *children)
{
    size_t nf = p->n_frames ? p->n_frames : 1;
    size_t *key = calloc(nf, sizeof *key);
    row *rows = calloc(nf, sizeof *rows);
    kids tk = {NULL, NULL};
    int rc = -1;
    if (key == NULL || rows == NULL || kids_make(&tk, p->nodes, p->n_nodes) != 0)
        goto out;
    for (size_t f = 0; f < p->n_frames; f++)
        key[f] = f;
    if (tree_rows(p, &tk, e, key, rows, p->n_frames) != 0)
        goto out;
    for (size_t f = 0; f < p->n_frames; f++)
        self[f] = rows[f].self, children[f] = rows[f].children;
    rc = 0;
out:
    free(key);
    free(rows);
    kids_free(&tk);
    return rc;
}

static const rframe *order_frames;

static int dso_order(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(order_frames[x].dso, order_frames[y].dso);
    return c != 0 ? c : (x < y ? -1 : x > y);
}

static int pid_order(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

size_t report_dso_width(size_t width, const char *name)
{
    char cell[4 * REPORT_DSO_COLUMN_MAX + 1];
    size_t n = dk__untrusted(cell, sizeof cell, name);
    size_t c = n >= sizeof cell ? REPORT_DSO_COLUMN_MAX : dk__utf8_columns(cell);
    if (c > width)
        width = c < REPORT_DSO_COLUMN_MAX ? c : REPORT_DSO_COLUMN_MAX;
    return width;
}

void report_put_column(FILE *out, const char *s, size_t width)
{
    char buf[4 * REPORT_DSO_COLUMN_MAX + 1];
    if (width > REPORT_DSO_COLUMN_MAX)
        width = REPORT_DSO_COLUMN_MAX;
    size_t n = dk__untrusted(buf, sizeof buf, s);
    if (n >= sizeof buf || dk__utf8_columns(buf) > width) {
        /* At most width - 3 bytes, so as many columns or fewer, cut
         * between whole characters and escapes. */
        dk__untrusted(buf, width - 3 + 1, s);
        strcat(buf, "...");
    }
    fputs(buf, out);
    for (size_t c = dk__utf8_columns(buf); c < width; c++)
        fputc(' ', out);
}

int report_stdio(FILE *out, const rprofile *p, report_sort sort, bool by_children)
{
    const dkrec *r = p->rec;
    char b1[32], b2[32], b3[32];
    /* Every string from the recording or the images it names is escaped
     * (common/text.h): a command or a symbol could drive the terminal. */
    fputs("# dkperf report of ", out);
    dk__put_untrusted(out, p->path);
    fprintf(out, ": %s samples", fmt_count(p->n_samples, b1, sizeof b1));
    const char *cmd = dkrec_meta(r, "command");
    if (cmd != NULL) {
        fputs(" of '", out);
        dk__put_untrusted(out, cmd);
        fputc('\'', out);
    }
    fputc('\n', out);
    fprintf(out, "# lost %s, throttled %s times%s", fmt_count(p->lost, b2, sizeof b2),
            fmt_count(p->throttled, b3, sizeof b3), p->incomplete == NULL ? "" : "; INCOMPLETE: ");
    for (size_t i = 0; p->incomplete != NULL && p->n_recs > 1 && i < p->n_recs; i++)
        if (p->recs[i] == p->incomplete) {
            dk__put_untrusted(out, p->paths[i]);
            fputs(": ", out);
        }
    dk__put_untrusted(out, p->incomplete == NULL ? "" : p->incomplete->tail_note);
    fprintf(out, "\n# symbols from the images on disk: %s\n", symbols_readers());
    for (size_t i = 0; i < p->n_notes; i++) {
        fputs("# ", out);
        dk__put_untrusted(out, p->notes[i]);
        fputc('\n', out);
    }

    /* Each frame's row for --sort sym (itself) and dso (its image's). */
    size_t *key = calloc(p->n_frames ? p->n_frames : 1, sizeof *key);
    const char **dsos = calloc(p->n_frames ? p->n_frames : 1, sizeof *dsos);
    size_t *order = calloc(p->n_frames ? p->n_frames : 1, sizeof *order);
    int32_t *pids = NULL;
    size_t ndsos = 0, npids = 0;
    row *rows = NULL;
    evtotal *evsum = NULL;
    kids tk = {NULL, NULL};
    int rc = -1; /* out of memory until the table is printed */
    if (key == NULL || dsos == NULL || order == NULL || kids_make(&tk, p->nodes, p->n_nodes) != 0)
        goto oom;
    for (size_t f = 0; f < p->n_frames; f++)
        key[f] = f;
    if (sort == SORT_DSO) {
        /* Frames by image name; one row per name. */
        for (size_t f = 0; f < p->n_frames; f++)
            order[f] = f;
        order_frames = p->frames;
        qsort(order, p->n_frames, sizeof *order, dso_order);
        for (size_t i = 0; i < p->n_frames; i++) {
            const char *d = p->frames[order[i]].dso;
            if (ndsos == 0 || strcmp(dsos[ndsos - 1], d) != 0)
                dsos[ndsos++] = d;
            key[order[i]] = ndsos - 1;
        }
    }
    /* Pids, for --sort pid: sorted, each once. */
    if (sort == SORT_PID) {
        pids = calloc(p->n_entries ? p->n_entries : 1, sizeof *pids);
        if (pids == NULL)
            goto oom;
        for (size_t i = 0; i < p->n_entries; i++)
            pids[i] = p->entries[i].pid;
        qsort(pids, p->n_entries, sizeof *pids, pid_order);
        for (size_t i = 0; i < p->n_entries; i++)
            if (npids == 0 || pids[npids - 1] != pids[i])
                pids[npids++] = pids[i];
    }
    size_t nkeys = sort == SORT_SYM    ? p->n_frames
                   : sort == SORT_DSO  ? ndsos
                   : sort == SORT_COMM ? p->n_comms
                                       : npids;
    rows = calloc(nkeys ? nkeys : 1, sizeof *rows);
    /* Each event's samples and weight, counted once: a recording may
     * describe far more events than it has samples of, and an event
     * without samples costs only its header. */
    evsum = calloc(p->n_events ? p->n_events : 1, sizeof *evsum);
    if (rows == NULL || evsum == NULL)
        goto oom;
    for (size_t i = 0; i < p->n_entries; i++) {
        evsum[p->entries[i].event].n += p->entries[i].count;
        evsum[p->entries[i].event].weight += p->entries[i].weight;
    }
    for (uint32_t e = 0; e < p->n_events; e++) {
        uint64_t total = evsum[e].weight, nsamples = evsum[e].n;
        if (nsamples > 0)
            memset(rows, 0, nkeys * sizeof *rows);
        for (size_t i = 0; nsamples > 0 && i < p->n_entries; i++) {
            const rsample *s = &p->entries[i];
            if (s->event != e)
                continue;
            if (sort == SORT_PID || sort == SORT_COMM) {
                size_t kk = s->comm;
                if (sort == SORT_PID) {
                    const int32_t *hit = bsearch(&s->pid, pids, npids, sizeof *pids, pid_order);
                    kk = (size_t)(hit - pids);
                }
                rows[kk].self += s->weight;
                rows[kk].children += s->weight;
                rows[kk].samples += s->count;
                rows[kk].pid = s->pid;
                rows[kk].label = p->comms[s->comm];
            }
        }
        if (nsamples > 0 && (sort == SORT_SYM || sort == SORT_DSO)) {
            if (tree_rows(p, &tk, e, key, rows, nkeys) != 0)
                goto oom;
            if (sort == SORT_SYM)
                for (size_t f = 0; f < p->n_frames; f++)
                    rows[f].label = p->frames[f].name, rows[f].dso = p->frames[f].dso;
            else
                for (size_t d = 0; d < ndsos; d++)
                    rows[d].label = rows[d].dso = dsos[d];
        }
        const dkrec_event *ev = &p->events[e];
        bool off_ev = strcmp(ev->name, REPORT_OFF_CPU_EVENT) == 0 && ev->freq == 0 &&
                      ev->period == 0;
        fputs("#\n# Event: ", out);
        dk__put_untrusted(out, ev->name);
        fputs(" (", out);
        if (off_ev)
            fputs("the time threads spent off CPU", out);
        else if (ev->freq)
            fprintf(out, "%" PRIu64 " samples a second", ev->freq);
        else
            fprintf(out, "one sample every %" PRIu64, ev->period);
        /* A sample weighs its period: nanoseconds for the clocks, events
         * for the rest. */
        fprintf(out, "): %s samples, %s %s in all\n#\n", fmt_count(nsamples, b1, sizeof b1),
                fmt_count(total, b2, sizeof b2),
                report_time_event(ev->name) || off_ev ? "ns" : "events");
        if (nsamples == 0)
            continue;
        by_children_order = by_children;
        size_t nrows = 0;
        for (size_t k = 0; k < nkeys; k++)
            if (rows[k].children > 0)
                rows[nrows++] = rows[k];
        qsort(rows, nrows, sizeof *rows, row_order);
        size_t width = REPORT_DSO_COLUMN;
        for (size_t k = 0; sort == SORT_SYM && k < nrows; k++)
            width = report_dso_width(width, rows[k].dso);
        const char *what = sort == SORT_SYM    ? "Shared Object"
                           : sort == SORT_DSO  ? "Shared Object"
                           : sort == SORT_COMM ? "Command"
                                               : "Pid     Command";
        fprintf(out, "# Children      Self    Samples  %s", what);
        if (sort == SORT_SYM)
            fprintf(out, "%*sSymbol", (int)(width + 2 - strlen(what)), "");
        fputc('\n', out);
        for (size_t k = 0; k < nrows; k++) {
            const row *w = &rows[k];
            fprintf(out, "  %7.2f%%  %7.2f%%  %9" PRIu64 "  ",
                    100.0 * (double)w->children / (double)total,
                    100.0 * (double)w->self / (double)total, w->samples);
            if (sort == SORT_SYM) {
                report_put_column(out, w->dso, width);
                fputs("  ", out);
                if (strcmp(w->dso, RFRAME_KERNEL_DSO) == 0)
                    fputs("[k] ", out); /* as perf marks kernel symbols */
            } else if (sort == SORT_PID) {
                fprintf(out, "%-7d ", (int)w->pid);
            }
            dk__put_untrusted(out, w->label);
            fputc('\n', out);
        }
    }
    rc = 0;
oom:
    free(rows);
    free(evsum);
    free(pids);
    free(dsos);
    free(key);
    free(order);
    kids_free(&tk);
    if (rc != 0)
        cli_error("report", "out of memory while sorting the report");
    return rc;
}

/* ------------------------------------------------------------------ */
/* speedscope                                                           */
/* ------------------------------------------------------------------ */

int report_speedscope(FILE *out, const rprofile *p)
{
    /* A stack root first, from its innermost node up. */
    uint32_t *path = calloc((size_t)p->max_depth + 1, sizeof *path);
    if (path == NULL) {
        cli_error("report", "out of memory while writing speedscope");
        return -1;
    }
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", out);
    fputs("\"shared\":{\"frames\":[", out);
    for (size_t f = 0; f < p->n_frames; f++) {
        fputs(f ? ",\n{\"name\":" : "\n{\"name\":", out);
        if (rframe_kernel(&p->frames[f])) {
            size_t n = strlen(p->frames[f].name);
            char *marked = malloc(n + sizeof RFRAME_KERNEL_MARK);
            if (marked == NULL) {
                free(path);
                cli_error("report", "out of memory while writing speedscope");
                return -1;
            }
            memcpy(marked, p->frames[f].name, n);
            memcpy(marked + n, RFRAME_KERNEL_MARK, sizeof RFRAME_KERNEL_MARK);
            dk__json_string(out, marked);
            free(marked);
        } else {
            dk__json_string(out, p->frames[f].name);
        }
        fputs(",\"file\":", out);
        dk__json_string(out, p->frames[f].dso);
        fputc('}', out);
    }
    fputs("]},\n\"profiles\":[", out);
    /* Each event's weight, summed once: an event without samples costs
     * only its empty profile, however many events the recording has. */
    evtotal *evsum = calloc(p->n_events ? p->n_events : 1, sizeof *evsum);
    if (evsum == NULL) {
        free(path);
        cli_error("report", "out of memory while writing speedscope");
        return -1;
    }
    for (size_t i = 0; i < p->n_entries; i++) {
        evsum[p->entries[i].event].n += p->entries[i].count;
        evsum[p->entries[i].event].weight += p->entries[i].weight;
    }
    /* Each event's stacks, once each in the order of their first entry,
     * and their weights: the profile grows with the distinct stacks, not
     * with the samples (speedscope's "sampled" profile with weights). */
    uint64_t *sw = calloc(p->n_nodes ? p->n_nodes : 1, sizeof *sw);
    bool *seen = calloc(p->n_nodes ? p->n_nodes : 1, sizeof *seen);
    uint32_t *order = calloc(p->n_entries ? p->n_entries : 1, sizeof *order);
    if (sw == NULL || seen == NULL || order == NULL) {
        free(sw);
        free(seen);
        free(order);
        free(path);
        free(evsum);
        cli_error("report", "out of memory while writing speedscope");
        return -1;
    }
    for (uint32_t e = 0; e < p->n_events; e++) {
        uint64_t total = evsum[e].weight;
        size_t ns = 0;
        for (size_t i = 0; evsum[e].n > 0 && i < p->n_entries; i++) {
            const rsample *s = &p->entries[i];
            if (s->event != e)
                continue;
            if (!seen[s->stack]) {
                seen[s->stack] = true;
                order[ns++] = s->stack;
            }
            sw[s->stack] += s->weight;
        }
        fputs(e ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":", out);
        dk__json_string(out, p->events[e].name);
        fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
                report_time_event(p->events[e].name) ||
                        strcmp(p->events[e].name, REPORT_OFF_CPU_EVENT) == 0
                    ? "nanoseconds"
                    : "none",
                total);
        for (size_t k = 0; k < ns; k++) {
            fputs(k ? ",\n[" : "[", out);
            size_t d = 0;
            for (uint32_t v = order[k]; v != 0; v = p->nodes[v].parent)
                path[d++] = p->nodes[v].frame;
            for (size_t x = d; x-- > 0;)
                fprintf(out, x + 1 < d ? ",%u" : "%u", path[x]);
            fputc(']', out);
        }
        fputs("],\n\"weights\":[", out);
        for (size_t k = 0; k < ns; k++) {
            fprintf(out, k ? ",%" PRIu64 : "%" PRIu64, sw[order[k]]);
            sw[order[k]] = 0;
            seen[order[k]] = false;
        }
        fputs("]}", out);
    }
    free(sw);
    free(seen);
    free(order);
    fputs("],\n\"name\":", out);
    dk__json_string(out, p->path);
    fputs(",\"activeProfileIndex\":0,\"exporter\":\"dkperf report\"}\n", out);
    free(path);
    free(evsum);
    return 0;
}
