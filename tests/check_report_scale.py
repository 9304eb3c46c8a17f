#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf report of a large generated recording (2,000,000 samples) against
a small one whose samples it repeats 2,000 times: the --stdio table is the
small one's with every count times 2,000 and the same percentages, and
report's peak memory stays within 20 MB of the small one's (it streams the
file and counts each distinct stack once).

usage: check_report_scale.py DKPERF REPORT_GEN WORKDIR
"""
import os
import re
import resource
import shutil
import subprocess
import sys

dkperf, gen, work = sys.argv[1:4]
SMALL, TIMES = 1000, 2000
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAILED:", what)


def peak_kb():
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
small, big = os.path.join(work, "small.data"), os.path.join(work, "big.data")
subprocess.run([gen, small, str(SMALL), "--period", str(SMALL)], check=True)
subprocess.run([gen, big, str(SMALL * TIMES), "--period", str(SMALL)], check=True)


def report(path):
    p = subprocess.run([dkperf, "report", "-i", path, "--stdio"], capture_output=True, text=True)
    check(p.returncode == 0, f"report of {path} exits 0: {p.stderr}")
    return p.stdout.replace(path, "FILE").splitlines()


a = report(small)
before = peak_kb()
b = report(big)
after = peak_kb()
print(f"peak resident: {before} kB before the large report, {after} kB after")
check(after <= before + 20 * 1024, f"the large report's peak {after} kB is within 20 MB of {before} kB")


def num(s):
    return int(s.replace(",", ""))


check(len(a) == len(b) and len(a) > 8, f"as many lines: {len(a)}, {len(b)}")
rows = 0
for x, y in zip(a, b):
    mx = re.match(r"^\s+([\d.]+%)\s+([\d.]+%)\s+(\d+)\s+(.*)$", x)
    my = re.match(r"^\s+([\d.]+%)\s+([\d.]+%)\s+(\d+)\s+(.*)$", y)
    if mx and my:
        rows += 1
        check(mx.group(1, 2, 4) == my.group(1, 2, 4), f"the same row: {x!r} / {y!r}")
        check(num(my.group(3)) == TIMES * num(mx.group(3)), f"the count times {TIMES}: {x!r} / {y!r}")
        continue
    # Headers: every count in them times TIMES (but the sampling rate), the
    # rest the same.
    x, y = re.sub(r"\(\d+ samples a second\)", "", x), re.sub(r"\(\d+ samples a second\)", "", y)
    check(re.sub(r"\d[\d,]*", "N", x) == re.sub(r"\d[\d,]*", "N", y), f"the same line: {x!r} / {y!r}")
    for u, v in zip(re.findall(r"\d[\d,]*", x), re.findall(r"\d[\d,]*", y)):
        check(num(v) == TIMES * num(u), f"a count of {x!r} times {TIMES}: {u} / {v}")
check(rows >= 16, f"a row per function: {rows}")
shutil.rmtree(work, ignore_errors=True)
sys.exit(1 if failures else 0)
