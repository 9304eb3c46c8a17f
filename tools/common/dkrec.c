/*
 * dkrec.c - the recording file's writer and reader (see dkrec.h and
 * doc/RECORD-FORMAT.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dkrec.h"

static const uint8_t magic[8] = {'D', 'K', 'R', 'E', 'C', 0x1a, '\n', 0};
#define HEADER_BYTES 16
#define CHUNK_TAG 'C'
#define CHUNK_TARGET (64u * 1024u) /* a chunk is written once its payload reaches this */
#define CHUNK_MAX (64u * 1024u * 1024u) /* the reader refuses larger chunks */
#define NAME_MAX_BYTES 4096u

enum { R_META = 'm', R_EVENT = 'e', R_MAP = 'p', R_COMM = 'c', R_EXIT = 'x', R_NODES = 'n',
       R_SAMPLE = 's', R_STATS = 'l', R_END = 'z' };

/* Sample header bits: node << 3 | these. */
#define H_CHANGED 0x1u
#define H_KERNEL 0x2u
#define H_TRUNCATED 0x4u
/* Change byte bits. */
#define C_EVENT 0x01u
#define C_PID 0x02u
#define C_TID 0x04u
#define C_CPU 0x08u
#define C_PERIOD 0x10u

static uint32_t crc_table[256];
static bool crc_ready;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    crc_ready = true;
}

