#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Run a command, send it a signal after a delay, and check how it ended.

usage: send_signal.py DELAY_S SIGNAL STATUS [--quiet] -- CMD [ARGS...]

Passes when CMD exits normally with STATUS, or with STATUS "killed" when it
ends by SIGNAL (a shell's `wait` cannot tell an exit with 130 from a death
by SIGINT; this can), and with --quiet when CMD wrote nothing to stderr.
"""
import signal
import subprocess
import sys
import time


def main(argv):
    sep = argv.index("--")
    opts, cmd = argv[1:sep], argv[sep + 1:]
    delay, sig = float(opts[0]), getattr(signal, "SIG" + opts[1])
    want = -sig if opts[2] == "killed" else int(opts[2])
    quiet = "--quiet" in opts[3:]
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE)
    time.sleep(delay)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    err = err.decode(errors="replace")
    if p.returncode < 0 and p.returncode != want:
        print(f"FAIL: killed by signal {-p.returncode}, expected {opts[2]}", file=sys.stderr)
        return 1
    if p.returncode != want:
        print(f"FAIL: exit status {p.returncode}, expected {want}\n{err}", file=sys.stderr)
        return 1
    if quiet and err:
        print(f"FAIL: expected no output, got:\n{err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
