/*
 * fuzz_stat_args.c - libFuzzer target for dkperf stat's command line: the
 * input, split on NUL bytes, is argv after "stat"; the parser runs (it never
 * executes anything) and everything it allocated is freed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stat_options.h"

#define MAX_ARGS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* One copy with a NUL at the end, so the last argument is terminated too. */
    char *text = malloc(size + 1);
    char *argv[MAX_ARGS + 2];
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int argc = 0;
    argv[argc++] = "stat";
    for (size_t at = 0; at <= size && argc <= MAX_ARGS; at += strlen(text + at) + 1)
        argv[argc++] = text + at;
    argv[argc] = NULL;

    stat_options o;
    int rc = stat_parse_args(argc, argv, &o);
    if (rc == 0) {
        /* What a successful parse promises. */
        if (o.cmd == NULL || o.cmd[0] == NULL || o.repeat < 1 || o.repeat > STAT_MAX_RUNS ||
            (o.sep != NULL && o.json) || (o.events == NULL) != (o.nevents == 0))
            abort();
        for (size_t i = 0; i < o.nevents; i++)
            if (o.events[i][0] == '\0')
                abort();
    }
    stat_options_free(&o);
    free(text);
    return 0;
}
