/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_common.c - see fuzz_common.h.
 */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

size_t fz_split_lines(const uint8_t *data, size_t size, char *buf, char **out, size_t max)
{
    memcpy(buf, data, size);
    buf[size] = '\0';
    size_t n = 0;
    char *p = buf;
    while (n < max) {
        out[n++] = p;
        char *nl = memchr(p, '\n', (size_t)(buf + size - p));
        if (nl == NULL)
            break;
        *nl = '\0';
        p = nl + 1;
    }
    return n;
}

static char root[512];

static void remove_root(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz: could not remove %s\n", root);
}

void fz_write(const char *rel, const char *text, size_t len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        abort();
    }
    if (len > 0 && fwrite(text, 1, len, f) != len)
        abort();
    fclose(f);
}

static void put(const char *rel, const char *text) { fz_write(rel, text, strlen(text)); }

const char *fz_sysfs(void)
{
    if (root[0] != '\0')
        return root;
    const char *tmp = getenv("TMPDIR"); /* the tests' own folder under ctest */
    snprintf(root, sizeof root, "%s/dkperf-fuzz-sysfs-%d", tmp != NULL && *tmp ? tmp : "/tmp",
             (int)getpid());
    mkdir(root, 0755);
    atexit(remove_root);
    put("cpu/type", "4\n");
    put("cpu/format/event", "config:0-7\n");
    put("cpu/format/umask", "config:8-15\n");
    put("cpu/format/inv", "config:23\n");
    put("cpu/format/cmask", "config:24-31\n");
    put("cpu/format/split", "config:0-3,32-35\n");
    put("cpu/format/ldlat", "config1:0-15\n");
    put("cpu/format/bad", "configX:0-7\n");
    put("cpu/events/instructions", "event=0xc0\n");
    put("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
    put("fz/type", "9\n");
    put("fz/format/a", "config:0-7\n");
    put("fz/events/e", "a=1\n");
    return root;
}
