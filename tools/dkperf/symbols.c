/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * symbols.c - function names of recorded addresses, from the images on
 * disk (see symbols.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dkrec.h"
#include "common/regfile.h"
#include "symbols.h"
#ifdef DKPERF_HAVE_LIBELF
#include <gelf.h>
#include <libelf.h>
#endif
#ifdef DKPERF_HAVE_MACHO
#include "macho.h"
#endif

typedef struct sym {
    uint64_t start, size;
    char *name;
} sym;

typedef struct segment {
    uint64_t offset, vaddr, filesz;
} segment;

typedef enum { KIND_NONE, KIND_ELF, KIND_MACHO } image_kind;

struct sym_image {
    char *path;
    unsigned id_kind;
    size_t id_len;
    uint8_t id[DKREC_ID_MAX];
    image_kind kind;
    char problem[300];          /* "" when symbols were read */
    const char *missing_reader; /* sym_image_missing_reader */
    sym *syms;
    size_t nsyms;
    segment *segs;
    size_t nsegs;
#ifdef DKPERF_HAVE_MACHO
    macho_image *macho;
#endif
    struct sym_image *next;      /* every image, for symbols_free */
    struct sym_image *next_same; /* the images of its bucket */
};

/* The images by (path, identity), hashed: a recording may name as many
 * images as it has maps. */
struct symbols {
    sym_image *images;
    sym_image **buckets;
    size_t n_buckets, n_images;
};

const char *symbols_readers(void)
{
#if defined(DKPERF_HAVE_LIBELF) && defined(DKPERF_HAVE_MACHO)
    return "ELF (elfutils libelf) and Mach-O";
#elif defined(DKPERF_HAVE_LIBELF)
    return "ELF (elfutils libelf); this build has no Mach-O reader";
#elif defined(DKPERF_HAVE_MACHO)
    return "Mach-O; this build has no ELF reader (elfutils, used on Linux where it is found)";
#else
    return "none: this build has neither an ELF reader (elfutils) nor a Mach-O reader";
#endif
}

symbols *symbols_new(void)
{
#ifdef DKPERF_HAVE_LIBELF
    if (elf_version(EV_CURRENT) == EV_NONE)
        return NULL;
#endif
    return calloc(1, sizeof(symbols));
}

static void image_free(sym_image *im)
{
    for (size_t i = 0; i < im->nsyms; i++)
        free(im->syms[i].name);
    free(im->syms);
    free(im->segs);
#ifdef DKPERF_HAVE_MACHO
    macho_close(im->macho);
#endif
    free(im->path);
    free(im);
}

void symbols_free(symbols *s)
{
    if (s == NULL)
        return;
    for (sym_image *im = s->images, *next; im != NULL; im = next) {
        next = im->next;
        image_free(im);
    }
    free(s->buckets);
    free(s);
}

#ifdef DKPERF_HAVE_LIBELF
static void hex(char *out, size_t size, const uint8_t *id, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 3 <= size; i++)
        k += (size_t)snprintf(out + k, size - k, "%02x", id[i]);
    if (n == 0 && size > 0)
        out[0] = '\0';
}

