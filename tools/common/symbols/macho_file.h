/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * macho_file.h - the file layer of the Mach-O reader (macho.c, for it
 * alone): the format's constants, bytes read within the file's bounds, a
 * slice's header and load commands, and the choice of a fat file's slice.
 * Every function returns 0, or -1 with one line in the source's err.
 */
#ifndef DKPERF_TOOLS_MACHO_FILE_H
#define DKPERF_TOOLS_MACHO_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* <mach-o/loader.h> and <mach-o/fat.h> values, spelled out so this builds
 * anywhere. */
#define MH_MAGIC 0xfeedfaceu
#define MH_CIGAM 0xcefaedfeu
#define MH_MAGIC_64 0xfeedfacfu
#define MH_CIGAM_64 0xcffaedfeu
#define FAT_MAGIC 0xcafebabeu
#define FAT_MAGIC_64 0xcafebabfu
#define CPU_ARCH_ABI64 0x01000000u
#define CPU_TYPE_X86_64 0x01000007u
#define CPU_TYPE_ARM64 0x0100000cu
#define CPU_SUBTYPE_MASK 0xff000000u
#define CPU_SUBTYPE_ARM64E 2u
#define LC_SYMTAB 0x2u
#define LC_SEGMENT_64 0x19u
#define LC_UUID 0x1bu
#define LC_FUNCTION_STARTS 0x26u
#define N_STAB 0xe0u
#define N_TYPE 0x0eu
#define N_SECT 0x0eu
#define N_EXT 0x01u

#define HEADER_64_SIZE 32u
#define SEGMENT_64_SIZE 72u
#define SECTION_64_SIZE 80u
#define NLIST_64_SIZE 16u
#define FAT_HEADER_SIZE 8u
#define FAT_ARCH_SIZE 20u
#define FAT_ARCH_64_SIZE 32u
/* A Java class file starts with FAT_MAGIC too; its next word (the class
 * version) is 39 or more, and no real fat file has that many slices. */
#define FAT_MAX_ARCHS 32u

#if defined(__aarch64__) || defined(__arm64__)
#define HOST_CPU CPU_TYPE_ARM64
#elif defined(__x86_64__)
#define HOST_CPU CPU_TYPE_X86_64
#else
#define HOST_CPU 0u
#endif

/* Where the bytes come from: a file descriptor or a buffer. */
typedef struct macho_src {
    int fd;
    const uint8_t *mem;
    uint64_t size;
    const char *name;
    char *err;
    size_t errlen;
} macho_src;

/* One slice: the Mach-O image at [base, base + size) of the source. */
typedef struct macho_slice {
    uint64_t base, size;
    uint32_t ncmds, sizeofcmds;
    uint32_t cputype, cpusubtype;
    uint8_t *cmds; /* sizeofcmds bytes */
} macho_slice;

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static inline uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | (uint64_t)be32(p + 4);
}


/* True when [off, off + len) lies inside [0, size), without overflow. */
static inline bool fits(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* Sets the source's err to "name: " and the message; returns -1. */
__attribute__((format(printf, 2, 3))) int macho__fail(const macho_src *s, const char *fmt, ...);

/* Read len bytes at off; the caller checked they lie in the source, so a
 * short read means the file changed under us. */
int macho__src_read(const macho_src *s, uint64_t off, void *buf, size_t len, const char *what);

/* n entries of each bytes, or NULL with the error set: errno ENOMEM when
 * malloc failed, EFBIG when the table is refused as too large for a real
 * file (more than 1 GiB). */
void *macho__alloc(const macho_src *s, uint64_t n, uint64_t each, const char *what);

/* Read the header and load commands of the slice at [sl->base, +size). */
int macho__read_slice_header(const macho_src *s, macho_slice *sl);

/* Walk the load commands: *off and *size of command i, after checking its
 * cmdsize. */
int macho__next_cmd(const macho_src *s, const macho_slice *sl, uint32_t i, uint32_t *off,
                    uint32_t *cmd, uint32_t *cmdsize);

/* Choose the slice of a fat file (magic FAT_MAGIC or FAT_MAGIC_64): by UUID
 * when want_uuid is given, else by the rule of macho.h; its header and load
 * commands read into *out. */
int macho__pick_fat_slice(const macho_src *s, uint32_t magic, const uint8_t *want_uuid,
                          macho_slice *out);

#endif /* DKPERF_TOOLS_MACHO_FILE_H */
