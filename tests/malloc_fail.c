/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * malloc_fail.c - an LD_PRELOAD shim that makes one allocation fail.
 *
 *   DKPERF_MALLOC_FAIL_AT=N    the N-th allocation (1-based) returns NULL
 *                              with errno ENOMEM; N+ fails it and every
 *                              later one
 *   DKPERF_MALLOC_COUNT=FILE   at exit, append "allocations N failed F" to
 *                              FILE: the allocations counted and how many
 *                              were made to fail; and at once, when the
 *                              allocation made to fail was the dynamic
 *                              loader's own (a dlopen'ed library's
 *                              thread-local storage, say), "loader N": the
 *                              loader may then abort or crash, which no
 *                              program can prevent, so checkers count that
 *                              run apart
 *   DKPERF_MALLOC_ONLY=NAME    count (and fail) only the allocations called
 *                              from the shared object whose file name
 *                              starts with NAME ("libelf": elfutils'
 *                              libelf), so that a sweep reaches the
 *                              failures of one library in few runs
 *
 * Allocations are malloc, calloc, realloc (to a non-zero size),
 * posix_memalign, aligned_alloc, memalign, valloc; strdup, asprintf,
 * fopen and the rest of libc allocate through these. Only the process that
 * loaded the shim first counts: a forked child and the programs it execs
 * (which inherit LD_PRELOAD) run unharmed, so a CLI's command is never hit.
 * Not for sanitizer builds, whose runtimes own malloc.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static pid_t owner;
static unsigned long fail_at;
static int and_later;
static unsigned long count;
static unsigned long failed;

#define SHIM __attribute__((visibility("default")))

/* Where the dynamic loader (ld-linux*.so*) is mapped, and the object of
 * DKPERF_MALLOC_ONLY, read at start. */
#define RANGES 8
typedef struct ranges {
    uintptr_t lo[RANGES], hi[RANGES];
    int n;
} ranges;
static ranges loader, only;
static const char *only_name;

static int in_ranges(const ranges *r, const void *caller)
{
    for (int i = 0; i < r->n; i++)
        if ((uintptr_t)caller >= r->lo[i] && (uintptr_t)caller < r->hi[i])
            return 1;
    return 0;
}

static void add_range(ranges *r, unsigned long lo, unsigned long hi)
{
    if (r->n < RANGES) {
        r->lo[r->n] = (uintptr_t)lo;
        r->hi[r->n++] = (uintptr_t)hi;
    }
}

/* /proc/self/maps with read(2) only: malloc is not ours to call here. */
static void find_ranges(void)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[8192], line[512];
    size_t used = 0;
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] != '\n') {
                if (used < sizeof line - 1)
                    line[used++] = buf[i];
                continue;
            }
            line[used] = '\0';
            used = 0;
            const char *name = strrchr(line, '/');
            unsigned long lo, hi;
            if (name == NULL || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
                continue;
            if (strncmp(name + 1, "ld-linux", 8) == 0)
                add_range(&loader, lo, hi);
            if (only_name != NULL && strncmp(name + 1, only_name, strlen(only_name)) == 0)
                add_range(&only, lo, hi);
        }
    }
    close(fd);
}


/* Say at once that the loader's own allocation failed (it may not return). */
static void note_loader(unsigned long n)
{
    const char *path = getenv("DKPERF_MALLOC_COUNT");
    if (path == NULL || *path == '\0')
        return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    char text[64];
    int len = snprintf(text, sizeof text, "loader %lu\n", n);
    if (write(fd, text, (size_t)len) != len) {
        /* nothing more to do: the checker then counts the run as ours */
    }
    close(fd);
}

__attribute__((constructor)) static void init(void)
{
    const char *mine = getenv("DKPERF_MALLOC_FAIL_OWNER");
    if (mine != NULL)
        return; /* a program started by the owner: leave it alone */
    char pid[32];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("DKPERF_MALLOC_FAIL_OWNER", pid, 1);
    const char *at = getenv("DKPERF_MALLOC_FAIL_AT");
    if (at != NULL && *at != '\0') {
        char *end;
        fail_at = strtoul(at, &end, 10);
        and_later = *end == '+';
    }
    const char *o = getenv("DKPERF_MALLOC_ONLY");
    if (o != NULL && *o != '\0')
        only_name = o;
    owner = getpid();
    find_ranges();
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("DKPERF_MALLOC_COUNT");
    if (owner == 0 || getpid() != owner || path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "a");
    if (f != NULL) {
        fprintf(f, "allocations %lu failed %lu\n", count, failed);
        fclose(f);
    }
}

/* Whether this allocation, made from caller, must fail. */
static int hit(const void *caller)
{
    if (owner == 0 || getpid() != owner || (only_name != NULL && !in_ranges(&only, caller)))
        return 0;
    unsigned long n = __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
    if (fail_at != 0 && (n == fail_at || (and_later && n > fail_at))) {
        __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
        if (in_ranges(&loader, caller))
            note_loader(n);
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

SHIM void *malloc(size_t n) { return hit(__builtin_return_address(0)) ? NULL : __libc_malloc(n); }
SHIM void *calloc(size_t k, size_t n)
{
    return hit(__builtin_return_address(0)) ? NULL : __libc_calloc(k, n);
}
SHIM void *realloc(void *p, size_t n)
{
    if (n != 0 && hit(__builtin_return_address(0)))
        return NULL;
    return __libc_realloc(p, n);
}
SHIM void *memalign(size_t a, size_t n)
{
    return hit(__builtin_return_address(0)) ? NULL : __libc_memalign(a, n);
}
SHIM void *aligned_alloc(size_t a, size_t n)
{
    return hit(__builtin_return_address(0)) ? NULL : __libc_memalign(a, n);
}
SHIM void *valloc(size_t n)
{
    return hit(__builtin_return_address(0)) ? NULL
                                            : __libc_memalign((size_t)sysconf(_SC_PAGESIZE), n);
}
SHIM int posix_memalign(void **out, size_t a, size_t n)
{
    if (hit(__builtin_return_address(0)))
        return ENOMEM;
    void *p = __libc_memalign(a, n);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}
