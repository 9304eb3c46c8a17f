/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_kallsyms.c - the kernel symbol reader of dkperf report
 * (tools/common/symbols/kallsyms.c): text symbols found by address, module
 * symbols named without their module, data symbols left out, a table of
 * zero addresses (kptr_restrict) read as hidden and naming nothing, a bad
 * line refused with its number, and this machine's /proc/kallsyms read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kallsyms.h"

static const char table[] = "ffffffff81000000 T _stext\n"
                            "ffffffff81000000 T startup_64\n"
                            "ffffffff810a0f30 T __x64_sys_getpid\n"
                            "ffffffff810a0f50 t __ia32_sys_getpid\n"
                            "ffffffff81c00000 T entry_SYSCALL_64\n"
                            "ffffffff82000000 D init_task\n"
                            "ffffffffc0400000 t nf_conntrack_init\t[nf_conntrack]\n";

TEST_CASE(text_symbols_are_found_by_address)
{
    kallsyms *k;
    char err[256];
    CHECK_INT(kallsyms_parse(table, strlen(table), "t", &k, err, sizeof err), ==, 0);
    CHECK(!kallsyms_hidden(k));
    CHECK_INT(kallsyms_count(k), ==, 6);
    uint64_t off = 0;
    CHECK_STR(kallsyms_lookup(k, 0xffffffff810a0f35ull, &off), "__x64_sys_getpid");
    CHECK_U64(off, ==, 5);
    CHECK_STR(kallsyms_lookup(k, 0xffffffff810a0f50ull, &off), "__ia32_sys_getpid");
    CHECK_U64(off, ==, 0);
    /* Two names at one address: the first listed. */
    CHECK_STR(kallsyms_lookup(k, 0xffffffff81000010ull, NULL), "_stext");
    CHECK_STR(kallsyms_lookup(k, 0xffffffff81c00050ull, NULL), "entry_SYSCALL_64");
    /* init_task is data: the address stays in the text symbol before it. */
    CHECK_STR(kallsyms_lookup(k, 0xffffffff82000008ull, NULL), "entry_SYSCALL_64");
    CHECK_STR(kallsyms_lookup(k, 0xffffffffc0400001ull, NULL), "nf_conntrack_init");
    CHECK(kallsyms_lookup(k, 0xffffffff80000000ull, NULL) == NULL);
    kallsyms_free(k);
}

TEST_CASE(zero_addresses_are_hidden_and_name_nothing)
{
    static const char zeros[] = "0000000000000000 T _stext\n"
                                "0000000000000000 T __x64_sys_getpid\n"
                                "0000000000000000 T entry_SYSCALL_64\n";
    kallsyms *k;
    char err[256];
    CHECK_INT(kallsyms_parse(zeros, strlen(zeros), "z", &k, err, sizeof err), ==, 0);
    CHECK(kallsyms_hidden(k));
    CHECK(kallsyms_lookup(k, 0xffffffff810a0f35ull, NULL) == NULL);
    CHECK(kallsyms_lookup(k, 0, NULL) == NULL);
    kallsyms_free(k);
}

TEST_CASE(bad_text_is_refused_with_its_line)
{
    static const struct {
        const char *text, *err;
    } bad[] = {
        {"ffffffff81000000 T a\nffffffff81000010 T\n", "k: line 2 is not \"address type name\""},
        {"ffffffff81000000 T a\n\n", "k: line 2 is not"},
        {"xyz T a\n", "k: line 1 is not"},
        {"10000000000000000 T a\n", "k: line 1 is not"},
        {"ffffffff81000000 T a\x01b\n", "k: line 1 is not"},
        {"", "k: no symbols"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kallsyms *k = (kallsyms *)1;
        char err[256];
        CHECK_INT(kallsyms_parse(bad[i].text, strlen(bad[i].text), "k", &k, err, sizeof err), ==,
                  -1);
        CHECK(k == NULL);
        CHECK_CONTAINS(err, bad[i].err);
    }
    kallsyms *k;
    char err[256];
    CHECK_INT(kallsyms_read("/nonexistent/kallsyms", &k, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "/nonexistent/kallsyms: cannot open: No such file");
    CHECK_INT(kallsyms_read("/", &k, err, sizeof err), ==, -1);
    CHECK_CONTAINS(err, "/: not a regular file");
}

/* procfs gives the file a size of 0: it is read to its end all the same. */
TEST_CASE(this_machines_table_reads)
{
    if (access(KALLSYMS_PATH, R_OK) != 0) {
        printf("skipped: %s is not readable here\n", KALLSYMS_PATH);
        exit(77);
    }
    kallsyms *k;
    char err[512];
    CHECK_INT(kallsyms_read(KALLSYMS_PATH, &k, err, sizeof err), ==, 0);
    CHECK(kallsyms_count(k) > 1000);
    printf("%zu text symbols, hidden: %s\n", kallsyms_count(k), kallsyms_hidden(k) ? "yes" : "no");
    kallsyms_free(k);
}
TEST_MAIN()
