#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""What `dkperf stat -e task-clock -- /bin/true` asks of the kernel: at most
two perf_event_open calls (can it count at all, then the counter itself).
Facts the command does not need (other events, the PMU's counters, user
reads) are not probed. Counted with strace -f.

usage: check_stat_probes.py DKPERF
Exit 0 when it holds, 1 when not, 77 (skipped) without strace or ptrace.
"""
import os
import shutil
import subprocess
import sys
import tempfile

MOST = 2


def main(argv):
    if len(argv) != 2:
        print("usage: check_stat_probes.py DKPERF", file=sys.stderr)
        return 2
    strace = shutil.which("strace")
    if strace is None or not sys.platform.startswith("linux"):
        print("skipped: strace is not installed (or this is not Linux)")
        return 77
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        log = os.path.join(tmp, "trace")
        cmd = [strace, "-f", "-e", "trace=perf_event_open", "-o", log,
               argv[1], "stat", "-e", "task-clock", "--", "/bin/true"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0 or not os.path.exists(log):
            if "ptrace" in r.stderr or "Operation not permitted" in r.stderr:
                print(f"skipped: strace cannot trace here: {r.stderr.strip()}")
                return 77
            print(f"FAILED: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
            return 1
        with open(log, encoding="utf-8", errors="replace") as f:
            calls = [line.rstrip() for line in f if "perf_event_open(" in line]
    print(f"dkperf stat -e task-clock -- /bin/true: {len(calls)} perf_event_open calls")
    for c in calls:
        print("  " + c[:200])
    if len(calls) > MOST:
        print(f"FAILED: more than {MOST}: opening the sampler probed what was not asked for")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
