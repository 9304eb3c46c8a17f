/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_pe_spec.c - the perf_event event-spec parser (dk__pe_parse): raw
 * "rNNNN" and "pmu/term=value,.../[u|k]" against a fake sysfs tree.
 * Input: the event name.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/perf_event/perf_event.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *name = malloc(size + 1);
    if (name == NULL)
        return 0;
    memcpy(name, data, size);
    name[size] = '\0';
    pe_def def;
    int rc = dk__pe_parse(fz_sysfs(), name, &def);
    /* Every refusal is one of the documented codes. */
    if (rc != 0 && rc != DK__NOT_MINE && rc != DK_ENOEVENT && rc != DK_EINVAL)
        abort();
    if (rc == 0 && def.exclude != 0 && def.exclude != 'u' && def.exclude != 'k')
        abort();
    free(name);
    return 0;
}
