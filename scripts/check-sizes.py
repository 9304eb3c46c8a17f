#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Check the size limits of CONTRIBUTING.md: no C source file of the
libraries or the tool over 800 lines, no test source over 1000. A file that
grows past its limit is split along its seams, not allowed to grow.

usage: check-sizes.py [--root DIR] [--self-test]
Exit status 0 when every file is within its limit; 1 with one line per file
over it (path, lines, limit); 2 for a usage error.
"""
import argparse
import os
import sys
import tempfile

# (directory relative to the root, file endings, limit in lines)
LIMITS = [
    ("src", (".c",), 800),
    ("libdkbench", (".c",), 800),
    ("tools", (".c",), 800),
    ("tests", (".c", ".h", ".py", ".sh"), 1000),
]


def lines_of(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def check(root):
    bad = []
    for top, ends, limit in LIMITS:
        base = os.path.join(root, top)
        for d, dirs, files in os.walk(base):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            for name in sorted(files):
                if not name.endswith(ends):
                    continue
                path = os.path.join(d, name)
                n = lines_of(path)
                if n > limit:
                    bad.append("%s: %d lines, over the limit of %d" %
                               (os.path.relpath(path, root), n, limit))
    return bad


def self_test():
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "src/core"))
        os.makedirs(os.path.join(t, "tests"))
        with open(os.path.join(t, "src/core/ok.c"), "w") as f:
            f.write("x\n" * 800)
        with open(os.path.join(t, "tests/ok.c"), "w") as f:
            f.write("x\n" * 1000)
        if check(t):
            print("self-test: files at the limit were refused", file=sys.stderr)
            return 1
        with open(os.path.join(t, "src/core/big.c"), "w") as f:
            f.write("x\n" * 801)
        with open(os.path.join(t, "tests/big.c"), "w") as f:
            f.write("x\n" * 1001)
        bad = check(t)
        want = ["src/core/big.c: 801 lines, over the limit of 800",
                "tests/big.c: 1001 lines, over the limit of 1000"]
        if bad != want:
            print("self-test: expected %r, got %r" % (want, bad), file=sys.stderr)
            return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description="check the file size limits")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    bad = check(a.root)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
