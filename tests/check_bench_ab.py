#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""--ab PROGRAM: a dkbench program measured against another build of it in
pairs of worker processes (tests/ab_program.c built as itself, 20% slower
and without ab/second). A 20% slowdown is found in one invocation; a copy
of the program is not called faster or slower; a build saved with
--save-build is found by name; bad --ab values, a build lacking a
benchmark, and a program that is no dkbench program get one clear error;
the JSON of an A/B run serves as a baseline.

usage: check_bench_ab.py BASE SLOW DROP
"""
import atexit
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

base_built, slow_built, drop_built = sys.argv[1:4]
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)
results = os.path.join(tmp, "results")
failures = []
# Time only, the same on every machine; short runs of each process.
COMMON = ["-e", "", "--results-dir", results]


def copy(src, name):
    dst = os.path.join(tmp, name)
    shutil.copy2(src, dst)
    return "./" + name


base, slow, drop = copy(base_built, "base"), copy(slow_built, "slow"), copy(drop_built, "drop")
base_copy = copy(base_built, "base-copy")


def run(prog, *args, timeout=120):
    t0 = time.monotonic()
    p = subprocess.run([prog, *COMMON, *args], cwd=tmp, capture_output=True, text=True,
                       timeout=timeout)
    return p, time.monotonic() - t0


def check(cond, what, p=None):
    if not cond:
        failures.append(what + (f"\n  exit {p.returncode}\n  stdout: {p.stdout}\n  stderr: "
                                f"{p.stderr}" if p is not None else ""))
    return cond


def report(name):
    with open(os.path.join(tmp, name)) as f:
        return {r["name"]: r for r in json.load(f)["results"]}


def time_change(r):
    return next(m for m in r["measures"] if m["name"] == "time")["change"]


def errors(p):
    """stderr's lines but the one that says which events are not counted here."""
    return [ln for ln in p.stderr.splitlines() if "not measured here" not in ln]


# 1. 20% slower, with the default number of pairs: regressed, in one run.
p, secs = run(slow, "--ab", base, "--json", "slow.json", "ab/first")
print(f"slow --ab base, default pairs: {secs:.2f} s")
if check(p.returncode == 0, "slow --ab base: exit 0", p):
    r = report("slow.json")["ab/first"]
    c = time_change(r)
    check(c is not None and c["basis"] == "pairs" and c["verdict"] == "regressed"
          and c["rel"]["lo"] > 0.1, f"slow --ab base: a regression of 10% or more in pairs: {c}")
    check(r["processes"] >= 20, f"slow --ab base: at least 20 pairs, got {r['processes']}")
    check(", paired, resolves +-" in p.stdout and "Performance has regressed." in p.stdout,
          "slow --ab base: the terminal says paired and regressed", p)
    print(f"  {r['processes']} pairs, change {c['rel']}")

# --processes 30: exactly 30 processes of each, counted by the other's wrapper.
log = os.path.join(tmp, "started")
wrapper = os.path.join(tmp, "counting")
with open(wrapper, "w") as f:
    f.write(f'#!/bin/sh\necho x >> "{log}"\nexec "{os.path.join(tmp, "base")}" "$@"\n')
os.chmod(wrapper, 0o755)
p, secs = run(slow, "--ab", "./counting", "--processes", "30", "--json", "p30.json", "ab/first")
print(f"slow --ab base --processes 30: {secs:.2f} s")
if check(p.returncode == 0, "--processes 30: exit 0", p):
    r = report("p30.json")["ab/first"]
    t = next(m for m in r["measures"] if m["name"] == "time")
    with open(log) as f:
        started = len(f.read().splitlines())
    check(r["processes"] == 30 and len(t["processes"]["estimates"]) == 30 and started == 30,
          f"--processes 30: 30 of each, got {r['processes']} here, {started} of the other")
    check(time_change(r)["verdict"] == "regressed", "--processes 30: regressed")

# 2. The same build against a copy of itself: neither faster nor slower.
p, secs = run(base, "--ab", base_copy, "--processes", "20", "--noise", "0.05", "--json",
              "same.json")
print(f"base --ab copy --processes 20 (2 benchmarks): {secs:.2f} s")
if check(p.returncode == 0, "base --ab copy: exit 0", p):
    for name, r in report("same.json").items():
        c = time_change(r)
        check(c["basis"] == "pairs" and c["verdict"] not in ("improved", "regressed"),
              f"base --ab copy: {name}: no improved/regressed verdict: {c}")

