#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# On a machine without a hardware PMU, each command says once why its
# hardware events cannot be counted: one line naming them all, however
# many CPUs, levels or runs their rows stand for; the rows say only
# <not supported>.
# usage: check_unavailable_once.sh DKPERF PMU_PROBE
# Exits 77 (skipped) where the kernel counts hardware events.
set -u
dkperf=$1 probe=$2
if "$probe" >/dev/null; then
    echo "skipped: this machine has a hardware PMU, so no event is unavailable" >&2
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
reason="no hardware PMU is visible"
hw="instructions, cycles, branches, branch-misses"

# once DESCRIPTION NAMES ARGS...: the reason on exactly one line, which
# names NAMES; no <not supported> row carries it.
once() {
    local what=$1 names=$2
    shift 2
    "$dkperf" "$@" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "$what: dkperf $* failed"; }
    local n
    n=$(grep -c "$reason" "$tmp/out")
    [ "$n" = 1 ] || { cat "$tmp/out"; fail "$what: the reason is said $n times, not once"; }
    grep -q "^ *$names: not supported here: $reason" "$tmp/out" ||
        { cat "$tmp/out"; fail "$what: the reason's line does not name $names"; }
    if grep "<not supported>" "$tmp/out" | grep -q "PMU"; then
        cat "$tmp/out"; fail "$what: a <not supported> row carries the reason"
    fi
    grep -q "<not supported>" "$tmp/out" || { cat "$tmp/out"; fail "$what: no <not supported> row"; }
}

once "stat" "$hw" stat -- true
once "stat -A -a" "$hw" stat -A -a -- true
once "stat --per-core -a" "$hw" stat --per-core -a -- true
once "stat --per-level -a" "$hw" stat --per-level -a -- true
once "stat -r 3 -A -a" "$hw" stat -r 3 -A -a -- true
# The default events count what software can count.
"$dkperf" stat -- true >"$tmp/out" 2>&1
for ev in task-clock context-switches page-faults; do
    grep -Eq "^ +[0-9][0-9,.]* +(msec )?$ev" "$tmp/out" || { cat "$tmp/out"; fail "stat: $ev not counted"; }
done
once "bench -e" "cycles, instructions" bench --runs 3 -e cycles,task-clock,instructions -- true
once "bench" "instructions, cycles, branches" bench --runs 3 -- true
echo "ok: the reason is said once"
