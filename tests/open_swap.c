/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * open_swap.c - an LD_PRELOAD shim: the first open of a path ending in
 * DKPERF_TEST_SWAP replaces that path, just before the open, with a symlink
 * to DKPERF_TEST_SWAP_TO (a FIFO, a device), as a rename or a symlink
 * changed between a check and the open would. Every open is logged to
 * DKPERF_TEST_SWAP_LOG as "path|how|kind": how is "path" for an O_PATH
 * descriptor (which opens nothing) or "open", kind what the descriptor
 * holds ("fifo", "chr", "reg", ...) or "failed".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int open_fn(const char *, int, ...);
typedef int openat_fn(int, const char *, int, ...);

static int swapped;

static void before(const char *path)
{
    const char *tail = getenv("DKPERF_TEST_SWAP"), *to = getenv("DKPERF_TEST_SWAP_TO");
    if (swapped || tail == NULL || to == NULL || path == NULL)
        return;
    size_t n = strlen(path), t = strlen(tail);
    if (n < t || strcmp(path + n - t, tail) != 0)
        return;
    swapped = 1;
    if (unlink(path) != 0 || symlink(to, path) != 0)
        abort();
}

static int after(const char *path, int flags, int fd)
{
    const char *log = getenv("DKPERF_TEST_SWAP_LOG");
    if (log == NULL || path == NULL)
        return fd;
    const char *kind = "failed";
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0)
        kind = S_ISFIFO(st.st_mode)  ? "fifo"
               : S_ISCHR(st.st_mode) ? "chr"
               : S_ISBLK(st.st_mode) ? "blk"
               : S_ISREG(st.st_mode) ? "reg"
               : S_ISDIR(st.st_mode) ? "dir"
                                     : "other";
    FILE *f = fopen(log, "a");
    if (f != NULL) {
        fprintf(f, "%s|%s|%s\n", path, (flags & O_PATH) ? "path" : "open", kind);
        fclose(f);
    }
    return fd;
}

#define WRAP_OPEN(name)                                                               \
    __attribute__((visibility("default"))) int name(const char *path, int flags, ...) \
    {                                                                                 \
        va_list ap;                                                                   \
        va_start(ap, flags);                                                          \
        mode_t mode = (mode_t)va_arg(ap, int);                                        \
        va_end(ap);                                                                   \
        open_fn *real = (open_fn *)dlsym(RTLD_NEXT, #name);                           \
        if (real == NULL)                                                             \
            abort();                                                                  \
        before(path);                                                                 \
        return after(path, flags, real(path, flags, mode));                           \
    }

#define WRAP_OPENAT(name)                                                                      \
    __attribute__((visibility("default"))) int name(int dir, const char *path, int flags, ...) \
    {                                                                                          \
        va_list ap;                                                                            \
        va_start(ap, flags);                                                                   \
        mode_t mode = (mode_t)va_arg(ap, int);                                                 \
        va_end(ap);                                                                            \
        openat_fn *real = (openat_fn *)dlsym(RTLD_NEXT, #name);                                \
        if (real == NULL)                                                                      \
            abort();                                                                           \
        before(path);                                                                          \
        return after(path, flags, real(dir, path, flags, mode));                               \
    }

WRAP_OPEN(open)
WRAP_OPEN(open64)
WRAP_OPENAT(openat)
WRAP_OPENAT(openat64)
