#!/usr/bin/env python3
"""After a `dkperf record` killed with SIGKILL while it holds the counters,
the next `dkperf stat` does not adopt the dead process's force_all_ctrs
and leave it set: on a Mac the kernel gives force_all_ctrs back when the
task that forced it ends (osfmk/kern/task.c), so the next stat takes the
counters afresh and gives them back (the simulated state file says
force_all_ctrs 0 and nothing counting afterwards). A state file that names
a live holder (this script) is still adopted and left as it was.

usage: check_killed_holder.py DKPERF SIM_ROOT BUSY
(BUSY: tests/region_program, run as `--work-only --burn-ms MS`).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

dkperf, sim_root, busy = sys.argv[1], sys.argv[2], sys.argv[3]
tmp = tempfile.mkdtemp()
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


def stat():
    p = subprocess.run([dkperf, "stat", "-e", "instructions", "--", busy, "--work-only",
                        "--burn-ms", "20"], env=env, stderr=subprocess.PIPE, timeout=60)
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

rc, err = stat()
after = read_state()
if rc != 0:
    failures.append("stat after the killed record: exit %d\n%s" % (rc, err))
for k in ("force_all_ctrs", "counting", "thread_counting"):
    if after.get(k, 0) != 0:
        failures.append("stat after the killed record left %s at %#x (adopted from the dead "
                        "process)" % (k, after[k]))

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
    print("force_all_ctrs of a killed holder is not adopted; a live holder's is kept")
sys.exit(1 if failures else 0)
