#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
# dkperf stat -x@ and -j against perf stat on the same command, mode by
# mode: every -x@ line has as many separators as perf's lines have, and
# every -j line is one JSON object with the keys perf's objects have, and
# field by field the values are written alike (integers, "%.2f" msec,
# "S0-D0-C1" labels, "%f" strings, units and event names).
# usage: check_stat_perf_format.py DKPERF
import json
import re
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
    ("-r 2 -a -A", ["-r", "2", "-a", "-A", "-e", "cpu-clock,page-faults"]),
    ("-a -A -I 100", ["-a", "-A", "-I", "100", "-e", "cpu-clock,page-faults"]),
    ("-a --per-core", ["-a", "--per-core", "-e", "cpu-clock,page-faults"]),
    ("-r 2 -a --per-core", ["-r", "2", "-a", "--per-core", "-e", "cpu-clock"]),
    ("-a --per-core -I 100", ["-a", "--per-core", "-I", "100", "-e", "cpu-clock"]),
]
# Ours where perf has no such option: its nearest aggregation.
NEAREST = {"--per-level": "--per-socket"}
MODES.append(("-a --per-level", ["-a", "--per-level", "-e", "cpu-clock,page-faults"]))

failures = []


def fail(msg):
    failures.append(msg)


def run(tool, args):
    p = subprocess.run(tool + ["stat"] + args + CMD, capture_output=True, text=True, timeout=120)
    return p.returncode, [l for l in p.stderr.splitlines() if l.strip()]


def perf_args(args):
    return [NEAREST.get(a, a) for a in args]


# How a field is written, not its value: counts and times differ run to
# run, their formats do not.
SHAPES = [
    (r"\s*\d+\.\d{9}", "seconds.%09lu"),
    (r"\d+", "integer"),
    (r"\d+\.\d{2}", "%.2f"),
    (r"\d+\.\d{3}", "%.3f"),
    (r"\d+\.\d{6}", "%f"),
    (r"\d+\.\d{2}%", "%.2f%%"),
    (r"CPU\d+", "CPUn"),
    (r"S\d+-D\d+-C\d+", "Sn-Dn-Cn"),
    (r"[KMG]?/sec", "rate"),
]


def shape(field):
    for pattern, name in SHAPES:
        if re.fullmatch(pattern, field):
            return name
    return field


def csv_shapes(line, sep):
    return tuple(shape(f) for f in line.split(sep))


def json_shapes(line):
    """Each key with its value's written form: "string" or bare number."""
    return tuple((k, "\"%s\"" % shape(v[1:-1]) if v.startswith('"') else shape(v))
                 for k, v in re.findall(r'"([^"]+)" : ("[^"]*"|[^,}]+)', line))


def same_shapes(what, name, ours, theirs, shapes):
    if "--per-level" in name:  # perf's per-socket labels differ from levels
        return
    # Every line of ours written as one of perf's is (perf may write more
    # kinds: an event we do not count by default, an interval we count).
    want = {shapes(l) for l in theirs}
    got = {shapes(l) for l in ours}
    if not got <= want:
        fail("%s %s: dkperf's fields written as %r, perf's as %r" %
             (what, name, sorted(got - want), sorted(want)))


def check(name, args):
    """Compare one mode; False when perf cannot run it here."""
    rc, theirs = run(["perf"], ["-x@"] + perf_args(args))
    if rc != 0 or not theirs or any("@" not in l for l in theirs):
        print("perf stat -x@ %s cannot run here (exit %d): %s; mode skipped" %
              (" ".join(args), rc, " / ".join(theirs[:2])))
        return False
    rc, ours = run([dkperf], ["-x@"] + args)
    if rc != 0 or not ours:
        fail("dkperf stat -x@ %s: exit %d: %r" % (" ".join(args), rc, ours))
        return False
    want = {l.count("@") for l in theirs}
    if len(want) != 1:
        fail("perf stat -x@ %s: lines of different layouts: %r" % (name, theirs))
    got = {l.count("@") for l in ours}
    if got != want:
        fail("-x@ %s: dkperf's lines have %r separators, perf's %r\ndkperf:\n%s\nperf:\n%s" %
             (name, sorted(got), sorted(want), "\n".join(ours), "\n".join(theirs)))
    same_shapes("-x@", name, ours, theirs, lambda l: csv_shapes(l, "@"))
    # The same fields in the same places: the unit and the event name.
    tail = 6 if "-r" in args else 5
    for l in ours if "-e" in args else []:
        f = l.split("@")
        if f[-tail - 1] not in ("msec", "") or f[-tail] not in args[-1].split(","):
            fail("-x@ %s: unit or event out of place: %r" % (name, l))

    rc, theirs = run(["perf"], ["-j"] + perf_args(args))
    if rc != 0 or not theirs:
        print("perf stat -j %s cannot run here (exit %d); mode skipped" % (" ".join(args), rc))
        return False
    rc, ours = run([dkperf], ["-j"] + args)
    if rc != 0 or not ours:
        fail("dkperf stat -j %s: exit %d: %r" % (" ".join(args), rc, ours))
        return False
    try:
        keys_theirs = {tuple(json.loads(l)) for l in theirs}
    except ValueError:
        print("perf stat -j %s writes no JSON lines here; mode skipped" % name)
        return False
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
    same_shapes("-j", name, ours, theirs, json_shapes)
    return True


checked = 0
for name, args in MODES:
    # A loaded machine can shift when the command runs against -I's
    # intervals in one of the two runs: a mode that differs runs again.
    before = len(failures)
    ok = check(name, args)
    if len(failures) > before:
        print("%s: differs once; running it again" % name)
        del failures[before:]
        ok = check(name, args)
    checked += ok

for msg in failures:
    print("FAIL: " + msg, file=sys.stderr)
if failures:
    sys.exit(1)
if checked == 0:
    print("SKIPPED: perf stat could not count in any mode here")
    sys.exit(77)
print("dkperf stat -x@ and -j have perf stat's layout in %d modes" % checked)
