/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * elf_shrink.c - an LD_PRELOAD shim: elf_begin of a file whose name ends
 * in DKPERF_TEST_SHRINK empties that file just after libelf began reading
 * it, as a rebuild or a copy over the image would while report runs.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* libelf's, without its header: Elf is opaque and Elf_Cmd an enum. */
typedef struct Elf Elf;
typedef Elf *elf_begin_fn(int, int, Elf *);

__attribute__((visibility("default"))) Elf *elf_begin(int fd, int cmd, Elf *ref)
{
    elf_begin_fn *real = (elf_begin_fn *)dlsym(RTLD_NEXT, "elf_begin");
    if (real == NULL)
        abort();
    Elf *e = real(fd, cmd, ref);
    const char *tail = getenv("DKPERF_TEST_SHRINK");
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (e != NULL && tail != NULL && n > 0) {
        path[n] = '\0';
        size_t t = strlen(tail);
        if ((size_t)n >= t && strcmp(path + n - t, tail) == 0 && truncate(path, 0) != 0)
            abort();
    }
    return e;
}