static uint32_t crc32(const uint8_t *p, size_t n)
{
    if (!crc_ready)
        crc_init();
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* ------------------------------------------------------------------ */
/* Writer                                                               */
/* ------------------------------------------------------------------ */

typedef struct node_slot {
    uint64_t addr;
    uint32_t parent, id; /* id 0: empty slot */
} node_slot;

struct dkrec_writer {
    int fd;
    int error; /* the first write error; every later call returns it */
    uint8_t *buf;
    size_t len, cap;
    uint64_t bytes, samples;
    /* Delta state, reset at each chunk. */
    uint64_t prev_time, prev_tid, prev_period;
    int32_t prev_pid;
    uint32_t prev_event, prev_cpu;
    /* Interned stack nodes. */
    node_slot *slots;
    size_t nslots, nnodes;
    uint64_t *node_addr; /* by id, for the deltas */
    uint32_t *node_parent;
    size_t node_addr_cap;
    /* Nodes made for the sample being written, emitted before it. */
    uint32_t *path;
    size_t path_cap;
};

static void reset_deltas(dkrec_writer *w)
{
    w->prev_time = w->prev_tid = w->prev_period = 0;
    w->prev_pid = 0;
    w->prev_event = w->prev_cpu = 0;
}

static int reserve(dkrec_writer *w, size_t more)
{
    if (w->len + more <= w->cap)
        return 0;
    size_t cap = w->cap ? w->cap : CHUNK_TARGET + 4096;
    while (cap < w->len + more)
        cap *= 2;
    uint8_t *b = realloc(w->buf, cap);
    if (b == NULL)
        return -ENOMEM;
    w->buf = b;
    w->cap = cap;
    return 0;
}

static void put_byte(dkrec_writer *w, uint8_t b) { w->buf[w->len++] = b; }

static void put_varint(dkrec_writer *w, uint64_t v)
{
    while (v >= 0x80) {
        w->buf[w->len++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    w->buf[w->len++] = (uint8_t)v;
}

/* Strings are cut to what the reader takes: a longer one would make the
 * whole file unreadable. */
static size_t capped(const char *s)
{
    size_t n = strlen(s);
    return n > NAME_MAX_BYTES ? NAME_MAX_BYTES : n;
}

static void put_string(dkrec_writer *w, const char *s, size_t n)
{
    put_varint(w, n);
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (k == 0)
            return -EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int dkrec_flush(dkrec_writer *w)
{
    if (w->error != 0)
        return w->error;
    if (w->len == 0)
        return 0;
    /* Chunk head: tag, payload length (varint), CRC-32 of the payload. */
    uint8_t head[1 + 10 + 4];
    size_t h = 0;
    head[h++] = CHUNK_TAG;
    uint64_t v = w->len;
    while (v >= 0x80) {
        head[h++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    head[h++] = (uint8_t)v;
    uint32_t c = crc32(w->buf, w->len);
    for (int k = 0; k < 4; k++)
        head[h++] = (uint8_t)(c >> (8 * k));
    /* One write for head and payload, so that the chunk is either whole
     * or visibly cut. */
    int rc = reserve(w, h);
    if (rc == 0) {
        memmove(w->buf + h, w->buf, w->len);
        memcpy(w->buf, head, h);
        rc = write_all(w->fd, w->buf, w->len + h);
        if (rc == 0)
            w->bytes += w->len + h;
    }
    w->len = 0;
    reset_deltas(w);
    if (rc != 0)
        w->error = rc;
    return rc;
}

/* Room for a record of up to more bytes; flushes a full chunk first. */
static int begin(dkrec_writer *w, size_t more)
{
    if (w->error != 0)
        return w->error;
    if (w->len >= CHUNK_TARGET) {
        int rc = dkrec_flush(w);
        if (rc != 0)
            return rc;
    }
    int rc = reserve(w, more + 16); /* + 16: the chunk head inserted at flush */
    if (rc != 0)
        w->error = rc;
    return rc;
}

int dkrec_writer_open(int fd, dkrec_writer **out)
{
    *out = NULL;
    dkrec_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return -ENOMEM;
    w->fd = fd;
    uint8_t head[HEADER_BYTES] = {0};
    memcpy(head, magic, sizeof magic);
    head[8] = DKREC_VERSION_MAJOR & 0xff;
    head[9] = DKREC_VERSION_MAJOR >> 8;
    head[10] = DKREC_VERSION_MINOR & 0xff;
    head[11] = DKREC_VERSION_MINOR >> 8;
    int rc = write_all(fd, head, sizeof head);
    if (rc != 0) {
        free(w);
        return rc;
    }
    w->bytes = sizeof head;
    *out = w;
    return 0;
}

int dkrec_write_meta(dkrec_writer *w, const char *key, const char *value)
{
    size_t kn = capped(key), vn = capped(value);
    int rc = begin(w, 1 + 20 + kn + vn);
    if (rc != 0)
        return rc;
    put_byte(w, R_META);
    put_string(w, key, kn);
    put_string(w, value, vn);
    return 0;
}

int dkrec_write_event(dkrec_writer *w, uint32_t index, const char *name, uint64_t period,
                      uint64_t freq)
{
    size_t n = capped(name);
    int rc = begin(w, 1 + 40 + n);
    if (rc != 0)
        return rc;
    put_byte(w, R_EVENT);
    put_varint(w, index);
    put_string(w, name, n);
    put_varint(w, period);
    put_varint(w, freq);
    return 0;
}

int dkrec_write_map(dkrec_writer *w, int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                    const char *path, unsigned id_kind, const uint8_t *id, size_t id_len)
{
    size_t n = capped(path);
    if (id == NULL || id_kind == DKREC_ID_NONE)
        id_len = 0;
    if (id_len > DKREC_ID_MAX)
        id_len = DKREC_ID_MAX;
    int rc = begin(w, 80 + n + id_len);
    if (rc != 0)
        return rc;
    put_byte(w, R_MAP);
    put_varint(w, zigzag(pid));
    put_varint(w, start);
    put_varint(w, len);
    put_varint(w, pgoff);
    put_string(w, path, n);
    put_byte(w, (uint8_t)(id_len ? id_kind : DKREC_ID_NONE));
    put_varint(w, id_len);
    if (id_len)
        memcpy(w->buf + w->len, id, id_len);
    w->len += id_len;
    return 0;
}

int dkrec_write_comm(dkrec_writer *w, int32_t pid, uint64_t tid, const char *comm)
{
    size_t n = capped(comm);
    int rc = begin(w, 1 + 30 + n);
    if (rc != 0)
        return rc;
    put_byte(w, R_COMM);
    put_varint(w, zigzag(pid));
    put_varint(w, tid);
    put_string(w, comm, n);
    return 0;
}

int dkrec_write_exit(dkrec_writer *w, int32_t pid, uint64_t tid)
{
    int rc = begin(w, 1 + 20);
    if (rc != 0)
        return rc;
    put_byte(w, R_EXIT);
    put_varint(w, zigzag(pid));
    put_varint(w, tid);
    return 0;
}

int dkrec_write_stats(dkrec_writer *w, uint64_t lost, uint64_t throttled, uint64_t unthrottled)
{
    int rc = begin(w, 1 + 30);
    if (rc != 0)
        return rc;
    put_byte(w, R_STATS);
    put_varint(w, lost);
    put_varint(w, throttled);
    put_varint(w, unthrottled);
    return 0;
}

static size_t slot_of(uint32_t parent, uint64_t addr, size_t mask)
{
    uint64_t h = (addr ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
    return (size_t)(h >> 29) & mask;
}

static int grow_nodes(dkrec_writer *w)
{
    size_t n = w->nslots ? w->nslots * 2 : 4096;
    node_slot *s = calloc(n, sizeof *s);
    if (s == NULL)
        return -ENOMEM;
    for (size_t i = 0; i < w->nslots; i++) {
        if (w->slots[i].id == 0)
            continue;
        size_t j = slot_of(w->slots[i].parent, w->slots[i].addr, n - 1);
        while (s[j].id != 0)
            j = (j + 1) & (n - 1);
        s[j] = w->slots[i];
    }
    free(w->slots);
    w->slots = s;
    w->nslots = n;
    return 0;
}

/* The node for (parent, addr): found, or made and its id added to the
 * nodes record being built (*made counts them). Returns 0 or -ENOMEM. */
static int intern(dkrec_writer *w, uint32_t parent, uint64_t addr, uint32_t *id, bool *is_new)
{
    if ((w->nnodes + 1) * 4 >= w->nslots * 3) {
        int rc = grow_nodes(w);
        if (rc != 0)
            return rc;
    }
    size_t mask = w->nslots - 1, j = slot_of(parent, addr, mask);
    while (w->slots[j].id != 0) {
        if (w->slots[j].parent == parent && w->slots[j].addr == addr) {
            *id = w->slots[j].id;
            *is_new = false;
            return 0;
        }
        j = (j + 1) & mask;
    }
    if (w->nnodes + 2 > w->node_addr_cap) {
        size_t cap = w->node_addr_cap ? w->node_addr_cap * 2 : 4096;
        uint64_t *a = realloc(w->node_addr, cap * sizeof *a);
        if (a == NULL)
            return -ENOMEM;
        w->node_addr = a;
        uint32_t *p = realloc(w->node_parent, cap * sizeof *p);
        if (p == NULL)
            return -ENOMEM;
        w->node_parent = p;
        w->node_addr_cap = cap;
    }
    if (w->nnodes >= UINT32_MAX - 1)
        return -EOVERFLOW;
    w->nnodes++;
    w->slots[j].parent = parent;
    w->slots[j].addr = addr;
    w->slots[j].id = (uint32_t)w->nnodes;
    w->node_addr[w->nnodes] = addr;
    w->node_parent[w->nnodes] = parent;
    *id = (uint32_t)w->nnodes;
    *is_new = true;
    return 0;
}

int dkrec_write_sample(dkrec_writer *w, const dkrec_sample *s)
{
    int rc = begin(w, 1 + 80);
    if (rc != 0)
        return rc;
    /* Intern the stack from its outermost frame; the nodes it makes go out
     * in one nodes record before the sample. */
    if (s->n_frames > w->path_cap) {
        uint32_t *p = realloc(w->path, s->n_frames * sizeof *p);
        if (p == NULL)
            return w->error = -ENOMEM;
        w->path = p;
        w->path_cap = s->n_frames;
    }
    uint32_t node = 0;
    size_t made = 0;
    for (size_t k = s->n_frames; k-- > 0;) {
        bool is_new;
        if ((rc = intern(w, node, s->frames[k], &node, &is_new)) != 0)
            return w->error = rc;
        if (is_new)
            w->path[made++] = node;
    }
    if (made > 0) {
        if ((rc = reserve(w, 1 + 10 + made * 15 + 80 + 16)) != 0)
            return w->error = rc;
        put_byte(w, R_NODES);
        put_varint(w, made);
        for (size_t k = 0; k < made; k++) {
            /* Ids are implicit (the next ones); the parent is given as the
             * distance back from the node (1 along a new chain), 0 for a
             * root; the address as the difference from the parent's. */
            uint32_t id = w->path[k], parent = w->node_parent[id];
            uint64_t base = parent ? w->node_addr[parent] : 0;
            put_varint(w, parent ? id - parent : 0);
            put_varint(w, zigzag((int64_t)(w->node_addr[id] - base)));
        }
    }
    unsigned change = 0;
    if (s->event != w->prev_event)
        change |= C_EVENT;
    if (s->pid != w->prev_pid)
        change |= C_PID;
    if (s->tid != w->prev_tid)
        change |= C_TID;
    if (s->cpu != w->prev_cpu)
        change |= C_CPU;
    if (s->period != w->prev_period)
        change |= C_PERIOD;
    uint64_t head = (uint64_t)node << 3 | (change ? H_CHANGED : 0) |
                    ((s->flags & DKREC_SAMPLE_KERNEL) ? H_KERNEL : 0) |
                    ((s->flags & DKREC_SAMPLE_TRUNCATED) ? H_TRUNCATED : 0);
    put_byte(w, R_SAMPLE);
    put_varint(w, head);
    if (change) {
        put_byte(w, (uint8_t)change);
        if (change & C_EVENT)
            put_varint(w, s->event);
        if (change & C_PID)
            put_varint(w, zigzag(s->pid));
        if (change & C_TID)
            put_varint(w, s->tid);
        if (change & C_CPU)
            put_varint(w, s->cpu);
        if (change & C_PERIOD)
            put_varint(w, zigzag((int64_t)(s->period - w->prev_period)));
    }
    put_varint(w, zigzag((int64_t)(s->time_ns - w->prev_time)));
    w->prev_event = s->event;
    w->prev_pid = s->pid;
    w->prev_tid = s->tid;
    w->prev_cpu = s->cpu;
    w->prev_period = s->period;
    w->prev_time = s->time_ns;
    w->samples++;
    return 0;
}

int dkrec_finish(dkrec_writer *w)
{
    int rc = begin(w, 1 + 10);
    if (rc != 0)
        return rc;
    put_byte(w, R_END);
    put_varint(w, w->samples);
    return dkrec_flush(w);
}

uint64_t dkrec_bytes(const dkrec_writer *w) { return w->bytes; }
uint64_t dkrec_samples(const dkrec_writer *w) { return w->samples; }

void dkrec_writer_free(dkrec_writer *w)
{
    if (w == NULL)
        return;
    free(w->buf);
    free(w->slots);
    free(w->node_addr);
    free(w->node_parent);
    free(w->path);
    free(w);
}

/* ------------------------------------------------------------------ */
/* Reader                                                               */
/* ------------------------------------------------------------------ */

typedef struct reader {
    const uint8_t *p, *end;
    const uint8_t *base; /* the file's first byte, for offsets */
    const char *name;
    char *err;
    size_t errlen;
    dkrec *r;
    /* Delta state of the chunk. */
    dkrec_rsample prev;
    size_t cap_meta, cap_events, cap_maps, cap_comms, cap_nodes, cap_samples;
} reader;

__attribute__((format(printf, 3, 4))) static int fail(reader *rd, const uint8_t *at,
                                                       const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (rd->errlen > 0)
        snprintf(rd->err, rd->errlen, "%s: corrupt recording at byte offset %zu: %s", rd->name,
                 (size_t)(at - rd->base), what);
    return -1;
}

static int get_varint(reader *rd, uint64_t *v)
{
    uint64_t x = 0;
    const uint8_t *start = rd->p;
    for (int shift = 0; shift < 64; shift += 7) {
        if (rd->p >= rd->end)
            return fail(rd, start, "a number runs past the end of its chunk");
        uint8_t b = *rd->p++;
        if (shift == 63 && b > 1)
            return fail(rd, start, "a number is longer than 64 bits");
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return fail(rd, start, "a number is longer than 64 bits");
}

static int get_u32(reader *rd, uint32_t *v, const char *what)
{
    const uint8_t *at = rd->p;
    uint64_t x;
    if (get_varint(rd, &x) != 0)
        return -1;
    if (x > UINT32_MAX)
        return fail(rd, at, "%s %llu is out of range", what, (unsigned long long)x);
    *v = (uint32_t)x;
    return 0;
}

static int get_pid(reader *rd, int32_t *pid)
{
    const uint8_t *at = rd->p;
    uint64_t x;
    if (get_varint(rd, &x) != 0)
        return -1;
    int64_t v = unzigzag(x);
    if (v < INT32_MIN || v > INT32_MAX)
        return fail(rd, at, "pid %lld is out of range", (long long)v);
    *pid = (int32_t)v;
    return 0;
}

static int get_string(reader *rd, char **out)
{
    const uint8_t *at = rd->p;
    uint64_t n;
    if (get_varint(rd, &n) != 0)
        return -1;
    if (n > NAME_MAX_BYTES || n > (uint64_t)(rd->end - rd->p))
        return fail(rd, at, "a string of %llu bytes does not fit its chunk",
                    (unsigned long long)n);
    if (memchr(rd->p, 0, (size_t)n) != NULL)
        return fail(rd, at, "a string holds a NUL byte");
    char *s = malloc((size_t)n + 1);
    if (s == NULL)
        return fail(rd, at, "out of memory");
    memcpy(s, rd->p, (size_t)n);
    s[n] = '\0';
    rd->p += n;
    *out = s;
    return 0;
}

/* Room for one more element of array *a (n used, *cap allocated). */
static int grow(reader *rd, void **a, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 16;
    void *p = realloc(*a, c * size);
    if (p == NULL)
        return fail(rd, rd->p, "out of memory");
    *a = p;
    *cap = c;
    return 0;
}

static int read_nodes(reader *rd)
{
    dkrec *r = rd->r;
    const uint8_t *at = rd->p;
    uint64_t count;
    if (get_varint(rd, &count) != 0)
        return -1;
    if (count == 0 || count > (uint64_t)(rd->end - rd->p) / 2)
        return fail(rd, at, "a nodes record claims %llu nodes", (unsigned long long)count);
    for (uint64_t k = 0; k < count; k++) {
        at = rd->p;
        uint64_t back, delta;
        if (get_varint(rd, &back) != 0 || get_varint(rd, &delta) != 0)
            return -1;
        size_t id = r->n_nodes;
        if (id >= UINT32_MAX)
            return fail(rd, at, "too many stack nodes");
        if (back > id - 1)
            return fail(rd, at, "stack node %zu names a parent %llu nodes back, before the first",
                        id, (unsigned long long)back);
        if (grow(rd, (void **)&r->nodes, r->n_nodes, &rd->cap_nodes, sizeof *r->nodes) != 0)
            return -1;
        dkrec_node *n = &r->nodes[r->n_nodes++];
        n->parent = back ? (uint32_t)(id - back) : 0;
        uint64_t base = n->parent ? r->nodes[n->parent].addr : 0;
        n->addr = base + (uint64_t)unzigzag(delta);
        n->depth = n->parent ? r->nodes[n->parent].depth + 1 : 1;
    }
    return 0;
}

static int read_sample(reader *rd)
{
    dkrec *r = rd->r;
    const uint8_t *at = rd->p;
    uint64_t head;
    if (get_varint(rd, &head) != 0)
        return -1;
    dkrec_rsample s = rd->prev;
    uint64_t node = head >> 3;
    if (node >= r->n_nodes)
        return fail(rd, at, "a sample names stack node %llu, of %zu defined",
                    (unsigned long long)node, r->n_nodes - 1);
    s.node = (uint32_t)node;
    s.flags = ((head & H_KERNEL) ? DKREC_SAMPLE_KERNEL : 0) |
              ((head & H_TRUNCATED) ? DKREC_SAMPLE_TRUNCATED : 0);
    if (head & H_CHANGED) {
        if (rd->p >= rd->end)
            return fail(rd, at, "a sample ends early");
        unsigned change = *rd->p++;
        if (change == 0 || change > 0x1f)
            return fail(rd, at, "a sample's change bits 0x%x are not known", change);
        uint64_t v;
        if ((change & C_EVENT) && get_u32(rd, &s.event, "event index") != 0)
            return -1;
        if ((change & C_PID) && get_pid(rd, &s.pid) != 0)
            return -1;
        if ((change & C_TID) && get_varint(rd, &s.tid) != 0)
            return -1;
        if ((change & C_CPU) && get_u32(rd, &s.cpu, "cpu") != 0)
            return -1;
        if (change & C_PERIOD) {
            if (get_varint(rd, &v) != 0)
                return -1;
            s.period += (uint64_t)unzigzag(v);
        }
    }
    uint64_t dt;
    if (get_varint(rd, &dt) != 0)
        return -1;
    s.time_ns += (uint64_t)unzigzag(dt);
    if (s.event >= r->n_events)
        return fail(rd, at, "a sample of event %u, of %zu events described", s.event,
                    r->n_events);
    if (grow(rd, (void **)&r->samples, r->n_samples, &rd->cap_samples, sizeof *r->samples) != 0)
        return -1;
    r->samples[r->n_samples++] = s;
    rd->prev = s;
    return 0;
}

static int read_record(reader *rd)
{
    dkrec *r = rd->r;
    const uint8_t *at = rd->p;
    uint8_t type = *rd->p++;
    switch (type) {
    case R_META: {
        if (grow(rd, (void **)&r->meta, r->n_meta + 1, &rd->cap_meta, sizeof *r->meta) != 0)
            return -1;
        r->meta[r->n_meta] = r->meta[r->n_meta + 1] = NULL;
        if (get_string(rd, &r->meta[r->n_meta]) != 0)
            return -1;
        r->n_meta++;
        if (get_string(rd, &r->meta[r->n_meta]) != 0)
            return -1;
        r->n_meta++;
        return 0;
    }
    case R_EVENT: {
        uint32_t idx = 0;
        if (get_u32(rd, &idx, "event index") != 0)
            return -1;
        if (idx != r->n_events)
            return fail(rd, at, "event %u is described where event %zu was due", idx,
                        r->n_events);
        if (grow(rd, (void **)&r->events, r->n_events, &rd->cap_events, sizeof *r->events) != 0)
            return -1;
        dkrec_event *e = &r->events[r->n_events];
        memset(e, 0, sizeof *e);
        if (get_string(rd, &e->name) != 0)
            return -1;
        r->n_events++;
        return get_varint(rd, &e->period) != 0 || get_varint(rd, &e->freq) != 0 ? -1 : 0;
    }
    case R_MAP: {
        if (grow(rd, (void **)&r->maps, r->n_maps, &rd->cap_maps, sizeof *r->maps) != 0)
            return -1;
        dkrec_map *m = &r->maps[r->n_maps];
        memset(m, 0, sizeof *m);
        m->first_sample = r->n_samples;
        if (get_pid(rd, &m->pid) != 0 || get_varint(rd, &m->start) != 0 ||
            get_varint(rd, &m->len) != 0 || get_varint(rd, &m->pgoff) != 0 ||
            get_string(rd, &m->path) != 0)
            return -1;
        r->n_maps++;
        if (rd->p >= rd->end)
            return fail(rd, at, "a map ends early");
        m->id_kind = *rd->p++;
        uint64_t n;
        if (get_varint(rd, &n) != 0)
            return -1;
        if (m->id_kind > DKREC_ID_MACHO_UUID || n > DKREC_ID_MAX ||
            n > (uint64_t)(rd->end - rd->p) || (m->id_kind == DKREC_ID_NONE) != (n == 0))
            return fail(rd, at, "a map's image identity (kind %u, %llu bytes) is not valid",
                        m->id_kind, (unsigned long long)n);
        memcpy(m->id, rd->p, (size_t)n);
        m->id_len = (size_t)n;
        rd->p += n;
        if (m->start + m->len < m->start)
            return fail(rd, at, "a map wraps around the address space");
        return 0;
    }
    case R_COMM: {
        if (grow(rd, (void **)&r->comms, r->n_comms, &rd->cap_comms, sizeof *r->comms) != 0)
            return -1;
        dkrec_comm *c = &r->comms[r->n_comms];
        memset(c, 0, sizeof *c);
        c->first_sample = r->n_samples;
        if (get_pid(rd, &c->pid) != 0 || get_varint(rd, &c->tid) != 0 ||
            get_string(rd, &c->comm) != 0)
            return -1;
        r->n_comms++;
        return 0;
    }
    case R_EXIT: {
        int32_t pid;
        uint64_t tid;
        if (get_pid(rd, &pid) != 0 || get_varint(rd, &tid) != 0)
            return -1;
        r->n_exits++;
        return 0;
    }
    case R_NODES:
        return read_nodes(rd);
    case R_SAMPLE:
        return read_sample(rd);
    case R_STATS:
        return get_varint(rd, &r->lost) != 0 || get_varint(rd, &r->throttled) != 0 ||
                       get_varint(rd, &r->unthrottled) != 0
                   ? -1
                   : 0;
    case R_END: {
        uint64_t n;
        if (get_varint(rd, &n) != 0)
            return -1;
        if (n != r->n_samples)
            return fail(rd, at, "the end mark counts %llu samples, the file holds %zu",
                        (unsigned long long)n, r->n_samples);
        if (rd->p != rd->end)
            return fail(rd, rd->p, "bytes follow the end mark in its chunk");
        r->complete = true;
        return 0;
    }
    default:
        return fail(rd, at, "unknown record type 0x%02x", type);
    }
}

int dkrec_parse(const uint8_t *data, size_t size, const char *name, dkrec **out, char *err,
                size_t errlen)
{
    *out = NULL;
    if (errlen > 0)
        err[0] = '\0';
    if (size < HEADER_BYTES || memcmp(data, magic, sizeof magic) != 0) {
        snprintf(err, errlen, "%s: not a dkperf recording (no DKREC header%s)", name,
                 size < HEADER_BYTES ? "; the file is shorter than one" : "");
        return -1;
    }
    unsigned major = data[8] | (unsigned)data[9] << 8, minor = data[10] | (unsigned)data[11] << 8;
    if (major != DKREC_VERSION_MAJOR) {
        snprintf(err, errlen,
                 "%s: recording format version %u.%u, this dkperf reads version %d.x", name,
                 major, minor, DKREC_VERSION_MAJOR);
        return -1;
    }
    dkrec *r = calloc(1, sizeof *r);
    if (r == NULL) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    r->version_major = major;
    r->version_minor = minor;
    r->file_size = size;
    reader rd;
    memset(&rd, 0, sizeof rd);
    rd.base = data;
    rd.name = name;
    rd.err = err;
    rd.errlen = errlen;
    rd.r = r;
    /* Node 0 is "no frame". */
    if (grow(&rd, (void **)&r->nodes, 0, &rd.cap_nodes, sizeof *r->nodes) != 0)
        goto fail;
    memset(&r->nodes[0], 0, sizeof r->nodes[0]);
    r->n_nodes = 1;

    const uint8_t *p = data + HEADER_BYTES, *end = data + size;
    while (p < end) {
        const uint8_t *chunk = p;
        if (r->complete) {
            rd.p = p;
            fail(&rd, p, "bytes follow the end mark");
            goto fail;
        }
        if (*p != CHUNK_TAG) {
            rd.p = p;
            fail(&rd, p, "a chunk starts with 0x%02x, not 'C'", *p);
            goto fail;
        }
        rd.p = p + 1;
        rd.end = end;
        uint64_t len;
        if (get_varint(&rd, &len) != 0) {
            snprintf(r->tail_note, sizeof r->tail_note,
                     "the file ends inside a chunk head at byte offset %zu",
                     (size_t)(chunk - data));
            break;
        }
        if (len == 0 || len > CHUNK_MAX) {
            fail(&rd, chunk, "a chunk of %llu bytes", (unsigned long long)len);
            goto fail;
        }
        if ((uint64_t)(end - rd.p) < 4 + len) {
            snprintf(r->tail_note, sizeof r->tail_note,
                     "the last chunk, at byte offset %zu, is cut (%llu of its %llu bytes are "
                     "there)",
                     (size_t)(chunk - data),
                     (unsigned long long)(end - rd.p > 4 ? end - rd.p - 4 : 0),
                     (unsigned long long)len);
            break;
        }
        uint32_t want = rd.p[0] | (uint32_t)rd.p[1] << 8 | (uint32_t)rd.p[2] << 16 |
                        (uint32_t)rd.p[3] << 24;
        const uint8_t *payload = rd.p + 4;
        /* A fuzzing build skips the checksum, so that its mutations reach
         * the records behind it. */
#ifndef DKREC_FUZZING
        if (crc32(payload, (size_t)len) != want) {
            fail(&rd, chunk, "the chunk's checksum does not match its %llu bytes",
                 (unsigned long long)len);
            goto fail;
        }
#else
        (void)want;
#endif
        rd.p = payload;
        rd.end = payload + len;
        memset(&rd.prev, 0, sizeof rd.prev);
        while (rd.p < rd.end)
            if (read_record(&rd) != 0)
                goto fail;
        p = rd.end;
    }
    if (!r->complete && r->tail_note[0] == '\0')
        snprintf(r->tail_note, sizeof r->tail_note,
                 "the file has no end mark (the recording was interrupted)");
    *out = r;
    return 0;
fail:
    dkrec_free(r);
    return -1;
}

/* What a file that is not a regular file is, for the error. */
static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

int dkrec_read_file(const char *path, dkrec **out, char *err, size_t errlen)
{
    *out = NULL;
    /* O_NONBLOCK: a FIFO with no writer would block the open forever; it
     * is refused below, and a regular file reads as it would without. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        const char *kind = file_kind(st.st_mode);
        if (strcmp(kind, "not a regular file") == 0)
            snprintf(err, errlen, "%s is not a regular file, so not a recording", path);
        else
            snprintf(err, errlen, "%s is %s, not a regular file, so not a recording", path, kind);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    uint8_t *data = malloc(size ? size : 1);
    if (data == NULL) {
        snprintf(err, errlen, "%s: out of memory reading %zu bytes", path, size);
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < size) {
        ssize_t k = read(fd, data + got, size - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            snprintf(err, errlen, "%s: %s", path, k < 0 ? strerror(errno) : "shorter than fstat said");
            free(data);
            close(fd);
            return -1;
        }
        got += (size_t)k;
    }
    close(fd);
    int rc = dkrec_parse(data, size, path, out, err, errlen);
    free(data);
    return rc;
}

void dkrec_free(dkrec *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->n_meta; i++)
        free(r->meta[i]);
    free(r->meta);
    for (size_t i = 0; i < r->n_events; i++)
        free(r->events[i].name);
    free(r->events);
    for (size_t i = 0; i < r->n_maps; i++)
        free(r->maps[i].path);
    free(r->maps);
    for (size_t i = 0; i < r->n_comms; i++)
        free(r->comms[i].comm);
    free(r->comms);
    free(r->nodes);
    free(r->samples);
    free(r);
}

const char *dkrec_meta(const dkrec *r, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i + 1 < r->n_meta; i += 2)
        if (strcmp(r->meta[i], key) == 0)
            v = r->meta[i + 1];
    return v;
}
