/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_pprof.c - dkperf report --pprof: the model (report.h) as pprof's
 * profile.proto (github.com/google/pprof, proto/profile.proto), gzipped,
 * the format go tool pprof, Pyroscope and Parca read.
 *
 * Two value types per event: its samples ("EVENT_samples", count) and
 * their weight ("EVENT", nanoseconds for perf's clocks, else count); the
 * first event's samples are the default, as report --stdio counts them.
 * A recording with off-CPU samples has two more, "off-cpu_samples" (count)
 * and "off-cpu" (nanoseconds off CPU), which alone its off-CPU samples
 * (stacks under [off-cpu]) fill.
 * A frame is a location and a function (the model keeps names, not
 * addresses: locations have no address); an image is a mapping with its
 * path and build id from the recording; the command and pid are labels.
 *
 * The protobuf is written by the few lines below (varints and
 * length-delimited fields are all it needs), the gzip as stored deflate
 * blocks with dkrec's CRC-32: no library, nothing but libc on macOS.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/text.h"
#include "dkrec_format.h"
#include "report.h"

/* A growing byte buffer; oom set once an allocation failed. */
typedef struct pbuf {
    uint8_t *d;
    size_t n, cap;
    bool oom;
} pbuf;

static void put(pbuf *b, const void *p, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n)
            c *= 2;
        uint8_t *q = realloc(b->d, c);
        if (q == NULL) {
            b->oom = true;
            return;
        }
        b->d = q;
        b->cap = c;
    }
    if (n > 0)
        memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void varint(pbuf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    do {
        t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v != 0);
    put(b, t, n);
}

/* Field f as a varint; zero is the default and left out. */
static void field_u(pbuf *b, unsigned f, uint64_t v)
{
    if (v == 0)
        return;
    varint(b, (uint64_t)f << 3);
    varint(b, v);
}

/* Field f, length-delimited: bytes, a string or a message. */
static void field_b(pbuf *b, unsigned f, const void *p, size_t n)
{
    varint(b, (uint64_t)f << 3 | 2);
    varint(b, n);
    put(b, p, n);
}

/* The message in sub as field f of b; sub is emptied for the next. */
static void field_m(pbuf *b, unsigned f, pbuf *sub)
{
    b->oom |= sub->oom;
    field_b(b, f, sub->d, sub->n);
    sub->n = 0;
}

/* s as field f, a protobuf string: proto3 requires UTF-8, so each byte
 * that is not well-formed UTF-8 becomes U+FFFD (a strict decoder refuses
 * the whole profile otherwise), and each code point dk__must_escape names
 * too (go tool pprof prints names to the terminal as they are), as
 * dk__put_html writes them. tmp: scratch, emptied. */
static void field_s(pbuf *b, unsigned f, const char *s, pbuf *tmp)
{
    static const uint8_t fffd[] = {0xef, 0xbf, 0xbd};
    for (const char *c = s; *c != '\0';) {
        const char *at = c;
        size_t len = dk__utf8_length((const unsigned char *)c);
        unsigned long cp = len ? dk__utf8_next(&c) : 0xfffd;
        if (len == 0 || dk__must_escape(cp))
            put(tmp, fffd, sizeof fffd);
        else
            put(tmp, at, len);
        c = at + (len ? len : 1);
    }
    field_m(b, f, tmp);
}

/* The string table: each string once, index 0 the empty one. */
typedef struct strtab {
    const char **s;
    size_t n, cap;
    rslots idx;
    char **owned; /* the strings made here (event type names, build ids) */
    size_t n_owned;
    bool oom;
} strtab;

static uint64_t hash_s(const char *s) { return rmap_hash_str(0xcbf29ce484222325ull, s); }

static uint64_t str_hash(const void *ctx, size_t i)
{
    return hash_s(((const char *const *)ctx)[i]);
}

/* The index of s (kept by pointer: it must outlive the table); -1 when
 * out of memory. */
static int64_t str_id(strtab *t, const char *s)
{
    if (rslots_room(&t->idx, t->n, str_hash, t->s) != 0)
        return -1;
    size_t j = rslots_first(&t->idx, hash_s(s));
    for (; t->idx.slot1[j] != 0; j = rslots_next(&t->idx, j))
        if (strcmp(t->s[t->idx.slot1[j] - 1], s) == 0)
            return t->idx.slot1[j] - 1;
    if (t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 256;
        const char **q = realloc(t->s, c * sizeof *q);
        if (q == NULL)
            return -1;
        t->s = q;
        t->cap = c;
    }
    t->s[t->n] = s;
    t->idx.slot1[j] = (uint32_t)++t->n;
    return (int64_t)t->n - 1;
}

