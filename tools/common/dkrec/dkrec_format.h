/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * dkrec_format.h - what the recording's writer (dkrec_write.c) and reader
 * (dkrec_read.c) share: the format's constants (doc/RECORD-FORMAT.md), its
 * CRC-32 and the zigzag coding of signed deltas. Not installed; the API is
 * dkrec.h.
 */
#ifndef DKPERF_TOOLS_DKREC_FORMAT_H
#define DKPERF_TOOLS_DKREC_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* The file's first 8 bytes; HEADER_BYTES in all, the versions after them. */
extern const uint8_t dkrec__magic[8];
#define HEADER_BYTES 16
#define CHUNK_TAG 'C'
#define CHUNK_TARGET (64u * 1024u)      /* a chunk is written once its payload reaches this */
#define CHUNK_MAX (64u * 1024u * 1024u) /* the reader refuses larger chunks */
#define NAME_MAX_BYTES 4096u

enum {
    R_META = 'm',
    R_EVENT = 'e',
    R_MAP = 'p',
    R_COMM = 'c',
    R_EXIT = 'x',
    R_NODES = 'n',
    R_SAMPLE = 's',
    R_KSTACK = 'k', /* since 1.1 */
    R_OFFCPU = 'o', /* since 1.2 */
    R_EXEC = 'i',   /* since 1.3 */
    R_STATS = 'l',
    R_END = 'z'
};

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

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of n bytes. */
uint32_t dkrec__crc32(const uint8_t *p, size_t n);

/* Signed deltas as varints: 0, -1, 1, -2, ... become 0, 1, 2, 3, ... */
static inline uint64_t dkrec__zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static inline int64_t dkrec__unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

#endif /* DKPERF_TOOLS_DKREC_FORMAT_H */
