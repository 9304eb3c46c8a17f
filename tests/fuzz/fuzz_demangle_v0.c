/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_demangle_v0.c - the Rust v0 decoder of dkperf report (macOS's
 * demangle_rust_v0.c) on a name from an untrusted image: "_R" then the
 * input up to its first NUL. What it writes is within its output cap and
 * well-formed UTF-8.
 */
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "demangle.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 3);
    if (name == NULL)
        return 0;
    memcpy(name, "_R", 2);
    memcpy(name + 2, data, size);
    name[size + 2] = '\0';
    char *out = demangle_rust_v0(name);
    if (out != NULL) {
        if (strlen(out) > 64 * 1024)
            abort();
        for (const unsigned char *p = (const unsigned char *)out; *p != '\0';) {
            size_t k = dk__utf8_length(p);
            if (k == 0)
                abort();
            p += k;
        }
    }
    free(out);
    free(name);
    return 0;
}
