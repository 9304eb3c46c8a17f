/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_kallsyms.c - libFuzzer target for the kernel symbol reader
 * (tools/common/symbols/kallsyms.c): any text is parsed; a refusal is one
 * line naming the file; an accepted table gives, for every address tried,
 * no name or a non-empty one without blanks or control bytes, at an offset
 * no larger than the address, and nothing at all when it is hidden.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kallsyms *k = NULL;
    char err[512];
    int rc = kallsyms_parse((const char *)data, size, "fuzz.kallsyms", &k, err, sizeof err);
    if (rc != 0) {
        if (rc != -1 && rc != -2)
            abort();
        if (k != NULL || strncmp(err, "fuzz.kallsyms: ", 15) != 0 || strchr(err, '\n') != NULL)
            abort();
        return 0;
    }
    for (size_t i = 0; i + 8 <= size && i < 1024; i += 8) {
        uint64_t v, off = UINT64_MAX;
        memcpy(&v, data + i, sizeof v);
        for (int shift = 0; shift < 64; shift += 20) {
            uint64_t addr = v >> shift;
            const char *name = kallsyms_lookup(k, addr, &off);
            if (name == NULL)
                continue;
            if (kallsyms_hidden(k) || name[0] == '\0' || off > addr)
                abort();
            for (const char *c = name; *c; c++)
                if ((unsigned char)*c <= ' ' || *c == 0x7f)
                    abort();
        }
    }
    kallsyms_free(k);
    return 0;
}
