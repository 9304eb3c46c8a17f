#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Output that cannot be written is an error: every command run with its
# output on /dev/full says so and exits non-zero.
# usage: check_write_errors.sh DKPERF   (DKPERF_FRAMEWORK_ROOT etc. from the environment)
set -u
dkperf=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -w /dev/full ] || { echo "no /dev/full: skipped"; exit 77; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT
want="dkperf: write error on standard output: No space left on device"
for args in "list" "list --json" "list miss" "info" "info --json" "help" "help stat" \
            "--version" "stat --help" "info --help" "list --help"; do
    # shellcheck disable=SC2086
    "$dkperf" $args >/dev/full 2>"$err"
    status=$?
    [ $status -ne 0 ] || fail "dkperf $args >/dev/full exited 0"
    [ $status -lt 128 ] || fail "dkperf $args >/dev/full crashed ($status)"
    grep -qx "$want" "$err" || { cat "$err"; fail "dkperf $args >/dev/full: no '$want'"; }
done
# stat's report goes to standard error: a lost report fails dkperf (with
# nowhere left to say so), unless the command itself failed.
"$dkperf" stat -e instructions -- true 2>/dev/full
status=$?
[ $status -eq 1 ] || fail "dkperf stat 2>/dev/full exited $status, expected 1"
# ... and to -o FILE, which names the file.
"$dkperf" stat -o /dev/stdout -e instructions -- true >/dev/full 2>"$err"
status=$?
[ $status -eq 1 ] || fail "dkperf stat -o /dev/stdout >/dev/full exited $status, expected 1"
grep -q -- "-o /dev/stdout: cannot write the report: No space left on device" "$err" ||
    { cat "$err"; fail "no message for -o /dev/stdout >/dev/full"; }
# What the command writes is the command's business, not dkperf's.
"$dkperf" stat -e instructions -- sh -c 'echo hi; exit 0' >/dev/full 2>"$err"
status=$?
[ $status -eq 0 ] || { cat "$err"; fail "dkperf stat -- echo >/dev/full exited $status, expected the command's 0"; }
echo "write errors on standard output and on the report are reported"
