/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * imageid.c - ELF build-ids (and Mach-O UUIDs where the Mach-O reader is
 * built in) of image files; see imageid.h.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dkrec.h"
#include "imageid.h"
#include "common/regfile.h"
#ifdef DKPERF_HAVE_MACHO
#include "macho.h"
#endif

#define READ_MAX (64u * 1024u) /* program headers and notes sit near the start */

static uint64_t get(const uint8_t *p, size_t n, bool be)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
    return v;
}

/* The build-id among the notes at data[off..off+len), or 0. */
static size_t scan_notes(const uint8_t *data, size_t size, uint64_t off, uint64_t len, bool be,
                         uint8_t *id, size_t max)
{
    if (off > size || len > size - off)
        return 0;
    const uint8_t *p = data + off, *end = p + len;
    while ((size_t)(end - p) >= 12) {
        uint64_t namesz = get(p, 4, be), descsz = get(p + 4, 4, be), type = get(p + 8, 4, be);
        p += 12;
        uint64_t nalign = (namesz + 3) & ~3ull, dalign = (descsz + 3) & ~3ull;
        if (nalign > (uint64_t)(end - p) || dalign > (uint64_t)(end - p) - nalign)
            return 0;
        if (type == 3 && namesz == 4 && memcmp(p, "GNU", 4) == 0 && descsz > 0 && descsz <= max) {
            memcpy(id, p + nalign, (size_t)descsz);
            return (size_t)descsz;
        }
        p += nalign + dalign;
    }
    return 0;
}

size_t imageid_elf(const uint8_t *data, size_t size, uint8_t *id, size_t max)
{
    if (size < 52 || memcmp(data,
                            "\x7f"
                            "ELF",
                            4) != 0)
        return 0;
    bool is64 = data[4] == 2, be = data[5] == 2;
    if ((data[4] != 1 && data[4] != 2) || (data[5] != 1 && data[5] != 2) || (is64 && size < 64))
        return 0;
    uint64_t phoff = is64 ? get(data + 32, 8, be) : get(data + 28, 4, be);
    uint64_t phentsize = get(data + (is64 ? 54 : 42), 2, be);
    uint64_t phnum = get(data + (is64 ? 56 : 44), 2, be);
    if (phentsize < (is64 ? 56u : 32u))
        return 0;
    for (uint64_t i = 0; i < phnum; i++) {
        uint64_t at = phoff + i * phentsize;
        if (at > size || phentsize > size - at)
            return 0;
        const uint8_t *ph = data + at;
        if (get(ph, 4, be) != 4) /* PT_NOTE */
            continue;
        uint64_t off = is64 ? get(ph + 8, 8, be) : get(ph + 4, 4, be);
        uint64_t len = is64 ? get(ph + 32, 8, be) : get(ph + 16, 4, be);
        size_t n = scan_notes(data, size, off, len, be, id, max);
        if (n > 0)
            return n;
    }
    return 0;
}

size_t imageid_read(const char *path, unsigned *kind, uint8_t *id, size_t max)
{
    *kind = DKREC_ID_NONE;
    if (path == NULL || path[0] != '/')
        return 0; /* [vdso], [heap], anonymous maps */
    /* A map may name a device or a /proc file: never opened, never read. */
    char why[160];
    struct stat st;
    int fd = regfile_open(path, &st, why, sizeof why);
    if (fd < 0)
        return 0;
    uint8_t *buf = NULL;
    size_t n = 0, got = 0;
    size_t want = (size_t)st.st_size < READ_MAX ? (size_t)st.st_size : READ_MAX;
    buf = malloc(want ? want : 1);
    if (buf == NULL)
        goto out;
    while (got < want) {
        ssize_t k = pread(fd, buf + got, want - got, (off_t)got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    if ((n = imageid_elf(buf, got, id, max)) > 0) {
        *kind = DKREC_ID_ELF_BUILD_ID;
        goto out;
    }
#ifdef DKPERF_HAVE_MACHO
    {
        macho_image *m = NULL;
        if (macho_open_fd(fd, path, NULL, &m, NULL, 0) == 0) {
            const uint8_t *u = macho_uuid(m);
            if (u != NULL && max >= 16) {
                memcpy(id, u, 16);
                n = 16;
                *kind = DKREC_ID_MACHO_UUID;
            }
            macho_close(m);
        }
    }
#endif
out:
    free(buf);
    close(fd);
    return n;
}
