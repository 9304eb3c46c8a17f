# SPDX-License-Identifier: MIT OR Apache-2.0
# Regenerate the event tables into WORK from the data the generator reads by
# default (DATA, the repository's data/) and compare them with the committed
# files under SRC, byte for byte.
if(NOT EXISTS "${DATA}/apple-events.tsv")
  message(FATAL_ERROR "no kpep data at ${DATA}: the repository's data/ is incomplete")
endif()
if(NOT PYTHON)
  message("SKIPPED: no Python interpreter")
  return()
endif()
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${PYTHON} ${SRC}/tools/gen_events.py --out ${WORK}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tools/gen_events.py failed")
endif()
file(GLOB_RECURSE generated RELATIVE ${WORK} ${WORK}/*)
list(LENGTH generated n)
if(n LESS 8)
  message(FATAL_ERROR "the generator wrote only ${n} files")
endif()
foreach(f ${generated})
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/${f} ${SRC}/${f}
                  RESULT_VARIABLE diff)
  if(NOT diff EQUAL 0)
    message(FATAL_ERROR "${f} differs from what tools/gen_events.py makes of ${DATA}")
  endif()
endforeach()
message(STATUS "${n} generated files match the data")
