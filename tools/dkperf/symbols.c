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
    char problem[300]; /* "" when symbols were read */
    sym *syms;
    size_t nsyms;
    segment *segs;
    size_t nsegs;
#ifdef DKPERF_HAVE_MACHO
    dk_macho *macho;
#endif
    struct sym_image *next;
};

struct symbols {
    sym_image *images;
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
    dk_macho_close(im->macho);
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

/* The GNU build-id of an open ELF, into id: its length, 0 when it has
 * none, or -ENOMEM. */
static ssize_t elf_build_id(Elf *e, uint8_t *id, size_t max)
{
    size_t n = 0;
    char why[160];
    errno = 0;
    if (elf_getphdrnum(e, &n) != 0)
        return elf_failed(why, sizeof why, "program headers") == -ENOMEM ? -ENOMEM : 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(e, (int)i, &ph) == NULL || ph.p_type != PT_NOTE)
            continue;
        errno = 0;
        Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR);
        if (d == NULL) {
            if (elf_failed(why, sizeof why, "notes") == -ENOMEM)
                return -ENOMEM;
            continue;
        }
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((const char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz <= max) {
                memcpy(id, (const char *)d->d_buf + desc_off, nh.n_descsz);
                return (ssize_t)nh.n_descsz;
            }
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
    int fd = regfile_open(path, NULL, why, sizeof why);
    if (fd < 0)
        return 0;
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

/* Reads the symbols of the ELF file open at fd. Returns 0 (with
 * im->problem set when they cannot be used) or -ENOMEM. */
static int read_elf(sym_image *im, int fd)
{
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
    ssize_t got = elf_build_id(e, id, sizeof id);
    if (got < 0) {
        elf_end(e);
        return -ENOMEM;
    }
    size_t n = (size_t)got;
    if (im->id_len > 0 && (im->id_kind != DKREC_ID_ELF_BUILD_ID || n != im->id_len ||
                           memcmp(id, im->id, n) != 0)) {
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
    char why[200] = "";
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
    int fd = regfile_open(im->path, NULL, why, sizeof why);
    if (fd < 0) {
        snprintf(im->problem, sizeof im->problem, "%s", why);
        return 0;
    }
    int rc = 0;
    uint8_t m[4] = {0};
    ssize_t got = pread(fd, m, sizeof m, 0);
    bool elf = got == 4 && memcmp(m, "\x7f" "ELF", 4) == 0;
    uint32_t le = (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24;
    bool macho = got == 4 && (le == 0xfeedfacfu || le == 0xbebafecau || le == 0xfeedfaceu);
    if (elf) {
#ifdef DKPERF_HAVE_LIBELF
        rc = read_elf(im, fd);
#else
        snprintf(im->problem, sizeof im->problem,
                 "an ELF image, and this dkperf was built without elfutils");
#endif
    } else if (macho) {
#ifdef DKPERF_HAVE_MACHO
        const uint8_t *uuid =
            im->id_kind == DKREC_ID_MACHO_UUID && im->id_len == 16 ? im->id : NULL;
        char err[256] = "";
        errno = 0;
        if (dk_macho_open_fd(fd, im->path, uuid, &im->macho, err, sizeof err) != 0) {
            snprintf(im->problem, sizeof im->problem, "%s", err);
            if (errno == ENOMEM)
                rc = -ENOMEM;
        } else
            im->kind = KIND_MACHO;
#else
        snprintf(im->problem, sizeof im->problem,
                 "a Mach-O image, and this dkperf was built without a Mach-O reader");
#endif
    } else {
        snprintf(im->problem, sizeof im->problem, "neither ELF nor Mach-O");
    }
    close(fd);
    return rc;
}

sym_image *symbols_image(symbols *s, const char *path, unsigned id_kind, const uint8_t *id,
                         size_t id_len)
{
    if (id_len > DKREC_ID_MAX)
        id_len = DKREC_ID_MAX;
    for (sym_image *im = s->images; im != NULL; im = im->next)
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
    return im;
}

const char *sym_image_problem(const sym_image *im)
{
    return im->kind == KIND_NONE ? im->problem : NULL;
}

const char *sym_lookup(sym_image *im, uint64_t map_start, uint64_t map_pgoff, uint64_t addr,
                       uint64_t *image_off)
{
    uint64_t off = addr - map_start + map_pgoff;
    if (image_off != NULL)
        *image_off = off;
#ifdef DKPERF_HAVE_MACHO
    if (im->kind == KIND_MACHO) {
        /* A Mach-O image is mapped from its __TEXT (file offset 0). */
        uint64_t vm = addr - map_start + dk_macho_text_vmaddr(im->macho);
        if (image_off != NULL)
            *image_off = addr - map_start;
        return dk_macho_lookup(im->macho, vm, NULL);
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
