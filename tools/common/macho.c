/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * macho.c - the Mach-O symbol table reader of macho.h.
 *
 * The file is read in pieces (header, load commands, symbol and string
 * tables, function starts) with pread, each after its offset and size were
 * checked against the slice that holds it; nothing is mapped, so a file
 * cut short under us gives a short read, never SIGBUS.
 */
#define _POSIX_C_SOURCE 200809L

#include "macho.h"
#include "common/regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

typedef struct msym {
    uint64_t start, end;
    uint32_t name;  /* offset into strtab */
    uint32_t index; /* in the symbol table; orders equal addresses */
    uint8_t rank;   /* lower wins among symbols at one address */
} msym;

struct dk_macho {
    uint64_t text_vmaddr;
    uint32_t cputype, cpusubtype;
    bool has_uuid;
    uint8_t uuid[16];
    char *strtab; /* the string table, with a NUL appended */
    msym *syms;   /* by start; ranges do not overlap */
    size_t nsyms;
};

/* Where the bytes come from: a file descriptor or a buffer. */
typedef struct src {
    int fd;
    const uint8_t *mem;
    uint64_t size;
    const char *name;
    char *err;
    size_t errlen;
} src;

/* One slice: the Mach-O image at [base, base + size) of the source. */
typedef struct slice {
    uint64_t base, size;
    uint32_t ncmds, sizeofcmds;
    uint32_t cputype, cpusubtype;
    uint8_t *cmds; /* sizeofcmds bytes */
} slice;

typedef struct sect {
    uint64_t addr, end;
} sect;

__attribute__((format(printf, 2, 3))) static int fail(const src *s, const char *fmt, ...)
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

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | (uint64_t)be32(p + 4);
}

