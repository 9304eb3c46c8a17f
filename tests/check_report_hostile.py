#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf report on hostile input, each file written here byte by byte (the
format of doc/RECORD-FORMAT.md): a FIFO with no writer, a directory, an
empty file, a cut header, a bad CRC, absurd counts and lengths, stack nodes
and events out of range. Each is one clear line on stderr naming the file,
a non-zero exit, no crash and no hang. Then recordings that are valid but
built to hurt: deep stacks shared by many samples (peak memory stays near
the file's size), stacks multiplied by thousands of processes (refused, in
bounded memory), one function name in two images (folded output and the
flame graph merge them), a very long image name (cut short), images
that are devices, FIFOs or kernel files (never opened: strace watches), an
image cut short while it is read (a note, no crash), an image whose
symbol table, notes or header counts claim 64 GiB of a sparse file, ELF
or Mach-O (a note, in bounded memory, never "out of memory"),
names with terminal escapes and malformed UTF-8 (no raw control byte is
printed), an image swapped for a FIFO or a device between its check and
its open (never opened).

usage: check_report_hostile.py DKPERF WORKDIR [CASE]
CASE: errors, memory, multiply, memo, cut, names, longname, images, shrink, sparse,
escapes, swap (default: all)
"""
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import (FAR, HEADER, chain_maps, chain_pairs, chunk, comm, deep, elf_symbol,  # noqa: E402
                       end, event, map_, meta, nodes, sample, string, svarint, varint)

dkperf, work = sys.argv[1:3]
only = sys.argv[3] if len(sys.argv) > 3 else None
os.makedirs(work, exist_ok=True)
from checks import check, failures
# The bound on report's peak memory for recordings built to exhaust it: far
# below what following them would take. Sanitizer runtimes (shadow memory,
# ASan's quarantine of freed blocks) about double a process's peak.
PEAK_KIB = 64 * 1024 * (2 if os.environ.get("DK_SANITIZED") else 1)


def write(name, data):
    path = os.path.join(work, name)
    if os.path.lexists(path):
        os.unlink(path)
    with open(path, "wb") as f:
        f.write(data)
    return path


def run(*args, timeout=60):
    """dkperf with args; (returncode, stdout, stderr, peak RSS in KiB)."""
    env = dict(os.environ)
    if env.get("DK_SANITIZED"):
        # ASan keeps freed blocks in a quarantine (256 MB by default): a
        # peak that counts them says nothing of report's own memory.
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0").lstrip(":")
    p = subprocess.Popen([dkperf, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        return None, b"", b"(hung: killed after %d s)" % timeout, 0
    # The child is reaped by communicate(); RUSAGE_CHILDREN keeps the
    # largest of every child so far, so the memory case runs first.
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return p.returncode, out, err.decode(errors="replace"), rss


PID = 4242
GOOD = HEADER + chunk(meta("comm", "hostile") + event(0, "cpu-clock") + comm(PID, "hostile")
                      + map_(PID, 0x400000, 0x10000, "/nonexistent/hostile.so")
                      + nodes([(0, 0x401000), (1, 0x10)]) + sample(2, pid=PID, period=1000)
                      + sample(1) + end(2))


def refused(name, data, want, args=()):
    path = write(name, data) if data is not None else os.path.join(work, name)
    rc, out, err, _ = run("report", "-i", path, *args, timeout=20)
    ok = rc == 1 and err.count("\n") == 1 and err.startswith("dkperf report: ") and path in err \
        and re.search(want, err) is not None and out == b""
    check(ok, f"{name}: exit {rc}, stderr {err!r}, wanted /{want}/")


def case_errors():
    rc, out, err, _ = run("report", "-i", write("good.data", GOOD), "--folded")
    check(rc == 0 and re.fullmatch(rb"hostile;\[hostile\.so\] 2\n", out), f"the valid base file reads: {rc} {err!r} {out!r}")
    # Not regular files: refused before any read, never waiting for a writer.
    fifo = os.path.join(work, "fifo.data")
    if os.path.lexists(fifo):
        os.unlink(fifo)
    os.mkfifo(fifo)
    refused("fifo.data", None, r"fifo\.data is a FIFO, not a regular file")
    d = os.path.join(work, "dir.data")
    os.makedirs(d, exist_ok=True)
    refused("dir.data", None, r"dir\.data is a directory, not a regular file")
    refused("empty.data", b"", r"not a dkperf recording \(no DKREC header; the file is shorter")
    refused("header-cut.data", HEADER[:9], r"not a dkperf recording")
    refused("magic.data", b"PERFILE2" + HEADER[8:] + GOOD[16:], r"not a dkperf recording")
    refused("version.data", HEADER[:8] + struct.pack("<HHI", 9, 0, 0) + GOOD[16:],
            r"recording format version 9\.0")
    body = meta("comm", "hostile") + event(0, "cpu-clock")
    refused("crc.data", HEADER + chunk(body, crc=zlib.crc32(body) ^ 1),
            r"corrupt recording at byte offset 16: the chunk's checksum does not match")
    refused("tag.data", HEADER + b"X" + chunk(body)[1:], r"a chunk starts with 0x58")
    refused("chunk-huge.data", HEADER + b"C" + varint(1 << 40) + b"\0\0\0\0" + body,
            r"a chunk of 1099511627776 bytes")
    refused("chunk-zero.data", HEADER + b"C" + varint(0) + b"\0\0\0\0", r"a chunk of 0 bytes")
    refused("varint-long.data", HEADER + chunk(b"e" + b"\xff" * 11), r"longer than 64 bits")
    refused("string-huge.data", HEADER + chunk(b"m" + varint(1 << 62) + b"abc"),
            r"a string of \d+ bytes does not fit")
    refused("nodes-count.data", HEADER + chunk(b"n" + varint(1 << 60) + b"\0\0"),
            r"a nodes record claims \d+ nodes")
    refused("node-parent.data", HEADER + chunk(nodes([(0, 1), (5, 1)])),
            r"stack node 2 names a parent 5 nodes back")
    refused("sample-node.data", HEADER + chunk(event(0, "cpu-clock") + nodes([(0, 0x1000)])
                                               + sample(7)),
            r"a sample names stack node 7, of 1 defined")
    refused("sample-node-huge.data", HEADER + chunk(event(0, "cpu-clock") + sample(1 << 58)),
            r"a sample names stack node \d+, of 0 defined")
    refused("sample-event.data", HEADER + chunk(sample(0)), r"a sample of event 0, of 0 events")
    refused("event-index.data", HEADER + chunk(event(3, "cpu-clock")),
            r"event 3 is described where event 0 was due")
    refused("end-count.data", HEADER + chunk(event(0, "cpu-clock") + sample(0) + end(1 << 40)),
            r"the end mark counts 1099511627776 samples, the file holds 1")
    refused("after-end.data", GOOD + chunk(body), r"bytes follow the end mark")
    refused("record-type.data", HEADER + chunk(b"\x07"), r"unknown record type 0x07")
    refused("map-id.data", HEADER + chunk(b"p" + svarint(1) + varint(0) + varint(1) + varint(0)
                                          + string("/x") + b"\x09" + varint(200)),
            r"image identity \(kind 9, 200 bytes\) is not valid")
    refused("pid.data", HEADER + chunk(b"c" + svarint(1 << 40) + varint(1) + string("x")),
            r"pid 1099511627776 is out of range")
    # A cut chunk is read up to the cut, with one warning.
    cut = write("cut.data", GOOD[:-5])
    rc, out, err, _ = run("report", "-i", cut, "--folded", timeout=20)
    check(rc == 0 and "is incomplete" in err and err.count("\n") == 1, f"a cut file: {rc} {err!r}")
    # Every prefix and every single-byte change of the valid file: no crash, no hang.
    for k in range(len(GOOD)):
        path = write("prefix.data", GOOD[:k])
        rc, _, err, _ = run("report", "-i", path, "--folded", timeout=20)
        check(rc in (0, 1) and err.count("\n") <= 1, f"prefix of {k} bytes: {rc} {err!r}")
    for k in range(16, len(GOOD)):
        for x in (0x01, 0x80, 0xFF):
            b = bytearray(GOOD)
            b[k] ^= x
            path = write("flip.data", bytes(b))
            rc, _, err, _ = run("report", "-i", path, "--folded", timeout=20)
            check(rc in (0, 1) and err.count("\n") <= 1, f"byte {k} ^ {x:#x}: {rc} {err!r}")


def case_memory():
    data = deep(1000, 30000, 50, PID)
    path = write("deep.data", data)
    check(len(data) < 160 * 1024, f"the deep recording is small: {len(data)} bytes")
    # First, so that RUSAGE_CHILDREN's peak is this run's.
    rc, out, err, rss = run("report", "-i", path, "--stdio", timeout=120)
    check(rc == 0, f"deep --stdio: {rc} {err!r}")
    text = out.decode()
    # The chain is in two images without symbols, in turn: a row for each,
    # [deep.so] and [deep2.so], in every stack (children 100%), and the 50
    # innermost frames, 25 in each, hold 600 samples each of their own.
    rows = re.findall(r"^\s+([\d.]+)%\s+([\d.]+)%\s+(\d+)\s+(\S+)\s+(\S+)$", text, re.M)
    check(sorted(rows) == [("100.00", "50.00", "15000", "deep.so", "[deep.so]"),
                           ("100.00", "50.00", "15000", "deep2.so", "[deep2.so]")],
          f"a row for each image of the chain: {rows}\n" + text[:600])
    check(rss < PEAK_KIB, f"report --stdio of a {len(data)}-byte recording peaked at {rss} KiB "
          f"(bound {PEAK_KIB})")
    folded = os.path.join(work, "deep.folded")
    with open(folded, "wb") as f:
        p = subprocess.run([dkperf, "report", "-i", path, "--folded"], stdout=f,
                           stderr=subprocess.PIPE, timeout=120)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    check(p.returncode == 0, f"deep --folded: {p.stderr!r}")
    lines = open(folded).read().splitlines()
    check(len(lines) == 50 and sum(int(x.rsplit(" ", 1)[1]) for x in lines) == 30000,
          f"deep --folded: {len(lines)} lines")
    check(rss < PEAK_KIB, f"report --folded peaked at {rss} KiB")
    for opt in ("--speedscope", "--html"):
        rc, _, err, rss = run("report", "-i", path, opt, "/dev/null", timeout=300)
        check(rc == 0 and rss < PEAK_KIB, f"deep {opt}: exit {rc} {err!r}, peak {rss} KiB")


def case_multiply():
    # 1500 processes, each with its own two images at the same addresses,
    # all in one 1000-frame stack in the two in turn (a run in one image
    # would be one frame): 1.5 million distinct frames from 130 kB.
    # Refused, in bounded memory and time, rather than followed.
    depth, npids = 1000, 1500
    maps = [map_(p, 0x400000 + FAR * k, 0x100000, "/nonexistent/%s%d.so" % ("pq"[k], p))
            for p in range(1, npids + 1) for k in (0, 1)]
    chunks = [chunk(event(0, "cpu-clock") + nodes(chain_pairs(depth)[0]))]
    chunks += [chunk(b"".join(maps[i:i + 1000])) for i in range(0, len(maps), 1000)]
    chunks.append(chunk(b"".join(sample(depth, pid=p) for p in range(1, npids + 1)) + end(npids)))
    path = write("multiply.data", HEADER + b"".join(chunks))
    rc, out, err, rss = run("report", "-i", path, "--folded", timeout=60)
    check(rc == 1 and err.count("\n") == 1 and re.search(
        r"its stacks come to more than \d+ distinct nodes, from a file of \d+ bytes: refused", err),
        f"stacks multiplied by processes: {rc} {err!r}")
    check(rss < PEAK_KIB, f"refused after a peak of {rss} KiB (bound {PEAK_KIB})")


def case_memo():
    # 20,000 processes, each with an image of its own at the same address,
    # all sampling one 100-frame stack there: each process translates the
    # stack anew, and a memo of translations bounded by the nodes the file
    # may make grew to many times the file's size.
    npids, depth = 20000, 100
    pairs = [(0, 0x10000)] + [(1, 0x10)] * (depth - 1)
    recs = [map_(p, 0x10000, 0x10000, "/nonexistent/lib%d.so" % p) + sample(depth, pid=p)
            for p in range(2, npids + 2)]
    chunks = [chunk(meta("comm", "memo") + event(0, "cpu-clock") + nodes(pairs))]
    chunks += [chunk(b"".join(recs[i:i + 1000])) for i in range(0, npids, 1000)]
    data = HEADER + b"".join(chunks) + chunk(end(npids))
    path = write("memo.data", data)
    rc, out, err, rss = run("report", "-i", path, "--folded", timeout=120)
    check(rc == 0 and out.count(b"\n") == npids, f"memo --folded: {rc} {err!r}")
    # The model itself (a frame, an image and a node per process) takes
    # some 1.3 KB a process; the memo must not add many times the file.
    bound = 48 * 1024 * (2 if os.environ.get("DK_SANITIZED") else 1)
    check(rss < bound, f"report --folded of a {len(data)}-byte recording of {npids} processes "
          f"peaked at {rss} KiB (bound {bound})")


def case_cut():
    # One chain with a sample at each of its depths: every stack printed
    # whole is O(depth^2) frames. Past 1024 frames a chain keeps its
    # innermost 1024, as perf report does, said once on stderr.
    def chain(depth):
        samples = b"".join(sample(d, pid=PID if d == 1 else None) for d in range(1, depth + 1))
        body = meta("comm", "cut") + event(0, "cpu-clock") + comm(PID, "cut") \
            + chain_maps(PID, depth) + nodes(chain_pairs(depth)[0])
        return HEADER + chunk(body) + chunk(samples) + chunk(end(depth))
    data = chain(1100)
    rc, out, err, _ = run("report", "-i", write("cut.data", data), "--folded")
    depths = [line.count(b";") for line in out.splitlines()]
    check(rc == 0 and max(depths, default=0) == 1024 and sum(int(x.rsplit(b" ", 1)[1])
                                                             for x in out.splitlines()) == 1100,
          f"a 1100-frame chain: exit {rc}, deepest line {max(depths, default=0)} frames")
    check(err == "dkperf report: note: 76 samples have a call chain deeper than 1024 frames: "
          "cut to its innermost 1024, as perf report's --max-stack\n", f"the cut is said: {err!r}")
    # 8000 frames (some 100 kB): 32 million frames printed whole. Every
    # output is bounded by the file's size times a constant, or refused.
    data = chain(8000)
    path = write("cut-deep.data", data)
    for args in (["--folded"], ["--speedscope", "/dev/stdout"], ["--stdio"]):
        rc, out, err, _ = run("report", "-i", path, *args, timeout=120)
        check((rc == 0 and len(out) <= 64 * len(data)) or
              (rc == 1 and err.count("\n") == 1 and "refused" in err),
              f"an 8000-frame chain {args}: exit {rc}, {len(out)} bytes out of a "
              f"{len(data)}-byte file, {err[:300]!r}")


def case_names():
    # Two images, each with a main: record_fixture and this test's dkperf.
    fixture = os.environ.get("DK_SECOND_IMAGE")
    images = [dkperf, fixture]
    offs = [elf_symbol(i, "main") if i else None for i in images]
    if None in offs:
        print(f"skipped: no main symbol in {images}")
        sys.exit(77)
    a, b = 0x10000000, 0x20000000
    body = meta("comm", "names") + event(0, "cpu-clock") + comm(PID, "names") \
        + map_(PID, a, 0x1000000, images[0]) + map_(PID, b, 0x1000000, images[1]) \
        + nodes([(0, a + offs[0] + 4), (0, b + offs[1] + 4)])
    s = sample(1, pid=PID, period=1) + sample(1) + sample(2) + sample(2) + sample(2)
    path = write("names.data", HEADER + chunk(body + s + end(5)))
    rc, out, err, _ = run("report", "-i", path, "--folded")
    check(rc == 0 and out.decode() == "names;main 5\n",
          f"one folded line for main in two images: {rc} {out!r} {err!r}")
    rc, out, err, _ = run("report", "-i", path, "--stdio")
    rows = re.findall(r"^\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+(\S+)\s+main$", out.decode(), re.M)
    check(sorted(rows) == sorted([("2", os.path.basename(images[0])), ("3", os.path.basename(images[1]))]),
          f"the table keeps a row per image: {rows}")
    html = os.path.join(work, "names.html")
    rc, _, err, _ = run("report", "-i", path, "--html", html)
    groups = re.findall(r'data-n="main"', open(html).read()) if rc == 0 else []
    check(len(groups) == 1, f"one flame graph box for main: {len(groups)} {err!r}")


def case_longname():
    long_path = "/nonexistent/" + "a" * 700 + "-very-long-image-name.so"
    body = meta("comm", "long") + event(0, "cpu-clock") + comm(PID, "long") \
        + map_(PID, 0x400000, 0x10000, long_path) + nodes([(0, 0x401234)])
    path = write("long.data", HEADER + chunk(body + sample(1, pid=PID, period=1) + end(1)))
    rc, out, err, _ = run("report", "-i", path, "--folded")
    line = out.decode()
    check(rc == 0 and re.fullmatch(r"long;\[a{400,}\.\.\.\] 1\n", line),
          f"a long image name is cut short: {rc} {line!r} {err!r}")


def case_images():
    # A recording names any path it likes as an image. Devices, FIFOs and
    # the files of kernel file systems (some of which stat as regular
    # files: reading /proc/kmsg as root takes the kernel log from its
    # reader) are never opened; a regular file beside them is read as ever.
    strace = shutil.which("strace")
    if strace is None:
        print("skipped: no strace, which shows what report opens")
        sys.exit(77)
    image = os.path.abspath(dkperf)
    off = elf_symbol(image, "main")
    if off is None:
        print(f"skipped: no main symbol in {dkperf}")
        sys.exit(77)
    fifo = os.path.join(work, "image.fifo")
    link = os.path.join(work, "kmsg-link.so")
    for p in (fifo, link):
        if os.path.lexists(p):
            os.unlink(p)
    os.mkfifo(fifo)
    os.symlink("/proc/kmsg", link)
    hostile = {"/proc/kmsg": r"on procfs, a kernel file system",
               "/proc/self/mem": r"on procfs, a kernel file system",
               "/sys/kernel/notes": r"on sysfs, a kernel file system",
               link: r"on procfs, a kernel file system",
               "/dev/zero": r"not a regular file \(a character device\)",
               "/dev/tty": r"not a regular file \(a character device\)",
               "/dev/ptmx": r"not a regular file \(a character device\)",
               fifo: r"not a regular file \(a FIFO\)"}
    body = meta("comm", "images") + event(0, "cpu-clock") + comm(PID, "images")
    leaves, base = [], 0x10000000
    for i, path in enumerate([image] + list(hostile)):
        start = base * (i + 1)
        body += map_(PID, start, 0x1000000, path)
        leaves.append((0, start + (off + 4 if i == 0 else 0x1234)))
    body += nodes(leaves)
    s = b"".join(sample(k + 1, pid=PID if k == 0 else None, period=1 if k == 0 else None)
                 for k in range(len(leaves)))
    path = write("images.data", HEADER + chunk(body + s + end(len(leaves))))
    log = os.path.join(work, "images.strace")
    # LeakSanitizer cannot run under ptrace: the leak check is the plain run's.
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = dict(os.environ, ASAN_OPTIONS=(asan + ":" if asan else "") + "detect_leaks=0")
    p = subprocess.run([strace, "-f", "-qq", "-e", "trace=open,openat", "-o", log,
                        dkperf, "report", "-i", path, "--stdio"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check(p.returncode == 0, f"report of images that are no files: exit {p.returncode} {err!r}")
    rc, plain, err, _ = run("report", "-i", path, "--stdio")
    check(rc == 0 and plain.decode(errors="replace") == out,
          f"the same report without strace: exit {rc} {err!r}")
    opened = open(log).read()
    check(opened.count(path) >= 1, f"strace saw report open its recording:\n{opened[:2000]}")
    for h in hostile:
        check(f'"{h}"' not in opened, f"{h} was opened:\n" +
              "\n".join(l for l in opened.splitlines() if h in l))
    for h, why in hostile.items():
        notes = re.findall(r"^# " + re.escape(h) + r": no symbols: (.*)$", out, re.M)
        check(len(notes) == 1 and re.match(why, notes[0]),
              f"one note for {h}, saying /{why}/: {notes}")
        check(f"[{os.path.basename(h)}]" in out, f"{h} stays unnamed")
    check(re.search(r"^\s+[\d.]+%\s+[\d.]+%\s+1\s+dkperf\s+main$", out, re.M),
          "the regular file beside them is read: main in dkperf\n" + out)

    # A symbol table that cannot be read whole (main's name points past
    # its string table) gives no names and says why, rather than leaving
    # main out and naming its addresses after something else.
    where = []
    elf_symbol(image, "main", where)
    bad = os.path.join(work, "badname")
    data = bytearray(open(image, "rb").read())
    struct.pack_into("<I", data, where[0], 0x7FFFFFF0)
    with open(bad, "wb") as f:
        f.write(data)
    body = meta("comm", "badname") + event(0, "cpu-clock") + comm(PID, "badname") \
        + map_(PID, base, 0x1000000, bad) + nodes([(0, base + off + 4)])
    path = write("badname.data", HEADER + chunk(body + sample(1, pid=PID, period=1) + end(1)))
    rc, out, err, _ = run("report", "-i", path, "--stdio")
    out = out.decode()
    check(rc == 0 and re.search(r"^# " + re.escape(bad) + r": no symbols: its symbols could not "
                                r"be read \(a symbol's name: .+\)$", out, re.M)
          and "[badname]" in out,
          f"a bad symbol name: the image's note, and [image]: {rc} {err!r}\n{out}")


# Bytes that drive a terminal or break a line format: ESC (a title change,
# a screen clear), BEL, CR, tab, newline, DEL, C1's CSI, bytes that are not
# UTF-8 (0xff, an overlong '/', a surrogate), a right-to-left override and
# a line separator (a bidi terminal would show what follows reversed).
HOSTILE = b"\x1b]0;TITLE\x07\x1b[2J\r\t\n\x7f\xc2\x9b31m\xff\xc0\xaf\xed\xa0\x80" \
    b"\xe2\x80\xae\xe2\x80\xa8"


def raw_controls(text, layout=b"\n"):
    """The bytes of text that would reach a terminal unescaped."""
    bad = re.findall(rb"[\x00-\x1f\x7f]|\xc2[\x80-\x9f]|[\xc0\xc1\xf5-\xff]|\xed[\xa0-\xbf]"
                     rb"|\xe2\x80[\xa8-\xae]|\xe2\x81[\xa6-\xa9]", text)
    return [b for b in bad if b not in layout]


def hostile_image(work_dir):
    """A copy of dkperf whose symbol cli_open_sampler_flags is renamed to
    the hostile bytes (padded to its length), and that symbol's offset."""
    b = bytearray(open(dkperf, "rb").read())
    name = b"cli_open_sampler_flags"
    off = elf_symbol(dkperf, name.decode())
    if off is None or b.find(b"\0" + name + b"\0") < 0:
        return None, None
    # Every copy: the symbol table's string table, and any other.
    b = bytearray(bytes(b).replace(b"\0" + name + b"\0",
                                   b"\0" + (HOSTILE + b"x" * len(name))[:len(name)] + b"\0"))
    path = os.path.join(work_dir, "img-" + "x" * 4 + ".so")
    with open(path, "wb") as f:
        f.write(bytes(b))
    return path, off


