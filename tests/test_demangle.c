/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_demangle.c - the Rust decoders of dkperf report's demangling
 * (tools/dkperf/demangle.c, demangle_rust_v0.c): legacy names on what
 * __cxa_demangle gives for rustc's names, v0 names against GNU libiberty's
 * text of real ones (tests/fixtures/rust-v0), both on names that only look
 * like them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "demangle.h"

#if defined(DK_TEST_LIBIBERTY)
#include <libiberty/demangle.h>
#endif

#define HASH "17h0123456789abcdefE"

/* demangle_rust_legacy(mangled, cxx) is want (NULL: refused). */
static void decodes(const char *mangled, const char *cxx, const char *want)
{
    char *got = demangle_rust_legacy(mangled, cxx);
    if (want == NULL) {
        CHECK(got == NULL);
    } else {
        CHECK(got != NULL);
        if (got != NULL)
            CHECK_STR(got, want);
    }
    free(got);
}

TEST_CASE(rust_legacy_names_lose_their_hash_and_escapes)
{
    decodes("_ZN4core3fmt5write" HASH, "core::fmt::write::h0123456789abcdef", "core::fmt::write");
    decodes("_ZN60_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$3fmt" HASH,
            "_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$::fmt::h0123456789abcdef",
            "<alloc::string::String as core::fmt::Display>::fmt");
    decodes("_ZN1a" HASH,
            "a::_$u7b$$u7b$closure$u7d$$u7d$::$RF$$BP$$SP$$LP$$RP$$C$$u3b1$::h0123456789abcdef",
            "a::{{closure}}::&*@(),\xce\xb1");
}

TEST_CASE(names_that_are_not_rust_legacy_are_refused)
{
    /* C++: no hash. */
    decodes("_ZNK2ns3BoxIdE3sumEi", "ns::Box<double>::sum(int) const", NULL);
    /* A hash in the mangled name that the demangling does not end in. */
    decodes("_ZN1a" HASH, "a::b", NULL);
    /* Not 16 lower-case hex digits. */
    decodes("_ZN1a17h0123456789ABCDEFE", "a::h0123456789ABCDEF", NULL);
    decodes("_ZN1a" HASH, "h0123456789abcdef", NULL);
}

TEST_CASE(escapes_rustc_does_not_write_are_refused)
{
    decodes("_ZN1a" HASH, "a::$XX$::h0123456789abcdef", NULL);
    decodes("_ZN1a" HASH, "a::$u$::h0123456789abcdef", NULL);
    decodes("_ZN1a" HASH, "a::$ud800$::h0123456789abcdef", NULL);
    decodes("_ZN1a" HASH, "a::$u110000$::h0123456789abcdef", NULL);
    decodes("_ZN1a" HASH, "a::$u0$::h0123456789abcdef", NULL);
    /* An escape left open: its '$' is the last before the hash. */
    decodes("_ZN1a" HASH, "a::$LT::h0123456789abcdef", NULL);
}

TEST_CASE(what_looks_mangled)
{
    CHECK(demangle_mangled("_ZN3foo3barEv"));
    CHECK(demangle_mangled("_RNvCs1234_7mycrate3foo"));
    CHECK(!demangle_mangled("main"));
    CHECK(!demangle_mangled("_start"));
    CHECK(!demangle_mangled("_"));
    CHECK(!demangle_mangled(""));
}

/* demangle_rust_v0(mangled) is want (NULL: refused). */
static void v0_is(const char *mangled, const char *want)
{
    char *got = demangle_rust_v0(mangled);
    if (want == NULL) {
        if (got != NULL)
            DKT_FAIL("%s read as %s", mangled, got);
    } else if (got == NULL) {
        DKT_FAIL("%s refused, want %s", mangled, want);
    } else {
        CHECK_STR(got, want);
    }
    free(got);
}

TEST_CASE(rust_v0_names_read_as_libiberty_reads_them)
{
    /* Real names of rustc 1.95 (gen.sh), with libiberty's text of each. */
    FILE *f = fopen(DK_RUST_V0_NAMES, "r");
    CHECK(f != NULL);
    if (f == NULL)
        return;
    static char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        char *tab = strchr(line, '\t');
        CHECK(tab != NULL);
        if (tab == NULL)
            break;
        *tab = '\0';
        v0_is(line, tab + 1);
#if defined(DK_TEST_LIBIBERTY)
        /* The fixture is libiberty's text, as this libiberty writes it. */
        char *lib = cplus_demangle(line, DMGL_PARAMS | DMGL_ANSI | DMGL_RUST);
        CHECK(lib != NULL);
        if (lib != NULL)
            CHECK_STR(lib, tab + 1);
        free(lib);
#endif
        n++;
    }
    fclose(f);
    CHECK_INT(n, >=, 150);
}

