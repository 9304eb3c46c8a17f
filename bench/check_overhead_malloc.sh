#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Every allocation bench/overhead makes may fail: with tests/malloc_fail.c
# preloaded, make the N-th one fail for N = 1..K (K: the allocations of a
# clean run) and check that it then succeeds or exits 2 with an "overhead:"
# line on standard error; never a crash. One of the runs must reach the
# allocation of the timings and say so.
# usage: check_overhead_malloc.sh OVERHEAD SHIM
set -u
bin=$1 shim=$2
args=(--case perf_event --no-callgrind --calls 10 --rounds 3)
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Exit 1 is a missed time target (a loaded machine), not a failure to run.
LD_PRELOAD=$shim DKPERF_MALLOC_COUNT=$tmp/log "$bin" "${args[@]}" >/dev/null 2>"$tmp/err"
status=$?
[ $status -le 1 ] ||
    fail "overhead ${args[*]} fails (exit $status) without an injected failure: $(cat "$tmp/err")"
k=$(sed -n 's/^allocations \([0-9]*\).*/\1/p' "$tmp/log")
[ -n "$k" ] && [ "$k" -gt 0 ] || fail "the shim counted no allocation (is it preloaded?)"
timings=0
for n in $(seq 1 "$k"); do
    LD_PRELOAD=$shim DKPERF_MALLOC_FAIL_AT=$n "$bin" "${args[@]}" >/dev/null 2>"$tmp/err"
    status=$?
    case $status in
    0 | 1) ;;
    2) grep -q '^overhead: ' "$tmp/err" ||
           fail "allocation $n: exit 2 without an overhead: line: $(cat "$tmp/err")" ;;
    *) fail "allocation $n: exit status $status: $(cat "$tmp/err")" ;;
    esac
    grep -q 'out of memory for the timings' "$tmp/err" && timings=$((timings + 1))
done
[ "$timings" -gt 0 ] || fail "no run reached the allocation of the timings"
echo "$k allocations, each failed once: handled ($timings at the timings)"
