/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_symbols.c - symbol reading of hostile images through the code
 * dkperf report uses (tools/dkperf/symbols.c): the input is written to a
 * file, which symbols_image opens (regfile_open), sniffs and reads with
 * libelf or the Mach-O reader, three times: with no recorded identity, with
 * a recorded ELF build-id (the file's own, as dkperf record reads it, when
 * it has one) and with a recorded Mach-O UUID (the input's last bytes). Each image is either read, with lookups that give
 * non-empty names, or refused with one line saying why.
 *
 * Seeds (tests/fuzz/corpus/symbols): the Mach-O seeds of fuzz_macho, and
 * small ELF files from a ten-line C file (two functions and _start):
 *   elf-exec         gcc -Os -nostdlib -static -fno-asynchronous-unwind-tables
 *                    -Wl,--build-id -Wl,-z,max-page-size=0x1000
 *                    -Wl,-z,noseparate-code -Wl,-z,norelro
 *   elf-so           the same, -shared -fPIC instead of -static
 *   elf-so-stripped  elf-so after strip --strip-all (.dynsym only)
 *   elf-object       gcc -Os -c (symbols, no program headers)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dkrec.h"
#include "fuzz_common.h"
#include "imageid.h"
#include "symbols.h"

static char path[64];

static void remove_file(void)
{
    unlink(path);
    *strrchr(path, '/') = '\0';
    rmdir(path);
}

static void check_image(sym_image *im, const uint8_t *data, size_t size)
{
    if (im == NULL)
        return; /* out of memory */
    const char *why = sym_image_problem(im);
    if (why != NULL && (why[0] == '\0' || strchr(why, '\n') != NULL))
        abort(); /* a refusal without its one-line reason */
    size_t hits = 0;
    for (size_t i = 0; i + 8 <= size && i < 512; i += 8) {
        uint64_t v;
        memcpy(&v, data + i, sizeof v);
        uint64_t off = 0;
        /* An offset inside the file, where the segments are. */
        const char *name = sym_lookup(im, 0x10000000, 0, 0x10000000 + v % (size + 1), &off);
        if (name != NULL && (why != NULL || name[0] == '\0'))
            abort(); /* a name from an image refused, or an empty one */
        hits += name != NULL;
        name = sym_lookup(im, 0x10000000, v & 0xfff000, 0x10000000 + (v >> 44), NULL);
        if (name != NULL && name[0] == '\0')
            abort();
    }
    if (getenv("FUZZ_SYMBOLS_VERBOSE") != NULL)
        fprintf(stderr, "%zu bytes: %s, %zu names\n", size, why ? why : "read", hits);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (path[0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/fzsymXXXXXX", tmp && strlen(tmp) < 40 ? tmp : "/tmp");
        if (mkdtemp(path) == NULL)
            abort();
        strcat(path, "/image");
        atexit(remove_file);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (size > 0 && write(fd, data, size) != (ssize_t)size) || close(fd) != 0)
        abort();
    symbols *s = symbols_new();
    if (s == NULL)
        abort();
    /* The build-id as record would have taken it (so that the check
     * passes), else the last 20 bytes; a UUID from the last 16. */
    uint8_t id[DKREC_ID_MAX] = {0};
    size_t n = imageid_elf(data, size, id, sizeof id);
    if (n == 0) {
        n = 20;
        memcpy(id, data + (size > 20 ? size - 20 : 0), size < 20 ? size : 20);
    }
    check_image(symbols_image(s, path, DKREC_ID_NONE, NULL, 0), data, size);
    check_image(symbols_image(s, path, DKREC_ID_ELF_BUILD_ID, id, n), data, size);
    check_image(symbols_image(s, path, DKREC_ID_MACHO_UUID, id + 4, 16), data, size);
    symbols_free(s);
    return 0;
}
