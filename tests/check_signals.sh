#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Ctrl-C during dkperf stat reaches the command; dkperf still reports the
# counts and exits as the command did (130 for SIGINT).
# usage: check_signals.sh DKPERF
set -u -m  # -m: background jobs keep SIGINT (not ignored as without job control)
dkperf=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT
"$dkperf" stat -e task-clock -- sleep 30 2>"$err" &
pid=$!
sleep 0.5
kill -INT $pid
start=$(date +%s)
wait $pid
status=$?
[ $(( $(date +%s) - start )) -lt 10 ] || fail "the command did not stop on SIGINT"
cat "$err"
[ $status -eq 130 ] || fail "exit status $status, expected 130 (the command's, killed by SIGINT)"
grep -q "Performance counter stats for 'sleep 30'" "$err" || fail "no report after SIGINT"
grep -q "task-clock" "$err" || fail "no task-clock row after SIGINT"
pgrep -x sleep -P $pid >/dev/null 2>&1 && fail "the command is still running"
echo "SIGINT passed to the command; counts reported; exit 130"

# A script's loop stops at Ctrl-C as it would without dkperf: bash goes on
# after a child that exited 130 (it took SIGINT for its own use) and stops
# after one that died of SIGINT, so dkperf must end by the signal.
out=$(mktemp)
trap 'rm -f "$err" "$out"' EXIT
bash -c 'for i in 1 2; do "$1" stat -e task-clock -- sleep 30; echo "next $?"; done' \
    loop "$dkperf" >"$out" 2>/dev/null &
pid=$!
sleep 0.5
kill -INT -- -$pid  # the job's process group, as a terminal's Ctrl-C
start=$(date +%s)
wait $pid
status=$?
[ $(( $(date +%s) - start )) -lt 10 ] || fail "the loop went on after SIGINT"
grep -q next "$out" && fail "the script's loop went on after Ctrl-C: $(cat "$out")"
[ $status -eq 130 ] || fail "the script ended with $status, expected 130"
echo "a script's loop stops at Ctrl-C"
