/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pmu_probe - exit 0 when the kernel counts hardware instructions for this
 * process, 1 (saying why) when it does not. For the tests' shell scripts.
 */
#include <stdio.h>

#include "pmu.h"

int main(void)
{
    int why = 0;
    if (dkt_have_hw_pmu(&why)) {
        puts("hardware PMU: instructions can be counted");
        return 0;
    }
    printf("no hardware PMU: opening a hardware instructions counter failed: %s\n", strerror(why));
    return 1;
}