static int by_start(const void *a, const void *b)
{
    const sym *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    /* Sized symbols first, then by name, so that the choice is stable. */
    if ((x->size == 0) != (y->size == 0))
        return x->size == 0 ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* After a libelf call failed: -ENOMEM when it was for want of memory
 * (libelf's allocations fail with errno ENOMEM, which the caller cleared
 * before the call), else -EIO with why set to libelf's reason. */
static int elf_failed(char *why, size_t whylen, const char *what)
{
    int err = errno;
    snprintf(why, whylen, "%s: %s", what, elf_errmsg(-1));
    return err == ENOMEM ? -ENOMEM : -EIO;
}

/* The most bytes of notes read for a build-id: its note is 36 bytes, and
 * libelf reads a note segment whole. */
#define NOTES_MAX ((uint64_t)1 << 24)

/* The GNU build-id of an open ELF of fsize bytes, into id, its length into
 * *len (0 when it has none). Notes that cannot be read fail it: a build-id
 * passed over would make the image look changed, or unchecked. Returns 0,
 * -ENOMEM, or -EIO with why set. */
static int elf_build_id(Elf *e, uint64_t fsize, uint8_t *id, size_t max, size_t *len, char *why,
                        size_t whylen)
{
    size_t n = 0;
    *len = 0;
    errno = 0;
    if (elf_getphdrnum(e, &n) != 0)
        return elf_failed(why, whylen, "program headers");
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        errno = 0;
        if (gelf_getphdr(e, (int)i, &ph) == NULL)
            return elf_failed(why, whylen, "a program header");
        if (ph.p_type != PT_NOTE)
            continue;
        if (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset) {
            snprintf(why, whylen,
                     "a note segment at offset %llu of %llu bytes runs past the "
                     "end of the file (%llu bytes); the file is corrupt",
                     (unsigned long long)ph.p_offset, (unsigned long long)ph.p_filesz,
                     (unsigned long long)fsize);
            return -EIO;
        }
        if (ph.p_filesz > NOTES_MAX) {
            snprintf(why, whylen,
                     "a note segment of %llu bytes, more than the %llu MiB "
                     "report reads",
                     (unsigned long long)ph.p_filesz, (unsigned long long)(NOTES_MAX >> 20));
            return -EIO;
        }
        errno = 0;
        Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
        if (d == NULL)
            return elf_failed(why, whylen, "notes");
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz <= max) {
                memcpy(id, (const char *)d->d_buf + desc_off, nh.n_descsz);
                *len = nh.n_descsz;
                return 0;
            }
        }
    }
    return 0;
}

/* The most section or program headers report reads: libelf allocates for
 * every section at elf_begin and for every program header at once, and a
 * sparse file can be as large as the counts claim. Real images have tens
 * of each; an object file of -ffunction-sections some 10^5 sections. */
#define HEADERS_MAX ((uint64_t)1 << 20)

static uint64_t field(const uint8_t *p, size_t n, bool be)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
    return v;
}

/* Refuses, before libelf sizes its tables by them, section and program
 * header counts (extended numbering included) that the file of fsize
 * bytes cannot hold or that exceed HEADERS_MAX. Returns 0, or -EIO with
 * why set; a header too short or malformed to read is left to libelf. */
static int elf_counts(int fd, uint64_t fsize, char *why, size_t whylen)
{
    uint8_t h[64], s0[64];
    if (pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h ||
        (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64) ||
        (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB))
        return 0;
    bool is64 = h[EI_CLASS] == ELFCLASS64, be = h[EI_DATA] == ELFDATA2MSB;
    uint64_t phoff = is64 ? field(h + 32, 8, be) : field(h + 28, 4, be);
    uint64_t shoff = is64 ? field(h + 40, 8, be) : field(h + 32, 4, be);
    uint64_t phnum = field(h + (is64 ? 56 : 44), 2, be);
    uint64_t shnum = field(h + (is64 ? 60 : 48), 2, be);
    uint64_t phsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
    uint64_t shsize = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
    /* Extended numbering: the counts are in section header 0. */
    if ((shnum == 0 || phnum == PN_XNUM) && shoff != 0) {
        if (shoff > fsize || fsize - shoff < shsize ||
            pread(fd, s0, shsize, (off_t)shoff) != (ssize_t)shsize)
            return 0;
        if (shnum == 0)
            shnum = is64 ? field(s0 + 32, 8, be) : field(s0 + 20, 4, be);
        if (phnum == PN_XNUM)
            phnum = field(s0 + (is64 ? 44 : 28), 4, be);
    }
    const struct {
        const char *what;
        uint64_t off, n, each;
    } t[] = {{"section", shoff, shoff != 0 ? shnum : 0, shsize}, {"program", phoff, phnum, phsize}};
    for (size_t i = 0; i < 2; i++) {
        if (t[i].n > HEADERS_MAX) {
            snprintf(why, whylen,
                     "%llu %s headers, more than the %llu report reads; the file "
                     "is corrupt",
                     (unsigned long long)t[i].n, t[i].what, (unsigned long long)HEADERS_MAX);
            return -EIO;
        }
        if (t[i].n > 0 && (t[i].off > fsize || t[i].n * t[i].each > fsize - t[i].off)) {
            snprintf(why, whylen,
                     "%llu %s headers at offset %llu run past the end of the file "
                     "(%llu bytes); the file is corrupt",
                     (unsigned long long)t[i].n, t[i].what, (unsigned long long)t[i].off,
                     (unsigned long long)fsize);
            return -EIO;
        }
    }
    return 0;
}

