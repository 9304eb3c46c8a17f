#!/usr/bin/env bash
# dkperf stat's process handling: repeats, exit statuses, the -o file,
# and a Ctrl-C that lands before the command has started.
# usage: check_stat_cli.sh DKPERF SIM_ROOT
set -u -m  # -m: background jobs keep SIGINT (not ignored as without job control)
dkperf=$1 sim_root=$2
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

# Ctrl-C while the counters are being set up (simulated: proc_pid_rusage
# takes 1.5 s) stops the command before it runs; dkperf ends as it would
# have, 130, with no report and no error.
DKPERF_FRAMEWORK_ROOT=$sim_root DKPERF_SIM_SLOW=proc_pid_rusage:1500 \
    "$dkperf" stat -- sh -c "touch $tmp/ran" 2>"$tmp/e" &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
status=$?
[ $status -eq 130 ] || { cat "$tmp/e"; fail "SIGINT before exec gave status $status, expected 130"; }
[ -e "$tmp/ran" ] && fail "the command ran after SIGINT"
[ -s "$tmp/e" ] && { cat "$tmp/e"; fail "output after SIGINT before exec"; }
pgrep -P $pid >/dev/null 2>&1 && fail "a child of dkperf is left"
# A SIGINT dkperf was started ignoring (nohup) stays ignored by it and the command.
( trap '' INT; exec "$dkperf" stat -e task-clock -- sleep 1 ) 2>"$tmp/e" &
pid=$!
sleep 0.3
kill -INT $pid
wait $pid
status=$?
[ $status -eq 0 ] || { cat "$tmp/e"; fail "an ignored SIGINT gave status $status"; }
grep -q "task-clock" "$tmp/e" || fail "no report when SIGINT is ignored"
echo "repeats, exit statuses, -o, early and ignored SIGINT behave"
