#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# What dkperf stat says about events it cannot count as asked: events a
# backend cannot count at all are <not supported> whatever their
# modifiers, every message names its cause in full, and modifiers do not
# change the metric an event makes.
# usage: check_stat_messages.sh DKPERF SIM_ROOT
set -u
dkperf=$1 sim_root=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Unprivileged on a Mac (proc_pid_rusage): branches is not supported, with
# or without :u; the run goes on with what can be counted.
for ev in branches branches:u; do
    DKPERF_FRAMEWORK_ROOT=$sim_root DKPERF_SIM_PRIVILEGED=0 \
        "$dkperf" stat -x, -e "instructions,$ev" -- true 2>"$tmp/e"
    status=$?
    [ $status -eq 0 ] || { cat "$tmp/e"; fail "instructions,$ev unprivileged: exit $status"; }
    grep -q "^<not supported>,,$ev," "$tmp/e" || { cat "$tmp/e"; fail "$ev unprivileged is not <not supported>"; }
done

# Counters held by another client: the reason an event is not supported
# is given whole, ending with what is still counted.
DKPERF_FRAMEWORK_ROOT=$sim_root DKPERF_SIM_BUSY=1 \
    "$dkperf" stat -e instructions,branches -- true 2>"$tmp/e"
status=$?
[ $status -eq 0 ] || { cat "$tmp/e"; fail "busy counters: exit $status"; }
grep -q "^ branches: .*held by another client.*only a process's instructions and cycles are counted\.\?$" "$tmp/e" ||
    { cat "$tmp/e"; fail "busy counters: the reason for branches is cut short"; }

# task-clock:u is the clock still: CPUs utilized, not a rate against itself.
"$dkperf" stat -e task-clock:u,task-clock -- true 2>"$tmp/e"
grep -q "task-clock:u .*CPUs utilized" "$tmp/e" || { cat "$tmp/e"; fail "task-clock:u is not read as the clock"; }
grep -q "/sec" "$tmp/e" && { cat "$tmp/e"; fail "task-clock:u is given as a rate"; }
"$dkperf" stat --json -e task-clock:u -- true 2>"$tmp/e"
grep -q '"metric": {"value": [0-9.]*, "unit": "CPUs utilized"}' "$tmp/e" ||
    { cat "$tmp/e"; fail "task-clock:u in JSON is not read as the clock"; }

# instructions:u and cycles:u still make insn per cycle (the simulated
# counters count every CPU's busy time, so the command keeps one busy).
DKPERF_FRAMEWORK_ROOT=$sim_root "$dkperf" stat -a -e instructions:u,cycles:u -- \
    sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' 2>"$tmp/e"
grep -q "instructions:u .*insn per cycle" "$tmp/e" || { cat "$tmp/e"; fail "instructions:u,cycles:u give no insn per cycle"; }

# A very long name is cut short in the messages, so that the cause, which
# comes after it, is still said.
long=$(printf 'x%.0s' $(seq 1100))
configs=$(printf ',config=0%.0s' $(seq 200))
for case in "$long:u|the name is longer than 511 bytes" \
            "$long|no event named x*\.\.\. in the linux database (dkperf list shows the events)" \
            "$long:q|unknown modifier 'q' .*hypervisor)" \
            "software/config=0$configs/|is too long (a PMU name of at most 63 bytes, terms of at most 255)"; do
    ev=${case%%|*} cause=${case#*|}
    "$dkperf" stat --backend perf_event -e "$ev" -- true 2>"$tmp/e"
    status=$?
    [ $status -ne 0 ] || fail "a ${#ev}-byte event name was accepted"
    [ "$(wc -l <"$tmp/e")" = 1 ] || { cat "$tmp/e"; fail "a ${#ev}-byte event name: more than one line"; }
    [ "$(wc -c <"$tmp/e")" -lt 600 ] || { cat "$tmp/e"; fail "a ${#ev}-byte event name is echoed whole"; }
    grep -q -- "$cause\$" "$tmp/e" || { cat "$tmp/e"; fail "a ${#ev}-byte event name: the message does not end with its cause ($cause)"; }
done

# A term's value above 2^64-1 is out of range, not "not a number".
"$dkperf" stat --backend perf_event -e software/config=18446744073709551616/ -- true 2>"$tmp/e" &&
    fail "config=2^64 was accepted"
grep -q "18446744073709551616 is out of range (at most 2^64-1" "$tmp/e" ||
    { cat "$tmp/e"; fail "config=2^64 is not called out of range"; }

# Unprivileged under perf_event_paranoid 2, :uk cannot count kernel mode:
# the advice is :u (user mode alone), not to drop the modifier.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 0)" -ge 2 ] &&
   setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$dkperf"; then
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$dkperf" stat --backend perf_event -e task-clock:uk -- true 2>"$tmp/e" &&
        fail "task-clock:uk unprivileged was accepted"
    grep -q "task-clock:uk counts kernel mode.*use :u to count user mode alone$" "$tmp/e" ||
        { cat "$tmp/e"; fail "task-clock:uk unprivileged: the advice is not :u"; }
    grep -q "drop the :k" "$tmp/e" && { cat "$tmp/e"; fail "task-clock:uk unprivileged: told to drop the :k"; }
fi

echo "stat's messages name their causes"
