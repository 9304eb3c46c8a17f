#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf on a simulated Mac of many CPUs (DKPERF_SIM_NCPU; simulated, not
Apple hardware): `stat -a -A` prints a row per CPU (human and -x,), its
--per-level rows count the CPUs of each level and add up to the total, and
`record -a` at the default rate drains kperf's one trace buffer of every
CPU's records before it wraps (for SECONDS; 5 s was measured by hand, see
doc/BENCHMARKS.md), counting as lost only what the sim itself could not
take in. Nothing is left armed.

usage: check_many_cpus_sim.py DKPERF RECORD_PROG WORKDIR NCPU SECONDS CHIP...
Environment: DKPERF_FRAMEWORK_ROOT, as ctest sets it.
"""
import json
import os
import re
import subprocess
import sys

dkperf, prog, work = sys.argv[1:4]
ncpu, seconds = int(sys.argv[4]), sys.argv[5]
chips = sys.argv[6:]
os.makedirs(work, exist_ok=True)
from checks import check, failures


def run(args, env):
    return subprocess.run([dkperf] + args, env=env, capture_output=True, text=True, timeout=300)


def disarmed(path, what):
    with open(path) as f:
        st = dict(line.split() for line in f if line.strip())
    for key in ("kperf.sampling", "kperf.actions_set", "kperf.timers_set", "kpc.pmi",
                "sim.perf_events", "kdebug.bufinit", "kdebug.enabled", "ktrace.owning_pid",
                "counting", "force_all_ctrs"):
        check(int(st.get(key, "-99"), 0) == 0, f"{what}: {key} is {st.get(key)} afterwards")


for chip in chips:
    what = f"{chip}, {ncpu} CPUs"
    st_path = os.path.join(work, chip + ".state")
    if os.path.exists(st_path):
        os.unlink(st_path)
    env = dict(os.environ, DKPERF_SIM_CPU=chip, DKPERF_SIM_NCPU=str(ncpu),
               DKPERF_SIM_STATE=st_path)

    r = run(["stat", "-a", "-A", "-e", "cycles", "--", "sleep", "0.1"], env)
    rows = [l.split()[0] for l in r.stderr.splitlines()
            if re.match(r"^CPU\d+\s+.*\bcycles\b", l.strip())]
    check(r.returncode == 0 and rows == ["CPU%d" % c for c in range(ncpu)],
          f"{what}: stat -a -A: exit {r.returncode}, {len(rows)} rows\n{r.stderr}")

    r = run(["stat", "-a", "-A", "-x", ",", "-e", "cycles", "--", "sleep", "0.1"], env)
    lines = [l.split(",") for l in r.stderr.splitlines() if l]
    check(r.returncode == 0 and [l[0] for l in lines] == ["CPU%d" % c for c in range(ncpu)]
          and all(l[3] == "cycles" and int(l[1]) >= 0 for l in lines),
          f"{what}: stat -a -A -x,: exit {r.returncode}, {len(lines)} lines\n{r.stderr[:400]}")

    # The levels' rows: each level's CPUs (as -A labels them), adding up to
    # the total.
    r = run(["stat", "-a", "-A", "--json", "-e", "cycles", "--", "sleep", "0.1"], env)
    per_cpu = {}
    try:
        for row in json.loads(r.stderr)["rows"]:
            per_cpu[row["level"]] = per_cpu.get(row["level"], 0) + 1
    except (ValueError, KeyError) as e:
        check(False, f"{what}: stat -a -A --json: {e}: {r.stderr[:400]}")
    # A command that keeps a host CPU busy: the sim's CPUs count the host's
    # busy time (/proc/stat, in ticks), which a quiet machine's sleep 0.1
    # may leave at 0.
    r = run(["stat", "-a", "--per-level", "--json", "-e", "cycles", "--", prog, "0.2"], env)
    try:
        rep = json.loads(r.stderr)
        got = {row["label"]: row["cpus"] for row in rep["rows"]}
        check(got == per_cpu and sum(got.values()) == ncpu,
              f"{what}: --per-level CPUs {got}, -A's levels {per_cpu}")
        total = sum(e["value"] for e in rep["events"])
        check(total > 0 and abs(sum(row["value"] for row in rep["rows"]) - total) <= 1,
              f"{what}: --per-level rows do not add up to {total}: {rep['rows']}")
    except (ValueError, KeyError) as e:
        check(False, f"{what}: stat -a --per-level --json: {e}: {r.stderr[:400]}")

    # record -a at the default rate: every CPU's records through the one
    # trace buffer, none lost.
    data = os.path.join(work, chip + ".data")
    r = run(["record", "-a", "-o", data, "--", prog, seconds], env)
    m = re.search(r"dkperf record: ([\d,]+) samples \(([\d,]+) lost", r.stderr)
    check(r.returncode == 0 and m is not None,
          f"{what}: record -a: exit {r.returncode}\n{r.stderr}")
    if m is not None:
        samples, lost = (int(g.replace(",", "")) for g in m.groups())
        print(f"{what}: record -a for {seconds} s: {samples} samples, {lost} lost")
        # Lost records are said (the summary counts kdebug's
        # TRACE_LOST_EVENTS marks); none may come from the trace buffer
        # wrapping. The sim's own losses (Linux samples it could not take
        # in on a loaded host, each marked lost) are not kperf's.
        with open(st_path) as f:
            st = dict(line.split() for line in f if line.strip())
        wraps, own = int(st.get("sim.kdebug_wraps", -1)), int(st.get("sim.source_losses", -1))
        check(samples > 0 and wraps == 0 and lost <= own,
              f"{what}: record -a: {samples} samples, {lost} lost, the buffer wrapped {wraps} "
              f"times, the sim lost {own} itself")
    disarmed(st_path, what)
    for p in (data, st_path):
        if os.path.exists(p):
            os.unlink(p)

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
