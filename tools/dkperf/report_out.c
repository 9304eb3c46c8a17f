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

/* What the walks of one event's stacks need, made once for every event:
 * per node, the event's weights and its children among the nodes the
 * event reaches; per row key, whether the event touched it. Each walk
 * clears only what it used, so that all the events together cost the
 * entries and the nodes they reach, not events times nodes. */
typedef struct twalk {
    uint64_t *self, *sub, *cnt;
    uint32_t *first, *next; /* children among the reached; 0: none */
    uint32_t *reached;      /* the nodes the event's stacks reach */
    uint32_t *stack;
    bool *mark;
    uint32_t *active; /* per key: its nodes on the path walked */
    bool *used;       /* per key: a row the event touched */
    uint32_t *keys;   /* those keys, n_keys of them */
    size_t n_keys;
} twalk;

static int twalk_make(twalk *w, size_t n, size_t nkeys)
{
    n = n ? n : 1;
    nkeys = nkeys ? nkeys : 1;
    w->self = calloc(n, sizeof *w->self);
    w->sub = calloc(n, sizeof *w->sub);
    w->cnt = calloc(n, sizeof *w->cnt);
    w->first = calloc(n, sizeof *w->first);
    w->next = calloc(n, sizeof *w->next);
    w->reached = calloc(n, sizeof *w->reached);
    w->stack = calloc(2 * n, sizeof *w->stack);
    w->mark = calloc(n, sizeof *w->mark);
    w->active = calloc(nkeys, sizeof *w->active);
    w->used = calloc(nkeys, sizeof *w->used);
    w->keys = calloc(nkeys, sizeof *w->keys);
    w->n_keys = 0;
    return w->self && w->sub && w->cnt && w->first && w->next && w->reached && w->stack &&
                   w->mark && w->active && w->used && w->keys
               ? 0
               : -1;
}

static void twalk_free(twalk *w)
{
    free(w->self);
    free(w->sub);
    free(w->cnt);
    free(w->first);
    free(w->next);
    free(w->reached);
    free(w->stack);
    free(w->mark);
    free(w->active);
    free(w->used);
    free(w->keys);
}

/* Row kk, noted as touched by the event walked. */
static row *twalk_row(twalk *w, row *rows, size_t kk)
{
    if (!w->used[kk]) {
        w->used[kk] = true;
        w->keys[w->n_keys++] = (uint32_t)kk;
    }
    return &rows[kk];
}

static int desc_order(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x > y ? -1 : x < y;
}

/*
 * The rows of one event (its entries: ent, n of them) keyed by stack frame
 * (key[frame]): self and sample count from each stack's own samples,
 * children (total) from the weight under the outermost node of each key
 * on a path, so that a key that recurs in a stack counts its samples
 * once. The rows touched are w's keys. Walks only the nodes the event's
 * stacks reach.
 */