# 3. A saved build, found by name in the results folder.
p, _ = run(base, "--save-build", "old", "--processes", "2", "ab/first")
saved = os.path.join(results, "old.build")
if check(p.returncode == 0 and os.path.isfile(saved), "--save-build old: results/old.build", p):
    mode = os.stat(saved).st_mode
    check(mode & stat.S_IXUSR and os.access(saved, os.X_OK), "old.build is executable")
    with open(saved, "rb") as a, open(os.path.join(tmp, "base"), "rb") as b:
        check(a.read() == b.read(), "old.build is a copy of the program")
p, _ = run(slow, "--ab", "old", "--processes", "3", "--json", "old.json", "ab/first")
if check(p.returncode == 0, "--ab old: exit 0", p):
    c = time_change(report("old.json")["ab/first"])
    check(c["basis"] == "pairs" and c["verdict"] == "regressed", f"--ab old: regressed: {c}")
    check(results + "/old.build" in p.stdout, "--ab old: names the saved build", p)

os.mkdir(os.path.join(tmp, "adir"))
for args, status, words in [
        (["--ab", "nosuch"], 1, [results, "--save-build nosuch"]),
        (["--ab", "/nonexistent/x"], 1, ["/nonexistent/x", "cannot run it"]),
        (["--ab", "./adir"], 1, ["./adir", "not a regular file"]),
        (["--ab", "x", "--baseline", "y"], 2, ["--ab", "--baseline"]),
        (["--ab", "./x", "--processes", "1"], 2, ["--ab", "--processes 1"])]:
    p, _ = run(base, *args)
    err = errors(p)
    check(p.returncode == status and len(err) == 1 and all(w in err[0] for w in words)
          and p.stdout == "", f"{' '.join(args)}: exit {status}, one line naming {words}", p)

# 4. The other build lacks ab/second: said once, naming it and the program;
# ab/first is still compared.
p, _ = run(base, "--ab", drop, "--processes", "3", "--json", "drop.json")
err = errors(p)
check(p.returncode == 1 and len(err) == 1 and "ab/second" in err[0] and drop in err[0]
      and "not in" in err[0], "--ab a build without ab/second: exit 1, one line naming both",
      p)
if os.path.exists(os.path.join(tmp, "drop.json")):
    rs = report("drop.json")
    check("ab/first" in rs and time_change(rs["ab/first"])["basis"] == "pairs",
          f"--ab a build without ab/second: ab/first compared ({sorted(rs)})")
else:
    check(False, "--ab a build without ab/second: the JSON report of ab/first is written", p)
# The other way round: a benchmark of the other's that this one lacks is no matter.
p, _ = run(drop, "--ab", base, "--processes", "2")
check(p.returncode == 0 and errors(p) == [], "drop --ab base: exit 0, no error", p)

# 5. Not a dkbench program: one clear error, no hang.
with open(os.path.join(tmp, "silent"), "w") as f:
    f.write("#!/bin/sh\nexit 0\n")
os.chmod(os.path.join(tmp, "silent"), 0o755)
for other in ["/bin/true", "./silent"]:
    try:
        p, _ = run(base, "--ab", other, "--processes", "2", "ab/first", timeout=60)
    except subprocess.TimeoutExpired:
        check(False, f"--ab {other}: still running after 60 s")
        continue
    err = errors(p)
    check(p.returncode == 1 and len(err) == 1 and other in err[0]
          and "did not act as a worker" in err[0], f"--ab {other}: exit 1, one line", p)

# 7. An A/B run's results saved as a baseline, and compared with later.
p, _ = run(slow, "--ab", base, "--processes", "3", "--save-baseline", "abrun", "ab/first")
if check(p.returncode == 0, "--ab with --save-baseline: exit 0", p):
    p, _ = run(slow, "--baseline", "abrun", "--processes", "3", "--json", "again.json",
               "ab/first")
    if check(p.returncode == 0 and errors(p) == [], "--baseline of an A/B run: exit 0", p):
        c = time_change(report("again.json")["ab/first"])
        check(c is not None and c["basis"] == "processes",
              f"--baseline of an A/B run: compared across processes: {c}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
