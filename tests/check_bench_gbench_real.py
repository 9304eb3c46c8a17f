# SPDX-License-Identifier: MIT OR Apache-2.0
"""google's compare.py (Debian's libbenchmark-tools) on dkbench programs.

  real TTA_GBENCH TTA_DKBENCH WORKDIR: the same two bodies measured by
    google benchmark and by dkbench (--benchmark_out, 9 repetitions each):
    compare.py compares the two files without a warning, with its U test;
    the two contexts hold the same keys (ours adds dkbench_backend and
    dkbench_cpu) and the same facts of the machine.
  run PROGRAM WORKDIR: compare.py runs the dkbench program itself, as
    `compare.py benchmarks ./p ./p --benchmark_repetitions=9` (every row
    and a U test per benchmark, no warning) and `compare.py filters ./p A B`.

usage: check_bench_gbench_real.py real|run ARGS...
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


def compare(*args, cwd=None):
    r = subprocess.run([PYTHON, COMPARE, "--no-color", *args], cwd=cwd,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout)
    if r.returncode != 0 or "WARNING" in r.stdout or "Traceback" in r.stdout:
        fail(f"compare.py {' '.join(args)} exited {r.returncode} or warned")
    # Its table, after what the programs it ran printed.
    lines = r.stdout.splitlines()
    heads = [i for i, ln in enumerate(lines) if ln.startswith("Benchmark ")]
    return lines[heads[-1] + 1:] if heads else []


if not (os.path.exists(COMPARE) and os.access(PYTHON, os.X_OK)):
    if os.environ.get("CI", "") not in ("", "0", "false"):
        fail(f"{COMPARE} is missing (scripts/setup.sh --ci installs libbenchmark-tools)")
    print(f"skipped: {COMPARE} or {PYTHON} is missing")
    sys.exit(77)

if sys.argv[1] == "run":
    prog, work = os.path.abspath(sys.argv[2]), sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    shutil.copy(prog, os.path.join(work, "bench_example"))
    lines = compare("benchmarks", "./bench_example", "./bench_example",
                    "--benchmark_repetitions=9", "--benchmark_min_time=0.01", cwd=work)
    for name in ("sum/forward", "sum/strided"):
        rows = [ln for ln in lines if ln.split()[:1] == [name]]
        utest = [ln for ln in lines if ln.startswith(name + "_pvalue")
                 and "U Test, Repetitions: 9 vs 9" in ln]
        aggs = [ln.split()[0] for ln in lines if ln.startswith(name + "_")]
        if len(rows) != 9 or len(utest) != 1 or aggs != [
                name + s for s in ("_pvalue", "_mean", "_median", "_stddev", "_cv")]:
            fail(f"compare.py benchmarks: {name}: {len(rows)} rows, U test {utest}, {aggs}")
    lines = compare("filters", "./bench_example", "sum/forward", "sum/strided",
                    "--benchmark_min_time=0.01", cwd=work)
    rows = [ln.split()[0] for ln in lines if ln.startswith("[sum/forward vs. sum/strided]")]
    if len(rows) != 1:
        fail(f"compare.py filters: rows {rows}")
    shutil.rmtree(work)
    sys.exit(0)

gbench, dkbench, work = sys.argv[2:5]
if not (os.path.exists(COMPARE) and os.access(PYTHON, os.X_OK)):
    if os.environ.get("CI", "") not in ("", "0", "false"):
        fail(f"{COMPARE} is missing (scripts/setup.sh --ci installs libbenchmark-tools)")
    print(f"skipped: {COMPARE} or {PYTHON} is missing")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
g, d = os.path.join(work, "g.json"), os.path.join(work, "d.json")
for cmd in ([gbench, f"--benchmark_out={g}", "--benchmark_out_format=json",
             "--benchmark_min_time=0.02", "--benchmark_repetitions=9"],
            [dkbench, f"--benchmark_out={d}", "--benchmark_out_format=json",
             "--benchmark_min_time=0.02", "--benchmark_repetitions=9"]):
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr}")

lines = compare("benchmarks", g, d)
for name in ("body/short", "body/long"):
    rows = [ln for ln in lines if ln.split()[:1] == [name]]
    utest = [ln for ln in lines if ln.startswith(name + "_pvalue")
             and "U Test, Repetitions: 9 vs 9" in ln]
    if len(rows) != 9 or len(utest) != 1:
        fail(f"compare.py's rows of {name}: {len(rows)}, U test {utest}")

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
