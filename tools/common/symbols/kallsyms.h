/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * kallsyms.h - the kernel's symbol table as /proc/kallsyms gives it
 * ("address type name [module]" lines), for naming kernel frames. The
 * text is untrusted: read in one linear pass, at most KALLSYMS_MAX_BYTES,
 * a bad line refused with its number. Where the kernel hides the
 * addresses (kernel.kptr_restrict, or a reader without CAP_SYSLOG) every
 * address reads 0: the table is then read but hidden.
 */
#ifndef DKPERF_TOOLS_KALLSYMS_H
#define DKPERF_TOOLS_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KALLSYMS_PATH "/proc/kallsyms"
#define KALLSYMS_MAX_BYTES ((size_t)256 * 1024 * 1024)

typedef struct kallsyms kallsyms;

/* Parses text[0 .. len). 0 and *out, or -1 with err set to one line
 * (name: the file, for the message), -2 when out of memory (err says so):
 * a caller that must not show less for want of memory tells them apart. */
int kallsyms_parse(const char *text, size_t len, const char *name, kallsyms **out, char *err,
                   size_t errlen);
/* Reads and parses the file at path; the same returns. */
int kallsyms_read(const char *path, kallsyms **out, char *err, size_t errlen);
/* True when the table has symbols but every address is 0. */
bool kallsyms_hidden(const kallsyms *k);
size_t kallsyms_count(const kallsyms *k);
/* The function symbol holding addr (the nearest at or below it, before
 * the next one), and its offset in *off (may be NULL); NULL when none. */
const char *kallsyms_lookup(const kallsyms *k, uint64_t addr, uint64_t *off);
void kallsyms_free(kallsyms *k);

#endif /* DKPERF_TOOLS_KALLSYMS_H */
