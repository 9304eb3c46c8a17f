/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_dkrec.c - the recording file's writer and reader
 * (tools/common/dkrec/dkrec.c): every field read back as written, a file cut at
 * any byte read up to its last whole chunk, any flipped byte refused with
 * the file and offset named, write errors returned, and the size per
 * sample of a typical profile.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dkrec.h"
#include "dkrec_format.h"
#include "imageid.h"
#include "common/regfile.h"

/* A deterministic generator, so that a failure repeats. */
static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#define NSAMPLES 5000
#define MAXF 40

typedef struct gen_sample {
    dkrec_sample s;
    uint64_t frames[MAXF];
} gen_sample;

static gen_sample *gen; /* what was written */

/* Writes a recording of n samples to a temporary file; returns its bytes
 * (malloc'd) and size. Stacks come from a few "functions" so that they
 * share prefixes, as real ones do. */
static uint8_t *write_recording(size_t n, size_t *size, bool finish, const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    dkrec_writer *w;
    CHECK_INT(dkrec_writer_open(fd, &w), ==, 0);
    CHECK_INT(dkrec_write_meta(w, "command", "prog --flag"), ==, 0);
    CHECK_INT(dkrec_write_event(w, 0, "cpu-clock", 0, 999), ==, 0);
    CHECK_INT(dkrec_write_event(w, 1, "page-faults", 1, 0), ==, 0);
    static const uint8_t id[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
                                   7,    8,    9,    10,   11, 12, 13, 14, 15, 16};
    CHECK_INT(dkrec_write_map(w, 1234, 0x555500000000ull, 0x20000, 0x1000, "/usr/bin/prog",
                              DKREC_ID_ELF_BUILD_ID, id, sizeof id),
              ==, 0);
    CHECK_INT(dkrec_write_comm(w, 1234, 1234, "prog"), ==, 0);
    free(gen);
    gen = calloc(n ? n : 1, sizeof *gen);
    CHECK(gen != NULL);
    uint64_t t = 1000000000ull;
    for (size_t i = 0; i < n; i++) {
        gen_sample *g = &gen[i];
        size_t depth = (size_t)(next_rand() % MAXF);
        uint64_t r = next_rand();
        for (size_t k = 0; k < depth; k++) /* innermost first; outer frames vary little */
            g->frames[k] = 0x555500001000ull + ((depth - k) * 0x40) + (k == 0 ? r % 64 : 0);
        g->s.frames = g->frames;
        g->s.n_frames = depth;
        g->s.event = (uint32_t)(next_rand() % 7 == 0);
        g->s.pid = next_rand() % 5 == 0 ? 1235 : 1234;
        g->s.tid = (uint64_t)g->s.pid + next_rand() % 3;
        g->s.cpu = (uint32_t)(next_rand() % 4);
        t += 1001000 + next_rand() % 5000 - (next_rand() % 9 == 0 ? 3000000 : 0);
        g->s.time_ns = t;
        g->s.period = g->s.event ? 1 : 1000000 + next_rand() % 3000;
        g->s.flags = (unsigned)(next_rand() % 4);
        CHECK_INT(dkrec_write_sample(w, &g->s), ==, 0);
        if (i % 997 == 0)
            CHECK_INT(dkrec_flush(w), ==, 0);
    }
    CHECK_INT(dkrec_write_exit(w, 1234, 1234), ==, 0);
    CHECK_INT(dkrec_write_stats(w, 3, 2, 1), ==, 0);
    CHECK_INT(finish ? dkrec_finish(w) : dkrec_flush(w), ==, 0);
    CHECK_U64(dkrec_samples(w), ==, n);
    uint64_t bytes = dkrec_bytes(w);
    dkrec_writer_free(w);
    off_t end = lseek(fd, 0, SEEK_END);
    CHECK_U64((uint64_t)end, ==, bytes);
    uint8_t *data = malloc((size_t)end);
    CHECK(data != NULL);
    CHECK_INT(pread(fd, data, (size_t)end, 0), ==, end);
    close(fd);
    *size = (size_t)end;
    return data;
}

/* The frames of sample s of r, innermost first. */
static size_t frames_of(const dkrec *r, const dkrec_rsample *s, uint64_t *out)
{
    size_t n = 0;
    for (uint32_t k = s->node; k != 0; k = r->nodes[k].parent)
        out[n++] = r->nodes[k].addr;
    return n;
}

static void check_same(const dkrec *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const dkrec_rsample *s = &r->samples[i];
        const dkrec_sample *g = &gen[i].s;
        CHECK_U64(s->time_ns, ==, g->time_ns);
        CHECK_U64(s->period, ==, g->period);
        CHECK_U64(s->tid, ==, g->tid);
        CHECK_INT(s->pid, ==, g->pid);
        CHECK_INT(s->event, ==, g->event);
        CHECK_INT(s->cpu, ==, g->cpu);
        CHECK_INT(s->flags, ==, g->flags);
        uint64_t f[MAXF];
        size_t nf = frames_of(r, s, f);
        CHECK_INT(nf, ==, g->n_frames);
        for (size_t k = 0; k < nf; k++)
            CHECK_U64(f[k], ==, g->frames[k]);
        if (nf > 0)
            CHECK_INT(r->nodes[s->node].depth, ==, nf);
    }
}