/* The index of s, or 0 with oom set (s NULL: it could not be made). */
static uint64_t sid(strtab *t, const char *s)
{
    int64_t i = s != NULL ? str_id(t, s) : -1;
    if (i < 0) {
        t->oom = true;
        return 0;
    }
    return (uint64_t)i;
}

/* A string made here, freed with the table; NULL when out of memory. */
static const char *str_own(strtab *t, char *s)
{
    char **q = s != NULL ? realloc(t->owned, (t->n_owned + 1) * sizeof *q) : NULL;
    if (q == NULL) {
        free(s);
        return NULL;
    }
    t->owned = q;
    t->owned[t->n_owned++] = s;
    return s;
}

static void strtab_free(strtab *t)
{
    for (size_t i = 0; i < t->n_owned; i++)
        free(t->owned[i]);
    free(t->owned);
    free(t->s);
    rslots_free(&t->idx);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s != NULL && s[1] != '\0' ? s + 1 : path;
}

/* Seconds since 1970 of the recording's "time" meta (YYYY-MM-DDTHH:MM:SSZ),
 * or 0. Days from the civil date (H. Hinnant's algorithm): no timegm. */
static int64_t meta_time(const dkrec *rec)
{
    const char *t = dkrec_meta(rec, "time");
    /* The six numbers and what follows each (no sscanf: the macOS build
     * keeps to the C library calls it allows). */
    static const char after[] = "--T::Z";
    int v[6];
    for (int k = 0; k < 6; k++) {
        if (t == NULL || *t < '0' || *t > '9')
            return 0;
        long n = 0;
        for (int digits = 0; *t >= '0' && *t <= '9'; t++)
            if (++digits > 6)
                return 0;
            else
                n = n * 10 + (*t - '0');
        if (*t++ != after[k])
            return 0;
        v[k] = (int)n;
    }
    int y = v[0], mo = v[1], d = v[2], h = v[3], mi = v[4], s = v[5];
    if (mo < 1 || mo > 12 || d < 1 || d > 31)
        return 0;
    y -= mo <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = era * 146097 + doe - 719468;
    return days * 86400 + h * 3600 + mi * 60 + s;
}

