#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf diff and report --html --diff on recordings of known content.

usage: check_diff.py DKPERF RECORD_FIXTURE RECORD_PROG WORKDIR CASE

cases:
  golden  two fixture recordings (fx_hot 70 then 140 samples a round)
          against tests/golden/diff-fixture*.txt, recording paths as OLD, NEW
  slower  two real recordings (cpu-clock) of record_prog, the second with
          rp_hot twice as slow: rp_hot has the largest positive delta
  errors  a missing file, a file that is no recording, recordings of
          different events, a wrong argument count: one line each
  html    the differential flame graph: fx_hot red, fx_cold blue, both
          shares in the tooltips, and drawn so in headless Chromium
"""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
dkperf, fixture, prog, work, case = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
work = os.path.abspath(work)


def run(*args):
    return subprocess.run([dkperf, *args], capture_output=True, text=True, timeout=120)


def fixture_file(name, *extra):
    path = os.path.join(work, name)
    subprocess.run([fixture, path, "--rounds", "10", *extra], check=True)
    return path


def rows(text):
    """(baseline or None, delta or None, symbol) of each row."""
    out = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        base, delta = line[:10].strip(), line[10:21].strip()
        out.append((float(base[:-1]) if base else None, float(delta[:-1]) if delta else None,
                    line.split()[-1]))
    return out


def case_golden():
    old, new = fixture_file("old.data"), fixture_file("new.data", "--hot", "140")
    for extra, golden in (([], "diff-fixture.txt"),
                          (["-c", "delta", "--children"], "diff-fixture-delta-children.txt")):
        p = run("diff", *extra, old, new)
        if p.returncode != 0 or p.stderr:
            sys.exit(f"dkperf diff {extra} exited {p.returncode}: {p.stderr}")
        got = p.stdout.replace(old, "OLD").replace(new, "NEW")
        want = open(os.path.join(here, "golden", golden)).read()
        if got != want:
            sys.stdout.write(got)
            sys.exit(f"dkperf diff {' '.join(extra)}: differs from tests/golden/{golden}")
        print(f"{golden}: the same")


def case_slower():
    out = {}
    for name, extra in (("fast", []), ("slow", ["--slow-hot"])):
        path = os.path.join(work, name + ".data")
        p = subprocess.run([dkperf, "record", "-e", "cpu-clock", "-g", "-o", path, "--", prog,
                            "0.5", *extra], capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            if "perf_event_paranoid" in p.stderr or "not permitted" in p.stderr.lower():
                print("skipped: cannot sample here:", p.stderr.strip())
                sys.exit(77)
            sys.exit(f"dkperf record exited {p.returncode}: {p.stderr}")
        out[name] = path
    p = run("diff", "-c", "delta", out["fast"], out["slow"])
    print(p.stdout)
    if p.returncode != 0:
        sys.exit(f"dkperf diff exited {p.returncode}: {p.stderr}")
    grown = [r for r in rows(p.stdout) if r[1] is not None]
    top = max(grown, key=lambda r: r[1])
    # rp_hot goes from 80% to about 89% of the samples; rp_warm shrinks.
    if top[2] != "rp_hot" or top[1] < 3.0:
        sys.exit(f"the largest positive delta is {top}, not rp_hot's")
    warm = [r for r in grown if r[2] == "rp_warm"]
    if not warm or warm[0][1] >= 0:
        sys.exit(f"rp_warm's share did not shrink: {warm}")


def case_errors():
    good = fixture_file("good.data")
    other = fixture_file("task.data", "--event", "task-clock")
    junk = os.path.join(work, "junk.data")
    with open(junk, "w") as f:
        f.write("not a recording\n")
    missing = os.path.join(work, "missing.data")
    bad = 0
    for args, code, want in (
            (["diff", missing, good], 1, "No such file"),
            (["diff", good, junk], 1, "not a dkperf recording"),
            (["diff", good, other], 1, "records cpu-clock and"),
            (["diff", other, good], 1, "records task-clock and"),
            (["diff", good], 2, "give two recordings"),
            (["diff", good, good, good], 2, "one recording too many"),
            (["diff", "-c", "ratio", good, good], 2, "compute delta or delta-abs"),
            (["report", "-i", good, "--diff", good], 2, "give --html FILE too"),
            (["report", "-i", good, "--html", os.path.join(work, "x.html"), "--diff", other], 1,
             "records no cpu-clock"),
            (["report", "-i", good, "--html", os.path.join(work, "x.html"), "--diff", missing],
             1, "No such file")):
        p = run(*args)
        lines = p.stderr.splitlines()
        ok = p.returncode == code and len(lines) == 1 and want in lines[0] and not p.stdout
        print(("ok   " if ok else "FAIL ") + " ".join(a.replace(work + "/", "") for a in args),
              "->", p.returncode, p.stderr.strip())
        bad += not ok
    if bad:
        sys.exit(f"{bad} bad inputs not refused in one line")


def case_html():
    old, new = fixture_file("old.data"), fixture_file("new.data", "--hot", "140")
    html = os.path.join(work, "diff.html")
    p = run("report", "-i", new, "--html", html, "--diff", old)
    if p.returncode != 0:
        sys.exit(f"report --html --diff exited {p.returncode}: {p.stderr}")
    text = open(html).read()
    fills = {}
    for m in re.finditer(r'data-n="([^"]*)"><title>([^<]*)</title><rect [^>]*fill="rgb\((\d+),(\d+),(\d+)\)"',
                         text):
        fills[m[1]] = (m[2], tuple(int(c) for c in m.group(3, 4, 5)))
    hot, cold = fills["fx_hot"], fills["fx_cold"]
    print("fx_hot:", hot, "\nfx_cold:", cold)
    # fx_hot: 70/101 of the samples, then 140/171: the largest growth, full red.
    if hot[1] != (255, 0, 0) or "82.46%" not in hot[0] or "was 70.30%" not in hot[0]:
        sys.exit("fx_hot is not drawn red with both shares")
    if cold[1][2] != 255 or cold[1][0] > 200 or "was 19.80%" not in cold[0]:
        sys.exit("fx_cold is not drawn blue with both shares")
    if "Differential flame graph" not in text:
        sys.exit("no heading says the graph is differential")
    if subprocess.run([sys.executable, os.path.join(here, "html_render.py"), "browser"],
                      capture_output=True).returncode != 0:
        print("skipped: no chromium to render the flame graph")
        sys.exit(77)
    sys.path.insert(0, here)
    from html_render import rows as png_rows
    png = os.path.join(work, "diff.png")
    subprocess.run([sys.executable, os.path.join(here, "html_render.py"), "shot", "file://" + html,
                    png, "1200x600", os.path.join(work, "chromium.log")], check=True)
    w, h, bpp, lines = png_rows(png)
    red = blue = 0
    for line in lines[::2]:
        for x in range(0, w * bpp, 2 * bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            red += r >= 240 and g <= 40 and b <= 40
            blue += b >= 240 and r <= 120 and g <= 120
    print(f"{png}: {red} red and {blue} blue pixels (every second pixel, every second row)")
    # fx_hot: 82% of 1176 px by 16 px, sampled 1 in 4: about 3900; fx_cold
    # 12%: about 550.
    if red < 2500 or blue < 300:
        sys.exit(f"{png}: the differential colours were not drawn")


{"golden": case_golden, "slower": case_slower, "errors": case_errors, "html": case_html}[case]()
