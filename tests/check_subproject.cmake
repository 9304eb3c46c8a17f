# SPDX-License-Identifier: MIT OR Apache-2.0
# Configure a small outer project in WORK that add_subdirectory()s the tree
# at SRC, as a parent project (or FetchContent) does, and build one program
# of it against dkperf::dkperf_static. The parent's build must not inherit
# the project's own habits: DKPERF_WERROR defaults to OFF there, so no
# -Werror is added, while the project's own builds keep it ON.
file(REMOVE_RECURSE ${WORK})
file(WRITE ${WORK}/outer/CMakeLists.txt "\
cmake_minimum_required(VERSION 3.20)
project(outer LANGUAGES C)
add_subdirectory(\"${SRC}\" dkperf)
if(DKPERF_WERROR)
  message(FATAL_ERROR \"DKPERF_WERROR is ON in a project that add_subdirectory()s dkperf\")
endif()
get_directory_property(opts DIRECTORY \"${SRC}\" COMPILE_OPTIONS)
if(\"-Werror\" IN_LIST opts)
  message(FATAL_ERROR \"dkperf adds -Werror to a parent project's build: \${opts}\")
endif()
add_executable(outer \"${SRC}/tests/consumer/consumer.c\")
target_link_libraries(outer PRIVATE dkperf::dkperf_static)
")
# dkperf::benchmark, the C++ header's target, where google benchmark is found.
if(WITH_GBENCH)
  file(APPEND ${WORK}/outer/CMakeLists.txt "\
enable_language(CXX)
find_package(benchmark REQUIRED)
add_executable(outer_gbench \"${SRC}/tests/consumer/consumer_gbench.cpp\")
target_link_libraries(outer_gbench PRIVATE dkperf::benchmark benchmark::benchmark)
")
endif()
set(args -S ${WORK}/outer -B ${WORK}/build -G ${GENERATOR} -DCMAKE_C_COMPILER=${CC}
         -DCMAKE_CXX_COMPILER=${CXX})
if(LAUNCHER)
  list(APPEND args -DCMAKE_C_COMPILER_LAUNCHER=${LAUNCHER} -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring a project that add_subdirectory()s dkperf failed:\n${out}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build --target outer
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building dkperf as a subproject failed:\n${out}")
endif()
execute_process(COMMAND ${WORK}/build/outer RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the program built with dkperf as a subproject failed (${rc})")
endif()
if(WITH_GBENCH)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/build --target outer_gbench
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building against dkperf::benchmark as a subproject failed:\n${out}")
  endif()
  execute_process(COMMAND ${WORK}/build/outer_gbench RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "BM_consumer")
    message(FATAL_ERROR "the google benchmark program of the subproject failed (${rc}):\n${out}")
  endif()
endif()
file(REMOVE_RECURSE ${WORK})
message(STATUS "dkperf builds as a subproject, without -Werror")