/* Whether an event's periods are nanoseconds (perf's clocks). */
/* The profile, encoded in out; -1 when out of memory. */
static int encode(pbuf *out, const rprofile *p)
{
    const dkrec *rec = p->rec;
    size_t ne = rec->n_events ? rec->n_events : 1, nv = 2 * ne + (p->has_off_cpu ? 2 : 0);
    strtab st = {0}, dsos = {0}; /* the strings; the images, mapping ids */
    pbuf sub = {0}, sub2 = {0};
    rmap aggs = {0};
    uint64_t *vals = NULL;
    uint32_t *agg_of = NULL, *map_of = NULL, *first = NULL; /* per sample, frame, aggregate */
    size_t *map_rec = NULL;
    size_t n_aggs = 0;
    int rc = -1;
    sid(&st, "");

    /* sample_type (1): per event, its samples then their weight. */
    for (size_t e = 0; e < ne; e++) {
        const char *ev = rec->n_events ? rec->events[e].name : "samples";
        size_t len = strlen(ev) + sizeof "_samples";
        char *name = malloc(len);
        if (name != NULL)
            snprintf(name, len, "%s_samples", ev);
        field_u(&sub, 1, sid(&st, str_own(&st, name)));
        field_u(&sub, 2, sid(&st, "count"));
        field_m(out, 1, &sub);
        field_u(&sub, 1, sid(&st, ev));
        field_u(&sub, 2, sid(&st, report_time_event(ev) ? "nanoseconds" : "count"));
        field_m(out, 1, &sub);
    }
    if (p->has_off_cpu) {
        field_u(&sub, 1, sid(&st, "off-cpu_samples"));
        field_u(&sub, 2, sid(&st, "count"));
        field_m(out, 1, &sub);
        field_u(&sub, 1, sid(&st, "off-cpu"));
        field_u(&sub, 2, sid(&st, "nanoseconds"));
        field_m(out, 1, &sub);
    }

    /* The samples, one per (stack, command, pid): sums per value type. */
    agg_of = malloc((p->n_entries ? p->n_entries : 1) * sizeof *agg_of);
    if (agg_of == NULL)
        goto done;
    for (size_t i = 0; i < p->n_entries; i++) {
        const rsample *s = &p->entries[i];
        uint64_t kb = (uint64_t)s->comm << 32 | (uint32_t)s->pid;
        int64_t a = rmap_get(&aggs, s->stack, kb);
        if (a < 0) {
            a = (int64_t)n_aggs++;
            if (rmap_put(&aggs, s->stack, kb, (uint32_t)a) != 0)
                goto done;
        }
        agg_of[i] = (uint32_t)a;
    }
    vals = calloc((n_aggs ? n_aggs : 1) * nv, sizeof *vals);
    first = calloc(n_aggs ? n_aggs : 1, sizeof *first); /* its first sample's index + 1 */
    if (vals == NULL || first == NULL)
        goto done;
    for (size_t i = 0; i < p->n_entries; i++) {
        const rsample *s = &p->entries[i];
        size_t col = rsample_off_cpu(s) ? ne : s->event < ne ? s->event : 0;
        uint64_t *v = &vals[agg_of[i] * nv + 2 * col];
        v[0] += s->count;
        v[1] += s->weight;
        if (first[agg_of[i]] == 0)
            first[agg_of[i]] = (uint32_t)i + 1;
    }
    for (size_t a = 0; a < n_aggs && !out->oom; a++) {
        const rsample *s = &p->entries[first[a] - 1];
        for (uint32_t v = s->stack; v != 0; v = p->nodes[v].parent)
            varint(&sub2, (uint64_t)p->nodes[v].frame + 1);
        field_m(&sub, 1, &sub2);
        for (size_t k = 0; k < nv; k++)
            varint(&sub2, vals[a * nv + k]);
        field_m(&sub, 2, &sub2);
        field_u(&sub2, 1, sid(&st, "comm"));
        field_u(&sub2, 2, sid(&st, p->comms[s->comm]));
        field_m(&sub, 3, &sub2);
        field_u(&sub2, 1, sid(&st, "pid"));
        field_u(&sub2, 3, (uint64_t)(int64_t)s->pid);
        field_m(&sub, 3, &sub2);
        field_m(out, 2, &sub);
    }

    /* mapping (3): one per image the frames name, with the path and build
     * id of the first map of that image's name. */
    map_of = calloc(p->n_frames ? p->n_frames : 1, sizeof *map_of); /* mapping id, 0: none */
    if (map_of == NULL)
        goto done;
    sid(&dsos, "[unknown]"); /* index 0: no mapping */
    /* pprof takes the first mapping for the program's: the command's. */
    const char *cmd = dkrec_meta(rec, "command");
    char prog[256];
    size_t plen = 0;
    while (cmd != NULL && (*cmd == ' ' || *cmd == '\t'))
        cmd++;
    while (cmd != NULL && cmd[plen] != '\0' && cmd[plen] != ' ' && cmd[plen] != '\t' &&
           plen < sizeof prog - 1) {
        prog[plen] = cmd[plen];
        plen++;
    }
    prog[plen] = '\0';
    if (plen > 0)
        sid(&dsos, base_name(prog));
    for (size_t f = 0; f < p->n_frames; f++)
        map_of[f] = (uint32_t)sid(&dsos, p->frames[f].dso);
    size_t n_mappings = dsos.n - 1;
    map_rec = malloc((n_mappings + 1) * sizeof *map_rec); /* map index + 1, 0: none */
    if (map_rec == NULL)
        goto done;
    memset(map_rec, 0, (n_mappings + 1) * sizeof *map_rec);
    /* The maps of every recording, in order: the first of each image. */
    for (size_t r = 0, base = 0; r < p->n_recs; base += p->recs[r++]->n_maps)
        for (size_t i = 0; i < p->recs[r]->n_maps; i++) {
            uint64_t d = sid(&dsos, base_name(p->recs[r]->maps[i].path));
            if (d >= 1 && d <= n_mappings && map_rec[d] == 0)
                map_rec[d] = base + i + 1;
        }
    for (size_t id = 1; id <= n_mappings && !dsos.oom; id++) {
        const dkrec_map *m = NULL;
        for (size_t r = 0, base = 0; map_rec[id] != 0 && m == NULL && r < p->n_recs;
             base += p->recs[r++]->n_maps)
            if (map_rec[id] - 1 < base + p->recs[r]->n_maps)
                m = &p->recs[r]->maps[map_rec[id] - 1 - base];
        const char *dso = dsos.s[id];
        field_u(&sub, 1, id);
        if (m != NULL) {
            field_u(&sub, 2, m->start);
            field_u(&sub, 3, m->start + m->len);
            field_u(&sub, 4, m->pgoff);
        }
        field_u(&sub, 5, sid(&st, m != NULL ? m->path : dso));
        if (m != NULL && m->id_kind != DKREC_ID_NONE && m->id_len > 0) {
            char *hex = malloc(2 * m->id_len + 1);
            for (size_t k = 0; hex != NULL && k < m->id_len; k++)
                snprintf(hex + 2 * k, 3, "%02x", m->id[k]);
            field_u(&sub, 6, sid(&st, str_own(&st, hex)));
        }
        field_u(&sub, 7, 1); /* has_functions: pprof need not symbolize */
        field_m(out, 3, &sub);
    }

    /* location (4) and function (5): one of each per frame, same id. */
    for (size_t f = 0; f < p->n_frames && !out->oom; f++) {
        field_u(&sub, 1, f + 1);
        field_u(&sub, 2, map_of[f]);
        field_u(&sub2, 1, f + 1);
        field_m(&sub, 4, &sub2);
        field_m(out, 4, &sub);
    }
    for (size_t f = 0; f < p->n_frames && !out->oom; f++) {
        /* A kernel frame is marked as in the stack outputs ("name_[k]"). */
        const char *fname = p->frames[f].name;
        if (rframe_kernel(&p->frames[f])) {
            size_t n = strlen(fname);
            char *marked = malloc(n + sizeof RFRAME_KERNEL_MARK);
            if (marked != NULL) {
                memcpy(marked, fname, n);
                memcpy(marked + n, RFRAME_KERNEL_MARK, sizeof RFRAME_KERNEL_MARK);
            }
            fname = str_own(&st, marked);
        }
        uint64_t name = sid(&st, fname);
        field_u(&sub, 1, f + 1);
        field_u(&sub, 2, name);
        field_u(&sub, 3, name);
        field_m(out, 5, &sub);
    }

    /* The strings every other field names are all in the table by now. */
    uint64_t ptype = sid(&st, rec->n_events ? rec->events[0].name : "samples");
    uint64_t punit =
        sid(&st, rec->n_events && report_time_event(rec->events[0].name) ? "nanoseconds" : "count");
    for (size_t i = 0; i < st.n && !st.oom; i++)
        field_s(out, 6, st.s[i], &sub);
    field_u(out, 9, (uint64_t)meta_time(rec) * 1000000000u);
    field_u(out, 10, p->time_hi > p->time_lo ? p->time_hi - p->time_lo : 0);
    field_u(&sub, 1, ptype);
    field_u(&sub, 2, punit);
    field_m(out, 11, &sub);
    /* A sampling frequency of a clock is a period of 1e9/freq ns. */
    const dkrec_event *e0 = rec->n_events ? &rec->events[0] : NULL;
    field_u(out, 12,
            e0 == NULL                                     ? 0
            : e0->period != 0                              ? e0->period
            : e0->freq != 0 && report_time_event(e0->name) ? 1000000000u / e0->freq
                                                           : 0);
    field_u(out, 14, 1); /* default_sample_type: the first event's samples */
    rc = out->oom || sub.oom || sub2.oom || st.oom || dsos.oom ? -1 : 0;
done:
    strtab_free(&st);
    strtab_free(&dsos);
    free(first);
    free(map_rec);
    free(sub.d);
    free(sub2.d);
    rmap_free(&aggs);
    free(vals);
    free(agg_of);
    free(map_of);
    return rc;
}

