#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""A dkbench-1 baseline with one very wide object, for the performance
sweep: the document's own members (schema, run, results: no results)
followed by MEMBERS more ("k0000000": 0, ...) that a reader must skip.
A reader that compares each new member name with every earlier one takes
time quadratic in MEMBERS; a linear one reads 400,000 in well under a
second. Any dkbench program compares with it: a run that loads it ends
"in baseline ... but not run" free, with each benchmark reported as not in
the baseline.

usage: wide_baseline.py [--members N] DIR [NAME]
    writes DIR/NAME.json (NAME: wide); then run e.g.
    bench_example --results-dir DIR --baseline NAME --samples 2 --warm-up 0
"""

import argparse
import os


def write_wide_baseline(path, members=400000):
    """Write the baseline to path; returns its size in bytes."""
    parts = ['{"schema":"dkbench-1","run":{},"results":[]']
    parts.extend(',"k%07d":0' % i for i in range(members))
    parts.append("}\n")
    text = "".join(parts).encode()
    with open(path, "wb") as f:
        f.write(text)
    return len(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--members", type=int, default=400000)
    ap.add_argument("dir")
    ap.add_argument("name", nargs="?", default="wide")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    path = os.path.join(a.dir, a.name + ".json")
    size = write_wide_baseline(path, a.members)
    print("%s: %d members, %d bytes" % (path, a.members, size))


if __name__ == "__main__":
    main()
