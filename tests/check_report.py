#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf report on a recording written by tests/record_fixture (its own
functions at their real addresses, maps and build-ids from /proc/self/maps):
the table (--stdio, every --sort), folded stacks, speedscope JSON (strict
parse: no duplicate keys, no NaN, the file-format schema's fields), the HTML
flame graph (well-formed, self-contained), and the errors: a cut file, a
corrupt file, a missing file, an unwritable output.

usage: check_report.py DKPERF RECORD_FIXTURE WORKDIR [CASE]
"""
import html.parser
import json
import os
import re
import subprocess
import sys

dkperf, fixture, work = sys.argv[1:4]
only = sys.argv[4] if len(sys.argv) > 4 else None
os.makedirs(work, exist_ok=True)
ROUNDS = 10
from checks import check, failures
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recording import elf_symbol  # noqa: E402


def run(*args, ok=True):
    p = subprocess.run([dkperf, *args], capture_output=True, text=True, timeout=120)
    if ok and p.returncode != 0:
        sys.exit(f"dkperf {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


def fixture_file(name, *extra):
    path = os.path.join(work, name)
    subprocess.run([fixture, path, "--rounds", str(ROUNDS), *extra], check=True)
    return path


def rows_of(text):
    """The table's rows: (children, self, samples, rest of the line)."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^\s+([\d.]+)%\s+([\d.]+)%\s+(\d+)\s+(.*)$", line)
        if m:
            out.append((float(m[1]), float(m[2]), int(m[3]), m[4].split()))
    return out


def case_stdio():
    data = fixture_file("fixture.data")
    p = run("report", "-i", data)
    out = p.stdout
    rows = rows_of(out)
    check(rows and rows[0][3][-1] == "fx_hot", f"the first row is fx_hot: {rows[:2]}")
    total = 101 * ROUNDS
    by_sym = {r[3][-1]: r for r in rows}
    for sym, children, self_ in (("fx_hot", 71, 70), ("fx_cold", 20, 20), ("fx_other", 8, 8),
                                 ("fx_outer", 91, 0), ("main", 101, 0), ("[unknown]", 1, 1),
                                 ("[kernel]", 1, 1)):
        r = by_sym.get(sym)
        check(r is not None, f"a row for {sym}")
        if r:
            check(abs(r[0] - 100.0 * children / 101) < 0.01 and abs(r[1] - 100.0 * self_ / 101) < 0.01,
                  f"{sym}: children {r[0]}% self {r[1]}%, expected {100*children/101:.2f}% {100*self_/101:.2f}%")
            check(r[2] == self_ * ROUNDS, f"{sym}: {r[2]} samples, expected {self_ * ROUNDS}")
    mism = [r for r in rows if r[3][-1] == "[record_fixture]"]
    check(len(mism) == 1 and mism[0][2] == ROUNDS,
          f"the address in the image with a wrong build-id stays unnamed: {rows}")
    check(re.search(r"no symbols: build-id \S+ on disk differs from baadf00d0+ recorded", out),
          "the report says the build-id differs:\n" + out)
    check(f"{total:,} samples" in out, f"the header counts {total} samples")
    check("lost 7, throttled 1 times" in out, "lost and throttled are reported")
    check(p.stderr == "", f"nothing on stderr for a complete file: {p.stderr!r}")
    # --children orders by the total: main (100%) first.
    rows = rows_of(run("report", "-i", data, "--children").stdout)
    check(rows and rows[0][3][-1] == "main", f"--children puts main first: {rows[:2]}")
    rows = rows_of(run("report", "-i", data, "--sort", "dso").stdout)
    names = [r[3][-1] for r in rows]
    check(names[0] == "record_fixture" and "[unknown]" in names and "[kernel]" in names,
          f"--sort dso rows: {names}")
    check(abs(rows[0][0] - 100.0) < 0.01, f"record_fixture holds every stack: {rows[0]}")
    rows = rows_of(run("report", "-i", data, "--sort", "comm").stdout)
    check(len(rows) == 1 and rows[0][3] == ["fixture"] and abs(rows[0][1] - 100) < 0.01,
          f"--sort comm: {rows}")
    rows = rows_of(run("report", "-i", data, "--sort", "pid").stdout)
    check(len(rows) == 1 and rows[0][3][1] == "fixture", f"--sort pid: {rows}")
    # Two events: a section each.
    two = fixture_file("two.data", "--two-events")
    out = run("report", "-i", two).stdout
    check("# Event: cpu-clock" in out and "# Event: page-faults" in out, "a section per event")
    # The total says its unit: nanoseconds for a clock, events otherwise.
    check(re.search(r"# Event: cpu-clock .*: [0-9,]+ samples, [0-9,]+ ns in all$", out, re.M) and
          re.search(r"# Event: page-faults .*: [0-9,]+ samples, [0-9,]+ events in all$", out, re.M),
          f"the totals' units: {[l for l in out.splitlines() if l.startswith('# Event')]}")
    rows = rows_of(out.split("# Event: page-faults")[1])
    check(rows and rows[0][3][-1] == "fx_other" and rows[0][2] == 5 * ROUNDS,
          f"page-faults fell in fx_other: {rows[:1]}")


def case_folded():
    data = fixture_file("fixture.data")
    out = run("report", "-i", data, "--folded").stdout
    got = {}
    for line in out.splitlines():
        m = re.fullmatch(r"(.+) (\d+)", line)
        check(m is not None and ";" in m[1], f"a folded line: {line!r}")
        if m:
            check(m[1] not in got, f"each stack once: {m[1]}")
            got[m[1]] = int(m[2])
    want = {"fixture;main;fx_outer;fx_hot": 70, "fixture;main;fx_outer;fx_cold": 20,
            "fixture;main;fx_other": 8, "fixture;main;[unknown]": 1,
            "fixture;main;fx_outer;fx_hot;[kernel]": 1,
            "fixture;main;[record_fixture]": 1}
    want = {k: v * ROUNDS for k, v in want.items()}
    check(got == want, f"folded stacks:\n{got}\nexpected\n{want}")
    # With two events, the first by default, the other by name or index.
    two = fixture_file("two.data", "--two-events")
    p = run("report", "-i", two, "--folded", "--event", "page-faults")
    check(p.stdout == f"fixture;main;fx_other {5 * ROUNDS}\n", f"--event page-faults: {p.stdout!r}")
    check(run("report", "-i", two, "--folded", "--event", "1").stdout == p.stdout, "--event 1")
    p = run("report", "-i", two, "--folded")
    check("holds 2 events" in p.stderr and "page-faults" not in p.stdout.split("\n")[0],
          f"the first event by default, with a note: {p.stderr!r}")
    p = run("report", "-i", two, "--folded", "--event", "nope", ok=False)
    check(p.returncode == 2 and "--event nope" in p.stderr, f"--event nope: {p.stderr!r}")


def strict_json(text):
    def pairs(items):
        keys = [k for k, _ in items]
        if len(keys) != len(set(keys)):
            raise ValueError(f"duplicate keys {keys}")
        return dict(items)

    def constant(name):
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=pairs, parse_constant=constant)


