/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_model.c - a recording's samples turned into stacks of frames
 * (see report.h). Each distinct (process, stack node) is symbolized once;
 * a frame is a (function, image) pair, interned; a stack is a node of a
 * tree interned by (parent, frame), so a stack that many samples share, or
 * that is the prefix of many, is stored once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "demangle.h"
#include "report.h"
#include "symbols.h"

typedef struct fslot {
    uint64_t hash;
    uint32_t id1; /* frame id + 1; 0: empty */
} fslot;

/* What is built once for the model, whatever the recordings fed to it. */
typedef struct rbuilder {
    rprofile *p;
    symbols *syms;
    fslot *fslots;
    size_t nfslots;
    rmap stacks;           /* (parent node, frame) -> node */
    size_t work, max_work; /* translations made, and the most allowed */
    uint32_t *chain;       /* a sample's recording nodes not yet in memo */
    size_t cap_chain;
    size_t cap_frames, cap_nodes, cap_comms, cap_notes, cap_entries, cap_recs;
    size_t max_nodes;
    rmap comm_ids;   /* (hash of a comm name, probe) -> its index in comms */
    rmap note_ids;   /* (hash of a note, probe) -> its index in notes */
    kallsyms *ksyms; /* the kernel's symbols, read at the first kernel chain */
    bool ksyms_tried;
    rmap entry_ids; /* (hash of an entry's key, probe) -> its index in entries */
    bool demangle;  /* C++ and Rust names made readable */
    bool timed;     /* time_lo and time_hi hold a recording's samples */
    /* What belongs to the recording being fed (its node ids, maps and
     * comm records are its own): made anew for each. */
    const dkrec *rec;
    size_t max_memo;
    rmap memo;   /* (process key, generation << 32 | recording node) -> node, as a return address */
    rmap leaves; /* the same, as a sample's leaf */
    rmaps maps;  /* each process's maps, in time */
    const dkrec_comm **comm_by_pid; /* the comm records in comm_order */
    rmap kframes;                   /* (0, recording node) -> kernel frame */
    rmap kleaves; /* (report node of the user stack, kernel recording node) -> node */
} rbuilder;

/* A recording's stack nodes take 2 bytes or more each in the file, its
 * samples 3 or more: the stacks of the report (a node per recording node
 * and process whose images differ, one more for a kernel sample) come to
 * fewer nodes than the file has bytes, but for a file built to multiply
 * them (thousands of processes, each with its own image at the same
 * addresses, sampling one deep stack): refused past this many. */
#define NODES_FREE 65536u
#define NODES_MAX (1u << 30)

/* Each recording node is translated once for every key of the processes
 * whose samples reach it: once in most recordings (a process's stacks are
 * at its own addresses), more when processes whose maps differ sample the
 * same addresses, or a process samples them under images mapped over
 * each other (once per generation of its maps). A file built to multiply that work (thousands of such
 * processes, each sampling one deep stack) is refused past this many
 * translations per node allowed. */
#define WORK_PER_NODE 4u

/* The translations the memo holds before it starts again: this many,
 * and one more for every MEMO_BYTES bytes of the file. */
#define MEMO_FREE 65536u
#define MEMO_BYTES 16u

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s != NULL && s[1] != '\0' ? s + 1 : path;
}

static int grow(void **a, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    void *q = realloc(*a, c * size);
    if (q == NULL)
        return -1;
    *a = q;
    *cap = c;
    return 0;
}

