#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""A dkbench program takes google benchmark's command line
(tests/bench_gbench_flags_program.c): --benchmark_filter (and -REGEX),
--benchmark_list_tests, --benchmark_repetitions as processes,
--benchmark_min_time in both forms, --benchmark_enable_random_interleaving's
order, --benchmark_out and --benchmark_format=json, --benchmark_perf_counters,
the line for a flag it cannot honour, and an unknown flag or a bad value
with google benchmark's exit status.

usage: check_bench_gbench_flags.py PROGRAM
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

prog = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)
failures = []
QUICK = ["--warm-up", "0.005", "--benchmark_min_time=0.005"]
ALL = ["BM_one", "BM_two", "BM_three"]


def fail(what):
    failures.append(what)


def run(args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("DKBENCH_", "GBF_"))}
    e.update(env or {})
    return subprocess.run([prog, *args], env=e, cwd=tmp, capture_output=True, text=True,
                          timeout=120)


def results(args, env=None):
    """Run with --json; (process, {name: result}) ."""
    path = os.path.join(tmp, "r.json")
    p = run([*QUICK, "-q", "--json", path, *args], env)
    doc = {}
    if os.path.exists(path):
        with open(path) as f:
            doc = {r["name"]: r for r in json.load(f)["results"]}
        os.unlink(path)
    return p, doc


def check_lines(p, status, want, what):
    if p.returncode != status:
        fail(f"{what}: exit status {p.returncode}, not {status}: {p.stderr}")
    lines = p.stderr.splitlines()
    if len([l for l in lines if want in l]) != 1:
        fail(f"{what}: no one line saying {want!r}: {p.stderr!r}")


# Filter and list, as google benchmark spells them; a bool flag alone is true.
for args, want in [(["--benchmark_list_tests"], ALL),
                   (["--benchmark_list_tests=true", "--benchmark_filter=t"], ["BM_two", "BM_three"]),
                   (["--benchmark_list_tests=yes", "--benchmark_filter=-t"], ["BM_one"]),
                   (["--benchmark_list_tests", "--benchmark_filter=all"], ALL),
                   (["--benchmark_list_tests", "--benchmark_filter="], ALL),
                   # google benchmark: "all" is all, "-all" all but names holding "all".
                   (["--benchmark_list_tests", "--benchmark_filter=-all"], ALL),
                   (["--benchmark_list_tests", "--benchmark_filter=-"], []),
                   (["--benchmark_list_tests=1", "--benchmark_filter=^BM_(one|two)$"],
                    ["BM_one", "BM_two"])]:
    p = run(args)
    if p.returncode != 0 or p.stdout.splitlines() != want:
        fail(f"{args}: {p.returncode} {p.stdout!r}, not {want}: {p.stderr}")
# A filter that matches nothing, or does not compile: one line, and exit
# status 0 as google benchmark gives (dkbench's own REGEX: 1 and 2).
check_lines(run([*QUICK, "--benchmark_filter=zzz"]), 0, "no benchmark matches", "no match")
check_lines(run([*QUICK, "--benchmark_filter=("]), 0, "not a POSIX regular expression",
            "a bad regex")
check_lines(run([*QUICK, "zzz"]), 1, "no benchmark matches", "no match of REGEX")
check_lines(run([*QUICK, "("]), 2, "not a POSIX regular expression", "a bad REGEX")
# Falsy words: no list, a run (filtered to one, quickly).
for word in ["false", "0", "no", "OFF", "f", "N"]:
    p = run([f"--benchmark_list_tests={word}", "--benchmark_filter=one", "--processes", "1",
             *QUICK])
    if p.returncode != 0 or "BM_one" not in p.stdout or "time:" not in p.stdout:
        fail(f"--benchmark_list_tests={word} listed instead of running: {p.stdout!r}")

# Repetitions: that many processes, each with its share of min_time.
p, doc = results(["--benchmark_repetitions=3", "--benchmark_filter=one"])
if p.returncode != 0 or list(doc) != ["BM_one"] or doc["BM_one"]["processes"] != 3:
    fail(f"--benchmark_repetitions=3: {p.returncode} {p.stderr} "
         f"{ {k: v.get('processes') for k, v in doc.items()} }")
p = run(["--benchmark_repetitions=3", "--processes", "4"])
check_lines(p, 2, "--benchmark_repetitions=3 and --processes 4", "repetitions and processes")
p = run(["--benchmark_repetitions=3", "--processes", "3", *QUICK, "--benchmark_filter=two", "-q"])
if p.returncode != 0:
    fail(f"--benchmark_repetitions=3 --processes 3: {p.returncode} {p.stderr}")

# min_time: Nx is exactly N measured iterations in each process.
p, doc = results(["--benchmark_repetitions=2", "--benchmark_min_time=1000x",
                  "--benchmark_filter=one"])
r = doc.get("BM_one")
if p.returncode != 0 or r is None or sum(r["iterations"]) != 2000 or r["processes"] != 2:
    fail(f"--benchmark_min_time=1000x: {p.returncode} {p.stderr} "
         f"{r and (sum(r['iterations']), r['processes'])}")
