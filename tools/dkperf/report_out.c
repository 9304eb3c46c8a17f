/*
 * report_out.c - dkperf report's outputs from the model (report.h): the
 * perf-report-like table, folded stacks, speedscope JSON and a
 * self-contained HTML flame graph.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
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

static bool by_children_order;

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

/* The row key of frame f of sample s under sort. */
static size_t key_of(const rprofile *p, const rsample *s, uint32_t f, report_sort sort,
                     const char **dsos, size_t ndsos)
{
    switch (sort) {
    case SORT_SYM:
        return f;
    case SORT_DSO:
        for (size_t i = 0; i < ndsos; i++)
            if (strcmp(dsos[i], p->frames[f].dso) == 0)
                return i;
        return 0;
    case SORT_COMM:
        return s->comm;
    case SORT_PID:
        break;
    }
    return 0; /* SORT_PID rows are made apart */
}

int report_stdio(FILE *out, const rprofile *p, report_sort sort, bool by_children)
{
    const dkrec *r = p->rec;
    char b1[32], b2[32], b3[32];
    fprintf(out, "# dkperf report of %s: %s samples", p->path, fmt_count(p->n_samples, b1, sizeof b1));
    const char *cmd = dkrec_meta(r, "command");
    if (cmd != NULL)
        fprintf(out, " of '%s'", cmd);
    fputc('\n', out);
    fprintf(out, "# lost %s, throttled %s times%s%s\n", fmt_count(r->lost, b2, sizeof b2),
            fmt_count(r->throttled, b3, sizeof b3), r->complete ? "" : "; INCOMPLETE: ",
            r->complete ? "" : r->tail_note);
    fprintf(out, "# symbols from the images on disk: %s\n", symbols_readers());
    for (size_t i = 0; i < p->n_notes; i++)
        fprintf(out, "# %s\n", p->notes[i]);

    /* Distinct image names, for --sort dso. */
    const char **dsos = NULL;
    size_t ndsos = 0;
    if (sort == SORT_DSO) {
        dsos = calloc(p->n_frames ? p->n_frames : 1, sizeof *dsos);
        if (dsos == NULL)
            goto oom;
        for (size_t f = 0; f < p->n_frames; f++) {
            size_t k = 0;
            while (k < ndsos && strcmp(dsos[k], p->frames[f].dso) != 0)
                k++;
            if (k == ndsos)
                dsos[ndsos++] = p->frames[f].dso;
        }
    }
    /* Pids, for --sort pid. */
    int32_t *pids = NULL;
    size_t npids = 0;
    if (sort == SORT_PID) {
        pids = calloc(p->n_samples ? p->n_samples : 1, sizeof *pids);
        if (pids == NULL)
            goto oom;
        for (size_t i = 0; i < p->n_samples; i++) {
            size_t k = 0;
            while (k < npids && pids[k] != p->samples[i].pid)
                k++;
            if (k == npids)
                pids[npids++] = p->samples[i].pid;
        }
    }
    size_t nkeys = sort == SORT_SYM ? p->n_frames : sort == SORT_DSO ? ndsos
                 : sort == SORT_COMM ? p->n_comms : npids;
    row *rows = calloc(nkeys ? nkeys : 1, sizeof *rows);
    size_t *seen = calloc(nkeys ? nkeys : 1, sizeof *seen);
    if (rows == NULL || seen == NULL) {
        free(rows);
        free(seen);
        free(pids);
        free(dsos);
        goto oom;
    }
    for (uint32_t e = 0; e < r->n_events; e++) {
        memset(rows, 0, nkeys * sizeof *rows);
        memset(seen, 0, nkeys * sizeof *seen);
        uint64_t total = 0, nsamples = 0;
        for (size_t i = 0; i < p->n_samples; i++) {
            const rsample *s = &p->samples[i];
            if (s->event != e)
                continue;
            total += s->weight;
            nsamples++;
            if (sort == SORT_PID || sort == SORT_COMM) {
                size_t k = s->comm;
                if (sort == SORT_PID)
                    for (k = 0; pids[k] != s->pid; k++)
                        ;
                rows[k].self += s->weight;
                rows[k].children += s->weight;
                rows[k].samples++;
                rows[k].pid = s->pid;
                rows[k].label = p->comms[s->comm];
                continue;
            }
            for (uint32_t d = 0; d < s->depth; d++) {
                uint32_t f = p->stack[s->first + d];
                size_t k = key_of(p, s, f, sort, dsos, ndsos);
                /* Children: once per sample, however often the key recurs. */
                if (seen[k] != i + 1) {
                    seen[k] = i + 1;
                    rows[k].children += s->weight;
                }
                if (d + 1 == s->depth) {
                    rows[k].self += s->weight;
                    rows[k].samples++;
                }
                rows[k].label = sort == SORT_SYM ? p->frames[f].name : p->frames[f].dso;
                rows[k].dso = p->frames[f].dso;
            }
        }
        const dkrec_event *ev = &r->events[e];
        fprintf(out, "#\n# Event: %s (", ev->name);
        if (ev->freq)
            fprintf(out, "%" PRIu64 " samples a second", ev->freq);
        else
            fprintf(out, "one sample every %" PRIu64, ev->period);
        fprintf(out, "): %s samples, %s in all\n#\n", fmt_count(nsamples, b1, sizeof b1),
                fmt_count(total, b2, sizeof b2));
        if (nsamples == 0)
            continue;
        by_children_order = by_children;
        size_t nrows = 0;
        for (size_t k = 0; k < nkeys; k++)
            if (rows[k].children > 0)
                rows[nrows++] = rows[k];
        qsort(rows, nrows, sizeof *rows, row_order);
        const char *what = sort == SORT_SYM ? "Shared Object     Symbol"
                         : sort == SORT_DSO ? "Shared Object"
                         : sort == SORT_COMM ? "Command"
                                             : "Pid     Command";
        fprintf(out, "# Children      Self    Samples  %s\n", what);
        for (size_t k = 0; k < nrows; k++) {
            const row *w = &rows[k];
            fprintf(out, "  %7.2f%%  %7.2f%%  %9" PRIu64 "  ", 100.0 * (double)w->children / (double)total,
                    100.0 * (double)w->self / (double)total, w->samples);
            if (sort == SORT_SYM)
                fprintf(out, "%-16s  %s\n", w->dso, w->label);
            else if (sort == SORT_PID)
                fprintf(out, "%-7d %s\n", (int)w->pid, w->label);
            else
                fprintf(out, "%s\n", w->label);
        }
    }
    free(rows);
    free(seen);
    free(pids);
    free(dsos);
    return 0;
oom:
    cli_error("report", "out of memory while sorting the report");
    return -1;
}

