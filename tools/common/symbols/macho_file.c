/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * macho_file.c - the file layer of the Mach-O reader (macho_file.h): the
 * file is read in pieces with pread, each after its offset and size were
 * checked against the slice that holds it.
 */
#define _POSIX_C_SOURCE 200809L

#include "macho_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((format(printf, 2, 3))) int macho__fail(const macho_src *s, const char *fmt, ...)
{
    if (s->err == NULL || s->errlen == 0)
        return -1;
    int n = snprintf(s->err, s->errlen, "%s: ", s->name);
    if (n >= 0 && (size_t)n < s->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->err + n, s->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Read len bytes at off; the caller checked they lie in the source, so a
 * short read means the file changed under us. */
int macho__src_read(const macho_src *s, uint64_t off, void *buf, size_t len, const char *what)
{
    if (!fits(off, len, s->size))
        return macho__fail(s,
                           "%s at offset %llu (%zu bytes) is past the end of the file (%llu bytes)",
                           what, (unsigned long long)off, len, (unsigned long long)s->size);
    if (s->mem != NULL) {
        if (len > 0)
            memcpy(buf, s->mem + off, len);
        return 0;
    }
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(s->fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return macho__fail(s, "cannot read %s: %s", what, strerror(errno));
        if (n == 0)
            return macho__fail(s, "cannot read %s: the file was cut short while being read", what);
        done += (size_t)n;
    }
    return 0;
}

/* The most bytes one table may take: every size was checked against the
 * file, but a sparse file can be as large as its counts claim (nsyms
 * 0xffffffff is 64 GiB of nlists), and a report short of memory fails as
 * a whole. Real tables are far smaller (a libLLVM's symbols: a few MiB). */
#define TABLE_MAX ((uint64_t)1 << 30)

/* n entries of each bytes, or NULL with the error set: errno ENOMEM when
 * malloc failed, EFBIG when the table is refused as larger than
 * TABLE_MAX (a corrupt file, not a want of memory). */
void *macho__alloc(const macho_src *s, uint64_t n, uint64_t each, const char *what)
{
    if (each != 0 && n > TABLE_MAX / each) {
        macho__fail(s,
                    "%s: %llu entries of %llu bytes, more than the %llu MiB read; the file is "
                    "corrupt",
                    what, (unsigned long long)n, (unsigned long long)each,
                    (unsigned long long)(TABLE_MAX >> 20));
        errno = EFBIG;
        return NULL;
    }
    size_t bytes = (size_t)(n * each);
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL)
        macho__fail(s, "out of memory for %s (%zu bytes)", what, bytes);
    return p;
}

/* Read the header and load commands of the slice at [sl->base, +size). */
int macho__read_slice_header(const macho_src *s, macho_slice *sl)
{
    uint8_t h[HEADER_64_SIZE];
    if (sl->size < 4)
        return macho__fail(s, "%llu bytes are too few for a Mach-O header; the file is truncated",
                           (unsigned long long)sl->size);
    if (macho__src_read(s, sl->base, h, 4, "the Mach-O magic") != 0)
        return -1;
    uint32_t magic = le32(h);
    if (magic == MH_MAGIC || magic == MH_CIGAM)
        return macho__fail(s, "a 32-bit Mach-O file; only 64-bit images (arm64, x86_64) are read");
    if (magic == MH_CIGAM_64)
        return macho__fail(s, "a big-endian Mach-O file; only little-endian images (arm64, x86_64) "
                              "are read");
    if (magic != MH_MAGIC_64)
        return macho__fail(s, "not a Mach-O file (magic 0x%08x)", magic);
    if (sl->size < HEADER_64_SIZE)
        return macho__fail(s,
                           "%llu bytes are too few for a 64-bit Mach-O header (32); the file is "
                           "truncated",
                           (unsigned long long)sl->size);
    if (macho__src_read(s, sl->base, h, sizeof h, "the Mach-O header") != 0)
        return -1;
    sl->cputype = le32(h + 4);
    sl->cpusubtype = le32(h + 8);
    sl->ncmds = le32(h + 16);
    sl->sizeofcmds = le32(h + 20);
    if (!fits(HEADER_64_SIZE, sl->sizeofcmds, sl->size))
        return macho__fail(s,
                           "sizeofcmds %u runs past the end of the image (%llu bytes); the file is "
                           "truncated or corrupt",
                           sl->sizeofcmds, (unsigned long long)sl->size);
    if (sl->ncmds > sl->sizeofcmds / 8)
        return macho__fail(s,
                           "ncmds %u cannot fit in sizeofcmds %u (8 bytes each at least); the file "
                           "is corrupt",
                           sl->ncmds, sl->sizeofcmds);
    sl->cmds = macho__alloc(s, sl->sizeofcmds, 1, "the load commands");
    if (sl->cmds == NULL)
        return -1;
    if (macho__src_read(s, sl->base + HEADER_64_SIZE, sl->cmds, sl->sizeofcmds,
                        "the load commands") != 0) {
        free(sl->cmds);
        sl->cmds = NULL;
        return -1;
    }
    return 0;
}

/* Walk the load commands: *off and *size of command i, after checking its
 * cmdsize. Returns 0, or -1 with the error set. */
int macho__next_cmd(const macho_src *s, const macho_slice *sl, uint32_t i, uint32_t *off,
                    uint32_t *cmd, uint32_t *cmdsize)
{
    if (!fits(*off, 8, sl->sizeofcmds))
        return macho__fail(s,
                           "load command %u of %u starts past sizeofcmds %u; the file is corrupt",
                           i, sl->ncmds, sl->sizeofcmds);
    *cmd = le32(sl->cmds + *off);
    *cmdsize = le32(sl->cmds + *off + 4);
    /* The commands read here, checked before the walk trusts their size. */
    static const struct {
        uint32_t cmd, min;
        const char *name;
    } known[] = {{LC_SEGMENT_64, SEGMENT_64_SIZE, "LC_SEGMENT_64"},
                 {LC_SYMTAB, 24, "LC_SYMTAB"},
                 {LC_UUID, 24, "LC_UUID"},
                 {LC_FUNCTION_STARTS, 16, "LC_FUNCTION_STARTS"}};
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (*cmd == known[k].cmd && *cmdsize < known[k].min)
            return macho__fail(s,
                               "%s (load command %u) has cmdsize %u, less than %u; the file is "
                               "corrupt",
                               known[k].name, i, *cmdsize, known[k].min);
    if (*cmdsize < 8 || !fits(*off, *cmdsize, sl->sizeofcmds))
        return macho__fail(
            s,
            "load command %u (cmd 0x%x) has cmdsize %u, outside the %u bytes of load "
            "commands; the file is corrupt",
            i, *cmd, *cmdsize, sl->sizeofcmds);
    return 0;
}

/* The LC_UUID of a slice, if any. */
static int slice_uuid(const macho_src *s, const macho_slice *sl, uint8_t uuid[16], bool *has)
{
    *has = false;
    uint32_t off = 0;
    for (uint32_t i = 0; i < sl->ncmds; i++) {
        uint32_t cmd, cmdsize;
        if (macho__next_cmd(s, sl, i, &off, &cmd, &cmdsize) != 0)
            return -1;
        if (cmd == LC_UUID && !*has) {
            memcpy(uuid, sl->cmds + off + 8, 16);
            *has = true;
        }
        off += cmdsize;
    }
    return 0;
}

static const char *cpu_name(uint32_t cputype, uint32_t cpusubtype)
{
    switch (cputype) {
    case CPU_TYPE_ARM64:
        return (cpusubtype & ~CPU_SUBTYPE_MASK) == CPU_SUBTYPE_ARM64E ? "arm64e" : "arm64";
    case CPU_TYPE_X86_64:
        return "x86_64";
    case 7:
        return "i386";
    case 12:
        return "arm";
    case 18:
        return "ppc";
    default:
        return "unknown";
    }
}


/* Choose the slice of a fat file: by UUID when want_uuid is given, else by
 * the rule of macho.h. */
int macho__pick_fat_slice(const macho_src *s, uint32_t magic, const uint8_t *want_uuid,
                          macho_slice *out)
{
    uint8_t h[FAT_HEADER_SIZE];
    if (macho__src_read(s, 0, h, sizeof h, "the fat header") != 0)
        return -1;
    uint32_t n = be32(h + 4);
    bool is64 = magic == FAT_MAGIC_64;
    uint32_t each = is64 ? FAT_ARCH_64_SIZE : FAT_ARCH_SIZE;
    if (n == 0)
        return macho__fail(s, "a fat file with nfat_arch 0 holds no image");
    if (n > FAT_MAX_ARCHS)
        return macho__fail(s,
                           "nfat_arch %u is more than %u: not a fat Mach-O file (a Java class "
                           "file?) or corrupt",
                           n, FAT_MAX_ARCHS);
    if (!fits(FAT_HEADER_SIZE, (uint64_t)n * each, s->size))
        return macho__fail(s,
                           "the %u fat_arch entries run past the end of the file (%llu bytes); the "
                           "file is truncated",
                           n, (unsigned long long)s->size);
    uint8_t table[FAT_MAX_ARCHS * FAT_ARCH_64_SIZE];
    if (macho__src_read(s, FAT_HEADER_SIZE, table, (size_t)n * each, "the fat_arch entries") != 0)
        return -1;

    macho_slice sl[FAT_MAX_ARCHS];
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *a = table + (size_t)i * each;
        sl[i].cputype = be32(a);
        sl[i].cpusubtype = be32(a + 4);
        sl[i].base = is64 ? be64(a + 8) : be32(a + 8);
        sl[i].size = is64 ? be64(a + 16) : be32(a + 12);
        sl[i].cmds = NULL;
        if (!fits(sl[i].base, sl[i].size, s->size))
            return macho__fail(s,
                               "fat_arch %u (%s) offset %llu + size %llu runs past the end of the "
                               "file (%llu bytes); the file is truncated or corrupt",
                               i, cpu_name(sl[i].cputype, sl[i].cpusubtype),
                               (unsigned long long)sl[i].base, (unsigned long long)sl[i].size,
                               (unsigned long long)s->size);
    }

    if (want_uuid != NULL) {
        char have[FAT_MAX_ARCHS * 48] = "";
        size_t used = 0;
        for (uint32_t i = 0; i < n; i++) {
            if ((sl[i].cputype & CPU_ARCH_ABI64) == 0)
                continue;
            macho_slice t = sl[i];
            uint8_t u[16];
            bool has;
            if (macho__read_slice_header(s, &t) != 0)
                return -1;
            int rc = slice_uuid(s, &t, u, &has);
            if (rc == 0 && has && memcmp(u, want_uuid, 16) == 0) {
                *out = t;
                return 0;
            }
            free(t.cmds);
            if (rc != 0)
                return -1;
            if (has && used < sizeof have) {
                int w = snprintf(have + used, sizeof have - used, "%s%s ", used ? ", " : "",
                                 cpu_name(sl[i].cputype, sl[i].cpusubtype));
                used += w > 0 ? (size_t)w : 0;
                for (int b = 0; b < 16 && used < sizeof have; b++) {
                    w = snprintf(have + used, sizeof have - used, "%02X", u[b]);
                    used += w > 0 ? (size_t)w : 0;
                }
            }
        }
        return macho__fail(s,
                           "no slice has the UUID wanted (the file has: %s); the file on disk is "
                           "not the image that ran",
                           used ? have : "no UUIDs");
    }

    const uint32_t order[] = {HOST_CPU, CPU_TYPE_ARM64, CPU_TYPE_X86_64};
    for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
        int best = -1;
        for (uint32_t i = 0; i < n; i++) {
            if (order[o] == 0 || sl[i].cputype != order[o])
                continue;
            if (best < 0 || (sl[i].cputype == CPU_TYPE_ARM64 &&
                             (sl[i].cpusubtype & ~CPU_SUBTYPE_MASK) == CPU_SUBTYPE_ARM64E &&
                             (sl[best].cpusubtype & ~CPU_SUBTYPE_MASK) != CPU_SUBTYPE_ARM64E))
                best = (int)i;
        }
        if (best >= 0) {
            *out = sl[best];
            if (macho__read_slice_header(s, out) != 0)
                return -1;
            if (out->cputype != sl[best].cputype) {
                macho__fail(s, "fat_arch %d says %s, but its image is %s; the file is corrupt",
                            best, cpu_name(sl[best].cputype, sl[best].cpusubtype),
                            cpu_name(out->cputype, out->cpusubtype));
                free(out->cmds);
                out->cmds = NULL;
                return -1;
            }
            return 0;
        }
    }
    char have[FAT_MAX_ARCHS * 12] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < n && used < sizeof have; i++) {
        int w = snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "",
                         cpu_name(sl[i].cputype, sl[i].cpusubtype));
        used += w > 0 ? (size_t)w : 0;
    }
    return macho__fail(s, "a fat file without an arm64 or x86_64 slice (it has %s)", have);
}
