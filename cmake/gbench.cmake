# SPDX-License-Identifier: MIT OR Apache-2.0
# google benchmark and a C++ compiler, for the programs that use them:
# sets benchmark_FOUND and the target benchmark::benchmark (its CMake
# package, else its pkg-config file). Neither is required.
include(CheckLanguage)
check_language(CXX)
set(benchmark_FOUND FALSE)
if(CMAKE_CXX_COMPILER)
  enable_language(CXX)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    find_package(PkgConfig QUIET)
    if(PkgConfig_FOUND)
      pkg_check_modules(GBENCH QUIET IMPORTED_TARGET GLOBAL benchmark)
      if(GBENCH_FOUND)
        add_library(benchmark::benchmark ALIAS PkgConfig::GBENCH)
        set(benchmark_FOUND TRUE)
      endif()
    endif()
  endif()
endif()
