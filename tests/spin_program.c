/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * spin_program NNNNNNNNNNNN - N iterations of a loop of exactly two
 * instructions, and nothing else that depends on N: the argument has a fixed
 * width (12 digits) and is parsed digit by digit without branches on its
 * value, so the user-mode instructions of a run are 2N plus a constant.
 * Linked statically (no dynamic loader in the count).
 */
#include <string.h>

#include "spin.h"

int main(int argc, char **argv)
{
    if (argc != 2 || strlen(argv[1]) != 12)
        return 2;
    unsigned long n = 0;
    for (int i = 0; i < 12; i++)
        n = n * 10 + (unsigned long)(argv[1][i] - '0');
    if (n == 0)
        return 2;
    dkt_spin(n);
    return 0;
}
