#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf record --switch-output on this machine (cpu-clock), as perf's:

  time    --switch-output=1s over a program of a few CPU seconds: about one
          file a second, each named OUTPUT.YYYYMMDDhhmmsscc, each read alone
          (its maps and names repeated: report names rp_hot in every one);
          no gap between two files longer than the longest inside one; the
          files' samples a CPU second as many as an uninterrupted
          recording's of the same program in the same run (within 3%)
  size    --switch-output=4K: every file but the last at least 4 KiB;
          --switch-max-files 2 keeps the two newest
  signal  --switch-output (signal): SIGUSR2 to dkperf makes the next file,
          the program runs on undisturbed
  pprof   --pprof-dir DIR: one pprof file per ended file, no half-written
          one left, read by go tool pprof where it is installed
  errors  a mode that is no size or time, --switch-max-files or --pprof-dir
          without --switch-output: exit 2 and one line; a --pprof-dir that
          is no directory: exit 1

usage: check_record_switch.py DKPERF RECORD_PROG DKREC_DUMP WORKDIR CASE
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import time

dkperf, prog, dump, work, case = sys.argv[1:6]
work = os.path.abspath(work)
os.makedirs(work, exist_ok=True)
for f in glob.glob(os.path.join(work, "*")):
    shutil.rmtree(f) if os.path.isdir(f) else os.unlink(f)
failures = []
STAMP = re.compile(r"\.\d{16}(-\d+)?$")


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAILED:", what)
    return cond


def record(args, cpu_seconds):
    out = os.path.join(work, "r.data")
    p = subprocess.run([dkperf, "record", "-e", "cpu-clock", "-F", "999", "-g", "-o", out] +
                       args + ["--", prog, "--print-cpu", str(cpu_seconds)],
                       capture_output=True, text=True, timeout=300)
    m = re.search(r"^cpu ([\d.]+)$", p.stdout, re.M)
    return p, float(m[1]) if m else None


def files():
    return sorted(f for f in glob.glob(os.path.join(work, "r.data.*")) if STAMP.search(f))


def dumped(paths):
    p = subprocess.run([dump] + paths, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"dkrec_dump: {p.stderr}")
    rows = []
    for line in p.stdout.splitlines():
        f = line.split()
        rows.append({f[i]: int(f[i + 1]) for i in range(1, len(f) - 1, 2)} | {"path": f[0]})
    return rows