static void tree_rows(const rprofile *p, twalk *w, const uint32_t *ent, size_t n, const size_t *key,
                      row *rows)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const rsample *s = &p->entries[ent[i]];
        w->self[s->stack] += s->weight;
        w->cnt[s->stack] += s->count;
        for (uint32_t v = s->stack; v != 0 && !w->mark[v]; v = p->nodes[v].parent) {
            w->mark[v] = true;
            w->reached[m++] = v;
        }
    }
    /* Children before their parents (a parent has a smaller id); each
     * list of children ends up in id order. */
    qsort(w->reached, m, sizeof *w->reached, desc_order);
    for (size_t i = 0; i < m; i++) {
        uint32_t v = w->reached[i], up = p->nodes[v].parent;
        w->sub[v] += w->self[v];
        w->sub[up] += w->sub[v];
        w->next[v] = w->first[up];
        w->first[up] = v;
    }
    /* Depth first; the top bit marks the way back up from a node. */
    size_t sp = 0;
    for (uint32_t c = w->first[0]; c != 0; c = w->next[c])
        w->stack[sp++] = c;
    while (sp > 0) {
        uint32_t v = w->stack[--sp];
        if (v & 0x80000000u) {
            w->active[key[p->nodes[v & 0x7fffffffu].frame]]--;
            continue;
        }
        if (w->sub[v] == 0)
            continue;
        size_t kk = key[p->nodes[v].frame];
        row *r = twalk_row(w, rows, kk);
        if (w->active[kk]++ == 0)
            r->children += w->sub[v];
        r->self += w->self[v];
        r->samples += w->cnt[v];
        /* The way back is pushed before the children: the stack holds at
         * most one entry per node plus one per node on the path. */
        w->stack[sp++] = v | 0x80000000u;
        for (uint32_t c = w->first[v]; c != 0; c = w->next[c])
            w->stack[sp++] = c;
    }
    for (size_t i = 0; i < m; i++) {
        uint32_t v = w->reached[i];
        w->self[v] = w->sub[v] = w->cnt[v] = 0;
        w->first[v] = w->next[v] = 0;
        w->mark[v] = false;
    }
    w->sub[0] = 0;
    w->first[0] = 0;
}

/* The entries of each event, in their order: those of event e are
 * byev[start[e] .. start[e + 1]). -1 when out of memory. */
static int by_event(const rprofile *p, uint32_t **start, uint32_t **byev)
{
    *start = calloc(p->n_events + 2, sizeof **start);
    *byev = calloc(p->n_entries ? p->n_entries : 1, sizeof **byev);
    if (*start == NULL || *byev == NULL)
        return -1;
    for (size_t i = 0; i < p->n_entries; i++)
        (*start)[p->entries[i].event + 2]++;
    for (size_t e = 0; e < p->n_events; e++)
        (*start)[e + 2] += (*start)[e + 1];
    /* start[e + 1]: where event e's next entry goes; then its end. */
    for (size_t i = 0; i < p->n_entries; i++)
        (*byev)[(*start)[p->entries[i].event + 1]++] = (uint32_t)i;
    return 0;
}