# Seconds (1.7's float, later releases' "s"): the budget of each process.
for v in ["0.02", "0.02s"]:
    p, doc = results(["--processes", "2", f"--benchmark_min_time={v}", "--benchmark_filter=one",
                      "--precision", "1e-6"])
    r = doc.get("BM_one")
    # A process's share is 0.02 s (the default would be 0.1): what it
    # measured is near that, less what a loaded machine's warm-up took.
    if p.returncode != 0 or r is None or not 0.005 <= r["measure_s"] / 2 <= 0.06:
        fail(f"--benchmark_min_time={v}: {p.returncode} {p.stderr} {r and r['measure_s']}")

# 0 (or less, or nothing), as CI smoke runs give it: the least time, a run.
for v in ["0", "0s", "", "-1"]:
    p, doc = results(["--processes", "2", f"--benchmark_min_time={v}", "--benchmark_filter=one"])
    r = doc.get("BM_one")
    if p.returncode != 0 or r is None or r["measure_s"] > 0.1:
        fail(f"--benchmark_min_time={v}: {p.returncode} {p.stderr} {r and r['measure_s']}")

# Random interleaving: every (benchmark, repetition) in a seeded order.
def order(args):
    log = os.path.join(tmp, "order.log")
    p = run([*QUICK, "-q", "--benchmark_repetitions=4", *args], {"GBF_LOG": log})
    with open(log) as f:
        names = f.read().split()
    os.unlink(log)
    if p.returncode != 0:
        fail(f"{args}: {p.returncode} {p.stderr}")
    return names


plain = order([])
if plain != [n for n in ALL for _ in range(4)]:
    fail(f"without interleaving the processes ran {plain}")
mixed = order(["--benchmark_enable_random_interleaving"])
if sorted(mixed) != sorted(plain) or mixed == plain:
    fail(f"with interleaving the processes ran {mixed}")
if order(["--benchmark_enable_random_interleaving=true"]) != mixed:
    fail("interleaving: the same seed gave another order")
if order(["--benchmark_enable_random_interleaving", "--seed", "7"]) == mixed:
    fail("interleaving: another seed gave the same order")

# --benchmark_out (JSON by default) and --benchmark_format=json on stdout.
out = os.path.join(tmp, "gb.json")
p = run([*QUICK, "--benchmark_out=" + out, "--benchmark_filter=two", "--processes", "2"])
try:
    with open(out) as f:
        names = [b["name"] for b in json.load(f)["benchmarks"]]
    if p.returncode != 0 or "BM_two" not in names:
        fail(f"--benchmark_out: {p.returncode} {names}")
except (OSError, ValueError) as e:
    fail(f"--benchmark_out: {e}: {p.stderr}")
p = run([*QUICK, "--benchmark_format=json", "--benchmark_filter=two", "--processes", "2"])
try:
    if p.returncode != 0 or "BM_two" not in [b["name"] for b in json.loads(p.stdout)["benchmarks"]]:
        fail(f"--benchmark_format=json: {p.returncode} {p.stderr}")
except ValueError as e:
    fail(f"--benchmark_format=json: stdout is not JSON ({e}): {p.stdout[:200]!r}")
# The console and CSV layouts: on stdout (the machine's description on
# stderr, as google benchmark writes it), or in --benchmark_out's file.
p = run([*QUICK, "--benchmark_format=csv", "--benchmark_filter=two", "--processes", "1"])
rows = p.stdout.splitlines()
if (p.returncode != 0 or not rows or not rows[0].startswith("name,iterations,real_time,cpu_time,")
        or not any(r.startswith('"BM_two",') for r in rows) or "Run on (" not in p.stderr):
    fail(f"--benchmark_format=csv: {p.returncode} {p.stdout!r} {p.stderr!r}")
p = run([*QUICK, "--benchmark_format=console", "--benchmark_filter=two", "--processes", "2",
         "--benchmark_repetitions=2", "--benchmark_display_aggregates_only"])
table = [r.split()[0] for r in p.stdout.splitlines() if r.startswith("BM_")]
if (p.returncode != 0 or "Iterations" not in p.stdout or "Run on (" not in p.stderr
        or table != ["BM_two_mean", "BM_two_median", "BM_two_stddev", "BM_two_cv"]):
    fail(f"--benchmark_format=console with aggregates only: {p.returncode} {table} {p.stdout!r}")
for fmt, want in [("csv", "name,iterations,real_time"), ("console", "Run on (")]:
    p = run([*QUICK, "--benchmark_out=" + out, "--benchmark_out_format=" + fmt,
             "--benchmark_filter=two", "--processes", "1"])
    try:
        with open(out) as f:
            text = f.read()
    except OSError as e:
        text = str(e)
    if p.returncode != 0 or want not in text or "BM_two" not in text:
        fail(f"--benchmark_out_format={fmt}: {p.returncode} {text[:300]!r} {p.stderr!r}")
