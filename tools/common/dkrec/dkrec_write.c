/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkrec_write.c - the recording file's writer: records buffered and
 * appended to the file as whole chunks, stacks interned as a tree of
 * nodes, sample fields delta-encoded (see dkrec.h and
 * doc/RECORD-FORMAT.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dkrec.h"
#include "dkrec_format.h"

typedef struct node_slot {
    uint64_t addr;
    uint32_t parent, id; /* id 0: empty slot */
} node_slot;

/* A record kept for the next file: pool[off .. off + len), of process
 * pid (INT32_MIN: of the whole recording, meta and event). */
typedef struct kept_rec {
    size_t off, len;
    int32_t pid;
    bool dead;
} kept_rec;

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
    /* With switching on: the meta, event, map and comm records written
     * (their bytes, in order), written again at the head of the next file;
     * a process's are dropped at its exit. */
    bool keep;
    kept_rec *kept;
    size_t nkept, capkept, dead;
    uint8_t *pool;
    size_t npool, cappool;
    /* The pids with a map in the file since their last exec, sorted: an
     * exec of another has no map to end and is written as a comm record,
     * which a reader of 1.2 reads. all_mapped: out of memory, take every
     * pid as mapped. */
    int32_t *mapped;
    size_t nmapped, capmapped;
    bool all_mapped;
    /* The kernel's running loss totals at the last switch: a file counts
     * its own. */
    uint64_t base_lost, base_throttled, base_unthrottled;
    uint64_t last_lost, last_throttled, last_unthrottled;
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
    uint32_t c = dkrec__crc32(w->buf, w->len);
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

/* Keeps the record just put at w->buf[start ..] when switching is on. */
static int keep(dkrec_writer *w, size_t start, int32_t pid)
{
    if (!w->keep)
        return 0;
    size_t n = w->len - start;
    if (w->nkept == w->capkept) {
        size_t cap = w->capkept ? w->capkept * 2 : 64;
        kept_rec *k = realloc(w->kept, cap * sizeof *k);
        if (k == NULL)
            return w->error = -ENOMEM;
        w->kept = k;
        w->capkept = cap;
    }
    if (w->npool + n > w->cappool) {
        size_t cap = w->cappool ? w->cappool : 4096;
        while (cap < w->npool + n)
            cap *= 2;
        uint8_t *p = realloc(w->pool, cap);
        if (p == NULL)
            return w->error = -ENOMEM;
        w->pool = p;
        w->cappool = cap;
    }
    memcpy(w->pool + w->npool, w->buf + start, n);
    w->kept[w->nkept++] = (kept_rec){.off = w->npool, .len = n, .pid = pid};
    w->npool += n;
    return 0;
}

static void compact_kept(dkrec_writer *w);

/* Drops what is kept of a process that exited. */
static void drop_kept(dkrec_writer *w, int32_t pid)
{
    for (size_t i = 0; i < w->nkept; i++)
        if (w->kept[i].pid == pid && !w->kept[i].dead) {
            w->kept[i].dead = true;
            w->dead++;
        }
    compact_kept(w);
}

/* Once half of the kept records are dead, the pool is compacted: drops
 * cost O(1) amortized. */
static void compact_kept(dkrec_writer *w)
{
    if (w->dead * 2 < w->nkept)
        return;
    size_t m = 0, at = 0;
    for (size_t i = 0; i < w->nkept; i++) {
        if (w->kept[i].dead)
            continue;
        memmove(w->pool + at, w->pool + w->kept[i].off, w->kept[i].len);
        w->kept[m] = w->kept[i];
        w->kept[m++].off = at;
        at += w->kept[i].len;
    }
    w->nkept = m;
    w->npool = at;
    w->dead = 0;
}

void dkrec_writer_forget_maps(dkrec_writer *w, int32_t pid)
{
    for (size_t i = 0; i < w->nkept; i++)
        if (w->kept[i].pid == pid && !w->kept[i].dead && w->pool[w->kept[i].off] == R_MAP) {
            w->kept[i].dead = true;
            w->dead++;
        }
    compact_kept(w);
}

/* Where pid is or would go in w->mapped. */
static size_t mapped_at(const dkrec_writer *w, int32_t pid)
{
    size_t lo = 0, hi = w->nmapped;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->mapped[mid] < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool has_maps(const dkrec_writer *w, int32_t pid)
{
    size_t i = mapped_at(w, pid);
    return w->all_mapped || (i < w->nmapped && w->mapped[i] == pid);
}

static void note_mapped(dkrec_writer *w, int32_t pid)
{
    size_t i = mapped_at(w, pid);
    if (i < w->nmapped && w->mapped[i] == pid)
        return;
    if (w->nmapped == w->capmapped) {
        size_t cap = w->capmapped ? w->capmapped * 2 : 64;
        int32_t *m = realloc(w->mapped, cap * sizeof *m);
        if (m == NULL) {
            w->all_mapped = true;
            return;
        }
        w->mapped = m;
        w->capmapped = cap;
    }
    memmove(w->mapped + i + 1, w->mapped + i, (w->nmapped - i) * sizeof *w->mapped);
    w->mapped[i] = pid;
    w->nmapped++;
}

static void forget_mapped(dkrec_writer *w, int32_t pid)
{
    size_t i = mapped_at(w, pid);
    if (i < w->nmapped && w->mapped[i] == pid)
        memmove(w->mapped + i, w->mapped + i + 1, (--w->nmapped - i) * sizeof *w->mapped);
}

static int write_header(int fd)
{
    uint8_t head[HEADER_BYTES] = {0};
    memcpy(head, dkrec__magic, sizeof dkrec__magic);
    head[8] = DKREC_VERSION_MAJOR & 0xff;
    head[9] = DKREC_VERSION_MAJOR >> 8;
    head[10] = DKREC_VERSION_MINOR & 0xff;
    head[11] = DKREC_VERSION_MINOR >> 8;
    return write_all(fd, head, sizeof head);
}

void dkrec_writer_keep(dkrec_writer *w) { w->keep = true; }

int dkrec_writer_switch(dkrec_writer *w, int fd)
{
    int rc = dkrec_finish(w);
    if (rc != 0)
        return rc;
    rc = write_header(fd);
    if (rc != 0)
        return w->error = rc;
    w->fd = fd;
    w->bytes = HEADER_BYTES;
    w->samples = 0;
    /* Stacks are interned again: a file's node ids are its own. */
    if (w->nslots > 0) /* none before the first sample */
        memset(w->slots, 0, w->nslots * sizeof *w->slots);
    w->nnodes = 0;
    w->base_lost = w->last_lost;
    w->base_throttled = w->last_throttled;
    w->base_unthrottled = w->last_unthrottled;
    w->nmapped = 0; /* the maps of the new file: those kept */
    w->all_mapped = false;
    for (size_t i = 0; i < w->nkept; i++) {
        const kept_rec *k = &w->kept[i];
        if (k->dead)
            continue;
        if (w->pool[k->off] == R_MAP)
            note_mapped(w, k->pid);
        rc = begin(w, k->len);
        if (rc != 0)
            return rc;
        memcpy(w->buf + w->len, w->pool + k->off, k->len);
        w->len += k->len;
    }
    return dkrec_flush(w);
}

int dkrec_writer_open(int fd, dkrec_writer **out)
{
    *out = NULL;
    dkrec_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return -ENOMEM;
    w->fd = fd;
    int rc = write_header(fd);
    if (rc != 0) {
        free(w);
        return rc;
    }
    w->bytes = HEADER_BYTES;
    *out = w;
    return 0;
}

int dkrec_write_meta(dkrec_writer *w, const char *key, const char *value)
{
    size_t kn = capped(key), vn = capped(value);
    int rc = begin(w, 1 + 20 + kn + vn);
    if (rc != 0)
        return rc;
    size_t start = w->len;
    put_byte(w, R_META);
    put_string(w, key, kn);
    put_string(w, value, vn);
    return keep(w, start, INT32_MIN);
}

int dkrec_write_event(dkrec_writer *w, uint32_t index, const char *name, uint64_t period,
                      uint64_t freq)
{
    size_t n = capped(name);
    int rc = begin(w, 1 + 40 + n);
    if (rc != 0)
        return rc;
    size_t start = w->len;
    put_byte(w, R_EVENT);
    put_varint(w, index);
    put_string(w, name, n);
    put_varint(w, period);
    put_varint(w, freq);
    return keep(w, start, INT32_MIN);
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
    size_t at = w->len;
    put_byte(w, R_MAP);
    put_varint(w, dkrec__zigzag(pid));
    put_varint(w, start);
    put_varint(w, len);
    put_varint(w, pgoff);
    put_string(w, path, n);
    put_byte(w, (uint8_t)(id_len ? id_kind : DKREC_ID_NONE));
    put_varint(w, id_len);
    if (id_len)
        memcpy(w->buf + w->len, id, id_len);
    w->len += id_len;
    note_mapped(w, pid);
    return keep(w, at, pid);
}

static int write_comm(dkrec_writer *w, bool exec, int32_t pid, uint64_t tid, const char *comm)
{
    size_t n = capped(comm);
    int rc = begin(w, 1 + 30 + n);
    if (rc != 0)
        return rc;
    size_t start = w->len;
    /* An exec with no map of the pid before it ends nothing: a comm. */
    put_byte(w, exec && has_maps(w, pid) ? R_EXEC : R_COMM);
    put_varint(w, dkrec__zigzag(pid));
    put_varint(w, tid);
    put_string(w, comm, n);
    if (!exec)
        return keep(w, start, pid);
    forget_mapped(w, pid);
    if (!w->keep)
        return 0;
    /* The next file needs nothing of the image the exec replaced, and
     * holds no map of the pid before the name: a comm there. */
    drop_kept(w, pid);
    rc = keep(w, start, pid);
    if (rc == 0)
        w->pool[w->kept[w->nkept - 1].off] = R_COMM;
    return rc;
}

int dkrec_write_comm(dkrec_writer *w, int32_t pid, uint64_t tid, const char *comm)
{
    return write_comm(w, false, pid, tid, comm);
}

int dkrec_write_exec(dkrec_writer *w, int32_t pid, uint64_t tid, const char *comm)
{
    return write_comm(w, true, pid, tid, comm);
}

int dkrec_write_exit(dkrec_writer *w, int32_t pid, uint64_t tid)
{
    int rc = begin(w, 1 + 20);
    if (rc != 0)
        return rc;
    put_byte(w, R_EXIT);
    put_varint(w, dkrec__zigzag(pid));
    put_varint(w, tid);
    if (tid == (uint64_t)(uint32_t)pid)
        forget_mapped(w, pid);
    if (w->keep && tid == (uint64_t)(uint32_t)pid)
        drop_kept(w, pid); /* the process is gone: the next file needs none of it */
    return 0;
}

int dkrec_write_stats(dkrec_writer *w, uint64_t lost, uint64_t throttled, uint64_t unthrottled)
{
    int rc = begin(w, 1 + 30);
    if (rc != 0)
        return rc;
    w->last_lost = lost;
    w->last_throttled = throttled;
    w->last_unthrottled = unthrottled;
    put_byte(w, R_STATS);
    put_varint(w, lost > w->base_lost ? lost - w->base_lost : 0);
    put_varint(w, throttled > w->base_throttled ? throttled - w->base_throttled : 0);
    put_varint(w, unthrottled > w->base_unthrottled ? unthrottled - w->base_unthrottled : 0);
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

/* Interns the stack frames[0 .. n) (innermost first) from its outermost
 * frame and sets *node to its innermost node; the nodes it makes go out in
 * one nodes record, with room after it for a sample. */
static int put_stack(dkrec_writer *w, const uint64_t *frames, size_t n, uint32_t *node)
{
    int rc;
    if (n > w->path_cap) {
        uint32_t *p = realloc(w->path, n * sizeof *p);
        if (p == NULL)
            return -ENOMEM;
        w->path = p;
        w->path_cap = n;
    }
    *node = 0;
    size_t made = 0;
    for (size_t k = n; k-- > 0;) {
        bool is_new;
        if ((rc = intern(w, *node, frames[k], node, &is_new)) != 0)
            return rc;
        if (is_new)
            w->path[made++] = *node;
    }
    if (made > 0) {
        if ((rc = reserve(w, 1 + 10 + made * 15 + 2 * 80 + 16)) != 0)
            return rc;
        put_byte(w, R_NODES);
        put_varint(w, made);
        for (size_t k = 0; k < made; k++) {
            /* Ids are implicit (the next ones); the parent is given as the
             * distance back from the node (1 along a new chain), 0 for a
             * root; the address as the difference from the parent's. */
            uint32_t id = w->path[k], parent = w->node_parent[id];
            uint64_t base = parent ? w->node_addr[parent] : 0;
            put_varint(w, parent ? id - parent : 0);
            put_varint(w, dkrec__zigzag((int64_t)(w->node_addr[id] - base)));
        }
    }
    return 0;
}

int dkrec_write_sample(dkrec_writer *w, const dkrec_sample *s)
{
    int rc = begin(w, 2 * 80);
    if (rc != 0)
        return rc;
    /* The kernel's chain is a stack of its own in the same tree, named by
     * a kernel stack record just before its sample (in the same chunk:
     * nothing is flushed until the sample is whole). */
    uint32_t knode = 0, node = 0;
    if (s->n_kernel_frames > 0) {
        if ((rc = put_stack(w, s->kernel_frames, s->n_kernel_frames, &knode)) != 0)
            return w->error = rc;
        put_byte(w, R_KSTACK);
        put_varint(w, knode);
    }
    if ((rc = put_stack(w, s->frames, s->n_frames, &node)) != 0)
        return w->error = rc;
    if (s->flags & DKREC_SAMPLE_OFF_CPU)
        put_byte(w, R_OFFCPU); /* a record, not a head bit: older readers refuse it by name */
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
            put_varint(w, dkrec__zigzag(s->pid));
        if (change & C_TID)
            put_varint(w, s->tid);
        if (change & C_CPU)
            put_varint(w, s->cpu);
        if (change & C_PERIOD)
            put_varint(w, dkrec__zigzag((int64_t)(s->period - w->prev_period)));
    }
    put_varint(w, dkrec__zigzag((int64_t)(s->time_ns - w->prev_time)));
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
    free(w->kept);
    free(w->pool);
    free(w->mapped);
    free(w);
}
