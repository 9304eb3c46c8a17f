/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * replay_main.c - runs a fuzz target without libFuzzer: every file named on
 * the command line, or every file of every directory named, is fed to
 * LLVMFuzzerTestOneInput once. Any crash or sanitizer report fails it.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            unsigned char *grown = realloc(buf, cap *= 2);
            if (grown == NULL)
                free(buf);
            buf = grown;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (buf == NULL || err) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    int files = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0)
                return 1;
            files++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (d == NULL) {
            perror(argv[i]);
            return 1;
        }
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.')
                continue;
            char **grown = realloc(names, (n + 1) * sizeof *names);
            if (grown == NULL)
                return 1;
            names = grown;
            size_t len = strlen(argv[i]) + strlen(de->d_name) + 2;
            if ((names[n] = malloc(len)) == NULL)
                return 1;
            snprintf(names[n++], len, "%s/%s", argv[i], de->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, cmp); /* the same order every run */
        for (size_t j = 0; j < n; j++) {
            if (run_file(names[j]) != 0)
                return 1;
            files++;
            free(names[j]);
        }
        free(names);
    }
    printf("replayed %d inputs\n", files);
    if (files == 0) {
        fprintf(stderr, "no inputs: give corpus files or directories\n");
        return 1;
    }
    return 0;
}
