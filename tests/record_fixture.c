/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * record_fixture.c - writes a recording through the recording writer
 * (tools/common/dkrec/dkrec.c) whose addresses are this program's own functions,
 * mapped as /proc/self/maps says with their real build-ids, so that dkperf
 * report symbolizes it from the disk as it would a real recording:
 *
 *   main -> fx_outer -> fx_hot     70 samples a round
 *   main -> fx_outer -> fx_cold    20
 *   main -> fx_other               8
 *   an address in no map           1 ([unknown])
 *   a kernel sample in fx_hot      1 ([kernel] above fx_hot)
 *
 * and, in a second map of this program recorded with a wrong build-id,
 * an address that must stay unnamed ([record_fixture]).
 *
 * With --deep, each round has besides: a stack of 127 addresses in no map
 * called from main (one [unknown] frame), two stacks of unnamed addresses
 * of the mismatched map called from main, one a run of three (one
 * [record_fixture] frame), and a stack 128 frames deep (fx_hot called
 * from 126 fx_outer frames from main): a flame graph 2000 px high.
 *
 * With --macho FILE it writes instead samples in the Mach-O image FILE
 * (tests/fixtures/macho/thin-arm64), mapped at 0x200000000 with its UUID:
 * 10 in fixture_beta called from fixture_alpha, and 3 more in a second map
 * of the same file recorded with a wrong UUID.
 *
 * With --hot N, fx_hot gets N samples a round instead of 70 (dkperf diff's
 * tests compare two such recordings); with --event NAME the event is NAME
 * instead of cpu-clock.
 *
 * With --exec IMAGE OFFSET it writes instead 6 samples in fx_hot, then a
 * comm record "execd" and a map of IMAGE over fx_hot's address, its
 * function at file offset OFFSET there, then 4 samples at that same
 * address: a process that ran this program, then exec'd IMAGE at the same
 * address (an exec record). --remap IMAGE OFFSET: the same without the
 * exec record (an mmap over the range). --exec-away IMAGE OFFSET: the exec,
 * but IMAGE mapped far from fx_hot, then 4 samples at fx_hot's address
 * (now in no map) and 3 in IMAGE's function.
 *
 * With --mangled it writes instead samples in functions of this program
 * named as C++ and Rust compilers name theirs (fx_cxx, fx_rust_legacy and
 * fx_rust_v0 below), each called from main, and 2 in an image of a long
 * name that is not on the disk.
 *
 * usage: record_fixture OUT [--rounds N] [--two-events] [--no-end] [--deep] [--macho FILE]
 *                       [--hot N] [--event NAME]
 *        record_fixture OUT --mangled
 *        record_fixture OUT --exec|--remap|--exec-away IMAGE OFFSET
 *        record_fixture --count RECORDING
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dkrec.h"
#include "imageid.h"

__attribute__((noinline)) void fx_hot(void);
__attribute__((noinline)) void fx_cold(void);
__attribute__((noinline)) void fx_outer(void);
__attribute__((noinline)) void fx_other(void);
static volatile int sink;
__attribute__((noinline)) void fx_hot(void)
{
    for (int i = 0; i < 100; i++)
        sink += i;
}
__attribute__((noinline)) void fx_cold(void)
{
    for (int i = 0; i < 100; i++)
        sink ^= i;
}
__attribute__((noinline)) void fx_outer(void)
{
    fx_hot();
    fx_cold();
    sink++;
}
__attribute__((noinline)) void fx_other(void)
{
    for (int i = 0; i < 50; i++)
        sink -= i;
}

/* Named as g++ names ns::Box<double>::sum(int) const of
 * namespace ns { template <class T> struct Box { T sum(int) const; }; },
 * and as rustc names <alloc::string::String as core::fmt::Display>::fmt
 * (legacy, with its hash) and mycrate::foo::bar (v0). */
__attribute__((noinline)) void fx_cxx(void) __asm__("_ZNK2ns3BoxIdE3sumEi");
__attribute__((noinline)) void fx_rust_legacy(void) __asm__(
    "_ZN60_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$3fmt17h0123456789abcdefE");
