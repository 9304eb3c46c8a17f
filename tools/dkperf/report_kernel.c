/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_kernel.c - the names of kernel frames in dkperf report (see
 * report.h): the kernel's symbols read once, from DKPERF_KALLSYMS when set
 * (a copy of the recorded machine's, or a test's) or /proc/kallsyms, and
 * why they cannot name frames where the kernel hides their addresses.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

int report_kernel_symbols(kallsyms **out, char *note, size_t size)
{
    *out = NULL;
    const char *path = getenv("DKPERF_KALLSYMS");
    if (path == NULL || path[0] == '\0')
        path = KALLSYMS_PATH;
    char err[512];
    kallsyms *k;
    int rc = kallsyms_read(path, &k, err, sizeof err);
    if (rc == -2)
        return -1; /* fewer names for want of memory would be a wrong report */
    if (rc != 0) {
        snprintf(note, size, "kernel frames shown as [kernel]: %s", err);
        return 0;
    }
    if (!kallsyms_hidden(k)) {
        *out = k;
        return 0;
    }
    kallsyms_free(k);
    char level[16] = "?";
    FILE *f = fopen("/proc/sys/kernel/kptr_restrict", "re");
    if (f != NULL) {
        if (fgets(level, sizeof level, f) == NULL)
            snprintf(level, sizeof level, "?");
        level[strcspn(level, "\n")] = '\0';
        fclose(f);
    }
    snprintf(note, size,
             "kernel frames shown as [kernel]: %s gives every address as 0, the kernel hides "
             "them (kernel.kptr_restrict=%s: at 1 only a reader with CAP_SYSLOG sees them, at 2 "
             "none)",
             path, level);
    return 0;
}

const char *report_kernel_name(const kallsyms *k, uint64_t addr, bool leaf, char *buf, size_t size)
{
    /* A return address is just past its call: look up the call itself. */
    const char *sym = kallsyms_lookup(k, leaf || addr == 0 ? addr : addr - 1, NULL);
    if (sym != NULL)
        return sym;
    snprintf(buf, size, "0x%" PRIx64, addr);
    return buf;
}
