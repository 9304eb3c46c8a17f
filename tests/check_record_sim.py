#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf record on the simulated frameworks (macOS paths, kperf backend;
simulated, not Apple hardware): `dkperf record -e cycles/100000 -g -- PROG`
produces samples whose stacks name PROG's functions; unprivileged it says
that sampling needs root and why; nothing is left armed (the sim's state).

The recording names PROG's process (a COMM record from
proc_pidinfo(PROC_PIDTBSDINFO)) and holds its exit (an EXIT record from
XNU's BSD_PROC_EXIT); with proc_pidinfo failing it still holds the samples.

usage: check_record_sim.py DKPERF RECORD_PROG WORKDIR [RECORD_FIXTURE]
Environment: DKPERF_FRAMEWORK_ROOT and DKPERF_SIM_CPU, as ctest sets them.
"""
import os
import re
import subprocess
import sys

dkperf, prog, work = sys.argv[1:4]
fixture = sys.argv[4] if len(sys.argv) > 4 else None
os.makedirs(work, exist_ok=True)
from checks import check, failures


def state(path):
    with open(path) as f:
        return dict(line.split() for line in f if line.strip())


def disarmed(path, what):
    st = state(path)
    for key in ("kperf.sampling", "kperf.actions_set", "kperf.timers_set", "kpc.pmi",
                "sim.perf_events", "kdebug.bufinit", "kdebug.enabled", "ktrace.owning_pid",
                "counting", "force_all_ctrs"):
        check(int(st.get(key, "-99"), 0) == 0, f"{what}: {key} is {st.get(key)} afterwards")


# PROG under a name longer than Linux's 15-character comm: the library's
# name (pbi_name, up to 31) is the whole of it, while a name read from
# /proc/PID/comm (what dkperf record falls back to on Linux) is cut.
long_name = "record_prog_named_at_length"
link = os.path.join(work, long_name)
if os.path.lexists(link):
    os.unlink(link)
os.symlink(os.path.abspath(prog), link)
prog = link

env = dict(os.environ)
st_path = os.path.join(work, "state")
env["DKPERF_SIM_STATE"] = st_path
data = os.path.join(work, "prog.data")
for p in (st_path, data):
    if os.path.exists(p):
        os.unlink(p)

r = subprocess.run([dkperf, "record", "-e", "cycles/100000", "-g", "-o", data, "--", prog, "0.5"],
                   env=env, capture_output=True, text=True, timeout=300)
check(r.returncode == 0, f"record: {r.returncode} {r.stderr!r}")
# The sim samples on the host's CPUs, however many the simulated chip has.
check("dkperf sim:" not in r.stderr, f"record: the sim could not sample: {r.stderr!r}")
disarmed(st_path, "record")
rep = subprocess.run([dkperf, "report", "-i", data, "--stdio"], env=env, capture_output=True,
                     text=True, timeout=120)
check(rep.returncode == 0, f"report: {rep.returncode} {rep.stderr!r}")
rows = [l.split() for l in rep.stdout.splitlines() if l.strip() and not l.startswith("#")]
print("\n".join(rep.stdout.splitlines()[:12]))
# Samples taken in the kernel have no user pc ([kernel]): counters that
# count in every mode (x86 USR|OS words) see the sampling's own interrupt
# handling on this virtual machine. The hottest function of PROG's own is
# rp_hot.
named = [r for r in rows if r[-1] not in ("[kernel]", "[unknown]")]
check(len(named) > 0 and named[0][-1] == "rp_hot", f"rp_hot is not the hottest: {rows[:3]}")
fold = subprocess.run([dkperf, "report", "-i", data, "--folded"], env=env, capture_output=True,
                      text=True, timeout=120)
check(fold.returncode == 0, f"report --folded: {fold.stderr!r}")
# Stacks name the caller chain: main calls rp_round, which calls rp_hot.
check(any("main;" in l and "rp_hot" in l for l in fold.stdout.splitlines()),
      "no folded stack names main and rp_hot")
samples = sum(int(l.rsplit(" ", 1)[1]) for l in fold.stdout.splitlines() if " " in l)
# cycles at the sim's 3 GHz over 0.5 s of CPU: 15,000 samples at 100,000,
# unless Linux lowered perf_event_max_sample_rate (it does when sampling
# interrupts take long on a loaded machine; the sim has no PMI of its own).
check(samples >= 1500, f"{samples} samples for 0.5 s of CPU at 30,000 a second")


def holds(path):
    """samples, exits and the names (pid -> comm) of a recording."""
    c = subprocess.run([fixture, "--count", path], capture_output=True, text=True, timeout=60)
    check(c.returncode == 0, f"record_fixture --count: {c.stderr!r}")
    out = {"names": {}}
    for line in c.stdout.splitlines():
        f = line.split(" ", 4)
        if f[0] == "comm" and len(f) == 5:
            out["names"][int(f[1])] = f[4]
        elif len(f) == 2:
            out[f[0]] = int(f[1])
    return out


# By process: PROG's name, not a pid.
com = subprocess.run([dkperf, "report", "-i", data, "--sort", "comm", "--stdio"], env=env,
                     capture_output=True, text=True, timeout=120)
check(com.returncode == 0, f"report --sort comm: {com.stderr!r}")
crows = [l.split() for l in com.stdout.splitlines() if l.strip() and not l.startswith("#")]
check(len(crows) > 0 and crows[0][-1] == os.path.basename(prog),
      f"report --sort comm does not name {os.path.basename(prog)}: {crows[:3]}")
if fixture:
    h = holds(data)
    print("recording:", h)
    check(h.get("exits") == 1, f"{h.get('exits')} exits recorded, not PROG's one")
    check(os.path.basename(prog) in h["names"].values(), f"no COMM names PROG: {h['names']}")
    # proc_pidinfo failing (every call, ESRCH): no names or maps from the
    # library, but the samples and the exit, and no word of a failure.
    failing = os.path.join(work, "failing.data")
    r = subprocess.run([dkperf, "record", "-e", "cycles/100000", "-g", "-o", failing, "--", prog,
                        "0.2"], env=dict(env, DKPERF_SIM_FAIL="proc_pidinfo:3"),
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"record, proc_pidinfo failing: {r.returncode} {r.stderr!r}")
    said = [l for l in r.stderr.splitlines() if l.strip() and not l.startswith("[ dkperf record:")]
    check(said == [], f"record, proc_pidinfo failing, says: {said!r}")
    disarmed(st_path, "record, proc_pidinfo failing")
    h = holds(failing)
    print("recording, proc_pidinfo failing:", h)
    check(h.get("samples", 0) >= 500, f"{h.get('samples')} samples with proc_pidinfo failing")
    check(h.get("exits") == 1, f"{h.get('exits')} exits with proc_pidinfo failing")

# A rate kperf cannot take: a timer at 100 kHz (every 10 us) is below the
# timers' minimum period (50 us on arm64, 20 us on Intel; the library
# raises it). The recording says the period sampled at, not the rate asked.
timer = os.path.join(work, "timer.data")
r = subprocess.run([dkperf, "record", "-e", "timer@100000", "-o", timer, "--", prog, "0.1"],
                   env=env, capture_output=True, text=True, timeout=120)
check(r.returncode == 0, f"record timer@100000: {r.returncode} {r.stderr!r}")
rep = subprocess.run([dkperf, "report", "-i", timer, "--stdio"], env=env, capture_output=True,
                     text=True, timeout=120)
line = next((l for l in rep.stdout.splitlines() if l.startswith("# Event: timer")), "")
check("one sample every 50000" in line or "one sample every 20000" in line,
      f"timer@100000: the recording does not say the period used: {line!r}")

# Another client writing as fast as the trace is read wraps the buffer:
# the records lost are counted and said, with what the count means and why.
busy = dict(env, DKPERF_SIM_KDEBUG_WRITER="65536")
r = subprocess.run([dkperf, "record", "-e", "timer", "-o", timer, "--", prog, "0.2"],
                   env=busy, capture_output=True, text=True, timeout=120)
m = re.search(r"\(([\d,]+) lost,", r.stderr)
notes = [l for l in r.stderr.splitlines() if l.startswith("dkperf record: note:") and "lost:" in l]
check(r.returncode == 0 and m is not None and int(m[1].replace(",", "")) > 0 and len(notes) == 1
      and "wrapped" in notes[0] and m[1].replace(",", "") + " lost:" in notes[0],
      f"a wrapped buffer: its losses counted and said: {r.returncode} {r.stderr!r}")
disarmed(st_path, "record with losses")

# Unprivileged: a clear error, no file, nothing armed.
env2 = dict(env, DKPERF_SIM_PRIVILEGED="0")
os.unlink(st_path)
r = subprocess.run([dkperf, "record", "-e", "cycles/100000", "-g", "-o", data, "--", prog, "0.1"],
                   env=env2, capture_output=True, text=True, timeout=120)
print(r.stderr.strip())
check(r.returncode != 0, "unprivileged record succeeded")
check("root" in r.stderr and "kdebug" in r.stderr, f"unprivileged: no reason given: {r.stderr!r}")
if os.path.exists(st_path):
    disarmed(st_path, "unprivileged record")

if failures:
    sys.exit(1)
print("ok")
