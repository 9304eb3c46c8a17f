/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_event_list.c - libFuzzer target for the splitting of the dkperf
 * -e lists (options.c). The input is split on its first NUL into two
 * lists, appended one after the other as repeated -e options are. Checks
 * what the split promises: no empty name, no more than DK_MAX_EVENTS,
 * every name a piece of the list with its commas outside '/'...'/'
 * removed, balanced '/'.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dkperf.h>

#include "options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each name is non-empty, has an even number of '/', and has no comma
 * outside a '/'...'/' pair; their concatenation with commas is the list. */
static void check(const char *list, char **names, size_t from, size_t n)
{
    size_t at = 0, len = strlen(list);
    for (size_t i = from; i < n; i++) {
        size_t nl = strlen(names[i]);
        int slashes = 0;
        if (nl == 0 || at + nl > len || memcmp(list + at, names[i], nl) != 0)
            abort();
        for (size_t k = 0; k < nl; k++) {
            if (names[i][k] == '/')
                slashes++;
            else if (names[i][k] == ',' && slashes % 2 == 0)
                abort();
        }
        if (slashes % 2 != 0)
            abort();
        at += nl;
        if (i + 1 < n) {
            if (list[at] != ',')
                abort();
            at++;
        }
    }
    if (at != len)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 2);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    text[size + 1] = '\0';
    const char *first = text, *second = text + strlen(text) + 1;
    if (second > text + size)
        second = NULL; /* no NUL in the input: one list */

    char **names = NULL;
    size_t n = 0;
    int rc = split_event_list("stat", first, &names, &n);
    if (rc == 0) {
        check(first, names, 0, n);
        size_t before = n;
        rc = second != NULL ? split_event_list("stat", second, &names, &n) : 0;
        if (rc == 0 && second != NULL)
            check(second, names, before, n);
    }
    if (n > DK_MAX_EVENTS)
        abort();
    free_event_list(names, n);
    free(text);
    return 0;
}
