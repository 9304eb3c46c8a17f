/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * macho.c - the Mach-O symbol table reader of macho.h: a slice's symbols
 * and their ranges, and the opening of a file, a descriptor or a buffer.
 *
 * The file is read in pieces (header, load commands, symbol and string
 * tables, function starts) with pread (macho_file.c), each after its offset
 * and size were checked against the slice that holds it; nothing is
 * mapped, so a file cut short under us gives a short read, never SIGBUS.
 */
#define _POSIX_C_SOURCE 200809L

#include "macho.h"
#include "common/regfile.h"
#include "macho_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct msym {
    uint64_t start, end;
    uint32_t name;  /* offset into strtab */
    uint32_t index; /* in the symbol table; orders equal addresses */
    uint8_t rank;   /* lower wins among symbols at one address */
} msym;

struct macho_image {
    uint64_t text_vmaddr;
    uint32_t cputype, cpusubtype;
    bool has_uuid;
    uint8_t uuid[16];
    char *strtab; /* the string table, with a NUL appended */
    msym *syms;   /* by start; ranges do not overlap */
    size_t nsyms;
};

typedef struct sect {
    uint64_t addr, end;
} sect;

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
static int function_starts(const macho_src *s, const uint8_t *data, uint32_t len, uint64_t text,
                           uint64_t **out, size_t *n)
{
    *out = macho__alloc(s, len, sizeof(uint64_t), "LC_FUNCTION_STARTS");
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
                return macho__fail(s,
                                   "LC_FUNCTION_STARTS: the number at byte %u runs past its %u "
                                   "bytes; the file is corrupt",
                                   at, len);
            byte = data[i++];
            uint64_t bits = byte & 0x7fu;
            if (shift >= 64 || (shift > 0 && bits >> (64 - shift) != 0))
                return macho__fail(s,
                                   "LC_FUNCTION_STARTS: the number at byte %u overflows 64 bits; "
                                   "the file is corrupt",
                                   at);
            delta |= bits << shift;
            shift += 7;
        } while (byte & 0x80u);
        if (delta == 0)
            break;
        if (delta > UINT64_MAX - addr)
            return macho__fail(s,
                               "LC_FUNCTION_STARTS: the start at byte %u overflows 64 bits; the "
                               "file is corrupt",
                               at);
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
static int parse_slice(const macho_src *s, const macho_slice *sl, macho_image *m)
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
        if (macho__next_cmd(s, sl, i, &off, &cmd, &cmdsize) != 0)
            goto out;
        const uint8_t *c = sl->cmds + off;
        if (cmd == LC_SEGMENT_64) {
            uint32_t n = le32(c + 64);
            if ((uint64_t)n * SECTION_64_SIZE > cmdsize - SEGMENT_64_SIZE) {
                macho__fail(s,
                            "LC_SEGMENT_64 (load command %u) has nsects %u, more than its cmdsize "
                            "%u holds; the file is corrupt",
                            i, n, cmdsize);
                goto out;
            }
            nsects += n;
        }
        off += cmdsize;
    }
    sects = macho__alloc(s, nsects, sizeof *sects, "the sections");
    if (sects == NULL)
        goto out;
    nsects = 0;
    off = 0;
    for (uint32_t i = 0; i < sl->ncmds; i++) {
        uint32_t cmd, cmdsize;
        if (macho__next_cmd(s, sl, i, &off, &cmd, &cmdsize) != 0)
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
                    macho__fail(s,
                                "section %zu (%s,%s) has addr 0x%llx + size 0x%llx past 2^64; the "
                                "file is corrupt",
                                nsects + 1, seg, sec, (unsigned long long)addr,
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
                macho__fail(s, "two LC_SYMTAB load commands; the file is corrupt");
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
            macho__fail(
                s,
                "LC_FUNCTION_STARTS dataoff %u + datasize %u runs past the end of the image "
                "(%llu bytes); the file is truncated or corrupt",
                fsoff, fssize, (unsigned long long)sl->size);
            goto out;
        }
        fstarts_raw = macho__alloc(s, fssize, 1, "LC_FUNCTION_STARTS");
        if (fstarts_raw == NULL ||
            macho__src_read(s, sl->base + fsoff, fstarts_raw, fssize, "LC_FUNCTION_STARTS") != 0 ||
            function_starts(s, fstarts_raw, fssize, m->text_vmaddr, &fstarts, &nfstarts) != 0)
            goto out;
    }

    if (have_symtab) {
        if (!fits(symoff, (uint64_t)nsyms * NLIST_64_SIZE, sl->size)) {
            macho__fail(s,
                        "LC_SYMTAB symoff %u + nsyms %u * 16 runs past the end of the image (%llu "
                        "bytes); the file is truncated or corrupt",
                        symoff, nsyms, (unsigned long long)sl->size);
            goto out;
        }
        if (!fits(stroff, strsize, sl->size)) {
            macho__fail(s,
                        "LC_SYMTAB stroff %u + strsize %u runs past the end of the image (%llu "
                        "bytes); the file is truncated or corrupt",
                        stroff, strsize, (unsigned long long)sl->size);
            goto out;
        }
        m->strtab = macho__alloc(s, (uint64_t)strsize + 1, 1, "the string table");
        if (m->strtab == NULL ||
            macho__src_read(s, sl->base + stroff, m->strtab, strsize, "the string table") != 0)
            goto out;
        m->strtab[strsize] = '\0'; /* every name ends inside the table */
        nl = macho__alloc(s, nsyms, NLIST_64_SIZE, "the symbol table");
        if (nl == NULL || macho__src_read(s, sl->base + symoff, nl, (size_t)nsyms * NLIST_64_SIZE,
                                          "the symbol table") != 0)
            goto out;
        m->syms = macho__alloc(s, nsyms, sizeof *m->syms, "the symbols");
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
                macho__fail(s,
                            "symbol %u has n_strx %u, past the string table (strsize %u); the file "
                            "is corrupt",
                            i, strx, strsize);
                goto out;
            }
            if (nsect == 0 || nsect > nsects) {
                macho__fail(s,
                            "symbol %u has n_sect %u, but the image has %zu sections; the file is "
                            "corrupt",
                            i, nsect, nsects);
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

static int open_src(const macho_src *s, const uint8_t *want_uuid, macho_image **out)
{
    *out = NULL;
    uint8_t h[4];
    if (s->size < 4)
        return macho__fail(s, "the file is %llu bytes, too short for a Mach-O header",
                           (unsigned long long)s->size);
    if (macho__src_read(s, 0, h, 4, "the magic number") != 0)
        return -1;
    macho_slice sl = {0, s->size, 0, 0, 0, 0, NULL};
    uint32_t magic = be32(h);
    if (magic == FAT_MAGIC || magic == FAT_MAGIC_64) {
        if (macho__pick_fat_slice(s, magic, want_uuid, &sl) != 0)
            return -1;
    } else if (macho__read_slice_header(s, &sl) != 0) {
        return -1;
    }
    macho_image *m = calloc(1, sizeof *m);
    if (m == NULL) {
        free(sl.cmds);
        return macho__fail(s, "out of memory");
    }
    int rc = parse_slice(s, &sl, m);
    free(sl.cmds);
    if (rc == 0 && want_uuid != NULL && magic != FAT_MAGIC && magic != FAT_MAGIC_64 &&
        !(m->has_uuid && memcmp(m->uuid, want_uuid, 16) == 0))
        rc =
            macho__fail(s,
                        "the image's UUID is not the one wanted; the file on disk is not the image "
                        "that ran");
    if (rc != 0) {
        macho_close(m);
        return -1;
    }
    *out = m;
    return 0;
}

/* Reads the open regular file fd of size bytes, named name in errors. */
static int open_fd(int fd, uint64_t size, const char *name, const uint8_t *want_uuid,
                   macho_image **out, char *err, size_t errlen)
{
    macho_src s = {fd, NULL, size, name ? name : "(null)", err, errlen};
    if (out == NULL)
        return macho__fail(&s, "no place for the result (out is NULL)");
    *out = NULL;
    return open_src(&s, want_uuid, out);
}

static int open_path(const char *path, const uint8_t *want_uuid, macho_image **out, char *err,
                     size_t errlen)
{
    macho_src s = {-1, NULL, 0, path ? path : "(null)", err, errlen};
    if (out == NULL)
        return macho__fail(&s, "no place for the result (out is NULL)");
    *out = NULL;
    if (path == NULL)
        return macho__fail(&s, "no file name given");
    /* Only a regular file on an ordinary file system: a FIFO must not
     * block the open, a device or /proc file must not be read. */
    char why[160];
    struct stat st;
    int fd = regfile_open(path, &st, why, sizeof why);
    if (fd < 0)
        return macho__fail(&s, "%s", why);
    int rc = open_fd(fd, (uint64_t)st.st_size, path, want_uuid, out, err, errlen);
    close(fd);
    return rc;
}

int macho_open(const char *path, macho_image **out, char *err, size_t errlen)
{
    return open_path(path, NULL, out, err, errlen);
}

int macho_open_uuid(const char *path, const uint8_t uuid[16], macho_image **out, char *err,
                    size_t errlen)
{
    if (uuid == NULL) {
        macho_src s = {-1, NULL, 0, path ? path : "(null)", err, errlen};
        if (out != NULL)
            *out = NULL;
        return macho__fail(&s, "no UUID given");
    }
    return open_path(path, uuid, out, err, errlen);
}

int macho_open_fd(int fd, const char *name, const uint8_t *uuid, macho_image **out, char *err,
                  size_t errlen)
{
    macho_src s = {fd, NULL, 0, name ? name : "(null)", err, errlen};
    if (out != NULL)
        *out = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return macho__fail(&s, "cannot stat: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return macho__fail(&s, "not a regular file (%s)", regfile_kind(st.st_mode));
    return open_fd(fd, (uint64_t)st.st_size, name, uuid, out, err, errlen);
}

int macho_open_buffer(const void *data, size_t size, const char *name, macho_image **out, char *err,
                      size_t errlen)
{
    macho_src s = {-1, data, size, name ? name : "(buffer)", err, errlen};
    if (out == NULL)
        return macho__fail(&s, "no place for the result (out is NULL)");
    *out = NULL;
    if (data == NULL && size > 0)
        return macho__fail(&s, "no data given");
    if (data == NULL)
        s.mem = (const uint8_t *)"";
    return open_src(&s, NULL, out);
}

const char *macho_lookup(const macho_image *m, uint64_t vmaddr, uint64_t *sym_start)
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

uint64_t macho_text_vmaddr(const macho_image *m) { return m ? m->text_vmaddr : 0; }

const uint8_t *macho_uuid(const macho_image *m) { return m && m->has_uuid ? m->uuid : NULL; }

size_t macho_symbol_count(const macho_image *m) { return m ? m->nsyms : 0; }

uint32_t macho_cputype(const macho_image *m) { return m ? m->cputype : 0; }

uint32_t macho_cpusubtype(const macho_image *m) { return m ? m->cpusubtype : 0; }

void macho_close(macho_image *m)
{
    if (m == NULL)
        return;
    free(m->strtab);
    free(m->syms);
    free(m);
}
