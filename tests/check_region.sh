#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# The region program against perf stat on the same work (Linux, no
# framework root), or against the unprivileged simulated Mac (--sim).
# usage: check_region.sh <region_program> [--sim]
set -u
prog=$1
mode=${2:-linux}
pages=20000
ms=200
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$prog" --pages $pages --burn-ms $ms) || fail "region_program failed"
echo "$out"
value() { echo "$out" | awk -v k="$1" '$1 == k && NF == 2 { print $2 }'; }

if [ "$mode" = "--sim" ]; then
    echo "$out" | grep -qx "backend selfcounts" || fail "the unprivileged simulated Mac did not use selfcounts"
    [ "$(value instructions)" -gt 0 ] || fail "no instructions counted"
    [ "$(value cycles)" -gt 0 ] || fail "no cycles counted"
    echo "$out" | grep -q "^branch-misses: DK_EPERM: .*needs root" || fail "branch-misses did not fail with DK_EPERM naming root"
    exit 0
fi

echo "$out" | grep -qx "backend perf_event" || fail "not the perf_event backend"
# Whether the kernel counts hardware instructions here (pmu_probe is built
# next to the region program), whatever its PMU is called.
if ! "$(dirname "$prog")/pmu_probe"; then
    echo "$out" | grep -q "^instructions: DK_EUNAVAILABLE: .*instructions.*no hardware PMU" ||
        fail "instructions did not fail with DK_EUNAVAILABLE naming it"
else
    echo "$out" | grep -qx "instructions: counts" || fail "instructions did not count on this PMU"
fi
ours_faults=$(value page-faults)
ours_clock=$(value task-clock)

command -v perf >/dev/null || { echo "SKIPPED: perf is not installed"; exit 77; }
stat=$(perf stat -x, -e task-clock,page-faults -- "$prog" --work-only --pages $pages --burn-ms $ms 2>&1 >/dev/null)
perf_clock=$(echo "$stat" | awk -F, '$3 == "task-clock" { print $1 }')
perf_faults=$(echo "$stat" | awk -F, '$3 == "page-faults" { print $1 }')
case "$perf_clock$perf_faults" in
    *[!0-9.]*|"") echo "SKIPPED: perf stat cannot count here: $stat"; exit 77 ;;
esac
echo "perf stat: task-clock ${perf_clock} msec, page-faults ${perf_faults}"
echo "dkperf:    task-clock $(awk -v n="$ours_clock" 'BEGIN { printf "%.2f", n / 1e6 }') msec, page-faults ${ours_faults}"
# perf stat counts the whole process (start-up included), dkperf the region.
awk -v a="$ours_faults" -v b="$perf_faults" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 * b) }' ||
    fail "page faults differ by more than 5%: $ours_faults vs $perf_faults"
awk -v a="$ours_clock" -v b="$perf_clock" 'BEGIN { r = a / 1e6 / b; exit !(r > 0.5 && r < 2) }' ||
    fail "task-clock is not of the same order: $ours_clock ns vs $perf_clock msec"
echo "agree: page faults within 5%, task-clock of the same order"
