#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Every source file of the project carries its licence in an SPDX line at
its top (the first line, or the second after a #! line): C, headers,
version scripts, Python, shell, CMake, the man page and the build's
templates. Generated files get theirs from their generator.

usage: check_spdx.py SOURCE_DIR
Lists the files tracked by git when SOURCE_DIR is a checkout; otherwise
every file under it.
"""
import os
import subprocess
import sys

TAG = "SPDX-License-Identifier: MIT OR Apache-2.0"
SOURCE = (".c", ".h", ".map", ".py", ".sh", ".cmake", ".in", ".1")
SKIP = ("tests/fuzz/corpus/", "tests/fixtures/", "build")

root = sys.argv[1]
try:
    files = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                           check=True).stdout.split()
except (OSError, subprocess.CalledProcessError):
    files = [os.path.relpath(os.path.join(d, f), root)
             for d, _, names in os.walk(root) for f in names]
missing, seen = [], 0
for f in files:
    if f.startswith(SKIP) or f.startswith("tests/golden/") and not f.endswith(".sh"):
        continue
    base = os.path.basename(f)
    if not (f.endswith(SOURCE) or base == "CMakeLists.txt" or f == ".ci/run"):
        continue
    try:
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            head = [fh.readline() for _ in range(2)]
    except OSError:
        continue
    seen += 1
    if not (TAG in head[0] or head[0].startswith("#!") and TAG in head[1]):
        missing.append(f)
for f in missing:
    print("no SPDX line at the top:", f)
print(f"{seen} source files, {len(missing)} without the licence's SPDX line")
sys.exit(1 if missing or seen == 0 else 0)
