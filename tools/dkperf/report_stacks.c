/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_stacks.c - dkperf report's outputs drawn from the stacks merged by
 * printed name (report.h's model): folded stacks and a self-contained HTML
 * flame graph.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/text.h"
#include "report.h"
#include "symbols.h"

/* ------------------------------------------------------------------ */
/* Folded stacks                                                        */
/* ------------------------------------------------------------------ */

/*
 * The stacks as printed: frames with the same printed name are one, however
 * many images or addresses they came from (two images' main, a static
 * helper in two libraries). A name node is interned by (parent name node,
 * name); of_node maps each stack node to its name node; rank orders the
 * name nodes depth first with siblings by name, so that sorting by rank
 * sorts the stacks as the folded format lists them.
 */
typedef struct ntree {
    char **names; /* printed names, each once */
    size_t n_names;
    uint32_t *name_of;                                     /* by frame */
    uint32_t *of_node;                                     /* by stack node */
    uint32_t *parent, *name, *frame, *rank, *first, *next; /* by name node */
    bool *mixed; /* frames of several images share the name node */
    size_t n;
} ntree;

static void ntree_free(ntree *t)
{
    for (size_t i = 0; i < t->n_names; i++)
        free(t->names[i]);
    free(t->names);
    free(t->name_of);
    free(t->of_node);
    free(t->parent);
    free(t->name);
    free(t->frame);
    free(t->rank);
    free(t->first);
    free(t->next);
    free(t->mixed);
    memset(t, 0, sizeof *t);
}

/* A name as the folded format allows: escaped as untrusted text, so no
 * line break or control byte, and no ';', which separates frames; mark
 * (a kernel frame's RFRAME_KERNEL_MARK, or "") after it. */
static char *folded_name(const char *s, const char *mark)
{
    size_t n = dk__untrusted(NULL, 0, s), m = strlen(mark);
    char *c = malloc(n + m + 1);
    if (c == NULL)
        return NULL;
    dk__untrusted(c, n + 1, s);
    memcpy(c + n, mark, m + 1);
    for (char *q = c; *q; q++)
        if (*q == ';')
            *q = '_';
    return c;
}

static char **order_names;

static int name_order(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(order_names[x], order_names[y]);
    return c != 0 ? c : (x < y ? -1 : x > y);
}

static const ntree *order_tree;

static int child_order(const void *a, const void *b)
{
    const ntree *t = order_tree;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return name_order(&t->name[x], &t->name[y]);
}

static int ntree_make(ntree *t, const rprofile *p)
{
    memset(t, 0, sizeof *t);
    size_t nf = p->n_frames ? p->n_frames : 1, nn = p->n_nodes;
    uint32_t *by = calloc(nf, sizeof *by);
    t->names = calloc(nf, sizeof *t->names);
    t->name_of = calloc(nf, sizeof *t->name_of);
    t->of_node = calloc(nn, sizeof *t->of_node);
    t->parent = calloc(nn, sizeof *t->parent);
    t->name = calloc(nn, sizeof *t->name);
    t->frame = calloc(nn, sizeof *t->frame);
    t->rank = calloc(nn, sizeof *t->rank);
    t->first = calloc(nn, sizeof *t->first);
    t->next = calloc(nn, sizeof *t->next);
    t->mixed = calloc(nn, sizeof *t->mixed);
    rmap m = {0};
    uint32_t *kid = NULL, *stack = NULL;
    char **printed = calloc(nf, sizeof *printed);
    int rc = -1; /* out of memory until the tree is made */
    if (by == NULL || printed == NULL || t->names == NULL || t->name_of == NULL ||
        t->of_node == NULL || t->parent == NULL || t->name == NULL || t->frame == NULL ||
        t->rank == NULL || t->first == NULL || t->next == NULL || t->mixed == NULL)
        goto oom;
    /* Frame names as printed, each once, numbered in name order. */
    for (size_t f = 0; f < p->n_frames; f++) {
        if ((printed[f] = folded_name(p->frames[f].name,
                                      rframe_kernel(&p->frames[f]) ? RFRAME_KERNEL_MARK : "")) ==
            NULL)
            goto oom;
        by[f] = (uint32_t)f;
    }
    order_names = printed;
    qsort(by, p->n_frames, sizeof *by, name_order);
    for (size_t i = 0; i < p->n_frames; i++) {
        uint32_t f = by[i];
        if (t->n_names == 0 || strcmp(t->names[t->n_names - 1], printed[f]) != 0) {
            t->names[t->n_names++] = printed[f];
            printed[f] = NULL;
        }
        t->name_of[f] = (uint32_t)t->n_names - 1;
    }
    /* Name nodes; node 0 is the root of both trees. */
    t->n = 1;
    for (size_t v = 1; v < nn; v++) {
        const rnode *s = &p->nodes[v];
        uint32_t par = t->of_node[s->parent], nm = t->name_of[s->frame];
        int64_t id = rmap_get(&m, par, nm);
        if (id < 0) {
            id = (int64_t)t->n++;
            if (rmap_put(&m, par, nm, (uint32_t)id) != 0)
                goto oom;
            t->parent[id] = par;
            t->name[id] = nm;
            t->frame[id] = s->frame;
        } else if (strcmp(p->frames[t->frame[id]].dso, p->frames[s->frame].dso) != 0) {
            t->mixed[id] = true;
        }
        t->of_node[v] = (uint32_t)id;
    }
    /* Children by name, then ranks depth first. */
    kid = calloc(t->n, sizeof *kid);
    stack = calloc(t->n, sizeof *stack);
    if (kid == NULL || stack == NULL)
        goto oom;
    for (size_t v = 1; v < t->n; v++)
        kid[v - 1] = (uint32_t)v;
    order_tree = t;
    order_names = t->names;
    qsort(kid, t->n - 1, sizeof *kid, child_order);
    for (size_t i = t->n - 1; i-- > 0;) {
        uint32_t v = kid[i];
        t->next[v] = t->first[t->parent[v]];
        t->first[t->parent[v]] = v;
    }
    size_t sp = 0;
    uint32_t r = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        uint32_t v = stack[--sp];
        t->rank[v] = r++;
        size_t at = sp;
        for (uint32_t c = t->first[v]; c != 0; c = t->next[c])
            stack[sp++] = c;
        for (size_t x = at, y = sp; y > x + 1; x++, y--) {
            uint32_t tmp = stack[x];
            stack[x] = stack[y - 1];
            stack[y - 1] = tmp;
        }
    }
    rc = 0;
oom:
    for (size_t f = 0; printed != NULL && f < p->n_frames; f++)
        free(printed[f]);
    free(printed);
    free(by);
    free(kid);
    free(stack);
    rmap_free(&m);
    if (rc != 0)
        ntree_free(t);
    return rc;
}