def case_speedscope():
    data = fixture_file("two.data", "--two-events")
    path = os.path.join(work, "profile.speedscope.json")
    p = run("report", "-i", data, "--speedscope", path)
    check(p.stdout == "", "--speedscope alone prints no table")
    doc = strict_json(open(path, encoding="utf-8").read())
    check(doc["$schema"] == "https://www.speedscope.app/file-format-schema.json", "the schema")
    frames = doc["shared"]["frames"]
    names = [f["name"] for f in frames]
    check(len(names) == len(set(zip(names, [f.get("file") for f in frames]))), "frames are shared, once each")
    check(all(isinstance(f["name"], str) for f in frames), "frame names are strings")
    profiles = doc["profiles"]
    check([pr["name"] for pr in profiles] == ["cpu-clock", "page-faults"], "a profile per event")
    for pr in profiles:
        check(pr["type"] == "sampled", "sampled profiles")
        check(pr["unit"] in ("nanoseconds", "none"), "a unit of the schema")
        check(len(pr["samples"]) == len(pr["weights"]), "a weight per sample")
        check(pr["startValue"] == 0 and pr["endValue"] == sum(pr["weights"]), "start and end")
        check(all(0 <= i < len(frames) for s in pr["samples"] for i in s), "frame indices in range")
        check(len(set(map(tuple, pr["samples"]))) == len(pr["samples"]),
              "a stack is one entry, however many samples it has")
    cpu = profiles[0]
    # A round: 70 in fx_hot, 20 in fx_cold, 8 in fx_other, then 3 alone;
    # each stack's samples of every round are one entry.
    check(len(cpu["samples"]) == 6, f"an entry per stack: {len(cpu['samples'])}")
    check(sum(cpu["weights"]) == 101 * ROUNDS * 1001001, "every cpu-clock sample")
    check(cpu["unit"] == "nanoseconds" and cpu["weights"][0] == 70 * ROUNDS * 1001001,
          "cpu-clock weighs its period in ns, a stack its samples'")
    hot = [s for s in cpu["samples"] if names[s[-1]] == "fx_hot"]
    hot_weight = sum(w for s, w in zip(cpu["samples"], cpu["weights"]) if names[s[-1]] == "fx_hot")
    check(len(hot) == 1 and hot_weight == 70 * ROUNDS * 1001001,
          f"fx_hot is the innermost frame of {len(hot)} entries, {hot_weight} ns")
    check(all([names[i] for i in s] == ["main", "fx_outer", "fx_hot"] for s in hot),
          "stacks go from the outermost frame to the innermost")
    check(doc["activeProfileIndex"] == 0 and isinstance(doc["exporter"], str), "the top-level fields")


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.tags, self.errors, self.groups, self.external = [], [], [], [], []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        for k in ("src", "href"):
            if k in a:
                self.external.append(f"{tag} {k}={a[k]}")
        if tag == "link":
            self.external.append("link")
        if tag == "script":
            self.scripts += 1
        if tag == "g" and a.get("class") == "f":
            self.groups.append(a)
        if tag not in ("meta", "input", "rect", "br", "link"):
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def case_html():
    data = fixture_file("fixture.data")
    path = os.path.join(work, "flame.html")
    run("report", "-i", data, "--html", path)
    text = open(path, encoding="utf-8").read()
    page = Page()
    page.feed(text)
    page.close()
    check(not page.errors and not page.stack, f"well-formed: {page.errors[:3]} open {page.stack}")
    check(not page.external, f"nothing fetched: {page.external}")
    check("svg" in page.tags and page.scripts == 1 and "input" in page.tags,
          "an inline SVG, one inline script and a search box")
    names = {g["data-n"]: g for g in page.groups}
    for n in ("all", "main", "fx_outer", "fx_hot", "fx_cold", "fx_other", "[unknown]", "[kernel]"):
        check(n in names, f"a frame for {n}")
    if "fx_hot" in names and "all" in names:
        check(abs(float(names["fx_hot"]["data-w"]) - 71 / 101) < 1e-6, "fx_hot is 71/101 wide")
        check(float(names["all"]["data-w"]) == 1.0, "the root is the whole width")
        check(float(names["fx_outer"]["data-x"]) <= float(names["fx_hot"]["data-x"]), "a child starts within its parent")


