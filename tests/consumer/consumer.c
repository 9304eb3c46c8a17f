/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* A program built against an installed libdkperf. */
#include <stdio.h>
#include <string.h>

#include <dkperf/kperf.h>

int main(void)
{
    const dk_kperf_vtable *kp = NULL;
    dk_load_error err;
    int rc = dk_kperf_load("/nonexistent", &kp, &err);
    if (rc != DK_ELOAD || err.kind != DK_LOAD_OPEN) {
        fprintf(stderr, "unexpected: %s\n", dk_error_name(rc));
        return 1;
    }
    printf("%s: %s\n", dk_error_name(rc), dk_last_error());
    return strcmp(dk_error_name(DK_ECONFLICT), "DK_ECONFLICT") != 0;
}
