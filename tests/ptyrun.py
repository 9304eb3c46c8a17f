# SPDX-License-Identifier: MIT OR Apache-2.0
"""A command with its standard error on a pty, for the tests of what dkperf
draws only on a terminal (the progress line)."""
import fcntl
import os
import select
import struct
import subprocess
import termios
import time
import tty


def run_on_pty(argv, cols=80, timeout=60, stdout=subprocess.DEVNULL, **popen):
    """Run ARGV with stderr on a raw pty COLS wide (no \\n -> \\r\\n: what is
    read is what the command wrote) until every writer closes it, or for
    TIMEOUT seconds at most (then the command is killed). Returns (the
    Popen, the bytes read from the pty, whether it timed out); the caller
    reads any stdout pipe and waits."""
    master, slave = os.openpty()
    tty.setraw(slave)
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=slave, **popen)
    os.close(slave)
    got, t0, timed_out = b"", time.monotonic(), False
    try:
        while True:
            if time.monotonic() - t0 > timeout:
                p.kill()
                timed_out = True
                break
            r, _, _ = select.select([master], [], [], 1)
            if not r:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the pty
                break
            if not chunk:
                break
            got += chunk
    finally:
        os.close(master)
    return p, got, timed_out
