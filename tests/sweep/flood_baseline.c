/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * flood_baseline.c - a dkbench-1 baseline for the performance sweep whose
 * top object holds N more members ("000000000000": 0, ...), their names
 * chosen so that under a fixed member-name hash (FNV-1a with a final mix,
 * which the baseline reader once used) all land in the first 1024 slots of
 * a table of 2^19: each lookup then walks the names before it, and the
 * reading is quadratic. Names are searched for here (about 500 hashes
 * each), too slowly for the sweep's Python.
 *
 * usage: flood_baseline N PATH
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t fixed_hash(const char *k)
{
    uint64_t h = 1469598103934665603u;
    for (const unsigned char *c = (const unsigned char *)k; *c; c++)
        h = (h ^ *c) * 1099511628211u;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 33;
    return h;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: flood_baseline N PATH\n");
        return 2;
    }
    long n = atol(argv[1]);
    FILE *f = fopen(argv[2], "w");
    if (n <= 0 || n > (1L << 18) || f == NULL) {
        fprintf(stderr, "flood_baseline: N must be 1 to 262144 and PATH writable\n");
        return 2;
    }
    fputs("{\"schema\":\"dkbench-1\",\"run\":{},\"results\":[]", f);
    char k[32];
    long found = 0;
    for (unsigned long long i = 0; found < n; i++) {
        snprintf(k, sizeof k, "%012llx", i);
        if ((fixed_hash(k) & ((1u << 19) - 1)) < 1024) {
            fprintf(f, ",\"%s\":0", k);
            found++;
        }
    }
    fputs("}\n", f);
    return fclose(f) == 0 ? 0 : 1;
}