/* A comm as printed, and its place among them. */
typedef struct fline {
    uint32_t comm_rank, node_rank, node;
    uint32_t comm;
    uint64_t weight; /* its samples, or their weights when some are off-CPU */
} fline;

static int fline_order(const void *a, const void *b)
{
    const fline *x = a, *y = b;
    if (x->comm_rank != y->comm_rank)
        return x->comm_rank < y->comm_rank ? -1 : 1;
    return x->node_rank < y->node_rank ? -1 : x->node_rank > y->node_rank;
}

int report_folded(FILE *out, const rprofile *p, int event)
{
    ntree t;
    if (ntree_make(&t, p) != 0) {
        cli_error("report", "out of memory while folding %zu stacks", p->n_entries);
        return -1;
    }
    /* Comms as printed, ranked by name; equal ones share a rank. */
    char **cn = calloc(p->n_comms ? p->n_comms : 1, sizeof *cn);
    uint32_t *cby = calloc(p->n_comms ? p->n_comms : 1, sizeof *cby);
    uint32_t *crank = calloc(p->n_comms ? p->n_comms : 1, sizeof *crank);
    fline *lines = calloc(p->n_entries ? p->n_entries : 1, sizeof *lines);
    uint32_t *path = calloc((size_t)p->max_depth + 1, sizeof *path);
    int rc = -1;
    if (cn == NULL || cby == NULL || crank == NULL || lines == NULL || path == NULL)
        goto out;
    for (size_t c = 0; c < p->n_comms; c++) {
        if ((cn[c] = folded_name(p->comms[c], "")) == NULL)
            goto out;
        cby[c] = (uint32_t)c;
    }
    order_names = cn;
    qsort(cby, p->n_comms, sizeof *cby, name_order);
    for (size_t i = 0; i < p->n_comms; i++)
        crank[cby[i]] = i > 0 && strcmp(cn[cby[i]], cn[cby[i - 1]]) == 0 ? crank[cby[i - 1]]
                                                                         : (uint32_t)i;
    size_t n = 0;
    for (size_t i = 0; i < p->n_entries; i++) {
        const rsample *s = &p->entries[i];
        if (event >= 0 && s->event != (uint32_t)event)
            continue;
        uint32_t v = t.of_node[s->stack];
        lines[n++] = (fline){crank[s->comm], t.rank[v], v, s->comm, report_entry_value(p, s)};
    }
    qsort(lines, n, sizeof *lines, fline_order);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        uint64_t sum = lines[i].weight;
        while (j < n && lines[j].comm_rank == lines[i].comm_rank && lines[j].node == lines[i].node)
            sum += lines[j++].weight;
        fputs(cn[lines[i].comm], out);
        size_t d = 0;
        for (uint32_t v = lines[i].node; v != 0; v = t.parent[v])
            path[d++] = v;
        while (d-- > 0) {
            fputc(';', out);
            fputs(t.names[t.name[path[d]]], out);
        }
        fprintf(out, " %" PRIu64 "\n", sum);
        i = j;
    }
    rc = 0;
