#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
# dkperf stat -x@ and -j against perf stat on the same command, mode by
# mode: every -x@ line has as many separators as perf's lines have, and
# every -j line is one JSON object with the keys perf's objects have, and
# field by field the values are written alike (integers, "%.2f" msec,
# "S0-D0-C1" labels, "%f" strings, units and event names). With -A each
# CPU row has its own run time, as perf's rows do; -r prints the mean of
# the runs with the spread where perf puts it.
# usage: check_stat_perf_format.py DKPERF
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

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


def run_times(lines, sep):
    """-x lines of CPU or core rows: {(interval, event): [(run time, value)]}."""
    out = {}
    for l in lines:
        f = l.split(sep)
        # [time@](CPUn | Sn-Dn-Cn@cpus)@value@unit@event@[spread@]run-time@percent@metric@unit
        at = next((k for k in (0, 1) if re.fullmatch(r"CPU\d+|S\d+-D\d+-C\d+", f[k])), None)
        if at is None or not f[-4].isdigit():
            continue
        v = at + (1 if f[at].startswith("CPU") else 2)
        out.setdefault((f[0] if at else "", f[v + 2]), []).append((int(f[-4]), f[v]))
    return out


def same_run_times(name, ours, theirs):
    """Each CPU (or core) row's own run time: where perf's rows of an event
    differ, ours differ too, and a cpu-clock row ran about the time it
    counted (its CPUs' time, not a share of every CPU's)."""
    t = run_times(theirs, "@")
    if not t:
        return
    o = run_times(ours, "@")
    if not o:
        fail("-x@ %s: no CPU rows with a run time:\n%s" % (name, "\n".join(ours)))
    perf_differ = any(len({r for r, _ in rows}) > 1 for rows in t.values())
    for key, rows in o.items():
        if perf_differ and len(rows) > 1 and len({r for r, _ in rows}) == 1:
            fail("-x@ %s: every CPU row of %s has run time %d; perf gives each CPU its own: %r"
                 % (name, key[1], rows[0][0], sorted(t.values())))
        for r, value in rows:
            if key[1] == "cpu-clock" and r > float(value) * 1e6 * 1.2 + 2e6:
                fail("-x@ %s: a cpu-clock row counted %s msec but ran %d ns" % (name, value, r))


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
    if "-A" in args or "--per-core" in args:
        same_run_times(name, ours, theirs)
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


def check_repeat_mean():
    """-r 3 -x@: the count is the mean of the runs, the spread (the relative
    standard deviation of the mean, in percent) after the event name, as in
    perf. The third run faults in 96 MiB more than the first two, so the
    mean stands apart from the median and from the last run. perf -v gives
    its runs' counts; perf 6.1 itself prints the last run's count (and the
    spread relative to it), which later versions fixed to print the mean: a
    perf printing the mean must agree with ours."""
    big = "dd if=/dev/zero of=/dev/null bs=96M count=1 2>/dev/null"
    script = 'echo >> "$1"; [ "$(wc -l < "$1")" -eq 3 ] && exec %s; exit 0' % big
    got = {}
    with tempfile.TemporaryDirectory() as d:
        for tool in (["perf", "-v"], [dkperf]):
            state = os.path.join(d, os.path.basename(tool[0]))
            p = subprocess.run(
                [tool[0], "stat"] + tool[1:] + ["-r", "3", "-x@", "-e", "page-faults", "--", "sh",
                                                "-c", script, "sh", state],
                capture_output=True, text=True, timeout=120)
            rows = [l.split("@") for l in p.stderr.splitlines() if "@page-faults@" in l]
            if p.returncode != 0 or len(rows) != 1:
                if tool[0] == "perf":
                    print("perf stat -r 3 cannot count page-faults here; -r 3 not checked")
                    return
                fail("dkperf stat -r 3 -x@: exit %d: %s" % (p.returncode, p.stderr))
                return
            got[tool[0]] = rows[0]
            if tool[0] == "perf":
                runs = [int(m) for m in re.findall(r"^page-faults: (\d+)", p.stderr, re.M)]
    if len(runs) != 3:
        print("perf stat -v gave no count per run; -r 3 not checked")
        return
    mean = sum(runs) / 3.0
    sd_mean = (sum((x - mean) ** 2 for x in runs) / 2.0) ** 0.5 / 3 ** 0.5
    if runs[2] - max(runs[:2]) < 3000:
        print("96 MiB faulted in %d pages only (huge pages?); -r 3 not checked" %
              (runs[2] - runs[0]))
        return
    for tool, f in got.items():
        # value@unit@event@spread%@run-time@percent@metric@metric-unit
        if len(f) != 8 or not f[3].endswith("%") or not f[4].isdigit():
            fail("-r 3 -x@: %s's fields %r, not perf 6.1's layout" % (tool, f))
            return
    perf_value = float(got["perf"][0])
    perf_mean = abs(perf_value - mean) < abs(perf_value - runs[2])
    print("perf -r 3 prints %s (%s; runs %r)" %
          ("the mean" if perf_mean else "the last run", perf_value, runs))
    tol = (runs[2] - runs[0]) / 6.0
    ours = got[dkperf]
    if abs(float(ours[0]) - mean) > tol:
        fail("-r 3 -x@: dkperf printed %s page-faults; the runs' mean is about %.0f (perf's "
             "runs: %r)" % (ours[0], mean, runs))
    spread = 100 * sd_mean / mean
    if abs(float(ours[3][:-1]) - spread) > 15:
        fail("-r 3 -x@: dkperf's spread %s, the runs' %.2f%% (perf's runs: %r)" %
             (ours[3], spread, runs))
    if perf_mean and abs(float(got["perf"][3][:-1]) - float(ours[3][:-1])) > 15:
        fail("-r 3 -x@: spread %s (perf) against %s (dkperf)" % (got["perf"][3], ours[3]))


check_repeat_mean()
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
