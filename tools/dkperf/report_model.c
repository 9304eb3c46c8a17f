/*
 * report_model.c - a recording's samples turned into stacks of frames
 * (see report.h). Each distinct (process, stack node) is symbolized once;
 * a frame is a (function, image) pair, interned.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "report.h"
#include "symbols.h"

typedef struct fslot {
    uint64_t hash;
    uint32_t id1; /* frame id + 1; 0: empty */
} fslot;

typedef struct nslot {
    int32_t pid;
    uint32_t node; /* 0: empty (node 0 is never cached) */
    uint32_t frame;
} nslot;

typedef struct builder {
    rprofile *p;
    symbols *syms;
    fslot *fslots;
    size_t nfslots;
    nslot *nslots;
    size_t nnslots, nncached;
    size_t cap_frames, cap_stack, cap_comms, cap_notes;
} builder;

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

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
static int64_t frame_id(builder *b, const char *name, const char *dso)
{
    rprofile *p = b->p;
    if ((p->n_frames + 1) * 2 >= b->nfslots) {
        size_t n = b->nfslots ? b->nfslots * 2 : 1024;
        fslot *s = calloc(n, sizeof *s);
        if (s == NULL)
            return -1;
        for (size_t i = 0; i < b->nfslots; i++) {
            if (b->fslots[i].id1 == 0)
                continue;
            size_t j = (size_t)b->fslots[i].hash & (n - 1);
            while (s[j].id1 != 0)
                j = (j + 1) & (n - 1);
            s[j] = b->fslots[i];
        }
        free(b->fslots);
        b->fslots = s;
        b->nfslots = n;
    }
    uint64_t h = hash_str(hash_str(0xcbf29ce484222325ull, dso) * 31, name);
    size_t j = (size_t)h & (b->nfslots - 1);
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

static int add_note(builder *b, const char *line)
{
    rprofile *p = b->p;
    for (size_t i = 0; i < p->n_notes; i++)
        if (strcmp(p->notes[i], line) == 0)
            return 0;
    if (grow((void **)&p->notes, p->n_notes, &b->cap_notes, sizeof *p->notes) != 0 ||
        (p->notes[p->n_notes] = strdup(line)) == NULL)
        return -1;
    p->n_notes++;
    return 0;
}

/* The map of pid holding addr, the latest one; a process whose maps were
 * not recorded (a child forked by a recorded one) takes another's. */
static const dkrec_map *find_map(const dkrec *r, int32_t pid, uint64_t addr)
{
    const dkrec_map *any = NULL;
    for (size_t i = r->n_maps; i-- > 0;) {
        const dkrec_map *m = &r->maps[i];
        if (addr < m->start || addr - m->start >= m->len)
            continue;
        if (m->pid == pid)
            return m;
        if (any == NULL)
            any = m;
    }
    return any;
}

/* The frame of address addr in pid (a return address unless leaf). */
static int64_t resolve(builder *b, int32_t pid, uint64_t addr, bool leaf)
{
    const dkrec *r = b->p->rec;
    const dkrec_map *m = find_map(r, pid, addr);
    char name[512];
    if (m == NULL) {
        snprintf(name, sizeof name, "[unknown]");
        return frame_id(b, name, "[unknown]");
    }
    const char *dso = base_name(m->path);
    sym_image *im = symbols_image(b->syms, m->path, m->id_kind, m->id, m->id_len);
    if (im == NULL)
        return -1;
    /* A return address is just past its call: look up the call itself. */
    uint64_t look = leaf || addr == 0 ? addr : addr - 1;
    uint64_t off = 0;
    const char *sym = sym_lookup(im, m->start, m->pgoff, look, &off);
    if (sym != NULL)
        return frame_id(b, sym, dso);
    const char *problem = sym_image_problem(im);
    if (problem != NULL && m->path[0] == '/') {
        char line[1024];
        snprintf(line, sizeof line, "%s: no symbols: %s", m->path, problem);
        if (add_note(b, line) != 0)
            return -1;
    }
    /* "[libfoo.so+0x1234]"; a pseudo image keeps its own brackets: "[vdso+0xbe1]". */
    size_t dn = strlen(dso);
    if (dn >= 2 && dso[0] == '[' && dso[dn - 1] == ']')
        snprintf(name, sizeof name, "[%.*s+0x%" PRIx64 "]", (int)(dn - 2), dso + 1, off);
    else
        snprintf(name, sizeof name, "[%s+0x%" PRIx64 "]", dso, off);
    return frame_id(b, name, dso);
}

/* The frame of stack node id in pid, cached. */
static int64_t node_frame(builder *b, int32_t pid, uint32_t node, bool leaf)
{
    /* Leaves and callers look up different addresses: cache them apart. */
    uint32_t key = node * 2u + (leaf ? 1u : 0u);
    if ((b->nncached + 1) * 2 >= b->nnslots) {
        size_t n = b->nnslots ? b->nnslots * 2 : 4096;
        nslot *s = calloc(n, sizeof *s);
        if (s == NULL)
            return -1;
        for (size_t i = 0; i < b->nnslots; i++) {
            if (b->nslots[i].node == 0)
                continue;
            size_t j = ((size_t)b->nslots[i].node * 2654435761u ^ (size_t)b->nslots[i].pid) &
                       (n - 1);
            while (s[j].node != 0)
                j = (j + 1) & (n - 1);
            s[j] = b->nslots[i];
        }
        free(b->nslots);
        b->nslots = s;
        b->nnslots = n;
    }
    size_t j = ((size_t)key * 2654435761u ^ (size_t)pid) & (b->nnslots - 1);
    while (b->nslots[j].node != 0) {
        if (b->nslots[j].node == key && b->nslots[j].pid == pid)
            return b->nslots[j].frame;
        j = (j + 1) & (b->nnslots - 1);
    }
    int64_t f = resolve(b, pid, b->p->rec->nodes[node].addr, leaf);
    if (f < 0)
        return -1;
    b->nslots[j].node = key;
    b->nslots[j].pid = pid;
    b->nslots[j].frame = (uint32_t)f;
    b->nncached++;
    return f;
}

/* The index of comm name s in p->comms. */
static int64_t comm_id(builder *b, const char *s)
{
    rprofile *p = b->p;
    for (size_t i = 0; i < p->n_comms; i++)
        if (strcmp(p->comms[i], s) == 0)
            return (int64_t)i;
    if (grow((void **)&p->comms, p->n_comms, &b->cap_comms, sizeof *p->comms) != 0 ||
        (p->comms[p->n_comms] = strdup(s)) == NULL)
        return -1;
    return (int64_t)p->n_comms++;
}

/* The name of pid at sample index i: its latest comm before it, else its
 * first one, else the recorded command's name. */
static const char *comm_of(const dkrec *r, int32_t pid, size_t i, char *buf, size_t size)
{
    const char *best = NULL, *first = NULL;
    for (size_t k = 0; k < r->n_comms; k++) {
        if (r->comms[k].pid != pid)
            continue;
        if (first == NULL)
            first = r->comms[k].comm;
        if (r->comms[k].first_sample <= i)
            best = r->comms[k].comm;
    }
    if (best != NULL || first != NULL)
        return best != NULL ? best : first;
    if (pid == 0)
        return "swapper"; /* the idle task of a sampling of every CPU, as perf names it */
    const char *cmd = dkrec_meta(r, "comm");
    if (cmd != NULL && dkrec_meta(r, "all-cpus") == NULL)
        return cmd;
    snprintf(buf, size, "pid %d", (int)pid);
    return buf;
}

int rprofile_build(rprofile *p, const dkrec *rec, const char *path)
{
    memset(p, 0, sizeof *p);
    p->rec = rec;
    p->path = path;
    builder b;
    memset(&b, 0, sizeof b);
    b.p = p;
    b.syms = symbols_new();
    p->samples = calloc(rec->n_samples ? rec->n_samples : 1, sizeof *p->samples);
    if (b.syms == NULL || p->samples == NULL)
        goto oom;
    /* Comm lookups are per pid; cache the last one. */
    int32_t last_pid = 0;
    int64_t last_comm = -1;
    size_t last_comm_at = 0;
    for (size_t i = 0; i < rec->n_samples; i++) {
        const dkrec_rsample *s = &rec->samples[i];
        rsample *o = &p->samples[p->n_samples];
        o->event = s->event;
        o->pid = s->pid;
        o->weight = s->period ? s->period : 1;
        /* Re-look the comm up when the pid changes or a comm record came. */
        bool fresh = last_comm < 0 || s->pid != last_pid;
        for (size_t k = 0; !fresh && k < rec->n_comms; k++)
            fresh = rec->comms[k].pid == s->pid && rec->comms[k].first_sample > last_comm_at &&
                    rec->comms[k].first_sample <= i;
        if (fresh) {
            char buf[32];
            last_comm = comm_id(&b, comm_of(rec, s->pid, i, buf, sizeof buf));
            if (last_comm < 0)
                goto oom;
            last_pid = s->pid;
            last_comm_at = i;
        }
        o->comm = (uint32_t)last_comm;
        uint32_t depth = s->node ? rec->nodes[s->node].depth : 0;
        uint32_t extra = (s->flags & DKREC_SAMPLE_KERNEL) || depth == 0 ? 1 : 0;
        if (p->n_stack + depth + extra > b.cap_stack) {
            size_t cap = b.cap_stack ? b.cap_stack : 1024;
            while (cap < p->n_stack + depth + extra)
                cap *= 2;
            uint32_t *q = realloc(p->stack, cap * sizeof *q);
            if (q == NULL)
                goto oom;
            p->stack = q;
            b.cap_stack = cap;
        }
        o->first = p->n_stack;
        o->depth = depth + extra;
        /* Root first: fill from the end of this sample's slice. */
        size_t at = p->n_stack + depth;
        bool leaf = true;
        for (uint32_t n = s->node; n != 0; n = rec->nodes[n].parent) {
            int64_t f = node_frame(&b, s->pid, n, leaf);
            if (f < 0)
                goto oom;
            p->stack[--at] = (uint32_t)f;
            leaf = false;
        }
        if (extra) {
            int64_t f = (s->flags & DKREC_SAMPLE_KERNEL) ? frame_id(&b, "[kernel]", "[kernel]")
                                                         : frame_id(&b, "[unknown]", "[unknown]");
            if (f < 0)
                goto oom;
            p->stack[p->n_stack + depth] = (uint32_t)f;
        }
        p->n_stack += depth + extra;
        p->n_samples++;
    }
    symbols_free(b.syms);
    free(b.fslots);
    free(b.nslots);
    return 0;
oom:
    cli_error("report", "%s: out of memory while symbolizing %zu samples", path, rec->n_samples);
    symbols_free(b.syms);
    free(b.fslots);
    free(b.nslots);
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
    free(p->stack);
    free(p->samples);
    memset(p, 0, sizeof *p);
}