int report_frame_totals(const rprofile *p, uint32_t e, uint64_t *self, uint64_t *children)
{
    size_t nf = p->n_frames ? p->n_frames : 1;
    size_t *key = calloc(nf, sizeof *key);
    row *rows = calloc(nf, sizeof *rows);
    uint32_t *ent = calloc(p->n_entries ? p->n_entries : 1, sizeof *ent);
    twalk w;
    int rc = -1;
    if (twalk_make(&w, p->n_nodes, p->n_frames) != 0 || key == NULL || rows == NULL || ent == NULL)
        goto out;
    for (size_t f = 0; f < p->n_frames; f++)
        key[f] = f;
    size_t n = 0;
    for (size_t i = 0; i < p->n_entries; i++)
        if (p->entries[i].event == e)
            ent[n++] = (uint32_t)i;
    tree_rows(p, &w, ent, n, key, rows);
    for (size_t f = 0; f < p->n_frames; f++)
        self[f] = rows[f].self, children[f] = rows[f].children;
    rc = 0;
out:
    free(key);
    free(rows);
    free(ent);
    twalk_free(&w);
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
    row *rows = NULL, *sorted = NULL;
    evtotal *evsum = NULL;
    uint32_t *start = NULL, *byev = NULL;
    twalk w = {0};
    int rc = -1; /* out of memory until the table is printed */
    if (key == NULL || dsos == NULL || order == NULL || by_event(p, &start, &byev) != 0)
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
    sorted = calloc(nkeys ? nkeys : 1, sizeof *sorted);
    if (rows == NULL || sorted == NULL || twalk_make(&w, p->n_nodes, nkeys) != 0)
        goto oom;
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
        /* Only the rows and nodes this event's entries reach. */
        const uint32_t *ent = byev + start[e];
        size_t nent = start[e + 1] - start[e];
        if (sort == SORT_PID || sort == SORT_COMM) {
            for (size_t i = 0; i < nent; i++) {
                const rsample *s = &p->entries[ent[i]];
                size_t kk = s->comm;
                if (sort == SORT_PID) {
                    const int32_t *hit = bsearch(&s->pid, pids, npids, sizeof *pids, pid_order);
                    kk = (size_t)(hit - pids);
                }
                row *rw = twalk_row(&w, rows, kk);
                rw->self += s->weight;
                rw->children += s->weight;
                rw->samples += s->count;
                rw->pid = s->pid;
                rw->label = p->comms[s->comm];
            }
        } else {
            tree_rows(p, &w, ent, nent, key, rows);
        }
        /* The rows touched, labelled, taken out and cleared for the next. */
        size_t nrows = 0;
        for (size_t i = 0; i < w.n_keys; i++) {
            size_t kk = w.keys[i];
            if (sort == SORT_SYM)
                rows[kk].label = p->frames[kk].name, rows[kk].dso = p->frames[kk].dso;
            else if (sort == SORT_DSO)
                rows[kk].label = rows[kk].dso = dsos[kk];
            if (rows[kk].children > 0)
                sorted[nrows++] = rows[kk];
            rows[kk] = (row){0};
            w.used[kk] = false;
        }
        w.n_keys = 0;
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
        qsort(sorted, nrows, sizeof *sorted, row_order);
        size_t width = REPORT_DSO_COLUMN;
        for (size_t k = 0; sort == SORT_SYM && k < nrows; k++)
            width = report_dso_width(width, sorted[k].dso);
        const char *what = sort == SORT_SYM    ? "Shared Object"
                           : sort == SORT_DSO  ? "Shared Object"
                           : sort == SORT_COMM ? "Command"
                                               : "Pid     Command";
        fprintf(out, "# Children      Self    Samples  %s", what);
        if (sort == SORT_SYM)
            fprintf(out, "%*sSymbol", (int)(width + 2 - strlen(what)), "");
        fputc('\n', out);
        for (size_t k = 0; k < nrows; k++) {
            const row *rw = &sorted[k];
            fprintf(out, "  %7.2f%%  %7.2f%%  %9" PRIu64 "  ",
                    100.0 * (double)rw->children / (double)total,
                    100.0 * (double)rw->self / (double)total, rw->samples);
            if (sort == SORT_SYM) {
                report_put_column(out, rw->dso, width);
                fputs("  ", out);
                if (strcmp(rw->dso, RFRAME_KERNEL_DSO) == 0)
                    fputs("[k] ", out); /* as perf marks kernel symbols */
            } else if (sort == SORT_PID) {
                fprintf(out, "%-7d ", (int)rw->pid);
            }
            dk__put_untrusted(out, rw->label);
            fputc('\n', out);
        }
    }
    rc = 0;
oom:
    free(rows);
    free(sorted);
    free(evsum);
    free(pids);
    free(dsos);
    free(key);
    free(order);
    free(start);
    free(byev);
    twalk_free(&w);
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
    uint32_t *start = NULL, *byev = NULL; /* each event's entries */
    if (sw == NULL || seen == NULL || order == NULL || by_event(p, &start, &byev) != 0) {
        free(sw);
        free(seen);
        free(order);
        free(start);
        free(byev);
        free(path);
        free(evsum);
        cli_error("report", "out of memory while writing speedscope");
        return -1;
    }
    for (uint32_t e = 0; e < p->n_events; e++) {
        uint64_t total = evsum[e].weight;
        size_t ns = 0;
        for (size_t i = start[e]; i < start[e + 1]; i++) {
            const rsample *s = &p->entries[byev[i]];
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
    free(start);
    free(byev);
    fputs("],\n\"name\":", out);
    dk__json_string(out, p->path);
    fputs(",\"activeProfileIndex\":0,\"exporter\":\"dkperf report\"}\n", out);
    free(path);
    free(evsum);
    return 0;
}
