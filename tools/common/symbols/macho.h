/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * macho.h - a small reader of Mach-O symbol tables, for symbolizing sampled
 * addresses against the images on disk (dkperf report).
 *
 * It reads 64-bit little-endian Mach-O files (arm64, arm64e, x86_64), thin
 * or inside a fat (universal) file, and keeps the symbols of their sections
 * (N_SECT, external and local; stabs and undefined symbols are skipped),
 * each with the address range it covers: up to the next symbol, the next
 * function start of LC_FUNCTION_STARTS, or the end of its section,
 * whichever comes first. A leading underscore is stripped from each name
 * ("_main" -> "main", "__Z3foov" -> "_Z3foov"); names are not demangled.
 *
 * Every offset, size and count in the file is checked against the file
 * before use; a bad one fails the open with one line naming the file and
 * the field. A table of more than 1 GiB is refused the same way (errno
 * EFBIG), never allocated: a sparse file can be as large as its counts
 * claim. errno is ENOMEM when an open failed for want of memory. Only libc (open, pread, fstat, malloc); the file is read once
 * at open and closed again. A path is opened only when it is a regular
 * file on an ordinary file system (regfile.h).
 *
 * Addresses are unslid: in the image's own address space, the one `nm`
 * prints, where __TEXT starts at macho_text_vmaddr(). A sampled pc of
 * an image loaded at load_address (the runtime address of its __TEXT)
 * maps to pc - load_address + macho_text_vmaddr(m).
 *
 * Images of the dyld shared cache (most of /usr/lib and /System on macOS
 * 11 and later) are not files on disk: opening their path fails, and the
 * report shows them as image + offset.
 */
#ifndef DKPERF_TOOLS_MACHO_H
#define DKPERF_TOOLS_MACHO_H

#include <stddef.h>
#include <stdint.h>

typedef struct macho_image macho_image;

/*
 * Open the Mach-O file at path and read its symbols. A fat file holds one
 * slice per CPU; the slice read is the first one that matches, in order:
 *   1. the CPU type of the host this code was built for (arm64 or x86_64);
 *   2. arm64 (CPU type 0x0100000c);
 *   3. x86_64 (CPU type 0x01000007).
 * Within the arm64 CPU type an arm64e slice is preferred to a plain arm64
 * one: a file that carries both is an Apple system binary, which runs as
 * arm64e on Apple silicon. To pick a slice exactly, use
 * macho_open_uuid with the UUID recorded for the image.
 * 32-bit and big-endian Mach-O files are refused.
 * Returns 0 and *out (close with macho_close), or -1 with err set to one
 * line naming the file and the problem (err may be NULL when errlen is 0).
 */
int macho_open(const char *path, macho_image **out, char *err, size_t errlen);

/* The same, but read the slice whose LC_UUID is uuid (16 bytes); a file
 * without such a slice fails with an error naming the UUIDs it has. */
int macho_open_uuid(const char *path, const uint8_t uuid[16], macho_image **out, char *err,
                    size_t errlen);

/* The same on the file open for reading at fd (which stays the caller's),
 * which must be a regular file; name stands for it in errors; uuid NULL
 * reads the slice macho_open would. For a path that untrusted data
 * names, open fd with regfile_open (regfile.h), as macho_open does. */
int macho_open_fd(int fd, const char *name, const uint8_t *uuid, macho_image **out, char *err,
                  size_t errlen);

/* The same as macho_open on the size bytes at data (which need stay
 * valid only during the call); name stands for the file in errors. */
int macho_open_buffer(const void *data, size_t size, const char *name, macho_image **out, char *err,
                      size_t errlen);

/* The name of the symbol whose range holds vmaddr (unslid, see above), or
 * NULL; with a result, *sym_start (when not NULL) is the symbol's address.
 * The name lives as long as m. */
const char *macho_lookup(const macho_image *m, uint64_t vmaddr, uint64_t *sym_start);

/* The vmaddr of the __TEXT segment (0 for a file without one, such as an
 * object file). */
uint64_t macho_text_vmaddr(const macho_image *m);

/* The 16 bytes of LC_UUID, or NULL when the image has none. */
const uint8_t *macho_uuid(const macho_image *m);

/* The number of symbols with a non-empty range (for tests and reports). */
size_t macho_symbol_count(const macho_image *m);

/* The CPU type (0x0100000c arm64, 0x01000007 x86_64) and subtype of the
 * image read. */
uint32_t macho_cputype(const macho_image *m);
uint32_t macho_cpusubtype(const macho_image *m);

void macho_close(macho_image *m);

#endif
