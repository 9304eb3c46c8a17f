#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf record --off-cpu of a program with a busy thread and one that
sleeps 200 ms in ten nanosleeps (record_prog --sleeper 200), on this Linux
machine: both threads are in the recording, the busy one on CPU in rp_hot,
the sleeping one off CPU under the [off-cpu] frame in its blocking call
(clock_nanosleep called from rp_sleeper), its off-CPU ns close to the time
it slept; report --off-cpu and --on-cpu keep one kind each; the flame graph
draws off-CPU frames blue and the others warm; pprof has an off-CPU value
type in nanoseconds. The unit does not hang on the filter: --on-cpu folds
the same ns as the unfiltered stacks, and pprof keeps the off-CPU value
types. Of a count event (page-faults, on Linux), off-CPU ns are not added to
its counts: they are the event offcpu-time, as perf reports them, and
folded stacks of page-faults count its samples. Where perf_event_paranoid forbids the context-switches
event (not root, paranoid 2), record must fail with one line naming it.

With EVENT "timer" and DKPERF_FRAMEWORK_ROOT set (ctest sets it), the same
on the simulated frameworks (kperf's PET; simulated, not Apple hardware),
where a busy thread preempted (runnable, waiting for a CPU) is not off CPU,
as on Linux and in perf: little off-CPU time outside the sleeper's.

usage: check_record_offcpu.py DKPERF RECORD_PROG WORKDIR [EVENT]
"""
import gzip
import json
import os
import re
import subprocess
import sys
import time

dkperf, prog, work = sys.argv[1:4]
event = sys.argv[4] if len(sys.argv) > 4 else "cpu-clock"
sim = bool(os.environ.get("DKPERF_FRAMEWORK_ROOT"))
os.makedirs(work, exist_ok=True)
from checks import check, failures


def run(*args):
    return subprocess.run([dkperf, *args], capture_output=True, text=True, timeout=120)


def paranoid():
    try:
        with open("/proc/sys/kernel/perf_event_paranoid") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 2


data = os.path.join(work, "offcpu.data")
t0 = time.monotonic()
p = run("record", "--off-cpu", "-e", event, "-o", data, "--", prog, "0.3", "--sleeper", "200")
wall_ns = (time.monotonic() - t0) * 1e9
if not sim and os.geteuid() != 0 and paranoid() > 1:
    check(p.returncode == 1, f"record without the privilege: exit {p.returncode}")
    check("perf_event_paranoid" in p.stderr and p.stderr.count("\n") == 1,
          f"record without the privilege says why in one line: {p.stderr!r}")
    sys.exit(1 if failures else 0)
if not check(p.returncode == 0, f"record: {p.returncode} {p.stderr!r}"):
    sys.exit(1)
with open(data, "rb") as f:
    head = f.read(16)
check(head[10] >= 2, f"the file is format 1.2 or later (off-CPU records): {head[8:12]!r}")

# Folded stacks, weighted: ns off CPU for off-CPU stacks.
p = run("report", "-i", data, "--folded")
check(p.returncode == 0, f"report --folded: {p.returncode} {p.stderr!r}")
off_ns = on_hot = 0
other_off = []
for line in p.stdout.splitlines():
    stack, _, n = line.rpartition(" ")
    frames = stack.split(";")
    if "[off-cpu]" in frames:
        check(frames[1] == "[off-cpu]", f"[off-cpu] is the outermost frame: {line}")
        if "rp_sleeper" in frames and any("nanosleep" in f for f in frames):
            off_ns += int(n)
        else:
            other_off.append((line, int(n)))
    elif "rp_hot" in frames:
        on_hot += 1
print(f"sleeper off CPU in clock_nanosleep: {off_ns / 1e6:.1f} ms; other off-CPU stacks: "
      f"{len(other_off)}")
check(on_hot > 0, "the busy thread's rp_hot stacks are on CPU")
# At least the 200 ms it slept; more by what it waited for a CPU once woken
# (perf's off-CPU time counts to the switch back in too), so on a busy
# machine up to the time the whole run took.
check(180e6 <= off_ns <= max(260e6, wall_ns),
      f"the sleeper's off-CPU time in nanosleep is its 200 ms and its wait for a CPU: "
      f"{off_ns / 1e6:.1f} ms in a run of {wall_ns / 1e6:.0f} ms")
# Off CPU elsewhere: the threads' start and end (the main thread joins the
# sleeper), not the busy thread's preemptions.
other_ns = sum(n for _, n in other_off)
check(other_ns <= 100e6, f"little off-CPU time outside the sleeper's ({other_ns / 1e6:.1f} ms): "
      f"{[l for l, _ in other_off]}")

# Filters.
p = run("report", "-i", data, "--stdio", "--off-cpu")
check(p.returncode == 0 and "[off-cpu]" in p.stdout and "rp_hot" not in p.stdout,
      f"--off-cpu keeps only off-CPU samples: {p.stdout[:600]!r}")
p = run("report", "-i", data, "--stdio", "--on-cpu")
check(p.returncode == 0 and "[off-cpu]" not in p.stdout and "rp_hot" in p.stdout,
      f"--on-cpu keeps only on-CPU samples: {p.stdout[:600]!r}")
# The unit is the recording's, whatever the filter keeps: --on-cpu folds
# the on-CPU stacks as the unfiltered report does (ns), not in samples.
full = run("report", "-i", data, "--folded").stdout.splitlines()
p = run("report", "-i", data, "--folded", "--on-cpu")
want = [l for l in full if ";[off-cpu];" not in l]
check(p.returncode == 0 and p.stdout.splitlines() == want and want,
      f"--on-cpu --folded: the unfiltered on-CPU lines, same ns:\n{p.stdout[:600]}\n---\n"
      f"{chr(10).join(want)[:600]}")
pb = os.path.join(work, "oncpu.pb.gz")
p = run("report", "-i", data, "--on-cpu", "--pprof", pb)
with gzip.open(pb) as f:
    check(b"off-cpu_samples" in f.read(), "pprof of --on-cpu keeps the off-CPU value types")
p = run("report", "-i", data, "--on-cpu", "--off-cpu")
check(p.returncode == 2 and "give one" in p.stderr and p.stderr.count("\n") == 1,
      f"--on-cpu with --off-cpu: one usage error: {p.returncode} {p.stderr!r}")

# The flame graph: off-CPU frames blue, the others warm.
html = os.path.join(work, "offcpu.html")
p = run("report", "-i", data, "--html", html)
check(p.returncode == 0, f"report --html: {p.returncode} {p.stderr!r}")
fills = {}
with open(html) as f:
    for m in re.finditer(r'data-n="([^"]*)"><title>[^<]*</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"',
                         f.read()):
        fills.setdefault(m.group(1), []).append(tuple(int(x) for x in m.group(2, 3, 4)))
# (rp_sleeper and main are also drawn warm where they ran on CPU.)
for name, blue, every in (("[off-cpu]", True, True), ("rp_sleeper", True, False),
                          ("rp_hot", False, True)):
    got = fills.get(name, [])
    match = [(c[2] > c[0]) == blue for c in got]
    check(len(got) > 0 and (all(match) if every else any(match)),
          f"{name} is drawn {'blue' if blue else 'warm'}: {got}")

# pprof: the off-CPU value type.
pb = os.path.join(work, "offcpu.pb.gz")
p = run("report", "-i", data, "--pprof", pb)
check(p.returncode == 0, f"report --pprof: {p.returncode} {p.stderr!r}")
with gzip.open(pb) as f:
    raw = f.read()
check(b"off-cpu_samples" in raw and b"\x07off-cpu" in raw and b"nanoseconds" in raw,
      "pprof names the off-CPU value types")

# A count event: its samples counted, the off-CPU ns apart as offcpu-time.
if not sim:
    pf = os.path.join(work, "pf.data")
    p = run("record", "--off-cpu", "-e", "page-faults", "-o", pf, "--", prog, "0.3",
            "--sleeper", "200")
    check(p.returncode == 0, f"record -e page-faults: {p.returncode} {p.stderr!r}")
    p = run("report", "-i", pf, "--stdio")
    m = re.search(r"# Event: page-faults \(.*\): ([\d,]+) samples", p.stdout)
    check(p.returncode == 0 and m and
          re.search(r"# Event: offcpu-time \(.*\): [\d,]+ samples, [\d,]+ ns in all", p.stdout),
          f"the table: page-faults, then offcpu-time in ns: {p.stdout[:900]!r}")
    p = run("report", "-i", pf, "--folded")
    total = sum(int(l.rpartition(" ")[2]) for l in p.stdout.splitlines())
    check(p.returncode == 0 and m and total == int(m[1].replace(",", "")) and
          "[off-cpu]" not in p.stdout and "offcpu-time" in p.stderr,
          f"folded page-faults: its {m and m[1]} samples, no off-CPU ns: {total} "
          f"{p.stdout[:600]!r} {p.stderr!r}")
    ss = os.path.join(work, "pf.json")
    p = run("report", "-i", pf, "--speedscope", ss)
    with open(ss) as f:
        units = {q["name"]: q["unit"] for q in json.load(f)["profiles"]}
    check(units == {"page-faults": "none", "offcpu-time": "nanoseconds"},
          f"speedscope: a profile of offcpu-time in ns: {units}")
    p = run("report", "-i", pf, "--folded", "--event", "offcpu-time")
    ns = sum(int(l.rpartition(" ")[2]) for l in p.stdout.splitlines()
             if "rp_sleeper" in l and ";[off-cpu];" in l)
    check(p.returncode == 0 and 180e6 <= ns <= 260e6,
          f"--event offcpu-time folds the sleeper's ns: {ns} {p.stdout[:600]!r}")

# sleep 0.3: ~300 ms off CPU, the one stretch it blocks for (its end is
# what the sampling's stop finds, when the exit comes first).
if not sim:
    sl = os.path.join(work, "sleep.data")
    t0 = time.monotonic()
    p = run("record", "--off-cpu", "-e", event, "-o", sl, "--", "sleep", "0.3")
    wall_sleep = (time.monotonic() - t0) * 1e9
    check(p.returncode == 0, f"record sleep 0.3: {p.returncode} {p.stderr!r}")
    p = run("report", "-i", sl, "--folded", "--off-cpu")
    ns = sum(int(l.rpartition(" ")[2]) for l in p.stdout.splitlines() if "[off-cpu]" in l)
    check(p.returncode == 0 and 280e6 <= ns <= wall_sleep,
          f"sleep 0.3 is ~300 ms off CPU: {ns} ns of {wall_sleep:.0f} {p.stdout[:600]!r}")

sys.exit(1 if failures else 0)
