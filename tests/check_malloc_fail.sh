#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Every allocation dkperf makes may fail: with tests/malloc_fail.c preloaded,
# make the N-th one fail for N = 1..K (K: the allocations of a clean run)
# and check that dkperf either succeeds or exits non-zero with a message on
# standard error; never a crash, never a silent failure.
# Against the simulated frameworks it also checks that nothing is left
# taken: kpc.force_all_ctrs is 0 after every run.
# usage: check_malloc_fail.sh DKPERF SHIM ARGS...
set -u
dkperf=$1 shim=$2
shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

LD_PRELOAD=$shim DKPERF_MALLOC_COUNT=$tmp/log "$dkperf" "$@" >/dev/null 2>"$tmp/err"
k=$(sed -n 's/^allocations \([0-9]*\).*/\1/p' "$tmp/log")
[ -n "$k" ] && [ "$k" -gt 0 ] || fail "the shim counted no allocation (is it preloaded?)"
bad=0 failed_runs=0 skipped=0
export DKPERF_SIM_STATE=$tmp/state
for n in $(seq 1 "$k"); do
    rm -f "$tmp/log"
    printf 'force_all_ctrs 0\n' >"$tmp/state"
    LD_PRELOAD=$shim DKPERF_MALLOC_FAIL_AT=$n DKPERF_MALLOC_COUNT=$tmp/log \
        "$dkperf" "$@" >/dev/null 2>"$tmp/err"
    status=$?
    if { [ $status = 127 ] || [ $status -ge 128 ]; } && grep -q "^loader" "$tmp/log" 2>/dev/null; then
        # The allocation made to fail was the dynamic loader's own (a
        # dlopen'ed library's thread-local storage) and the loader then
        # aborted (x86_64) or crashed (arm64): not dkperf's to handle. A
        # dlopen that fails cleanly instead is judged like any failure.
        skipped=$((skipped + 1))
    elif [ $status -ge 128 ]; then
        echo "allocation $n: dkperf crashed (status $status)" >&2
        cat "$tmp/err" >&2
        bad=1
    elif [ $status -ne 0 ] && ! grep -q "^dkperf" "$tmp/err"; then
        echo "allocation $n: dkperf exited $status without a message" >&2
        cat "$tmp/err" >&2
        bad=1
    fi
    if ! grep -q "^force_all_ctrs 0" "$tmp/state"; then
        echo "allocation $n: the counters were left taken ($(head -1 "$tmp/state"))" >&2
        bad=1
    fi
    grep -q "failed 1" "$tmp/log" 2>/dev/null && failed_runs=$((failed_runs + 1))
done
[ $bad = 0 ] || fail "some allocation failures crashed dkperf or went unreported"
[ $failed_runs -gt 0 ] || fail "no allocation was made to fail"
echo "$k allocations of dkperf $*: each failure is reported or survived" \
     "($skipped inside the dynamic loader, which aborts or crashes)"