/* The id of frame (name, dso), made when new; -1 when out of memory. */
static int64_t frame_id(rbuilder *b, const char *name, const char *dso)
{
    rprofile *p = b->p;
    if ((p->n_frames + 1) * 2 >= b->nfslots) {
        size_t n = b->nfslots ? b->nfslots * 2 : 1024;
        if (rslots_mul == 0)
            rslots_seed();
        fslot *s = calloc(n, sizeof *s);
        if (s == NULL)
            return -1;
        for (size_t i = 0; i < b->nfslots; i++) {
            if (b->fslots[i].id1 == 0)
                continue;
            size_t j = rslots_slot(b->fslots[i].hash, n);
            while (s[j].id1 != 0)
                j = (j + 1) & (n - 1);
            s[j] = b->fslots[i];
        }
        free(b->fslots);
        b->fslots = s;
        b->nfslots = n;
    }
    uint64_t h = rmap_hash_str(rmap_hash_str(0xcbf29ce484222325ull, dso) * 31, name);
    size_t j = rslots_slot(h, b->nfslots);
    while (b->fslots[j].id1 != 0) {
        const rframe *f = &p->frames[b->fslots[j].id1 - 1];
        if (b->fslots[j].hash == h && strcmp(f->name, name) == 0 && strcmp(f->dso, dso) == 0)
            return b->fslots[j].id1 - 1;
        j = (j + 1) & (b->nfslots - 1);
    }
    if (grow((void **)&p->frames, p->n_frames, &b->cap_frames, sizeof *p->frames) != 0)
        return -1;
    rframe *f = &p->frames[p->n_frames];
    f->name = strdup(name);
    f->dso = strdup(dso);
    if (f->name == NULL || f->dso == NULL) {
        free(f->name);
        free(f->dso);
        return -1;
    }
    b->fslots[j].hash = h;
    b->fslots[j].id1 = (uint32_t)++p->n_frames;
    return (int64_t)p->n_frames - 1;
}

/* The index of string s in strs (*n of them), added when new; names are
 * found by their hash in ids, probing (hash, 0), (hash, 1), ... past other
 * strings of the same hash. -1 when out of memory. */
static int64_t intern(rmap *ids, char ***strs, size_t *n, size_t *cap, const char *s)
{
    uint64_t h = rmap_hash_str(0xcbf29ce484222325ull, s), j = 0;
    for (int64_t id; (id = rmap_get(ids, h, j)) >= 0; j++)
        if (strcmp((*strs)[id], s) == 0)
            return id;
    if (grow((void **)strs, *n, cap, sizeof **strs) != 0 || ((*strs)[*n] = strdup(s)) == NULL)
        return -1;
    if (rmap_put(ids, h, j, (uint32_t)*n) != 0) {
        free((*strs)[*n]);
        return -1;
    }
    return (int64_t)(*n)++;
}

/* A note of the report, each once however many frames give it. */
static int add_note(rbuilder *b, const char *line)
{
    rprofile *p = b->p;
    return intern(&b->note_ids, &p->notes, &p->n_notes, &b->cap_notes, line) < 0 ? -1 : 0;
}

/* The frame of address addr in the process of key k (a return address
 * unless leaf). *bare: set when the address has no symbol, so that the
 * frame ("[image]" or "[unknown]") stands for any address of its image. */
static int64_t resolve(rbuilder *b, const rpidkey *k, uint32_t gen, uint64_t addr, bool leaf,
                       bool *bare)
{
    const dkrec_map *m = rmaps_find(&b->maps, k, gen, addr);
    *bare = true;
    if (m == NULL)
        return frame_id(b, "[unknown]", "[unknown]");
    const char *dso = base_name(m->path);
    sym_image *im = symbols_image(b->syms, m->path, m->id_kind, m->id, m->id_len);
    if (im == NULL)
        return -1;
    /* A return address is just past its call: look up the call itself. */
    uint64_t look = leaf || addr == 0 ? addr : addr - 1;
    uint64_t off = 0;
    const char *sym = sym_lookup(im, m->start, m->pgoff, look, &off);
    if (sym != NULL) {
        *bare = false;
        if (b->demangle && demangle_mangled(sym)) {
            /* Named once per address and process, so demangled as often. */
            char *readable = demangle(sym);
            if (readable == NULL && demangle_missing() != NULL)
                b->p->missing_demangler = demangle_missing();
            int64_t id = frame_id(b, readable != NULL ? readable : sym, dso);
            free(readable);
            return id;
        }
        return frame_id(b, sym, dso);
    }
    if (sym_image_missing_reader(im) != NULL)
        b->p->missing_reader = sym_image_missing_reader(im);
    const char *problem = sym_image_problem(im);
    if (problem != NULL && m->path[0] == '/') {
        char line[1024];
        snprintf(line, sizeof line, "%s: no symbols: %s", m->path, problem);
        if (add_note(b, line) != 0)
            return -1;
    }
    /* "[libfoo.so]", one frame for every address of the image without a
     * symbol, as perf script's "[unknown] (libfoo.so)" is folded into
     * flame graphs: offsets would split one caller's time into a sliver
     * per address. A pseudo image keeps its own brackets: "[vdso]". A name
     * too long is cut: "[averyl...]". */
    const char *image = dso;
    size_t dn = strlen(dso);
    if (dn >= 2 && dso[0] == '[' && dso[dn - 1] == ']') {
        image = dso + 1;
        dn -= 2;
    }
    char name[512];
    size_t room = sizeof name - 3; /* the brackets and the NUL */
    if (dn <= room)
        snprintf(name, sizeof name, "[%.*s]", (int)dn, image);
    else
        snprintf(name, sizeof name, "[%.*s...]", (int)(room - 3), image);
    return frame_id(b, name, dso);
}

