/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * sort.c - sorting a database's events by name.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

static const dk_database_event *sort_base;

static int by_name(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return strcmp(sort_base[x].name, sort_base[y].name);
}

int dk__sort_events(dk_database_event *events, size_t n, size_t *perm)
{
    static pthread_mutex_t sort_lock = PTHREAD_MUTEX_INITIALIZER;
    dk_database_event *sorted = malloc(n * sizeof *sorted + 1);
    if (sorted == NULL)
        return dk__fail(DK_ENOMEM, "sorting the event database: out of memory");
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    /* qsort has no context argument in C11. */
    pthread_mutex_lock(&sort_lock);
    sort_base = events;
    qsort(perm, n, sizeof *perm, by_name);
    pthread_mutex_unlock(&sort_lock);
    for (size_t i = 0; i < n; i++)
        sorted[i] = events[perm[i]];
    memcpy(events, sorted, n * sizeof *sorted);
    free(sorted);
    return 0;
}