def case_escapes():
    img, off = hostile_image(work)
    a, b_ = 0x10000000, 0x20000000
    body = meta("command", HOSTILE) + event(0, HOSTILE) + comm(PID, HOSTILE) \
        + map_(PID, a, 0x1000000, b"/nonexistent/" + HOSTILE + b".so") \
        + nodes([(0, a + 0x1234)])
    samples = sample(1, pid=PID, period=1) + sample(1)
    n = 2
    if img is not None:
        body += map_(PID, b_, 0x1000000, img) + nodes([(0, b_ + off + 4)])
        samples += sample(2) + sample(2)
        n = 4
    data = HEADER + chunk(body + samples + end(n))
    runs = []
    for name in ("esc.data", "esc-\x1b[2J-\x07.data"):
        path = write(name, data)
        runs += [(path, ["--stdio"]), (path, ["--stdio", "--children"]),
                 (path, ["--folded"])]
        runs += [(path, ["--stdio", "--sort", k]) for k in ("sym", "dso", "comm", "pid")]
        # Cut short: the warning that it is incomplete names the file.
        runs.append((write("cut-" + name, data[:-3]), ["--folded"]))
    runs.append((path, ["--event", "\x1b]0;T\x07"]))  # an error quoting the argument
    for path, args in runs:
        p = subprocess.run([dkperf, "report", "-i", path, *args], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        what = f"report {' '.join(args)!r} of {os.path.basename(path)!r}"
        check(p.returncode in (0, 2), f"{what}: exit {p.returncode} {p.stderr!r}")
        check(raw_controls(p.stdout) == [], f"{what}: raw bytes on stdout: {p.stdout!r}")
        check(raw_controls(p.stderr) == [], f"{what}: raw bytes on stderr: {p.stderr!r}")
        if args == ["--folded"] and not os.path.basename(path).startswith("cut-"):
            lines = p.stdout.split(b"\n")
            check(lines[-1] == b"" and all(re.fullmatch(rb"[^;\n]+(;[^;\n]+)+ \d+", x)
                                           for x in lines[:-1]),
                  f"{what}: not the folded format: {p.stdout!r}")
            # Escaped, and ';' (the frame separator) made '_'.
            check(all(x.startswith(b"\\x1b]0_TITLE\\x07\\x1b[2J\\x0d\\x09\\x0a") for x in lines[:-1]),
                  f"{what}: the comm escaped: {p.stdout!r}")
            if img is not None:
                check(any(x.endswith(b";\\x1b]0_TITLE\\x07\\x1b[2J\\x0d\\x09\\x0a\\x7f\\xc2\\x9b31 2")
                          for x in lines), f"{what}: the symbol escaped: {p.stdout!r}")
        if args == ["--stdio"] and p.returncode == 0:
            check(b"of '\\x1b]0;TITLE\\x07\\x1b[2J\\x0d\\x09\\x0a\\x7f\\xc2\\x9b31m"
                  b"\\xff\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x80\\xae\\xe2\\x80\\xa8'" in p.stdout,
                  f"{what}: the command escaped in the header: {p.stdout[:300]!r}")
    # JSON escapes by its own rules: valid, and no raw control (C1 and bidi
    # controls as \\u escapes too), written to a file or to standard output.
    path = os.path.join(work, "esc.data")
    js = os.path.join(work, "esc.json")
    p = subprocess.run([dkperf, "report", "-i", path, "--speedscope", js], stderr=subprocess.PIPE)
    check(p.returncode == 0 and raw_controls(p.stderr) == [], f"speedscope: {p.stderr!r}")
    if p.returncode == 0:
        import json
        text = open(js, "rb").read()
        check(raw_controls(text) == [] and json.loads(text.decode("utf-8")) is not None,
              f"speedscope: valid JSON, no raw control byte: {raw_controls(text)}")
        check(b'"\\x1b]0;TITLE\\x07' not in text and b'\\u001b]0;TITLE\\u0007' in text
              and b"\\u009b31m" in text and b"\\u202e\\u2028" in text,
              f"speedscope: names as JSON escapes: {text[:400]!r}")
    p = subprocess.run([dkperf, "report", "-i", path, "--speedscope", "/dev/stdout"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == 0 and raw_controls(p.stdout) == [] and raw_controls(p.stderr) == [],
          f"speedscope to stdout: {p.returncode} {raw_controls(p.stdout)} {p.stderr!r}")
    # The HTML flame graph: U+FFFD for each control, bidi control and byte
    # that is not UTF-8 (a reference to a control is an error in HTML), in
    # a file and on standard output.
    page = os.path.join(work, "esc.html")
    p = subprocess.run([dkperf, "report", "-i", path, "--html", page], stderr=subprocess.PIPE)
    check(p.returncode == 0 and raw_controls(p.stderr) == [], f"html: {p.stderr!r}")
    if p.returncode == 0:
        text = open(page, "rb").read()
        check(raw_controls(text) == [], f"html: no raw control byte: {raw_controls(text)}")
        check("]0;TITLE\ufffd\ufffd[2J\ufffd" in text.decode("utf-8", errors="replace")
              and b"&#9;&#10;" in text,
              "html: controls as U+FFFD, tab and newline as references")
    p = subprocess.run([dkperf, "report", "-i", path, "--html", "/dev/stdout"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == 0 and raw_controls(p.stdout) == [] and raw_controls(p.stderr) == [],
          f"html to stdout: {p.returncode} {raw_controls(p.stdout)} {p.stderr!r}")


def case_shrink():
    # An image emptied while libelf reads it (copied over, rebuilt): the
    # pages of a mapped file past its new end raise SIGBUS; report must
    # give the image's note instead. DK_SHRINK_SHIM empties the file just
    # after elf_begin.
    shim = os.environ.get("DK_SHRINK_SHIM")
    off = elf_symbol(dkperf, "main")
    if not shim or off is None:
        print("skipped: no elf_begin shim (a sanitizer build) or no main in dkperf")
        sys.exit(77)
    image = os.path.join(work, "shrinking.so")
    shutil.copyfile(dkperf, image)
    base = 0x10000000
    body = meta("comm", "shrink") + event(0, "cpu-clock") + comm(PID, "shrink") \
        + map_(PID, base, 0x1000000, image) + nodes([(0, base + off + 4)])
    path = write("shrink.data", HEADER + chunk(body + sample(1, pid=PID, period=1) + end(1)))
    env = dict(os.environ, LD_PRELOAD=shim, DKPERF_TEST_SHRINK="/shrinking.so")
    p = subprocess.run([dkperf, "report", "-i", path, "--stdio"], env=env, timeout=60,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check(os.path.getsize(image) == 0, "the shim emptied the image")
    check(p.returncode == 0 and re.search(r"^# " + re.escape(image) + r": no symbols: .+$",
                                          out, re.M)
          and "[shrinking.so]" in out,
          f"an image cut short: its note and [image], exit 0: {p.returncode} {err!r}\n{out}")

    # The same with the image's build-id recorded: its program headers can
    # no longer be read, which the note says, rather than passing over them
    # and reporting a build-id of none on disk.
    shutil.copyfile(dkperf, image)
    data = open(image, "rb").read()
    at = data.find(b"\x04\x00\x00\x00\x14\x00\x00\x00\x03\x00\x00\x00GNU\x00")
    if at < 0:
        print(f"no 20-byte GNU build-id in {dkperf}: the build-id run is left out")
        return
    build_id = data[at + 16:at + 36]
    body = meta("comm", "shrink") + event(0, "cpu-clock") + comm(PID, "shrink") \
        + map_(PID, base, 0x1000000, image, id_kind=1, image_id=build_id) \
        + nodes([(0, base + off + 4)])
    path = write("shrink-id.data", HEADER + chunk(body + sample(1, pid=PID, period=1) + end(1)))
    p = subprocess.run([dkperf, "report", "-i", path, "--stdio"], env=env, timeout=60,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    check(p.returncode == 0 and re.search(r"^# " + re.escape(image) + r": no symbols: its "
                                          r"build-id could not be read \(a program header: .+\)$",
                                          out, re.M),
          f"an image cut short, build-id recorded: the note names the program headers, exit 0: "
          f"{p.returncode} {err!r}\n{out}")


def case_sparse():
    # Images whose tables claim 64 GiB of a sparse file: libelf or the
    # Mach-O reader would allocate for them whole, or fail the report as out
    # of memory. A copy of dkperf whose .symtab, a PT_NOTE, the section
    # count (extended numbering) or the program header count (PN_XNUM) is
    # that large, and a Mach-O whose nsyms is 0xffffffff: each image gets a
    # note, its addresses stay [image], the report exits 0.
    off = elf_symbol(dkperf, "main")
    if off is None:
        print(f"skipped: no main symbol in {dkperf}")
        sys.exit(77)
    orig = bytes(open(dkperf, "rb").read())
    phoff, shoff = struct.unpack_from("<QQ", orig, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", orig, 0x36)
    size = 64 << 30
    images = {}

    b = bytearray(orig)
    for i in range(shnum):
        at = shoff + i * shentsize
        if struct.unpack_from("<I", b, at + 4)[0] == 2:  # SHT_SYMTAB
            struct.pack_into("<Q", b, at + 32, size - struct.unpack_from("<Q", b, at + 24)[0])
    images["sparse.so"] = (b, r"its symbols could not be read \(a symbol table of \d+ bytes, "
                           r"more than the 1024 MiB report reads\)")
    b = bytearray(orig)
    for i in range(phnum):
        at = phoff + i * phentsize
        if struct.unpack_from("<I", b, at)[0] == 4:  # PT_NOTE
            note = size - struct.unpack_from("<Q", b, at + 8)[0]
            struct.pack_into("<QQ", b, at + 32, note, note)
    images["note.so"] = (b, r"its build-id could not be read \(a note segment of \d+ bytes, "
                         r"more than the 16 MiB report reads\)")
    b = bytearray(orig)
    struct.pack_into("<H", b, 0x3C, 0)  # e_shnum 0: the count is section 0's sh_size
    struct.pack_into("<Q", b, shoff + 32, (size - shoff) // shentsize)
    images["shnum.so"] = (b, r"not readable as ELF \(\d+ section headers, more than the "
                          r"1048576 report reads; the file is corrupt\)")
    b = bytearray(orig)
    struct.pack_into("<H", b, 0x38, 0xFFFF)  # PN_XNUM: the count is section 0's sh_info
    struct.pack_into("<I", b, shoff + 44, 0xFFFFFFFF)
    images["phnum.so"] = (b, r"not readable as ELF \(4294967295 program headers, more than the "
                          r"1048576 report reads; the file is corrupt\)")
    m = bytearray(open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "fixtures", "macho", "thin-arm64"), "rb").read())
    ncmds, at = struct.unpack_from("<I", m, 16)[0], 32
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from("<II", m, at)
        if cmd == 2:  # LC_SYMTAB
            struct.pack_into("<I", m, at + 12, 0xFFFFFFFF)
        at += cmdsize
    images["sparse.macho"] = (m, r".*sparse\.macho: the symbol table: 4294967295 entries of 16 "
                              r"bytes, more than the 1024 MiB read; the file is corrupt")

    def limit():  # a report that did read a table must not take the machine
        if not os.environ.get("DK_SANITIZED"):
            resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    base = 0x10000000
    for name, (data, why) in images.items():
        image = write(name, bytes(data))
        try:
            os.truncate(image, size + (1 << 30))  # the Mach-O's table starts past 0
        except OSError as e:
            print(f"skipped: no 65 GiB sparse file here: {e}")
            sys.exit(77)
        body = meta("comm", "sparse") + event(0, "cpu-clock") + comm(PID, "sparse") \
            + map_(PID, base, 0x1000000, image) + nodes([(0, base + off + 4)])
        path = write("sparse.data", HEADER + chunk(body + sample(1, pid=PID, period=1) + end(1)))
        try:
            p = subprocess.run([dkperf, "report", "-i", path, "--stdio"], preexec_fn=limit,
                               timeout=60, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            rc, out, err = p.returncode, p.stdout.decode(errors="replace"), \
                p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc, out, err = None, "", "(hung: killed after 60 s)"
        os.unlink(image)
        check(rc == 0 and re.search(r"^# " + re.escape(image) + r": no symbols: " + why + "$",
                                    out, re.M)
              and f"[{name}]" in out,
              f"{name}, a table of 64 GiB: the image's note, exit 0: {rc} {err!r}\n{out}")


def case_swap():
    # An image swapped for a FIFO or a device between report's stat of it
    # and its open (DK_SWAP_SHIM makes a symlink of the path just before
    # the first open): the FIFO or device is never opened, only looked at
    # through an O_PATH descriptor, which opens nothing; the image's note
    # says it was replaced.
    shim = os.environ.get("DK_SWAP_SHIM")
    if not shim:
        print("skipped: no open shim (a sanitizer build, or not Linux)")
        sys.exit(77)
    fifo = os.path.join(work, "swap.fifo")
    if os.path.lexists(fifo):
        os.unlink(fifo)
    os.mkfifo(fifo)
    base = 0x10000000
    for name, target, kind in (("swap-fifo.so", fifo, "fifo"), ("swap-dev.so", "/dev/null", "chr")):
        image = os.path.join(work, name)
        if os.path.lexists(image):
            os.unlink(image)
        shutil.copyfile(dkperf, image)
        body = meta("comm", "swap") + event(0, "cpu-clock") + comm(PID, "swap") \
            + map_(PID, base, 0x1000000, image) + nodes([(0, base + 0x1234)])
        path = write("swap.data", HEADER + chunk(body + sample(1, pid=PID, period=1) + end(1)))
        log = os.path.join(work, "swap.log")
        if os.path.exists(log):
            os.unlink(log)
        env = dict(os.environ, LD_PRELOAD=shim, DKPERF_TEST_SWAP="/" + name,
                   DKPERF_TEST_SWAP_TO=target, DKPERF_TEST_SWAP_LOG=log)
        p = subprocess.run([dkperf, "report", "-i", path, "--stdio"], env=env, timeout=60,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        check(os.path.islink(image) and os.readlink(image) == target,
              f"{name}: the shim swapped the image for {target}")
        opens = [line.split("|") for line in open(log).read().splitlines()] \
            if os.path.exists(log) else []
        check(any(o[0] == image for o in opens), f"{name}: the shim saw the open: {opens}")
        bad = [o for o in opens if o[1] == "open" and o[2] == kind]
        check(bad == [], f"{name}: {target} was opened (not only looked at): {bad}")
        check(p.returncode == 0 and re.search(r"^# " + re.escape(image) + r": no symbols: not "
                                              r"read: it was replaced by another file while "
                                              r"being opened$", out, re.M),
              f"{name}: the image's note says it was replaced, exit 0: {p.returncode} {err!r}\n"
              f"{out}")


cases = {"memory": case_memory, "multiply": case_multiply, "memo": case_memo, "cut": case_cut, "errors": case_errors,
         "names": case_names, "longname": case_longname, "images": case_images,
         "shrink": case_shrink, "sparse": case_sparse, "escapes": case_escapes,
         "swap": case_swap}
for name, fn in cases.items():
    if only is None or only == name:
        fn()
if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("ok")
