#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf record's defaults on the kperf backend (simulated frameworks, not
Apple hardware): kpc has no frequency mode, so `dkperf record -- PROG`
with no event and no rate must not ask cycles for 4000 samples a second
(which kperf refuses); it samples cycles on a period, says which, and the
report names that period. `-e timer@HZ` (the timer the library offers, and
that its own errors point to) is accepted. Nothing is left armed.

usage: check_record_default_sim.py DKPERF RECORD_PROG WORKDIR
Environment: DKPERF_FRAMEWORK_ROOT and DKPERF_SIM_CPU, as ctest sets them.
"""
import os
import subprocess
import sys

dkperf, prog, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
from checks import check, failures


def disarmed(path, what):
    with open(path) as f:
        st = dict(line.split() for line in f if line.strip())
    for key in ("kperf.sampling", "kperf.actions_set", "kperf.timers_set", "kpc.pmi",
                "kdebug.bufinit", "kdebug.enabled", "ktrace.owning_pid", "counting"):
        check(int(st.get(key, "-99"), 0) == 0, f"{what}: {key} is {st.get(key)} afterwards")


env = dict(os.environ)
for name, args, event_line in (
        ("default", [], "one sample every 1000000"),
        ("timer", ["-e", "timer@2000"], "2000 samples a second")):
    st_path = os.path.join(work, name + ".state")
    data = os.path.join(work, name + ".data")
    for p in (st_path, data):
        if os.path.exists(p):
            os.unlink(p)
    env["DKPERF_SIM_STATE"] = st_path
    r = subprocess.run([dkperf, "record"] + args + ["-g", "-o", data, "--", prog, "0.3"],
                       env=env, capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"record {name}: exit {r.returncode} {r.stderr!r}")
    if name == "default":
        check("sampling cycles" in r.stderr and "1000000" in r.stderr,
              f"record {name}: stderr does not say what is sampled: {r.stderr!r}")
    disarmed(st_path, f"record {name}")
    if r.returncode != 0:
        continue
    rep = subprocess.run([dkperf, "report", "-i", data, "--stdio"], env=env,
                         capture_output=True, text=True, timeout=120)
    check(rep.returncode == 0, f"report {name}: {rep.returncode} {rep.stderr!r}")
    heads = [l for l in rep.stdout.splitlines() if l.startswith("# Event:")]
    check(len(heads) == 1 and event_line in heads[0],
          f"report {name}: event line {heads!r}, wanted {event_line!r}")
    check(len(heads) == 1 and " 0 samples" not in heads[0],
          f"report {name}: no samples: {heads!r}")

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
