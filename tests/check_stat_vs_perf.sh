#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# dkperf stat -x, against perf stat on the same command (Linux).
# usage: check_stat_vs_perf.sh DKPERF CMD [ARGS...]
set -u
dkperf=$1
shift
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v perf >/dev/null || { echo "SKIPPED: perf is not installed"; exit 77; }

events=task-clock,page-faults,context-switches
ours=$("$dkperf" stat -e $events -x, -- "$@" 2>&1 >/dev/null) || fail "dkperf stat failed: $ours"
theirs=$(perf stat -e $events -x, -- "$@" 2>&1 >/dev/null)
echo "dkperf stat -x,:"; echo "$ours"
echo "perf stat -x,:";   echo "$theirs"
field() { echo "$1" | awk -F, -v e="$2" '$3 == e { print $1 }'; }
pf_ours=$(field "$ours" page-faults);  pf_perf=$(field "$theirs" page-faults)
tc_ours=$(field "$ours" task-clock);   tc_perf=$(field "$theirs" task-clock)
cs_ours=$(field "$ours" context-switches)
case "$pf_perf$tc_perf" in
    *[!0-9.]*|"") echo "SKIPPED: perf stat cannot count here: $theirs"; exit 77 ;;
esac
[ -n "$pf_ours" ] && [ -n "$tc_ours" ] && [ -n "$cs_ours" ] || fail "dkperf's CSV lacks an event"
awk -v a="$pf_ours" -v b="$pf_perf" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.05 * b) }' ||
    fail "page-faults differ by more than 5%: dkperf $pf_ours, perf $pf_perf"
awk -v a="$tc_ours" -v b="$tc_perf" 'BEGIN { r = a / b; exit !(r > 0.5 && r < 2) }' ||
    fail "task-clock is not of the same order: dkperf $tc_ours msec, perf $tc_perf msec"
echo "agree: page-faults $pf_ours vs $pf_perf (within 5%), task-clock $tc_ours vs $tc_perf msec"
