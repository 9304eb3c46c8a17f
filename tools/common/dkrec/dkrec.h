/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkrec.h - the recording file of dkperf record and dkperf report (format
 * in doc/RECORD-FORMAT.md): a header, then self-delimiting chunks, each
 * with its length and a CRC-32, holding records (events, maps with image
 * identities, process names, samples, lost and throttle counts, an end
 * mark). Stacks are interned as a tree of (parent, address) nodes; sample
 * fields are delta-encoded varints.
 *
 * The writer appends whole chunks with write(2): a writer killed at any
 * moment leaves a file whose complete chunks read back, and the reader
 * says that the tail was cut. The reader checks every length, index and
 * checksum, and names the file and byte offset of the first bad one.
 *
 * Functions return 0 or a negative errno (writer), or -1 with err set to
 * one line (reader); they print nothing.
 */
#ifndef DKPERF_TOOLS_DKREC_H
#define DKPERF_TOOLS_DKREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DKREC_VERSION_MAJOR 1
#define DKREC_VERSION_MINOR 3

/* Image identity kinds of a map. */
#define DKREC_ID_NONE 0
#define DKREC_ID_ELF_BUILD_ID 1 /* NT_GNU_BUILD_ID note, usually 20 bytes */
#define DKREC_ID_MACHO_UUID 2   /* LC_UUID, 16 bytes */
#define DKREC_ID_MAX 64         /* bytes kept at most */

/* Sample flags. */
#define DKREC_SAMPLE_KERNEL 0x1u    /* the sampled pc was in the kernel */
#define DKREC_SAMPLE_TRUNCATED 0x2u /* the call chain was cut */
#define DKREC_SAMPLE_OFF_CPU 0x4u   /* the thread was off CPU: period is the ns it stayed off */

/* A sample to write. */
typedef struct dkrec_sample {
    uint32_t event;
    int32_t pid;
    uint64_t tid;
    uint32_t cpu;
    uint64_t time_ns;
    uint64_t period;
    unsigned flags;         /* DKREC_SAMPLE_* */
    const uint64_t *frames; /* innermost first: frames[0] is the pc (user samples) */
    size_t n_frames;
    const uint64_t *kernel_frames; /* the kernel's chain, innermost first (0 frames: none) */
    size_t n_kernel_frames;
} dkrec_sample;

typedef struct dkrec_writer dkrec_writer;

/* Writes the header to fd (owned by the caller, left open) and returns a
 * writer. -ENOMEM, or the errno of the write. */
int dkrec_writer_open(int fd, dkrec_writer **out);
int dkrec_write_meta(dkrec_writer *w, const char *key, const char *value);
int dkrec_write_event(dkrec_writer *w, uint32_t index, const char *name, uint64_t period,
                      uint64_t freq);
int dkrec_write_map(dkrec_writer *w, int32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                    const char *path, unsigned id_kind, const uint8_t *id, size_t id_len);
int dkrec_write_comm(dkrec_writer *w, int32_t pid, uint64_t tid, const char *comm);
/* A name taken at an exec (format 1.3): the pid's maps before it are not
 * in force for its samples after it. */
int dkrec_write_exec(dkrec_writer *w, int32_t pid, uint64_t tid, const char *comm);
int dkrec_write_exit(dkrec_writer *w, int32_t pid, uint64_t tid);
int dkrec_write_sample(dkrec_writer *w, const dkrec_sample *s);
/* Running totals of what the kernel dropped (the last one written counts). */
int dkrec_write_stats(dkrec_writer *w, uint64_t lost, uint64_t throttled, uint64_t unthrottled);
/* Writes what is buffered as one chunk (a chunk is also written whenever
 * the buffer fills). */
int dkrec_flush(dkrec_writer *w);
/* Writes the end mark (the file is then complete) and flushes. */
int dkrec_finish(dkrec_writer *w);
/* Bytes written to fd so far, header included. */
uint64_t dkrec_bytes(const dkrec_writer *w);
uint64_t dkrec_samples(const dkrec_writer *w);
/* Switching files (record --switch-output): dkrec_writer_keep, called
 * before anything is written, keeps the meta, event, map and comm records
 * (a process's until its exit record); dkrec_writer_switch ends the
 * current file (its end mark, flushed) and goes on in fd (owned by the
 * caller), which starts with the header and those records, so that each
 * file reads alone. Stacks are interned anew; each file's loss totals and
 * sample count are its own. 0 or a negative errno. */
