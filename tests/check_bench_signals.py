#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""A dkbench program (dk_bench_main) that a signal ends while it holds the
counters gives them back first, as dkperf.h asks of every program that holds
a sampler: on the simulated frameworks nothing is left forced or counting,
and the program still ends by the signal. A closed stdout makes the write
fail (SIGPIPE is ignored meanwhile) instead of ending it with the counters
held.

usage: check_bench_signals.py BENCH_PROGRAM SIM_ROOT
"""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

prog, sim_root = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)  # on every exit, a failed check's too
state = os.path.join(tmp, "state")
failures = []


def sim_state():
    got = {}
    with open(state) as f:
        for line in f:
            k, _, v = line.partition(" ")
            got[k] = v.strip()
    return got


def held():
    st = sim_state()
    return [k for k in ("force_all_ctrs", "counting", "thread_counting")
            if st.get(k, "0") not in ("0", "0x0")]


def start(stdout, more=()):
    with open(state, "w") as f:
        f.write("force_all_ctrs 0\n")
    env = dict(os.environ, DKPERF_FRAMEWORK_ROOT=sim_root, DKPERF_SIM_STATE=state)
    return subprocess.Popen([prog, "--time", "5", "--warm-up", "0.5", "--results-dir", tmp,
                             *more],
                            env=env, stdout=stdout, stderr=subprocess.PIPE, cwd=tmp)


def wait_held(p):
    end = time.monotonic() + 20
    while time.monotonic() < end and p.poll() is None:
        if sim_state().get("counting", "0") not in ("0", "0x0"):
            return True
        time.sleep(0.01)
    return False


for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1, signal.SIGALRM, signal.SIGVTALRM,
            signal.SIGPROF):
    p = start(subprocess.DEVNULL)
    name = signal.Signals(sig).name
    if not wait_held(p):
        p.kill()
        p.communicate()
        failures.append(f"{name}: the program never took the counters")
        continue
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        failures.append(f"{name}: still running 30 s after the signal")
        continue
    if p.returncode != -sig:
        failures.append(f"{name}: ended with {p.returncode}, expected to end by the signal\n"
                        + err.decode(errors="replace"))
    if held():
        failures.append(f"{name}: left behind: {', '.join(held())} ({sim_state()})")

# A run cut short saves no baseline and writes no report: the results
# folder and the report files it made for them are gone again.
results = os.path.join(tmp, "new-results")
report = os.path.join(tmp, "new-report.json")
p = start(subprocess.DEVNULL, ["--results-dir", results, "--save-baseline", "cut",
                               "--json", report])
if not wait_held(p):
    p.kill()
    p.communicate()
    failures.append("--save-baseline: the program never took the counters")
else:
    p.send_signal(signal.SIGINT)
    try:
        p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
    left = [f for f in (results, report) if os.path.exists(f)]
    if left:
        failures.append(f"--save-baseline cut short by SIGINT left {', '.join(left)} behind")

# stdout is a pipe with no reader: the first benchmark's block cannot be
# written while the counters are held.
r, w = os.pipe()
os.close(r)
p = start(w)
os.close(w)
try:
    _, err = p.communicate(timeout=60)
    if p.returncode != 1:
        failures.append(f"stdout closed: ended with {p.returncode}, expected exit 1\n"
                        + err.decode(errors="replace"))
except subprocess.TimeoutExpired:
    p.kill()
    p.communicate()
    failures.append("stdout closed: still running after 60 s")
if held():
    failures.append(f"stdout closed: left behind: {', '.join(held())}")

for f in failures:
    print("FAIL:", f, file=sys.stderr)
if not failures:
    print("a signal ends a dkbench program only once its counters are given back")
sys.exit(1 if failures else 0)
