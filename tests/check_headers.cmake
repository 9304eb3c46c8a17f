# SPDX-License-Identifier: MIT OR Apache-2.0
# Every public header of libdkperf (dkperf.h, dkperf/*.h) compiles when it
# is the only one included, in C11 and, where there is a C++ compiler, in
# C++11 (but dkperf/kperf.h, raw bindings whose layout checks are C11's
# _Static_assert), warnings as errors; dkperf/sampling.h alone declares the sampling
# API, and including it before or after dkperf.h changes nothing.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(GLOB headers RELATIVE ${INCLUDE} ${INCLUDE}/dkperf/*.h)
list(APPEND headers dkperf.h)
list(FIND headers dkperf/sampling.h at)
if(at LESS 0)
  message(FATAL_ERROR "no dkperf/sampling.h in ${INCLUDE}")
endif()

# compile(NAME TEXT [C_ONLY]): TEXT as a C file and, with CXX, as a C++ file.
function(compile name text)
  file(WRITE ${WORK}/${name}.c "${text}\nint main(void) { return 0; }\n")
  file(WRITE ${WORK}/${name}.cpp "${text}\nint main() { return 0; }\n")
  set(runs "${CC}|-std=c11|${WORK}/${name}.c")
  if(CXX AND NOT ARGV2 STREQUAL "C_ONLY")
    list(APPEND runs "${CXX}|-std=c++11|${WORK}/${name}.cpp")
  endif()
  foreach(run ${runs})
    string(REPLACE "|" ";" run "${run}")
    list(GET run 0 compiler)
    list(GET run 1 std)
    list(GET run 2 src)
    execute_process(COMMAND ${compiler} ${std} -Wall -Wextra -Wpedantic -Werror -I${INCLUDE}
                            -c ${src} -o ${src}.o
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      string(SUBSTRING "${out}${err}" 0 3000 why)
      message(FATAL_ERROR "${name}: ${compiler} ${std} fails on\n${text}\n${why}")
    endif()
  endforeach()
endfunction()

foreach(h ${headers})
  string(MAKE_C_IDENTIFIER ${h} id)
  if(h STREQUAL "dkperf/kperf.h")
    compile(alone_${id} "#include <${h}>\n#include <${h}>\n" C_ONLY)
  else()
    compile(alone_${id} "#include <${h}>\n#include <${h}>\n")
  endif()
endforeach()

# The sampling API, from dkperf/sampling.h alone and from dkperf.h alone,
# and with the two in either order.
set(use "static dk_sampling_options o = DK_SAMPLING_OPTIONS_INIT;
static int (*open_fn)(dk_sampler *, const dk_sampling_event *, size_t,
                      const dk_sampling_options *, dk_sampling **) = dk_sampling_open;
static const unsigned bits = DK_SAMPLE_CALLCHAIN | DK_SAMPLING_OFF_CPU;
static const dk_sample_kind kind = DK_SAMPLE_KIND_EXIT;
int dk_check_use(void);
int dk_check_use(void) { return (int)o.size + (open_fn != 0) + (int)bits + (int)kind; }
")
compile(sampling_alone "#include <dkperf/sampling.h>\n${use}")
compile(sampling_via_dkperf "#include <dkperf.h>\n${use}")
compile(sampling_first "#include <dkperf/sampling.h>\n#include <dkperf.h>\n${use}")
compile(sampling_last "#include <dkperf.h>\n#include <dkperf/sampling.h>\n${use}")
message(STATUS "${headers}: each compiles alone")