/* The most bytes a symbol table or its string table may take: libelf
 * reads a table whole, and a corrupt or sparse image claiming many GiB
 * would take that memory or fail the report as out of memory. Real tables
 * are far smaller (libLLVM-15.so's .dynsym and .dynstr: 1 and 3 MiB). */
#define TABLE_MAX ((uint64_t)1 << 30)

/* -EIO with why set when the table of header sh, or the string table it
 * links to, is larger than TABLE_MAX; else 0. */
static int table_too_big(Elf *e, const GElf_Shdr *sh, char *why, size_t whylen)
{
    const char *what = "a symbol";
    uint64_t size = sh->sh_size;
    GElf_Shdr strs;
    Elf_Scn *link = elf_getscn(e, sh->sh_link);
    if (size <= TABLE_MAX && link != NULL && gelf_getshdr(link, &strs) != NULL) {
        what = "a string";
        size = strs.sh_size;
    }
    if (size <= TABLE_MAX)
        return 0;
    snprintf(why, whylen, "%s table of %llu bytes, more than the %llu MiB report reads", what,
             (unsigned long long)size, (unsigned long long)(TABLE_MAX >> 20));
    return -EIO;
}

/* Function symbols of the table of type want (SHT_SYMTAB or SHT_DYNSYM),
 * appended to im->syms. A table that cannot be read whole fails: a symbol
 * left out would lend its addresses to its neighbour. Returns 0, -ENOMEM,
 * or -EIO with why set. */
static int read_table(sym_image *im, Elf *e, Elf64_Word want, size_t *found, char *why,
                      size_t whylen)
{
    *found = 0;
    Elf_Scn *scn = NULL;
    for (;;) {
        errno = 0;
        if ((scn = elf_nextscn(e, scn)) == NULL)
            break;
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) == NULL)
            return elf_failed(why, whylen, "a section header");
        if (sh.sh_type != want || sh.sh_entsize == 0)
            continue;
        if (table_too_big(e, &sh, why, whylen) != 0)
            return -EIO;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (d == NULL)
            return elf_failed(why, whylen, "the symbol table");
        size_t count = sh.sh_size / sh.sh_entsize;
        for (size_t i = 0; i < count; i++) {
            GElf_Sym st;
            errno = 0;
            if (gelf_getsym(d, (int)i, &st) == NULL)
                return elf_failed(why, whylen, "a symbol");
            if (st.st_value == 0 || st.st_shndx == SHN_UNDEF)
                continue;
            int type = GELF_ST_TYPE(st.st_info);
            if (type != STT_FUNC && type != STT_GNU_IFUNC)
                continue;
            const char *name = elf_strptr(e, sh.sh_link, st.st_name);
            if (name == NULL)
                return elf_failed(why, whylen, "a symbol's name");
            if (name[0] == '\0')
                continue;
            if (im->nsyms % 256 == 0) {
                sym *p = realloc(im->syms, (im->nsyms + 256) * sizeof *p);
                if (p == NULL)
                    return -ENOMEM;
                im->syms = p;
            }
            char *copy = strdup(name);
            if (copy == NULL)
                return -ENOMEM;
            im->syms[im->nsyms].start = st.st_value;
            im->syms[im->nsyms].size = st.st_size;
            im->syms[im->nsyms].name = copy;
            im->nsyms++;
            (*found)++;
        }
    }
    return 0;
}