static const char *tmp_path(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/dkrec-%d-%s", dkt_tmpdir(), (int)getpid(), name);
    return buf;
}

TEST_CASE(round_trip_every_field)
{
    const char *path = tmp_path("rt");
    size_t size;
    uint8_t *data = write_recording(NSAMPLES, &size, true, path);
    dkrec *r;
    char err[512];
    CHECK_INT(dkrec_read_file(path, &r, err, sizeof err), ==, 0);
    CHECK(r->complete);
    CHECK_STR(r->tail_note, "");
    CHECK_INT(r->n_samples, ==, NSAMPLES);
    check_same(r, NSAMPLES);
    CHECK_INT(r->n_events, ==, 2);
    CHECK_STR(r->events[0].name, "cpu-clock");
    CHECK_U64(r->events[0].freq, ==, 999);
    CHECK_U64(r->events[1].period, ==, 1);
    CHECK_STR(dkrec_meta(r, "command"), "prog --flag");
    CHECK(dkrec_meta(r, "absent") == NULL);
    CHECK_INT(r->n_maps, ==, 1);
    CHECK_STR(r->maps[0].path, "/usr/bin/prog");
    CHECK_U64(r->maps[0].start, ==, 0x555500000000ull);
    CHECK_U64(r->maps[0].pgoff, ==, 0x1000);
    CHECK_INT(r->maps[0].id_kind, ==, DKREC_ID_ELF_BUILD_ID);
    CHECK_INT(r->maps[0].id_len, ==, 20);
    CHECK_INT(r->maps[0].id[0], ==, 0xde);
    CHECK_INT(r->n_comms, ==, 1);
    CHECK_STR(r->comms[0].comm, "prog");
    CHECK_INT(r->n_exits, ==, 1);
    CHECK_U64(r->lost, ==, 3);
    CHECK_U64(r->throttled, ==, 2);
    CHECK_U64(r->unthrottled, ==, 1);
    printf("%d samples with stacks of up to %d frames: %zu bytes, %.1f a sample\n", NSAMPLES, MAXF,
           size, (double)size / NSAMPLES);
    dkrec_free(r);
    free(data);
    unlink(path);
}

/* A dkperf killed while writing leaves a prefix of the file: every prefix
 * past the header reads, up to its last whole chunk, and says it is cut. */
/* The CRC-32 of zlib, a bit at a time. */
static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xffffffffu;
}

TEST_CASE(chunk_checksum_is_zlibs_crc32)
{
    CHECK_U64(dkrec__crc32((const uint8_t *)"123456789", 9), ==, 0xcbf43926u);
    uint8_t buf[100];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)next_rand();
    /* Every length and start, past the 8-byte steps and their tails. */
    for (size_t at = 0; at < 8; at++)
        for (size_t n = 0; at + n <= sizeof buf; n++)
            CHECK_U64(dkrec__crc32(buf + at, n), ==, crc_bitwise(buf + at, n));
}

/* Each streamed sample checked against the one written. */
typedef struct streamed {
    size_t n;
    size_t bad;
} streamed;

static int check_streamed(void *ctx, const dkrec *r, const dkrec_rsample *s)
{
    streamed *w = ctx;
    const dkrec_sample *g = &gen[w->n++].s;
    uint64_t f[MAXF];
    size_t nf = frames_of(r, s, f);
    bool same = s->time_ns == g->time_ns && s->period == g->period && s->tid == g->tid &&
                s->pid == g->pid && s->event == g->event && s->cpu == g->cpu &&
                s->flags == g->flags && nf == g->n_frames;
    for (size_t k = 0; same && k < nf; k++)
        same = f[k] == g->frames[k];
    w->bad += !same;
    return 0;
}

TEST_CASE(a_file_streamed_in_pieces_reads_as_a_whole)
{
    /* Several read pieces' worth, cut at a few places across their ends:
     * every sample handed over in order, none kept, the tail said. */
    const char *path = tmp_path("stream");
    size_t size;
    uint8_t *data = write_recording(200000, &size, true, path);
    CHECK(size > (2u << 20) + 100);
    const size_t lens[] = {size, (1u << 20) + 5, 2u << 20, (2u << 20) + 13, size - 100};
    for (size_t c = 0; c < sizeof lens / sizeof lens[0]; c++) {
        size_t n = lens[c];
        dkrec *whole = NULL, *r = NULL;
        char err[512], serr[512];
        CHECK_INT(dkrec_parse(data, n, path, &whole, err, sizeof err), ==, 0);
        int fd = open(path, O_WRONLY | O_TRUNC);
        CHECK(fd >= 0);
        CHECK_INT(write(fd, data, n), ==, n);
        close(fd);
        streamed w = {0, 0};
        int rc = dkrec_stream_file(path, check_streamed, &w, &r, serr, sizeof serr);
        if (rc != 0)
            fprintf(stderr, "%s\n", serr);
        CHECK_INT(rc, ==, 0);
        CHECK_INT(w.n, ==, whole->n_samples);
        CHECK_INT(r->n_samples, ==, whole->n_samples);
        CHECK_INT(w.bad, ==, 0);
        CHECK(r->samples == NULL);
        CHECK_INT(r->complete, ==, whole->complete);
        CHECK_STR(r->tail_note, whole->tail_note);
        CHECK_INT(r->n_nodes, ==, whole->n_nodes);
        dkrec_free(whole);
        dkrec_free(r);
    }
    unlink(path);
    free(data);
}