/* ------------------------------------------------------------------ */
/* Folded stacks                                                        */
/* ------------------------------------------------------------------ */

static const rprofile *order_profile;

/* Samples by comm, then by stack (root first). */
static int stack_order(const void *a, const void *b)
{
    const rprofile *p = order_profile;
    const rsample *x = &p->samples[*(const size_t *)a], *y = &p->samples[*(const size_t *)b];
    int c = strcmp(p->comms[x->comm], p->comms[y->comm]);
    if (c != 0)
        return c;
    for (uint32_t d = 0; d < x->depth && d < y->depth; d++) {
        uint32_t fx = p->stack[x->first + d], fy = p->stack[y->first + d];
        if (fx != fy)
            return strcmp(p->frames[fx].name, p->frames[fy].name) < 0 ? -1 : 1;
    }
    return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static bool same_stack(const rprofile *p, const rsample *x, const rsample *y)
{
    if (x->comm != y->comm || x->depth != y->depth)
        return false;
    return memcmp(p->stack + x->first, p->stack + y->first, x->depth * sizeof *p->stack) == 0;
}

/* A frame name as the folded format allows: no ';' and no line break. */
static void put_folded_name(FILE *out, const char *s)
{
    for (; *s; s++)
        fputc(*s == ';' || *s == '\n' || *s == '\r' ? '_' : *s, out);
}

/* The samples of event (all with -1), sorted by stack; NULL when none. */
static size_t *sorted_samples(const rprofile *p, int event, size_t *n)
{
    size_t *idx = malloc((p->n_samples ? p->n_samples : 1) * sizeof *idx);
    *n = 0;
    if (idx == NULL)
        return NULL;
    for (size_t i = 0; i < p->n_samples; i++)
        if (event < 0 || p->samples[i].event == (uint32_t)event)
            idx[(*n)++] = i;
    order_profile = p;
    qsort(idx, *n, sizeof *idx, stack_order);
    return idx;
}

int report_folded(FILE *out, const rprofile *p, int event)
{
    size_t n;
    size_t *idx = sorted_samples(p, event, &n);
    if (idx == NULL) {
        cli_error("report", "out of memory while folding %zu stacks", p->n_samples);
        return -1;
    }
    for (size_t i = 0; i < n;) {
        const rsample *s = &p->samples[idx[i]];
        size_t j = i + 1;
        while (j < n && same_stack(p, s, &p->samples[idx[j]]))
            j++;
        put_folded_name(out, p->comms[s->comm]);
        for (uint32_t d = 0; d < s->depth; d++) {
            fputc(';', out);
            put_folded_name(out, p->frames[p->stack[s->first + d]].name);
        }
        fprintf(out, " %zu\n", j - i);
        i = j;
    }
    free(idx);
    return 0;
}

/* ------------------------------------------------------------------ */
/* speedscope                                                           */
/* ------------------------------------------------------------------ */

static bool time_event(const char *name)
{
    return strcmp(name, "cpu-clock") == 0 || strcmp(name, "task-clock") == 0;
}

int report_speedscope(FILE *out, const rprofile *p)
{
    const dkrec *r = p->rec;
    fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n", out);
    fputs("\"shared\":{\"frames\":[", out);
    for (size_t f = 0; f < p->n_frames; f++) {
        fputs(f ? ",\n{\"name\":" : "\n{\"name\":", out);
        json_string(out, p->frames[f].name);
        fputs(",\"file\":", out);
        json_string(out, p->frames[f].dso);
        fputc('}', out);
    }
    fputs("]},\n\"profiles\":[", out);
    for (uint32_t e = 0; e < r->n_events; e++) {
        uint64_t total = 0;
        for (size_t i = 0; i < p->n_samples; i++)
            if (p->samples[i].event == e)
                total += p->samples[i].weight;
        fputs(e ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":", out);
        json_string(out, r->events[e].name);
        fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
                time_event(r->events[e].name) ? "nanoseconds" : "none", total);
        bool first = true;
        for (size_t i = 0; i < p->n_samples; i++) {
            const rsample *s = &p->samples[i];
            if (s->event != e)
                continue;
            fputs(first ? "[" : ",\n[", out);
            first = false;
            for (uint32_t d = 0; d < s->depth; d++)
                fprintf(out, d ? ",%u" : "%u", p->stack[s->first + d]);
            fputc(']', out);
        }
        fputs("],\n\"weights\":[", out);
        first = true;
        for (size_t i = 0; i < p->n_samples; i++) {
            if (p->samples[i].event != e)
                continue;
            fprintf(out, first ? "%" PRIu64 : ",%" PRIu64, p->samples[i].weight);
            first = false;
        }
        fputs("]}", out);
    }
    fputs("],\n\"name\":", out);
    json_string(out, p->path);
    fputs(",\"activeProfileIndex\":0,\"exporter\":\"dkperf report\"}\n", out);
    return 0;
}

