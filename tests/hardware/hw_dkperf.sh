#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# dkperf on a real Mac. Run it twice: as a normal user, then with sudo.
#   tests/hardware/hw_dkperf.sh build/tools/dkperf/dkperf
#   sudo tests/hardware/hw_dkperf.sh build/tools/dkperf/dkperf
set -u
dkperf=${1:-build/tools/dkperf/dkperf}
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(uname)" = Darwin ] || fail "this is for a Mac"

"$dkperf" info || fail "dkperf info"
"$dkperf" list --json | python3 -m json.tool >/dev/null || fail "dkperf list --json"
out=$("$dkperf" stat --json -- /bin/sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done' 2>&1 >/dev/null)
echo "$out" | python3 -c '
import json, sys
s = json.load(sys.stdin)
ev = {e["name"]: e for e in s["events"]}
assert ev["instructions"]["counted"] and ev["instructions"]["value"] > 10**7, ev["instructions"]
assert ev["cycles"]["counted"] and ev["cycles"]["value"] > 10**6, ev["cycles"]
print("stat:", s["backend"], s["scope"], "instructions", ev["instructions"]["value"])
' || fail "dkperf stat --json: $out"
# dkperf bench reads each run from the command's zombie (proc_pid_rusage):
# a loop of a known size retires about the instructions stat counts for it.
loop="/bin/sh -c 'i=0; while [ \$i -lt 200000 ]; do i=\$((i+1)); done'"
bjson=$(mktemp)
"$dkperf" bench -r 5 -e instructions,cycles --export-json "$bjson" -- "$loop" >/dev/null ||
    fail "dkperf bench"
python3 - "$bjson" "$(echo "$out" | python3 -c 'import json,sys; s=json.load(sys.stdin); print([e["value"] for e in s["events"] if e["name"]=="instructions"][0])')" <<'PY' || fail "dkperf bench --export-json"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
ins = r["counters"][0]["mean"]
stat = float(sys.argv[2])
assert r["counters"][0]["counted_runs"] == 5, r["counters"][0]
assert 0.8 * stat < ins < 1.2 * stat, (ins, stat)
print("bench: instructions a run", ins, "against stat's", stat)
PY
rm -f "$bjson"
if [ "$(id -u)" = 0 ]; then
    "$dkperf" stat -a -e instructions,cycles,branches,branch-misses -- sleep 0.2 ||
        fail "dkperf stat -a as root"
    "$dkperf" stat -a -e instructions,cycles,branches,branch-misses -x, -- sleep 0.2 2>&1 |
        grep -q '^<not supported>' && fail "an event was not supported as root"
else
    "$dkperf" stat -a -- true 2>&1 | grep -q "needs the kperf backend" ||
        fail "stat -a without root should say it needs root"
fi
echo ok
