#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf report of functions named as C++ and Rust compilers name theirs
(tests/record_fixture --mangled: ns::Box<double>::sum(int) const, a Rust
legacy name with its hash, a Rust v0 name): demangled in every output
(--stdio, --folded, --speedscope, --html, --pprof), as the images hold them with
--no-demangle; and the table's image column holding a long image name cut
with "...", the symbols after it in place. With no-demangler, DKPERF is a
build without libiberty: C++ and Rust legacy names stay mangled (v0
names are read by our own decoder), and each report says
why once on stderr (never with --no-demangle, nor for a recording of C
functions).

usage: check_report_demangle.py DKPERF RECORD_FIXTURE WORKDIR [no-demangler]
"""
import gzip
import html.parser
import json
import os
import re
import subprocess
import sys

dkperf, fixture, work = sys.argv[1:4]
no_demangler = sys.argv[4:] == ["no-demangler"]
os.makedirs(work, exist_ok=True)
from checks import check, failures

CXX = "ns::Box<double>::sum(int) const"
LEGACY = "<alloc::string::String as core::fmt::Display>::fmt"
V0 = "mycrate::foo::bar"
MANGLED = {CXX: "_ZNK2ns3BoxIdE3sumEi",
           LEGACY: "_ZN60_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$3fmt"
                   "17h0123456789abcdefE",
           V0: "_RNvNtCs1234_7mycrate3foo3bar"}
COUNTS = {CXX: 5, LEGACY: 4, V0: 3}


def run(*args):
    p = subprocess.run([dkperf, *args], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        sys.exit(f"dkperf {' '.join(args)} exited {p.returncode}: {p.stderr}")
    check("demangle" not in p.stderr and "mangled" not in p.stderr,
          f"no note of a missing demangler: {p.stderr!r}")
    return p


data = os.path.join(work, "mangled.data")
subprocess.run([fixture, data, "--mangled"], check=True)

if no_demangler:
    plain = os.path.join(work, "plain.data")
    subprocess.run([fixture, plain, "--rounds", "1"], check=True)
    for args, note in ((["-i", data], True), (["-i", data, "--no-demangle"], False),
                       (["-i", data, "--folded"], True), (["-i", plain], False)):
        p = subprocess.run([dkperf, "report", *args], capture_output=True, text=True, timeout=120)
        lines = [l for l in p.stderr.splitlines() if "mangled" in l]
        want = ["dkperf report: note: this dkperf was built without GNU libiberty: C++ and Rust "
                "legacy names are shown mangled (install libiberty-dev, then build it again)"] \
            if note else []
        check(p.returncode == 0 and lines == want, f"report {args}: {p.returncode} {p.stderr!r}")
        check(MANGLED[CXX] in p.stdout or plain in args, f"report {args}: the names mangled")
        # Rust v0 names are read by our own decoder, libiberty or not.
        check(plain in args or (V0 in p.stdout) == ("--no-demangle" not in args),
              f"report {args}: the v0 name demangled unless --no-demangle:\n{p.stdout}")
    sys.exit(f"{len(failures)} check(s) failed" if failures else print("ok"))

# --stdio: the names, and every symbol in the column the header puts it.
out = run("report", "-i", data, "--stdio").stdout
lines = out.splitlines()
head = next(l for l in lines if l.startswith("# Children"))
col = head.index("Symbol")
rows = [l for l in lines if re.match(r"^\s+[\d.]+%", l)]
syms = {l[col:]: l for l in rows}
for name, n in COUNTS.items():
    check(name in syms and int(syms[name].split()[2]) == n, f"--stdio row {name} of {n}:\n{out}")
check(all(l[col - 2:col] == "  " and l[col] != " " for l in rows),
      f"every symbol starts in the Symbol column ({col}):\n{out}")
long = [l for l in rows if "[libsomething-with-a-long-name.so.1]" in l]
check(len(long) == 1 and "libsomething-with-a-l...  [" in long[0] and long[0].index("[lib") == col,
      f"a long image name cut with '...' to its column:\n{out}")

# dkperf diff: the names demangled, and its image column as the table's.
out = run("diff", data, data).stdout
lines = out.splitlines()
head = next(l for l in lines if l.startswith("# Baseline"))
col = head.index("Symbol")
rows = [l for l in lines if l.strip() and not l.startswith("#")]
check(all(any(l.endswith(name) for l in rows) for name in COUNTS), f"diff: the names:\n{out}")
check(rows and all(l[col - 2:col] == "  " and l[col] != " " for l in rows),
      f"diff: every symbol starts in the Symbol column ({col}):\n{out}")
long = [l for l in rows if "[libsomething-with-a-long-name.so.1]" in l]
check(len(long) == 1 and "libsomething-with-a-l...  [" in long[0],
      f"diff: a long image name cut with '...' to its column:\n{out}")

# --folded: the names, each stack once.
out = run("report", "-i", data, "--folded").stdout
want = {f"fixture;main;{k} {v}" for k, v in COUNTS.items()}
want.add("fixture;main;[libsomething-with-a-long-name.so.1] 2")
check(set(out.splitlines()) == want, f"--folded:\n{out}expected\n{sorted(want)}")

# --no-demangle: the names as the image holds them, in every output.
out = run("report", "-i", data, "--folded", "--no-demangle").stdout
want = {f"fixture;main;{MANGLED[k]} {v}" for k, v in COUNTS.items()}
want.add("fixture;main;[libsomething-with-a-long-name.so.1] 2")
check(set(out.splitlines()) == want, f"--folded --no-demangle:\n{out}")
out = run("report", "-i", data, "--no-demangle").stdout
check(all(m in out for m in MANGLED.values()) and CXX not in out, f"--stdio --no-demangle:\n{out}")

# --speedscope: the shared frames' names.
path = os.path.join(work, "mangled.speedscope.json")
run("report", "-i", data, "--speedscope", path)
names = {f["name"] for f in json.load(open(path, encoding="utf-8"))["shared"]["frames"]}
check(set(COUNTS) <= names and not set(MANGLED.values()) & names, f"--speedscope frames: {names}")


class Frames(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.names = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "g" and a.get("class") == "f":
            self.names.add(a.get("data-n"))


# --html: the flame graph's frames (the attribute escaped, read back).
path = os.path.join(work, "mangled.html")
run("report", "-i", data, "--html", path)
page = Frames()
page.feed(open(path, encoding="utf-8").read())
check(set(COUNTS) <= page.names and not set(MANGLED.values()) & page.names,
      f"--html frames: {page.names}")
path = os.path.join(work, "mangled-raw.html")
run("report", "-i", data, "--html", path, "--no-demangle")
page = Frames()
page.feed(open(path, encoding="utf-8").read())
check(set(MANGLED.values()) <= page.names, f"--html --no-demangle frames: {page.names}")


def pprof_strings(path):
    """The string table (field 6) of a gzipped profile.proto."""
    buf, i, out = gzip.decompress(open(path, "rb").read()), 0, []

    def varint(i):
        v, shift = 0, 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v, i
    while i < len(buf):
        key, i = varint(i)
        wt = key & 7
        if wt == 0:
            _, i = varint(i)
        elif wt == 2:
            n, i = varint(i)
            if key >> 3 == 6:
                out.append(buf[i:i + n].decode("utf-8", "replace"))
            i += n
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            break
    return set(out)


# --pprof: the functions' names in its string table.
path = os.path.join(work, "mangled.pb.gz")
run("report", "-i", data, "--pprof", path)
names = pprof_strings(path)
check(set(COUNTS) <= names and not set(MANGLED.values()) & names, f"--pprof names: {names}")
path = os.path.join(work, "mangled-raw.pb.gz")
run("report", "-i", data, "--pprof", path, "--no-demangle")
check(set(MANGLED.values()) <= pprof_strings(path), "--pprof --no-demangle names")

if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("ok")
