#!/usr/bin/env python3
"""A signal that reaches dkperf stat while it holds the counters does not
kill it with the counters taken: they are given back (the simulated state
file says force_all_ctrs 0 afterwards) and dkperf exits 128 + the signal.

usage: check_held_signals.py DKPERF SIM_ROOT
"""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

dkperf, sim_root = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)  # on every exit, a failed check's too
state = os.path.join(tmp, "state")
failures = []


def force_all():
    with open(state) as f:
        for line in f:
            if line.startswith("force_all_ctrs "):
                return int(line.split()[1])
    return None


def wait_for(pred, timeout=20):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


def start(args, **env):
    with open(state, "w") as f:
        f.write("force_all_ctrs 0\n")
    e = dict(os.environ, DKPERF_FRAMEWORK_ROOT=sim_root, DKPERF_SIM_STATE=state, **env)
    return subprocess.Popen([dkperf] + args, env=e, stderr=subprocess.PIPE)


def check(name, p, want, report=None, ran=None):
    _, err = p.communicate(timeout=60)
    err = err.decode(errors="replace")
    held = force_all()
    if p.returncode != want:
        how = f"killed by signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
        failures.append(f"{name}: {how}, expected exit {want}\n{err}")
    if held != 0:
        failures.append(f"{name}: force_all_ctrs is {held} afterwards: the counters were left taken")
    if report is not None and ("Performance counter stats" in err) != report:
        failures.append(f"{name}: report {'missing' if report else 'printed'}\n{err}")
    if ran is not None and os.path.exists(ran):
        failures.append(f"{name}: the command ran after the signal")


# Ctrl-C while the counters are given back (kpc_force_all_ctrs_set takes
# 600 ms): the command has finished, its report is printed, dkperf exits 130.
done = os.path.join(tmp, "done")
p = start(["stat", "-a", "-e", "instructions", "--", "touch", done],
          DKPERF_SIM_SLOW="kpc_force_all_ctrs_set:600")
if wait_for(lambda: os.path.exists(done)):
    time.sleep(0.15)  # the command is reaped and the release under way
    p.send_signal(signal.SIGINT)
    check("SIGINT while giving the counters back", p, 130, report=True)
else:
    p.kill()
    failures.append("the command never ran")

# Ctrl-C after the command has exited but before it is reaped (stopping
# the counters takes 800 ms): nobody is left to take it, so dkperf keeps
# it, reports the runs that completed and exits 130, also with -r 3.
for args in ([], ["-r", "3"]):
    os.path.exists(done) and os.unlink(done)
    p = start(["stat", "-a"] + args + ["-e", "instructions", "--", "touch", done],
              DKPERF_SIM_SLOW="kpc_set_counting:800")
    name = "SIGINT between the command's exit and its reaping" + (" with -r 3" if args else "")
    if wait_for(lambda: os.path.exists(done)):
        time.sleep(0.3)  # the command has exited; the counters are being stopped
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        err = err.decode(errors="replace")
        if p.returncode != 130:
            failures.append(f"{name}: exit {p.returncode}, expected 130\n{err}")
        if "Performance counter stats" not in err:
            failures.append(f"{name}: no report of the completed run\n{err}")
        if args and "(3 runs)" in err:
            failures.append(f"{name}: the repeats went on after the signal\n{err}")
        if force_all() != 0:
            failures.append(f"{name}: force_all_ctrs is {force_all()} afterwards")
    else:
        p.kill()
        p.communicate()
        failures.append(f"{name}: the command never ran")

# SIGTERM while the counters are being taken: the command never runs.
ran = os.path.join(tmp, "ran")
p = start(["stat", "-a", "-e", "instructions", "--", "touch", ran],
          DKPERF_SIM_SLOW="kpc_force_all_ctrs_set:600")
time.sleep(0.3)
p.send_signal(signal.SIGTERM)
check("SIGTERM while taking the counters", p, 143, report=False, ran=ran)

# -o on a FIFO nobody reads: open() blocks, and Ctrl-C must find nothing
# held; dkperf may die of it (nothing is taken) or exit 130.
fifo = os.path.join(tmp, "fifo")
os.mkfifo(fifo)
p = start(["stat", "-a", "-o", fifo, "-e", "instructions", "--", "touch", ran])
time.sleep(0.5)
p.send_signal(signal.SIGINT)
_, err = p.communicate(timeout=60)
if p.returncode not in (-signal.SIGINT, 130):
    failures.append(f"-o FIFO: ended with {p.returncode} after SIGINT\n{err.decode(errors='replace')}")
if force_all() != 0:
    failures.append("-o FIFO: force_all_ctrs is %s after SIGINT" % force_all())
if os.path.exists(ran):
    failures.append("-o FIFO: the command ran")

# SIGHUP during the command is still passed on to it, as before.
p = start(["stat", "-a", "-e", "instructions", "--", "sleep", "30"])
wait_for(lambda: force_all() == 1)
time.sleep(0.3)
p.send_signal(signal.SIGHUP)
check("SIGHUP during the command", p, 128 + signal.SIGHUP, report=True)

for f in failures:
    print("FAIL:", f, file=sys.stderr)
if not failures:
    print("signals are held while the counters are taken; they are always given back")
sys.exit(1 if failures else 0)
