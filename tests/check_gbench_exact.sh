#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# dkperf/benchmark.hpp in a google benchmark program, on a PMU that counts
# exactly (QEMU's arm64 PMUv3 under -icount; tests/qemu/run.sh sets
# DKPERF_EXACT_PMU=1): the instructions per iteration of a body of K
# instructions, less those of an empty body, times the iterations, are
# exactly K times the iterations; the constant cost is the same for every
# body; the empty body's figure is google benchmark's own per iteration.
# Each body runs at N and 2N iterations (tests/gbench_exact_program.cpp):
# the slope (t(2N) - t(N)) / N and the constant 2 t(N) - t(2N) are integers.
# usage: check_gbench_exact.sh PROGRAM
# Exits 77 (skipped), saying why, where instructions cannot be counted.
set -u
prog=$1
ev=instructions:u
case $(uname -m) in
    aarch64 | x86_64) ;;
    *) echo "skipped: no asm body of K instructions for $(uname -m)"; exit 77 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$prog" --benchmark_format=json >"$tmp/json" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "$prog --benchmark_format=json exited with status $?"; }
if ! grep -q "\"$ev\":" "$tmp/json"; then
    [ "$(grep -c "^dkperf: .*$ev" "$tmp/err")" = 1 ] ||
        { cat "$tmp/err"; fail "no $ev counter, and no one line on stderr saying why"; }
    echo "skipped: $ev cannot be counted here: $(grep "^dkperf: " "$tmp/err")"
    exit 77
fi
# name, iterations and the counter of each run, one line each.
awk -v ev="\"$ev\":" '
    $1 == "\"name\":" { name = $2; gsub(/[",]/, "", name) }
    $1 == "\"iterations\":" { it = $2; sub(/,/, "", it) }
    $1 == ev { v = $2; sub(/,/, "", v); print name, it, v }' "$tmp/json" >"$tmp/runs"
cat "$tmp/runs"
# total K ITERATIONS: the run's counter times its iterations, which must
# be an integer (a power-of-two count divides a total exactly).
total() {
    awk -v k="BM_nops<$1>/iterations:$2" '
        $1 == k { t = $3 * $2; if (t != int(t)) exit 2; printf "%.0f\n", t; found = 1 }
        END { if (!found) exit 3 }' "$tmp/runs"
}
n=65536
declare -A slope const
for k in 0 8 13; do
    t1=$(total "$k" "$n") || fail "BM_nops<$k> at $n iterations: missing or not an integer total"
    t2=$(total "$k" $((2 * n))) || fail "BM_nops<$k> at $((2 * n)) iterations: missing or not an integer total"
    [ $(((t2 - t1) % n)) = 0 ] || fail "BM_nops<$k>: t(2N) - t(N) = $((t2 - t1)) is not a multiple of N = $n"
    slope[$k]=$(((t2 - t1) / n))
    const[$k]=$((2 * t1 - t2))
    echo "BM_nops<$k>: $t1 instructions at $n iterations, $t2 at $((2 * n)):" \
         "${slope[$k]} per iteration + ${const[$k]} once"
done
e0=$(awk -v k="BM_nops<0>/iterations:$n" '$1 == k { print $3 }' "$tmp/runs")
echo "google benchmark's cost per iteration (the empty body): ${slope[0]} instructions;" \
     "the empty body's $ev per iteration at $n iterations: $e0" \
     "(${slope[0]} + ${const[0]} / $n)"
if [ -z "${DKPERF_EXACT_PMU:-}" ]; then
    echo "skipped: figures printed; exact counts need a PMU known to count exactly" \
         "(DKPERF_EXACT_PMU=1: QEMU -icount, tests/qemu/run.sh)"
    exit 77
fi
t0=$(total 0 "$n")
for k in 8 13; do
    [ "${const[$k]}" = "${const[0]}" ] ||
        fail "BM_nops<$k>: constant cost ${const[$k]}, the empty body's ${const[0]}"
    [ $((slope[$k] - slope[0])) = "$k" ] ||
        fail "BM_nops<$k>: $((slope[$k] - slope[0])) instructions per iteration more than the empty body, not $k"
    tk=$(total "$k" "$n")
    [ $((tk - t0)) = $((k * n)) ] ||
        fail "BM_nops<$k>: (per iteration - empty body's) x $n = $((tk - t0)), not $k x $n = $((k * n))"
    echo "BM_nops<$k>: exactly $k instructions per iteration more than the empty body"
done
echo "PASS"
