/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_macho.c - the Mach-O symbol reader (tools/common/symbols/macho.c) on any
 * bytes: a thin or fat file, whole or cut, with any field corrupted. Input:
 * the file's bytes. The reader must refuse it with one line naming the
 * input, or accept it with lookups that hold together.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "macho.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    macho_image *m = (macho_image *)err; /* must be set to NULL or a result */
    int rc = macho_open_buffer(data, size, "fz", &m, err, sizeof err);
    if (rc != 0) {
        if (m != NULL || strncmp(err, "fz: ", 4) != 0 || strchr(err, '\n') != NULL)
            abort(); /* a failure without its one-line reason, or with a result */
        return 0;
    }
    if (m == NULL)
        abort();
    /* Addresses near the symbols: the text base, and values from the input. */
    uint64_t base = macho_text_vmaddr(m);
    for (size_t i = 0; i + 8 <= size && i < 512; i += 8) {
        uint64_t v;
        memcpy(&v, data + i, sizeof v);
        uint64_t addrs[2] = {v, base + (v & 0xffff)};
        for (int k = 0; k < 2; k++) {
            uint64_t start = 0;
            const char *name = macho_lookup(m, addrs[k], &start);
            if (name == NULL)
                continue;
            if (start > addrs[k] || name[0] == '\0' || macho_lookup(m, start, NULL) != name)
                abort(); /* a symbol must start at or below the address, and own its start */
        }
    }
    const uint8_t *uuid = macho_uuid(m);
    volatile uint8_t sink = uuid ? uuid[15] : 0;
    (void)sink;
    macho_close(m);
    return 0;
}