static void le32(uint8_t *q, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        q[i] = (uint8_t)(v >> (8 * i));
}

/* data as a gzip member of stored deflate blocks (RFC 1951 BTYPE 00,
 * RFC 1952), to out. */
static void gzip_stored(FILE *out, const uint8_t *data, size_t n)
{
    static const uint8_t head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
    fwrite(head, 1, sizeof head, out);
    size_t off = 0;
    do {
        size_t k = n - off < 65535 ? n - off : 65535;
        uint8_t h[5] = {off + k == n ? 1 : 0, (uint8_t)k, (uint8_t)(k >> 8), (uint8_t)~k,
                        (uint8_t)(~k >> 8)};
        fwrite(h, 1, sizeof h, out);
        if (k > 0)
            fwrite(data + off, 1, k, out);
        off += k;
    } while (off < n);
    uint8_t tail[8];
    le32(tail, dkrec__crc32(data, n));
    le32(tail + 4, (uint32_t)n);
    fwrite(tail, 1, sizeof tail, out);
}

int report_pprof(FILE *out, const rprofile *p)
{
    pbuf b = {0};
    if (encode(&b, p) != 0) {
        free(b.d);
        cli_error("report", "--pprof: out of memory");
        return -1;
    }
    gzip_stored(out, b.d, b.n);
    free(b.d);
    return 0;
}
