/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * test_demangle.c - the Rust legacy decoder of dkperf report's demangling
 * (tools/dkperf/demangle.c), on what __cxa_demangle gives for rustc's
 * names, and on names that only look like them.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "demangle.h"

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

TEST_MAIN()
