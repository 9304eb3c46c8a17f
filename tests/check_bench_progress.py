#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf bench's progress line: on standard error when it is a terminal (a
pty here), rewritten in place (\\r and erase to the end of the line), at most
about 10 times a second, cut to the terminal's width, the command escaped,
erased before the report and before an error; nothing when standard error is
a pipe or with --no-progress. The report on standard output is unchanged.

usage: check_bench_progress.py DKPERF   (DKPERF_FRAMEWORK_ROOT etc. from the environment)
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptyrun import run_on_pty  # noqa: E402

dkperf = os.path.abspath(sys.argv[1])
env = dict(os.environ)
events = ["-e", "instructions" if env.get("DKPERF_FRAMEWORK_ROOT") else "task-clock"]
CLEAR = "\r\033[K"
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}", file=sys.stderr)


def on_pty(args, cols=80, timeout=60):
    """Run dkperf bench ARGS with stderr on a pty COLS wide and stdout on a
    pipe: (exit status, pty text, stdout text, seconds)."""
    t0 = time.monotonic()
    p, got, timed_out = run_on_pty([dkperf, "bench"] + args, cols, timeout,
                                   stdout=subprocess.PIPE, env=env)
    if timed_out:
        fail(f"dkperf bench {args}: still running after {timeout} s")
    out = p.stdout.read().decode()
    rc = p.wait()
    return rc, got.decode(errors="replace"), out, time.monotonic() - t0


def lines_drawn(text):
    """The progress lines drawn (each after its \\r and erase)."""
    return [s for s in text.split(CLEAR)[1:] if s.startswith("Benchmark ")]


def check_report(what, out, command, runs):
    if f"Benchmark 1: {command}\n" not in out or f"  {runs} runs;" not in out:
        fail(f"{what}: the report on stdout is not whole:\n{out}")
    if "\r" in out or "\033" in out:
        fail(f"{what}: progress reached stdout: {out!r}")


# 1. A terminal: lines run 1/5 ... 5/5, the mean and time left once a run
# is in, erased before the report; the report on stdout is the same as
# without a terminal.
args = ["-r", "5"] + events + ["--", "sleep 0.3"]
rc, tty_text, out, _ = on_pty(args)
drawn = lines_drawn(tty_text)
if rc != 0:
    fail(f"on a pty: exit {rc}\n{tty_text}\n{out}")
if [d.split("  run ")[1].split(",")[0] for d in drawn] != [f"{i}/5" for i in range(1, 6)]:
    fail(f"on a pty: want lines run 1/5 to 5/5, got {drawn!r}")
elif not re.fullmatch(r"Benchmark 1/1: sleep 0\.3  run 3/5, mean 3\d\d\.\d ms, "
                      r"about \d+\.\d m?s left", drawn[2]):
    fail(f"on a pty: the third line is {drawn[2]!r}")
if any("\n" in d for d in drawn):
    fail(f"on a pty: a progress line holds a newline: {drawn!r}")
if not tty_text.endswith(CLEAR):
    fail(f"on a pty: the last line is not erased: {tty_text[-120:]!r}")
check_report("on a pty", out, "sleep 0.3", 5)

# 2. Standard error a pipe: no progress at all, the same report.
p = subprocess.run([dkperf, "bench"] + args, capture_output=True, env=env, timeout=60)
err, out2 = p.stderr.decode(), p.stdout.decode()
if p.returncode != 0 or "\r" in err or "\033" in err or "Benchmark" in err:
    fail(f"stderr a pipe: exit {p.returncode}, stderr {err!r}")
check_report("stderr a pipe", out2, "sleep 0.3", 5)
# The figures, their units (µs or ms) and the outlier counts differ from
# run to run: the rows and their labels must not.
def strip(s):
    return [re.split(r"[0-9]", line, maxsplit=1)[0].rstrip() for line in s.splitlines()]


if strip(out2) != strip(out):
    fail(f"the report differs with stderr on a terminal:\n{out}\n---\n{out2}")

# 3. --no-progress: nothing on the terminal.
rc, tty_text, out, _ = on_pty(["--no-progress", "-r", "2"] + events + ["--", "sleep 0.1"])
if rc != 0 or tty_text != "":
    fail(f"--no-progress: exit {rc}, the terminal got {tty_text!r}")

# 4. A narrow terminal and a hostile command: each line fits in 39 columns
# (it never wraps) and the command's control bytes are escaped.
hostile = "sleep 0.2 \033]0;pwned\007 \033[2J"
rc, tty_text, out, _ = on_pty(["-i", "-r", "2"] + events + ["-S", "sh", "--", hostile], cols=40)
drawn = lines_drawn(tty_text)
if not drawn:
    fail(f"narrow: no progress line: {tty_text!r}")
for d in drawn:
    if len(d) > 39 or not re.search(r"run [12]/2", d):
        fail(f"narrow (40 columns): line {d!r} ({len(d)} columns)")
if drawn and not re.fullmatch(r"Benchmark 1/1: sleep 0\.2 \\x1\S*…  run 1/2", drawn[0]):
    fail(f"narrow: the command is not cut with an ellipsis: {drawn[0]!r}")
if "\033" in tty_text.replace(CLEAR, "") or "\007" in tty_text:
    fail(f"narrow: a control byte of the command reached the terminal: {tty_text!r}")
rc, tty_text, out, _ = on_pty(["-i", "-r", "2"] + events + ["-S", "sh", "--", hostile], cols=200)
if "sleep 0.2 \\x1b]0;pwned\\x07 \\x1b[2J  run" not in tty_text:
    fail(f"wide: the command is not shown escaped: {tty_text!r}")

# 5. At most about 10 lines a second: 60 quick runs draw a few lines, not 60.
rc, tty_text, out, took = on_pty(["-r", "60"] + events + ["--", "true"])
drawn = lines_drawn(tty_text)
if rc != 0 or not 1 <= len(drawn) <= 2 + took * 10:
    fail(f"rate: {len(drawn)} lines in {took:.2f} s (exit {rc})")

# 6. An error erases the line first: it starts a line of its own.
rc, tty_text, out, _ = on_pty(["-r", "3"] + events + ["--", "false"])
if rc != 1 or CLEAR + "dkperf bench: command 'false' exited with status 1" not in tty_text:
    fail(f"error: exit {rc}, the terminal got {tty_text!r}")

if failures:
    sys.exit(1)
print("ok")
