#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf report --pprof: the gzipped profile.proto of a recording.

  pprof  the fixture recording (tests/record_fixture), the file decoded
         here (gzip, then protobuf by pprof's proto/profile.proto): value
         types, samples per function as report --stdio counts them, the
         image's mapping with its path and build id, the labels; an
         unwritable file refused in one line.
  go     the same file and a real cpu-clock recording of record_prog read
         by `go tool pprof` (-top, -traces, -raw) agree with report
         --stdio; skipped (77) without go.
  names  a recording built byte by byte (tests/recording.py) whose command,
         image and event names hold bytes that are not UTF-8 and terminal
         escapes: every string of the profile is UTF-8 (proto3's strings
         must be; a strict decoder refuses the profile otherwise), with
         U+FFFD for each such byte and control character, and go tool pprof
         (when here) prints no escape byte.

usage: check_report_pprof.py DKPERF RECORD_FIXTURE RECORD_PROG WORKDIR CASE
"""
import gzip
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import HEADER, chunk, comm, end, event, map_, meta, nodes, sample  # noqa: E402

dkperf, fixture, prog, work, case = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
from checks import check, failures


def run(*args, ok=True):
    p = subprocess.run([dkperf, *args], capture_output=True, text=True, timeout=120)
    if ok and p.returncode != 0:
        sys.exit(f"dkperf {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


def pprof_name(name):
    """A C++ name as go tool pprof shows it: without its parameters and
    template arguments (pprof shortens them; a sanitizer's runtime, in
    every process of an ASan build, has such names)."""
    out, depth = [], 0
    for i, c in enumerate(name):
        if c == "<" and not name.endswith("_[k]") and i > 0:
            depth += 1
        elif c == ">" and depth > 0:
            depth -= 1
        elif c == "(" and depth == 0 and i > 0:
            break
        elif depth == 0:
            out.append(c)
    return "".join(out).strip()


def stdio_samples(data):
    """report --stdio's self samples per symbol (summed over images), and its text."""
    out = run("report", "-i", data, "--stdio").stdout
    got = {}
    for line in out.splitlines():
        m = re.match(r"^\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+\S+\s+(.*)$", line)
        if m:
            # A kernel frame, "[k] name" in the table, is "name_[k]" in the
            # stack outputs and in pprof.
            name = m[2][4:] + "_[k]" if m[2].startswith("[k] ") else m[2]
            name = pprof_name(name)
            got[name] = got.get(name, 0) + int(m[1])
    return got, out


def fields(buf):
    """A protobuf message's fields: (number, value), value an int or bytes."""
    i, out = 0, []
    while i < len(buf):
        key, i = varint(buf, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
            if i > len(buf):
                raise ValueError("a field runs past its message")
        else:
            raise ValueError(f"wire type {wt}")
        out.append((f, v))
    return out


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def packed(v):
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def decode(path):
    raw = open(path, "rb").read()
    check(raw[:2] == b"\x1f\x8b", "a gzip file")
    msg = fields(gzip.decompress(raw))
    strings = [v.decode() for f, v in msg if f == 6]
    prof = {"strings": strings, "types": [], "samples": [], "mappings": {}, "locations": {},
            "functions": {}, "scalars": {}}
    for f, v in msg:
        if f in (1, 11):
            t = dict(fields(v))
            vt = (strings[t.get(1, 0)], strings[t.get(2, 0)])
            if f == 1:
                prof["types"].append(vt)
            else:
                prof["period_type"] = vt
        elif f == 2:
            s = {"locs": [], "values": [], "labels": {}}
            for g, w in fields(v):
                if g == 1:
                    s["locs"] += packed(w)
                elif g == 2:
                    s["values"] += packed(w)
                elif g == 3:
                    lab = dict(fields(w))
                    s["labels"][strings[lab.get(1, 0)]] = strings[lab[2]] if 2 in lab else lab.get(3, 0)
            prof["samples"].append(s)
        elif f == 3:
            m = dict(fields(v))
            prof["mappings"][m[1]] = m
        elif f == 4:
            loc = fields(v)
            d = dict(loc)
            d["lines"] = [dict(fields(w)) for g, w in loc if g == 4]
            prof["locations"][d[1]] = d
        elif f == 5:
            fn = dict(fields(v))
            prof["functions"][fn[1]] = strings[fn.get(2, 0)]
        elif f != 6:
            prof["scalars"][f] = v
    return prof


def case_pprof():
    data = os.path.join(work, "fixture.data")
    subprocess.run([fixture, data, "--rounds", "10"], check=True)
    want, text = stdio_samples(data)
    out = os.path.join(work, "fixture.pb.gz")
    p = run("report", "-i", data, "--pprof", out)
    check(p.stdout == "" and p.stderr == "", f"--pprof alone writes nothing else: {p.stdout!r} {p.stderr!r}")
    prof = decode(out)
    check(prof["strings"][:1] == [""], "the string table starts with the empty string")
    check(prof["types"] == [("cpu-clock_samples", "count"), ("cpu-clock", "nanoseconds")],
          f"per event its samples and their nanoseconds: {prof['types']}")
    check(prof["period_type"] == ("cpu-clock", "nanoseconds"), f"period type {prof['period_type']}")
    check(prof["scalars"].get(14) == 1, "the default value type is the first event's samples")
    flat, names = {}, {}
    for lid, loc in prof["locations"].items():
        check(len(loc["lines"]) == 1 and loc["lines"][0][1] in prof["functions"],
              f"location {lid} names a function")
        names[lid] = prof["functions"].get(loc["lines"][0].get(1), "?")
    total_ns = 0
    for s in prof["samples"]:
        check(len(s["values"]) == 2, f"two values a sample: {s['values']}")
        n = names[s["locs"][0]]
        flat[n] = flat.get(n, 0) + s["values"][0]
        total_ns += s["values"][1]
        check(s["labels"].get("comm") == "fixture" and isinstance(s["labels"].get("pid"), int),
              f"comm and pid labels: {s['labels']}")
    got = {k: v for k, v in flat.items() if v}
    check(got == {k: v for k, v in want.items() if v},
          f"samples per function as --stdio counts them: {got} against {want}")
    check(f"{total_ns:,} ns in all" in text, f"the periods sum to the table's total: {total_ns}")
    stacks = {tuple(names[l] for l in s["locs"]): s["values"][0] for s in prof["samples"]}
    check(stacks.get(("fx_hot", "fx_outer", "main")) == 700, f"fx_hot's stack, innermost first: {stacks}")
    # The program's mapping: its path and the build id on disk (the
    # fixture records its own, and a wrong one for a second map).
    disk = re.search(r"build-id (\S+) on disk", text)
    maps = {prof["strings"][m.get(5, 0)]: m for m in prof["mappings"].values()}
    mine = maps.get(os.path.realpath(fixture)) or maps.get(fixture)
    check(mine is not None and disk and prof["strings"][mine.get(6, 0)] == disk[1],
          f"the image's mapping with its build id: {maps} (on disk {disk and disk[1]})")
    check(mine is not None and mine.get(7) == 1, "has_functions: pprof has nothing to symbolize")
    check(prof["mappings"].get(1) is mine, "the program's mapping comes first")
    # An unwritable file: one line naming it.
    p = run("report", "-i", data, "--pprof", "/nonexistent-dir/x.pb.gz", ok=False)
    check(p.returncode == 1 and p.stderr.count("\n") == 1 and "--pprof /nonexistent-dir/x.pb.gz" in p.stderr,
          f"unwritable --pprof: {p.returncode} {p.stderr!r}")


def go_pprof(path, *args):
    p = subprocess.run(["go", "tool", "pprof", *args, path], capture_output=True, text=True,
                       timeout=300, env=dict(os.environ, PPROF_BINARY_PATH=work))
    check(p.returncode == 0, f"go tool pprof {' '.join(args)}: {p.stderr}")
    return p.stdout


def top(path):
    """go tool pprof -top: flat per function."""
    out = go_pprof(path, "-top", "-nodefraction=0", "-edgefraction=0")
    got = {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*)$", line)
        if m and int(m[1]):
            got[m[3]] = int(m[1])
    return got, out


def case_go():
    if shutil.which("go") is None:
        print("skipped: no go (Debian golang-go) for go tool pprof")
        sys.exit(77)
    data = os.path.join(work, "fixture.data")
    subprocess.run([fixture, data, "--rounds", "10"], check=True)
    out = os.path.join(work, "fixture.pb.gz")
    run("report", "-i", data, "--pprof", out)
    want, _ = stdio_samples(data)
    got, text = top(out)
    check(got == {k: v for k, v in want.items() if v}, f"-top: {got} against --stdio {want}\n{text}")
    traces = go_pprof(out, "-traces")
    check(re.search(r"comm:\s+fixture\n\s+pid:\s+\d+\n\s+700\s+fx_hot\n\s+fx_outer\n\s+main\n", traces),
          "-traces: fx_hot's stack of 700 samples with its labels:\n" + traces)
    raw = go_pprof(out, "-raw")
    check("cpu-clock_samples/count[dflt] cpu-clock/nanoseconds" in raw, "-raw: the value types:\n" + raw)
    check(re.search(r"^\s+700\s+700700700: ", raw, re.M), "-raw: fx_hot's samples and nanoseconds:\n" + raw)

    # A real recording: a program whose hot function is known.
    real = os.path.join(work, "real.data")
    p = subprocess.run([dkperf, "record", "-e", "cpu-clock", "-g", "-o", real, "--", prog, "0.3"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        print(f"note: no real recording here (dkperf record: {p.stderr.strip()})")
        return
    out = os.path.join(work, "real.pb.gz")
    run("report", "-i", real, "--pprof", out)
    want, table = stdio_samples(real)
    got, text = top(out)
    check(got == {k: v for k, v in want.items() if v}, f"-top: {got} against --stdio {want}\n{text}")
    check(max(got, key=got.get, default=None) == "rp_hot", "rp_hot is the top function:\n" + text)
    m = re.search(r"Duration: .*, Total samples = (\d+)", text)
    n = re.search(r"([\d,]+) samples of", table)
    check(m and n and int(m[1]) == int(n[1].replace(",", "")), f"the same total: {text[:300]}")


def case_names():
    pid = 4242
    body = meta("comm", "names") + event(0, b"ev\xffent\x1b[2J") + comm(pid, b"co\xc3mm\x1b]0;x\x07") \
        + map_(pid, 0x400000, 0x10000, b"/nonexistent/im\xfe\xc0age\x1b[31m.so") \
        + map_(pid, 0x500000, 0x10000, "/nonexistent/h\u00e9llo.so") \
        + nodes([(0, 0x401000), (1, 0x100010)])
    data = os.path.join(work, "names.data")
    with open(data, "wb") as f:
        f.write(HEADER + chunk(body) + chunk(sample(2, pid=pid, period=1000) + end(1)))
    out = os.path.join(work, "names.pb.gz")
    run("report", "-i", data, "--pprof", out)
    msg = fields(gzip.decompress(open(out, "rb").read()))
    strings = [v for f, v in msg if f == 6]
    bad = []
    for s in strings:
        try:
            t = s.decode()
            if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in t):
                bad.append(s)
        except UnicodeDecodeError:
            bad.append(s)
    check(not bad, f"every string UTF-8 without a control character: {bad}")
    text = [s.decode(errors="replace") for s in strings]
    check("[im\ufffd\ufffdage\ufffd[31m.so]" in text, f"the image's bytes as U+FFFD each: {text}")
    check("co\ufffdmm\ufffd]0;x\ufffd" in text, f"the command's: {text}")
    check("ev\ufffdent\ufffd[2J_samples" in text, f"the event's: {text}")
    check("[h\u00e9llo.so]" in text, f"UTF-8 kept as it is: {text}")
    if shutil.which("go") is not None:
        top = go_pprof(out, "-top")
        check("\x1b" not in top and "h\u00e9llo" in top, "go tool pprof -top prints no escape:\n" + top)


{"pprof": case_pprof, "go": case_go, "names": case_names}[case]()
if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("ok")
