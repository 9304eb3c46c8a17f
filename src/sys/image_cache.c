/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * image_cache.c - one slot per (image, root), filled once, never freed;
 * see image_cache.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dkperf/kperf.h"
#include "sys/image_cache.h"
#include "util/util.h"

typedef struct entry {
    struct entry *next;
    const char *name;
    char root[DK_LOAD_PATH_MAX];
    _Alignas(max_align_t) unsigned char slot[];
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;

int dk__image_once(const char *name, const char *root, size_t size, dk__image_fill fill, void *ctx,
                   void **out)
{
    char key[DK_LOAD_PATH_MAX];
    dk__root_key(dk_framework_root(root), key, sizeof key);
    int rc = 0;
    pthread_mutex_lock(&lock);
    entry *e;
    for (e = entries; e != NULL; e = e->next)
        if (strcmp(e->name, name) == 0 && strcmp(e->root, key) == 0)
            break;
    if (e == NULL) {
        e = calloc(1, sizeof *e + size);
        if (e == NULL) {
            rc = dk__fail(DK_ENOMEM, "loading %s: out of memory", name);
            goto done;
        }
        rc = fill(key, e->slot, ctx);
        if (rc != 0) {
            free(e);
            goto done;
        }
        e->name = name; /* a string constant of the caller's */
        dk__strlcpy(e->root, key, sizeof e->root);
        e->next = entries;
        entries = e;
    }
    *out = e->slot;
done:
    pthread_mutex_unlock(&lock);
    return rc;
}
