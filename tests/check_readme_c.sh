#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The C example of README.md ("From C:") as a reader copies it: its lines
# (the #include lines at the top, the rest as main's body, after a work()
# to measure) compile with -Wall -Werror against dkperf.h and run. On the
# simulated frameworks (root: the three counts; without root: the error,
# which names the event and root) and the machine's own backend (counts,
# or an error line). Nothing is left acquired (DKPERF_SIM_STATE).
# With CXX, the google benchmark example too (the ```cpp block after
# "### Counters in a google benchmark suite"), registered as a suite would,
# compiles with -Wall -Wextra -Wpedantic -Werror as C++11 (GBENCH_INCLUDE:
# google benchmark's include directories, ;-separated, may be empty).
#   check_readme_c.sh CC README INCLUDE_DIR LIB_DIR SIM_ROOT [CXX GBENCH_INCLUDE]
set -u
cc=$1 readme=$2 inc=$3 lib=$4 root=$5 cxx=${6:-} gbinc=${7:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The first ```c block after the line "From C:".
awk '/^From C:/ { want = 1 } want && /^```c/ { inside = 1; next } inside && /^```/ { exit } inside' \
    "$readme" >"$work/snippet.c"
[ -s "$work/snippet.c" ] || fail "no \`\`\`c block after \"From C:\" in $readme"
{
    grep '^#include' "$work/snippet.c"
    echo 'static volatile unsigned long sink;'
    echo 'static void work(void) { for (unsigned long i = 0; i < 1000000; i++) sink += i; }'
    echo 'int main(void) {'
    grep -v '^#include' "$work/snippet.c"
    echo 'for (int i = 0; i < 3; i++) printf("%s %llu\n", events[i], (unsigned long long)(after[i] - before[i]));'
    echo 'return 0; }'
} >"$work/example.c"
"$cc" -std=c11 -Wall -Wextra -Werror -I"$inc" "$work/example.c" -L"$lib" -ldkperf \
    -Wl,-rpath,"$lib" -o "$work/example" 2>"$work/cc.err" ||
    fail "the README's C example does not compile: $(cat "$work/cc.err")"

state=$work/state
DKPERF_FRAMEWORK_ROOT=$root DKPERF_SIM_STATE=$state "$work/example" >"$work/out" 2>&1 ||
    fail "the README's C example failed on the simulated frameworks: $(cat "$work/out")"
for ev in instructions cycles branch-misses; do
    grep -Eq "^$ev [1-9][0-9]*$" "$work/out" || fail "no count of $ev: $(cat "$work/out")"
done
grep -qx 'force_all_ctrs 0' "$state" || fail "counters left forced: $(cat "$state")"
grep -qx 'counting 0x0' "$state" || fail "counting left on: $(cat "$state")"

DKPERF_FRAMEWORK_ROOT=$root DKPERF_SIM_STATE=$state DKPERF_SIM_PRIVILEGED=0 "$work/example" \
    >"$work/out" 2>&1 && fail "without root the example counted branch-misses: $(cat "$work/out")"
grep -q 'BRANCH_MISPRED_NONSPEC.*root' "$work/out" ||
    fail "without root the error does not name the event and root: $(cat "$work/out")"

# This machine's backend: counts, or one error line saying why not. Where
# the hardware counters are missing (most VMs) it says so once and counts
# software events instead of giving up.
DKPERF_FRAMEWORK_ROOT= "$work/example" >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'no hardware PMU' "$work/err"; then
    [ "$(wc -l <"$work/err")" -eq 1 ] || fail "more than the one reason on stderr: $(cat "$work/err")"
    grep -q 'counting software events instead' "$work/err" || fail "no hint: $(cat "$work/err")"
    grep -Eq '^task-clock [1-9][0-9]*$' "$work/out" || fail "no task-clock count: $(cat "$work/out")"
elif [ $rc -eq 0 ]; then
    grep -Eq '^instructions [0-9]+$' "$work/out" || fail "no counts: $(cat "$work/out")"
else
    grep -q 'no hardware PMU' "$work/err" &&
        fail "gave up without hardware counters, where software events count: $(cat "$work/err")"
    [ $rc -eq 1 ] && [ -s "$work/err" ] || fail "exit $rc without an error line: $(cat "$work/err")"
fi
# The example at the top of dkperf.h (the comment's indented lines), with
# stdio.h and a work(): it compiles, and on failure returns before it uses
# the handles (so no count is printed from an unset handle).
awk 'NR > 1 && /^ \*\/$/ { exit } /^ \*     / { print substr($0, 8) }' "$inc/dkperf.h" >"$work/header.c"
[ -s "$work/header.c" ] || fail "no example in the comment at the top of dkperf.h"
{
    echo '#include <dkperf.h>'
    echo '#include <stdio.h>'
    echo 'static volatile unsigned long sink;'
    echo 'static void work(void) { for (unsigned long i = 0; i < 1000000; i++) sink += i; }'
    echo 'int main(void) {'
    cat "$work/header.c"
    echo 'printf("%llu %llu\n", (unsigned long long)(after[0] - before[0]), (unsigned long long)(after[1] - before[1]));'
    echo 'return 0; }'
} >"$work/hexample.c"
"$cc" -std=c11 -Wall -Wextra -Werror -I"$inc" "$work/hexample.c" -L"$lib" -ldkperf \
    -Wl,-rpath,"$lib" -o "$work/hexample" 2>"$work/cc.err" ||
    fail "the example of dkperf.h does not compile: $(cat "$work/cc.err")"
DKPERF_FRAMEWORK_ROOT=$root "$work/hexample" >"$work/out" 2>&1 ||
    fail "the example of dkperf.h failed on the simulated frameworks: $(cat "$work/out")"
grep -Eq '^[1-9][0-9]* [1-9][0-9]*$' "$work/out" || fail "dkperf.h example: no counts: $(cat "$work/out")"
DKPERF_FRAMEWORK_ROOT=$root DKPERF_BACKEND=kperf DKPERF_SIM_PRIVILEGED=0 "$work/hexample" >"$work/out" 2>&1
rc=$?
grep -Eq '^[0-9]+ [0-9]+$' "$work/out" &&
    fail "dkperf.h example printed counts after an error: $(cat "$work/out")"
[ $rc -ne 0 ] || fail "dkperf.h example: exit 0 after an error: $(cat "$work/out")"

if [ -n "$cxx" ]; then
    awk '/^### Counters in a google benchmark suite/ { want = 1 }
         want && /^```cpp/ { inside = 1; next } inside && /^```/ { exit } inside' \
        "$readme" >"$work/snippet.cpp"
    [ -s "$work/snippet.cpp" ] || fail "no \`\`\`cpp block in the google benchmark section of $readme"
    {
        cat "$work/snippet.cpp"
        echo 'BENCHMARK(BM_sum)->Arg(1024);'
        echo 'BENCHMARK_MAIN();'
    } >"$work/gbench.cpp"
    gbflags=()
    IFS=';' read -r -a gbdirs <<<"$gbinc"
    for d in "${gbdirs[@]}"; do [ -n "$d" ] && gbflags+=("-I$d"); done
    "$cxx" -std=c++11 -Wall -Wextra -Wpedantic -Werror -I"$inc" "${gbflags[@]}" -c \
        "$work/gbench.cpp" -o "$work/gbench.o" 2>"$work/cxx.err" ||
        fail "the README's google benchmark example does not compile: $(cat "$work/cxx.err")"
fi

echo "README C example: compiles, counts on the simulated frameworks, fails with the reason without root"
