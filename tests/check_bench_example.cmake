# SPDX-License-Identifier: MIT OR Apache-2.0
# Run examples/bench_example as a user would: list, save a baseline,
# compare with it, and refuse a bad option and a missing baseline.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
function(run_example)
  execute_process(COMMAND ${EXE} ${ARGN} WORKING_DIRECTORY ${WORK}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(rc ${rc} PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
  message(STATUS "${EXE} ${ARGN}: ${rc}\n${out}${err}")
endfunction()

run_example(--list)
if(NOT rc EQUAL 0 OR NOT out STREQUAL "sum/forward\nsum/strided\n")
  message(FATAL_ERROR "--list printed '${out}'")
endif()

run_example(--time 0.05 --save-baseline before)
if(NOT rc EQUAL 0 OR NOT out MATCHES "sum/forward" OR NOT out MATCHES "sum/strided")
  message(FATAL_ERROR "the first run failed")
endif()
# Events this machine lacks are named once per run, not per benchmark.
string(REGEX MATCHALL "not measured here" said "${err}")
list(LENGTH said n)
if(n GREATER 1)
  message(FATAL_ERROR "the unavailable events were reported ${n} times")
endif()
file(GLOB saved ${WORK}/dkbench-results/before*)
if(NOT saved)
  message(FATAL_ERROR "no baseline saved under ${WORK}/dkbench-results")
endif()

run_example(--time 0.05 --baseline before sum/forward)
if(NOT rc EQUAL 0 OR NOT out MATCHES "sum/forward" OR out MATCHES "sum/strided")
  message(FATAL_ERROR "the comparison run failed or ignored the filter")
endif()

# google benchmark's JSON names the machine as google benchmark does.
run_example(--time 0.05 --gbench-json gb.json sum/forward)
file(READ ${WORK}/gb.json gb)
string(JSON exe GET "${gb}" context executable)
string(JSON ncpu GET "${gb}" context num_cpus)
string(JSON cpu GET "${gb}" context dkbench_cpu)
string(JSON nload LENGTH "${gb}" context load_avg)
string(JSON ncache LENGTH "${gb}" context caches)
string(JSON date GET "${gb}" context date)
if(NOT rc EQUAL 0 OR exe STREQUAL "" OR NOT ncpu GREATER 0 OR cpu STREQUAL "" OR cpu STREQUAL "linux"
   OR NOT nload GREATER 0 OR NOT date MATCHES "^[0-9-]+T[0-9:]+[-+][0-9][0-9]:[0-9][0-9]$")
  message(FATAL_ERROR "the google benchmark context is not filled: ${gb}")
endif()

run_example(--time 0.05 --baseline nosuch)
if(NOT rc EQUAL 1 OR NOT err MATCHES "nosuch")
  message(FATAL_ERROR "a missing baseline must fail naming it")
endif()

run_example(--time abc)
string(REGEX MATCHALL "\n" lines "${err}")
list(LENGTH lines nl)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--time 'abc'" OR NOT nl EQUAL 1)
  message(FATAL_ERROR "a bad option must give exit 2 and one line, got ${rc}: ${err}")
endif()
run_example(--frobnicate)
if(NOT rc EQUAL 2 OR NOT err MATCHES "unknown option '--frobnicate'")
  message(FATAL_ERROR "an unknown option must give exit 2")
endif()

# Where the results go is checked before any benchmark runs: one line
# naming the path and why, exit 2 for a bad name, 1 for a path that cannot
# be written, and nothing measured.
file(WRITE ${WORK}/afile "")
foreach(case "--html;nodir/x.html;1;nodir/x.html: cannot write the HTML report"
             "--json;.;1;--json .: cannot write the JSON report there: Is a directory"
             "--csv;afile/x.csv;1;afile/x.csv: cannot write the CSV report"
             "--markdown;nodir/x.md;1;nodir/x.md: cannot write"
             "--gbench-json;nodir/x.json;1;nodir/x.json: cannot write"
             "--save-baseline;a/b;2;baseline name \"a/b\""
             "--results-dir=afile/sub;--save-baseline=x;1;directory afile/sub: cannot create it")
  list(GET case 0 opt)
  list(GET case 1 val)
  list(GET case 2 want)
  list(GET case 3 said)
  run_example(--time 0.05 ${opt} ${val})
  string(REGEX MATCHALL "\n" lines "${err}")
  list(LENGTH lines nl)
  string(FIND "${err}" "${said}" at)
  if(NOT rc EQUAL want OR at EQUAL -1 OR NOT nl EQUAL 1 OR out MATCHES "sum/")
    message(FATAL_ERROR "${opt} ${val} must be refused before running, exit ${want} and one "
                        "line saying '${said}'; got ${rc}: ${err}${out}")
  endif()
endforeach()
if(EXISTS ${WORK}/nodir OR EXISTS ${WORK}/afile/sub)
  message(FATAL_ERROR "a refused path was created")
endif()

# Two reasons: one line each, naming all of its events (the simulated
# Haswell has neither an M4-only event nor a counterpart of l1d-load-misses).
set(ENV{DKPERF_FRAMEWORK_ROOT} ${SIM_ROOT})
set(ENV{DKPERF_SIM_CPU} haswell)
run_example(--samples 5 -e cycles,INST_BRANCH_COND,ARM_STALL,l1d-load-misses sum/forward)
string(REGEX MATCHALL "not measured here" said "${err}")
list(LENGTH said n)
if(NOT rc EQUAL 0 OR NOT n EQUAL 2
   OR NOT err MATCHES "not measured here: INST_BRANCH_COND, ARM_STALL: not available on haswell"
   OR NOT err MATCHES "not measured here: l1d-load-misses: has no counterpart")
  message(FATAL_ERROR "two reasons must give one line each, naming their events: ${err}")
endif()

# A tracing owner killed with SIGKILL left kperf sampling and the trace
# buffer set up (the simulated machine's state file names it, and it is
# gone): the run resets them, and says so once.
execute_process(COMMAND sh -c "echo $$" OUTPUT_VARIABLE gone OUTPUT_STRIP_TRAILING_WHITESPACE)
file(WRITE ${WORK}/state "ktrace.owning_pid ${gone}\nktrace.active_mask 3\nkperf.sampling 1\n"
     "kperf.action.count 1\nkperf.action.1.samplers 0x9\nkdebug.nkdbufs 262144\n"
     "kdebug.bufinit 1\nkdebug.enabled 1\n")
set(ENV{DKPERF_FRAMEWORK_ROOT} ${SIM_ROOT})
set(ENV{DKPERF_SIM_STATE} ${WORK}/state)
run_example(--time 0.05 sum/forward)
string(REGEX MATCHALL "note: reset kperf sampling[^\n]*process ${gone}, which no longer exists"
       said "${err}")
list(LENGTH said n)
if(NOT rc EQUAL 0 OR NOT n EQUAL 1)
  message(FATAL_ERROR "a run after a killed tracing owner must reset what it left and say so "
                      "once (said ${n} times, exit ${rc})")
endif()
file(STRINGS ${WORK}/state sampling REGEX "^kperf.sampling ")
if(NOT sampling STREQUAL "kperf.sampling 0")
  message(FATAL_ERROR "the run left '${sampling}' behind")
endif()