__attribute__((noinline)) void fx_rust_v0(void) __asm__("_RNvNtCs1234_7mycrate3foo3bar");
__attribute__((noinline)) void fx_cxx(void) { sink += 3; }
__attribute__((noinline)) void fx_rust_legacy(void) { sink += 5; }
__attribute__((noinline)) void fx_rust_v0(void) { sink += 7; }

static void die(const char *what, int rc)
{
    fprintf(stderr, "record_fixture: %s failed (%d)\n", what, rc);
    exit(1);
}

static void sample(dkrec_writer *w, uint32_t event, uint64_t t, unsigned flags,
                   const uint64_t *frames, size_t n)
{
    dkrec_sample s;
    memset(&s, 0, sizeof s);
    s.event = event;
    s.pid = (int32_t)getpid();
    s.tid = (uint64_t)getpid();
    s.time_ns = t;
    s.period = event == 0 ? 1001001 : 1;
    s.flags = flags;
    s.frames = frames;
    s.n_frames = n;
    int rc = dkrec_write_sample(w, &s);
    if (rc != 0)
        die("dkrec_write_sample", rc);
}

/* --count FILE: what a recording holds, one "key value" a line, for the
 * checks that read a recording back (samples, exits, and each process name
 * with the number of samples before it). */
static int count(const char *path)
{
    dkrec *r = NULL;
    char err[512];
    if (dkrec_read_file(path, &r, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("samples %zu\nexits %zu\ncomplete %d\n", r->n_samples, r->n_exits, r->complete);
    for (size_t i = 0; i < r->n_comms; i++)
        printf("comm %d %llu %zu %s\n", r->comms[i].pid, (unsigned long long)r->comms[i].tid,
               r->comms[i].first_sample, r->comms[i].comm);
    dkrec_free(r);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--count") == 0)
        return count(argv[2]);
    if (argc < 2) {
        fprintf(stderr,
                "usage: record_fixture OUT [--rounds N] [--two-events] [--no-end] [--deep]\n");
        return 2;
    }
    int rounds = 10;
    int two = 0, no_end = 0, deep = 0, nhot = 70, mangled = 0;
    const char *macho = NULL, *event = "cpu-clock", *exec_image = NULL;
    int remap = 0, away = 0;
    uint64_t exec_off = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--two-events") == 0)
            two = 1;
        else if (strcmp(argv[i], "--no-end") == 0)
            no_end = 1;
        else if (strcmp(argv[i], "--deep") == 0)
            deep = 1;
        else if (strcmp(argv[i], "--mangled") == 0)
            mangled = 1;
        else if (strcmp(argv[i], "--macho") == 0 && i + 1 < argc)
            macho = argv[++i];
        else if (strcmp(argv[i], "--hot") == 0 && i + 1 < argc)
            nhot = atoi(argv[++i]);
        else if (strcmp(argv[i], "--event") == 0 && i + 1 < argc)
            event = argv[++i];
        else if ((strcmp(argv[i], "--exec") == 0 || strcmp(argv[i], "--remap") == 0 ||
                  strcmp(argv[i], "--exec-away") == 0) &&
                 i + 2 < argc) {
            remap = strcmp(argv[i], "--remap") == 0;
            away = strcmp(argv[i], "--exec-away") == 0;
            exec_image = argv[++i];
            exec_off = strtoull(argv[++i], NULL, 0);
        }
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    dkrec_writer *w;
    int rc = dkrec_writer_open(fd, &w);
    if (rc != 0)
        die("dkrec_writer_open", rc);
    dkrec_write_meta(w, "command", "record_fixture");
    dkrec_write_meta(w, "comm", "record_fixture");
    dkrec_write_event(w, 0, event, 0, 999);
    if (two)
        dkrec_write_event(w, 1, "page-faults", 1, 0);
    dkrec_write_comm(w, (int32_t)getpid(), (uint64_t)getpid(), "fixture");

    if (macho != NULL) {
        uint8_t id[DKREC_ID_MAX];
        unsigned kind;
        size_t n = imageid_read(macho, &kind, id, sizeof id);
        if (n != 16 || kind != DKREC_ID_MACHO_UUID)
            die("reading the Mach-O UUID (is the Mach-O reader built in?)", (int)n);
        int32_t pid = (int32_t)getpid();
        dkrec_write_map(w, pid, 0x200000000ull, 0x10000, 0, macho, kind, id, n);
        uint8_t wrong[16] = {0};
        dkrec_write_map(w, pid, 0x300000000ull, 0x10000, 0, macho, kind, wrong, sizeof wrong);
        /* __TEXT at 0x100000000: fixture_alpha at +0x340, fixture_beta at +0x360. */
        uint64_t good[2] = {0x200000000ull + 0x368, 0x200000000ull + 0x348};
        uint64_t bad[2] = {0x300000000ull + 0x368, 0x300000000ull + 0x348};
        uint64_t t = 1000;
        for (int i = 0; i < 10; i++)
            sample(w, 0, t += 1000, 0, good, 2);
        for (int i = 0; i < 3; i++)
            sample(w, 0, t += 1000, 0, bad, 2);
        if ((rc = dkrec_finish(w)) != 0)
            die("dkrec_finish", rc);
        dkrec_writer_free(w);
        return close(fd) == 0 ? 0 : 1;
    }

    /* This process's executable maps, with their identities. */
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096 + 256], self[4096] = "";
    uint64_t top = 0;
    while (maps != NULL && fgets(line, sizeof line, maps) != NULL) {
        unsigned long long start, end, off;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &at) < 4 ||
            at <= 0)
            continue;
        char *name = line + at;
        name[strcspn(name, "\n")] = '\0';
        if (end > top)
            top = end;
        if (strchr(perms, 'x') == NULL || name[0] == '\0')
            continue;
        uint8_t id[DKREC_ID_MAX];
        unsigned kind;
        size_t n = imageid_read(name, &kind, id, sizeof id);
        if ((uintptr_t)fx_hot >= start && (uintptr_t)fx_hot < end)
            snprintf(self, sizeof self, "%s", name);
        rc = dkrec_write_map(w, (int32_t)getpid(), start, end - start, off, name, kind, id, n);
        if (rc != 0)
            die("dkrec_write_map", rc);
    }
    if (maps != NULL)
        fclose(maps);
    if (self[0] == '\0')
        die("finding this program's map", 0);
    /* The same file again, far away, recorded with a build-id it does not have. */
    static const uint8_t wrong[20] = {0xba, 0xad, 0xf0, 0x0d};
    uint64_t far = (top + 0x100000000ull) & ~0xfffull;
    dkrec_write_map(w, (int32_t)getpid(), far, 0x10000, 0, self, DKREC_ID_ELF_BUILD_ID, wrong,
                    sizeof wrong);

    if (exec_image != NULL) {
        int32_t pid = (int32_t)getpid();
        uint64_t x = (uintptr_t)fx_hot + 4, t = 1000;
        for (int i = 0; i < 6; i++)
            sample(w, 0, t += 1000, 0, &x, 1);
        if (!remap)
            dkrec_write_exec(w, pid, (uint64_t)pid, "execd");
        uint8_t id[DKREC_ID_MAX];
        unsigned kind;
        size_t n = imageid_read(exec_image, &kind, id, sizeof id);
        /* x is exec_off + 4 into the image: inside its function (with
         * --exec-away, y is, and x is in no map of the new image). */
        uint64_t y = away ? far + 0x200000 + exec_off + 4 : x;
        rc = dkrec_write_map(w, pid, y - exec_off - 4, exec_off + 0x1000, 0, exec_image, kind, id,
                             n);
        if (rc != 0)
            die("dkrec_write_map", rc);
        for (int i = 0; i < 4; i++)
            sample(w, 0, t += 1000, 0, &x, 1);
        for (int i = 0; away && i < 3; i++)
            sample(w, 0, t += 1000, 0, &y, 1);
        if ((rc = dkrec_finish(w)) != 0)
            die("dkrec_finish", rc);
        dkrec_writer_free(w);
        return close(fd) == 0 ? 0 : 1;
    }

    if (mangled) {
        static const char long_image[] = "/nonexistent/libsomething-with-a-long-name.so.1";
        dkrec_write_map(w, (int32_t)getpid(), far + 0x100000, 0x10000, 0, long_image, 0, NULL, 0);
        uint64_t cxx[2] = {(uintptr_t)fx_cxx + 2, (uintptr_t)main + 24};
        uint64_t legacy[2] = {(uintptr_t)fx_rust_legacy + 2, (uintptr_t)main + 24};
        uint64_t v0[2] = {(uintptr_t)fx_rust_v0 + 2, (uintptr_t)main + 24};
        uint64_t lib[2] = {far + 0x100010, (uintptr_t)main + 24};
        uint64_t t = 1000;
        for (int i = 0; i < 5; i++)
            sample(w, 0, t += 1000, 0, cxx, 2);
        for (int i = 0; i < 4; i++)
            sample(w, 0, t += 1000, 0, legacy, 2);
        for (int i = 0; i < 3; i++)
            sample(w, 0, t += 1000, 0, v0, 2);
        for (int i = 0; i < 2; i++)
            sample(w, 0, t += 1000, 0, lib, 2);
        if ((rc = dkrec_finish(w)) != 0)
            die("dkrec_finish", rc);
        dkrec_writer_free(w);
        fx_cxx();
        fx_rust_legacy();
        fx_rust_v0();
        return close(fd) == 0 ? 0 : 1;
    }

    uint64_t hot[3] = {(uintptr_t)fx_hot + 4, (uintptr_t)fx_outer + 8, (uintptr_t)main + 16};
    uint64_t cold[3] = {(uintptr_t)fx_cold + 4, (uintptr_t)fx_outer + 12, (uintptr_t)main + 16};
    uint64_t other[2] = {(uintptr_t)fx_other + 4, (uintptr_t)main + 20};
    uint64_t nowhere[2] = {0x10, (uintptr_t)main + 20};
    uint64_t mismatched[2] = {far + 0x1234, (uintptr_t)main + 20};
    enum { DEEP = 128 };
    uint64_t unknowns[DEEP], tall[DEEP];
    for (int i = 0; i < DEEP - 1; i++) {
        unknowns[i] = 0x100 + 8 * (uint64_t)i;
        tall[i] = (uintptr_t)fx_outer + 8;
    }
    unknowns[DEEP - 1] = tall[DEEP - 1] = (uintptr_t)main + 20;
    tall[0] = (uintptr_t)fx_hot + 4;
    uint64_t run[4] = {far + 0x1234, far + 0x2345, far + 0x3456, (uintptr_t)main + 20};
    uint64_t apart[2] = {far + 0x1500, (uintptr_t)main + 20};
    uint64_t t = 5000000000ull;
    for (int r = 0; r < rounds; r++) {
        if (deep) {
            sample(w, 0, t += 1001001, 0, unknowns, DEEP);
            sample(w, 0, t += 1001001, 0, run, 4);
            sample(w, 0, t += 1001001, 0, apart, 2);
            sample(w, 0, t += 1001001, 0, tall, DEEP);
        }
        for (int i = 0; i < nhot; i++)
            sample(w, 0, t += 1001001, 0, hot, 3);
        for (int i = 0; i < 20; i++)
            sample(w, 0, t += 1001001, 0, cold, 3);
        for (int i = 0; i < 8; i++)
            sample(w, 0, t += 1001001, 0, other, 2);
        sample(w, 0, t += 1001001, 0, nowhere, 2);
        sample(w, 0, t += 1001001, DKREC_SAMPLE_KERNEL, hot, 3);
        sample(w, 0, t += 1001001, 0, mismatched, 2);
        if (two)
            for (int i = 0; i < 5; i++)
                sample(w, 1, t += 1000, 0, other, 2);
        if ((rc = dkrec_flush(w)) != 0)
            die("dkrec_flush", rc);
    }
    dkrec_write_stats(w, 7, 1, 1);
    rc = no_end ? dkrec_flush(w) : dkrec_finish(w);
    if (rc != 0)
        die("dkrec_finish", rc);
    dkrec_writer_free(w);
    if (close(fd) != 0) {
        perror(argv[1]);
        return 1;
    }
    /* Keep the functions: they are what the report must name. */
    fx_outer();
    fx_other();
    return 0;
}
