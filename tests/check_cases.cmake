# SPDX-License-Identifier: MIT OR Apache-2.0
# Every compiled test case is registered with ctest, and every registered
# case is compiled: compares each test binary's `--list` (check.h's
# registry) with the cases dk_test found by scanning for TEST_CASE( lines.
#
#   cmake -DMANIFEST=<file> -P check_cases.cmake
#     MANIFEST: one line per binary, "<path>|<case> <case> ..."
#   cmake -DMANIFEST=<file> -DEXPECT_MISSING="<case>;..." -P check_cases.cmake
#     succeeds only when the check fails, naming exactly those cases as
#     never run (the check's own test, on a fixture binary).
cmake_minimum_required(VERSION 3.20)
if(NOT MANIFEST)
  message(FATAL_ERROR "check_cases.cmake: -DMANIFEST=<file> is required")
endif()

if(DEFINED EXPECT_MISSING)
  execute_process(COMMAND ${CMAKE_COMMAND} -DMANIFEST=${MANIFEST} -P ${CMAKE_CURRENT_LIST_FILE}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(rc EQUAL 0)
    message(FATAL_ERROR "the check passed, but ${EXPECT_MISSING} are never run")
  endif()
  string(REGEX MATCHALL "case ([A-Za-z0-9_]+) is compiled but never registered" hits "${out}")
  set(named "")
  foreach(h ${hits})
    string(REGEX REPLACE "case ([A-Za-z0-9_]+) is.*" "\\1" c "${h}")
    list(APPEND named ${c})
  endforeach()
  list(SORT named)
  set(want ${EXPECT_MISSING})
  list(SORT want)
  if(NOT named STREQUAL want)
    message(FATAL_ERROR "the check named [${named}] as never run, expected [${want}]")
  endif()
  message("the check failed as it must, naming: ${named}")
  return()
endif()

file(STRINGS ${MANIFEST} entries)
set(errors "")
set(nbinaries 0)
foreach(entry ${entries})
  string(REGEX MATCH "^([^|]+)\\|(.*)$" _ "${entry}")
  set(bin ${CMAKE_MATCH_1})
  string(REPLACE " " ";" registered "${CMAKE_MATCH_2}")
  get_filename_component(short ${bin} NAME)
  math(EXPR nbinaries "${nbinaries} + 1")
  execute_process(COMMAND ${bin} --list RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(APPEND errors "\n  ${short} --list failed (${rc}): ${err}")
    continue()
  endif()
  string(STRIP "${out}" out)
  string(REPLACE "\n" ";" listed "${out}")
  foreach(c ${listed})
    if(NOT c IN_LIST registered)
      string(APPEND errors "\n  ${short}: case ${c} is compiled but never registered with "
             "ctest, so it never runs: tests/CMakeLists.txt registers only lines that start "
             "with TEST_CASE(; write it as TEST_CASE(${c}) at the start of a line")
    endif()
  endforeach()
  foreach(c ${registered})
    if(NOT c IN_LIST listed)
      string(APPEND errors "\n  ${short}: case ${c} is registered with ctest but not compiled "
             "in (inside #if 0, a comment or a string?)")
    endif()
  endforeach()
endforeach()
if(nbinaries EQUAL 0)
  message(FATAL_ERROR "check_cases.cmake: ${MANIFEST} lists no test binary")
endif()
if(errors)
  message(FATAL_ERROR "test cases differ from those registered:${errors}")
endif()
message("${nbinaries} test binaries: every compiled case is registered")
