/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pe_sample.h - what pe_sample.c (opening, start, stop, close) and
 * pe_sample_read.c (decoding and draining the rings, waiting) share: the
 * state of a perf_event dk_sampling. Not installed.
 */
#ifndef DKPERF_BACKEND_PE_SAMPLE_H
#define DKPERF_BACKEND_PE_SAMPLE_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend/perf_event/pe_internal.h"

#define DEFAULT_FREQ DK__PE_SAMPLE_FREQ
#define DEFAULT_RING_BYTES ((size_t)256 * 1024)
#define MAX_RING_BYTES ((size_t)1 << 30)
#define MAX_CPUS 8192
#define RECORD_MAX 65536 /* perf_event_header.size is 16 bits */
#define MAX_STACK_FILE "/proc/sys/kernel/perf_event_max_stack"
#define MAX_RATE_FILE "/proc/sys/kernel/perf_event_max_sample_rate"

typedef struct ps_fd {
    int fd;
    bool leader;
} ps_fd;

typedef struct ps_id {
    uint64_t id;
    size_t event;
} ps_id;

typedef struct ps_ring {
    struct perf_event_mmap_page *page;
    size_t map_bytes;
    const unsigned char *data;
    uint64_t size; /* data bytes, a power of two */
    uint64_t head; /* data_head when the drain began */
    uint64_t pos;  /* the next record */
    int fd;
} ps_ring;

/* An executable mapping that existed before sampling started, from
 * /proc/<pid>/maps (the kernel reports only those made later). */
typedef struct ps_map {
    uint64_t start, len, pgoff;
    char *path;
} ps_map;

typedef struct ps_state {
    ps_fd *fds;
    size_t nfds, fds_cap;
    ps_id *ids;
    size_t nids, ids_cap;
    ps_ring *rings;
    size_t nrings;
    struct pollfd *polls;    /* one per ring, for wait */
    unsigned char *scratch;  /* a record that wraps the ring, copied whole */
    uint64_t *frames;        /* the user chain of the sample delivered */
    uint64_t *kernel_frames; /* its kernel chain (DK_SAMPLE_KERNEL_CALLCHAIN) */
    uint64_t sample_type;
    unsigned max_stack; /* what the kernel was asked for */
    bool exec_pending;  /* the kernel enables at exec: the first start is a no-op */
    int maps_pid;       /* > 0: read its maps at the first start */
    bool maps_read;
    ps_map *maps;
    size_t nmaps, maps_sent;
    uint64_t maps_time;
    pthread_mutex_t drain_lock;
    pthread_mutex_t wait_lock;
} ps_state;

/* The event a kernel id belongs to (inherited copies report their
 * parent's id); SIZE_MAX when unknown. */
size_t dk__ps_event_of(const ps_state *st, uint64_t id);

#endif /* DKPERF_BACKEND_PE_SAMPLE_H */
