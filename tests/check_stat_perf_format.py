#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
# dkperf stat -x@ and -j against perf stat on the same command, mode by
# mode: every -x@ line has as many separators as perf's lines have, and
# every -j line is one JSON object with the keys perf's objects have.
# usage: check_stat_perf_format.py DKPERF
import json
import shutil
import subprocess
import sys

dkperf = sys.argv[1]
if shutil.which("perf") is None:
    print("SKIPPED: perf is not installed (Debian: linux-perf)")
    sys.exit(77)

CMD = ["--", "sleep", "0.25"]
MODES = [
    ("no arguments", []),
    ("-e", ["-e", "task-clock,page-faults"]),
    ("-r 3", ["-r", "3", "-e", "task-clock,page-faults"]),
    ("-a", ["-a", "-e", "cpu-clock,page-faults"]),
    ("-I 100", ["-I", "100", "-e", "task-clock,page-faults"]),
    ("-a -A", ["-a", "-A", "-e", "cpu-clock,page-faults"]),
    ("-a -A -I 100", ["-a", "-A", "-I", "100", "-e", "cpu-clock,page-faults"]),
    ("-a --per-core", ["-a", "--per-core", "-e", "cpu-clock,page-faults"]),
    ("-a --per-core -I 100", ["-a", "--per-core", "-I", "100", "-e", "cpu-clock"]),
]
# Ours where perf has no such option: its nearest aggregation.
NEAREST = {"--per-level": "--per-socket"}
MODES.append(("-a --per-level", ["-a", "--per-level", "-e", "cpu-clock,page-faults"]))

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(tool, args):
    p = subprocess.run(tool + ["stat"] + args + CMD, capture_output=True, text=True, timeout=120)
    return p.returncode, [l for l in p.stderr.splitlines() if l.strip()]


def perf_args(args):
    return [NEAREST.get(a, a) for a in args]


checked = 0
for name, args in MODES:
    rc, theirs = run(["perf"], ["-x@"] + perf_args(args))
    if rc != 0 or not theirs or any("@" not in l for l in theirs):
        print("perf stat -x@ %s cannot run here (exit %d): %s; mode skipped" %
              (" ".join(args), rc, " / ".join(theirs[:2])))
        continue
    rc, ours = run([dkperf], ["-x@"] + args)
    if rc != 0 or not ours:
        fail("dkperf stat -x@ %s: exit %d: %r" % (" ".join(args), rc, ours))
        continue
    want = {l.count("@") for l in theirs}
    if len(want) != 1:
        fail("perf stat -x@ %s: lines of different layouts: %r" % (name, theirs))
    got = {l.count("@") for l in ours}
    if got != want:
        fail("-x@ %s: dkperf's lines have %r separators, perf's %r\ndkperf:\n%s\nperf:\n%s" %
             (name, sorted(got), sorted(want), "\n".join(ours), "\n".join(theirs)))
    # The same fields in the same places: the unit and the event name.
    tail = 6 if "-r" in args else 5
    for l in ours if "-e" in args else []:
        f = l.split("@")
        if f[-tail - 1] not in ("msec", "") or f[-tail] not in args[-1].split(","):
            fail("-x@ %s: unit or event out of place: %r" % (name, l))

    rc, theirs = run(["perf"], ["-j"] + perf_args(args))
    if rc != 0 or not theirs:
        print("perf stat -j %s cannot run here (exit %d); mode skipped" % (" ".join(args), rc))
        continue
    rc, ours = run([dkperf], ["-j"] + args)
    if rc != 0 or not ours:
        fail("dkperf stat -j %s: exit %d: %r" % (" ".join(args), rc, ours))
        continue
    try:
        keys_theirs = {tuple(json.loads(l)) for l in theirs}
    except ValueError:
        print("perf stat -j %s writes no JSON lines here; mode skipped" % name)
        continue
    keys_ours = set()
    for l in ours:
        try:
            keys_ours.add(tuple(json.loads(l)))
        except ValueError as e:
            fail("-j %s: not one JSON object per line: %r (%s)" % (name, l, e))
    if "--per-level" in args:  # perf's "socket", ours "level": the rest alike
        keys_theirs = {tuple("level" if k == "socket" else k for k in t) for t in keys_theirs}
    if keys_ours != keys_theirs:
        fail("-j %s: dkperf's keys %r, perf's %r" % (name, sorted(keys_ours), sorted(keys_theirs)))
    checked += 1

if failures:
    sys.exit(1)
if checked == 0:
    print("SKIPPED: perf stat could not count in any mode here")
    sys.exit(77)
print("dkperf stat -x@ and -j have perf stat's layout in %d modes" % checked)
