/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_macho.c - the Mach-O symbol reader (tools/common/symbols/macho.c) on real
 * Mach-O files built by Zig (tests/fixtures/macho/build.sh), against what
 * llvm-nm and llvm-objdump said about them (the .truth files), and on every
 * kind of broken file: truncated at each offset, corrupted counts and
 * offsets, 32-bit, not Mach-O, missing. Fat files and the choice of
 * their slice are in test_macho_fat.c; the shared helpers in
 * macho_fixtures.h.
 *
 * DK_MACHO_FIXTURES: the committed fixtures; DK_MACHO_SMALL: the small
 * hand-laid images (tests/fuzz/corpus/macho). DK_MACHO_ZIG_DIR (env): the
 * fixtures linked by Zig against libSystem at test time, when Zig is here.
 */
#define _POSIX_C_SOURCE 200809L

#include "macho_fixtures.h"


static void check_fixture_dir(const char *dir)
{
    char path[1024];
    tslice t[2], f[2];
    char err[512] = "";
    macho_image *m = NULL;

    load_truth(dir, "thin-arm64", t, 2);
    snprintf(path, sizeof path, "%s/thin-arm64", dir);
    if (macho_open(path, &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    check_slice(m, &t[0]);
    macho_close(m);

    size_t n = load_truth(dir, "fat-arm64-x86_64", f, 2);
    CHECK_INT(n, ==, 2);
    snprintf(path, sizeof path, "%s/fat-arm64-x86_64", dir);
    if (macho_open(path, &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    check_slice(m, slice_of(f, n, host_pick()));
    macho_close(m);
    for (size_t i = 0; i < n; i++) {
        if (macho_open_uuid(path, f[i].uuid, &m, err, sizeof err) != 0)
            DKT_FAIL("%s", err);
        check_slice(m, &f[i]);
        macho_close(m);
    }
    /* The same slices from a descriptor the caller opened and vetted. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(fd >= 0);
    for (size_t i = 0; i < n; i++) {
        if (macho_open_fd(fd, path, f[i].uuid, &m, err, sizeof err) != 0)
            DKT_FAIL("%s", err);
        check_slice(m, &f[i]);
        macho_close(m);
    }
    CHECK_INT(macho_open_fd(fd, path, NULL, &m, err, sizeof err), ==, 0);
    check_slice(m, slice_of(f, n, host_pick()));
    macho_close(m);
    close(fd);
    fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    CHECK_INT(macho_open_fd(fd, "/dev/null", NULL, &m, err, sizeof err), ==, -1);
    CHECK_STR(err, "/dev/null: not a regular file (a character device)");
    CHECK(m == NULL);
    close(fd);
}

TEST_CASE(committed_fixtures_match_nm) { check_fixture_dir(DK_MACHO_FIXTURES); }

TEST_CASE(zig_linked_fixtures_match_nm)
{
    const char *dir = getenv("DK_MACHO_ZIG_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/fat-arm64-x86_64.truth", dir ? dir : "");
    if (dir == NULL || access(path, R_OK) != 0)
        SKIP("no fixtures linked by Zig at test time (%s: Zig, llvm-lipo or llvm-nm missing)",
             dir ? dir : "DK_MACHO_ZIG_DIR unset");
    check_fixture_dir(dir);
}

/* ---- the small hand-laid image: function starts and symbol kinds ---- */

TEST_CASE(function_starts_end_symbols)
{
    blob b = load(DK_MACHO_SMALL, "small-thin");
    macho_image *m = NULL;
    char err[256];
    if (macho_open_buffer(b.data, b.len, "small-thin", &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    const uint64_t T = 0x100000000u;
    uint64_t s = 0;
    CHECK_U64(macho_symbol_count(m), ==, 3); /* f0, f1, f3: no stab, no undefined */
    CHECK_STR(macho_lookup(m, T + 0x200, &s), "f0");
    CHECK_U64(s, ==, T + 0x200);
    CHECK_STR(macho_lookup(m, T + 0x20f, &s), "f0");
    CHECK_STR(macho_lookup(m, T + 0x210, &s), "f1");
    CHECK_U64(s, ==, T + 0x210);
    CHECK_STR(macho_lookup(m, T + 0x21f, &s), "f1");
    /* 0x220 starts a function without a symbol: f1 does not cover it. */
    CHECK(macho_lookup(m, T + 0x220, &s) == NULL);
    CHECK(macho_lookup(m, T + 0x22f, &s) == NULL);
    CHECK_STR(macho_lookup(m, T + 0x230, &s), "f3");
    CHECK_STR(macho_lookup(m, T + 0x23f, &s), "f3");
    /* The section ends at 0x240. */
    CHECK(macho_lookup(m, T + 0x240, &s) == NULL);
    CHECK(macho_lookup(m, T + 0x1ff, &s) == NULL);
    uint8_t want[16];
    for (int i = 0; i < 16; i++)
        want[i] = (uint8_t)i;
    CHECK(memcmp(macho_uuid(m), want, 16) == 0);
    CHECK_U64(macho_text_vmaddr(m), ==, T);
    macho_close(m);
    free(b.data);
}

/* Offsets in a thin 64-bit image, found by walking it here. */
typedef struct layout {
    size_t seg_text, symtab, uuid, fstarts; /* load command offsets, 0 if none */
    size_t first_cmd;
    uint32_t symoff, nsyms, stroff, strsize, fsoff, fssize;
    size_t end; /* the end of the last table the reader needs */
} layout;

static layout walk(const uint8_t *d, size_t len)
{
    layout l;
    memset(&l, 0, sizeof l);
    CHECK(len >= 32 && rd32(d) == 0xfeedfacfu);
    uint32_t ncmds = rd32(d + 16);
    size_t off = 32;
    l.first_cmd = off;
    for (uint32_t i = 0; i < ncmds; i++) {
        uint32_t cmd = rd32(d + off), size = rd32(d + off + 4);
        if (cmd == 0x19 && memcmp(d + off + 8, "__TEXT", 7) == 0)
            l.seg_text = off;
        if (cmd == 0x2)
            l.symtab = off;
        if (cmd == 0x1b)
            l.uuid = off;
        if (cmd == 0x26)
            l.fstarts = off;
        off += size;
        CHECK(off <= len);
    }
    CHECK(l.seg_text && l.symtab && l.uuid);
    l.symoff = rd32(d + l.symtab + 8);
    l.nsyms = rd32(d + l.symtab + 12);
    l.stroff = rd32(d + l.symtab + 16);
    l.strsize = rd32(d + l.symtab + 20);
    l.end = off;
    if (l.symoff + (size_t)l.nsyms * 16 > l.end)
        l.end = l.symoff + (size_t)l.nsyms * 16;
    if (l.stroff + (size_t)l.strsize > l.end)
        l.end = l.stroff + (size_t)l.strsize;
    if (l.fstarts) {
        l.fsoff = rd32(d + l.fstarts + 8);
        l.fssize = rd32(d + l.fstarts + 12);
        if (l.fsoff + (size_t)l.fssize > l.end)
            l.end = l.fsoff + (size_t)l.fssize;
    }
    return l;
}

/* The nlist entry of the symbol named name. */
static uint8_t *find_nlist(uint8_t *d, const layout *l, const char *name)
{
    for (uint32_t i = 0; i < l->nsyms; i++) {
        uint8_t *e = d + l->symoff + (size_t)i * 16;
        if ((e[4] & 0xe0) == 0 && strcmp((char *)d + l->stroff + rd32(e), name) == 0)
            return e;
    }
    DKT_FAIL("no symbol %s", name);
}

TEST_CASE(function_starts_bound_a_symbol_when_the_next_is_stripped)
{
    blob b = load(DK_MACHO_FIXTURES, "thin-arm64");
    tslice t[1];
    load_truth(DK_MACHO_FIXTURES, "thin-arm64", t, 1);
    layout l = walk(b.data, b.len);
    CHECK(l.fstarts != 0 && l.fssize > 0);
    uint64_t alpha = 0, helper = 0, beta = 0;
    for (size_t i = 0; i < t[0].nsyms; i++) {
        if (strcmp(t[0].syms[i].name, "_fixture_alpha") == 0)
            alpha = t[0].syms[i].addr;
        if (strcmp(t[0].syms[i].name, "_local_helper") == 0)
            helper = t[0].syms[i].addr;
        if (strcmp(t[0].syms[i].name, "_fixture_beta") == 0)
            beta = t[0].syms[i].addr;
    }
    CHECK(alpha && helper > alpha && beta > helper);
    /* As `strip -x` leaves it: the local symbol gone (made a stab here). */
    uint8_t *e = find_nlist(b.data, &l, "_local_helper");
    e[4] = 0x24;
    macho_image *m = NULL;
    char err[256];
    if (macho_open_buffer(b.data, b.len, "stripped", &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    uint64_t s = 0;
    CHECK_STR(macho_lookup(m, helper - 1, &s), "fixture_alpha");
    CHECK(macho_lookup(m, helper, &s) == NULL);
    CHECK(macho_lookup(m, beta - 1, &s) == NULL);
    CHECK_STR(macho_lookup(m, beta, &s), "fixture_beta");
    macho_close(m);

    /* Without LC_FUNCTION_STARTS (its cmd made unknown) alpha runs on to beta. */
    wr32(b.data + l.fstarts, 0x7fff0026u);
    if (macho_open_buffer(b.data, b.len, "stripped", &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    CHECK_STR(macho_lookup(m, beta - 1, &s), "fixture_alpha");
    macho_close(m);
    free(b.data);
}

TEST_CASE(same_address_prefers_the_external_name)
{
    blob b = load(DK_MACHO_FIXTURES, "thin-arm64");
    layout l = walk(b.data, b.len);
    /* Move the local helper onto fixture_alpha's address, listed first. */
    uint8_t *alpha = find_nlist(b.data, &l, "_fixture_alpha");
    uint8_t *helper = find_nlist(b.data, &l, "_local_helper");
    memcpy(helper + 8, alpha + 8, 8);
    CHECK((helper[4] & 1) == 0 && (alpha[4] & 1) == 1);
    macho_image *m = NULL;
    char err[256];
    if (macho_open_buffer(b.data, b.len, "alias", &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    uint64_t a = (uint64_t)rd32(alpha + 8) | (uint64_t)rd32(alpha + 12) << 32;
    CHECK_STR(macho_lookup(m, a, NULL), "fixture_alpha");
    macho_close(m);
    free(b.data);
}

/* Lookups over a broken-but-accepted image stay consistent. */
static void probe(const macho_image *m, uint64_t seed)
{
    uint64_t base = macho_text_vmaddr(m);
    for (int i = 0; i < 64; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        uint64_t a = (i & 1) ? base + (seed >> 52) : seed;
        uint64_t s = 0;
        const char *name = macho_lookup(m, a, &s);
        if (name != NULL) {
            CHECK(s <= a);
            CHECK(name[0] != '\0');
            CHECK(macho_lookup(m, s, NULL) == name);
        }
    }
}

static void truncate_everywhere(const char *name, size_t need, const tslice *t)
{
    blob b = load(DK_MACHO_FIXTURES, name);
    char err[512];
    size_t failures = 0;
    for (size_t cut = 0; cut < b.len; cut++) {
        macho_image *m = NULL;
        int rc = open_bytes(b.data, cut, &m, err, sizeof err);
        if (cut < need && rc == 0)
            DKT_FAIL("%s cut at %zu of %zu (the tables end at %zu) was accepted", name, cut, b.len,
                     need);
        if (rc == 0) {
            check_slice(m, t);
            macho_close(m);
        } else {
            failures++;
        }
    }
    CHECK_U64(failures, >=, need);
    free(b.data);
}

TEST_CASE(truncated_at_every_offset)
{
    tslice t[2];
    blob b = load(DK_MACHO_FIXTURES, "thin-arm64");
    layout l = walk(b.data, b.len);
    load_truth(DK_MACHO_FIXTURES, "thin-arm64", t, 1);
    truncate_everywhere("thin-arm64", l.end, &t[0]);
    free(b.data);

    /* The fat file: the slice read lies at its end; every cut into it fails. */
    size_t n = load_truth(DK_MACHO_FIXTURES, "fat-arm64-x86_64", t, 2);
    b = load(DK_MACHO_FIXTURES, "fat-arm64-x86_64");
    truncate_everywhere("fat-arm64-x86_64", b.len, slice_of(t, n, host_pick()));
    free(b.data);
}

TEST_CASE(truncated_files_on_disk)
{
    blob b = load(DK_MACHO_FIXTURES, "thin-arm64");
    layout l = walk(b.data, b.len);
    char err[512];
    for (size_t k = 0; k < 48; k++) {
        size_t cut = k < 40 ? b.len * k / 40 : l.end - (48 - k);
        char *path = temp_file(b.data, cut);
        macho_image *m = (macho_image *)&err; /* must be reset to NULL on failure */
        int rc = macho_open(path, &m, err, sizeof err);
        CHECK_INT(rc, ==, -1);
        CHECK(m == NULL);
        CHECK(strncmp(err, path, strlen(path)) == 0);
        if (strstr(err, "too short") == NULL && strstr(err, "truncated") == NULL)
            DKT_FAIL("cut at %zu: \"%s\" says neither \"too short\" nor \"truncated\"", cut, err);
        unlink(path);
        free(path);
    }
    free(b.data);
}

typedef struct corruption {
    const char *what;    /* the field corrupted */
    size_t *at;          /* a load command offset from the layout, or NULL for 0 */
    size_t off;          /* byte offset from *at */
    uint32_t value;      /* written there (little-endian) */
    const char *expect;  /* in the error */
    const char *expect2; /* also, or NULL */
} corruption;

TEST_CASE(corrupted_fields_are_named)
{
    blob orig = load(DK_MACHO_FIXTURES, "thin-arm64");
    layout l = walk(orig.data, orig.len);
    size_t zero = 0;
    size_t nsect_text = l.seg_text + 72; /* the first section of __TEXT */
    const corruption cases[] = {
        {"ncmds", &zero, 16, 0xffffffffu, "ncmds 4294967295", NULL},
        {"sizeofcmds", &zero, 20, 0xfffffff0u, "sizeofcmds 4294967280", NULL},
        {"cmdsize 0", &l.first_cmd, 4, 0, "cmdsize 0", NULL},
        {"cmdsize huge", &l.first_cmd, 4, 0x7ffffff8u, "cmdsize 2147483640", NULL},
        {"LC_SEGMENT_64 cmdsize", &l.seg_text, 4, 64, "LC_SEGMENT_64 (load command",
         "has cmdsize 64, less than 72"},
        {"nsects", &l.seg_text, 64, 0x10000000u, "nsects 268435456", NULL},
        {"section addr", &nsect_text, 36, 0xffffffffu, "past 2^64", NULL},
        {"symoff", &l.symtab, 8, 0xfffffff0u, "symoff 4294967280", NULL},
        {"nsyms", &l.symtab, 12, 0x7fffffffu, "nsyms 2147483647", NULL},
        {"stroff", &l.symtab, 16, 0xfffffff0u, "stroff 4294967280", NULL},
        {"strsize", &l.symtab, 20, 0x7fffffffu, "strsize 2147483647", NULL},
        {"LC_SYMTAB cmdsize", &l.symtab, 4, 16, "LC_SYMTAB (load command",
         "has cmdsize 16, less than 24"},
        {"LC_UUID cmdsize", &l.uuid, 4, 20, "LC_UUID (load command",
         "has cmdsize 20, less than 24"},
        {"two LC_SYMTAB", &l.uuid, 0, 0x2, "two LC_SYMTAB", NULL},
        {"LC_FUNCTION_STARTS dataoff", &l.fstarts, 8, 0xfffffff0u,
         "LC_FUNCTION_STARTS dataoff 4294967280", NULL},
        {"LC_FUNCTION_STARTS datasize", &l.fstarts, 12, 0x7fffffffu, "LC_FUNCTION_STARTS dataoff",
         NULL},
        {"LC_FUNCTION_STARTS cmdsize", &l.fstarts, 4, 8, "LC_FUNCTION_STARTS (load command",
         "has cmdsize 8, less than 16"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        blob b = copy(orig);
        const corruption *c = &cases[i];
        CHECK(c->at == &zero || *c->at != 0);
        wr32(b.data + *c->at + c->off, c->value);
        if (strcmp(c->what, "section addr") == 0) { /* addr = 2^64 - 16, size >= 16 */
            wr32(b.data + *c->at + 32, 0xfffffff0u);
            b.data[*c->at + 2] = '\n'; /* in its name: the error stays one line */
        }
        macho_image *m = NULL;
        if (open_bytes(b.data, b.len, &m, err, sizeof err) == 0)
            DKT_FAIL("%s: corrupt image accepted", c->what);
        if (strstr(err, c->expect) == NULL || (c->expect2 && strstr(err, c->expect2) == NULL))
            DKT_FAIL("%s: error \"%s\" does not name \"%s\" (and \"%s\")", c->what, err, c->expect,
                     c->expect2 ? c->expect2 : "");
        free(b.data);
    }

    /* A defined symbol's string index, and its section number. */
    blob b = copy(orig);
    uint8_t *e = find_nlist(b.data, &l, "_fixture_beta");
    wr32(e, l.strsize + 5);
    macho_image *m = NULL;
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "n_strx");
    memcpy(b.data, orig.data, orig.len);
    e = find_nlist(b.data, &l, "_fixture_beta");
    e[5] = 200;
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "n_sect 200");
    e[5] = 0;
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "n_sect 0");

    /* Function starts that run past their data, and one that overflows. */
    memcpy(b.data, orig.data, orig.len);
    memset(b.data + l.fsoff, 0xff, l.fssize);
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "LC_FUNCTION_STARTS: the number at byte 0");
    free(b.data);
    free(orig.data);
}

/* Tables whose counts a sparse file covers (nsyms 0xffffffff is 64 GiB of
 * nlists, holes all but the real image): refused by size, with errno
 * EFBIG, never asked of malloc, whose failure (ENOMEM) fails a report. */
TEST_CASE(sparse_tables_are_refused_not_allocated)
{
    blob orig = load(DK_MACHO_FIXTURES, "thin-arm64");
    layout l = walk(orig.data, orig.len);
    const struct {
        size_t at, off;
        uint64_t cover; /* the file's size: what the field claims, past its offset */
        const char *expect;
    } cases[] = {
        {l.symtab, 12, l.symoff + 0xffffffffull * 16, "the symbol table: 4294967295 entries"},
        {l.symtab, 20, l.stroff + 0xffffffffull, "the string table: 4294967296 entries"},
        {l.fstarts, 12, l.fsoff + 0xffffffffull, "LC_FUNCTION_STARTS: 4294967295 entries"},
    };
    char err[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        blob b = copy(orig);
        wr32(b.data + cases[i].at + cases[i].off, 0xffffffffu);
        char *path = temp_file(b.data, b.len);
        if (truncate(path, (off_t)cases[i].cover) != 0) {
            fprintf(stderr, "skipped: no sparse file of %llu bytes here: %s\n",
                    (unsigned long long)cases[i].cover, strerror(errno));
        } else {
            macho_image *m = NULL;
            errno = 0;
            int rc = macho_open(path, &m, err, sizeof err);
            int e = errno;
            CHECK_INT(rc, ==, -1);
            CHECK(m == NULL);
            CHECK_CONTAINS(err, cases[i].expect);
            CHECK_CONTAINS(err, "more than the 1024 MiB read; the file is corrupt");
            CHECK_INT(e, ==, EFBIG);
        }
        unlink(path);
        free(path);
        free(b.data);
    }
    free(orig.data);
}

TEST_CASE(uleb_overflow_is_refused)
{
    blob orig = load(DK_MACHO_FIXTURES, "thin-arm64");
    layout l = walk(orig.data, orig.len);
    CHECK_INT(l.fssize, >=, 8);
    char err[512];
    macho_image *m = NULL;
    /* Ten bytes with bits past 2^64 in the last: point the data at the
     * symbol table (any bytes will do) and write the number there. */
    blob b = copy(orig);
    uint8_t big[11] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f, 0};
    CHECK(l.symoff + sizeof big <= b.len);
    memcpy(b.data + l.symoff, big, sizeof big);
    wr32(b.data + l.fstarts + 8, l.symoff);
    wr32(b.data + l.fstarts + 12, sizeof big);
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "overflows 64 bits");
    free(b.data);
    free(orig.data);
}

TEST_CASE(not_macho_files_are_refused)
{
    char err[512];
    macho_image *m = NULL;
    const uint8_t m32[32] = {0xce, 0xfa, 0xed, 0xfe, 7};
    CHECK_INT(open_bytes(m32, sizeof m32, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "32-bit Mach-O file");
    const uint8_t be64[32] = {0xfe, 0xed, 0xfa, 0xcf};
    CHECK_INT(open_bytes(be64, sizeof be64, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "big-endian");
    const uint8_t elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    CHECK_INT(open_bytes(elf, sizeof elf, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "not a Mach-O file (magic 0x464c457f)");
    const uint8_t h64[20] = {0xcf, 0xfa, 0xed, 0xfe};
    CHECK_INT(open_bytes(h64, sizeof h64, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "20 bytes are too few for a 64-bit Mach-O header");
    CHECK_INT(open_bytes(h64, 3, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "3 bytes, too short");

    /* Files: text, empty, missing, a directory. */
    const char text[] = "#!/bin/sh\necho not a binary\n";
    char *path = temp_file(text, sizeof text - 1);
    CHECK_INT(macho_open(path, &m, err, sizeof err), ==, -1);
    CHECK(strncmp(err, path, strlen(path)) == 0);
    CHECK_CONTAINS(err, "not a Mach-O file");
    unlink(path);
    free(path);
    path = temp_file("", 0);
    CHECK_INT(macho_open(path, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, path);
    CHECK_CONTAINS(err, "0 bytes, too short");
    unlink(path);
    free(path);
    CHECK_INT(macho_open("/nonexistent/dir/libfoo.dylib", &m, err, sizeof err), ==, -1);
    CHECK_STR(err, "/nonexistent/dir/libfoo.dylib: cannot open: No such file or directory");
    CHECK_INT(macho_open("/", &m, err, sizeof err), ==, -1);
    CHECK_STR(err, "/: not a regular file (a directory)");
    /* A FIFO without a writer: refused at once, not waited on. */
    path = temp_file("", 0);
    CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
    CHECK_INT(macho_open(path, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "not a regular file");
    unlink(path);
    free(path);
    CHECK(m == NULL);

    /* Arguments, and an error buffer too small or absent. */
    CHECK_INT(macho_open(NULL, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "no file name given");
    CHECK_INT(macho_open("/", NULL, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "out is NULL");
    CHECK_INT(macho_open("/", &m, NULL, 0), ==, -1);
    char tiny[6] = "zzzzz";
    CHECK_INT(macho_open("/", &m, tiny, sizeof tiny), ==, -1);
    CHECK_STR(tiny, "/: no");
    CHECK_INT(macho_open_buffer(NULL, 5, "x", &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "no data given");
    CHECK(macho_lookup(NULL, 0, NULL) == NULL);
    CHECK(macho_uuid(NULL) == NULL);
    macho_close(NULL);
}

TEST_CASE(random_corruption_never_crashes)
{
    const char *names[] = {"thin-arm64", "fat-arm64-x86_64"};
    uint64_t seed = 0x9e3779b97f4a7c15u;
    char err[512];
    size_t accepted = 0, refused = 0;
    for (size_t f = 0; f < 3; f++) {
        blob orig = f < 2 ? load(DK_MACHO_FIXTURES, names[f]) : load(DK_MACHO_SMALL, "small-fat");
        layout l;
        memset(&l, 0, sizeof l);
        if (f == 0)
            l = walk(orig.data, orig.len);
        for (int iter = 0; iter < 1500; iter++) {
            blob b = copy(orig);
            int flips = 1 + iter % 4;
            for (int k = 0; k < flips; k++) {
                seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
                /* Mostly the header and load commands, where the fields are. */
                size_t span = (iter & 1) ? b.len : (b.len < 2048 ? b.len : 2048);
                size_t at = (size_t)(seed % span);
                if ((seed >> 40) & 1)
                    b.data[at] = (uint8_t)(seed >> 48); /* a new byte */
                else
                    b.data[at] ^= (uint8_t)(1u << (seed >> 56) % 8); /* one bit */
            }
            macho_image *m = NULL;
            if (open_bytes(b.data, b.len, &m, err, sizeof err) == 0) {
                probe(m, seed);
                macho_close(m);
                accepted++;
            } else {
                refused++;
            }
            free(b.data);
        }
        free(orig.data);
    }
    /* Both outcomes happen: the corruptions reach checked fields and others. */
    CHECK_U64(accepted, >, 100);
    CHECK_U64(refused, >, 100);
}

/* Opens that allocate nothing on the test's side, so a preloaded
 * malloc_fail.so (check_macho_malloc.sh) hits the reader's allocations
 * alone: each open succeeds or fails for want of memory, and after the
 * closes the heap holds what it held before (glibc's count of it). */
TEST_CASE(allocation_failures_leave_nothing)
{
    static const char *const files[] = {"thin-arm64", "fat-arm64-x86_64"};
    char path[1024], err[512];
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    /* Freed chunks kept in the thread cache or the fast bins count as in
     * use: without both (GLIBC_TUNABLES=glibc.malloc.tcache_count=0, set
     * by ctest) the count is exact. */
    const char *tun = getenv("GLIBC_TUNABLES");
    bool exact = tun != NULL && strstr(tun, "glibc.malloc.tcache_count=0") != NULL;
    mallopt(M_MXFAST, 0);
    void *volatile warm = malloc(64); /* the heap's own start-up */
    free(warm);
    struct mallinfo2 before = mallinfo2();
#endif
    size_t opened = 0, refused = 0;
    for (size_t i = 0; i < 4; i++) {
        macho_image *m = NULL;
        int rc;
        if (i < 2) {
            snprintf(path, sizeof path, "%s/%s", DK_MACHO_FIXTURES, files[i]);
            rc = macho_open(path, &m, err, sizeof err);
        } else if (i == 2) {
            snprintf(path, sizeof path, "%s/small-fat", DK_MACHO_SMALL);
            rc = macho_open(path, &m, err, sizeof err);
        } else {
            /* The fat fixture's x86_64 slice, by the small image's UUID:
             * none matches, after reading every slice's commands. */
            uint8_t uuid[16] = {0};
            snprintf(path, sizeof path, "%s/%s", DK_MACHO_FIXTURES, files[1]);
            rc = macho_open_uuid(path, uuid, &m, err, sizeof err);
            CHECK_INT(rc, ==, -1);
            if (strstr(err, "out of memory") == NULL)
                CHECK_CONTAINS(err, "no slice has the UUID wanted");
            continue;
        }
        if (rc == 0) {
            CHECK(macho_symbol_count(m) >= 3);
            CHECK(macho_uuid(m) != NULL);
            macho_close(m);
            opened++;
        } else {
            CHECK(m == NULL);
            CHECK_INT(errno, ==, ENOMEM); /* a report fails for it */
            CHECK_CONTAINS(err, "out of memory");
            CHECK_CONTAINS(err, path);
            refused++;
        }
    }
    CHECK_U64(opened + refused, ==, 3);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 after = mallinfo2();
    if (exact)
        CHECK_U64(after.uordblks + after.hblkhd, ==, before.uordblks + before.hblkhd);
    else
        fprintf(stderr, "heap not compared: GLIBC_TUNABLES lacks glibc.malloc.tcache_count=0\n");
#endif
}

TEST_MAIN()
