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
  max_pprof  --switch-max-files 2 --pprof-dir DIR: the pprof files of the
          removed recordings removed too, DIR's other files left alone
  pprof_taken  --pprof-dir DIR holding files under the names record would
          give: each recording named so that its pprof file replaces none
  errors  a mode that is no size or time, or past ten years, --switch-max-files
          or --pprof-dir without --switch-output: exit 2 and one line; a
          --pprof-dir that is no directory, a -o that is a link: exit 1, the
          link left as it was
  failing a --pprof-dir removed while recording: each pprof file that cannot
          be written is said, the recording goes on to the end (every file
          complete), exit 1
  fork    a child forked (no exec) by a parent that exits at once: its
          samples in the files after the first are still named, as the
          maps each file starts with are read again from /proc
  exec    a shell that execs the program: the exec is recorded as one (the
          shell's maps end there) in the file it happened in, each later
          file starts with the program's name as a plain one, and report
          names the program's functions
  all     -a --switch-output=4K (root): the size counts the file's own bytes,
          not the maps of every process it starts with
  merge   report -i A -i B of one recording written as two files (dkrec_dump
          --split: each with its own stack nodes, B's events in another
          order) equals report of one file of the same samples in every
          output (--stdio, --folded, --speedscope, --html, --pprof) but for
          the names of the files; lost and throttled counts add up
  merge_errors  report -i A -i MISSING, and -i A -i B of other events: one
          line naming the file (and the event), exit 1

usage: check_record_switch.py DKPERF RECORD_PROG DKREC_DUMP WORKDIR CASE
"""
import glob
import gzip
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
from checks import check, failures
STAMP = re.compile(r"\.\d{16}(-\d+)?$")


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
    # A file may hold no sample (a switch just before the end): the gap is
    # between the files that hold some.
    full = [r for r in rows if r["samples"] > 0]
    for a, b in zip(full, full[1:]):
        gap = b["first"] - a["last"]
        check(0 < gap <= max(inside, 2 * 10**9 // 999),
              f"{os.path.basename(a['path'])} -> {os.path.basename(b['path'])}: a gap of "
              f"{gap} ns, the longest inside a file {inside} ns")
    # Each file alone: one with samples names the program's hot function;
    # one without (the program had no CPU in that second, on a loaded
    # machine) is reported as empty.
    for row in rows:
        n = row["path"]
        r = subprocess.run([dkperf, "report", "-i", n, "--stdio"], capture_output=True,
                           text=True, timeout=120)
        want = "rp_hot" if row["samples"] > 0 else ": 0 samples of "
        check(r.returncode == 0 and want in r.stdout,
              f"report of {os.path.basename(n)} alone ({row['samples']} samples) shows {want}: "
              f"{r.stdout[:600]}{r.stderr}")
    # Every file at once: one report of all their samples.
    args = [a for n in names for a in ("-i", n)]
    r = subprocess.run([dkperf, "report", *args, "--stdio"], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0 and f": {total:,} samples of " in r.stdout and "rp_hot" in r.stdout,
          f"report -i of the {len(names)} files: their {total} samples: {r.stdout[:600]}{r.stderr}")
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


def report_out(inputs, *args):
    r = subprocess.run([dkperf, "report", *[a for n in inputs for a in ("-i", n)], *args],
                       capture_output=True, timeout=120)
    check(r.returncode == 0, f"report {inputs} {args}: {r.stderr}")
    return r.stdout


def case_merge():
    p, _ = record([], 1)
    check(p.returncode == 0, f"record: {p.stderr}")
    src, whole, a, b = (os.path.join(work, n) for n in ("r.data", "w.data", "a.data", "b.data"))
    q = subprocess.run([dump, "--split", src, whole, a, b], capture_output=True, text=True)
    check(q.returncode == 0, f"dkrec_dump --split: {q.stderr}")
    rows = dumped([whole, a, b])
    check(rows[1]["samples"] > 50 and rows[2]["samples"] > 50,
          f"two halves of a recording: {rows}")
    for args in (["--stdio"], ["--stdio", "--sort", "dso", "--children"], ["--folded"],
                 ["--stdio", "--on-cpu"]):
        one = report_out([whole], *args).decode()
        two = report_out([a, b], *args).decode()
        check(one.replace(whole, f"{a}, {b}") == two,
              f"report {args} of A and B is that of the whole:\n{one[:1500]}\n---\n{two[:1500]}")
    check(b"# lost 5, throttled 5 times" in report_out([a, b], "--stdio"),
          "the lost and throttled counts of A and B add up")
    for opt, ext in (("--speedscope", "ss"), ("--html", "html"), ("--pprof", "pb")):
        outs = []
        for inputs, tag in (([whole], "w"), ([a, b], "ab")):
            out = os.path.join(work, f"{tag}.{ext}")
            report_out(inputs, opt, out)
            with open(out, "rb") as f:
                data = f.read()
            outs.append(gzip.decompress(data) if ext == "pb" else data)
        check(outs[0].replace(whole.encode(), f"{a}, {b}".encode()) == outs[1],
              f"report {opt} of A and B is that of the whole")


def case_merge_errors():
    p, _ = record([], 0.3)
    check(p.returncode == 0, f"record: {p.stderr}")
    a, missing = os.path.join(work, "r.data"), os.path.join(work, "missing.data")
    r = subprocess.run([dkperf, "report", "-i", a, "-i", missing], capture_output=True,
                       text=True, timeout=120)
    lines = r.stderr.splitlines()
    check(r.returncode == 1 and len(lines) == 1 and missing in lines[0] and
          "No such file" in lines[0], f"a missing second file: one line, exit 1: {r.stderr}")
    other = os.path.join(work, "t.data")
    q = subprocess.run([dkperf, "record", "-e", "task-clock", "-F", "999", "-g", "-o", other,
                        "--", prog, "--print-cpu", "0.3"], capture_output=True, text=True,
                       timeout=300)
    check(q.returncode == 0, f"record -e task-clock: {q.stderr}")
    r = subprocess.run([dkperf, "report", "-i", a, "-i", other, "--folded"],
                       capture_output=True, text=True, timeout=120)
    lines = r.stderr.splitlines()
    check(r.returncode == 1 and len(lines) == 1 and other in lines[0] and
          "task-clock" in lines[0] and r.stdout == "",
          f"other events: one line naming the file and the event, exit 1: {r.stderr}")
    # One file twice, or through a link: refused, it would count twice.
    link = os.path.join(work, "link.data")
    os.symlink(a, link)
    for second in (a, link):
        r = subprocess.run([dkperf, "report", "-i", a, "-i", second], capture_output=True,
                           text=True, timeout=120)
        check(r.returncode == 2 and r.stderr.count("\n") == 1 and "same file" in r.stderr,
              f"-i {a} -i {second}: refused in one line, exit 2: {r.returncode} {r.stderr!r}")
    # Two events of one name (cpu-clock at two rates) merge each with its
    # own: every event's samples twice one file's.
    two = os.path.join(work, "two.data")
    q = subprocess.run([dkperf, "record", "-e", "cpu-clock/1000000,cpu-clock/3000000", "-o", two,
                        "--", prog, "0.3"], capture_output=True, text=True, timeout=300)
    check(q.returncode == 0, f"record two cpu-clocks: {q.stderr}")
    copy = os.path.join(work, "copy.data")
    shutil.copyfile(two, copy)
    heads = []
    for args in (["-i", two], ["-i", two, "-i", copy]):
        r = subprocess.run([dkperf, "report", "--stdio"] + args, capture_output=True, text=True,
                           timeout=120)
        heads.append([int(m.replace(",", "")) for m in
                      re.findall(r"^# Event: cpu-clock .*?: ([\d,]+) samples", r.stdout, re.M)])
    check(len(heads[0]) == 2 and heads[1] == [2 * n for n in heads[0]],
          f"two cpu-clock events merged each with its own: {heads}")


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


def case_max_pprof():
    d = os.path.join(work, "pprof")
    os.mkdir(d)
    other = os.path.join(d, "other.pb.gz")
    with open(other, "wb") as f:
        f.write(b"not ours")
    p, _ = record(["--switch-output=4K", "--switch-max-files", "2", "--pprof-dir", d], 3)
    check(p.returncode == 0, f"record --switch-max-files --pprof-dir: {p.stderr}")
    dumps = [l for l in p.stderr.splitlines() if l.startswith("[ dkperf record: dump ")]
    names = files()
    check(len(dumps) >= 3 and len(names) == 2, f"two files of {len(dumps)} kept: {names}")
    got = sorted(os.listdir(d))
    want = sorted([os.path.basename(n) + ".pb.gz" for n in names] + ["other.pb.gz"])
    check(got == want, f"the pprof files of the kept recordings only: {got}, want {want}")
    with open(other, "rb") as f:
        check(f.read() == b"not ours", "a file record did not write is left alone")
    shutil.rmtree(d)


def case_pprof_taken():
    # Files of someone else's in DIR under every name record could give a
    # pprof file over the next minute: none replaced, none removed.
    d = os.path.join(work, "pprof")
    os.mkdir(d)
    now = time.time()
    theirs = []
    for k in range(-100, 6000):
        t = now + k / 100
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(t)) + "%02d" % int(t * 100 % 100)
        theirs.append(os.path.join(d, "r.data." + stamp + ".pb.gz"))
    for name in theirs:
        with open(name, "wb") as f:
            f.write(b"not ours")
    p, _ = record(["--switch-output=4K", "--switch-max-files", "2", "--pprof-dir", d], 1)
    check(p.returncode == 0, f"record --pprof-dir over others' names: {p.stderr}")
    left = [n for n in theirs if os.path.exists(n) and open(n, "rb").read() == b"not ours"]
    check(len(left) == len(theirs), f"{len(theirs) - len(left)} of others' files replaced or "
          f"removed: {sorted(set(theirs) - set(left))[:3]}")
    ours = sorted(set(os.listdir(d)) - set(os.path.basename(n) for n in theirs))
    want = sorted(os.path.basename(n) + ".pb.gz" for n in files())
    check(ours == want, f"the kept recordings' pprof files: {ours}, want {want}")
    shutil.rmtree(d)


def case_pprof_link():
    # Links at the hidden names a pprof file was once written under before
    # its rename (".NAME.pb.gz", every NAME of the next minute), to a file
    # outside DIR: never followed, so that file keeps its text.
    d = os.path.join(work, "pprof")
    os.mkdir(d)
    victim = os.path.join(work, "victim")
    with open(victim, "wb") as f:
        f.write(b"keep me")
    now = time.time()
    for k in range(-100, 6000):
        t = now + k / 100
        stamp = time.strftime("%Y%m%d%H%M%S", time.localtime(t)) + "%02d" % int(t * 100 % 100)
        os.symlink(victim, os.path.join(d, ".r.data." + stamp + ".pb.gz"))
    p, _ = record(["--switch-output=4K", "--switch-max-files", "2", "--pprof-dir", d], 1)
    check(p.returncode == 0, f"record --pprof-dir beside links: {p.stderr}")
    with open(victim, "rb") as f:
        check(f.read() == b"keep me", "a link at a hidden pprof name was followed")
    ours = sorted(n for n in os.listdir(d) if not n.startswith("."))
    want = sorted(os.path.basename(n) + ".pb.gz" for n in files())
    check(ours == want, f"the kept recordings' pprof files: {ours}, want {want}")
    shutil.rmtree(d)


def case_pprof_mode():
    # Under umask 077 the pprof files are as private as the recordings
    # they are made of: made as any file (0666 less the umask).
    d = os.path.join(work, "pprof")
    os.mkdir(d)
    old = os.umask(0o077)
    try:
        p, _ = record(["--switch-output=4K", "--pprof-dir", d], 1)
    finally:
        os.umask(old)
    check(p.returncode == 0, f"record --pprof-dir under umask 077: {p.stderr}")
    modes = {n: os.stat(os.path.join(d, n)).st_mode & 0o777 for n in os.listdir(d)}
    check(len(modes) > 0, "no pprof file written")
    wide = {n: oct(m) for n, m in modes.items() if m != 0o600}
    check(not wide, f"pprof files not 0600 under umask 077: {wide}")
    shutil.rmtree(d)


def case_failing():
    d = os.path.join(work, "pprof")
    os.mkdir(d)
    out = os.path.join(work, "r.data")
    child = subprocess.Popen([dkperf, "record", "-e", "cpu-clock", "--switch-output=1s",
                              "--pprof-dir", d, "-o", out, "--", prog, "--print-cpu", "3"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    shutil.rmtree(d)
    so, se = child.communicate(timeout=300)
    errs = [l for l in se.splitlines() if l.startswith("dkperf record: --pprof-dir")]
    names = files()
    check(child.returncode == 1 and len(errs) >= 1 and re.search(r"^cpu ", so, re.M),
          f"a pprof file that cannot be written is said, exit 1: {child.returncode} {se!r}")
    check(len(names) >= 3 and len(errs) == len(names),
          f"the recording went on: {len(names)} files, {len(errs)} pprof errors")
    rows = dumped(names)
    check(all(r["complete"] == 1 for r in rows) and sum(r["samples"] for r in rows) > 1000,
          f"every file complete: {rows}")


def case_fork():
    code = ("import os, time\n"
            "if os.fork() == 0:\n"
            "    t = time.time() + 2.5\n"
            "    while time.time() < t:\n"
            "        pass\n"
            "    os._exit(0)\n")
    out = os.path.join(work, "r.data")
    p = subprocess.run([dkperf, "record", "-e", "cpu-clock", "-g", "--switch-output=1s", "-o",
                        out, "--", "sh", "-c", f"{sys.executable} -c '{code}'; sleep 3"],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"record: {p.returncode} {p.stderr}")
    names = files()
    check(len(names) >= 3, f"three files or more: {names}")
    for n in names[1:]:
        r = subprocess.run([dkperf, "report", "-i", n, "--stdio", "--sort", "dso"],
                           capture_output=True, text=True, timeout=120)
        rows = [l.split() for l in r.stdout.splitlines() if re.match(r"^\s+[\d.]+%", l)]
        unknown = sum(float(x[1].rstrip("%")) for x in rows if x[-1] == "[unknown]")
        check(r.returncode == 0 and (not rows or unknown < 50),
              f"{os.path.basename(n)}: the forked child's samples are named "
              f"({unknown:.1f}% [unknown]):\n{r.stdout}")


def case_all():
    if os.geteuid() != 0:
        print("skipped: -a needs root here")
        sys.exit(77)
    out = os.path.join(work, "r.data")
    p = subprocess.run([dkperf, "record", "-e", "cpu-clock", "-a", "--switch-output=4K", "-o",
                        out, "--", prog, "1"], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"record -a: {p.returncode} {p.stderr}")
    rows = dumped(files())
    # Every file starts with the maps of every process (more than 4 KiB);
    # its 4 KiB of its own are some hundreds of samples (about 8 bytes
    # each), not the few of one drain.
    # (The median file: processes that start meanwhile add their names and
    # maps to a file's own bytes.)
    counts = sorted(r["samples"] for r in rows[:-1])
    check(len(rows) >= 2 and counts[len(counts) // 2] > 100,
          f"files of 4 KiB of their own: {[(r['samples']) for r in rows]}")


def case_errors():
    link = os.path.join(work, "link.data")
    os.symlink(os.path.join(work, "target.data"), link)
    p = subprocess.run([dkperf, "record", "--switch-output=1s", "-o", link, "--", "true"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and p.stderr.count("\n") == 1 and "not a regular file" in p.stderr
          and os.path.islink(link) and not glob.glob(link + ".*"),
          f"-o a link: refused, left as it was: {p.returncode} {p.stderr!r}")
    os.unlink(link)
    for args, rc, what in ((["--switch-output=10x"], 2, "--switch-output=10x: give signal"),
                           (["--switch-output=616385997d"], 2, "at most 10 years"),
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


def case_exec():
    p = subprocess.run([dkperf, "record", "-e", "cpu-clock", "-F", "999", "-o",
                        os.path.join(work, "r.data"), "--switch-output=1s", "--", "/bin/sh", "-c",
                        'exec "$0" --print-cpu 2.5', prog],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, f"record: {p.returncode} {p.stderr}")
    names = files()
    rows = dumped(names)
    check(len(rows) >= 2 and all(r["complete"] == 1 for r in rows), f"every file complete: {rows}")
    check(rows[0]["execs"] == 1 and all(r["execs"] == 0 and r["comms"] >= 1 for r in rows[1:]),
          f"one exec, in the first file; the name in every later one: {rows}")
    for f in names:
        r = subprocess.run([dkperf, "report", "-i", f, "--stdio"], capture_output=True, text=True,
                           timeout=120)
        check(r.returncode == 0 and "rp_hot" in r.stdout, f"report of {f}: {r.stderr}")


{"time": case_time, "size": case_size, "signal": case_signal, "pprof": case_pprof,
 "max_pprof": case_max_pprof, "pprof_taken": case_pprof_taken,
 "pprof_link": case_pprof_link, "pprof_mode": case_pprof_mode,
 "errors": case_errors, "failing": case_failing, "fork": case_fork, "all": case_all,
 "merge": case_merge, "exec": case_exec, "merge_errors": case_merge_errors}[case]()
for f in glob.glob(os.path.join(work, "*")):
    shutil.rmtree(f) if os.path.isdir(f) else os.unlink(f)
sys.exit(1 if failures else 0)
