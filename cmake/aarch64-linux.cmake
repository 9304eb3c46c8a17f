# SPDX-License-Identifier: MIT OR Apache-2.0
# Cross-build for 64-bit ARM Linux with Debian's gcc-aarch64-linux-gnu and
# g++-aarch64-linux-gnu. The programs run in the QEMU guest of
# tests/qemu/run.sh, with the target's glibc and C++ runtime copied next to
# them.
#
# google benchmark for arm64 is Debian's multiarch libbenchmark-dev:arm64,
# outside the cross sysroot: its package file is named directly. Its headers
# are in the host's /usr/include, which must come after the cross sysroot's
# (as -isystem it would put the host's C headers first): this file, read
# again as the C++ rules override once the compiler is known, makes
# /usr/include implicit, so the imported target does not add it, and
# -idirafter searches it last.
if(CMAKE_CXX_COMPILER_LOADED)
  list(APPEND CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES /usr/include)
  return() # (the settings below are made already)
endif()
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
if(EXISTS /usr/lib/aarch64-linux-gnu/cmake/benchmark/benchmarkConfig.cmake)
  set(benchmark_DIR /usr/lib/aarch64-linux-gnu/cmake/benchmark CACHE PATH
      "google benchmark for arm64 (Debian: libbenchmark-dev:arm64)")
  set(CMAKE_CXX_FLAGS_INIT "-idirafter /usr/include")
  set(CMAKE_USER_MAKE_RULES_OVERRIDE_CXX "${CMAKE_CURRENT_LIST_FILE}")
endif()
