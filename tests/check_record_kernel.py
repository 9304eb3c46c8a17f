#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf record -g of a program that spends its time in system calls (dd
copying /dev/zero to /dev/null a byte at a time), on this Linux machine:
the kernel's call chains are named from /proc/kallsyms and marked [k] in
every output ("[k] name" in --stdio, "name_[k]" in folded, speedscope and
HTML); where the kernel's symbols hide their addresses (a table of zeros
given through DKPERF_KALLSYMS, as kptr_restrict makes it), one [kernel]
frame and one line saying why; a table that does not parse, one line
naming its line.

usage: check_record_kernel.py DKPERF WORKDIR
Exits 77 when this machine gives no kernel frames to read (not root, or
perf_event_paranoid and kptr_restrict keeping them hidden).
"""
import json
import os
import subprocess
import sys

dkperf, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
from checks import check, failures


def run(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([dkperf, *args], capture_output=True, text=True, timeout=120, env=e)


def readable_kernel():
    try:
        with open("/proc/kallsyms") as f:
            for line in f:
                if line.split()[0].strip("0") != "":
                    return True
                break
    except OSError:
        pass
    return False


if os.geteuid() != 0 or not readable_kernel():
    print("skipped: kernel frames need root and a readable /proc/kallsyms here")
    sys.exit(77)

data = os.path.join(work, "kernel.data")
p = run("record", "-e", "cpu-clock", "-g", "-o", data, "--", "dd", "if=/dev/zero",
        "of=/dev/null", "bs=1", "count=400000")
if not check(p.returncode == 0, f"record: {p.returncode} {p.stderr!r}"):
    sys.exit(1)

# --stdio: kernel symbols in [kernel.kallsyms], marked as perf marks them.
p = run("report", "-i", data, "--stdio")
check(p.returncode == 0, f"report --stdio: {p.stderr!r}")
rows = [l for l in p.stdout.splitlines() if not l.startswith("#") and l.strip()]
krows = [l for l in rows if "[kernel.kallsyms]" in l]
check(krows and all("  [k] " in l for l in krows), f"kernel rows marked [k]: {krows[:3]}")
names = [l.split("[k] ", 1)[1] for l in krows if "[k] " in l]
check(any("sys_" in n or "entry_SYSCALL" in n for n in names),
      f"a system call's kernel frames named: {names[:10]}")
check(not any(l.split()[-1] == "[kernel]" for l in rows), "no [kernel] row when named")
check("kernel frames shown as [kernel]" not in p.stderr, f"no note: {p.stderr!r}")

# Folded: name_[k] as stackcollapse-perf.pl --kernel writes them, inner to
# the user frames.
p = run("report", "-i", data, "--folded")
check(p.returncode == 0, f"report --folded: {p.stderr!r}")
kstacks = [l for l in p.stdout.splitlines() if "_[k]" in l]
check(kstacks, "folded stacks with kernel frames")
for line in kstacks[:50]:
    frames = line.rsplit(" ", 1)[0].split(";")
    first = next(i for i, f in enumerate(frames) if f.endswith("_[k]"))
    check(all(f.endswith("_[k]") for f in frames[first:]),
          f"kernel frames innermost, one run: {line}")
check(any("entry_SYSCALL" in l or "sys_" in l for l in kstacks), "entry or sys_ in folded")

# Speedscope and HTML.
ss = os.path.join(work, "kernel.speedscope.json")
p = run("report", "-i", data, "--speedscope", ss)
check(p.returncode == 0, f"report --speedscope: {p.stderr!r}")
with open(ss) as f:
    frames = json.load(f)["shared"]["frames"]
kf = [fr for fr in frames if fr["file"] == "[kernel.kallsyms]"]
check(kf and all(fr["name"].endswith("_[k]") for fr in kf), f"speedscope kernel frames: {kf[:3]}")
html = os.path.join(work, "kernel.html")
p = run("report", "-i", data, "--html", html)
check(p.returncode == 0, f"report --html: {p.stderr!r}")
with open(html) as f:
    check("_[k]" in f.read(), "HTML names kernel frames with _[k]")

# Hidden addresses: a table of zeros, as kptr_restrict gives it.
zeros = os.path.join(work, "kallsyms-zero")
with open("/proc/kallsyms") as src, open(zeros, "w") as out:
    for line in src:
        out.write("0000000000000000 " + line.split(" ", 1)[1])
p = run("report", "-i", data, "--folded", env={"DKPERF_KALLSYMS": zeros})
check(p.returncode == 0, f"report with hidden kallsyms: {p.stderr!r}")
check("_[k]" not in p.stdout, "no kernel names when hidden")
check(any(l.rsplit(" ", 1)[0].endswith(";[kernel]") for l in p.stdout.splitlines()),
      "one [kernel] frame inner to the user stack when hidden")
lines = p.stderr.splitlines()
why = [l for l in lines if "kernel frames shown as [kernel]" in l]
check(len(why) == 1 and "every address as 0" in why[0] and "kptr_restrict" in why[0],
      f"one line saying why: {lines!r}")

# A table that does not parse: one line naming the file and line.
bad = os.path.join(work, "kallsyms-bad")
with open(bad, "w") as out:
    out.write("ffffffff81000000 T _stext\nnot a symbol line\n")
p = run("report", "-i", data, "--stdio", env={"DKPERF_KALLSYMS": bad})
check(p.returncode == 0, f"report with a bad kallsyms: {p.stderr!r}")
why = [l for l in p.stderr.splitlines() if "kernel frames shown as [kernel]" in l]
check(len(why) == 1 and f"{bad}: line 2 is not" in why[0], f"bad table named: {p.stderr!r}")

for f in (data, ss, html, zeros, bad):
    os.unlink(f)
os.rmdir(work)
if failures:
    print(f"{len(failures)} checks failed")
    sys.exit(1)
print("kernel call chains named and marked in every output")