os.unlink(out)
# --benchmark_display_aggregates_only is for the display: the file keeps
# every repetition; --benchmark_report_aggregates_only is for both.
for flag, want in [("--benchmark_display_aggregates_only", ["iteration", "iteration"]),
                   ("--benchmark_report_aggregates_only", [])]:
    p = run([*QUICK, "--benchmark_out=" + out, "--benchmark_filter=two",
             "--benchmark_repetitions=2", flag])
    try:
        with open(out) as f:
            kinds = [b["run_type"] for b in json.load(f)["benchmarks"]]
    except (OSError, ValueError) as e:
        kinds = [str(e)]
    if p.returncode != 0 or [k for k in kinds if k == "iteration"] != want or "aggregate" not in kinds:
        fail(f"{flag}: the file holds {kinds}: {p.stderr}")
    os.unlink(out)
# --benchmark_min_time=1x: one sample of one iteration a repetition, each
# reported as what it measured (not 0: a process has no fit of one sample).
p = run([*QUICK, "--benchmark_format=json", "--benchmark_filter=two",
         "--benchmark_min_time=1x", "--benchmark_repetitions=3"])
try:
    reps = [b for b in json.loads(p.stdout)["benchmarks"] if b["run_type"] == "iteration"]
    if (p.returncode != 0 or [b["iterations"] for b in reps] != [1, 1, 1]
            or not all(b["real_time"] > 0 for b in reps)):
        fail(f"--benchmark_min_time=1x: {reps}")
except (ValueError, KeyError) as e:
    fail(f"--benchmark_min_time=1x: {e}: {p.stdout[:300]!r} {p.stderr!r}")
# Perf counters are reported under the names they were asked by.
p = run([*QUICK, "--benchmark_format=json", "--benchmark_filter=two", "--processes", "1",
         "--benchmark_perf_counters=Task-Clock"])
try:
    entry = json.loads(p.stdout)["benchmarks"][0]
    if p.returncode != 0 or not entry.get("Task-Clock", 0) > 0 or "task-clock" in entry:
        fail(f"--benchmark_perf_counters=Task-Clock: {entry}")
except (ValueError, IndexError, KeyError) as e:
    fail(f"--benchmark_perf_counters=Task-Clock: {e}: {p.stdout[:300]!r} {p.stderr!r}")

# Perf counters: google benchmark's names as our events, any case.
p, doc = results(["--benchmark_perf_counters=INSTRUCTIONS,Cycles,BRANCH-INSTRUCTIONS",
                  "--benchmark_filter=one", "--processes", "1"])
names = [m["name"] for m in doc.get("BM_one", {}).get("measures", [])]
if p.returncode != 0 or names[1:] != ["instructions", "cycles", "branches"]:
    fail(f"--benchmark_perf_counters: {p.returncode} {names} {p.stderr}")

# Flags not honoured: one line each, the run goes on.
for flag, word in [("--benchmark_context=a=b", "--benchmark_context"),
                   ("--benchmark_time_unit=ms", "--benchmark_time_unit"),
                   ("--benchmark_min_warmup_time=0.5", "--benchmark_min_warmup_time"),
                   ("--v=2", "--v")]:
    p = run([*QUICK, flag, "--benchmark_filter=one", "--processes", "2", "-q"])
    check_lines(p, 0, word + ": not honoured", flag)

# Unknown flags and bad values: google benchmark's messages and status.
for flag, status, want in [
        ("--benchmark_nope=1", 1, "unrecognized command-line flag: --benchmark_nope=1"),
        ("--benchmark_filter", 1, "unrecognized command-line flag: --benchmark_filter"),
        ("--benchmark_repetitions=abc", 1, "--benchmark_repetitions is expected to be a 32-bit"),
        ("--benchmark_repetitions=0", 1, "--benchmark_repetitions=0"),
        ("--benchmark_repetitions=99999999999", 1, "which overflows"),
        ("--benchmark_min_time=fast", 1, "--benchmark_min_time is expected"),
        ("--benchmark_min_time=0x", 1, "--benchmark_min_time is expected"),
        ("--benchmark_min_time=nan", 1, "--benchmark_min_time is expected"),
        ("--benchmark_min_time=1e300", 1, "--benchmark_min_time is expected"),
        ("--benchmark_min_time=0.5ms", 1, "--benchmark_min_time is expected"),
        ("--benchmark_min_warmup_time=x", 1, "--benchmark_min_warmup_time is expected"),
        ("--benchmark_format=xml", 0, "--benchmark_format=xml: expected console, json or csv"),
        ("--benchmark_out_format=yaml", 0, "--benchmark_out_format=yaml"),
        ("--benchmark_time_unit=h", 0, "--benchmark_time_unit=h"),
        ("--benchmark_color=", 0, "--benchmark_color=")]:
    p = run([flag])
    check_lines(p, status, want, flag)
    if "time:" in p.stdout:
        fail(f"{flag}: ran the benchmarks")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
