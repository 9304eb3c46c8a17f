/*
 * malloc_fail.c - an LD_PRELOAD shim (glibc) that makes one chosen
 * allocation fail, to test that every out-of-memory path of a program says
 * so and exits cleanly.
 *
 * It counts the calls to malloc, calloc, realloc, strdup and strndup (each
 * call once: its strdup does not count its own malloc) made after it has
 * read its environment, at load time:
 *
 *   DKPERF_MALLOC_FAIL_AT=N      the N-th counted call (from 1) returns NULL
 *                                with errno ENOMEM; 0 or unset: none fails,
 *                                the calls are only counted.
 *   DKPERF_MALLOC_FAIL_MODE=M    "once" (default): only the N-th call fails;
 *                                "after": the N-th and every later call fail.
 *   DKPERF_MALLOC_FAIL_LOG=FILE  at exit, append "calls C failed F\n": the
 *                                calls counted and how many failed. A run with
 *                                N=0 tells a sweep how far N must go.
 *   DKPERF_MALLOC_FAIL_INHERIT=1 keep the variables for the programs this one
 *                                executes. By default they are removed from
 *                                the environment once read, so that a command
 *                                the program runs allocates normally.
 *
 * Only the process that read the variables fails: a child it forks keeps
 * counting (its own copy) but never fails, so the failure stays in the
 * code under test rather than in a command it starts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* glibc's own allocator, under the names it exports for this purpose. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

#define EXPORT __attribute__((visibility("default")))

static unsigned long fail_at;    /* 0: never */
static int fail_after;           /* fail every call from fail_at on */
static pid_t armed_pid;          /* the process that read the variables; 0 until then */
static unsigned long calls, failed;
static char log_path[4096];

__attribute__((constructor)) static void read_environment(void)
{
    const char *at = getenv("DKPERF_MALLOC_FAIL_AT");
    const char *mode = getenv("DKPERF_MALLOC_FAIL_MODE");
    const char *log = getenv("DKPERF_MALLOC_FAIL_LOG");
    const char *inherit = getenv("DKPERF_MALLOC_FAIL_INHERIT");
    fail_at = at != NULL ? strtoul(at, NULL, 10) : 0;
    fail_after = mode != NULL && strcmp(mode, "after") == 0;
    if (log != NULL && strlen(log) < sizeof log_path)
        memcpy(log_path, log, strlen(log) + 1);
    if (inherit == NULL || strcmp(inherit, "1") != 0) {
        unsetenv("DKPERF_MALLOC_FAIL_AT");
        unsetenv("DKPERF_MALLOC_FAIL_MODE");
        unsetenv("DKPERF_MALLOC_FAIL_LOG");
    }
    armed_pid = getpid();
}

__attribute__((destructor)) static void write_log(void)
{
    if (log_path[0] == '\0' || getpid() != armed_pid)
        return;
    char line[96];
    int len = snprintf(line, sizeof line, "calls %lu failed %lu\n", calls, failed);
    int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, (size_t)len) != len) {
        /* Nothing to do: the log is advisory. */
    }
    close(fd);
}

/* Whether this call must fail; counts it. */
static int should_fail(void)
{
    if (armed_pid == 0)
        return 0; /* before the variables were read */
    unsigned long k = __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
    if (fail_at == 0 || k < fail_at || (k > fail_at && !fail_after))
        return 0;
    if (getpid() != armed_pid)
        return 0;
    __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
    errno = ENOMEM;
    return 1;
}

EXPORT void *malloc(size_t size) { return should_fail() ? NULL : __libc_malloc(size); }

EXPORT void *calloc(size_t n, size_t size) { return should_fail() ? NULL : __libc_calloc(n, size); }

EXPORT void *realloc(void *p, size_t size) { return should_fail() ? NULL : __libc_realloc(p, size); }

EXPORT char *strdup(const char *s)
{
    if (should_fail())
        return NULL;
    size_t len = strlen(s) + 1;
    char *copy = __libc_malloc(len);
    return copy != NULL ? memcpy(copy, s, len) : NULL;
}

EXPORT char *strndup(const char *s, size_t n)
{
    if (should_fail())
        return NULL;
    size_t len = strnlen(s, n);
    char *copy = __libc_malloc(len + 1);
    if (copy == NULL)
        return NULL;
    memcpy(copy, s, len);
    copy[len] = '\0';
    return copy;
}
