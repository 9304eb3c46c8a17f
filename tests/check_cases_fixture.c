/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * check_cases_fixture.c - a test binary whose cases CMake's scan does not
 * all find: one at the start of a line, one indented, one made by a macro.
 * Only tests.case_check_finds_unregistered_cases runs it, through
 * check_cases.cmake, which must fail naming the two that would never run.
 */
#include "check.h"

TEST_CASE(found_by_the_scan) {}

/* clang-format off */
  TEST_CASE(indented_case) {} /* indented on purpose: the check must find it */
/* clang-format on */

#define MADE_CASE(name) TEST_CASE(name)
MADE_CASE(macro_made_case) {}

TEST_MAIN()
