/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * imageid.h - the identity of an image file on disk, as dkperf record keeps
 * it with each map: the ELF build-id (the NT_GNU_BUILD_ID note of a PT_NOTE
 * segment) or, where the Mach-O reader is built in, the Mach-O LC_UUID.
 * Plain POSIX reads; no ELF or Mach-O library.
 */
#ifndef DKPERF_TOOLS_IMAGEID_H
#define DKPERF_TOOLS_IMAGEID_H

#include <stddef.h>
#include <stdint.h>

/* Reads the identity of the file at path into id (room for max bytes):
 * returns its length and sets *kind (DKREC_ID_*), or 0 when the file has
 * none, cannot be read or is not an image. */
size_t imageid_read(const char *path, unsigned *kind, uint8_t *id, size_t max);

/* The same for an ELF image in memory (for tests and fuzzing). */
size_t imageid_elf(const uint8_t *data, size_t size, uint8_t *id, size_t max);

#endif /* DKPERF_TOOLS_IMAGEID_H */
