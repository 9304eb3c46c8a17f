/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * proc.c - whether another process or thread still runs, for the tools
 * that watch one they did not start (stat -p/-t, record -p).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "proc.h"

#ifdef __linux__
/* The text of /proc/ID/FILE into buf (size bytes, terminated); its length,
 * or -1 with errno when it cannot be read. */
static ssize_t read_proc(int id, const char *file, char *buf, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", id, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, size - 1);
    int e = errno;
    close(fd);
    buf[got > 0 ? got : 0] = '\0';
    errno = e;
    return got;
}

/* path open for reading when it holds anything, else NULL. */
static FILE *open_unless_empty(const char *path)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return NULL;
    int c = fgetc(f);
    if (c != EOF && ungetc(c, f) != EOF)
        return f;
    fclose(f);
    return NULL;
}

FILE *proc_open_maps(int pid)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = open_unless_empty(path);
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = f == NULL ? opendir(path) : NULL;
    if (d == NULL)
        return f;
    struct dirent *e;
    while (f == NULL && (e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || tid <= 0 || tid == pid || tid > 0x7fffffffL)
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%ld/maps", pid, tid);
        f = open_unless_empty(path);
    }
    closedir(d);
    return f;
}
#endif

bool proc_alive(int id, bool thread)
{
#ifdef __linux__
    char text[512];
    ssize_t got = read_proc(id, "stat", text, sizeof text);
    if (got < 0)
        return errno != ENOENT && errno != ESRCH;
    if (got == 0)
        return false;
    /* "pid (comm) S ...": comm may hold spaces and ')', so the state is the
     * first field after the last ')'. */
    const char *paren = strrchr(text, ')');
    char state = paren != NULL && paren[1] == ' ' ? paren[2] : '?';
    if (state != 'Z' && state != 'X')
        return true;
    if (thread)
        return false;
    /* A process whose first thread has ended lives on in its others: its
     * num_threads, stat's 20th field, the 17th after the state (status's
     * "Threads:" comes after the groups, which may run to kilobytes). */
    const char *at = paren + 2;
    for (int field = 3; field < 20 && at != NULL; field++)
        if ((at = strchr(at, ' ')) != NULL)
            at++;
    return at != NULL && strtol(at, NULL, 10) > 1;
#else
    (void)thread;
    return kill((pid_t)id, 0) == 0 || errno != ESRCH;
#endif
}
