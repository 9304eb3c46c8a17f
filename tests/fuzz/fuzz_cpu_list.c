/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_cpu_list.c - the parser of CPU lists as sysfs writes them in
 * /sys/devices/system/cpu/online ("0-3,6,8-11"). Input: the file's text.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/perf_event/perf_event.h"
#include "fuzz_common.h"

#define MAX 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    int cpus[MAX + 1];
    cpus[MAX] = -12345; /* guard: the parser must stop at max */
    size_t n = 99999;
    int rc = dk__perf_parse_cpu_list(text, cpus, MAX, &n);
    if (n > MAX || cpus[MAX] != -12345 || (rc != 0 && n != 0))
        abort(); /* past max, or a failure that still reports CPUs */
    for (size_t i = 0; i < n; i++)
        if (cpus[i] < 0 || (i > 0 && cpus[i] <= cpus[i - 1]))
            abort(); /* CPU numbers are never negative, and ascend */
    free(text);
    return 0;
}
