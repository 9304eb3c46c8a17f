#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Run one golden case of dkperf and compare its output with the expected file.
#   run.sh DKPERF GOLDEN_DIR NAME BUILD_DIR [VAR=value...] -- 'ARGS'
# ARGS is one string, split as a shell would (quotes allowed).
# The expected file GOLDEN_DIR/NAME.txt holds stdout, stderr and the exit
# status, with what varies from run to run masked. DKPERF_UPDATE_GOLDEN=1
# rewrites it instead of comparing.
set -u
dkperf=$1 dir=$2 name=$3 build=$4
shift 4
envs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
shift
eval "set -- $1"
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
env "${envs[@]}" "$dkperf" "$@" >"$out" 2>"$err"
status=$?

mask() {
    local stat=$1
    sed -E -e "s|$build|<build>|g" \
           -e 's/(process|pid) [0-9]+/\1 <pid>/g' \
           -e 's/^(os +).*/\1<os>/' \
           -e 's/"(sysname|release|machine)": "[^"]*"/"\1": "<os>"/g' \
           -e 's/\(unknown, [^)]*\)/(unknown, <cpu>)/' |
    if [ "$stat" = 1 ]; then
        # Counts, times and rates vary; their layout does not.
        sed -E -e 's/(^|[^A-Za-z0-9_.-])[0-9][0-9,]*(\.[0-9]+)?/\1N/g' -e 's#(N )?[KMG]?/sec#<rate>#g' \
               -e 's/ +$//' -e 's/ +/ /g'
    else
        cat
    fi
}
is_stat=0
for a in "$@"; do { [ "$a" = stat ] || [ "$a" = bench ]; } && is_stat=1; break; done
is_bench=0
for a in "$@"; do [ "$a" = bench ] && is_bench=1; break; done

# dkperf bench picks each time's unit from its size: ns, µs, ms or s.
mask_units() {
    if [ "$is_bench" = 1 ]; then sed -E 's/N (ns|µs|ms|s)( |$|\)|,)/N <t>\2/g'; else cat; fi
}
actual=$( {
    echo "== stdout"; mask $is_stat <"$out" | mask_units
    echo "== stderr"; mask $is_stat <"$err" | mask_units
    echo "== exit $status"
} )
expected="$dir/$name.txt"
if [ "${DKPERF_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$actual" >"$expected"
    exit 0
fi
if [ ! -f "$expected" ]; then
    echo "no expected output $expected (run with DKPERF_UPDATE_GOLDEN=1)" >&2
    printf '%s\n' "$actual"
    exit 1
fi
if ! diff -u "$expected" <(printf '%s\n' "$actual"); then
    echo "dkperf $* differs from $expected" >&2
    exit 1
fi