/* The node of stack parent with frame inner to it, made when new; -1
 * when out of memory or past MAX_NODES (-2). */
static int64_t stack_node(rbuilder *b, uint32_t parent, uint32_t frame)
{
    rprofile *p = b->p;
    int64_t id = rmap_get(&b->stacks, parent, frame);
    if (id >= 0)
        return id;
    if (p->n_nodes >= b->max_nodes)
        return -2;
    if (grow((void **)&p->nodes, p->n_nodes, &b->cap_nodes, sizeof *p->nodes) != 0 ||
        rmap_put(&b->stacks, parent, frame, (uint32_t)p->n_nodes) != 0)
        return -1;
    rnode *n = &p->nodes[p->n_nodes];
    n->parent = parent;
    n->frame = frame;
    n->depth = p->nodes[parent].depth + 1;
    if (n->depth > p->max_depth)
        p->max_depth = n->depth;
    return (int64_t)p->n_nodes++;
}

/* The node of the stack ending in recording node leaf, in pid after its
 * map record map_rec - 1 and exec record exec_rec - 1; -1 out of memory,
 * -2 too many nodes, -3 too many translations (-4: of chains cut to
 * REPORT_MAX_STACK frames). */
static int64_t sample_stack(rbuilder *b, int32_t pid, uint32_t map_rec, uint32_t exec_rec,
                            uint32_t leaf_node, uint32_t root)
{
    const dkrec *r = b->rec;
    const rpidkey *pk = rmaps_key(&b->maps, pid);
    uint64_t key = pk != NULL ? pk->key : UINT64_MAX;
    /* Stacks under another root are other nodes: another key. */
    key ^= (uint64_t)root << 40;
    /* The generation of the pid's maps: the addresses of an image
     * replaced later are translated apart (in the memo's second key). */
    uint64_t gen = (uint64_t)rmaps_gen(&b->maps, pk, map_rec, exec_rec) << 32;
    /* A leaf seen before is known however deep its stack is: the leaves
     * are kept (fewer than the samples), the rest is a cache. */
    int64_t base = rmap_get(&b->leaves, key, gen | leaf_node);
    if (base >= 0)
        return base;
    base = root;
    /* Up from the leaf to the first recording node already translated;
     * a chain deeper than REPORT_MAX_STACK keeps its innermost frames, as
     * perf does, and is made apart: its nodes are no prefix of others. */
    bool cut = r->nodes[leaf_node].depth > REPORT_MAX_STACK;
    size_t n = 0;
    for (uint32_t k = leaf_node; k != 0 && n < REPORT_MAX_STACK; k = r->nodes[k].parent) {
        int64_t hit = k == leaf_node || cut ? -1 : rmap_get(&b->memo, key, gen | k);
        if (hit >= 0) {
            base = hit;
            break;
        }
        if (grow((void **)&b->chain, n, &b->cap_chain, sizeof *b->chain) != 0)
            return -1;
        b->chain[n++] = k;
    }
    /* Each recording node is translated once per key whose samples reach
     * it: processes whose maps differ each walk a stack they share, and
     * a process each generation of its maps (an image mapped over). */
    if ((b->work += n) > b->max_work)
        return cut ? -4 : -3;
    /* The memo holds at most max_memo translations besides this sample's
     * own: past that it is a cache and starts again. One process's
     * translations (a recording node each) always fit, so each is made
     * once. */
    if (n > 0 && b->memo.n + n > b->max_memo)
        rmap_free(&b->memo);
    /* Down again, making the nodes. */
    while (n-- > 0) {
        uint32_t k = b->chain[n];
        bool leaf = k == leaf_node;
        bool bare;
        int64_t f = resolve(b, pk, (uint32_t)(gen >> 32), r->nodes[k].addr, leaf, &bare);
        if (f < 0)
            return -1;
        /* A run of addresses without symbols in one image (or in none) is
         * one frame: a caller's unnamed callees in a stripped program, or
         * 128 [unknown] frames of a program without frame pointers, are
         * one box, not a tower of them. */
        if (!(bare && base != root && b->p->nodes[base].frame == (uint32_t)f))
            base = stack_node(b, (uint32_t)base, (uint32_t)f);
        if (base < 0)
            return base;
        if ((leaf || !cut) &&
            rmap_put(leaf ? &b->leaves : &b->memo, key, gen | k, (uint32_t)base) != 0)
            return -1;
    }
    return base;
}