out:
    if (rc != 0)
        cli_error("report", "out of memory while folding %zu stacks", p->n_entries);
    for (size_t c = 0; cn != NULL && c < p->n_comms; c++)
        free(cn[c]);
    free(cn);
    free(cby);
    free(crank);
    free(lines);
    free(path);
    ntree_free(&t);
    return rc;
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
    "var fg=document.getElementById('fg');fg.scrollTop=fg.scrollHeight;\n"
    "fit();})();\n";

/*
 * The share of each of the name nodes of nt in old's flame graph of its
 * event called ename: the node of old's tree with the same names from the
 * root, or 0 where old has none. Parents have smaller ids than their
 * children in both trees, so one pass in id order finds them all.
 */
static double *old_shares(const ntree *nt, const rprofile *old, const char *ename)
{
    ntree ot;
    if (ntree_make(&ot, old) != 0)
        return NULL;
    uint32_t oe = UINT32_MAX;
    for (size_t i = 0; i < old->n_events; i++)
        if (strcmp(old->events[i].name, ename) == 0)
            oe = (uint32_t)i;
    double *share = calloc(nt->n, sizeof *share);
    uint64_t *ow = calloc(ot.n, sizeof *ow);
    int64_t *match = calloc(nt->n, sizeof *match);
    rmap m = {0};
    bool ok = share != NULL && ow != NULL && match != NULL;
    for (size_t v = 1; ok && v < ot.n; v++)
        ok = rmap_put(&m, ot.parent[v], ot.name[v], (uint32_t)v) == 0;
    if (ok) {
        for (size_t i = 0; i < old->n_entries; i++)
            if (old->entries[i].event == oe)
                ow[ot.of_node[old->entries[i].stack]] += report_entry_value(old, &old->entries[i]);
        for (size_t v = ot.n; v-- > 1;)
            ow[ot.parent[v]] += ow[v];
        double total = ow[0] ? (double)ow[0] : 1.0;
        share[0] = (double)ow[0] / total;
        for (size_t k = 1; k < nt->n; k++) {
            int64_t op = match[nt->parent[k]];
            const char *name = nt->names[nt->name[k]];
            /* The old tree's names are sorted (ntree_make). */
            size_t lo = 0, hi = ot.n_names;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(ot.names[mid], name) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            match[k] = -1;
            if (op >= 0 && lo < ot.n_names && strcmp(ot.names[lo], name) == 0)
                match[k] = rmap_get(&m, (uint64_t)op, lo);
            if (match[k] >= 0)
                share[k] = (double)ow[match[k]] / total;
        }
    }
    free(ow);
    free(match);
    rmap_free(&m);
    ntree_free(&ot);
    if (!ok) {
        free(share);
        return NULL;
    }
    return share;
}

/* Red where a frame's share grew, blue where it shrank, the deeper the
 * larger the change against the largest one drawn (max). */