/* Drops the symbols read after the first n (a table that failed). */
static void drop_syms(sym_image *im, size_t n)
{
    while (im->nsyms > n)
        free(im->syms[--im->nsyms].name);
}

/* The symbols of a separate debug file of this build-id, when installed
 * (Debian's -dbgsym packages put them under /usr/lib/debug/.build-id).
 * Returns 0 (a debug file that is absent or unreadable adds nothing) or
 * -ENOMEM. */
static int read_debug_file(sym_image *im)
{
    if (im->id_kind != DKREC_ID_ELF_BUILD_ID || im->id_len < 2)
        return 0;
    char h[2 * DKREC_ID_MAX + 1], path[64 + 2 * DKREC_ID_MAX], why[160];
    hex(h, sizeof h, im->id, im->id_len);
    snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%.2s/%s.debug", h, h + 2);
    struct stat st;
    int fd = regfile_open(path, &st, why, sizeof why);
    if (fd < 0)
        return 0;
    if (elf_counts(fd, (uint64_t)st.st_size, why, sizeof why) != 0) {
        close(fd);
        return 0;
    }
    errno = 0;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL); /* not mapped: see read_elf */
    size_t found = 0, n0 = im->nsyms;
    int rc = e != NULL ? read_table(im, e, SHT_SYMTAB, &found, why, sizeof why)
                       : elf_failed(why, sizeof why, "the debug file");
    if (rc != 0)
        drop_syms(im, n0);
    elf_end(e);
    close(fd);
    return rc == -ENOMEM ? -ENOMEM : 0;
}

/* Reads the symbols of the ELF file of fsize bytes open at fd. Returns 0
 * (with im->problem set when they cannot be used) or -ENOMEM. */
static int read_elf(sym_image *im, int fd, uint64_t fsize)
{
    char why[200] = "";
    if (elf_counts(fd, fsize, why, sizeof why) != 0) {
        snprintf(im->problem, sizeof im->problem, "not readable as ELF (%s)", why);
        return 0;
    }
    /* Read, not mapped: a mapped file that shrinks (copied over, rebuilt)
     * raises SIGBUS on the pages past its new end; a read comes up short,
     * and libelf says so. */
    errno = 0;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    if (e == NULL || elf_kind(e) != ELF_K_ELF) {
        int rc = elf_failed(im->problem, sizeof im->problem, "not readable as ELF");
        elf_end(e);
        return rc == -ENOMEM ? -ENOMEM : 0;
    }
    uint8_t id[DKREC_ID_MAX] = {0};
    size_t n = 0;
    int got = elf_build_id(e, fsize, id, sizeof id, &n, why, sizeof why);
    if (got != 0) {
        elf_end(e);
        if (got == -ENOMEM)
            return -ENOMEM;
        snprintf(im->problem, sizeof im->problem, "its build-id could not be read (%s)", why);
        return 0;
    }
    if (im->id_len > 0 &&
        (im->id_kind != DKREC_ID_ELF_BUILD_ID || n != im->id_len || memcmp(id, im->id, n) != 0)) {
        char want[2 * DKREC_ID_MAX + 1], have[2 * DKREC_ID_MAX + 1];
        hex(want, sizeof want, im->id, im->id_len);
        hex(have, sizeof have, id, n);
        snprintf(im->problem, sizeof im->problem,
                 "build-id %.40s on disk differs from %.40s recorded: the image changed since "
                 "the recording",
                 n ? have : "(none)", want);
        elf_end(e);
        return 0;
    }
    size_t nph = 0;
    errno = 0;
    int rc = elf_getphdrnum(e, &nph) != 0 ? elf_failed(why, sizeof why, "program headers") : 0;
    if (rc == 0 && (im->segs = calloc(nph ? nph : 1, sizeof *im->segs)) == NULL)
        rc = -ENOMEM;
    for (size_t i = 0; rc == 0 && i < nph; i++) {
        GElf_Phdr ph;
        errno = 0;
        if (gelf_getphdr(e, (int)i, &ph) == NULL)
            rc = elf_failed(why, sizeof why, "a program header");
        else if (ph.p_type == PT_LOAD)
            im->segs[im->nsegs++] = (segment){ph.p_offset, ph.p_vaddr, ph.p_filesz};
    }
    size_t found = 0;
    if (rc == 0)
        rc = read_table(im, e, SHT_SYMTAB, &found, why, sizeof why);
    if (rc == 0 && found == 0)
        rc = read_debug_file(im);
    if (rc == 0 && im->nsyms == 0)
        rc = read_table(im, e, SHT_DYNSYM, &found, why, sizeof why);
    elf_end(e);
    if (rc == -ENOMEM)
        return -ENOMEM;
    if (rc != 0) {
        snprintf(im->problem, sizeof im->problem, "its symbols could not be read (%s)", why);
        return 0;
    }
    if (im->nsyms == 0) {
        snprintf(im->problem, sizeof im->problem, "it has no function symbols (stripped)");
        return 0;
    }
    qsort(im->syms, im->nsyms, sizeof *im->syms, by_start);
    im->kind = KIND_ELF;
    return 0;
}
#endif

