# SPDX-License-Identifier: MIT OR Apache-2.0
# Cross-compile for macOS with Zig's C compiler.
# DKPERF_ZIG_WRAPPERS: directory holding cc, ar and ranlib wrappers that run
# `zig cc -target <triple>` and friends (scripts/cross-build-macos.sh writes them).
set(CMAKE_SYSTEM_NAME Darwin)
# Darwin 19 = macOS 10.15, the oldest target; CMake's Darwin platform file
# reads it (e.g. to enable rpaths).
set(CMAKE_SYSTEM_VERSION 19.0)
set(CMAKE_SYSTEM_PROCESSOR ${DKPERF_ZIG_ARCH})
set(CMAKE_C_COMPILER ${DKPERF_ZIG_WRAPPERS}/cc)
set(CMAKE_AR ${DKPERF_ZIG_WRAPPERS}/ar CACHE FILEPATH "" FORCE)
set(CMAKE_RANLIB ${DKPERF_ZIG_WRAPPERS}/ranlib CACHE FILEPATH "" FORCE)
set(CMAKE_INSTALL_NAME_TOOL /bin/true CACHE FILEPATH "" FORCE)
set(CMAKE_OSX_SYSROOT "" CACHE PATH "" FORCE)
set(CMAKE_OSX_DEPLOYMENT_TARGET "" CACHE STRING "" FORCE)
# Zig ships the macOS headers and libSystem stubs; nothing is searched on the host.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
