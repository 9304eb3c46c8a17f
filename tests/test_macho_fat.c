/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_macho_fat.c - the Mach-O reader on fat (universal) files: their
 * headers checked, 64-bit fat headers, the slice chosen by the rule of
 * macho.h or by UUID. Part of test_macho (see test_macho.c).
 */
#define _POSIX_C_SOURCE 200809L

#include "macho_fixtures.h"

TEST_CASE(fat_headers_are_checked)
{
    blob orig = load(DK_MACHO_FIXTURES, "fat-arm64-x86_64");
    char err[512];
    macho_image *m = NULL;
    blob b = copy(orig);

    wr32be(b.data + 4, 0);
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "nfat_arch 0");
    wr32be(b.data + 4, 1000);
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "nfat_arch 1000");
    wr32be(b.data + 4, 30);
    CHECK_INT(open_bytes(b.data, 200, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "fat_arch entries run past the end");

    /* A slice past the end of the file. */
    memcpy(b.data, orig.data, orig.len);
    wr32be(b.data + 8 + 8, 0x7ffffff0u);
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "fat_arch 0");
    CHECK_CONTAINS(err, "offset 2147483632");
    memcpy(b.data, orig.data, orig.len);
    wr32be(b.data + 8 + 20 + 12, 0x7ffffff0u);
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "fat_arch 1");
    CHECK_CONTAINS(err, "size 2147483632");

    /* Only 32-bit slices. */
    memcpy(b.data, orig.data, orig.len);
    wr32be(b.data + 8, 7);
    wr32be(b.data + 8 + 20, 12);
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "without an arm64 or x86_64 slice (it has i386, arm)");

    /* An arm64 entry whose slice is a 32-bit image. */
    memcpy(b.data, orig.data, orig.len);
    uint32_t off0 = (uint32_t)b.data[16] << 24 | (uint32_t)b.data[17] << 16 |
                    (uint32_t)b.data[18] << 8 | b.data[19];
    uint32_t off1 = (uint32_t)b.data[36] << 24 | (uint32_t)b.data[37] << 16 |
                    (uint32_t)b.data[38] << 8 | b.data[39];
    wr32(b.data + off0, 0xfeedfaceu);
    wr32(b.data + off1, 0xfeedfaceu);
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "32-bit Mach-O");

    /* A Java class file starts with the same magic. */
    const uint8_t java[] = {0xca, 0xfe, 0xba, 0xbe, 0x00, 0x00, 0x00, 0x34, 0, 0, 0, 0};
    CHECK_INT(open_bytes(java, sizeof java, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "nfat_arch 52");
    free(b.data);
    free(orig.data);
}