/* Reads the image's symbols. Returns 0 (with im->problem set when there
 * are none to use) or -ENOMEM: a report short of memory cannot be right. */
static int open_image(sym_image *im)
{
    if (im->path[0] != '/') {
        snprintf(im->problem, sizeof im->problem, "not a file");
        return 0;
    }
    /* A recording may name any path: only a regular file on an ordinary
     * file system is opened, for every format, before a byte is read. */
    char why[160];
    struct stat st;
    int fd = regfile_open(im->path, &st, why, sizeof why);
    if (fd < 0) {
        snprintf(im->problem, sizeof im->problem, "%s", why);
        return 0;
    }
    int rc = 0;
    uint8_t m[4] = {0};
    ssize_t got = pread(fd, m, sizeof m, 0);
    bool elf = got == 4 && memcmp(m,
                                  "\x7f"
                                  "ELF",
                                  4) == 0;
    uint32_t le = (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 |
                  (uint32_t)m[3] << 24;
    bool macho = got == 4 && (le == 0xfeedfacfu || le == 0xbebafecau || le == 0xfeedfaceu);
    if (elf) {
#ifdef DKPERF_HAVE_LIBELF
        rc = read_elf(im, fd, (uint64_t)st.st_size);
#else
        snprintf(im->problem, sizeof im->problem,
                 "an ELF image, and this dkperf was built without elfutils");
        im->missing_reader = "this dkperf was built without elfutils' libelf: functions in "
                             "ELF images are shown as [image] (install libelf-dev and "
                             "pkg-config, then build it again)";
#endif
    } else if (macho) {
#ifdef DKPERF_HAVE_MACHO
        const uint8_t *uuid = im->id_kind == DKREC_ID_MACHO_UUID && im->id_len == 16 ? im->id
                                                                                     : NULL;
        char err[256] = "";
        errno = 0;
        if (macho_open_fd(fd, im->path, uuid, &im->macho, err, sizeof err) != 0) {
            snprintf(im->problem, sizeof im->problem, "%s", err);
            if (errno == ENOMEM)
                rc = -ENOMEM;
        } else
            im->kind = KIND_MACHO;
#else
        snprintf(im->problem, sizeof im->problem,
                 "a Mach-O image, and this dkperf was built without a Mach-O reader");
        im->missing_reader = "this dkperf was built without the Mach-O reader: functions in "
                             "Mach-O images are shown as [image]";
#endif
    } else {
        snprintf(im->problem, sizeof im->problem, "neither ELF nor Mach-O");
    }
    close(fd);
    return rc;
}

static uint64_t image_hash(const char *path, const uint8_t *id, size_t id_len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *path; path++)
        h = (h ^ (unsigned char)*path) * 0x100000001b3ull;
    for (size_t i = 0; i < id_len; i++)
        h = (h ^ id[i]) * 0x100000001b3ull;
    return h ^ (h >> 29);
}

