/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * symbols.h - addresses of a recording turned into function names at
 * report time, from the images on disk: ELF through elfutils' libelf
 * (built in where it is found: DKPERF_HAVE_LIBELF), Mach-O through the
 * Mach-O reader (tools/common/symbols/macho.h, built in where it is present:
 * DKPERF_HAVE_MACHO). The reader is chosen by the file's magic. The image's
 * identity recorded with the map (ELF build-id, Mach-O UUID) is checked
 * against the file: an image rebuilt since the recording is not trusted,
 * and its addresses stay image + offset.
 */
#ifndef DKPERF_SYMBOLS_H
#define DKPERF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

typedef struct symbols symbols;
typedef struct sym_image sym_image;

symbols *symbols_new(void);
void symbols_free(symbols *s);

/* The image at path with the identity recorded for it (id_len 0: none
 * recorded), opened and read once and kept; NULL only when out of memory,
 * ours or the ELF or Mach-O reader's (whose symbols would be incomplete).
 * An image that cannot be read is kept too, with its reason: a symbol
 * table that cannot be read whole gives no names, never wrong ones. */
sym_image *symbols_image(symbols *s, const char *path, unsigned id_kind, const uint8_t *id,
                         size_t id_len);

/* The function holding addr in the image mapped at map_start from file
 * offset map_pgoff, or NULL. *image_off (may be NULL) is set to addr's
 * offset in the file (ELF) or from the image's __TEXT (Mach-O). */
const char *sym_lookup(sym_image *im, uint64_t map_start, uint64_t map_pgoff, uint64_t addr,
                       uint64_t *image_off);

/* Why the image gives no names ("build-id differs from the recording", "not
 * found", ...), or NULL when it was read. */
const char *sym_image_problem(const sym_image *im);

/* When the image gives no names because this build has no reader for its
 * format, one sentence saying so and what would give them; else NULL. */
const char *sym_image_missing_reader(const sym_image *im);

/* What this build can read, for the report's notes: e.g. "ELF (elfutils
 * libelf)", "Mach-O". */
const char *symbols_readers(void);

#endif /* DKPERF_SYMBOLS_H */
