/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * check.h - a minimal test harness.
 *
 * A test file defines cases with TEST_CASE(name) { ... } at the start of a
 * line; tests/CMakeLists.txt finds those lines and registers each case as
 * its own ctest test, run as `<binary> <case>`. `<binary> --list` prints
 * the cases compiled in, one a line, and tests/check_cases.cmake fails when
 * they differ from those registered (an indented or macro-made case would
 * otherwise never run). CHECK* macros print the failing expression with
 * its values and exit non-zero. A case may call SKIP("why") to report
 * ctest's skip code 77.
 */
#ifndef DKPERF_TEST_CHECK_H
#define DKPERF_TEST_CHECK_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dkt_case {
    const char *name;
    void (*fn)(void);
    struct dkt_case *next;
} dkt_case;

/* The cases of the whole binary: weak, so that a test whose cases are
 * spread over several files has one list, each file's adding to it. */
__attribute__((weak)) dkt_case *dkt_cases;

#define TEST_CASE(name)                                            \
    static void test_##name(void);                                 \
    __attribute__((constructor)) static void register_##name(void) \
    {                                                              \
        static dkt_case c = {#name, test_##name, NULL};            \
        c.next = dkt_cases;                                        \
        dkt_cases = &c;                                            \
    }                                                              \
    static void test_##name(void)

#define DKT_FAIL(...)                                   \
    do {                                                \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                   \
        fputc('\n', stderr);                            \
        exit(1);                                        \
    } while (0)

#define CHECK(cond)                              \
    do {                                         \
        if (!(cond))                             \
            DKT_FAIL("CHECK failed: %s", #cond); \
    } while (0)

#define CHECK_INT(a, op, b)                                                         \
    do {                                                                            \
        long long a_ = (long long)(a), b_ = (long long)(b);                         \
        if (!(a_ op b_))                                                            \
            DKT_FAIL("CHECK failed: %s %s %s (%lld vs %lld)", #a, #op, #b, a_, b_); \
    } while (0)

#define CHECK_U64(a, op, b)                                                                       \
    do {                                                                                          \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                          \
        if (!(a_ op b_))                                                                          \
            DKT_FAIL("CHECK failed: %s %s %s (%" PRIu64 " vs %" PRIu64 ")", #a, #op, #b, a_, b_); \
    } while (0)

#define CHECK_STR(a, b)                                                                       \
    do {                                                                                      \
        const char *a_ = (a), *b_ = (b);                                                      \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0)                                  \
            DKT_FAIL("CHECK failed: %s == %s (\"%s\" vs \"%s\")", #a, #b, a_ ? a_ : "(null)", \
                     b_ ? b_ : "(null)");                                                     \
    } while (0)

/* |a - b| <= tol, as doubles (a test that uses it links libm). */
#define CHECK_NEAR(a, b, tol)                                                                  \
    do {                                                                                       \
        double a__ = (a), b__ = (b), t__ = (tol);                                              \
        if (!(fabs(a__ - b__) <= t__))                                                         \
            DKT_FAIL("CHECK failed: %s ~ %s (%.17g vs %.17g, tolerance %g)", #a, #b, a__, b__, \
                     t__);                                                                     \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                             \
    do {                                                                        \
        const char *h_ = (hay), *n_ = (needle);                                 \
        if (h_ == NULL || strstr(h_, n_) == NULL)                               \
            DKT_FAIL("CHECK failed: %s contains \"%s\" (got \"%s\")", #hay, n_, \
                     h_ ? h_ : "(null)");                                       \
    } while (0)

#define SKIP(...)                     \
    do {                              \
        fprintf(stderr, "skipped: "); \
        fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr);          \
        exit(77);                     \
    } while (0)

/* Fail unless no byte of s would drive a terminal: no control byte but
 * the newlines (and tabs, when tabs_ok) of a layout, no C1 control, none of
 * the malformed UTF-8 lead bytes hostile inputs use (0xff, 0xc0, a
 * surrogate's 0xed 0xa0..). Checked byte by byte, not with the code under
 * test. */
#define CHECK_NO_RAW_CONTROLS(s, tabs_ok) dkt_no_raw_controls((s), (tabs_ok), __FILE__, __LINE__)
static inline void dkt_no_raw_controls(const char *s, int tabs_ok, const char *file, int line)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        int bad =
            (*p < 0x20 && *p != '\n' && !(tabs_ok && *p == '\t')) || *p == 0x7f || *p == 0xff ||
            *p == 0xc0 || (*p == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0) ||
            (*p == 0xed && p[1] >= 0xa0) ||
            /* bidi controls, line and paragraph separators (U+202A..E, U+2066..9, U+2028/9) */
            (*p == 0xe2 && ((p[1] == 0x80 && p[2] >= 0xa8 && p[2] <= 0xae) ||
                            (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)));
        if (bad) {
            fprintf(stderr, "%s:%d: raw byte 0x%02x at %td of: %s\n", file, line, *p,
                    (const char *)p - s, s);
            exit(1);
        }
    }
}

/* The cases in the order they were defined (each constructor prepends). */
/* The folder for a test's temporary files: $TMPDIR, else /tmp. ctest sets
 * TMPDIR to a folder of the build tree that must be empty after the run
 * (tmpdir.left_empty), so a file a test leaves behind is seen. */
static inline const char *dkt_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t != NULL && *t != '\0' ? t : "/tmp";
}

static inline void dkt_list(const dkt_case *c)
{
    if (c == NULL)
        return;
    dkt_list(c->next);
    printf("%s\n", c->name);
}

/* Run the case named argv[1], or every case when none is named; --list
 * prints their names. */
static inline int dkt_main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--list") == 0) {
        dkt_list(dkt_cases);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
    }
    int ran = 0;
    for (dkt_case *c = dkt_cases; c != NULL; c = c->next) {
        if (argc > 1 && strcmp(argv[1], c->name) != 0)
            continue;
        fprintf(stderr, "== %s\n", c->name);
        c->fn();
        ran++;
    }
    if (ran == 0) {
        fprintf(stderr, "no test case named %s\n", argc > 1 ? argv[1] : "(any)");
        return 2;
    }
    return 0;
}

#define TEST_MAIN() \
    int main(int argc, char **argv) { return dkt_main(argc, argv); }

#endif /* DKPERF_TEST_CHECK_H */
