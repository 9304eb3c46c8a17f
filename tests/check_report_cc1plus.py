#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf record of `g++ -c` of a real source file (the C++ standard
library's headers parsed by Debian's cc1plus, which has no symbols): in
the folded stacks every address of cc1plus is one [cc1plus] frame, never
an offset, never two in a row, so each caller has one [cc1plus] frame.

usage: check_report_cc1plus.py DKPERF WORKDIR
Exits 77 (skipped) without g++ or where cpu-clock cannot be sampled.
"""
import os
import shutil
import subprocess
import sys

dkperf, work = sys.argv[1:3]
gxx = shutil.which("g++")
if gxx is None:
    print("skipped: no g++")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
src = os.path.join(work, "t.cc")
with open(src, "w") as f:
    f.write("#include <map>\n#include <regex>\n#include <string>\n#include <vector>\n"
            "std::map<std::string, std::vector<int>> m;\n"
            "bool match(const std::string &s) { return std::regex_match(s, std::regex(\"a+b\")); }\n")
data = os.path.join(work, "cc.data")
r = subprocess.run([dkperf, "record", "-e", "cpu-clock", "-F", "2000", "-g", "-o", data, "--",
                    gxx, "-O1", "-c", src, "-o", os.path.join(work, "t.o")],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
if r.returncode != 0:
    if "not supported" in r.stdout or "permission" in r.stdout.lower():
        print(f"skipped: cpu-clock cannot be sampled here: {r.stdout}")
        sys.exit(77)
    sys.exit(f"dkperf record of g++ -c exited {r.returncode}: {r.stdout}")
r = subprocess.run([dkperf, "report", "-i", data, "--folded"], stdout=subprocess.PIPE,
                   stderr=subprocess.PIPE, text=True)
if r.returncode != 0:
    sys.exit(f"dkperf report --folded exited {r.returncode}: {r.stderr}")
stacks = [line.rsplit(" ", 1)[0].split(";") for line in r.stdout.splitlines() if line]
fails = []
if not any("[cc1plus]" in s for s in stacks):
    fails.append("no [cc1plus] frame at all")
offsets = sorted({f for s in stacks for f in s if f.startswith("[cc1plus+")})
if offsets:
    fails.append(f"{len(offsets)} [cc1plus+0x...] frames, e.g. {offsets[:3]}")
runs = [s for s in stacks if any(a == b == "[cc1plus]" for a, b in zip(s, s[1:]))]
if runs:
    fails.append(f"{len(runs)} stacks with two [cc1plus] frames in a row, e.g. {runs[0][:8]}")
shutil.rmtree(work)
if fails:
    sys.exit("check_report_cc1plus: " + "; ".join(fails))
print(f"{len(stacks)} stacks; cc1plus's unnamed addresses one [cc1plus] frame per caller")
