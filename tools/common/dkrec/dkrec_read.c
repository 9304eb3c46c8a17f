/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkrec_read.c - the recording file's reader: every length, index and
 * checksum checked, the first bad one named by file and byte offset, a
 * file cut short read up to its last whole chunk (see dkrec.h and
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
#include "dkrec_format.h"
#include "common/regfile.h"

typedef struct reader {
    const uint8_t *p, *end;
    const uint8_t *win; /* the bytes in hand, for offsets: win[0] is at */
    uint64_t win_off;   /* this byte offset of the file */
    const char *name;
    char *err;
    size_t errlen;
    dkrec *r;
    dkrec_sample_fn fn; /* NULL: the samples are kept in r->samples */
    void *ctx;
    int stopped; /* fn's nonzero return, which ended the read */
    /* Delta state of the chunk. */
    dkrec_rsample prev;
    uint32_t knode; /* a kernel stack record's node, for the next sample */
    bool off_cpu;   /* an off-CPU record, for the next sample */
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
                 (size_t)(rd->win_off + (uint64_t)(at - rd->win)), what);
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
    int64_t v = dkrec__unzigzag(x);
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
        return fail(rd, at, "a string of %llu bytes does not fit its chunk", (unsigned long long)n);
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
        n->addr = base + (uint64_t)dkrec__unzigzag(delta);
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
    s.knode = rd->knode;
    rd->knode = 0;
    s.flags = ((head & H_KERNEL) ? DKREC_SAMPLE_KERNEL : 0) |
              ((head & H_TRUNCATED) ? DKREC_SAMPLE_TRUNCATED : 0) |
              (rd->off_cpu ? DKREC_SAMPLE_OFF_CPU : 0);
    rd->off_cpu = false;
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
            s.period += (uint64_t)dkrec__unzigzag(v);
        }
    }
    uint64_t dt;
    if (get_varint(rd, &dt) != 0)
        return -1;
    s.time_ns += (uint64_t)dkrec__unzigzag(dt);
    if (s.event >= r->n_events)
        return fail(rd, at, "a sample of event %u, of %zu events described", s.event, r->n_events);
    rd->prev = s;
    if (rd->fn != NULL) {
        int rc = rd->fn(rd->ctx, r, &s);
        r->n_samples++;
        if (rc != 0) {
            rd->stopped = rc;
            return -1;
        }
        return 0;
    }
    if (grow(rd, (void **)&r->samples, r->n_samples, &rd->cap_samples, sizeof *r->samples) != 0)
        return -1;
    r->samples[r->n_samples++] = s;
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
            return fail(rd, at, "event %u is described where event %zu was due", idx, r->n_events);
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
    case R_COMM:
    case R_EXEC: {
        if (grow(rd, (void **)&r->comms, r->n_comms, &rd->cap_comms, sizeof *r->comms) != 0)
            return -1;
        dkrec_comm *c = &r->comms[r->n_comms];
        memset(c, 0, sizeof *c);
        c->first_sample = r->n_samples;
        c->first_map = r->n_maps;
        c->exec = type == R_EXEC;
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
    case R_OFFCPU:
        if (rd->off_cpu)
            return fail(rd, at, "two off-CPU records for one sample");
        rd->off_cpu = true;
        return 0;
    case R_KSTACK: {
        uint64_t node;
        if (get_varint(rd, &node) != 0)
            return -1;
        if (rd->knode != 0)
            return fail(rd, at, "two kernel stack records for one sample");
        if (node == 0 || node >= r->n_nodes)
            return fail(rd, at, "a kernel stack names stack node %llu, of %zu defined",
                        (unsigned long long)node, r->n_nodes - 1);
        rd->knode = (uint32_t)node;
        return 0;
    }
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
        if (r->version_minor > DKREC_VERSION_MINOR)
            return fail(rd, at,
                        "unknown record type 0x%02x of format %u.%u (this dkperf reads up to "
                        "%u.%u: report it with the dkperf that recorded it)",
                        type, r->version_major, r->version_minor, DKREC_VERSION_MAJOR,
                        DKREC_VERSION_MINOR);
        return fail(rd, at, "unknown record type 0x%02x", type);
    }
}

/* Where the reader takes the file's bytes from: memory, or a file read in
 * pieces with read(2), holding at most one chunk and one piece (a mapping
 * of the whole file would count as resident as it is read). */