def case_errors():
    data = fixture_file("fixture.data")
    raw = open(data, "rb").read()
    # Cut in the middle of a chunk: read, with a warning, exit 0.
    cut = os.path.join(work, "cut.data")
    open(cut, "wb").write(raw[: len(raw) * 2 // 3])
    p = run("report", "-i", cut, "--folded")
    check(p.returncode == 0 and "warning: " + cut + " is incomplete" in p.stderr
          and "is cut" in p.stderr, f"a cut file: {p.stderr!r}")
    check(len(p.stderr.strip().splitlines()) == 1, "one warning line")
    check(sum(int(line.rsplit(" ", 1)[1]) for line in p.stdout.splitlines()) > 0,
          "the samples before the cut are reported")
    unfinished = fixture_file("unfinished.data", "--no-end")
    p = run("report", "-i", unfinished)
    check("no end mark" in p.stderr, f"no end mark: {p.stderr!r}")
    # A byte changed inside a chunk: refused, one line, file and offset.
    bad = os.path.join(work, "bad.data")
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0x40
    open(bad, "wb").write(bytes(flipped))
    p = run("report", "-i", bad, ok=False)
    check(p.returncode == 1 and re.fullmatch(
        r"dkperf report: " + re.escape(bad) + r": corrupt recording at byte offset \d+: .*\n", p.stderr),
        f"a corrupt file: {p.returncode} {p.stderr!r}")
    check(p.stdout == "", "nothing reported from a corrupt file")
    p = run("report", "-i", fixture, ok=False)
    check(p.returncode == 1 and "not a dkperf recording" in p.stderr, f"an ELF file: {p.stderr!r}")
    missing = os.path.join(work, "missing.data")
    p = run("report", "-i", missing, ok=False)
    check(p.returncode == 1 and p.stderr.count("\n") == 1 and missing in p.stderr
          and "No such file" in p.stderr, f"a missing file: {p.stderr!r}")
    p = run("report", "-i", data, "--html", "/nonexistent-dir/x.html", ok=False)
    check(p.returncode == 1 and "--html /nonexistent-dir/x.html" in p.stderr, f"unwritable --html: {p.stderr!r}")
    p = run("report", "-i", data, "--sort", "bogus", ok=False)
    check(p.returncode == 2 and "--sort bogus" in p.stderr, f"--sort bogus: {p.stderr!r}")
    p = run("report", "-i", data, "--folded", "--stdio", ok=False)
    check(p.returncode == 2, "--folded with --stdio is refused")


def case_runs():
    """Addresses without a symbol: one [image] frame per image and caller,
    a run of them in one image one frame, a run of [unknown] one frame."""
    data = fixture_file("deep.data", "--deep")
    got = {}
    for line in run("report", "-i", data, "--folded").stdout.splitlines():
        stack, n = line.rsplit(" ", 1)
        got[stack] = int(n)
    tall = "fixture;main;" + "fx_outer;" * 126 + "fx_hot"
    want = {"fixture;main;fx_outer;fx_hot": 70, "fixture;main;fx_outer;fx_cold": 20,
            "fixture;main;fx_other": 8, "fixture;main;fx_outer;fx_hot;[kernel]": 1,
            # The address in no map, and the run of 127 of them.
            "fixture;main;[unknown]": 2,
            # Three stacks in the mismatched map: at 0x1234, at 0x1500, and
            # the run 0x3456 <- 0x2345 <- 0x1234.
            "fixture;main;[record_fixture]": 3,
            tall: 1}
    want = {k: v * ROUNDS for k, v in want.items()}
    short = {k[:80]: v for k, v in got.items()}
    check(got == want, f"folded stacks:\n{short}\nexpected\n{ {k[:80]: v for k, v in want.items()} }")
    rows = rows_of(run("report", "-i", data).stdout)
    names = [r[3][-1] for r in rows]
    check(names.count("[record_fixture]") == 1 and names.count("[unknown]") == 1,
          f"one table row each for [record_fixture] and [unknown]: {names}")
    path = os.path.join(work, "deep.speedscope.json")
    run("report", "-i", data, "--speedscope", path)
    with open(path) as f:
        doc = json.load(f)
    frames = [f["name"] for f in doc["shared"]["frames"]]
    check(frames.count("[record_fixture]") == 1 and not any("+0x" in f for f in frames),
          f"speedscope frames: {frames}")


def case_macho():
    image = os.environ.get("DK_MACHO_IMAGE")
    if not image:
        print("skipped: no Mach-O reader in this build")
        sys.exit(77)
    data = os.path.join(work, "macho.data")
    subprocess.run([fixture, data, "--macho", image], check=True)
    p = run("report", "-i", data, "--folded")
    got = sorted(p.stdout.splitlines())
    base = os.path.basename(image)
    want = sorted(["fixture;fixture_alpha;fixture_beta 10",
                   f"fixture;[{base}] 3"])
    check(got == want, f"Mach-O symbols from the image, by its UUID: {got}, expected {want}")
    out = run("report", "-i", data).stdout
    check(re.search(r"no symbols: .*UUID", out), "the wrong UUID is reported:\n" + out)


def case_noelf():
    """DKPERF built without elfutils: each report, whatever its output, says
    once on stderr why its ELF functions are addresses."""
    data = fixture_file("noelf.data")
    for args in ([], ["--folded"], ["--html", os.path.join(work, "noelf.html")],
                 ["--speedscope", os.path.join(work, "noelf.json")]):
        p = run("report", "-i", data, *args)
        lines = p.stderr.splitlines()
        check(len(lines) == 1 and "built without elfutils" in lines[0] and "libelf-dev" in lines[0],
              f"report {' '.join(args)}: one line naming elfutils and libelf-dev on stderr: {p.stderr!r}")
        if not args:
            check(re.search(r"\[record_fixture\]", p.stdout),
                  "the addresses are unnamed [record_fixture]:\n" + p.stdout)


def case_exec():
    # A process samples fx_hot, then execs another image (this test's
    # dkperf) at the same address, or maps it over it (--remap), and
    # samples that address again: the samples before name fx_hot, those
    # after the new image's function, in every output.
    off = elf_symbol(dkperf, "cmd_report")
    check(off is not None, "cmd_report in dkperf's symbol table")
    for mode, comm in (("--exec", "execd"), ("--remap", "fixture")):
        data = os.path.join(work, mode[2:] + ".data")
        subprocess.run([fixture, data, mode, dkperf, str(off)], check=True)
        folded = run("report", "-i", data, "--folded").stdout
        want = {"fixture;fx_hot 6", f"{comm};cmd_report 4"}
        check(set(folded.splitlines()) == want, f"{mode}: folded {folded!r}, expected {want}")
        rows = {(r[2], r[3][-1], r[3][-2]) for r in rows_of(run("report", "-i", data).stdout)}
        check(rows == {(6, "fx_hot", "record_fixture"), (4, "cmd_report", "dkperf")},
              f"{mode}: the table's rows {rows}")
        ss = os.path.join(work, mode[2:] + ".json")
        run("report", "-i", data, "--speedscope", ss)
        with open(ss) as f:
            doc = json.load(f)
        names = doc["shared"]["frames"]
        weights = {names[s[-1]]["name"]: w for s, w in
                   zip(doc["profiles"][0]["samples"], doc["profiles"][0]["weights"])}
        check(weights == {"fx_hot": 6 * 1001001, "cmd_report": 4 * 1001001},
              f"{mode}: speedscope {weights}")
        os.unlink(ss)
        os.unlink(data)
    # The new image maps nothing where fx_hot was: an exec ends the old
    # image's maps, so the samples there after it are named by none.
    data = os.path.join(work, "exec-away.data")
    subprocess.run([fixture, data, "--exec-away", dkperf, str(off)], check=True)
    folded = run("report", "-i", data, "--folded").stdout
    want = {"fixture;fx_hot 6", "execd;[unknown] 4", "execd;cmd_report 3"}
    check(set(folded.splitlines()) == want, f"--exec-away: folded {folded!r}, expected {want}")
    rows = {(r[2], r[3][-1]) for r in rows_of(run("report", "-i", data).stdout)}
    check(rows == {(6, "fx_hot"), (4, "[unknown]"), (3, "cmd_report")},
          f"--exec-away: the table's rows {rows}")
    ss = os.path.join(work, "exec-away.json")
    run("report", "-i", data, "--speedscope", ss)
    with open(ss) as f:
        doc = json.load(f)
    names = doc["shared"]["frames"]
    weights = {names[s[-1]]["name"]: w for s, w in
               zip(doc["profiles"][0]["samples"], doc["profiles"][0]["weights"])}
    check(weights == {"fx_hot": 6 * 1001001, "[unknown]": 4 * 1001001,
                      "cmd_report": 3 * 1001001}, f"--exec-away: speedscope {weights}")
    os.unlink(ss)
    os.unlink(data)


cases = {"exec": case_exec, "macho": case_macho, "noelf": case_noelf, "stdio": case_stdio, "folded": case_folded, "runs": case_runs, "speedscope": case_speedscope,
         "html": case_html, "errors": case_errors}
for name, fn in cases.items():
    if only == name or (only is None and name != "noelf"):
        fn()
if failures:
    sys.exit(f"{len(failures)} check(s) failed")
print("ok")
