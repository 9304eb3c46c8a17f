#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# dkperf stat's process handling: repeats, exit statuses, the -o file,
# and a Ctrl-C that lands before the command has started.
# usage: check_stat_cli.sh DKPERF SIM_ROOT FORK_DELAY_SO|-
set -u -m  # -m: background jobs keep SIGINT (not ignored as without job control)
dkperf=$1 sim_root=$2 fork_delay=$3
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs() { sed -nE 's/.*"runs": ([0-9]+).*/\1/p' "$1"; }

# A command that exits with a status above 128 is not a signal: all repeats run.
"$dkperf" stat -r 3 --json -e task-clock -- sh -c 'exit 200' 2>"$tmp/j"
status=$?
[ $status -eq 200 ] || fail "exit 200 gave dkperf status $status"
[ "$(runs "$tmp/j")" = 3 ] || { cat "$tmp/j"; fail "exit 200 stopped the repeats"; }

# A command killed by a signal ends the repeats.
"$dkperf" stat -r 3 --json -e task-clock -- sh -c 'kill -TERM $$' 2>"$tmp/j"
status=$?
[ $status -eq 143 ] || fail "SIGTERM gave dkperf status $status, expected 143"
[ "$(runs "$tmp/j")" = 1 ] || { cat "$tmp/j"; fail "a killed command did not end the repeats"; }

# -r's spread column stays when a killed command ends the runs after the
# first: -x, keeps -r's eight fields, as perf's layout for -r has.
"$dkperf" stat -x, -r 3 -e task-clock -- sh -c 'kill -TERM $$' 2>"$tmp/x"
fields=$(grep ',task-clock,' "$tmp/x" | awk -F, '{ print NF }')
[ "$fields" = 8 ] || { cat "$tmp/x"; fail "-x, -r 3 of a killed command: $fields fields, not 8"; }

# -I: an interval the command sleeps through is <not counted>, as perf
# stat prints it, not a count of 0.
"$dkperf" stat -I 100 -e task-clock -- sleep 0.35 2>"$tmp/i"
grep -q '<not counted>      task-clock' "$tmp/i" && ! grep -q ' 0\.00 msec task-clock' "$tmp/i" ||
    { cat "$tmp/i"; fail "-I: an interval the command slept through was not <not counted>"; }

# A report that cannot be written is an error that names the file.
"$dkperf" stat -o /dev/full -e task-clock -- true 2>"$tmp/e"
status=$?
[ $status -eq 1 ] || fail "-o /dev/full gave status $status, expected 1"
grep -q -- "-o /dev/full: cannot write the report" "$tmp/e" || { cat "$tmp/e"; fail "no message for -o /dev/full"; }

# The -o file is dkperf's: the command does not inherit it.
"$dkperf" stat -o "$tmp/report" -e task-clock -- sh -c 'ls -l /proc/$$/fd/' >"$tmp/fds" 2>&1
[ $? -eq 0 ] || fail "stat -o failed"
grep -q "task-clock" "$tmp/report" || fail "no report in the -o file"
grep -q "$tmp/report" "$tmp/fds" && { cat "$tmp/fds"; fail "the command inherited the -o file"; }

# --append adds each report to the -o file, as perf stat's does; without
# -o it is refused.
"$dkperf" stat -x, -o "$tmp/both" -e task-clock -- true &&
    "$dkperf" stat -x, -o "$tmp/both" --append -e task-clock -- true ||
    fail "stat -o --append failed"
[ "$(grep -c ',task-clock,' "$tmp/both")" = 2 ] || { cat "$tmp/both"; fail "--append did not add"; }
"$dkperf" stat --append -e task-clock -- true 2>"$tmp/e"
[ $? -eq 2 ] && grep -q -- "--append adds to the -o file" "$tmp/e" ||
    { cat "$tmp/e"; fail "--append without -o was not refused"; }

# Ctrl-C while the counters are being set up (simulated: proc_pid_rusage
# takes 1.5 s) stops the command before it runs; dkperf ends as it would
# have, by SIGINT (130 to a shell), with no report and no error.
python3 "$here/send_signal.py" 0.5 INT killed --quiet -- env DKPERF_FRAMEWORK_ROOT="$sim_root" \
    DKPERF_SIM_SLOW=proc_pid_rusage:1500 "$dkperf" stat -- sh -c "touch $tmp/ran" ||
    fail "SIGINT during the setup"
[ -e "$tmp/ran" ] && fail "the command ran after SIGINT during the setup"

# The same when the signal lands right after fork, before dkperf knows the
# command's pid (fork made slow by a preloaded shim).
if [ "$fork_delay" != - ]; then
    python3 "$here/send_signal.py" 0.3 INT killed --quiet -- env LD_PRELOAD="$fork_delay" \
        DKPERF_TEST_FORK_DELAY_MS=1000 "$dkperf" stat -e task-clock -- sh -c "touch $tmp/ran" ||
        fail "SIGINT right after fork"
    [ -e "$tmp/ran" ] && fail "the command ran after SIGINT right after fork"
fi

# A SIGINT dkperf was started ignoring (nohup) stays ignored by it and the command.
# Two runs: a SIGINT dkperf caught would end the repeats after the first.
( trap '' INT; exec "$dkperf" stat -r 2 --json -e task-clock -- sleep 0.6 ) 2>"$tmp/j" &
pid=$!
sleep 0.3
kill -INT $pid
wait $pid
status=$?
[ $status -eq 0 ] || { cat "$tmp/j"; fail "an ignored SIGINT gave status $status"; }
[ "$(runs "$tmp/j")" = 2 ] || { cat "$tmp/j"; fail "an ignored SIGINT ended the repeats"; }
# One rule for every command: a name no database knows is a usage error (2,
# as perf's 129 for the same), said in one line that points at dkperf list.
for cmd in "stat -e instructons -- true" "bench -r 2 -e instructons -- true" \
           "record -e instructons -o $tmp/r.data -- true"; do
    "$dkperf" $cmd >/dev/null 2>"$tmp/e"
    status=$?
    [ $status -eq 2 ] || { cat "$tmp/e"; fail "dkperf $cmd: status $status, expected 2"; }
    [ "$(wc -l <"$tmp/e")" = 1 ] || { cat "$tmp/e"; fail "dkperf $cmd: not one line"; }
    grep -q "did you mean instructions? (dkperf list shows the events)$" "$tmp/e" ||
        { cat "$tmp/e"; fail "dkperf $cmd: no suggestion and pointer to dkperf list"; }
done
[ ! -e "$tmp/r.data" ] || fail "record left a file for an unknown event"
# A mistyped command gets the nearest one.
"$dkperf" stta -e x >/dev/null 2>"$tmp/e"
status=$?
[ $status -eq 2 ] || fail "dkperf stta: status $status, expected 2"
[ "$(cat "$tmp/e")" = "dkperf: no command called stta; did you mean stat? (dkperf help lists them)" ] ||
    { cat "$tmp/e"; fail "dkperf stta: no suggestion"; }
echo "repeats, exit statuses, -o, unknown events and commands, early and ignored SIGINT behave"
