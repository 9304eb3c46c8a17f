#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Every allocation of the Mach-O reader may fail: with tests/malloc_fail.c
# preloaded, make the N-th allocation of test_macho's case
# allocation_failures_leave_nothing fail for N = 1..K (K: the allocations of
# a clean run). The case itself checks that each open succeeds or names the
# want of memory, and that nothing stays allocated.
# usage: check_macho_malloc.sh TEST_MACHO SHIM
set -u
test_macho=$1 shim=$2
case_name=allocation_failures_leave_nothing
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

LD_PRELOAD=$shim DKPERF_MALLOC_COUNT=$tmp/log "$test_macho" $case_name 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; fail "the clean run failed"; }
k=$(sed -n 's/^allocations \([0-9]*\).*/\1/p' "$tmp/log")
[ -n "$k" ] && [ "$k" -gt 0 ] || fail "the shim counted no allocation (is it preloaded?)"
bad=0 failed_runs=0
for n in $(seq 1 "$k"); do
    rm -f "$tmp/log"
    LD_PRELOAD=$shim DKPERF_MALLOC_FAIL_AT=$n DKPERF_MALLOC_COUNT=$tmp/log \
        "$test_macho" $case_name >/dev/null 2>"$tmp/err"
    status=$?
    if [ $status -ne 0 ]; then
        echo "allocation $n of $k: test_macho $case_name exited $status" >&2
        cat "$tmp/err" >&2
        bad=1
    fi
    grep -q "failed 1" "$tmp/log" 2>/dev/null && failed_runs=$((failed_runs + 1))
done
[ $bad = 0 ] || fail "some allocation failures were not reported or leaked"
[ $failed_runs -gt 0 ] || fail "no allocation was made to fail"
echo "$k allocations of the Mach-O reader: each failure is reported, nothing leaks"