TEST_CASE(fat64_header_is_read)
{
    /* FAT_MAGIC_64 around the thin fixture: header, one fat_arch_64. */
    blob thin = load(DK_MACHO_FIXTURES, "thin-arm64");
    tslice t[1];
    load_truth(DK_MACHO_FIXTURES, "thin-arm64", t, 1);
    size_t off = 4096;
    blob b = {calloc(1, off + thin.len), off + thin.len};
    CHECK(b.data != NULL);
    wr32be(b.data, 0xcafebabfu);
    wr32be(b.data + 4, 1);
    wr32be(b.data + 8, CPU_ARM64);
    wr32be(b.data + 12, 0);
    wr32be(b.data + 16, 0); /* offset, high word */
    wr32be(b.data + 20, (uint32_t)off);
    wr32be(b.data + 24, 0); /* size, high word */
    wr32be(b.data + 28, (uint32_t)thin.len);
    wr32be(b.data + 32, 12);
    memcpy(b.data + off, thin.data, thin.len);
    macho_image *m = NULL;
    char err[512];
    if (open_bytes(b.data, b.len, &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    check_slice(m, &t[0]);
    macho_close(m);
    /* A 64-bit offset past 2^32 is read as such, and refused. */
    wr32be(b.data + 16, 1);
    CHECK_INT(open_bytes(b.data, b.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "offset 4294971392");
    free(b.data);
    free(thin.data);
}

/* Make slice i of a fat file cputype/cpusubtype: its fat_arch entry and
 * its own header. */
static void set_arch(blob b, int i, uint32_t cputype, uint32_t cpusubtype)
{
    uint8_t *a = b.data + 8 + 20 * i;
    wr32be(a, cputype);
    wr32be(a + 4, cpusubtype);
    uint32_t off = (uint32_t)a[8] << 24 | (uint32_t)a[9] << 16 | (uint32_t)a[10] << 8 | a[11];
    CHECK(off + 12u <= b.len);
    wr32(b.data + off + 4, cputype);
    wr32(b.data + off + 8, cpusubtype);
}

TEST_CASE(fat_slice_rule)
{
    /* The small fat file: arm64 then x86_64, told apart by their UUIDs. */
    blob b = load(DK_MACHO_SMALL, "small-fat");
    macho_image *m = NULL;
    char err[512];
    if (open_bytes(b.data, b.len, &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    CHECK_U64(macho_cputype(m), ==, strcmp(host_pick(), "x86_64") == 0 ? CPU_X86_64 : CPU_ARM64);
    CHECK_INT(macho_uuid(m)[0], ==, strcmp(host_pick(), "x86_64") == 0 ? 16 : 0);
    macho_close(m);

    /* arm64e beats arm64 (slice 1 made arm64e), listed first or second. */
    set_arch(b, 1, CPU_ARM64, 2);
    if (open_bytes(b.data, b.len, &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    CHECK_U64(macho_cputype(m), ==, CPU_ARM64);
    CHECK_INT(macho_cpusubtype(m), ==, 2);
    CHECK_INT(macho_uuid(m)[0], ==, 16);
    macho_close(m);
    set_arch(b, 1, CPU_ARM64, 0);
    set_arch(b, 0, CPU_ARM64, 0x80000002u); /* arm64e with the pointer-auth ABI bit */
    if (open_bytes(b.data, b.len, &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    CHECK_INT(macho_uuid(m)[0], ==, 0);
    macho_close(m);

    /* x86_64 when there is no arm64 (and on x86_64 hosts anyway). */
    blob c = load(DK_MACHO_SMALL, "small-fat");
    set_arch(c, 0, 12, 9); /* armv7 (32-bit) */
    if (open_bytes(c.data, c.len, &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    CHECK_U64(macho_cputype(m), ==, CPU_X86_64);
    CHECK_INT(macho_uuid(m)[0], ==, 16);
    macho_close(m);

    /* A fat_arch entry that disagrees with its image's header. */
    c.data[8 + 20 + 3] = 0x0c; /* entry 1 says arm64; the image is x86_64 */
    CHECK_INT(open_bytes(c.data, c.len, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "fat_arch 1 says arm64, but its image is x86_64");
    free(c.data);
    free(b.data);
}

TEST_CASE(uuid_selects_the_slice)
{
    char path[1024], err[512];
    tslice t[2];
    size_t n = load_truth(DK_MACHO_FIXTURES, "fat-arm64-x86_64", t, 2);
    CHECK_INT(n, ==, 2);
    snprintf(path, sizeof path, "%s/fat-arm64-x86_64", DK_MACHO_FIXTURES);
    macho_image *m = NULL;
    uint8_t other[16];
    memset(other, 0xab, sizeof other);
    CHECK_INT(macho_open_uuid(path, other, &m, err, sizeof err), ==, -1);
    CHECK(m == NULL);
    CHECK_CONTAINS(err, path);
    CHECK_CONTAINS(err, "no slice has the UUID wanted");
    char hex[40];
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 16; k++)
            snprintf(hex + 2 * k, 3, "%02X", t[i].uuid[k]);
        CHECK_CONTAINS(err, hex);
        CHECK_CONTAINS(err, t[i].arch);
    }
    CHECK_INT(macho_open_uuid(path, NULL, &m, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "no UUID given");

    /* A thin file: its own UUID or nothing. */
    tslice th[1];
    load_truth(DK_MACHO_FIXTURES, "thin-arm64", th, 1);
    snprintf(path, sizeof path, "%s/thin-arm64", DK_MACHO_FIXTURES);
    if (macho_open_uuid(path, th[0].uuid, &m, err, sizeof err) != 0)
        DKT_FAIL("%s", err);
    check_slice(m, &th[0]);
    macho_close(m);
    CHECK_INT(macho_open_uuid(path, other, &m, err, sizeof err), ==, -1);
    CHECK(m == NULL);
    CHECK_CONTAINS(err, "UUID is not the one wanted");
}