static void diff_colour(double change, double max, int *rgb)
{
    double i = max > 0 ? fabs(change) / max : 0;
    int fade = (int)(225.0 * (1.0 - (i > 1 ? 1 : i)) + 0.5);
    if (change > 0)
        rgb[0] = 255, rgb[1] = rgb[2] = fade;
    else if (change < 0)
        rgb[0] = rgb[1] = fade, rgb[2] = 255;
    else
        rgb[0] = rgb[1] = rgb[2] = 235;
}

int report_html(FILE *out, const rprofile *p, int event)
{
    return report_html_diff(out, p, NULL, event);
}

int report_html_diff(FILE *out, const rprofile *p, const rprofile *old, int event)
{
    const dkrec *r = p->rec;
    uint32_t e = event < 0 ? 0 : (uint32_t)event;
    /* The flame graph merges frames by name, as the folded stacks do. */
    ntree nt;
    if (ntree_make(&nt, p) != 0) {
        cli_error("report", "out of memory while drawing the flame graph");
        return -1;
    }
    size_t n = nt.n;
    double *was = NULL, maxchange = 0;
    tnode *t = calloc(n, sizeof *t);
    if (t == NULL)
        goto oom;
    for (size_t i = 0; i < p->n_entries; i++)
        if (p->entries[i].event == e)
            t[nt.of_node[p->entries[i].stack]].weight += report_entry_value(p, &p->entries[i]);
    uint32_t maxdepth = 0;
    t[0].frame = UINT32_MAX;
    for (size_t k = 1; k < n; k++) {
        t[k].frame = nt.frame[k];
        t[k].depth = t[nt.parent[k]].depth + 1;
        t[k].first_child = nt.first[k];
        t[k].next_sibling = nt.next[k];
    }
    t[0].first_child = nt.first[0];
    for (size_t k = n; k-- > 1;) {
        t[nt.parent[k]].weight += t[k].weight;
        if (t[k].weight > 0 && t[k].depth > maxdepth)
            maxdepth = t[k].depth;
    }
    const char *ename = e < p->n_events ? p->events[e].name : "(no event)";
    if (old != NULL) {
        if ((was = old_shares(&nt, old, ename)) == NULL)
            goto oom;
        double tot = t[0].weight ? (double)t[0].weight : 1.0;
        for (size_t k = 1; k < n; k++)
            if (t[k].weight > 0 && fabs((double)t[k].weight / tot - was[k]) > maxchange)
                maxchange = fabs((double)t[k].weight / tot - was[k]);
    }
    const int rowh = 17, top = 10;
    int height = top + (int)(maxdepth + 1) * rowh + 10;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", out);
    dk__put_html(out, p->path);
    fputs(" - dkperf flame graph</title>\n<style>\n"
          "body{font:13px sans-serif;margin:12px;background:#fff;color:#222}\n"
          "svg{width:100%;display:block;background:#fafafa}\n"
          /* A deep graph scrolls in its own box, which opens at its root
           * (the bottom) where the wide frames are, below the title. */
          "#fg{max-height:85vh;overflow-y:auto}\n"
          "g.f text{font:11px monospace;fill:#000;pointer-events:none}\n"
          "g.f:hover rect{stroke:#000;stroke-width:0.5}\n"
          "#matched{margin-left:1em;color:#a0a}\n"
          "</style></head><body>\n<h1 style=\"font-size:16px\">",
          out);
    fputs(old != NULL ? "Differential flame graph: " : "Flame graph: ", out);
    dk__put_html(out, ename);
    const char *unit = p->has_off_cpu && report_time_event(ename) ? "ns" : "samples";
    fprintf(out, ", %" PRIu64 " %s of ", t[0].weight, unit);
    dk__put_html(out, dkrec_meta(r, "command") ? dkrec_meta(r, "command") : p->path);
    if (old != NULL) {
        fputs(" against ", out);
        dk__put_html(out, old->path);
    }
    fputs("</h1>\n", out);
    if (old != NULL) {
        fputs("<p>Widths from ", out);
        dk__put_html(out, p->path);
        fputs("; <span style=\"color:#d00\">red</span>: a larger share of the samples than in ",
              out);
        dk__put_html(out, old->path);
        fputs(", <span style=\"color:#00d\">blue</span>: a smaller one, the deeper the larger "
              "the change.</p>\n",
              out);
    }
    fputs("<p><input id=\"search\" placeholder=\"search (regular expression)\" size=\"40\">"
          " <button id=\"reset\">reset zoom</button><span id=\"matched\"></span></p>\n",
          out);
    if (p->incomplete != NULL) {
        fputs("<p><b>Incomplete recording:</b> ", out);
        if (p->n_recs > 1) {
            for (size_t i = 0; i < p->n_recs; i++)
                if (p->recs[i] == p->incomplete)
                    dk__put_html(out, p->paths[i]);
            fputs(": ", out);
        }
        dk__put_html(out, p->incomplete->tail_note);
        fputs("</p>\n", out);
    }
    fprintf(out,
            "<div id=\"fg\"><svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" height=\"%d\" "
            "data-total=\"%" PRIu64 "\">\n",
            height, t[0].weight);
    /* Depth first; x of each node from its parent's and its elder siblings'. */
    double *x = calloc(n, sizeof *x);
    size_t *stack = calloc(n, sizeof *stack);
    bool *off = calloc(n, sizeof *off); /* under the [off-cpu] frame */
    if (x == NULL || stack == NULL || off == NULL) {
        free(x);
        free(stack);
        free(off);
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
        if (was != NULL)
            diff_colour(w - was[k], maxchange, rgb);
        else
            colour(name, rgb);
        if (was == NULL && off[k]) { /* off-CPU: blue, as off-CPU flame graphs are drawn */
            int red = rgb[0];
            rgb[0] = rgb[2];
            rgb[2] = red;
        }
        if (k == 0)
            rgb[0] = 200, rgb[1] = 200, rgb[2] = 200;
        int y = height - 10 - (int)(t[k].depth + 1) * rowh;
        const char *mark = k != 0 && rframe_kernel(&p->frames[t[k].frame]) ? RFRAME_KERNEL_MARK
                                                                           : "";
        fprintf(out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\" data-n=\"", x[k],
                w, t[k].depth);
        dk__put_html(out, name);
        fputs(mark, out);
        fputs("\"><title>", out);
        dk__put_html(out, name);
        fputs(mark, out);
        if (k != 0) {
            fputs(" (", out);
            dk__put_html(out, nt.mixed[k] ? "several images" : p->frames[t[k].frame].dso);
            fputc(')', out);
        }
        fprintf(out, ": %" PRIu64 " %s, %.2f%%", t[k].weight, unit, 100.0 * w);
        if (was != NULL)
            fprintf(out, " (was %.2f%%: %+.2f)", 100.0 * was[k], 100.0 * (w - was[k]));
        fputs("</title>", out);
        fprintf(out,
                "<rect x=\"%.6f%%\" y=\"%d\" width=\"%.6f%%\" height=\"%d\" rx=\"2\" "
                "fill=\"rgb(%d,%d,%d)\" data-c=\"rgb(%d,%d,%d)\"/>",
                100.0 * x[k], y, 100.0 * w, rowh - 1, rgb[0], rgb[1], rgb[2], rgb[0], rgb[1],
                rgb[2]);
        fprintf(out, "<text x=\"%.6f%%\" dx=\"3\" y=\"%d\"></text></g>\n", 100.0 * x[k],
                y + rowh - 5);
        /* Children left to right: push them in reverse. */
        double cx = x[k];
        size_t first = sp;
        for (size_t c = t[k].first_child; c != 0; c = t[c].next_sibling) {
            x[c] = cx;
            off[c] = off[k] || rframe_off_cpu(&p->frames[t[c].frame]);
            cx += (double)t[c].weight / total;
            stack[sp++] = c;
        }
        for (size_t a = first, b = sp; b > a + 1; a++, b--) {
            size_t tmp = stack[a];
            stack[a] = stack[b - 1];
            stack[b - 1] = tmp;
        }
    }
    fputs("</svg></div>\n", out);
    if (skipped)
        fprintf(out, "<p>%zu frames narrower than 0.02%% are not drawn.</p>\n", skipped);
    fprintf(out, "<script>\n%s</script>\n</body></html>\n", flame_script);
    free(x);
    free(stack);
    free(off);
    free(t);
    free(was);
    ntree_free(&nt);
    return 0;
oom:
    free(t);
    free(was);
    ntree_free(&nt);
    cli_error("report", "out of memory while drawing the flame graph");
    return -1;
}