TEST_CASE(rust_v0_names_by_feature)
{
    v0_is("_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar");
    /* A ".llvm." suffix and the instantiating crate are dropped. */
    v0_is("_RNvC1a1f.llvm.123", "a::f");
    v0_is("_RINvC1a1fhEC1b", "a::f::<u8>");
    /* Closures, shims, impls, trait impls, a backref, the '_' separator. */
    v0_is("_RNCNvC1a4main0_", "a::main::{closure#0}");
    v0_is("_RNSNvC1a1f6vtable", "a::f::{shim:vtable#0}");
    v0_is("_RNvMs_C1aNtB4_1S3new", "<a::S>::new");
    v0_is("_RNvXC1aNtB2_1SNtB2_1T1f", "<a::S as a::T>::f");
    v0_is("_RNvC1a4__foo", "a::_foo");
    /* Types: references, pointers, arrays, slices, tuples, fn, dyn. */
    v0_is("_RINvC1a1fRL_hQOPcAtj3_SeuThETaxEE",
          "a::f::<&u8, &mut *mut *const char, [u16; 3], [str], (), (u8,), (i8, i64)>");
    v0_is("_RINvC1a1fFG_KCRL0_hEuFUK6systemEzDG_NtC1a1TEL_E",
          "a::f::<for<'a> extern \"C\" fn(&'a u8), unsafe extern \"system\" fn() -> !, "
          "dyn for<'a> a::T>");
    v0_is("_RINvC1a1fDINtC1a1ThEp4ItemmEL_E", "a::f::<dyn a::T<u8, Item = u32>>");
    /* Constants: libiberty's decimal, its '\u{7e}' and unescaped quote. */
    v0_is("_RINvC1a1fKanff_Kb1_Kc27_Kc7e_KpE", "a::f::<-255, true, ''', '\\u{7e}', _>");
    /* Past 64 bits, every hex digit (libiberty 20230104 drops the first
     * and writes the '_' instead). */
    v0_is("_RINvC1a1fKo10000000000000000_E", "a::f::<0x10000000000000000>");
    /* Punycode: m::größe::maß as rustc wrote it. */
    v0_is("_RNvNtC1mu9gre_6ka8iu6ma_hia", "m::gr\xc3\xb6\xc3\x9f"
                                          "e::ma\xc3\x9f");
}

TEST_CASE(rust_v0_malformed_names_are_refused)
{
    static const char *const bad[] = {
        "_R", "_Rv", "_RNv", "_RC", "_RC5ab", "_RNvC1a", "_RNvC1a1f$", "_RNvC1a1f\x80",
        "_RC1a_",                                      /* trailing bytes that are no path */
        "_RB_", "_RNvB0_1f", "_RNvB1_1f", "_RNvB2_1f", /* backrefs to themselves or on */
        /* Two libiberty writes anyway: '_18446744073709551614 and a::f. */
        "_RINvC1a1fRL1_hE", /* a lifetime no binder bound */
        "_RINvC1a1fKb2_E", "_RINvC1a1fKb_E", "_RINvC1a1fKh_E", "_RINvC1a1fKcg_E",
        "_RINvC1a1fKc123456789_E", "_RINvC1a1fKfff_E",                        /* bad constants */
        "_RNvC1au3ab_", "_RNvC1au4a_A9", "_RNvC1au2_a",                       /* bad punycode */
        "_RNvC1a99999999999999999999999f", "_RNvCsZZZZZZZZZZZZZZZZZZZZ_1a1f", /* past 64 bits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        v0_is(bad[i], NULL);
}

/* x as a v0 <base-62-number> into p; its length. */
static size_t base62(char *p, size_t x)
{
    static const char d[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char t[16];
    size_t k = 0, n = 0;
    if (x > 0)
        for (x--;; x /= 62) {
            t[k++] = d[x % 62];
            if (x < 62)
                break;
        }
    while (k > 0)
        p[n++] = t[--k];
    p[n++] = '_';
    return n;
}

/* a::f::<T0, ..., Tk>, T0 = (u8, u8) and each next one the tuple of two
 * of the one before, by backrefs: 2^k bytes of output from O(k) bytes. */
static char *backref_bomb(int levels)
{
    char *s = malloc(64 + (size_t)levels * 40);
    if (s == NULL)
        abort();
    strcpy(s, "_RINvC1a1fThhE");
    size_t n = strlen(s), prev = 10 - 2; /* positions count from after "_R" */
    for (int i = 0; i < levels; i++) {
        size_t at = n - 2;
        s[n++] = 'T';
        s[n++] = 'B';
        n += base62(s + n, prev);
        s[n++] = 'B';
        n += base62(s + n, prev);
        s[n++] = 'E';
        prev = at;
    }
    s[n++] = 'E';
    s[n] = '\0';
    return s;
}

TEST_CASE(rust_v0_backrefs_stay_bounded)
{
    char *s = backref_bomb(2);
    v0_is(s,
          "a::f::<(u8, u8), ((u8, u8), (u8, u8)), (((u8, u8), (u8, u8)), ((u8, u8), (u8, u8)))>");
    free(s);
    /* 60 levels would write 2^60 bytes: refused at the output cap. */
    s = backref_bomb(60);
    v0_is(s, NULL);
    free(s);
    /* A binder of 2^62 lifetimes where nothing is written (the
     * instantiating crate): refused, not counted through. */
    v0_is("_RNvC1a1fINvC1b1gFGzzzzzzzzzz_EuE", NULL);
    /* Nesting past the depth cap: &&&...u8. */
    char deep[4096] = "_RINvC1a1f";
    size_t n = strlen(deep);
    memset(deep + n, 'R', 2000);
    strcpy(deep + n + 2000, "hE");
    v0_is(deep, NULL);
    /* Under the cap it is read. */
    strcpy(deep + n + 100, "hE");
    char *got = demangle_rust_v0(deep);
    CHECK(got != NULL);
    if (got != NULL)
        CHECK_INT((int)strlen(got), ==, (int)strlen("a::f::<u8>") + 100);
    free(got);
}

TEST_MAIN()