typedef struct source {
    const uint8_t *data; /* the whole file in memory, or NULL */
    int fd;
    uint64_t size; /* the file's */
    uint8_t *buf;  /* fd: bytes [off, off + have) of the file */
    size_t cap, have;
    uint64_t off;
    const char *name;
    char *err;
    size_t errlen;
} source;

#define READ_PIECE (1u << 20)

/* Bytes [at, at + n) of the file, or up to its end if it ends before:
 * *p points at byte at, *avail bytes from it are in hand. at only grows
 * from one call to the next. -1 with err set when the read fails. */
static int window(source *s, uint64_t at, size_t n, const uint8_t **p, size_t *avail)
{
    if (n > s->size - at)
        n = (size_t)(s->size - at);
    if (s->data != NULL) {
        *p = s->data + at;
        *avail = (size_t)(s->size - at);
        return 0;
    }
    if (s->buf == NULL || at + n > s->off + s->have) {
        /* Keep what is still ahead, read the rest. */
        size_t keep = at < s->off + s->have ? (size_t)(s->off + s->have - at) : 0;
        if (keep > 0)
            memmove(s->buf, s->buf + (at - s->off), keep);
        s->off = at;
        s->have = keep;
        size_t want = n > READ_PIECE ? n : READ_PIECE;
        if (want > s->cap) {
            uint8_t *b = realloc(s->buf, want);
            if (b == NULL) {
                snprintf(s->err, s->errlen, "%s: out of memory reading a chunk of %zu bytes",
                         s->name, n);
                return -1;
            }
            s->buf = b;
            s->cap = want;
        }
        while (s->have < n) {
            size_t room = s->cap - s->have;
            if (room > s->size - (s->off + s->have))
                room = (size_t)(s->size - (s->off + s->have));
            ssize_t k = read(s->fd, s->buf + s->have, room);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0) {
                snprintf(s->err, s->errlen, "%s: %s", s->name,
                         k < 0 ? strerror(errno) : "shorter than fstat said");
                return -1;
            }
            s->have += (size_t)k;
        }
    }
    *p = s->buf + (at - s->off);
    *avail = (size_t)(s->off + s->have - at);
    return 0;
}

/* The chunks of the file after its header, in one pass. */
static int read_chunks(reader *rd, source *src)
{
    dkrec *r = rd->r;
    uint64_t pos = HEADER_BYTES, size = src->size;
    while (pos < size) {
        const uint8_t *chunk;
        size_t avail;
        /* The tag, the length (10 bytes at most) and the checksum. */
        if (window(src, pos, 15, &chunk, &avail) != 0)
            return -1;
        rd->win = chunk;
        rd->win_off = pos;
        rd->p = chunk;
        if (r->complete)
            return fail(rd, chunk, "bytes follow the end mark");
        if (*chunk != CHUNK_TAG)
            return fail(rd, chunk, "a chunk starts with 0x%02x, not 'C'", *chunk);
        rd->p = chunk + 1;
        rd->end = chunk + avail;
        uint64_t len;
        if (get_varint(rd, &len) != 0) {
            if (rd->errlen > 0)
                rd->err[0] = '\0';
            snprintf(r->tail_note, sizeof r->tail_note,
                     "the file ends inside a chunk head at byte offset %zu", (size_t)pos);
            break;
        }
        if (len == 0 || len > CHUNK_MAX)
            return fail(rd, chunk, "a chunk of %llu bytes", (unsigned long long)len);
        size_t head = (size_t)(rd->p - chunk);
        uint64_t left = size - pos - head; /* the file's bytes after the length */
        if (left < 4 + len) {
            snprintf(r->tail_note, sizeof r->tail_note,
                     "the last chunk, at byte offset %zu, is cut (%llu of its %llu bytes are "
                     "there)",
                     (size_t)pos, (unsigned long long)(left > 4 ? left - 4 : 0),
                     (unsigned long long)len);
            break;
        }
        if (window(src, pos, head + 4 + (size_t)len, &chunk, &avail) != 0)
            return -1;
        rd->win = chunk;
        const uint8_t *c = chunk + head;
        uint32_t want = c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;
        const uint8_t *payload = c + 4;
        /* A fuzzing build skips the checksum, so that its mutations reach
         * the records behind it. */
#ifndef DKREC_FUZZING
        if (dkrec__crc32(payload, (size_t)len) != want)
            return fail(rd, chunk, "the chunk's checksum does not match its %llu bytes",
                        (unsigned long long)len);
#else
        (void)want;
#endif
        rd->p = payload;
        rd->end = payload + len;
        memset(&rd->prev, 0, sizeof rd->prev);
        rd->knode = 0;
        rd->off_cpu = false;
        while (rd->p < rd->end)
            if (read_record(rd) != 0)
                return -1;
        if (rd->knode != 0)
            return fail(rd, rd->end, "a kernel stack record without its sample");
        if (rd->off_cpu)
            return fail(rd, rd->end, "an off-CPU record without its sample");
        pos += head + 4 + len;
    }
    return 0;
}

