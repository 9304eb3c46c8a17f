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

/* A thread switched out, blocked, until its switch-in (pe_offcpu.c). */
typedef struct ps_blocked {
    uint32_t tid;     /* 0: a free slot */
    dk_sample sample; /* its switch-out sample; arrays in frames */
    uint64_t *frames; /* user chain, then kernel chain */
} ps_blocked;

/* A sample's event index for the context-switches event of off-CPU
 * sampling, which no caller's event has. */
#define PS_OFF_CPU_EVENT (SIZE_MAX - 1)

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
    ps_blocked *blocked; /* open addressing by tid, a power of two */
    size_t nblocked, blocked_cap;
    uint64_t stopped_ns; /* the last stop, until a drain ends its blocked stretches */
    /* The threads blocked at stop_order_ns, oldest switch-out first, and
     * the next to deliver: sorted once a stop, not searched for each. */
    struct ps_stopped *stop_order;
    size_t stop_n, stop_next;
    uint64_t stop_order_ns;
    pthread_mutex_t drain_lock;
    pthread_mutex_t wait_lock;
} ps_state;

/* The event a kernel id belongs to (inherited copies report their
 * parent's id); SIZE_MAX when unknown. */
size_t dk__ps_event_of(const ps_state *st, uint64_t id);

/* ---- pe_offcpu.c: DK_SAMPLING_OFF_CPU ---------------------------------- */

/* Open the context-switches event of off-CPU sampling for pid on cpu,
 * its records into ring_fd's ring, attr as like's otherwise. Returns the
 * fd, or DK_EPERM (the paranoid level forbids it) or another error. */
int dk__ps_offcpu_open(const pe_session *k, const struct perf_event_attr *like, int pid, int cpu,
                       int ring_fd, bool on_exec);
/* A switch-out sample x of the context-switches event: kept until its
 * thread's switch-in. Returns 0, or -1 when out of memory (the stretch is
 * lost). */
int dk__ps_offcpu_blocked(ps_state *st, const dk_sample *x);
/* A PERF_RECORD_SWITCH of tid at time: 1 with *out the off-CPU sample of
 * a switch-in that ends a blocked stretch, 0 otherwise. */
int dk__ps_offcpu_switch(ps_state *st, uint16_t misc, uint32_t tid, uint64_t time, dk_sample *out);
/* tid exited: forget its pending stretch. */
void dk__ps_offcpu_exit(ps_state *st, uint32_t tid);
/* Sampling stopped at stop_ns: the next pending stretch that began before
 * it, as *out (period up to the stop), 1; 0 when none is left. */
int dk__ps_offcpu_stopped(ps_state *st, uint64_t stop_ns, dk_sample *out);
void dk__ps_offcpu_free(ps_state *st);

#endif /* DKPERF_BACKEND_PE_SAMPLE_H */
