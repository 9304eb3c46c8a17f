#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Build the libFuzzer targets (clang, ASan+UBSan) and run each for a while
# on a copy of its seed corpus. Fails on any finding; a crashing input is
# left in <build>/fuzz-findings/<target>/.
# usage: scripts/fuzz.sh [seconds-per-target] [build-dir]   (default 30, build-fuzz)
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
dir=${2:-build-fuzz}
jobs=$(nproc)
cmake -S . -B "$dir" -DCMAKE_C_COMPILER=clang -DDKPERF_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
      -DDKPERF_BUILD_BENCH=OFF -DDKPERF_BUILD_EXAMPLES=OFF >/dev/null || exit 1
cmake --build "$dir" -j"$jobs" --target fuzz-all sim-frameworks >/dev/null || exit 1
list="$dir/tests/fuzz/fuzz-targets.txt"
[ -s "$list" ] || { echo "fuzz: no targets in $list"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# One target: its verdict goes to $work/<name>.result ("ok LINE" or "bad LINE").
run_one() {
    local name=$1 bin=$2 corpus=$3
    mkdir -p "$work/$name" "$dir/fuzz-findings/$name"
    cp "$corpus"/* "$work/$name/" 2>/dev/null
    local log="$dir/fuzz-findings/$name.log"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
        "$bin" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$dir/fuzz-findings/$name/" "$work/$name" >"$log" 2>&1
    local rc=$?
    local runs
    runs=$(grep -oE 'Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' | tail -1)
    [ -n "$runs" ] || runs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    if [ $rc -eq 0 ] && ! ls "$dir/fuzz-findings/$name"/crash-* "$dir/fuzz-findings/$name"/leak-* \
            "$dir/fuzz-findings/$name"/timeout-* "$dir/fuzz-findings/$name"/oom-* >/dev/null 2>&1; then
        echo "ok fuzz $name: ${runs:-0} runs in ${secs}s, passed" >"$work/$name.result"
    else
        {
            echo "bad fuzz $name: ${runs:-0} runs, FAILED (exit $rc); log $log, inputs in $dir/fuzz-findings/$name/"
            grep -E 'ERROR: |SUMMARY: |runtime error' "$log" | head -5 | sed 's/^/bad     /'
        } >"$work/$name.result"
    fi
}

# One target per core at a time.
names=()
while read -r name bin corpus; do
    [ -n "$name" ] || continue
    names+=("$name")
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
        wait -n
    done
    run_one "$name" "$bin" "$corpus" &
done <"$list"
wait
failed=0 total=${#names[@]}
for name in "${names[@]}"; do
    line=$(cat "$work/$name.result" 2>/dev/null || echo "bad fuzz $name: no result")
    case "$line" in bad*) failed=$((failed + 1)) ;; esac
    sed 's/^ok //; s/^bad //' <<<"$line"
done
echo "fuzz: $total targets, $((total - failed)) passed, $failed failed"
[ $failed -eq 0 ]