/* ------------------------------------------------------------------ */
/* HTML flame graph                                                     */
/* ------------------------------------------------------------------ */

typedef struct tnode {
    uint32_t frame; /* UINT32_MAX: the root */
    uint32_t depth;
    uint64_t weight;
    size_t first_child, next_sibling; /* 0: none (the root is node 0) */
} tnode;

static void html_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*s, out);
        }
    }
}

/* A warm colour from the name, as flame graphs are drawn. */
static void colour(const char *name, int *rgb)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *c = name; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    rgb[0] = 205 + (int)(h % 51);
    rgb[1] = 60 + (int)((h >> 16) % 150);
    rgb[2] = (int)((h >> 32) % 56);
}

static const char flame_script[] =
    "(function(){\n"
    "var svg=document.getElementById('flame'),gs=[].slice.call(svg.querySelectorAll('g.f'));\n"
    "var W=svg.getBoundingClientRect().width||1200,total=+svg.dataset.total;\n"
    "function fit(){gs.forEach(function(g){var t=g.querySelector('text'),r=g.querySelector('rect');\n"
    " if(g.style.display==='none')return;var w=parseFloat(r.getAttribute('width'))/100*W;\n"
    " var n=Math.floor((w-6)/7),s=g.dataset.n;t.textContent=n<3?'':(s.length>n?s.slice(0,n-2)+'..':s);});}\n"
    "function zoom(g){var x0=+g.dataset.x,w0=+g.dataset.w,d0=+g.dataset.d;\n"
    " gs.forEach(function(h){var x=+h.dataset.x,w=+h.dataset.w,d=+h.dataset.d,r=h.querySelector('rect'),t=h.querySelector('text');\n"
    "  var inside=x>=x0-1e-12&&x+w<=x0+w0+1e-12&&d>=d0,above=d<d0&&x<=x0+1e-12&&x+w>=x0+w0-1e-12;\n"
    "  if(!inside&&!above){h.style.display='none';return;}h.style.display='';\n"
    "  var nx=inside?(x-x0)/w0:0,nw=inside?w/w0:1;r.setAttribute('x',(nx*100)+'%');r.setAttribute('width',(nw*100)+'%');\n"
    "  t.setAttribute('x',(nx*100)+'%');h.style.opacity=above?0.6:1;});fit();}\n"
    "gs.forEach(function(g){g.addEventListener('click',function(){zoom(g);});});\n"
    "document.getElementById('reset').addEventListener('click',function(){zoom(gs[0]);});\n"
    "var box=document.getElementById('search'),info=document.getElementById('matched');\n"
    "box.addEventListener('input',function(){var q=box.value,re=null;\n"
    " if(q){try{re=new RegExp(q);}catch(e){re=null;}}var m=0,cover=[];\n"
    " gs.forEach(function(g){var r=g.querySelector('rect'),hit=q&&(re?re.test(g.dataset.n):g.dataset.n.indexOf(q)>=0);\n"
    "  r.setAttribute('fill',hit?'rgb(230,0,230)':r.dataset.c);\n"
    "  if(hit){var x=+g.dataset.x,w=+g.dataset.w;if(!cover.some(function(c){return x>=c[0]-1e-12&&x+w<=c[1]+1e-12;})){cover.push([x,x+w]);m+=w;}}});\n"
    " info.textContent=q?('matched: '+(m*100).toFixed(1)+'% of '+total+' samples'):'';});\n"
    "var h=decodeURIComponent(location.hash||'');\n"
    "if(h.indexOf('#search=')===0){box.value=h.slice(8);box.dispatchEvent(new Event('input'));}\n"
    "fit();})();\n";

