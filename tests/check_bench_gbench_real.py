#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""The same two bodies measured by google benchmark (tta-gbench) and by
dkbench (tta-dkbench --gbench-json): google's compare.py compares the two
files without a warning, and the two contexts hold the same keys (ours
adds dkbench_backend and dkbench_cpu) and the same facts of the machine.

usage: check_bench_gbench_real.py TTA_GBENCH TTA_DKBENCH WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

COMPARE = "/usr/share/benchmark/compare.py"
PYTHON = "/usr/bin/python3"  # Debian's, with numpy and scipy; not whatever PATH finds


def fail(msg):
    sys.exit(f"check_bench_gbench_real: {msg}")


gbench, dkbench, work = sys.argv[1:4]
if not (os.path.exists(COMPARE) and os.access(PYTHON, os.X_OK)):
    if os.environ.get("CI", "") not in ("", "0", "false"):
        fail(f"{COMPARE} is missing (scripts/setup.sh --ci installs libbenchmark-tools)")
    print(f"skipped: {COMPARE} or {PYTHON} is missing")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
g, d = os.path.join(work, "g.json"), os.path.join(work, "d.json")
for cmd in ([gbench, f"--benchmark_out={g}", "--benchmark_out_format=json",
             "--benchmark_min_time=0.05"],
            [dkbench, "--time", "0.1", "--gbench-json", d]):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr}")

r = subprocess.run([PYTHON, COMPARE, "--no-color", "benchmarks", g, d],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
print(r.stdout)
if r.returncode != 0 or "WARNING" in r.stdout or "Traceback" in r.stdout:
    fail(f"compare.py exited {r.returncode} or warned")
rows = [line.split()[0] for line in r.stdout.splitlines() if line.startswith("body/")]
if rows != ["body/short", "body/long"]:
    fail(f"compare.py's rows are {rows}, not body/short and body/long")

cg = json.load(open(g))["context"]
cd = json.load(open(d))["context"]
ours = {"dkbench_backend", "dkbench_cpu"}
if set(cg) != set(cd) - ours:
    fail(f"context keys differ: google benchmark {sorted(cg)}, dkbench {sorted(cd)}")
for k in ("host_name", "num_cpus", "mhz_per_cpu", "caches"):
    if cg.get(k) != cd.get(k):
        fail(f"context.{k}: google benchmark {cg.get(k)!r}, dkbench {cd.get(k)!r}")
if "cpu_scaling_enabled" in cg and cg["cpu_scaling_enabled"] != cd.get("cpu_scaling_enabled"):
    fail("context.cpu_scaling_enabled differs")
if len(cd["load_avg"]) != len(cg["load_avg"]) or not cd["dkbench_cpu"]:
    fail("context.load_avg or dkbench_cpu")
shutil.rmtree(work)