TEST_CASE(every_prefix_reads_up_to_its_last_chunk)
{
    const char *path = tmp_path("prefix");
    size_t size;
    uint8_t *data = write_recording(3000, &size, true, path);
    size_t last_n = 0;
    for (size_t cut = 0; cut < size; cut++) {
        dkrec *r = NULL;
        char err[512];
        int rc = dkrec_parse(data, cut, "cut.data", &r, err, sizeof err);
        if (cut < 16) {
            CHECK_INT(rc, ==, -1);
            CHECK_CONTAINS(err, "cut.data: not a dkperf recording");
            continue;
        }
        if (rc != 0)
            DKT_FAIL("prefix of %zu bytes: %s", cut, err);
        CHECK(!r->complete);
        CHECK(r->tail_note[0] != '\0');
        CHECK_INT(r->n_samples, >=, last_n); /* a longer prefix never holds fewer */
        last_n = r->n_samples;
        check_same(r, r->n_samples);
        dkrec_free(r);
    }
    CHECK_INT(last_n, >=, 2000); /* chunks are flushed often, so most of the samples survive */
    free(data);
    unlink(path);
}

TEST_CASE(unfinished_file_is_read_and_says_so)
{
    const char *path = tmp_path("unfinished");
    size_t size;
    uint8_t *data = write_recording(100, &size, false, path);
    dkrec *r;
    char err[512];
    CHECK_INT(dkrec_parse(data, size, "u.data", &r, err, sizeof err), ==, 0);
    CHECK(!r->complete);
    CHECK_CONTAINS(r->tail_note, "no end mark");
    CHECK_INT(r->n_samples, ==, 100);
    dkrec_free(r);
    free(data);
    unlink(path);
}

/* A byte changed anywhere past the header is caught (by the checksum, or
 * as a bad chunk head) with the file and an offset named. */
TEST_CASE(flipped_bytes_are_refused_with_the_offset)
{
    const char *path = tmp_path("flip");
    size_t size;
    uint8_t *data = write_recording(500, &size, true, path);
    size_t refused = 0, tried = 0;
    for (size_t at = 16; at < size; at += 1 + at / 50) {
        uint8_t keep = data[at];
        data[at] ^= 0x5a;
        dkrec *r = NULL;
        char err[512] = "";
        int rc = dkrec_parse(data, size, "flip.data", &r, err, sizeof err);
        tried++;
        if (rc != 0) {
            refused++;
            CHECK_CONTAINS(err, "flip.data: corrupt recording at byte offset");
        } else {
            /* A changed length can turn the end into a cut chunk: it must then say so. */
            CHECK(!r->complete);
            dkrec_free(r);
        }
        data[at] = keep;
    }
    printf("%zu of %zu flipped bytes refused, the others read as a cut file\n", refused, tried);
    CHECK_INT(refused, >=, tried * 9 / 10);
    free(data);
    unlink(path);
}