int report_html(FILE *out, const rprofile *p, int event)
{
    const dkrec *r = p->rec;
    uint32_t e = event < 0 ? 0 : (uint32_t)event;
    size_t cap = 1024, n = 1;
    tnode *t = calloc(cap, sizeof *t);
    if (t == NULL)
        goto oom;
    t[0].frame = UINT32_MAX;
    uint32_t maxdepth = 0;
    for (size_t i = 0; i < p->n_samples; i++) {
        const rsample *s = &p->samples[i];
        if (s->event != e)
            continue;
        size_t at = 0;
        t[0].weight++;
        for (uint32_t d = 0; d < s->depth; d++) {
            uint32_t f = p->stack[s->first + d];
            size_t c = t[at].first_child, last = 0;
            while (c != 0 && t[c].frame != f) {
                last = c;
                c = t[c].next_sibling;
            }
            if (c == 0) {
                if (n == cap) {
                    tnode *q = realloc(t, cap * 2 * sizeof *t);
                    if (q == NULL)
                        goto oom;
                    t = q;
                    cap *= 2;
                }
                c = n++;
                memset(&t[c], 0, sizeof t[c]);
                t[c].frame = f;
                t[c].depth = d + 1;
                if (last)
                    t[last].next_sibling = c;
                else
                    t[at].first_child = c;
            }
            t[c].weight++;
            at = c;
        }
        if (s->depth > maxdepth)
            maxdepth = s->depth;
    }
    const int rowh = 17, top = 10;
    int height = top + (int)(maxdepth + 1) * rowh + 10;
    const char *ename = e < r->n_events ? r->events[e].name : "(no event)";
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", out);
    html_text(out, p->path);
    fputs(" - dkperf flame graph</title>\n<style>\n"
          "body{font:13px sans-serif;margin:12px;background:#fff;color:#222}\n"
          "svg{width:100%;display:block;background:#fafafa}\n"
          "g.f text{font:11px monospace;fill:#000;pointer-events:none}\n"
          "g.f:hover rect{stroke:#000;stroke-width:0.5}\n"
          "#matched{margin-left:1em;color:#a0a}\n"
          "</style></head><body>\n<h1 style=\"font-size:16px\">Flame graph: ", out);
    html_text(out, ename);
    fprintf(out, ", %" PRIu64 " samples of ", t[0].weight);
    html_text(out, dkrec_meta(r, "command") ? dkrec_meta(r, "command") : p->path);
    fputs("</h1>\n<p><input id=\"search\" placeholder=\"search (regular expression)\" size=\"40\">"
          " <button id=\"reset\">reset zoom</button><span id=\"matched\"></span></p>\n", out);
    if (!r->complete) {
        fputs("<p><b>Incomplete recording:</b> ", out);
        html_text(out, r->tail_note);
        fputs("</p>\n", out);
    }
    fprintf(out, "<svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" height=\"%d\" "
                 "data-total=\"%" PRIu64 "\">\n", height, t[0].weight);
    /* Depth first; x of each node from its parent's and its elder siblings'. */
    double *x = calloc(n, sizeof *x);
    size_t *stack = calloc(n, sizeof *stack);
    if (x == NULL || stack == NULL) {
        free(x);
        free(stack);
        goto oom;
    }
    size_t sp = 0, skipped = 0;
    stack[sp++] = 0;
    double total = t[0].weight ? (double)t[0].weight : 1.0;
    while (sp > 0) {
        size_t k = stack[--sp];
        double w = (double)t[k].weight / total;
        if (w < 0.0002) { /* narrower than a quarter pixel at 1200 px: left out */
            skipped++;
            continue;
        }
        const char *name = k == 0 ? "all" : p->frames[t[k].frame].name;
        int rgb[3];
        colour(name, rgb);
        if (k == 0)
            rgb[0] = 200, rgb[1] = 200, rgb[2] = 200;
        int y = height - 10 - (int)(t[k].depth + 1) * rowh;
        fprintf(out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\" data-n=\"", x[k],
                w, t[k].depth);
        html_text(out, name);
        fputs("\"><title>", out);
        html_text(out, name);
        if (k != 0) {
            fputs(" (", out);
            html_text(out, p->frames[t[k].frame].dso);
            fputc(')', out);
        }
        fprintf(out, ": %" PRIu64 " samples, %.2f%%</title>", t[k].weight, 100.0 * w);
        fprintf(out, "<rect x=\"%.6f%%\" y=\"%d\" width=\"%.6f%%\" height=\"%d\" rx=\"2\" "
                     "fill=\"rgb(%d,%d,%d)\" data-c=\"rgb(%d,%d,%d)\"/>",
                100.0 * x[k], y, 100.0 * w, rowh - 1, rgb[0], rgb[1], rgb[2], rgb[0], rgb[1], rgb[2]);
        fprintf(out, "<text x=\"%.6f%%\" dx=\"3\" y=\"%d\"></text></g>\n", 100.0 * x[k], y + rowh - 5);
        /* Children left to right: push them in reverse. */
        double cx = x[k];
        size_t first = sp;
        for (size_t c = t[k].first_child; c != 0; c = t[c].next_sibling) {
            x[c] = cx;
            cx += (double)t[c].weight / total;
            stack[sp++] = c;
        }
        for (size_t a = first, b = sp; b > a + 1; a++, b--) {
            size_t tmp = stack[a];
            stack[a] = stack[b - 1];
            stack[b - 1] = tmp;
        }
    }
    fputs("</svg>\n", out);
    if (skipped)
        fprintf(out, "<p>%zu frames narrower than 0.02%% are not drawn.</p>\n", skipped);
    fprintf(out, "<script>\n%s</script>\n</body></html>\n", flame_script);
    free(x);
    free(stack);
    free(t);
    return 0;
oom:
    free(t);
    cli_error("report", "out of memory while drawing the flame graph");
    return -1;
}
