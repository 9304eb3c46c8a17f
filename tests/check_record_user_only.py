#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf record -g where the kernel lets this user sample user mode only
(kernel.perf_event_paranoid 2 or more, not root): record says once that
no kernel call chain can come and why, the recording keeps the reason
(its "kernel" key), and report says it on every output while a recording
made with the kernel's frames says nothing of the kind. Run as root, the
recordings of user mode only are made as the user nobody (setpriv).

usage: check_record_user_only.py DKPERF WORKDIR
Exits 77 where every user may sample the kernel (paranoid 1 or less) or
root cannot become nobody.
"""
import os
import shutil
import subprocess
import sys

dkperf, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
from checks import check, failures


with open("/proc/sys/kernel/perf_event_paranoid") as f:
    paranoid = int(f.read())
if paranoid < 2:
    print("skipped: kernel.perf_event_paranoid %d lets every user sample the kernel" % paranoid)
    sys.exit(77)
as_user = []
if os.geteuid() == 0:
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        print("skipped: root, and no setpriv to record as another user")
        sys.exit(77)
    as_user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    os.chmod(work, 0o777)


def run(args, user=True):
    return subprocess.run((as_user if user else []) + [dkperf] + args, capture_output=True,
                          text=True, timeout=120)


prog = ["--", "dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=100000"]
data = os.path.join(work, "user.data")
p = run(["record", "-e", "cpu-clock", "-g", "-o", data] + prog)
if check(p.returncode == 0, "record -g as a user: exit %d %r" % (p.returncode, p.stderr)):
    lines = [l for l in p.stderr.splitlines() if "no kernel call chains" in l]
    check(len(lines) == 1 and "perf_event_paranoid %d" % paranoid in lines[0],
          "record -g as a user says once why no kernel chain comes: %r" % p.stderr)
    for out in (["--stdio"], ["--folded"], ["--speedscope", os.path.join(work, "u.json")],
                ["--html", os.path.join(work, "u.html")]):
        r = run(["report", "-i", data] + out, user=False)
        notes = [l for l in r.stderr.splitlines()
                 if "no kernel frames: the recording is of user mode only" in l]
        check(r.returncode == 0 and len(notes) == 1 and "perf_event_paranoid" in notes[0],
              "report %s of a user-mode recording says why once: %d %r" %
              (out[0], r.returncode, r.stderr))
        check("[k]" not in r.stdout, "report %s: no kernel frame: %r" % (out[0], r.stdout[:300]))

# Without -g nothing is said at record time, the reason is still kept.
p = run(["record", "-e", "cpu-clock", "-o", data] + prog)
check(p.returncode == 0 and "kernel" not in p.stderr,
      "record without -g as a user says nothing of kernel chains: %r" % p.stderr)
r = run(["report", "-i", data, "--stdio"], user=False)
check("user mode only" in r.stderr, "report of it still says why: %r" % r.stderr)

# Root's recording samples the kernel: no such line.
if as_user:
    p = run(["record", "-e", "cpu-clock", "-g", "-o", data] + prog, user=False)
    r = run(["report", "-i", data, "--stdio"], user=False)
    check(p.returncode == 0 and "no kernel call chains" not in p.stderr and
          "user mode only" not in r.stderr,
          "root's recording says nothing of user mode: %r %r" % (p.stderr, r.stderr))

for name in ("user.data", "user.data.old", "u.json", "u.html"):
    try:
        os.unlink(os.path.join(work, name))
    except FileNotFoundError:
        pass
sys.exit(1 if failures else 0)
