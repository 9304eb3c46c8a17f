#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""A signal that reaches dkperf stat while it holds the counters does not
kill it with the counters taken: they are given back (the simulated state
file says force_all_ctrs 0 afterwards) and dkperf then ends by the signal
(a shell sees 128 + its number).

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
    if p.returncode != -want:
        how = f"killed by signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
        failures.append(f"{name}: {how}, expected to end by signal {want}\n{err}")
    if held != 0:
        failures.append(f"{name}: force_all_ctrs is {held} afterwards: the counters were left taken")
    if report is not None and ("Performance counter stats" in err) != report:
        failures.append(f"{name}: report {'missing' if report else 'printed'}\n{err}")
    if ran is not None and os.path.exists(ran):
        failures.append(f"{name}: the command ran after the signal")


# Ctrl-C while the counters are given back (kpc_force_all_ctrs_set takes
# 600 ms): the command has finished, its report is printed, dkperf ends by it.
done = os.path.join(tmp, "done")
p = start(["stat", "-a", "-e", "instructions", "--", "touch", done],
          DKPERF_SIM_SLOW="kpc_force_all_ctrs_set:600")
if wait_for(lambda: os.path.exists(done)):
    time.sleep(0.15)  # the command is reaped and the release under way
    p.send_signal(signal.SIGINT)
    check("SIGINT while giving the counters back", p, signal.SIGINT, report=True)
else:
    p.kill()
    failures.append("the command never ran")

# Ctrl-C after the command has exited but before it is reaped (stopping
# the counters takes 800 ms): nobody is left to take it, so dkperf keeps
# it, reports the runs that completed and ends by SIGINT, also with -r 3.
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
        if p.returncode != -signal.SIGINT:
            failures.append(f"{name}: ended with {p.returncode}, expected SIGINT\n{err}")
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
check("SIGTERM while taking the counters", p, signal.SIGTERM, report=False, ran=ran)

# SIGINT while the counters are being taken, then SIGTERM while they are
# being given back: the second is noted and waits for the release too, and
# dkperf ends by the first, the one it acted on, never by an exit.
p = start(["stat", "-a", "-e", "instructions", "--", "touch", ran],
          DKPERF_SIM_SLOW="kpc_force_all_ctrs_set:600")
time.sleep(0.3)
p.send_signal(signal.SIGINT)
time.sleep(0.6)  # the taking has ended; the giving back takes 600 ms
p.send_signal(signal.SIGTERM)
_, err = p.communicate(timeout=60)
if p.returncode not in (-signal.SIGINT, -signal.SIGTERM):
    failures.append("SIGINT while taking the counters, SIGTERM while giving them back: "
                    f"ended with {p.returncode}, not by a signal\n{err.decode(errors='replace')}")
if force_all() != 0:
    failures.append(f"SIGINT then SIGTERM: force_all_ctrs is {force_all()} afterwards")

# -o on a FIFO nobody reads: open() blocks, and Ctrl-C must find nothing
# held; dkperf ends by it either way.
fifo = os.path.join(tmp, "fifo")
os.mkfifo(fifo)
p = start(["stat", "-a", "-o", fifo, "-e", "instructions", "--", "touch", ran])
time.sleep(0.5)
p.send_signal(signal.SIGINT)
_, err = p.communicate(timeout=60)
if p.returncode != -signal.SIGINT:
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
check("SIGHUP during the command", p, signal.SIGHUP, report=True)

# Started with SIGCHLD ignored (as some daemons and shells leave it), the
# kernel would reap the command before dkperf reads it: dkperf waits for it
# as usual, and the command still finds SIGCHLD ignored, as it was given.
def chld_ignored():
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)


runs = ((["stat", "-e", "instructions", "--", "sh", "-c", "exit 3"], 3),
        (["stat", "-e", "instructions", "--", "grep", "SigIgn", "/proc/self/status"], 0),
        (["bench", "-N", "-r", "2", "-e", "instructions", "--", "true"], 0))
for args, want in runs:
    with open(state, "w") as f:
        f.write("force_all_ctrs 0\n")
    e = dict(os.environ, DKPERF_FRAMEWORK_ROOT=sim_root, DKPERF_SIM_STATE=state)
    p = subprocess.run([dkperf] + args, env=e, capture_output=True, preexec_fn=chld_ignored,
                       timeout=60)
    err = p.stderr.decode(errors="replace")
    name = "%s started with SIGCHLD ignored" % " ".join(args)
    if p.returncode != want:
        failures.append(f"{name}: exit {p.returncode}, expected {want}\n{err}")
    if args[0] == "stat" and "Performance counter stats" not in err:
        failures.append(f"{name}: no report\n{err}")
    if force_all() != 0:
        failures.append(f"{name}: force_all_ctrs is {force_all()} afterwards")
    out = p.stdout.decode(errors="replace").split()
    if "SigIgn" in args and (len(out) != 2 or
                              not int(out[1], 16) & (1 << (signal.SIGCHLD - 1))):
        failures.append(f"{name}: the command did not find SIGCHLD ignored: {out}")

# stat -p -I whose output is a pipe nobody reads any more: the write fails
# (SIGPIPE is ignored while the counters are held), and with nothing else
# to end the wait dkperf must end it, give the counters back and exit (1, or
# SIGPIPE from the report written once nothing is held), not count on.
for out_args in ([], ["-o", "/dev/stdout"]):
    with open(state, "w") as f:
        f.write("force_all_ctrs 0\n")
    target = subprocess.Popen(["sleep", "60"])
    r, w = os.pipe()
    os.close(r)
    e = dict(os.environ, DKPERF_FRAMEWORK_ROOT=sim_root, DKPERF_SIM_STATE=state)
    p = subprocess.Popen([dkperf, "stat", "-p", str(target.pid), "-I", "50", "-e", "instructions"]
                         + out_args, env=e, stdout=w, stderr=w)
    os.close(w)
    name = "stat -p -I %s into a closed pipe" % " ".join(out_args)
    try:
        p.wait(timeout=20)
        if p.returncode not in (1, -signal.SIGPIPE):
            failures.append(f"{name}: ended with {p.returncode}, expected 1 or SIGPIPE")
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        failures.append(f"{name}: still counting 20 s after its output was gone")
    target.kill()
    target.wait()
    if force_all() != 0:
        failures.append(f"{name}: force_all_ctrs is {force_all()} afterwards")

for f in failures:
    print("FAIL:", f, file=sys.stderr)
if not failures:
    print("signals are held while the counters are taken; they are always given back")
sys.exit(1 if failures else 0)
