#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf bench end to end: the JSON export parsed strictly against its schema,
the CSV and Markdown exports, baselines saved and compared, --prepare and -w
run as often as asked, and nothing left acquired after a run or an error.

usage: check_bench.py DKPERF WORK_COMMAND   (DKPERF_FRAMEWORK_ROOT etc. from the environment;
       with DKPERF_SIM_STATE unset, a state file is used when the frameworks are simulated)
"""
import atexit
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

dkperf, work = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp(prefix="dkperf-bench-")
atexit.register(shutil.rmtree, tmp, True)  # on every exit, a failed check's too
env = dict(os.environ)
sim = bool(env.get("DKPERF_FRAMEWORK_ROOT"))
state = os.path.join(tmp, "sim-state")
if sim:
    env["DKPERF_SIM_STATE"] = state
privileged = env.get("DKPERF_SIM_PRIVILEGED", "1") != "0"


def fail(msg):
    sys.exit(f"check_bench: {msg}")


def bench(args, want_rc=0, cwd=None):
    p = subprocess.run([dkperf, "bench"] + args, capture_output=True, env=env, cwd=cwd)
    if p.returncode != want_rc:
        fail(f"dkperf bench {args}: exit {p.returncode}, want {want_rc}\n{p.stdout.decode()}\n{p.stderr.decode()}")
    check_released(args)
    return p.stdout.decode("utf-8", errors="strict"), p.stderr.decode()


def check_released(args):
    """On the simulated Mac, nothing may stay forced or counting afterwards."""
    if not sim or not os.path.exists(state):
        return
    with open(state) as f:
        text = f.read()
    for line in text.splitlines():
        key, value = line.split()
        if int(value, 0) != 0:
            fail(f"dkperf bench {args} left {line!r} behind:\n{text}")


def load_json(path):
    with open(path, "rb") as f:
        data = f.read()
    return json.loads(data.decode("utf-8", errors="strict"), strict=True)


def need(obj, key, kinds, where):
    if key not in obj:
        fail(f"{where}: no field {key!r}")
    if not isinstance(obj[key], kinds):
        fail(f"{where}: {key!r} is {type(obj[key]).__name__}")
    return obj[key]


NUM = (int, float)
events = (["-e", "task-clock,page-faults"] if not sim else
          ["-e", "instructions,cycles,branches" if privileged else "instructions,cycles"])
slow = work + " --burn-ms 100"
out_json = os.path.join(tmp, "r.json")
out_csv = os.path.join(tmp, "r.csv")
out_md = os.path.join(tmp, "r.md")
marks = os.path.join(tmp, "prepared")
# On a Mac the counters are the command's process alone, not what it starts:
# there the commands run directly (-N), and --prepare through sh by its words.
mode = ["-N", "--prepare", f"sh -c 'echo x >> {marks}'"] if sim else \
       ["-S", "sh", "--prepare", f"echo x >> {marks}"]
stdout, _ = bench(["-r", "4", "-w", "2"] + mode + events +
                  ["--export-json", out_json, "--export-csv", out_csv, "--export-markdown", out_md,
                   "--", work, slow])

# --prepare before every run, warm-up runs included: 2 commands x (2 + 4).
with open(marks) as f:
    prepared = len(f.read().split())
if prepared != 12:
    fail(f"--prepare ran {prepared} times, want 12")

doc = load_json(out_json)
if need(doc, "schema", str, "top") != "dkperf-bench/1":
    fail(f"schema {doc['schema']}")
need(doc, "backend", str, "top")
need(doc, "scope", str, "top")
if need(doc, "shell", (str, type(None)), "top") != (None if sim else "sh"):
    fail(f"shell is {doc['shell']}")
if need(doc, "warmup", int, "top") != 2:
    fail("warmup is not 2")
evs = need(doc, "events", list, "top")
names = events[1].split(",")
if [e["name"] for e in evs] != names:
    fail(f"events {evs}")
for e in evs:
    for key, kinds in [("native", str), ("supported", bool), ("why", str)]:
        need(e, key, kinds, f"event {e['name']}")
    need(e, "unit", (str, type(None)), "event")
results = need(doc, "results", list, "top")
if [r["command"] for r in results] != [work, slow]:
    fail(f"commands {[r['command'] for r in results]}")
for r in results:
    where = f"result {r['command']}"
    if need(r, "runs", int, where) != 4:
        fail(f"{where}: {r['runs']} runs, want 4 (-r 4)")
    for key in ("mean", "stddev", "median", "min", "max", "user", "system"):
        need(r, key, NUM, where)
    times = need(r, "times", list, where)
    if len(times) != 4 or not all(isinstance(t, NUM) and t > 0 for t in times):
        fail(f"{where}: times {times}")
    # libdkbench keeps times in ns: seconds come back within a rounding.
    if not (abs(r["min"] - min(times)) <= 1e-12 * r["min"] and
            abs(r["max"] - max(times)) <= 1e-12 * r["max"]):
        fail(f"{where}: min/max do not match the times")
    if abs(r["mean"] - sum(times) / 4) > 1e-9 * r["mean"]:
        fail(f"{where}: mean {r['mean']} is not the mean of the times")
    if need(r, "exit_codes", list, where) != [0, 0, 0, 0]:
        fail(f"{where}: exit codes {r['exit_codes']}")
    out = need(r, "outliers", dict, where)
    need(out, "mild", int, where)
    need(out, "severe", int, where)
    ctrs = need(r, "counters", list, where)
    if [c["name"] for c in ctrs] != names:
        fail(f"{where}: counters {ctrs}")
    for c, e in zip(ctrs, evs):
        values = need(c, "values", list, where)
        if len(values) != 4:
            fail(f"{where} {c['name']}: {len(values)} values")
        counted = [v for v in values if v is not None]
        if need(c, "counted_runs", int, where) != len(counted):
            fail(f"{where} {c['name']}: counted_runs")
        if e["supported"] and len(counted) != 4:
            fail(f"{where} {c['name']}: supported but counted in {len(counted)} runs")
        if not e["supported"] and (counted or c["mean"] is not None):
            fail(f"{where} {c['name']}: not supported but has values")
        if counted:
            if abs(c["mean"] - sum(counted) / len(counted)) > 1e-9 * max(1, c["mean"]):
                fail(f"{where} {c['name']}: mean")
            if c["min"] != min(counted) or c["max"] != max(counted):
                fail(f"{where} {c['name']}: min/max")
# What each backend must count.
supported = {e["name"]: e["supported"] for e in evs}
want = (["task-clock", "page-faults"] if not sim else ["instructions", "cycles"])
for name in want:
    if not supported.get(name):
        fail(f"{name} not counted: {evs}")
if sim:
    ins = [r["counters"][0]["mean"] for r in results]
    if not ins[0] > 0 or not ins[1] > ins[0]:
        fail(f"instructions {ins}: the longer burn must retire more")
    if "retired" not in stdout or "fewer instructions than" not in stdout:
        fail(f"no instruction comparison in:\n{stdout}")
if "times faster than" not in stdout:
    fail(f"no time comparison in:\n{stdout}")

with open(out_csv, newline="") as f:
    rows = list(csv.reader(f, strict=True))
header = rows[0]
if header[:8] != ["command", "mean", "stddev", "median", "user", "system", "min", "max"]:
    fail(f"CSV header {header}")
if len(rows) != 3 or any(len(r) != len(header) for r in rows):
    fail(f"CSV rows {rows}")
if rows[1][0] != work or abs(float(rows[1][1]) - results[0]["mean"]) > 1e-6 * results[0]["mean"]:
    fail(f"CSV row {rows[1]}")
with open(out_md) as f:
    md = f.read().splitlines()
if not md[0].startswith("| Command | Mean [") or len(md) != 4 or "1.00" not in "".join(md[2:]):
    fail(f"Markdown {md}")

# Baselines: libdkbench's (schema dkbench-1, one sample a run), saved,
# then compared by its test of the medians; a doctored baseline shows a
# regression.
rdir = os.path.join(tmp, "results")
bench(["-r", "5"] + events + ["--results-dir", rdir, "--save-baseline", "base", "--", work])
base = load_json(os.path.join(rdir, "base.json"))
if base["schema"] != "dkbench-1" or base["results"][0]["n_samples"] != 5 or \
        base["results"][0]["name"] != work:
    fail(f"baseline: {base['schema']} {base['results'][0]['n_samples']} runs")
stdout, _ = bench(["-r", "5"] + events + ["--results-dir", rdir, "--baseline", "base", "--", work])
section = stdout.split("Baseline 'base':")[1] if "Baseline 'base':" in stdout else ""
if "wall time" not in section or " p = " not in section:
    fail(f"no baseline comparison with a p-value:\n{stdout}")
# Commands on one side only are named, each way.
stdout, _ = bench(["-r", "2"] + events + ["--results-dir", rdir, "--baseline", "base", "--", "true"])
if f"Not in baseline 'base': 'true'" not in stdout or \
        f"In baseline 'base' but not run: '{work}'" not in stdout:
    fail(f"commands missing on either side are not named:\n{stdout}")
# Cut the baseline's runs a hundredfold: everything now reads as
# regressed. (12 runs now: the bootstrap of a median of 5 runs, one of
# them slowed by a loaded machine, can put the p-value above 0.05.)
for m in base["results"][0]["measures"]:
    m["totals"] = [t / 100 if t is not None else None for t in m["totals"]]
with open(os.path.join(rdir, "half.json"), "w") as f:
    json.dump(base, f)
stdout, _ = bench(["-r", "12"] + events + ["--results-dir", rdir, "--baseline", "half", "--", work])
section = stdout.split("Baseline 'half':")[1]
lines = [l for l in section.splitlines() if "%" in l]
if not lines or not all("regressed" in l for l in lines):
    fail(f"a hundredfold median is not reported as regressed:\n{section}")
with open(os.path.join(rdir, "bad.json"), "w") as f:
    f.write('{"schema": "dkbench-1", "results": [1,]}')
_, err = bench(["--results-dir", rdir, "--baseline", "bad", "--", work], 1)
if "bad.json" not in err or "byte 38" not in err or len(err.splitlines()) != 1:
    fail(f"bad baseline: {err}")

# A baseline an older dkperf bench saved (its --export-json document,
# schema dkperf-bench/1) is read: its runs are the samples.
old = os.path.join(tmp, "old.json")
bench(["-r", "6"] + events + ["--export-json", old, "--", work])
shutil.copy(old, os.path.join(rdir, "old.json"))
stdout, _ = bench(["-r", "6"] + events + ["--results-dir", rdir, "--baseline", "old", "--", work])
section = stdout.split("Baseline 'old':")[1] if "Baseline 'old':" in stdout else ""
if "wall time" not in section or " p = " not in section:
    fail(f"an older dkperf bench baseline is not compared:\n{stdout}")
# One without its runs is refused, saying how to save it again.
doc_old = load_json(old)
del doc_old["results"][0]["times"]
with open(os.path.join(rdir, "norun.json"), "w") as f:
    json.dump(doc_old, f)
_, err = bench(["--results-dir", rdir, "--baseline", "norun", "--", work], 1)
if "dkperf-bench/1" not in err or "--save-baseline" not in err or len(err.splitlines()) != 1:
    fail(f"an older baseline without runs: {err}")
# In the older results folder, with the default folder: named, with what to do.
cwd = os.path.join(tmp, "cwd")
os.makedirs(os.path.join(cwd, "dkperf-bench-results"))
shutil.copy(old, os.path.join(cwd, "dkperf-bench-results", "old.json"))
_, err = bench(["--baseline", "old", "--", work], 1, cwd=cwd)
if "dkperf-bench-results/old.json" not in err or "--results-dir dkperf-bench-results" not in err:
    fail(f"a baseline in the older folder: {err}")
stdout, _ = bench(["-r", "6"] + events + ["--results-dir", "dkperf-bench-results",
                                          "--baseline", "old", "--", work], cwd=cwd)
if " p = " not in stdout:
    fail(f"a baseline in the older folder, read with --results-dir:\n{stdout}")

if sim:
    # A run on macOS is posix_spawn, a wait that does not reap, one
    # proc_pid_rusage of the zombie and the reap: four more runs make four
    # more calls. (Forking each command held and opening counters on it
    # read it at least twice a run.) The counts are the command's from its
    # first instruction: the simulated rate of its own CPU time.
    def rusage_calls(runs):
        calls = os.path.join(tmp, "calls-%d" % runs)
        env["DKPERF_SIM_CALLS"] = calls
        try:
            out, _ = bench(["-N", "-r", str(runs), "-e", "instructions,cycles",
                            "--export-json", os.path.join(tmp, "calls.json"), "--", slow])
        finally:
            del env["DKPERF_SIM_CALLS"]
        n = 0
        with open(calls) as f:
            for line in f:
                name, count = line.split()
                if name == "proc_pid_rusage":
                    n += int(count)
        return n, load_json(os.path.join(tmp, "calls.json"))["results"][0]
    (two, _), (six, r6) = rusage_calls(2), rusage_calls(6)
    if six - two != 4:
        fail(f"proc_pid_rusage called {two} times for 2 runs and {six} for 6: not once a run")
    cpu = r6["user"] + r6["system"]
    ins = r6["counters"][0]["mean"]
    # 7.5 instructions a ns of CPU time; the kernel's CPU times tick in 10 ms.
    if not abs(ins / 7.5e9 - cpu) <= 0.011 + 0.05 * cpu:
        fail(f"{ins} instructions a run for {cpu} s of CPU a run (7.5 a ns expected)")
    # A modifier that proc_pid_rusage cannot honour is still refused, by name.
    _, err = bench(["-r", "2", "-e", "instructions:u", "--", work], 1)
    if ":u" not in err or "proc_pid_rusage" not in err:
        fail(f"instructions:u on macOS: {err}")

# Errors leave nothing behind (checked by bench() on the simulator).
bench(["-e", "no-such-event", "--", work], 2)
bench(["-r", "2", "--", "/nonexistent/command"], 127)
bench(["-r", "2", "-S", "sh", "--", "exit 3"], 1)
print("check_bench: ok")