/* True when [off, off + len) lies inside [0, size), without overflow. */
static bool fits(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* Read len bytes at off; the caller checked they lie in the source, so a
 * short read means the file changed under us. */
static int src_read(const src *s, uint64_t off, void *buf, size_t len, const char *what)
{
    if (!fits(off, len, s->size))
        return fail(s, "%s at offset %llu (%zu bytes) is past the end of the file (%llu bytes)",
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
            return fail(s, "cannot read %s: %s", what, strerror(errno));
        if (n == 0)
            return fail(s, "cannot read %s: the file was cut short while being read", what);
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
static void *alloc(const src *s, uint64_t n, uint64_t each, const char *what)
{
    if (each != 0 && n > TABLE_MAX / each) {
        fail(s, "%s: %llu entries of %llu bytes, more than the %llu MiB read; the file is "
                "corrupt", what, (unsigned long long)n, (unsigned long long)each,
             (unsigned long long)(TABLE_MAX >> 20));
        errno = EFBIG;
        return NULL;
    }
    size_t bytes = (size_t)(n * each);
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (p == NULL)
        fail(s, "out of memory for %s (%zu bytes)", what, bytes);
    return p;
}

/* Read the header and load commands of the slice at [sl->base, +size). */
static int read_slice_header(const src *s, slice *sl)
{
    uint8_t h[HEADER_64_SIZE];
    if (sl->size < 4)
        return fail(s, "%llu bytes are too few for a Mach-O header; the file is truncated",
                    (unsigned long long)sl->size);
    if (src_read(s, sl->base, h, 4, "the Mach-O magic") != 0)
        return -1;
    uint32_t magic = le32(h);
    if (magic == MH_MAGIC || magic == MH_CIGAM)
        return fail(s, "a 32-bit Mach-O file; only 64-bit images (arm64, x86_64) are read");
    if (magic == MH_CIGAM_64)
        return fail(s, "a big-endian Mach-O file; only little-endian images (arm64, x86_64) "
                       "are read");
    if (magic != MH_MAGIC_64)
        return fail(s, "not a Mach-O file (magic 0x%08x)", magic);
    if (sl->size < HEADER_64_SIZE)
        return fail(s, "%llu bytes are too few for a 64-bit Mach-O header (32); the file is "
                       "truncated", (unsigned long long)sl->size);
    if (src_read(s, sl->base, h, sizeof h, "the Mach-O header") != 0)
        return -1;
    sl->cputype = le32(h + 4);
    sl->cpusubtype = le32(h + 8);
    sl->ncmds = le32(h + 16);
    sl->sizeofcmds = le32(h + 20);
    if (!fits(HEADER_64_SIZE, sl->sizeofcmds, sl->size))
        return fail(s, "sizeofcmds %u runs past the end of the image (%llu bytes); the file is "
                       "truncated or corrupt", sl->sizeofcmds, (unsigned long long)sl->size);
    if (sl->ncmds > sl->sizeofcmds / 8)
        return fail(s, "ncmds %u cannot fit in sizeofcmds %u (8 bytes each at least); the file "
                       "is corrupt", sl->ncmds, sl->sizeofcmds);
    sl->cmds = alloc(s, sl->sizeofcmds, 1, "the load commands");
    if (sl->cmds == NULL)
        return -1;
    if (src_read(s, sl->base + HEADER_64_SIZE, sl->cmds, sl->sizeofcmds,
                 "the load commands") != 0) {
        free(sl->cmds);
        sl->cmds = NULL;
        return -1;
    }
    return 0;
}

/* Walk the load commands: *off and *size of command i, after checking its
 * cmdsize. Returns 0, or -1 with the error set. */
static int next_cmd(const src *s, const slice *sl, uint32_t i, uint32_t *off, uint32_t *cmd,
                    uint32_t *cmdsize)
{
    if (!fits(*off, 8, sl->sizeofcmds))
        return fail(s, "load command %u of %u starts past sizeofcmds %u; the file is corrupt",
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
            return fail(s, "%s (load command %u) has cmdsize %u, less than %u; the file is "
                           "corrupt", known[k].name, i, *cmdsize, known[k].min);
    if (*cmdsize < 8 || !fits(*off, *cmdsize, sl->sizeofcmds))
        return fail(s, "load command %u (cmd 0x%x) has cmdsize %u, outside the %u bytes of load "
                       "commands; the file is corrupt", i, *cmd, *cmdsize, sl->sizeofcmds);
    return 0;
}

/* The LC_UUID of a slice, if any. */
static int slice_uuid(const src *s, const slice *sl, uint8_t uuid[16], bool *has)
{
    *has = false;
    uint32_t off = 0;
    for (uint32_t i = 0; i < sl->ncmds; i++) {
        uint32_t cmd, cmdsize;
        if (next_cmd(s, sl, i, &off, &cmd, &cmdsize) != 0)
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

/* A symbol's rank among those at one address: external before local, and
 * assembler temporaries (ltmp0, l_..., L...) last. */
static uint8_t sym_rank(uint8_t type, const char *name)
{
    uint8_t r = (type & N_EXT) ? 0 : 1;
    if (name[0] == 'l' || name[0] == 'L')
        r += 2;
    return r;
}

static int cmp_sym(const void *a, const void *b)
{
    const msym *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Decode LC_FUNCTION_STARTS (ULEB128 deltas from the __TEXT vmaddr, ended
 * by a zero) into ascending addresses. */
static int function_starts(const src *s, const uint8_t *data, uint32_t len, uint64_t text,
                           uint64_t **out, size_t *n)
{
    *out = alloc(s, len, sizeof(uint64_t), "LC_FUNCTION_STARTS");
    if (*out == NULL)
        return -1;
    *n = 0;
    uint64_t addr = text;
    uint32_t i = 0;
    while (i < len) {
        uint64_t delta = 0;
        unsigned shift = 0;
        uint8_t byte;
        uint32_t at = i;
        do {
            if (i >= len)
                return fail(s, "LC_FUNCTION_STARTS: the number at byte %u runs past its %u "
                               "bytes; the file is corrupt", at, len);
            byte = data[i++];
            uint64_t bits = byte & 0x7fu;
            if (shift >= 64 || (shift > 0 && bits >> (64 - shift) != 0))
                return fail(s, "LC_FUNCTION_STARTS: the number at byte %u overflows 64 bits; "
                               "the file is corrupt", at);
            delta |= bits << shift;
            shift += 7;
        } while (byte & 0x80u);
        if (delta == 0)
            break;
        if (delta > UINT64_MAX - addr)
            return fail(s, "LC_FUNCTION_STARTS: the start at byte %u overflows 64 bits; the "
                           "file is corrupt", at);
        addr += delta;
        (*out)[(*n)++] = addr;
    }
    return 0;
}

/* A 16-byte name from the file, NUL-ended, with anything but printable
 * ASCII shown as '?' so an error stays one line. */
static void printable(const uint8_t *p, char out[17])
{
    size_t i = 0;
    for (; i < 16 && p[i] != 0; i++)
        out[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
    out[i] = '\0';
}

/* Read the symbols of one slice into m. */
static int parse_slice(const src *s, const slice *sl, dk_macho *m)
{
    int rc = -1;
    sect *sects = NULL;
    uint8_t *fstarts_raw = NULL, *nl = NULL;
    uint64_t *fstarts = NULL;
    size_t nsects = 0, nfstarts = 0;
    bool have_symtab = false, have_fstarts = false, have_text = false;
    uint32_t symoff = 0, nsyms = 0, stroff = 0, strsize = 0, fsoff = 0, fssize = 0;

    m->cputype = sl->cputype;
    m->cpusubtype = sl->cpusubtype;

    /* First pass: count sections; the second fills them in. */
    uint32_t off = 0;
    for (uint32_t i = 0; i < sl->ncmds; i++) {
        uint32_t cmd, cmdsize;
        if (next_cmd(s, sl, i, &off, &cmd, &cmdsize) != 0)
            goto out;
        const uint8_t *c = sl->cmds + off;
        if (cmd == LC_SEGMENT_64) {
            uint32_t n = le32(c + 64);
            if ((uint64_t)n * SECTION_64_SIZE > cmdsize - SEGMENT_64_SIZE) {
                fail(s, "LC_SEGMENT_64 (load command %u) has nsects %u, more than its cmdsize "
                        "%u holds; the file is corrupt", i, n, cmdsize);
                goto out;
            }
            nsects += n;
        }
        off += cmdsize;
    }
    sects = alloc(s, nsects, sizeof *sects, "the sections");
    if (sects == NULL)
        goto out;
    nsects = 0;
    off = 0;
    for (uint32_t i = 0; i < sl->ncmds; i++) {
        uint32_t cmd, cmdsize;
        if (next_cmd(s, sl, i, &off, &cmd, &cmdsize) != 0)
            goto out;
        const uint8_t *c = sl->cmds + off;
        switch (cmd) {
        case LC_SEGMENT_64: {
            char segname[17];
            memcpy(segname, c + 8, 16);
            segname[16] = '\0';
            if (!have_text && strcmp(segname, "__TEXT") == 0) {
                m->text_vmaddr = le64(c + 24);
                have_text = true;
            }
            uint32_t n = le32(c + 64);
            for (uint32_t k = 0; k < n; k++) {
                const uint8_t *sc = c + SEGMENT_64_SIZE + (size_t)k * SECTION_64_SIZE;
                uint64_t addr = le64(sc + 32), size = le64(sc + 40);
                if (size > UINT64_MAX - addr) {
                    char seg[17], sec[17];
                    printable(sc + 16, seg);
                    printable(sc, sec);
                    fail(s, "section %zu (%s,%s) has addr 0x%llx + size 0x%llx past 2^64; the "
                            "file is corrupt", nsects + 1, seg, sec, (unsigned long long)addr,
                         (unsigned long long)size);
                    goto out;
                }
                sects[nsects].addr = addr;
                sects[nsects].end = addr + size;
                nsects++;
            }
            break;
        }
        case LC_SYMTAB:
            if (have_symtab) {
                fail(s, "two LC_SYMTAB load commands; the file is corrupt");
                goto out;
            }
            symoff = le32(c + 8);
            nsyms = le32(c + 12);
            stroff = le32(c + 16);
            strsize = le32(c + 20);
            have_symtab = true;
            break;
        case LC_UUID:
            if (!m->has_uuid) {
                memcpy(m->uuid, c + 8, 16);
                m->has_uuid = true;
            }
            break;
        case LC_FUNCTION_STARTS:
            if (!have_fstarts) {
                fsoff = le32(c + 8);
                fssize = le32(c + 12);
                have_fstarts = true;
            }
            break;
        default:
            break;
        }
        off += cmdsize;
    }

    if (have_fstarts) {
        if (!fits(fsoff, fssize, sl->size)) {
            fail(s, "LC_FUNCTION_STARTS dataoff %u + datasize %u runs past the end of the image "
                    "(%llu bytes); the file is truncated or corrupt", fsoff, fssize,
                 (unsigned long long)sl->size);
            goto out;
        }
        fstarts_raw = alloc(s, fssize, 1, "LC_FUNCTION_STARTS");
        if (fstarts_raw == NULL ||
            src_read(s, sl->base + fsoff, fstarts_raw, fssize, "LC_FUNCTION_STARTS") != 0 ||
            function_starts(s, fstarts_raw, fssize, m->text_vmaddr, &fstarts, &nfstarts) != 0)
            goto out;
    }

    if (have_symtab) {
        if (!fits(symoff, (uint64_t)nsyms * NLIST_64_SIZE, sl->size)) {
            fail(s, "LC_SYMTAB symoff %u + nsyms %u * 16 runs past the end of the image (%llu "
                    "bytes); the file is truncated or corrupt", symoff, nsyms,
                 (unsigned long long)sl->size);
            goto out;
        }
        if (!fits(stroff, strsize, sl->size)) {
            fail(s, "LC_SYMTAB stroff %u + strsize %u runs past the end of the image (%llu "
                    "bytes); the file is truncated or corrupt", stroff, strsize,
                 (unsigned long long)sl->size);
            goto out;
        }
        m->strtab = alloc(s, (uint64_t)strsize + 1, 1, "the string table");
        if (m->strtab == NULL ||
            src_read(s, sl->base + stroff, m->strtab, strsize, "the string table") != 0)
            goto out;
        m->strtab[strsize] = '\0'; /* every name ends inside the table */
        nl = alloc(s, nsyms, NLIST_64_SIZE, "the symbol table");
        if (nl == NULL ||
            src_read(s, sl->base + symoff, nl, (size_t)nsyms * NLIST_64_SIZE,
                     "the symbol table") != 0)
            goto out;
        m->syms = alloc(s, nsyms, sizeof *m->syms, "the symbols");
        if (m->syms == NULL)
            goto out;
        for (uint32_t i = 0; i < nsyms; i++) {
            const uint8_t *e = nl + (size_t)i * NLIST_64_SIZE;
            uint32_t strx = le32(e);
            uint8_t type = e[4], nsect = e[5];
            uint64_t value = le64(e + 8);
            if ((type & N_STAB) != 0 || (type & N_TYPE) != N_SECT)
                continue;
            if (strx >= strsize) {
                fail(s, "symbol %u has n_strx %u, past the string table (strsize %u); the file "
                        "is corrupt", i, strx, strsize);
                goto out;
            }
            if (nsect == 0 || nsect > nsects) {
                fail(s, "symbol %u has n_sect %u, but the image has %zu sections; the file is "
                        "corrupt", i, nsect, nsects);
                goto out;
            }
            const sect *sc = &sects[nsect - 1];
            /* Linker-made markers (__mh_execute_header, section$end) can lie
             * outside their section or at its end: they cover nothing. */
            if (value < sc->addr || value >= sc->end)
                continue;
            uint32_t name = strx + (m->strtab[strx] == '_');
            if (m->strtab[name] == '\0')
                continue;
            msym *y = &m->syms[m->nsyms++];
            y->start = value;
            y->end = sc->end;
            y->name = name;
            y->index = i;
            y->rank = sym_rank(type, m->strtab + strx + (m->strtab[strx] == '_'));
        }
    }

    /* Sort; keep the best name at each address; end each range at the next
     * symbol or function start. */
    if (m->nsyms > 1)
        qsort(m->syms, m->nsyms, sizeof *m->syms, cmp_sym);
    size_t kept = 0, f = 0;
    for (size_t i = 0; i < m->nsyms; i++) {
        if (kept > 0 && m->syms[kept - 1].start == m->syms[i].start)
            continue;
        m->syms[kept++] = m->syms[i];
    }
    m->nsyms = kept;
    for (size_t i = 0; i < m->nsyms; i++) {
        msym *y = &m->syms[i];
        if (i + 1 < m->nsyms && m->syms[i + 1].start < y->end)
            y->end = m->syms[i + 1].start;
        while (f < nfstarts && fstarts[f] <= y->start)
            f++;
        if (f < nfstarts && fstarts[f] < y->end)
            y->end = fstarts[f];
    }
    rc = 0;
out:
    free(sects);
    free(fstarts_raw);
    free(fstarts);
    free(nl);
    return rc;
}

/* Choose the slice of a fat file: by UUID when want_uuid is given, else by
 * the rule of macho.h. */
static int pick_fat_slice(const src *s, uint32_t magic, const uint8_t *want_uuid, slice *out)
{
    uint8_t h[FAT_HEADER_SIZE];
    if (src_read(s, 0, h, sizeof h, "the fat header") != 0)
        return -1;
    uint32_t n = be32(h + 4);
    bool is64 = magic == FAT_MAGIC_64;
    uint32_t each = is64 ? FAT_ARCH_64_SIZE : FAT_ARCH_SIZE;
    if (n == 0)
        return fail(s, "a fat file with nfat_arch 0 holds no image");
    if (n > FAT_MAX_ARCHS)
        return fail(s, "nfat_arch %u is more than %u: not a fat Mach-O file (a Java class "
                       "file?) or corrupt", n, FAT_MAX_ARCHS);
    if (!fits(FAT_HEADER_SIZE, (uint64_t)n * each, s->size))
        return fail(s, "the %u fat_arch entries run past the end of the file (%llu bytes); the "
                       "file is truncated", n, (unsigned long long)s->size);
    uint8_t table[FAT_MAX_ARCHS * FAT_ARCH_64_SIZE];
    if (src_read(s, FAT_HEADER_SIZE, table, (size_t)n * each, "the fat_arch entries") != 0)
        return -1;

    slice sl[FAT_MAX_ARCHS];
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *a = table + (size_t)i * each;
        sl[i].cputype = be32(a);
        sl[i].cpusubtype = be32(a + 4);
        sl[i].base = is64 ? be64(a + 8) : be32(a + 8);
        sl[i].size = is64 ? be64(a + 16) : be32(a + 12);
        sl[i].cmds = NULL;
        if (!fits(sl[i].base, sl[i].size, s->size))
            return fail(s, "fat_arch %u (%s) offset %llu + size %llu runs past the end of the "
                           "file (%llu bytes); the file is truncated or corrupt", i,
                        cpu_name(sl[i].cputype, sl[i].cpusubtype),
                        (unsigned long long)sl[i].base, (unsigned long long)sl[i].size,
                        (unsigned long long)s->size);
    }

    if (want_uuid != NULL) {
        char have[FAT_MAX_ARCHS * 48] = "";
        size_t used = 0;
        for (uint32_t i = 0; i < n; i++) {
            if ((sl[i].cputype & CPU_ARCH_ABI64) == 0)
                continue;
            slice t = sl[i];
            uint8_t u[16];
            bool has;
            if (read_slice_header(s, &t) != 0)
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
        return fail(s, "no slice has the UUID wanted (the file has: %s); the file on disk is "
                       "not the image that ran", used ? have : "no UUIDs");
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
            if (read_slice_header(s, out) != 0)
                return -1;
            if (out->cputype != sl[best].cputype) {
                fail(s, "fat_arch %d says %s, but its image is %s; the file is corrupt", best,
                     cpu_name(sl[best].cputype, sl[best].cpusubtype),
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
    return fail(s, "a fat file without an arm64 or x86_64 slice (it has %s)", have);
}

static int open_src(const src *s, const uint8_t *want_uuid, dk_macho **out)
{
    *out = NULL;
    uint8_t h[4];
    if (s->size < 4)
        return fail(s, "the file is %llu bytes, too short for a Mach-O header",
                    (unsigned long long)s->size);
    if (src_read(s, 0, h, 4, "the magic number") != 0)
        return -1;
    slice sl = {0, s->size, 0, 0, 0, 0, NULL};
    uint32_t magic = be32(h);
    if (magic == FAT_MAGIC || magic == FAT_MAGIC_64) {
        if (pick_fat_slice(s, magic, want_uuid, &sl) != 0)
            return -1;
    } else if (read_slice_header(s, &sl) != 0) {
        return -1;
    }
    dk_macho *m = calloc(1, sizeof *m);
    if (m == NULL) {
        free(sl.cmds);
        return fail(s, "out of memory");
    }
    int rc = parse_slice(s, &sl, m);
    free(sl.cmds);
    if (rc == 0 && want_uuid != NULL && magic != FAT_MAGIC && magic != FAT_MAGIC_64 &&
        !(m->has_uuid && memcmp(m->uuid, want_uuid, 16) == 0))
        rc = fail(s, "the image's UUID is not the one wanted; the file on disk is not the image "
                     "that ran");
    if (rc != 0) {
        dk_macho_close(m);
        return -1;
    }
    *out = m;
    return 0;
}

/* Reads the open regular file fd of size bytes, named name in errors. */
static int open_fd(int fd, uint64_t size, const char *name, const uint8_t *want_uuid,
                   dk_macho **out, char *err, size_t errlen)
{
    src s = {fd, NULL, size, name ? name : "(null)", err, errlen};
    if (out == NULL)
        return fail(&s, "no place for the result (out is NULL)");
    *out = NULL;
    return open_src(&s, want_uuid, out);
}

static int open_path(const char *path, const uint8_t *want_uuid, dk_macho **out, char *err,
                     size_t errlen)
{
    src s = {-1, NULL, 0, path ? path : "(null)", err, errlen};
    if (out == NULL)
        return fail(&s, "no place for the result (out is NULL)");
    *out = NULL;
    if (path == NULL)
        return fail(&s, "no file name given");
    /* Only a regular file on an ordinary file system: a FIFO must not
     * block the open, a device or /proc file must not be read. */
    char why[160];
    struct stat st;
    int fd = regfile_open(path, &st, why, sizeof why);
    if (fd < 0)
        return fail(&s, "%s", why);
    int rc = open_fd(fd, (uint64_t)st.st_size, path, want_uuid, out, err, errlen);
    close(fd);
    return rc;
}

int dk_macho_open(const char *path, dk_macho **out, char *err, size_t errlen)
{
    return open_path(path, NULL, out, err, errlen);
}

int dk_macho_open_uuid(const char *path, const uint8_t uuid[16], dk_macho **out, char *err,
                       size_t errlen)
{
    if (uuid == NULL) {
        src s = {-1, NULL, 0, path ? path : "(null)", err, errlen};
        if (out != NULL)
            *out = NULL;
        return fail(&s, "no UUID given");
    }
    return open_path(path, uuid, out, err, errlen);
}

int dk_macho_open_fd(int fd, const char *name, const uint8_t *uuid, dk_macho **out, char *err,
                     size_t errlen)
{
    src s = {fd, NULL, 0, name ? name : "(null)", err, errlen};
    if (out != NULL)
        *out = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return fail(&s, "cannot stat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return fail(&s, "not a regular file (%s)", regfile_kind(st.st_mode));
    return open_fd(fd, (uint64_t)st.st_size, name, uuid, out, err, errlen);
}

int dk_macho_open_buffer(const void *data, size_t size, const char *name, dk_macho **out,
                         char *err, size_t errlen)
{
    src s = {-1, data, size, name ? name : "(buffer)", err, errlen};
    if (out == NULL)
        return fail(&s, "no place for the result (out is NULL)");
    *out = NULL;
    if (data == NULL && size > 0)
        return fail(&s, "no data given");
    if (data == NULL)
        s.mem = (const uint8_t *)"";
    return open_src(&s, NULL, out);
}

const char *dk_macho_lookup(const dk_macho *m, uint64_t vmaddr, uint64_t *sym_start)
{
    if (m == NULL || m->nsyms == 0)
        return NULL;
    /* The last symbol starting at or below vmaddr. */
    size_t lo = 0, hi = m->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].start <= vmaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const msym *y = &m->syms[lo - 1];
    if (vmaddr >= y->end)
        return NULL;
    if (sym_start != NULL)
        *sym_start = y->start;
    return m->strtab + y->name;
}

uint64_t dk_macho_text_vmaddr(const dk_macho *m)
{
    return m ? m->text_vmaddr : 0;
}

const uint8_t *dk_macho_uuid(const dk_macho *m)
{
    return m && m->has_uuid ? m->uuid : NULL;
}

size_t dk_macho_symbol_count(const dk_macho *m)
{
    return m ? m->nsyms : 0;
}

uint32_t dk_macho_cputype(const dk_macho *m)
{
    return m ? m->cputype : 0;
}

uint32_t dk_macho_cpusubtype(const dk_macho *m)
{
    return m ? m->cpusubtype : 0;
}

void dk_macho_close(dk_macho *m)
{
    if (m == NULL)
        return;
    free(m->strtab);
    free(m->syms);
    free(m);
}
