#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""After a `dkperf record` killed with SIGKILL while it holds the counters,
the next `dkperf stat` does not adopt the dead process's force_all_ctrs
and leave it set: on a Mac the kernel gives force_all_ctrs back when the
task that forced it ends (osfmk/kern/task.c), so the next stat takes the
counters afresh and gives them back (the simulated state file says
force_all_ctrs 0 and nothing counting afterwards). A state file that names
a live holder (this script) is still adopted and left as it was.

The rest of what record set up stays after the kill (XNU only drops the
dead ktrace owner, kern_ktrace.c ktrace_ownership_maintenance): kperf
sampling, its actions, the PMI periods and actions, the trace buffer. The
next stat resets it, says so on stderr naming the dead process, and
leaves nothing set up and tracing unowned; a stat after that has nothing
to say. The same state held by a live ktrace owner (this script, as
Instruments would be) is left as it is, without a word.

usage: check_killed_holder.py DKPERF SIM_ROOT BUSY
(BUSY: tests/region_program, run as `--work-only --burn-ms MS`).
"""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

dkperf, sim_root, busy = sys.argv[1], sys.argv[2], sys.argv[3]
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)  # on every exit, a failed check's too
state = os.path.join(tmp, "state")
env = dict(os.environ, DKPERF_FRAMEWORK_ROOT=sim_root, DKPERF_SIM_STATE=state)
failures = []


def read_state():
    out = {}
    try:
        with open(state) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    out[parts[0]] = int(parts[1], 0)
    except FileNotFoundError:
        pass
    return out


def stat(extra_env=None, args=()):
    p = subprocess.run([dkperf, "stat"] + list(args) + ["-e", "instructions", "--", busy,
                        "--work-only", "--burn-ms", "20"], env=dict(env, **(extra_env or {})),
                       stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stderr.decode(errors="replace")


# record, killed while it samples: the counters are forced and sampling on.
p = subprocess.Popen([dkperf, "record", "-e", "cycles/100000", "-o",
                      os.path.join(tmp, "rec.data"), "--", busy, "--work-only", "--burn-ms",
                      "5000"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
end = time.monotonic() + 30
while time.monotonic() < end and read_state().get("kperf.sampling", 0) == 0:
    time.sleep(0.02)
left = read_state()
p.send_signal(signal.SIGKILL)
p.wait()
if left.get("force_all_ctrs") != 1 or left.get("kperf.sampling") != 1:
    failures.append("record never held the counters and sampled: %s" % left)
elif left.get("force_all_ctrs.pid") != p.pid:
    failures.append("the state file does not name record (%d) as the holder: %s" % (p.pid, left))

for k in ("kpc.pmi", "kdebug.bufinit", "kperf.actions_set"):
    if not left.get(k):
        failures.append("record had no %s set up when killed: %s" % (k, left))
if left.get("ktrace.owning_pid") != p.pid:
    failures.append("the state file does not name record (%d) as the ktrace owner: %s"
                    % (p.pid, left))

rc, err = stat()
after = read_state()
if rc != 0:
    failures.append("stat after the killed record: exit %d\n%s" % (rc, err))
for k in ("force_all_ctrs", "counting", "thread_counting"):
    if after.get(k, 0) != 0:
        failures.append("stat after the killed record left %s at %#x (adopted from the dead "
                        "process)" % (k, after[k]))
for k in ("kperf.sampling", "kperf.actions_set", "kperf.timers_set", "kpc.pmi",
          "kdebug.bufinit", "kdebug.enabled", "ktrace.owning_pid", "ktrace.active_mask"):
    if after.get(k, 0) != 0:
        failures.append("stat after the killed record left %s at %#x (the dead record's, not "
                        "reset)" % (k, after[k]))
want = "note: reset kperf sampling"
said = [l for l in err.splitlines() if "note: reset" in l]
if len(said) != 1 or want not in said[0] or "process %d, which no longer exists" % p.pid \
        not in said[0]:
    failures.append("stat after the killed record did not say, in one line naming process "
                    "%d, that it reset what it left:\n%s" % (p.pid, err))
rc, err = stat()
if rc != 0 or "note:" in err:
    failures.append("a second stat found something left: exit %d\n%s" % (rc, err))

# A live ktrace owner (this process, as Instruments would be) sampling on
# the counters: its state is not touched, and nothing is said.
live = ("ktrace.owning_pid %d\nktrace.active_mask 3\nkperf.sampling 1\nkperf.action.count 1\n"
        "kperf.action.1.samplers 0x9\nkpc.reload.2 140737488255327\nkpc.actionid.2 1\n"
        "kdebug.nkdbufs 262144\nkdebug.bufinit 1\nkdebug.enabled 1\n" % os.getpid())
with open(state, "w") as f:
    f.write(live)
rc, err = stat()
after = read_state()
if rc != 0 or "note:" in err:
    failures.append("stat beside a live ktrace owner: exit %d\n%s" % (rc, err))
for k, v in (("ktrace.owning_pid", os.getpid()), ("kperf.sampling", 1), ("kpc.pmi", 0x4),
             ("kdebug.bufinit", 1), ("kdebug.enabled", 1), ("kperf.actions_set", 1)):
    if after.get(k) != v:
        failures.append("stat beside a live ktrace owner changed %s to %s (want %#x): %s"
                        % (k, after.get(k), v, after))

# What a dead owner left, as a state file says it (the pid of a process
# that has been reaped).
gone = subprocess.Popen(["true"])
gone.wait()
orphan = live.replace("ktrace.owning_pid %d" % os.getpid(), "ktrace.owning_pid %d" % gone.pid)

# The counters held by a live client (powermetrics): stat counts without
# them (another backend) or fails, and either way whatever it reset it
# says it reset, and it resets nothing it does not say.
for args in ((), ("--backend", "kperf")):
    with open(state, "w") as f:
        f.write(orphan)
    rc, err = stat({"DKPERF_SIM_BUSY": "1"}, args)
    after = read_state()
    reset = after.get("kperf.sampling") == 0 or after.get("kpc.pmi") == 0
    said = "note: reset" in err
    if reset != said:
        failures.append("stat %s with the counters held by a live client %s what a dead owner "
                        "left and %s so: exit %d, %s\n%s"
                        % (" ".join(args), "reset" if reset else "kept",
                           "said" if said else "did not say", rc, after, err))

# A live tool taking tracing between the check and the reset (EBUSY from
# kperf_reset): everything is its own now; stat resets nothing, says
# nothing, and counts.
with open(state, "w") as f:
    f.write(orphan)
rc, err = stat({"DKPERF_SIM_FAIL": "kperf_reset:16@1"}, ("--backend", "kperf"))
after = read_state()
if rc != 0 or "note:" in err or "ktrace reset" in err or after.get("kperf.sampling") != 1:
    failures.append("stat when another tool takes tracing before the reset: exit %d (want 0, "
                    "nothing reset, said or advised), %s\n%s" % (rc, after, err))

# A reset that fails fails the open, saying which call and what clears it.
with open(state, "w") as f:
    f.write(orphan)
rc, err = stat({"DKPERF_SIM_FAIL": "kperf_reset:22@1"}, ("--backend", "kperf"))
if rc == 0 or "kperf_reset" not in err or "Invalid argument" not in err \
        or "sudo ktrace reset" not in err:
    failures.append("stat whose reset of what a dead owner left fails: exit %d, want an error "
                    "naming kperf_reset and its errno and saying what clears it:\n%s" % (rc, err))

# A live holder (this process, as powermetrics would be) is adopted and
# left as it was.
with open(state, "w") as f:
    f.write("force_all_ctrs 1\nforce_all_ctrs.pid %d\n" % os.getpid())
rc, err = stat()
if rc != 0:
    failures.append("stat beside a live holder: exit %d\n%s" % (rc, err))
if read_state().get("force_all_ctrs") != 1:
    failures.append("stat took force_all_ctrs from a live holder: %s" % read_state())

for f in failures:
    print("FAIL:", f)
if not failures:
    print("force_all_ctrs of a killed holder is not adopted and its sampling state is reset; "
          "a live holder's is kept")
sys.exit(1 if failures else 0)
