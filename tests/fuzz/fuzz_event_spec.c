/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * fuzz_event_spec.c - libFuzzer target for libdkperf's event grammar
 * (dk_event_list_next, dk_event_spec_parse). The input is a list. Checks
 * what the grammar promises: the specs tile the list with one comma
 * between them, each parses alone to the same result, the lengths nest
 * (event <= base <= len), and a refusal is DK_EINVAL with a position.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <dkperf.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *list = malloc(size + 1);
    if (list == NULL)
        return 0;
    memcpy(list, data, size);
    list[size] = '\0';
    size_t pos = 0, at = 0, len = strlen(list);
    dk_event_spec sp = {.size = sizeof sp}, alone = {.size = sizeof alone};
    int rc;
    while ((rc = dk_event_list_next(list, &pos, &sp)) == 1) {
        if (sp.offset != at || sp.text != list + at || sp.len == 0 || sp.event_len == 0 ||
            sp.event_len > sp.base_len || sp.base_len > sp.len || at + sp.len > len)
            abort();
        if ((sp.period != 0) + (sp.freq != 0) != (sp.base_len != sp.len))
            abort();
        if (dk_event_spec_parse(sp.text, sp.len, &alone) != 0 || alone.kind != sp.kind ||
            alone.len != sp.len || alone.modifiers != sp.modifiers || alone.raw != sp.raw ||
            alone.period != sp.period || alone.freq != sp.freq)
            abort();
        at += sp.len;
        if (list[at] == ',')
            at++;
        if (pos != at)
            abort();
    }
    if (rc == 0 && at != len)
        abort();
    if (rc < 0 && (rc != DK_EINVAL || (len != 0 && strstr(dk_last_error(), "position") == NULL)))
        abort();
    free(list);
    return 0;
}
