/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * unavailable.c - which events cannot be counted here, said once; see
 * unavailable.h.
 */
#include <string.h>

#include "common/unavailable.h"

const char *dk__why_shared(const char *why)
{
    /* "DK_EUNAVAILABLE: " as libdkbench's event plan writes it. */
    if (strncmp(why, "DK_E", 4) == 0) {
        size_t k = 4;
        while (why[k] >= 'A' && why[k] <= 'Z')
            k++;
        if (k > 4 && why[k] == ':' && why[k + 1] == ' ')
            why += k + 2;
    }
    /* "event X needs ..." reads "needs ...", "event X is not ..." "not ...";
     * X may be followed by the native name it stands for, "event cycles
     * (cpu-cycles) is ...". */
    if (strncmp(why, "event ", 6) == 0) {
        const char *end = strchr(why + 6, ' ');
        if (end != NULL && end > why + 6 && end[1] != '\0') {
            why = end + 1;
            const char *close = why[0] == '(' ? strstr(why, ") ") : NULL;
            if (close != NULL && memchr(why, ' ', (size_t)(close - why)) == NULL)
                why = close + 2;
            if (strncmp(why, "is ", 3) == 0)
                why += 3;
        }
    }
    return why;
}

static bool unavailable(const char *const why[], size_t i)
{
    return why[i] != NULL && why[i][0] != '\0';
}

/* Whether event j says nothing new after events 0..j-1 of reason r (the
 * first event of its line): a name already on that line. */
static bool named_before(const char *const names[], const char *const why[], size_t r, size_t j)
{
    const char *shared = dk__why_shared(why[r]);
    for (size_t k = r; k < j; k++)
        if (unavailable(why, k) && strcmp(names[k], names[j]) == 0 &&
            strcmp(dk__why_shared(why[k]), shared) == 0)
            return true;
    return false;
}

size_t dk__put_unavailable(FILE *out, size_t n, const char *const names[], const char *const why[],
                           const char *lead, const char *tail, void (*put)(FILE *, const char *))
{
    size_t lines = 0;
    for (size_t i = 0; i < n; i++) {
        if (!unavailable(why, i))
            continue;
        const char *shared = dk__why_shared(why[i]);
        bool said = false; /* this reason had a line of its own already */
        for (size_t k = 0; k < i && !said; k++)
            said = unavailable(why, k) && strcmp(dk__why_shared(why[k]), shared) == 0;
        if (said)
            continue;
        fputs(lead, out);
        put(out, names[i]);
        for (size_t j = i + 1; j < n; j++)
            if (unavailable(why, j) && strcmp(dk__why_shared(why[j]), shared) == 0 &&
                !named_before(names, why, i, j)) {
                fputs(", ", out);
                put(out, names[j]);
            }
        fputs(": ", out);
        put(out, shared);
        fputs(tail, out);
        lines++;
    }
    return lines;
}