void dkrec_writer_keep(dkrec_writer *w);
/* Forgets the map records kept of pid (the caller writes its maps anew). */
void dkrec_writer_forget_maps(dkrec_writer *w, int32_t pid);
int dkrec_writer_switch(dkrec_writer *w, int fd);
/* Frees the writer; what was not flushed is lost. NULL is ignored. */
void dkrec_writer_free(dkrec_writer *w);

/* A recording read back. */
typedef struct dkrec_event {
    char *name;
    uint64_t period, freq;
} dkrec_event;

typedef struct dkrec_map {
    int32_t pid;
    uint64_t start, len, pgoff;
    char *path;
    unsigned id_kind;
    size_t id_len;
    uint8_t id[DKREC_ID_MAX];
    size_t first_sample; /* samples before this index came before the map */
} dkrec_map;

typedef struct dkrec_comm {
    int32_t pid;
    uint64_t tid;
    char *comm;
    size_t first_sample;
    size_t first_map; /* maps before this index came before the comm */
    bool exec;        /* taken at an exec (an exec record) */
} dkrec_comm;

typedef struct dkrec_node {
    uint32_t parent; /* 0: none (outermost frame) */
    uint32_t depth;  /* frames from the root, 1 for a root */
    uint64_t addr;
} dkrec_node;

typedef struct dkrec_rsample {
    uint64_t time_ns, period, tid;
    int32_t pid;
    uint32_t event, cpu;
    uint32_t node;  /* innermost frame, 0: no frame */
    uint32_t knode; /* innermost frame of the kernel's chain, 0: none */
    unsigned flags;
} dkrec_rsample;

typedef struct dkrec {
    unsigned version_major, version_minor;
    char **meta; /* key, value, key, value, ... */
    size_t n_meta;
    dkrec_event *events;
    size_t n_events;
    dkrec_map *maps;
    size_t n_maps;
    dkrec_comm *comms;
    size_t n_comms;
    dkrec_node *nodes; /* nodes[0] is unused: node ids start at 1 */
    size_t n_nodes;    /* including nodes[0] */
    dkrec_rsample *samples;
    size_t n_samples;
    size_t n_exits;
    uint64_t lost, throttled, unthrottled;
    bool complete;       /* the end mark was read */
    char tail_note[256]; /* why the file ends early, "" when complete */
    uint64_t file_size;
} dkrec;

/* Reads a recording. A file cut short (no end mark, or a last chunk that
 * ends past the end of the file) is read up to its last whole chunk and
 * tail_note says so; anything else that is wrong fails with err naming the
 * file (name) and the byte offset. */
int dkrec_read_file(const char *path, dkrec **out, char *err, size_t errlen);
int dkrec_parse(const uint8_t *data, size_t size, const char *name, dkrec **out, char *err,
                size_t errlen);
/* Reads a recording in one pass as dkrec_read_file does, but hands each
 * sample to fn, in file order, instead of keeping it: r->samples stays
 * NULL, n_samples counts them, and memory is bounded by the tables (maps,
 * comms, stack nodes), not by the samples. The file is read in pieces.
 * When fn returns nonzero the read stops and returns that value, err
 * empty (fn said why); a sample handed to fn before a corrupt byte was met
 * does not make the read succeed. */
typedef int (*dkrec_sample_fn)(void *ctx, const dkrec *r, const dkrec_rsample *s);
int dkrec_stream_file(const char *path, dkrec_sample_fn fn, void *ctx, dkrec **out, char *err,
                      size_t errlen);
int dkrec_stream_parse(const uint8_t *data, size_t size, const char *name, dkrec_sample_fn fn,
                       void *ctx, dkrec **out, char *err, size_t errlen);
void dkrec_free(dkrec *r);
/* The value of a meta key, or NULL. */
const char *dkrec_meta(const dkrec *r, const char *key);

#endif /* DKPERF_TOOLS_DKREC_H */
