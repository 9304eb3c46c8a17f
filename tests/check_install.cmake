# SPDX-License-Identifier: MIT OR Apache-2.0
# Install the build into WORK/prefix, then build a consumer against it with
# find_package(dkperf) and with pkg-config, and run both.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed")
endif()
foreach(f include/dkperf/kperf.h include/dkperf/error.h include/dkperf/events.h
          include/dkperf/sampling.h include/dkperf/types.h
          include/dkperf/benchmark.hpp)
  if(NOT EXISTS ${WORK}/prefix/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()
file(GLOB pc ${WORK}/prefix/*/pkgconfig/dkperf.pc)
file(GLOB gb_pc ${WORK}/prefix/*/pkgconfig/dkperf-benchmark.pc)
file(GLOB cfg ${WORK}/prefix/*/cmake/dkperf/dkperfConfig.cmake)
if(NOT pc OR NOT gb_pc OR NOT cfg)
  message(FATAL_ERROR "dkperf.pc, dkperf-benchmark.pc or dkperfConfig.cmake not installed")
endif()
# Nothing of the simulated frameworks may be installed.
file(GLOB_RECURSE all RELATIVE ${WORK}/prefix ${WORK}/prefix/*)
foreach(f ${all})
  if(f MATCHES "sim|kperfdata$|/kperf$")
    message(FATAL_ERROR "test code installed: ${f}")
  endif()
endforeach()

# The installed dkperf finds the installed libdkperf beside it (its rpath).
if(EXISTS ${WORK}/prefix/bin/dkperf)
  execute_process(COMMAND ${WORK}/prefix/bin/dkperf --version RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "libdkperf")
    message(FATAL_ERROR "the installed dkperf does not run (${rc}): ${out}${err}")
  endif()
endif()

# libdkbench is installed once its statistics and reports are built.
file(GLOB dkbench_pc ${WORK}/prefix/*/pkgconfig/dkbench.pc)
if(dkbench_pc)
  set(with_dkbench ON)
  if(NOT EXISTS ${WORK}/prefix/include/dkbench.h)
    message(FATAL_ERROR "dkbench.pc installed without dkbench.h")
  endif()
else()
  set(with_dkbench OFF)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC}/tests/consumer -B ${WORK}/consumer
                        -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_C_COMPILER=${CC}
                        -DWITH_DKBENCH=${with_dkbench} -DWITH_GBENCH=${WITH_GBENCH}
                        -DCMAKE_CXX_COMPILER=${CXX}
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the find_package consumer failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK}/consumer RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the find_package consumer failed")
endif()
foreach(exe consumer_shared consumer_static)
  execute_process(COMMAND ${WORK}/consumer/${exe} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${exe} failed")
  endif()
endforeach()

if(with_dkbench)
  foreach(exe consumer_bench consumer_bench_static)
    execute_process(COMMAND ${WORK}/consumer/${exe} --list RESULT_VARIABLE rc OUTPUT_VARIABLE out)
    if(NOT rc EQUAL 0 OR NOT out STREQUAL "empty\n")
      message(FATAL_ERROR "${exe} --list failed (${rc}): ${out}")
    endif()
  endforeach()
endif()

# dkperf::benchmark: the installed header counts in a google benchmark program.
# gbench_ran OUT: it ran its benchmark and reported task-clock per iteration.
function(gbench_ran exe)
  execute_process(COMMAND ${exe} --benchmark_format=json RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\"BM_consumer/iterations:100\"")
    message(FATAL_ERROR "${exe} failed (${rc}): ${out}${err}")
  endif()
  if(CMAKE_HOST_SYSTEM_NAME STREQUAL "Linux" AND NOT out MATCHES "\"task-clock\": [0-9]")
    message(FATAL_ERROR "${exe} reports no task-clock: ${out}${err}")
  endif()
endfunction()
if(WITH_GBENCH)
  gbench_ran(${WORK}/consumer/consumer_gbench)
endif()

find_program(PKG_CONFIG pkg-config)
if(PKG_CONFIG)
  get_filename_component(pcdir ${pc} DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pcdir})
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs dkperf OUTPUT_VARIABLE flags
                  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config dkperf failed")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  get_filename_component(libdir ${pcdir} DIRECTORY)
  execute_process(COMMAND ${CC} ${SRC}/tests/consumer/consumer.c -o ${WORK}/consumer_pc ${flags}
                          -Wl,-rpath,${libdir}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building with pkg-config flags failed: ${flags}")
  endif()
  execute_process(COMMAND ${WORK}/consumer_pc RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the pkg-config consumer failed")
  endif()
  if(WITH_GBENCH)
    execute_process(COMMAND ${PKG_CONFIG} --cflags --libs dkperf-benchmark OUTPUT_VARIABLE flags
                    RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "pkg-config dkperf-benchmark failed")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    execute_process(COMMAND ${CXX} -std=c++11 ${SRC}/tests/consumer/consumer_gbench.cpp
                            -o ${WORK}/gbench_pc ${flags} -Wl,-rpath,${libdir} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "building with pkg-config dkperf-benchmark flags failed: ${flags}")
    endif()
    gbench_ran(${WORK}/gbench_pc)
  endif()
  if(with_dkbench)
    execute_process(COMMAND ${PKG_CONFIG} --cflags --libs dkbench OUTPUT_VARIABLE flags
                    RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    separate_arguments(flags UNIX_COMMAND "${flags}")
    execute_process(COMMAND ${CC} ${SRC}/tests/consumer/consumer_bench.c -o ${WORK}/bench_pc
                            ${flags} -Wl,-rpath,${libdir} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "building with pkg-config dkbench flags failed: ${flags}")
    endif()
    execute_process(COMMAND ${WORK}/bench_pc --list RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the pkg-config dkbench consumer failed")
    endif()
  endif()
else()
  message(STATUS "pkg-config not found: only find_package was checked")
endif()