/* The index of comm name s in p->comms. */
static int64_t comm_id(rbuilder *b, const char *s)
{
    rprofile *p = b->p;
    return intern(&b->comm_ids, &p->comms, &p->n_comms, &b->cap_comms, s);
}

/* Comm records by pid, then in file order (so by first_sample). */
static int comm_order(const void *a, const void *b)
{
    const dkrec_comm *x = *(const dkrec_comm *const *)a, *y = *(const dkrec_comm *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The name of pid, whose latest comm record before the samples is comm_rec
 * - 1 (0: none): that record's, else its first one, else the recorded
 * command's name. by_pid: the comm records in comm_order. */
static const char *comm_of(const dkrec *r, const dkrec_comm *const *by_pid, int32_t pid,
                           uint32_t comm_rec, const char *cmd, char *buf, size_t size)
{
    if (comm_rec != 0)
        return r->comms[comm_rec - 1].comm;
    /* lo: the first record of pid, if it has one. */
    size_t lo = 0, hi = r->n_comms;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (by_pid[m]->pid < pid)
            lo = m + 1;
        else
            hi = m;
    }
    if (lo < r->n_comms && by_pid[lo]->pid == pid)
        return by_pid[lo]->comm;
    if (pid == 0)
        return "swapper"; /* the idle task of a sampling of every CPU, as perf names it */
    if (cmd != NULL)
        return cmd;
    snprintf(buf, size, "pid %d", (int)pid);
    return buf;
}

/* The entry of o's key in p, o's counts added to it, made when new;
 * -1 when out of memory. */
static int add_entry(rbuilder *b, const rsample *o)
{
    rprofile *p = b->p;
    uint64_t h = rmap_mix(rmap_mix((uint64_t)o->stack << 32 | o->event,
                                   (uint64_t)(uint32_t)o->pid << 32 | o->comm),
                          o->flags),
             j = 0;
    for (int64_t id; (id = rmap_get(&b->entry_ids, h, j)) >= 0; j++) {
        rsample *e = &p->entries[id];
        if (e->stack == o->stack && e->event == o->event && e->pid == o->pid &&
            e->comm == o->comm && e->flags == o->flags) {
            e->count += o->count;
            e->weight += o->weight;
            return 0;
        }
    }
    if (rmap_put(&b->entry_ids, h, j, (uint32_t)p->n_entries) != 0)
        return -1;
    p->entries[p->n_entries++] = *o;
    return 0;
}

/* Frees what belongs to the recording fed last. */
static void builder_free_rec(rbuilder *b)
{
    rmap_free(&b->memo);
    rmap_free(&b->leaves);
    rmaps_free(&b->maps);
    free(b->comm_by_pid);
    b->comm_by_pid = NULL;
    rmap_free(&b->kframes);
    rmap_free(&b->kleaves);
    b->rec = NULL;
}

static void builder_free(rbuilder *b)
{
    if (b == NULL)
        return;
    builder_free_rec(b);
    symbols_free(b->syms);
    free(b->fslots);
    rmap_free(&b->stacks);
    rmap_free(&b->comm_ids);
    rmap_free(&b->note_ids);
    free(b->chain);
    kallsyms_free(b->ksyms);
    rmap_free(&b->entry_ids);
    free(b);
}

/* The node of user stack node with the kernel chain ending in recording
 * node kleaf inner to it; -1 out of memory, -2 too many nodes, -3 too
 * many translations. */
static int64_t kernel_stack(rbuilder *b, uint32_t node, uint32_t kleaf)
{
    const dkrec *r = b->rec;
    int64_t hit = rmap_get(&b->kleaves, node, kleaf);
    if (hit >= 0)
        return hit;
    size_t n = 0; /* the innermost REPORT_MAX_STACK frames, as in sample_stack */
    for (uint32_t k = kleaf; k != 0 && n < REPORT_MAX_STACK; k = r->nodes[k].parent) {
        if (grow((void **)&b->chain, n, &b->cap_chain, sizeof *b->chain) != 0)
            return -1;
        b->chain[n++] = k;
    }
    if ((b->work += n) > b->max_work)
        return -3;
    int64_t at = node;
    while (n-- > 0) {
        uint32_t k = b->chain[n];
        int64_t f = rmap_get(&b->kframes, 0, k);
        if (f < 0) {
            char buf[32];
            f = frame_id(b,
                         report_kernel_name(b->ksyms, r->nodes[k].addr, k == kleaf, buf,
                                            sizeof buf),
                         RFRAME_KERNEL_DSO);
            if (f < 0 || rmap_put(&b->kframes, 0, k, (uint32_t)f) != 0)
                return -1;
        }
        if ((at = stack_node(b, (uint32_t)at, (uint32_t)f)) < 0)
            return at;
    }
    if (rmap_put(&b->kleaves, node, kleaf, (uint32_t)at) != 0)
        return -1;
    return at;
}

int rprofile_build(rprofile *p, const dkrec *rec, const char *path)
{
    return rprofile_build_opts(p, rec, path, NULL);
}

int rprofile_build_opts(rprofile *p, const dkrec *rec, const char *path, const rprofile_opts *opts)
{
    rraws a;
    memset(p, 0, sizeof *p);
    if (rraws_of(&a, rec, path, opts) != 0)
        return -1;
    int rc = rprofile_build_raws(p, rec, &a, path, opts);
    rraws_free(&a);
    return rc;
}

int rprofile_build_raws(rprofile *p, const dkrec *rec, const rraws *raws, const char *path,
                        const rprofile_opts *opts)
{
    if (rprofile_start(p, opts) != 0 || rprofile_feed(p, rec, raws, path) != 0)
        return -1;
    rprofile_finish(p);
    return 0;
}

int rprofile_start(rprofile *p, const rprofile_opts *opts)
{
    memset(p, 0, sizeof *p);
    rbuilder *b = calloc(1, sizeof *b);
    p->nodes = calloc(1024, sizeof *p->nodes); /* node 0: the empty stack */
    if (b == NULL || p->nodes == NULL || (b->syms = symbols_new()) == NULL) {
        free(b);
        free(p->nodes);
        p->nodes = NULL;
        cli_error("report", "out of memory");
        return -1;
    }
    p->build = b;
    b->p = p;
    b->demangle = opts == NULL || !opts->no_demangle;
    b->cap_nodes = 1024;
    p->n_nodes = 1;
    b->max_nodes = NODES_FREE;
    return 0;
}

void rprofile_finish(rprofile *p)
{
    builder_free(p->build);
    p->build = NULL;
}

/* p->events: the first recording's. */
static int model_events(rprofile *p, const dkrec *rec)
{
    p->events = calloc(rec->n_events + 1, sizeof *p->events);
    if (p->events == NULL)
        return -1;
    if (rec->n_events > 0) /* events is NULL in a file cut before them */
        memcpy(p->events, rec->events, rec->n_events * sizeof *p->events);
    p->n_events = rec->n_events;
    return 0;
}

/* The index of REPORT_OFF_CPU_EVENT in p->events, added when one of them
 * is a count event (else 0: no off-CPU sample takes it); UINT32_MAX when
 * out of memory. */
static uint32_t off_cpu_event(rprofile *p)
{
    bool counts = false;
    for (size_t e = 0; e < p->n_events; e++) {
        if (strcmp(p->events[e].name, REPORT_OFF_CPU_EVENT) == 0)
            return (uint32_t)e;
        counts = counts || !report_time_event(p->events[e].name);
    }
    if (!counts)
        return 0;
    /* Its name is the macro's string, not owned: the others' are the
     * first recording's, which outlives p. */
    dkrec_event *v = realloc(p->events, (p->n_events + 1) * sizeof *v);
    if (v == NULL)
        return UINT32_MAX;
    p->events = v;
    p->events[p->n_events] = (dkrec_event){.name = (char *)REPORT_OFF_CPU_EVENT};
    return (uint32_t)p->n_events++;
}

/* p->path: the one recording's name, or theirs joined, or how many. */
static int name_recordings(rprofile *p)
{
    free(p->path_buf);
    p->path_buf = NULL;
    if (p->n_recs == 1) {
        p->path = p->paths[0];
        return 0;
    }
    size_t len = 32;
    for (size_t i = 0; i < p->n_recs; i++)
        len += strlen(p->paths[i]) + 2;
    if ((p->path_buf = malloc(len)) == NULL)
        return -1;
    if (p->n_recs > 4) {
        snprintf(p->path_buf, len, "%zu recordings", p->n_recs);
    } else {
        p->path_buf[0] = '\0';
        for (size_t i = 0; i < p->n_recs; i++) {
            if (i > 0)
                strcat(p->path_buf, ", ");
            strcat(p->path_buf, p->paths[i]);
        }
    }
    p->path = p->path_buf;
    return 0;
}

int rprofile_feed(rprofile *p, const dkrec *rec, const rraws *raws, const char *path)
{
    rbuilder *b = p->build;
    uint32_t *ev_to = NULL;
    if (grow((void **)&p->recs, p->n_recs, &b->cap_recs, sizeof *p->recs) != 0)
        goto oom;
    /* paths grows with recs: as many slots. */
    const char **paths = realloc(p->paths, b->cap_recs * sizeof *paths);
    if (paths == NULL)
        goto oom;
    p->paths = paths;
    p->recs[p->n_recs] = rec;
    p->paths[p->n_recs++] = path;
    if (p->n_recs == 1)
        p->rec = rec;
    ev_to = calloc(rec->n_events ? rec->n_events : 1, sizeof *ev_to);
    if (ev_to == NULL)
        goto oom;
    int mrc = p->n_recs > 1 ? report_match_events(p->recs[0], p->paths[0], rec, path, ev_to) : 0;
    if (mrc == -2)
        goto oom;
    if (mrc != 0) {
        free(ev_to);
        rprofile_free(p);
        return -1;
    }
    if (p->n_recs == 1)
        for (size_t e = 0; e < rec->n_events; e++)
            ev_to[e] = (uint32_t)e;
    if (name_recordings(p) != 0)
        goto oom;
    /* A recording of user mode only has no kernel frame to name: say why. */
    const char *kmode = dkrec_meta(rec, "kernel");
    if (kmode != NULL)
        snprintf(p->kernel_note, sizeof p->kernel_note, "no kernel frames: the recording is of %s",
                 kmode);
    p->lost += rec->lost;
    p->throttled += rec->throttled;
    if (!rec->complete && p->incomplete == NULL)
        p->incomplete = rec;
    /* Folded stacks add up ns when the recording is of off-CPU time,
     * whichever samples the filter keeps. */
    if (dkrec_meta(rec, "off-cpu") != NULL || raws->n_off_cpu > 0)
        p->has_off_cpu = true;
    if (p->n_recs == 1 && model_events(p, rec) != 0)
        goto oom;
    /* Off-CPU samples of a count event go to REPORT_OFF_CPU_EVENT. */
    uint32_t off_event = UINT32_MAX;
    if (p->has_off_cpu && (off_event = off_cpu_event(p)) == UINT32_MAX)
        goto oom;
    b->rec = rec;
    /* A recording's nodes, translations and work are bounded by its size;
     * the model's by the sum. */
    b->max_nodes = rec->file_size < NODES_MAX - b->max_nodes ? b->max_nodes + (size_t)rec->file_size
                                                             : NODES_MAX;
    /* The memo is a cache: bounded by a fraction of the file (an entry
     * takes some 40 to 80 bytes), not by the nodes the file may make, so
     * that processes each sampling the same addresses through maps of
     * their own cannot make it many times the file's size. */
    b->max_memo = MEMO_FREE + (size_t)(rec->file_size / MEMO_BYTES);
    b->max_work = WORK_PER_NODE * b->max_nodes;
    if (raws->n_read > 0 && !b->timed) {
        p->time_lo = raws->time_lo;
        p->time_hi = raws->time_hi;
        b->timed = true;
    } else if (raws->n_read > 0) {
        p->time_lo = raws->time_lo < p->time_lo ? raws->time_lo : p->time_lo;
        p->time_hi = raws->time_hi > p->time_hi ? raws->time_hi : p->time_hi;
    }
    if (p->n_entries + raws->n > b->cap_entries) {
        size_t c = p->n_entries + raws->n;
        rsample *v = realloc(p->entries, (c ? c : 1) * sizeof *v);
        if (v == NULL)
            goto oom;
        p->entries = v;
        b->cap_entries = c;
    }
    b->comm_by_pid = calloc(rec->n_comms ? rec->n_comms : 1, sizeof *b->comm_by_pid);
    if (b->comm_by_pid == NULL || rmaps_make(&b->maps, rec) != 0)
        goto oom;
    for (size_t k = 0; k < rec->n_comms; k++)
        b->comm_by_pid[k] = &rec->comms[k];
    qsort(b->comm_by_pid, rec->n_comms, sizeof *b->comm_by_pid, comm_order);
    /* The name of a process without one of its own: the command's, unless
     * every CPU was sampled (read once: dkrec_meta scans every record). */
    const char *cmd = dkrec_meta(rec, "all-cpus") == NULL ? dkrec_meta(rec, "comm") : NULL;
    /* Comm lookups are per pid and comm record; cache the last one. */
    int32_t last_pid = 0;
    uint32_t last_rec = 0;
    int64_t last_comm = -1;
    int64_t off_root = -1; /* the node of the [off-cpu] frame, made at its first sample */
    for (size_t i = 0; i < raws->n; i++) {
        const rraw *s = &raws->v[i];
        rsample o = {.event = s->event < rec->n_events ? ev_to[s->event] : s->event,
                     .pid = s->pid,
                     .flags = s->flags,
                     .count = s->count,
                     .weight = s->weight};
        bool off_cpu = rsample_off_cpu(&o);
        if (off_cpu && o.event < p->n_events && !report_time_event(p->events[o.event].name))
            o.event = off_event;
        if (off_cpu && off_root < 0) {
            int64_t f = frame_id(b, RFRAME_OFF_CPU, RFRAME_OFF_CPU);
            if (f < 0 || (off_root = stack_node(b, 0, (uint32_t)f)) < 0)
                goto oom;
        }
        uint32_t root = off_cpu ? (uint32_t)off_root : 0;
        if (last_comm < 0 || s->pid != last_pid || s->comm_rec != last_rec) {
            char buf[32];
            last_comm =
                comm_id(b, comm_of(rec, b->comm_by_pid, s->pid, s->comm_rec, cmd, buf, sizeof buf));
            if (last_comm < 0)
                goto oom;
            last_pid = s->pid;
            last_rec = s->comm_rec;
        }
        o.comm = (uint32_t)last_comm;
        int64_t node = s->node ? sample_stack(b, s->pid, s->map_rec, s->exec_rec, s->node, root)
                               : root;
        /* A kernel sample gets its kernel chain, named from the kernel's
         * symbols, inner to its user stack, or one [kernel] frame where
         * they cannot name it; a sample with no frame at all, [unknown]. */
        bool kchain = node >= 0 && s->knode != 0 && (s->flags & DKREC_SAMPLE_KERNEL);
        if (kchain && !b->ksyms_tried) {
            b->ksyms_tried = true;
            if (report_kernel_symbols(&b->ksyms, p->kernel_note, sizeof p->kernel_note) != 0)
                goto oom;
        }
        if (kchain && b->ksyms != NULL) {
            node = kernel_stack(b, (uint32_t)node, s->knode);
        } else if (node >= 0 && ((s->flags & DKREC_SAMPLE_KERNEL) || node == root)) {
            int64_t f = (s->flags & DKREC_SAMPLE_KERNEL) ? frame_id(b, "[kernel]", "[kernel]")
                                                         : frame_id(b, "[unknown]", "[unknown]");
            node = f < 0 ? -1 : stack_node(b, (uint32_t)node, (uint32_t)f);
        }
        if (node == -2) {
            cli_error("report",
                      "%s: its stacks come to more than %zu distinct nodes, from a "
                      "file of %llu bytes: refused (a recording built to exhaust "
                      "memory?)",
                      path, b->max_nodes, (unsigned long long)rec->file_size);
            free(ev_to);
            rprofile_free(p);
            return -1;
        }
        if (node == -4) {
            cli_error("report",
                      "%s: its call chains deeper than %u frames, each cut to its "
                      "innermost %u, come to more than %zu translations of an address, "
                      "from a file of %llu bytes: refused (a recording built to exhaust "
                      "time?)",
                      path, REPORT_MAX_STACK, REPORT_MAX_STACK, b->max_work,
                      (unsigned long long)rec->file_size);
            free(ev_to);
            rprofile_free(p);
            return -1;
        }
        if (node == -3) {
            cli_error("report",
                      "%s: its stacks, in processes whose maps differ or are mapped "
                      "over, come to more than %zu translations of an address, from a "
                      "file of %llu bytes: refused (a recording built to exhaust time?)",
                      path, b->max_work, (unsigned long long)rec->file_size);
            free(ev_to);
            rprofile_free(p);
            return -1;
        }
        if (node < 0)
            goto oom;
        if ((s->node != 0 && rec->nodes[s->node].depth > REPORT_MAX_STACK) ||
            (kchain && b->ksyms != NULL && rec->nodes[s->knode].depth > REPORT_MAX_STACK))
            p->n_cut += s->count;
        o.stack = (uint32_t)node;
        if (add_entry(b, &o) != 0)
            goto oom;
        p->n_samples += s->count;
    }
    free(ev_to);
    builder_free_rec(b);
    return 0;
oom:
    cli_error("report", "%s: out of memory while symbolizing %llu samples", path,
              (unsigned long long)raws->n_samples);
    free(ev_to);
    rprofile_free(p);
    return -1;
}

void rprofile_free(rprofile *p)
{
    for (size_t i = 0; i < p->n_frames; i++) {
        free(p->frames[i].name);
        free(p->frames[i].dso);
    }
    free(p->frames);
    for (size_t i = 0; i < p->n_comms; i++)
        free(p->comms[i]);
    free(p->comms);
    for (size_t i = 0; i < p->n_notes; i++)
        free(p->notes[i]);
    free(p->notes);
    free(p->nodes);
    free(p->entries);
    free(p->recs);
    free(p->paths);
    free(p->events);
    free(p->path_buf);
    builder_free(p->build);
    memset(p, 0, sizeof *p);
}
