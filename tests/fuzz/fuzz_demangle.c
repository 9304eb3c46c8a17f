/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_demangle.c - the Rust legacy decoder of dkperf report (demangle.c)
 * on the demangling of a name from an untrusted image: the input, with the
 * hash a Rust legacy name ends in, as __cxa_demangle gives it. The name it
 * writes is never longer than the input.
 */
#include <stdlib.h>
#include <string.h>

#include "demangle.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char hash[] = "::h0123456789abcdef";
    char *cxx = malloc(size + sizeof hash);
    if (cxx == NULL)
        return 0;
    memcpy(cxx, data, size);
    memcpy(cxx + size, hash, sizeof hash);
    char *name = demangle_rust_legacy("_ZN3foo17h0123456789abcdefE", cxx);
    if (name != NULL && strlen(name) > strlen(cxx))
        abort();
    free(name);
    free(cxx);
    return 0;
}
