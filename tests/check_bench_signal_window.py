#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf bench and a signal in the windows around a run (tests/signal_window.c
lands it there):

- a SIGINT that arrives after one run ended and before the next command is
  started ends the benchmark (exit 130) without starting that command;
- a SIGTERM that arrives right after a run's command was reaped is not
  passed on to its pid, which is free for another process by then (exit
  143; --after-reap: on the simulated macOS path, which reads the command
  from its zombie, and on Linux's DK_GROUP_CHILDREN path alike).

usage: check_bench_signal_window.py DKPERF SHIM [--after-reap]
(DKPERF_FRAMEWORK_ROOT as the test sets it)
"""
import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile

dkperf, shim = sys.argv[1], sys.argv[2]
after_reap = "--after-reap" in sys.argv[3:]
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)  # on every exit, a failed check's too
starts = os.path.join(tmp, "starts")
failures = []


def bench(extra_env, runs):
    env = dict(os.environ, LD_PRELOAD=shim, **extra_env)
    if os.path.exists(starts):
        os.unlink(starts)
    cmd = "sh -c 'echo started >> %s'" % starts
    p = subprocess.run([dkperf, "bench", "-r", str(runs), "--", cmd], env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    n = 0
    if os.path.exists(starts):
        with open(starts) as f:
            n = sum(1 for _ in f)
    return p, n


# The second hold is the second run's, just before its command starts.
p, n = bench({"DKPERF_SIGNAL_BEFORE_HOLD": "2"}, 3)
if p.returncode != -signal.SIGINT:
    failures.append("SIGINT between runs: ended with %d, not by SIGINT: %s" % (p.returncode, p.stderr))
if n != 1:
    failures.append("SIGINT between runs 1 and 2: the command was started %d times "
                    "(want 1: no run starts after the signal)" % n)
if "signal_window" in p.stderr:
    failures.append("SIGINT between runs: " + p.stderr)

if after_reap:
    p, n = bench({"DKPERF_SIGNAL_AFTER_REAP": "1"}, 3)
    if "signal_window: kill" in p.stderr:
        failures.append("SIGTERM after the reap was sent to the reaped pid: " + p.stderr.strip())
    if p.returncode != -signal.SIGTERM:
        failures.append("SIGTERM after the reap: ended with %d, not by SIGTERM: %s" % (p.returncode, p.stderr))
    if n != 1:
        failures.append("SIGTERM after run 1's reap: the command was started %d times" % n)

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
