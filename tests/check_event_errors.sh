#!/bin/sh
# SPDX-License-Identifier: MIT OR Apache-2.0
# dkperf stat, record and bench read -e with one grammar: the same bad spec
# gets the same message (after "dkperf <command>: ") and the same exit
# status, 2, from each of them.
# usage: check_event_errors.sh DKPERF
dkperf=$1
tmp=${TMPDIR:?}/event-errors.$$
mkdir "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
failed=0
for spec in 'no-such-event' 'cycles:q' 'task-clock:' 'software/bogus=1/' 'cpu/event=0x3c' \
            'task-clock,,page-faults' 'task-clock,' '' ',task-clock' 'task-clock/0' \
            'task-clock/-5' 'task-clock@0' 'task-clock@99999999999' 'r11112222333344445' \
            'task-clock/x'; do
    first=
    for cmd in stat record bench; do
        if [ "$cmd" = record ]; then
            "$dkperf" record -e "$spec" -o "$tmp/x.data" -- true >/dev/null 2>"$tmp/err"
        else
            "$dkperf" "$cmd" -e "$spec" -- true >/dev/null 2>"$tmp/err"
        fi
        status=$?
        lines=$(wc -l <"$tmp/err")
        said=$(sed "s/^dkperf $cmd: //" "$tmp/err")
        if [ "$status" != 2 ] || [ "$lines" != 1 ]; then
            echo "FAIL: $cmd -e '$spec': exit $status, $lines lines: $(cat "$tmp/err")"
            failed=1
        fi
        if [ -z "$first" ]; then
            first=$said
        elif [ "$said" != "$first" ]; then
            echo "FAIL: $cmd -e '$spec' says '$said', stat says '$first'"
            failed=1
        fi
    done
done
[ -e "$tmp/x.data" ] && { echo "FAIL: a recording was written"; failed=1; }
[ $failed = 0 ] && echo "ok: stat, record and bench agree on every bad -e"
exit $failed
