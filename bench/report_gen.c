/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * report_gen.c - writes a recording (doc/RECORD-FORMAT.md, through
 * tools/common/dkrec's writer) of N samples over K distinct stacks, for
 * report's scale benchmark (report_scale.c) and its tests. The stacks are
 * made of this program's own functions, at the addresses it runs at, and
 * its text mapping is recorded, so report names every frame.
 *
 * Sample i takes stack (i mod P) * 7919 mod K, P = --period (default K):
 * a recording of N * P samples holds each of the first's P samples N
 * times, so its counts are N times the first's.
 *
 * usage: report-gen FILE N [--stacks K] [--depth D] [--period P]
 * Exit status 0, or 2 with a line saying why.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dkrec.h"

/* The frames: 16 functions, a stack's depth digits of its number in base 16. */
/* clang-format off */
#define FN(n) __attribute__((noinline)) void gen_fn_##n(void); \
              __attribute__((noinline)) void gen_fn_##n(void) { __asm__ volatile(""); }
FN(0) FN(1) FN(2) FN(3) FN(4) FN(5) FN(6) FN(7)
FN(8) FN(9) FN(10) FN(11) FN(12) FN(13) FN(14) FN(15)
static void (*const fns[16])(void) = {
    gen_fn_0, gen_fn_1, gen_fn_2,  gen_fn_3,  gen_fn_4,  gen_fn_5,  gen_fn_6,  gen_fn_7,
    gen_fn_8, gen_fn_9, gen_fn_10, gen_fn_11, gen_fn_12, gen_fn_13, gen_fn_14, gen_fn_15};
/* clang-format on */

static int die(const char *what)
{
    fprintf(stderr, "report-gen: %s\n", what);
    return 2;
}

/* The text mapping holding addr: start, length, offset and path. */
static int text_map(uint64_t addr, uint64_t *start, uint64_t *len, uint64_t *pgoff, char *path,
                    size_t size)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return -1;
    char line[1024];
    int rc = -1;
    while (rc != 0 && fgets(line, sizeof line, f) != NULL) {
        uint64_t lo, hi, off;
        char perm[8];
        int n = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &lo, &hi, perm, &off,
                   &n) < 4 ||
            addr < lo || addr >= hi || n == 0)
            continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(path, size, "%s", line + n);
        *start = lo;
        *len = hi - lo;
        *pgoff = off;
        rc = 0;
    }
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return die("usage: report-gen FILE N [--stacks K] [--depth D] [--period P]");
    uint64_t n = strtoull(argv[2], NULL, 10), k = 200, depth = 6, period = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
        uint64_t v = strtoull(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--stacks") == 0)
            k = v;
        else if (strcmp(argv[i], "--depth") == 0)
            depth = v;
        else if (strcmp(argv[i], "--period") == 0)
            period = v;
        else
            return die("unknown option");
    }
    if (period == 0)
        period = k;
    if (k == 0 || depth == 0 || depth > 16 || (depth < 16 && k > (uint64_t)1 << (4 * depth)))
        return die("--stacks K must be at least 1 and at most 16^D, --depth D from 1 to 16");
    uint64_t start, len, pgoff;
    char path[1024];
    if (text_map((uint64_t)(uintptr_t)fns[0], &start, &len, &pgoff, path, sizeof path) != 0)
        return die("cannot find this program's text in /proc/self/maps");
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return die("cannot create the file");
    dkrec_writer *w;
    if (dkrec_writer_open(fd, &w) != 0 || dkrec_write_meta(w, "command", "report-gen") != 0 ||
        dkrec_write_event(w, 0, "cpu-clock", 0, 1000) != 0 ||
        dkrec_write_map(w, 4242, start, len, pgoff, path, DKREC_ID_NONE, NULL, 0) != 0 ||
        dkrec_write_comm(w, 4242, 4242, "gen") != 0)
        return die("cannot write the file");
    uint64_t frames[16];
    dkrec_sample s = {.event = 0, .pid = 4242, .tid = 4242, .frames = frames, .n_frames = depth};
    for (uint64_t i = 0; i < n; i++) {
        uint64_t stack = (i % period) * 7919 % k;
        /* Innermost first: the leaf's own address, then return addresses. */
        for (uint64_t d = 0; d < depth; d++) {
            unsigned digit = (unsigned)((stack >> (4 * d)) & 15);
            frames[d] = (uint64_t)(uintptr_t)fns[digit] + (d == 0 ? 0 : 1);
        }
        s.time_ns = 1000000000ull + i * 1000000ull;
        s.period = 1000000;
        s.cpu = (uint32_t)(i & 1);
        if (dkrec_write_sample(w, &s) != 0)
            return die("cannot write the file");
    }
    if (dkrec_finish(w) != 0)
        return die("cannot write the file");
    dkrec_writer_free(w);
    close(fd);
    return 0;
}
