# SPDX-License-Identifier: MIT OR Apache-2.0
# A build of the project writes compile_commands.json (for clangd and
# clang-tidy) without being asked, listing the library's sources.
if(NOT EXISTS ${BUILD}/compile_commands.json)
  message(FATAL_ERROR "no compile_commands.json in ${BUILD}")
endif()
file(READ ${BUILD}/compile_commands.json text)
if(NOT text MATCHES "src/core/group\\.c")
  message(FATAL_ERROR "${BUILD}/compile_commands.json does not list src/core/group.c")
endif()
