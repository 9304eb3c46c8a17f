#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf bench and a dkbench program are one engine: given the same runs
and the same baseline, they give the same estimates and the same change
(the same median, interval, p-value and verdict).

dkperf bench runs a command against a baseline it saved and exports every
run (--export-json); bench_replay, a dkbench program whose external body
replays those runs, is run by dk_bench_main against the same baseline. The
runs of a process are never the same twice (wall time, and here counts
too), so the two are compared on the same samples: what differs between
the tools can then only be the method, and any difference is a failure,
whatever the load of the machine.

usage: check_bench_engine.py DKPERF BENCH_REPLAY COMMAND
"""
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

dkperf, replay, command = sys.argv[1], sys.argv[2], sys.argv[3]
tmp = tempfile.mkdtemp(prefix="dkperf-engine-")
atexit.register(shutil.rmtree, tmp, True)
env = dict(os.environ)
sim = bool(env.get("DKPERF_FRAMEWORK_ROOT"))
events = "instructions,cycles" if sim else "task-clock,page-faults"
rdir = os.path.join(tmp, "results")
RUNS = 12


def fail(msg):
    sys.exit(f"check_bench_engine: {msg}")


def run(args):
    p = subprocess.run(args, capture_output=True, env=env, text=True)
    if p.returncode != 0:
        fail(f"{args}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


common = ["-r", str(RUNS), "-e", events, "--results-dir", rdir]
mode = ["-N"] if sim else []
run([dkperf, "bench"] + mode + common + ["--save-baseline", "base", "--", command])
now_json = os.path.join(tmp, "now.json")
report = run([dkperf, "bench"] + mode + common + ["--baseline", "base", "--export-json", now_json,
                                                  "--", command])
with open(now_json) as f:
    now = json.load(f)["results"][0]
counted = [c for c in now["counters"] if c["counted_runs"] == RUNS]
if not counted:
    fail(f"no event counted in every run: {now['counters']}")

# The runs as dkperf bench saw them, replayed by a dkbench program.
runs_file = os.path.join(tmp, "runs.txt")
with open(runs_file, "w") as f:
    f.write(now["command"] + "\n" + " ".join(c["name"] for c in counted) + "\n")
    for i, t in enumerate(now["times"]):
        f.write(repr(t) + "".join(" %d" % c["values"][i] for c in counted) + "\n")
dkb_json = os.path.join(tmp, "dkbench.json")
run([replay, runs_file, "--samples", str(RUNS), "--results-dir", rdir, "--baseline", "base",
     "--json", dkb_json, "-q"])
with open(dkb_json) as f:
    doc = json.load(f)
res = doc["results"][0]
if res["name"] != command or res["n_samples"] != RUNS:
    fail(f"the dkbench program ran {res['name']!r} {res['n_samples']} times")
measures = {m["name"]: m for m in res["measures"]}


def close(a, b, what):
    # dkperf bench prints seconds from libdkbench's ns: one rounding apart.
    if not abs(a - b) <= 1e-12 * max(abs(a), abs(b)):
        fail(f"{what}: dkperf bench {a!r}, dkbench {b!r}")


def compare(label, tool, change, m, scale):
    if m["estimator"] != "median":
        fail(f"{label}: dkbench's estimator is {m['estimator']}")
    for key in ("mean", "stddev", "median", "min", "max"):
        close(tool[key] * scale, m["per_iter"][key], f"{label} {key}")
    mild = m["outliers"]["low_mild"] + m["outliers"]["high_mild"]
    severe = m["outliers"]["low_severe"] + m["outliers"]["high_severe"]
    if tool["outliers"] != {"mild": mild, "severe": severe}:
        fail(f"{label} outliers: {tool['outliers']} against {mild} mild, {severe} severe")
    # The same change, bit for bit: the same samples, seed and baseline.
    dc = m["change"]
    if change is None and dc is None:
        return None  # neither compared it (a median of 0 has no relative change)
    if change is None or dc is None:
        fail(f"{label}: compared by one only (dkperf bench {change}, dkbench {dc})")
    got = (change["relative"], change["lo"], change["hi"], change["p_value"], change["verdict"])
    want = (dc["rel"]["point"], dc["rel"]["lo"], dc["rel"]["hi"], dc["p_value"], dc["verdict"])
    if got != want:
        fail(f"{label} change: dkperf bench {got}, dkbench {want}")
    return want


wall = compare("wall time", now, now["change"]["time"], measures["time"], 1e9)
if wall is None:
    fail("the wall time was not compared")
for c in counted:
    compare(c["name"], c, now["change"][c["name"]], measures[c["name"]], 1)
# What dkperf bench printed is that change too.
line = [l for l in report.split("Baseline 'base':")[1].splitlines() if "wall time" in l][0]
m = re.search(r"p = ([0-9.]+)\s+(.*)$", line)
if not m or abs(float(m.group(1)) - wall[3]) > 5e-4 or m.group(2).strip() != wall[4]:
    fail(f"printed {line!r}, dkbench {wall}")
print("check_bench_engine: ok")
