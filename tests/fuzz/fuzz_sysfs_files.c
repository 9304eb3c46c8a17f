/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_sysfs_files.c - the text of sysfs event_source files as the
 * perf_event backend reads them: a PMU's type file, one format file
 * ("config:0-7,32-35") and one event file ("event=0xc0,umask=1"), then
 * an event spec parsed against them.
 * Input lines: format text, event text, type text, spec (default "fz/e/";
 * the format term is "a", the event "e").
 */
#include <stdlib.h>
#include <string.h>

#include "backend/perf_event/perf_event.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (buf == NULL)
        return 0;
    char *line[4] = {"", "", "9", "fz/e/"};
    char *got[4];
    size_t n = fz_split_lines(data, size, buf, got, 4);
    for (size_t i = 0; i < n; i++)
        if (i < 3 || got[i][0] != '\0')
            line[i] = got[i];
    const char *sysfs = fz_sysfs();
    fz_write("fz/format/a", line[0], strlen(line[0]));
    fz_write("fz/events/e", line[1], strlen(line[1]));
    fz_write("fz/type", line[2], strlen(line[2]));
    pe_def def;
    int rc = dk__pe_parse(sysfs, line[3], &def);
    if (rc != 0 && rc != DK__NOT_MINE && rc != DK_ENOEVENT && rc != DK_EINVAL)
        abort();
    free(buf);
    return 0;
}