/* Room for one more image in the buckets: 0, or -1 out of memory. */
static int grow_buckets(symbols *s)
{
    if (s->n_images < s->n_buckets)
        return 0;
    size_t n = s->n_buckets ? 2 * s->n_buckets : 64;
    sym_image **b = calloc(n, sizeof *b);
    if (b == NULL)
        return -1;
    for (sym_image *im = s->images; im != NULL; im = im->next) {
        size_t j = (size_t)image_hash(im->path, im->id, im->id_len) & (n - 1);
        im->next_same = b[j];
        b[j] = im;
    }
    free(s->buckets);
    s->buckets = b;
    s->n_buckets = n;
    return 0;
}

sym_image *symbols_image(symbols *s, const char *path, unsigned id_kind, const uint8_t *id,
                         size_t id_len)
{
    if (id_len > DKREC_ID_MAX)
        id_len = DKREC_ID_MAX;
    if (grow_buckets(s) != 0)
        return NULL;
    size_t j = (size_t)image_hash(path, id, id_len) & (s->n_buckets - 1);
    for (sym_image *im = s->buckets[j]; im != NULL; im = im->next_same)
        if (strcmp(im->path, path) == 0 && im->id_len == id_len &&
            (id_len == 0 || memcmp(im->id, id, id_len) == 0))
            return im;
    sym_image *im = calloc(1, sizeof *im);
    if (im == NULL || (im->path = strdup(path)) == NULL) {
        free(im);
        return NULL;
    }
    im->id_kind = id_kind;
    im->id_len = id_len;
    if (id_len)
        memcpy(im->id, id, id_len);
    if (open_image(im) != 0) {
        image_free(im);
        return NULL;
    }
    im->next = s->images;
    s->images = im;
    im->next_same = s->buckets[j];
    s->buckets[j] = im;
    s->n_images++;
    return im;
}

const char *sym_image_problem(const sym_image *im)
{
    return im->kind == KIND_NONE ? im->problem : NULL;
}

const char *sym_image_missing_reader(const sym_image *im) { return im->missing_reader; }

const char *sym_lookup(sym_image *im, uint64_t map_start, uint64_t map_pgoff, uint64_t addr,
                       uint64_t *image_off)
{
    uint64_t off = addr - map_start + map_pgoff;
    if (image_off != NULL)
        *image_off = off;
#ifdef DKPERF_HAVE_MACHO
    if (im->kind == KIND_MACHO) {
        /* A Mach-O image is mapped from its __TEXT (file offset 0). */
        uint64_t vm = addr - map_start + macho_text_vmaddr(im->macho);
        if (image_off != NULL)
            *image_off = addr - map_start;
        return macho_lookup(im->macho, vm, NULL);
    }
#endif
    if (im->kind != KIND_ELF)
        return NULL;
    /* The file offset to the address the symbols use, by the PT_LOAD that
     * holds it. */
    uint64_t vaddr = 0;
    bool in = false;
    for (size_t i = 0; i < im->nsegs && !in; i++) {
        const segment *g = &im->segs[i];
        if (off >= g->offset && off - g->offset < g->filesz) {
            vaddr = off - g->offset + g->vaddr;
            in = true;
        }
    }
    if (!in)
        return NULL;
    size_t lo = 0, hi = im->nsyms;
    while (lo < hi) { /* the first symbol starting after vaddr */
        size_t mid = lo + (hi - lo) / 2;
        if (im->syms[mid].start <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    /* Of the symbols starting at the same place, the first (sized) one. */
    size_t k = lo - 1;
    while (k > 0 && im->syms[k - 1].start == im->syms[k].start)
        k--;
    const sym *f = &im->syms[k];
    if (f->size > 0 && vaddr - f->start >= f->size)
        return NULL;
    return f->name;
}