def case_time():
    t0 = time.monotonic()
    p, cpu = record(["--switch-output=1s"], 3)
    wall = time.monotonic() - t0
    check(p.returncode == 0 and cpu, f"record --switch-output=1s: {p.returncode} {p.stderr}")
    names = files()
    check(not os.path.exists(os.path.join(work, "r.data")), "the last file is renamed too")
    dumps = [l for l in p.stderr.splitlines() if l.startswith("[ dkperf record: dump ")]
    check(len(dumps) == len(names) and len(names) >= 3 and len(names) <= wall + 1.5,
          f"about one file a second of {wall:.1f} s: {names}\n{p.stderr}")
    rows = dumped(names)
    total = sum(r["samples"] for r in rows)
    check(all(r["complete"] == 1 for r in rows), f"every file complete: {rows}")
    check(f"{total:,} samples" in p.stderr and f"written to {len(names)} files" in p.stderr,
          f"the summary counts the files' samples ({total}): {p.stderr}")
    inside = max(r["maxgap"] for r in rows)
    for a, b in zip(rows, rows[1:]):
        gap = b["first"] - a["last"]
        check(0 < gap <= max(inside, 2 * 10**9 // 999),
              f"{os.path.basename(a['path'])} -> {os.path.basename(b['path'])}: a gap of "
              f"{gap} ns, the longest inside a file {inside} ns")
    for n in names:
        r = subprocess.run([dkperf, "report", "-i", n, "--stdio"], capture_output=True,
                           text=True, timeout=120)
        check(r.returncode == 0 and "rp_hot" in r.stdout,
              f"report of {os.path.basename(n)} alone names rp_hot: {r.stdout[:600]}{r.stderr}")
    # The same program uninterrupted, in the same run: as many samples a
    # CPU second.
    one = os.path.join(work, "one.data")
    q = subprocess.run([dkperf, "record", "-e", "cpu-clock", "-F", "999", "-g", "-o", one,
                        "--", prog, "--print-cpu", "3"], capture_output=True, text=True,
                       timeout=300)
    m = re.search(r"^cpu ([\d.]+)$", q.stdout, re.M)
    n1 = dumped([one])[0]["samples"]
    if check(q.returncode == 0 and m, f"the uninterrupted recording: {q.stderr}"):
        a, b = total / cpu, n1 / float(m[1])
        print(f"{total} samples for {cpu:.3f} s in {len(names)} files; {n1} for {m[1]} s in one")
        check(abs(a - b) <= 0.03 * b, f"{a:.1f} samples a CPU second in files, {b:.1f} in one")


def case_size():
    p, _ = record(["--switch-output=4K", "--switch-max-files", "2"], 3)
    check(p.returncode == 0, f"record --switch-output=4K: {p.stderr}")
    names = files()
    dumps = [l for l in p.stderr.splitlines() if l.startswith("[ dkperf record: dump ")]
    check(len(dumps) >= 3 and len(names) == 2, f"two files of {len(dumps)} kept: {names}")
    ended = [re.search(r"dump (\S+) ", l)[1] for l in dumps]
    check(names == sorted(ended[-2:]), f"the two newest kept: {names}, ended {ended}")
    check(os.path.getsize(names[0]) >= 4096, f"{names[0]}: {os.path.getsize(names[0])} bytes")
    for f in ended[:-2]:
        check(not os.path.exists(f), f"{f} removed")


def case_signal():
    out = os.path.join(work, "r.data")
    child = subprocess.Popen([dkperf, "record", "-e", "cpu-clock", "--switch-output", "-o", out,
                              "--", prog, "--print-cpu", "2"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    child.send_signal(signal.SIGUSR2)
    so, se = child.communicate(timeout=300)
    check(child.returncode == 0 and re.search(r"^cpu ", so, re.M),
          f"the program ran on undisturbed: {child.returncode} {so!r} {se!r}")
    check(len(files()) == 2, f"SIGUSR2 made a second file: {files()} {se}")


def case_pprof():
    d = os.path.join(work, "pprof")
    os.mkdir(d)
    p, _ = record(["--switch-output=1s", "--pprof-dir", d], 2)
    check(p.returncode == 0, f"record --pprof-dir: {p.stderr}")
    names = files()
    got = sorted(os.listdir(d))
    want = sorted(os.path.basename(n) + ".pb.gz" for n in names)
    check(got == want, f"one pprof file per recording: {got}, want {want}")
    for g in got:
        with open(os.path.join(d, g), "rb") as f:
            check(f.read(2) == b"\x1f\x8b", f"{g} is gzip")
    go = shutil.which("go")
    if go and got:
        t = subprocess.run([go, "tool", "pprof", "-top", os.path.join(d, got[0])],
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, HOME=work, GOCACHE=os.path.join(work, "gocache")))
        check(t.returncode == 0 and "rp_hot" in t.stdout, f"go tool pprof -top: {t.stdout}{t.stderr}")
    shutil.rmtree(d)


def case_errors():
    for args, rc, what in ((["--switch-output=10x"], 2, "--switch-output=10x: give signal"),
                           (["--switch-output=1ms"], 2, "--switch-output=1ms: give signal"),
                           (["--switch-output=0s"], 2, "--switch-output=0s: give signal"),
                           (["--switch-max-files", "2"], 2, "--switch-max-files: only with"),
                           (["--pprof-dir", work], 2, "--pprof-dir: only with"),
                           (["--switch-output=1s", "--pprof-dir", os.path.join(work, "no")], 1,
                            "--pprof-dir " + os.path.join(work, "no") + ": No such file")):
        p = subprocess.run([dkperf, "record", "-o", os.path.join(work, "e.data")] + args +
                           ["--", "true"], capture_output=True, text=True, timeout=60)
        lines = p.stderr.splitlines()
        check(p.returncode == rc and len(lines) == 1 and what in lines[0],
              f"{args}: exit {p.returncode} (want {rc}), {p.stderr!r}")


{"time": case_time, "size": case_size, "signal": case_signal, "pprof": case_pprof,
 "errors": case_errors}[case]()
for f in glob.glob(os.path.join(work, "*")):
    shutil.rmtree(f) if os.path.isdir(f) else os.unlink(f)
sys.exit(1 if failures else 0)