TEST_CASE(other_files_are_refused)
{
    dkrec *r;
    char err[512];
    static const uint8_t elf[] = "\x7f"
                                 "ELF\2\1\1\0\0\0\0\0\0\0\0\0\0\0\0\0";
    CHECK_INT(dkrec_parse(elf, sizeof elf, "a.out", &r, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "a.out: not a dkperf recording");
    uint8_t future[16] = {'D', 'K', 'R', 'E', 'C', 0x1a, '\n', 0, 2, 0, 0, 0};
    CHECK_INT(dkrec_parse(future, sizeof future, "new.data", &r, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "version 2.0");
    CHECK_INT(dkrec_read_file("/nonexistent/dkperf.data", &r, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "/nonexistent/dkperf.data: No such file");
    CHECK_INT(dkrec_read_file("/", &r, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "not a regular file");
    /* A header alone is an empty recording, cut before its end mark. */
    CHECK_INT(dkrec_parse(future, sizeof future, "x", &r, err, sizeof err), ==, -1);
    future[8] = 1;
    CHECK_INT(dkrec_parse(future, sizeof future, "empty.data", &r, err, sizeof err), ==, 0);
    CHECK_INT(r->n_samples, ==, 0);
    CHECK(!r->complete);
    dkrec_free(r);
}

/* A string longer than the reader takes is cut, not a file made unreadable. */
TEST_CASE(long_strings_are_cut_to_what_reads)
{
    const char *path = tmp_path("long");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    char *big = malloc(10001);
    CHECK(big != NULL);
    memset(big, 'a', 10000);
    big[10000] = '\0';
    dkrec_writer *w;
    CHECK_INT(dkrec_writer_open(fd, &w), ==, 0);
    CHECK_INT(dkrec_write_meta(w, big, big), ==, 0);
    CHECK_INT(dkrec_write_map(w, 1, 0x1000, 0x1000, 0, big, DKREC_ID_NONE, NULL, 0), ==, 0);
    CHECK_INT(dkrec_write_comm(w, 1, 1, big), ==, 0);
    CHECK_INT(dkrec_finish(w), ==, 0);
    dkrec_writer_free(w);
    close(fd);
    dkrec *r;
    char err[512];
    if (dkrec_read_file(path, &r, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    CHECK(r->complete);
    CHECK_INT(strlen(r->maps[0].path), ==, 4096);
    CHECK_INT(strlen(r->comms[0].comm), ==, 4096);
    CHECK_INT(strlen(r->meta[1]), ==, 4096);
    dkrec_free(r);
    free(big);
    unlink(path);
}

TEST_CASE(write_errors_are_returned)
{
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0)
        SKIP("no /dev/full");
    dkrec_writer *w;
    CHECK_INT(dkrec_writer_open(fd, &w), ==, -ENOSPC);
    CHECK(w == NULL);
    close(fd);
    /* A descriptor that fails later: the error comes back from the flush
     * and from every call after it. */
    int p[2];
    CHECK_INT(pipe(p), ==, 0);
    CHECK_INT(dkrec_writer_open(p[1], &w), ==, 0);
    close(p[0]);
    signal(SIGPIPE, SIG_IGN);
    CHECK_INT(dkrec_write_comm(w, 1, 1, "x"), ==, 0);
    CHECK_INT(dkrec_flush(w), ==, -EPIPE);
    CHECK_INT(dkrec_write_comm(w, 1, 1, "x"), ==, -EPIPE);
    CHECK_INT(dkrec_finish(w), ==, -EPIPE);
    dkrec_writer_free(w);
    close(p[1]);
}

/* The build-id of this test program, read by the record-time reader, is
 * the one the linker wrote (readelf's). */
TEST_CASE(build_id_of_an_elf_file)
{
    unsigned kind;
    uint8_t id[DKREC_ID_MAX];
    size_t n = imageid_read("[vdso]", &kind, id, sizeof id);
    CHECK_INT(n, ==, 0); /* not a file */
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    CHECK(k > 0);
    exe[k] = '\0';
    n = imageid_read(exe, &kind, id, sizeof id);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "readelf -n '%s' 2>/dev/null | sed -n 's/.*Build ID: //p'", exe);
    FILE *f = popen(cmd, "r");
    char want[200] = "";
    if (f == NULL || fgets(want, sizeof want, f) == NULL) {
        if (f)
            pclose(f);
        SKIP("readelf is not installed, or the program has no build-id");
    }
    pclose(f);
    want[strcspn(want, "\n")] = '\0';
    char got[2 * DKREC_ID_MAX + 1] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(got + 2 * i, 3, "%02x", id[i]);
    CHECK_INT(kind, ==, DKREC_ID_ELF_BUILD_ID);
    CHECK_STR(got, want);
    CHECK_INT(imageid_read("/etc/hostname", &kind, id, sizeof id), ==, 0);
    CHECK_INT(kind, ==, DKREC_ID_NONE);
}

/* A path a map or a recording names is opened only when it is a regular
 * file on an ordinary file system; /proc/self/mem and /proc/kmsg stat as
 * regular files, and are refused by their file system. */
TEST_CASE(image_paths_open_only_regular_files_of_ordinary_file_systems)
{
    char why[160];
    struct stat st;
    static const struct {
        const char *path, *why;
    } refused[] = {
        {"/proc/self/mem", "on procfs, a kernel file system, not an ordinary one"},
        {"/proc/self/status", "on procfs, a kernel file system, not an ordinary one"},
        {"/sys/kernel/notes", "on sysfs, a kernel file system, not an ordinary one"},
        {"/dev/null", "not a regular file (a character device)"},
        {"/", "not a regular file (a directory)"},
        {"/nonexistent/x.so", "cannot open: No such file or directory"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (strncmp(refused[i].path, "/sys/", 5) == 0 && access(refused[i].path, F_OK) != 0)
            continue; /* no sysfs here */
        why[0] = '\0';
        CHECK_INT(regfile_open(refused[i].path, &st, why, sizeof why), ==, -1);
        CHECK_STR(why, refused[i].why);
    }
    char dir[512], fifo[600], link[600], file[600];
    snprintf(dir, sizeof dir, "%s/dkrec-regfile-XXXXXX", dkt_tmpdir());
    CHECK(mkdtemp(dir) != NULL);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    snprintf(file, sizeof file, "%s/file", dir);
    CHECK(mkfifo(fifo, 0600) == 0 && symlink("/proc/self/mem", link) == 0);
    CHECK_INT(regfile_open(fifo, &st, why, sizeof why), ==, -1); /* and no wait for a writer */
    CHECK_STR(why, "not a regular file (a FIFO)");
    CHECK_INT(regfile_open(link, &st, why, sizeof why), ==, -1);
    CHECK_STR(why, "on procfs, a kernel file system, not an ordinary one");
    FILE *f = fopen(file, "w");
    CHECK(f != NULL && fputs("image", f) >= 0 && fclose(f) == 0);
    int fd = regfile_open(file, &st, why, sizeof why);
    CHECK(fd >= 0);
    CHECK_INT(st.st_size, ==, 5);
    CHECK_INT(fcntl(fd, F_GETFD) & FD_CLOEXEC, ==, FD_CLOEXEC);
    close(fd);
    unlink(fifo);
    unlink(link);
    unlink(file);
    rmdir(dir);
}

#ifndef __APPLE__
/* The statfs magic numbers of file systems whose files are views of kernel
 * or device state are refused, named; those of ordinary ones, where
 * images live, are not. */
TEST_CASE(kernel_file_systems_are_named)
{
    static const struct {
        uint32_t magic;
        const char *name;
    } kernel[] = {
        {0x9fa0, "procfs"},         {0x62656572, "sysfs"},        {0x74726163, "tracefs"},
        {0x0a647361, "functionfs"}, {0xaee71ee7, "gadgetfs"},     {0xabba1974, "xenfs"},
        {0x687970, "hypfs"},        {0x76a9f425, "ocfs2_dlmfs"},  {0x50494446, "pidfs"},
        {0x7655821, "resctrl"},     {0x5a3c69f0, "apparmorfs"},   {0x6c6f6f70, "binderfs"},
        {0x19800202, "mqueue"},     {0x0187, "autofs"},           {0x444d4142, "dma_buf"},
        {0x6e736673, "nsfs"},       {0x09041934, "anon_inodefs"}, {0x1cd1, "devpts"},
    };
    for (size_t i = 0; i < sizeof kernel / sizeof kernel[0]; i++) {
        const char *name = regfile_linux_fs(kernel[i].magic);
        if (name == NULL)
            DKT_FAIL("0x%x (%s) is not refused", kernel[i].magic, kernel[i].name);
        CHECK_STR(name, kernel[i].name);
    }
    /* ext4, XFS, btrfs, tmpfs, ramfs, hugetlbfs, overlayfs, NFS, FUSE,
     * squashfs, EROFS, 9p, SMB2. */
    static const uint32_t ordinary[] = {0xef53,     0x58465342, 0x9123683e, 0x01021994, 0x858458f6,
                                        0x958458f6, 0x794c7630, 0x6969,     0x65735546, 0x73717368,
                                        0xe0f5e1e2, 0x01021997, 0xfe534d42};
    for (size_t i = 0; i < sizeof ordinary / sizeof ordinary[0]; i++)
        if (regfile_linux_fs(ordinary[i]) != NULL)
            DKT_FAIL("0x%x refused as %s", ordinary[i], regfile_linux_fs(ordinary[i]));
}
#endif


/* A file of one chunk holding payload, under a 1.1 header. */
static size_t one_chunk(uint8_t *out, const uint8_t *payload, size_t n)
{
    static const uint8_t head[16] = {'D', 'K', 'R', 'E', 'C', 0x1a, '\n', 0, 1, 0, 1, 0};
    memcpy(out, head, sizeof head);
    size_t k = sizeof head;
    out[k++] = 'C';
    out[k++] = (uint8_t)n; /* n < 128: one varint byte */
    uint32_t crc = dkrec__crc32(payload, n);
    for (int b = 0; b < 4; b++)
        out[k++] = (uint8_t)(crc >> (8 * b));
    memcpy(out + k, payload, n);
    return k + n;
}

/* The kernel's chain of a sample is a stack of its own, read back as
 * written (format 1.1); a kernel stack record that names no node, comes
 * twice for one sample or has no sample after it is refused. */
TEST_CASE(kernel_stacks_round_trip_and_bad_ones_are_refused)
{
    const char *path = tmp_path("kernel");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    dkrec_writer *w;
    CHECK_INT(dkrec_writer_open(fd, &w), ==, 0);
    CHECK_INT(dkrec_write_event(w, 0, "cpu-clock", 0, 999), ==, 0);
    static const uint64_t user[] = {0x401000, 0x401100, 0x401200};
    static const uint64_t kern[] = {0xffffffff810a0f35ull, 0xffffffff81c00050ull};
    dkrec_sample s = {0};
    s.pid = 7;
    s.time_ns = 1000;
    s.flags = DKREC_SAMPLE_KERNEL;
    s.frames = user + 1;
    s.n_frames = 2;
    s.kernel_frames = kern;
    s.n_kernel_frames = 2;
    CHECK_INT(dkrec_write_sample(w, &s), ==, 0);
    s.flags = 0; /* a user sample after it has no kernel chain */
    s.frames = user;
    s.n_frames = 3;
    s.n_kernel_frames = 0;
    CHECK_INT(dkrec_write_sample(w, &s), ==, 0);
    CHECK_INT(dkrec_finish(w), ==, 0);
    dkrec_writer_free(w);
    close(fd);
    dkrec *r;
    char err[512];
    CHECK_INT(dkrec_read_file(path, &r, err, sizeof err), ==, 0);
    unlink(path);
    CHECK_INT(r->version_minor, ==, DKREC_VERSION_MINOR);
    CHECK_INT(r->n_samples, ==, 2);
    uint32_t k = r->samples[0].knode;
    CHECK(k != 0);
    CHECK_U64(r->nodes[k].addr, ==, kern[0]);
    CHECK_U64(r->nodes[r->nodes[k].parent].addr, ==, kern[1]);
    CHECK_INT(r->nodes[r->nodes[k].parent].parent, ==, 0);
    uint64_t f[MAXF];
    CHECK_INT(frames_of(r, &r->samples[0], f), ==, 2);
    CHECK_U64(f[0], ==, user[1]);
    CHECK_INT(r->samples[1].knode, ==, 0);
    CHECK_INT(frames_of(r, &r->samples[1], f), ==, 3);
    dkrec_free(r);

    /* Node 1 at 0x10, then: event 0 "e", and the kernel records tried. */
    uint8_t file[256];
    static const uint8_t twice[] = {'e',  0,   1, 'e', 1, 0,   'n',  1, 0,
                                    0x20, 'k', 1, 'k', 1, 's', 0x0a, 0};
    CHECK_INT(dkrec_parse(file, one_chunk(file, twice, sizeof twice), "twice", &r, err, sizeof err),
              ==, -1);
    CHECK_CONTAINS(err, "twice: corrupt recording at byte offset 34: two kernel stack records");
    static const uint8_t alone[] = {'e', 0, 1, 'e', 1, 0, 'n', 1, 0, 0x20, 'k', 1};
    CHECK_INT(dkrec_parse(file, one_chunk(file, alone, sizeof alone), "alone", &r, err, sizeof err),
              ==, -1);
    CHECK_CONTAINS(err, "a kernel stack record without its sample");
    static const uint8_t none[] = {'e', 0, 1, 'e', 1, 0, 'n', 1, 0, 0x20, 'k', 2, 's', 0x0a, 0};
    CHECK_INT(dkrec_parse(file, one_chunk(file, none, sizeof none), "none", &r, err, sizeof err),
              ==, -1);
    CHECK_CONTAINS(err, "a kernel stack names stack node 2, of 1 defined");
    /* The sample after a good one reads, with its kernel chain. */
    static const uint8_t good[] = {'e', 0, 1, 'e', 1, 0, 'n', 1, 0, 0x20, 'k', 1, 's', 0x0a, 0};
    CHECK_INT(dkrec_parse(file, one_chunk(file, good, sizeof good), "good", &r, err, sizeof err),
              ==, 0);
    CHECK_INT(r->n_samples, ==, 1);
    CHECK_INT(r->samples[0].knode, ==, 1);
    CHECK_U64(r->nodes[1].addr, ==, 0x10);
    dkrec_free(r);
}

/* An off-CPU sample is marked by a record of its own before it (format
 * 1.2), read back as its flag; one twice for a sample or without its
 * sample is refused, and so is a record type of a newer minor version. */
TEST_CASE(off_cpu_marks_round_trip_and_bad_ones_are_refused)
{
    const char *path = tmp_path("offcpu");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    dkrec_writer *w;
    CHECK_INT(dkrec_writer_open(fd, &w), ==, 0);
    CHECK_INT(dkrec_write_event(w, 0, "cpu-clock", 1000000, 0), ==, 0);
    static const uint64_t user[] = {0x401000, 0x401100};
    dkrec_sample s = {0};
    s.pid = 7;
    s.tid = 8;
    s.time_ns = 1000;
    s.period = 1000000;
    s.frames = user;
    s.n_frames = 2;
    CHECK_INT(dkrec_write_sample(w, &s), ==, 0);
    s.flags = DKREC_SAMPLE_OFF_CPU | DKREC_SAMPLE_KERNEL;
    s.period = 20123456;
    s.time_ns = 21000000;
    CHECK_INT(dkrec_write_sample(w, &s), ==, 0);
    s.flags = 0;
    s.period = 1000000;
    CHECK_INT(dkrec_write_sample(w, &s), ==, 0);
    CHECK_INT(dkrec_finish(w), ==, 0);
    dkrec_writer_free(w);
    close(fd);
    dkrec *r;
    char err[512];
    CHECK_INT(dkrec_read_file(path, &r, err, sizeof err), ==, 0);
    unlink(path);
    CHECK_INT(r->version_minor, ==, DKREC_VERSION_MINOR);
    CHECK_INT(r->n_samples, ==, 3);
    CHECK_INT(r->samples[0].flags, ==, 0);
    CHECK_INT(r->samples[1].flags, ==, DKREC_SAMPLE_OFF_CPU | DKREC_SAMPLE_KERNEL);
    CHECK_U64(r->samples[1].period, ==, 20123456);
    CHECK_INT(r->samples[2].flags, ==, 0);
    CHECK_U64(r->samples[2].period, ==, 1000000);
    dkrec_free(r);

    uint8_t file[256];
    static const uint8_t twice[] = {'e', 0, 1, 'e', 1, 0, 'n', 1, 0, 0x20, 'o', 'o', 's', 0x0a, 0};
    CHECK_INT(dkrec_parse(file, one_chunk(file, twice, sizeof twice), "twice", &r, err, sizeof err),
              ==, -1);
    CHECK_CONTAINS(err, "two off-CPU records for one sample");
    static const uint8_t alone[] = {'e', 0, 1, 'e', 1, 0, 'n', 1, 0, 0x20, 'o'};
    CHECK_INT(dkrec_parse(file, one_chunk(file, alone, sizeof alone), "alone", &r, err, sizeof err),
              ==, -1);
    CHECK_CONTAINS(err, "an off-CPU record without its sample");
    /* A newer minor version's record type: refused, naming the versions. */
    static const uint8_t newer[] = {'e', 0, 1, 'e', 1, 0, 'q'};
    size_t n = one_chunk(file, newer, sizeof newer);
    file[10] = 9;
    CHECK_INT(dkrec_parse(file, n, "newer", &r, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "unknown record type 0x71 of format 1.9 (this dkperf reads up to 1.3");
}

/* A name taken at an exec is a record of its own (format 1.3), read back
 * as a comm marked exec, placed among the maps; a rename stays a comm. A
 * file of an older version reads as before: its names are no execs. */
TEST_CASE(exec_records_round_trip_and_older_files_read_as_before)
{
    const char *path = tmp_path("exec");
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    dkrec_writer *w;
    CHECK_INT(dkrec_writer_open(fd, &w), ==, 0);
    CHECK_INT(dkrec_write_event(w, 0, "cpu-clock", 1000000, 0), ==, 0);
    CHECK_INT(dkrec_write_comm(w, 7, 7, "a"), ==, 0);
    CHECK_INT(dkrec_write_map(w, 7, 0x1000, 0x1000, 0, "/bin/a", DKREC_ID_NONE, NULL, 0), ==, 0);
    CHECK_INT(dkrec_write_exec(w, 7, 7, "b"), ==, 0);
    CHECK_INT(dkrec_write_map(w, 7, 0x8000, 0x1000, 0, "/bin/b", DKREC_ID_NONE, NULL, 0), ==, 0);
    CHECK_INT(dkrec_write_comm(w, 7, 9, "b-worker"), ==, 0);
    /* An exec of a pid without maps in the file ends none: a comm, which a
     * reader of 1.2 reads; so is the exec of a pid taken again after an
     * exit. */
    CHECK_INT(dkrec_write_exec(w, 8, 8, "fresh"), ==, 0);
    CHECK_INT(dkrec_write_exec(w, 7, 7, "c"), ==, 0);
    CHECK_INT(dkrec_write_map(w, 7, 0x1000, 0x1000, 0, "/bin/c", DKREC_ID_NONE, NULL, 0), ==, 0);
    CHECK_INT(dkrec_write_exit(w, 7, 7), ==, 0);
    CHECK_INT(dkrec_write_exec(w, 7, 7, "d"), ==, 0);
    CHECK_INT(dkrec_finish(w), ==, 0);
    dkrec_writer_free(w);
    close(fd);
    dkrec *r;
    char err[512];
    CHECK_INT(dkrec_read_file(path, &r, err, sizeof err), ==, 0);
    unlink(path);
    CHECK_INT(r->version_minor, ==, 3);
    CHECK_INT(r->n_comms, ==, 6);
    CHECK_STR(r->comms[0].comm, "a");
    CHECK(!r->comms[0].exec);
    CHECK_U64(r->comms[0].first_map, ==, 0);
    CHECK_STR(r->comms[1].comm, "b");
    CHECK(r->comms[1].exec);
    CHECK_U64(r->comms[1].first_map, ==, 1);
    CHECK_INT(r->comms[1].pid, ==, 7);
    CHECK_U64(r->comms[1].tid, ==, 7);
    CHECK(!r->comms[2].exec);
    CHECK_U64(r->comms[2].first_map, ==, 2);
    CHECK_STR(r->comms[3].comm, "fresh");
    CHECK(!r->comms[3].exec);
    CHECK(r->comms[4].exec);  /* b mapped /bin/b */
    CHECK(!r->comms[5].exec); /* 7 exited: a new process */
    dkrec_free(r);

    /* A 1.1 file (one_chunk's header): comm records are no execs. */
    uint8_t file[256];
    static const uint8_t old[] = {'e', 0, 1, 'e', 1, 0, 'c', 14, 7, 1, 'a', 'z', 0};
    CHECK_INT(dkrec_parse(file, one_chunk(file, old, sizeof old), "old", &r, err, sizeof err), ==,
              0);
    CHECK_INT(r->version_minor, ==, 1);
    CHECK_INT(r->n_comms, ==, 1);
    CHECK_STR(r->comms[0].comm, "a");
    CHECK(!r->comms[0].exec);
    CHECK(r->complete);
    dkrec_free(r);
    /* An exec record cut short is refused like a comm. */
    static const uint8_t cut[] = {'e', 0, 1, 'e', 1, 0, 'i', 14, 7, 5, 'a'};
    CHECK_INT(dkrec_parse(file, one_chunk(file, cut, sizeof cut), "cut", &r, err, sizeof err), ==,
              -1);
    CHECK_CONTAINS(err, "corrupt recording at byte offset");
}

/* With switching, the next file starts with a process's names and maps
 * since its last exec only: the image it left is gone. */
TEST_CASE(a_switch_after_an_exec_keeps_only_the_new_image)
{
    char first[4096], second[4096];
    snprintf(first, sizeof first, "%s", tmp_path("exec-switch-1.data"));
    snprintf(second, sizeof second, "%s", tmp_path("exec-switch-2.data"));
    int fd = open(first, O_RDWR | O_CREAT | O_TRUNC, 0600), fd2;
    CHECK(fd >= 0);
    dkrec_writer *w;
    CHECK_INT(dkrec_writer_open(fd, &w), ==, 0);
    dkrec_writer_keep(w);
    CHECK_INT(dkrec_write_event(w, 0, "cpu-clock", 0, 999), ==, 0);
    CHECK_INT(dkrec_write_comm(w, 5, 5, "a"), ==, 0);
    CHECK_INT(dkrec_write_map(w, 5, 0x1000, 0x1000, 0, "/lib/l", DKREC_ID_NONE, NULL, 0), ==, 0);
    CHECK_INT(dkrec_write_exec(w, 5, 5, "b"), ==, 0);
    CHECK_INT(dkrec_write_map(w, 5, 0x8000, 0x1000, 0, "/bin/b", DKREC_ID_NONE, NULL, 0), ==, 0);
    fd2 = open(second, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd2 >= 0);
    CHECK_INT(dkrec_writer_switch(w, fd2), ==, 0);
    close(fd);
    CHECK_INT(dkrec_finish(w), ==, 0);
    dkrec_writer_free(w);
    close(fd2);
    dkrec *b;
    char err[512];
    CHECK_INT(dkrec_read_file(second, &b, err, sizeof err), ==, 0);
    unlink(first);
    unlink(second);
    CHECK_INT(b->n_comms, ==, 1);
    CHECK_STR(b->comms[0].comm, "b");
    CHECK_INT(b->n_maps, ==, 1);
    CHECK_STR(b->maps[0].path, "/bin/b");
    dkrec_free(b);
}

TEST_MAIN()

/* A switch ends the file and starts the next with what it still needs:
 * meta, events, the maps and names of processes that have not exited; the
 * stacks interned anew, the losses and samples the file's own. */
TEST_CASE(a_switch_starts_a_file_that_reads_alone)
{
    char first[4096], second[4096];
    snprintf(first, sizeof first, "%s", tmp_path("switch-1.data"));
    snprintf(second, sizeof second, "%s", tmp_path("switch-2.data"));
    int fd = open(first, O_RDWR | O_CREAT | O_TRUNC, 0600), fd2;
    CHECK(fd >= 0);
    dkrec_writer *w;
    CHECK_INT(dkrec_writer_open(fd, &w), ==, 0);
    dkrec_writer_keep(w);
    CHECK_INT(dkrec_write_meta(w, "command", "prog"), ==, 0);
    CHECK_INT(dkrec_write_event(w, 0, "cpu-clock", 0, 999), ==, 0);
    CHECK_INT(dkrec_write_map(w, 5, 0x1000, 0x1000, 0, "/bin/five", DKREC_ID_NONE, NULL, 0), ==, 0);
    CHECK_INT(dkrec_write_comm(w, 5, 5, "five"), ==, 0);
    CHECK_INT(dkrec_write_map(w, 6, 0x2000, 0x1000, 0, "/bin/six", DKREC_ID_NONE, NULL, 0), ==, 0);
    CHECK_INT(dkrec_write_comm(w, 6, 6, "six"), ==, 0);
    CHECK_INT(dkrec_write_comm(w, 5, 7, "five-thread"), ==, 0);
    uint64_t frames[2] = {0x1010, 0x1020};
    dkrec_sample s = {
        .pid = 5, .tid = 5, .time_ns = 100, .period = 1, .frames = frames, .n_frames = 2};
    CHECK_INT(dkrec_write_sample(w, &s), ==, 0);
    CHECK_INT(dkrec_write_exit(w, 5, 7), ==, 0); /* a thread: its process goes on */
    CHECK_INT(dkrec_write_exit(w, 6, 6), ==, 0);
    CHECK_INT(dkrec_write_stats(w, 3, 1, 0), ==, 0);
    fd2 = open(second, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(fd2 >= 0);
    CHECK_INT(dkrec_writer_switch(w, fd2), ==, 0);
    close(fd);
    s.time_ns = 200;
    CHECK_INT(dkrec_write_sample(w, &s), ==, 0);
    CHECK_INT(dkrec_write_sample(w, &s), ==, 0);
    CHECK_INT(dkrec_write_stats(w, 5, 1, 0), ==, 0);
    CHECK_INT(dkrec_finish(w), ==, 0);
    CHECK_U64(dkrec_samples(w), ==, 2);
    dkrec_writer_free(w);
    close(fd2);

    char err[512];
    dkrec *a = NULL, *b = NULL;
    CHECK_INT(dkrec_read_file(first, &a, err, sizeof err), ==, 0);
    CHECK_INT(dkrec_read_file(second, &b, err, sizeof err), ==, 0);
    CHECK(a->complete && b->complete);
    CHECK_U64(a->n_samples, ==, 1);
    CHECK_U64(a->lost, ==, 3);
    CHECK_U64(b->n_samples, ==, 2);
    CHECK_U64(b->lost, ==, 2); /* its own: 5 in all less the first file's 3 */
    CHECK_STR(dkrec_meta(b, "command"), "prog");
    CHECK_U64(b->n_events, ==, 1);
    CHECK_STR(b->events[0].name, "cpu-clock");
    CHECK_U64(b->n_maps, ==, 1); /* pid 6 exited */
    CHECK_STR(b->maps[0].path, "/bin/five");
    CHECK_U64(b->n_comms, ==, 2);
    CHECK_STR(b->comms[0].comm, "five");
    CHECK_STR(b->comms[1].comm, "five-thread");
    /* Its stacks are its own: node ids from 1, the frames as written. */
    uint64_t got[4];
    CHECK_U64(frames_of(b, &b->samples[1], got), ==, 2);
    CHECK_U64(got[0], ==, 0x1010);
    CHECK_U64(got[1], ==, 0x1020);
    CHECK_U64(b->n_nodes, ==, 3);
    dkrec_free(a);
    dkrec_free(b);
    unlink(first);
    unlink(second);
}
