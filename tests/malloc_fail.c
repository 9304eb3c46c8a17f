/*
 * malloc_fail.c - an LD_PRELOAD shim that makes one allocation fail.
 *
 *   DKPERF_MALLOC_FAIL_AT=N    the N-th allocation (1-based) returns NULL
 *                              with errno ENOMEM; N+ fails it and every
 *                              later one
 *   DKPERF_MALLOC_COUNT=FILE   at exit, append "allocations N failed F" to
 *                              FILE: the allocations counted and how many
 *                              were made to fail
 *
 * Allocations are malloc, calloc, realloc (to a non-zero size),
 * posix_memalign, aligned_alloc, memalign, valloc; strdup, asprintf,
 * fopen and the rest of libc allocate through these. Only the process that
 * loaded the shim first counts: a forked child and the programs it execs
 * (which inherit LD_PRELOAD) run unharmed, so a CLI's command is never hit.
 * Not for sanitizer builds, whose runtimes own malloc.
 */
#include <errno.h>
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
    owner = getpid();
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

/* Whether this allocation must fail. */
static int hit(void)
{
    if (owner == 0 || getpid() != owner)
        return 0;
    unsigned long n = __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
    if (fail_at != 0 && (n == fail_at || (and_later && n > fail_at))) {
        __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

SHIM void *malloc(size_t n) { return hit() ? NULL : __libc_malloc(n); }
SHIM void *calloc(size_t k, size_t n) { return hit() ? NULL : __libc_calloc(k, n); }
SHIM void *realloc(void *p, size_t n)
{
    if (n != 0 && hit())
        return NULL;
    return __libc_realloc(p, n);
}
SHIM void *memalign(size_t a, size_t n) { return hit() ? NULL : __libc_memalign(a, n); }
SHIM void *aligned_alloc(size_t a, size_t n) { return hit() ? NULL : __libc_memalign(a, n); }
SHIM void *valloc(size_t n) { return hit() ? NULL : __libc_memalign((size_t)sysconf(_SC_PAGESIZE), n); }
SHIM int posix_memalign(void **out, size_t a, size_t n)
{
    if (hit())
        return ENOMEM;
    void *p = __libc_memalign(a, n);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}