/* The header of src checked, then its chunks read. */
static int parse(source *src, dkrec_sample_fn fn, void *ctx, dkrec **out)
{
    const char *name = src->name;
    char *err = src->err;
    size_t errlen = src->errlen;
    *out = NULL;
    if (errlen > 0)
        err[0] = '\0';
    const uint8_t *data;
    size_t avail;
    if (window(src, 0, HEADER_BYTES, &data, &avail) != 0)
        return -1;
    if (avail < HEADER_BYTES || memcmp(data, dkrec__magic, sizeof dkrec__magic) != 0) {
        snprintf(err, errlen, "%s: not a dkperf recording (no DKREC header%s)", name,
                 avail < HEADER_BYTES ? "; the file is shorter than one" : "");
        return -1;
    }
    unsigned major = data[8] | (unsigned)data[9] << 8, minor = data[10] | (unsigned)data[11] << 8;
    if (major != DKREC_VERSION_MAJOR) {
        snprintf(err, errlen, "%s: recording format version %u.%u, this dkperf reads version %d.x",
                 name, major, minor, DKREC_VERSION_MAJOR);
        return -1;
    }
    dkrec *r = calloc(1, sizeof *r);
    if (r == NULL) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -1;
    }
    r->version_major = major;
    r->version_minor = minor;
    r->file_size = src->size;
    reader rd;
    memset(&rd, 0, sizeof rd);
    rd.win = data;
    rd.p = data;
    rd.name = name;
    rd.err = err;
    rd.errlen = errlen;
    rd.r = r;
    rd.fn = fn;
    rd.ctx = ctx;
    /* Node 0 is "no frame". */
    if (grow(&rd, (void **)&r->nodes, 0, &rd.cap_nodes, sizeof *r->nodes) != 0) {
        dkrec_free(r);
        return -1;
    }
    memset(&r->nodes[0], 0, sizeof r->nodes[0]);
    r->n_nodes = 1;
    if (read_chunks(&rd, src) != 0) {
        dkrec_free(r);
        if (rd.stopped != 0 && errlen > 0)
            err[0] = '\0';
        return rd.stopped != 0 ? rd.stopped : -1;
    }
    if (!r->complete && r->tail_note[0] == '\0')
        snprintf(r->tail_note, sizeof r->tail_note,
                 "the file has no end mark (the recording was interrupted)");
    *out = r;
    return 0;
}

int dkrec_stream_parse(const uint8_t *data, size_t size, const char *name, dkrec_sample_fn fn,
                       void *ctx, dkrec **out, char *err, size_t errlen)
{
    source src = {.data = data, .fd = -1, .size = size, .name = name, .err = err, .errlen = errlen};
    return parse(&src, fn, ctx, out);
}

int dkrec_parse(const uint8_t *data, size_t size, const char *name, dkrec **out, char *err,
                size_t errlen)
{
    return dkrec_stream_parse(data, size, name, NULL, NULL, out, err, errlen);
}

int dkrec_stream_file(const char *path, dkrec_sample_fn fn, void *ctx, dkrec **out, char *err,
                      size_t errlen)
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
        const char *kind = regfile_kind(st.st_mode);
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
    source src = {
        .fd = fd, .size = (uint64_t)st.st_size, .name = path, .err = err, .errlen = errlen};
    int rc = parse(&src, fn, ctx, out);
    free(src.buf);
    close(fd);
    return rc;
}

int dkrec_read_file(const char *path, dkrec **out, char *err, size_t errlen)
{
    return dkrec_stream_file(path, NULL, NULL, out, err, errlen);
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
