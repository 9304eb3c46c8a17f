/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * image_cache.h - what the loaders resolve from a dlopen'ed image, kept
 * once per (image, root) for the life of the process. Not installed.
 *
 * Both loaders (the frameworks in loader.c, libSystem's calls in
 * libsystem.c) follow one rule: an image is opened at most once per root,
 * "R" and "R/" being the same root (dk__root_key), and never unloaded, so a
 * function pointer handed out can never point into an unmapped image. One
 * mutex serialises first loads (and with them dlerror()). A failed load
 * leaves nothing behind and may be retried.
 */
#ifndef DKPERF_SYS_IMAGE_CACHE_H
#define DKPERF_SYS_IMAGE_CACHE_H

#include <stddef.h>

/*
 * Fill the size bytes at slot (zeroed) from the image under root (already a
 * dk__root_key). Called with the cache's mutex held. Returns 0, or an error
 * recorded with dk__fail*, after which the slot is freed.
 */
typedef int (*dk__image_fill)(const char *root, void *slot, void *ctx);

/*
 * The slot of the image named name ("kperf.framework", "libSystem", ...)
 * under root (NULL: $DKPERF_FRAMEWORK_ROOT, else the system's): filled by
 * fill on the first call for this (name, root), the same slot afterwards.
 * Returns 0 with *out set, DK_ENOMEM, or fill's error.
 */
int dk__image_once(const char *name, const char *root, size_t size, dk__image_fill fill, void *ctx,
                   void **out);

#endif /* DKPERF_SYS_IMAGE_CACHE_H */
