#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf bench's hyperfine options: -n, --setup/--cleanup, -P/-D and -L
scans with {NAME} substituted (in the command, the names, --setup,
--cleanup and --prepare), commands without --, the parameters in the JSON,
CSV and Markdown exports, the progress line of a scan on a terminal, and a
clear one-line error (exit 2) for each bad scan.

With --vs-hyperfine: the same scans run by hyperfine --export-json and by
dkperf bench --export-json give the same results in the same order: the
same command strings, the same "parameters" objects (values as strings),
and every key hyperfine writes. Without hyperfine on PATH this exits 77
(skipped), except under CI (CI set in the environment), where it fails.

usage: check_bench_hyperfine.py DKPERF [--vs-hyperfine]
       (DKPERF_FRAMEWORK_ROOT etc. from the environment)
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ptyrun import run_on_pty  # noqa: E402

dkperf = os.path.abspath(sys.argv[1])
vs_hyperfine = "--vs-hyperfine" in sys.argv[2:]
env = dict(os.environ)
EV = ["-e", "instructions" if env.get("DKPERF_FRAMEWORK_ROOT") else "task-clock"]
work = tempfile.mkdtemp(prefix="bench-hyperfine.")
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}", file=sys.stderr)


def bench(args, cwd=None):
    p = subprocess.run([dkperf, "bench"] + args, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, env=env, cwd=cwd or work, timeout=120)
    return p.returncode, p.stdout, p.stderr


def bench_json(args, what):
    path = os.path.join(work, "d.json")
    rc, out, err = bench(EV + ["-r", "2", "--export-json", path] + args)
    if rc != 0:
        fail(f"{what}: dkperf bench {args}: exit {rc}: {err}")
        return None
    with open(path) as f:
        text = f.read()
    os.unlink(path)
    return text


# The scans both tools are given: (options, commands).
SCANS = [
    (["-P", "n", "1", "3"], ["sleep 0.0{n}"]),
    (["-P", "n", "0", "0.02", "-D", "0.01"], ["sleep {n}"]),
    (["-L", "a", "1,2", "-L", "b", "0,1"], ["sleep 0.0{a}{b}"]),
    (["-L", "b", "0,1", "-L", "a", "1,2"], ["sleep 0.0{a}{b}"]),
    (["-L", "n", "1,2"], ["sleep 0.0{n}", "sleep 0.00{n}"]),
    (["-n", "short {n}", "-P", "n", "1", "2"], ["sleep 0.0{n}"]),
    (["-n", "first", "-n", "second"], ["sleep 0.01", "sleep 0.02"]),
    (["-n", "only the first"], ["sleep 0.01", "sleep 0.02"]),
]


def compare_with_hyperfine():
    hyperfine = shutil.which("hyperfine")
    if hyperfine is None:
        if env.get("CI", "") not in ("", "0", "false"):
            fail("hyperfine is not installed (scripts/setup.sh --tests installs it)")
            return
        print("SKIP: hyperfine is not installed")
        shutil.rmtree(work)
        sys.exit(77)
    for opts, cmds in SCANS:
        what = " ".join(opts + [repr(c) for c in cmds])
        hpath = os.path.join(work, "h.json")
        hcsv = os.path.join(work, "h.csv")
        # -N: hyperfine without a shell, as dkperf bench runs commands.
        p = subprocess.run([hyperfine, "-N", "-r", "2", "--style", "none", "--export-json", hpath,
                            "--export-csv", hcsv] + opts + cmds,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            fail(f"{what}: hyperfine failed: {p.stderr}")
            continue
        with open(hpath) as f:
            h = json.load(f)["results"]
        with open(hcsv) as f:
            hrows = list(csv.reader(f))
        text = bench_json(opts + cmds, what)
        if text is None:
            continue
        d = json.loads(text)["results"]
        if [r["command"] for r in h] != [r["command"] for r in d]:
            fail(f"{what}: commands {[r['command'] for r in d]}, hyperfine "
                 f"{[r['command'] for r in h]}")
            continue
        for hr, dr in zip(h, d):
            missing = set(hr) - set(dr)
            if missing:
                fail(f"{what}: {dr['command']}: keys hyperfine writes are missing: {missing}")
            if hr.get("parameters") != dr.get("parameters"):
                fail(f"{what}: {dr['command']}: parameters {dr.get('parameters')}, hyperfine "
                     f"{hr.get('parameters')}")
            # The same layout: an object of strings, its keys in the same order.
            if "parameters" in hr and list(hr["parameters"]) != list(dr["parameters"]):
                fail(f"{what}: parameter order {list(dr['parameters'])}, hyperfine "
                     f"{list(hr['parameters'])}")
        # The CSV: hyperfine's parameter_NAME columns, the same values.
        dcsv = os.path.join(work, "d.csv")
        rc, _, err = bench(EV + ["-r", "1", "--export-csv", dcsv] + opts + cmds)
        if rc != 0:
            fail(f"{what}: dkperf bench --export-csv: exit {rc}: {err}")
            continue
        with open(dcsv) as f:
            drows = list(csv.reader(f))
        hp = [i for i, c in enumerate(hrows[0]) if c.startswith("parameter_")]
        dp = [i for i, c in enumerate(drows[0]) if c.startswith("parameter_")]
        if [[row[i] for i in hp] for row in hrows] != [[row[i] for i in dp] for row in drows]:
            fail(f"{what}: CSV parameter columns differ:\n{drows}\nhyperfine:\n{hrows}")
        if [row[0] for row in hrows] != [row[0] for row in drows]:
            fail(f"{what}: CSV commands differ: {[r[0] for r in drows]} {[r[0] for r in hrows]}")


def on_pty(args, cols=100, timeout=60):
    """dkperf bench ARGS with stderr on a pty: (exit status, pty text)."""
    p, got, timed_out = run_on_pty([dkperf, "bench"] + args, cols, timeout, env=env, cwd=work)
    if timed_out:
        fail(f"dkperf bench {args}: still running after {timeout} s")
    rc = p.wait()
    return rc, got.decode(errors="replace")


def check_runs_and_exports():
    # Setup, prepare, the runs and cleanup in hyperfine's order, each with
    # its benchmark's value, through -S sh.
    log = os.path.join(work, "order.log")
    rc, out, err = bench(EV + ["-S", "sh", "-r", "2", "-w", "1", "-P", "n", "1", "2",
                               "--setup", f"echo setup {{n}} >> {log}",
                               "--prepare", f"echo prepare {{n}} >> {log}",
                               "--cleanup", f"echo cleanup {{n}} >> {log}",
                               f"echo run {{n}} >> {log}"])
    want = []
    for n in (1, 2):
        want += [f"setup {n}"] + [f"prepare {n}", f"run {n}"] * 3 + [f"cleanup {n}"]
    got = open(log).read().split("\n")[:-1] if os.path.exists(log) else []
    if rc != 0 or got != want:
        fail(f"--setup/--prepare/--cleanup with -S sh: exit {rc} {err}\n{got}\nwanted {want}")

    # Without -S: no shell; {NAME} is substituted before the split.
    rc, out, err = bench(EV + ["-r", "1", "-L", "f", "a b,c", "--setup", "touch '{f}.tmp'",
                               "--cleanup", "rm '{f}.tmp'", "test -e '{f}.tmp'"])
    if rc != 0 or sorted(os.listdir(work)) != ["order.log"]:
        fail(f"--setup/--cleanup without a shell: exit {rc} {err}, left {os.listdir(work)}")
    if "Benchmark 1: test -e 'a b.tmp'\n" not in out:
        fail(f"the substituted command is not the report's:\n{out}")

    # --cleanup runs after a failed run too; its failure is an error.
    rc, _, err = bench(EV + ["-r", "1", "--cleanup", "touch cleaned", "false"])
    if rc != 1 or not os.path.exists(os.path.join(work, "cleaned")):
        fail(f"--cleanup after a failed run: exit {rc}, {err}")
    rc, _, err = bench(EV + ["-r", "1", "--cleanup", "false", "true"])
    if rc != 1 or "--cleanup 'false' failed with exit status 1" not in err:
        fail(f"a failing --cleanup: exit {rc}, {err}")
    rc, _, err = bench(EV + ["-r", "1", "--setup", "false", "true"])
    if rc != 1 or "--setup 'false' failed with exit status 1" not in err:
        fail(f"a failing --setup: exit {rc}, {err}")

    # Commands without --, options after them, -n in order; -- as before.
    text = bench_json(["true", "-n", "named", "sleep 0.001"], "without --")
    if text is not None:
        got = [(r["command"], r["argv"]) for r in json.loads(text)["results"]]
        if got != [("named", ["true"]), ("sleep 0.001", ["sleep", "0.001"])]:
            fail(f"commands without --: {got}")
        if '"parameters"' in text:
            fail("a JSON result without parameters has a \"parameters\" key, as hyperfine's has not")
    rc, _, err = bench(EV + ["-r", "1", "--", "true", "-n"])
    if rc != 127 or "cannot run '-n'" not in err:
        fail(f"after --, '-n' is a command, which cannot run: exit {rc}, {err}")
    text = bench_json(["-n", "x", "--", "true"], "with --")
    if text is not None and [r["command"] for r in json.loads(text)["results"]] != ["x"]:
        fail(f"-n with --: {text}")

    # The parameters in the JSON (as hyperfine lays them out), CSV and Markdown.
    paths = {k: os.path.join(work, "e." + k) for k in ("json", "csv", "md")}
    rc, out, err = bench(EV + ["-r", "1", "-L", "a", "x,y\\,z", "-L", "b", "1,2",
                               "-n", "echo {b} {a}", "--export-json", paths["json"],
                               "--export-csv", paths["csv"], "--export-markdown", paths["md"],
                               "echo {a} {b}"])
    if rc != 0:
        fail(f"exports of a scan: exit {rc}, {err}")
    else:
        text = open(paths["json"]).read()
        res = json.loads(text)["results"]
        want = [{"a": "x", "b": "1"}, {"a": "y,z", "b": "1"}, {"a": "x", "b": "2"},
                {"a": "y,z", "b": "2"}]
        if [r["parameters"] for r in res] != want:
            fail(f"JSON parameters: {[r['parameters'] for r in res]}")
        if [r["command"] for r in res] != ["echo 1 x", "echo 1 y,z", "echo 2 x", "echo 2 y,z"]:
            fail(f"JSON commands (the -n names): {[r['command'] for r in res]}")
        if [r["argv"] for r in res][1] != ["echo", "y,z", "1"]:
            fail(f"JSON argv: {[r['argv'] for r in res]}")
        if '"parameters": {"a": "x", "b": "1"}' not in text:
            fail(f"the parameters are not one object of strings:\n{text}")
        rows = list(csv.reader(open(paths["csv"])))
        if rows[0][-2:] != ["parameter_a", "parameter_b"] or \
                [r[-2:] for r in rows[1:]] != [["x", "1"], ["y,z", "1"], ["x", "2"], ["y,z", "2"]]:
            fail(f"CSV parameter columns: {rows}")
        md = open(paths["md"]).read().split("\n")
        if not md[0].endswith(" {a} | {b} |") or not md[3].endswith(" y,z | 1 |") or \
                not md[3].startswith("| `echo 1 y,z` |"):
            fail(f"Markdown parameter columns:\n{md}")

    # A scan's progress line names each benchmark (-n substituted).
    rc, text = on_pty(EV + ["-r", "3", "-P", "n", "1", "2", "-n", "nap {n}", "sleep 0.0{n}"])
    if rc != 0 or "Benchmark 1/2: nap 1  run 1/3" not in text or \
            "Benchmark 2/2: nap 2  run" not in text:
        fail(f"the progress line of a scan: exit {rc}: {text!r}")


def check_untrusted_names():
    """A -n name and a parameter value are any bytes: escaped in the report
    and the Markdown (a control byte would drive the terminal, a line break
    end a line or a row), and the JSON and CSV stay UTF-8 with the same
    names."""
    paths = {k: os.path.join(work, "u." + k) for k in ("json", "csv", "md")}
    value = "e\x1b]0;title\x07\udcff"  # \udcff: the byte 0xff, not UTF-8
    args = [dkperf, "bench"] + EV + ["-r", "1", "-L", "v", value, "-n", "n\x1b[2J\r|{v}",
                                     "--export-json", paths["json"], "--export-csv",
                                     paths["csv"], "--export-markdown", paths["md"], "true"]
    p = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, env=env, cwd=work,
                       timeout=120)
    if p.returncode != 0:
        fail(f"a name with control bytes: exit {p.returncode}: {p.stderr!r}")
        return

    def raw_controls(b):
        return [c for c in b if (c < 0x20 and c != 0x0a) or c == 0x7f]

    def utf8(b, what):
        try:
            return b.decode()
        except UnicodeDecodeError as e:
            fail(f"{what} is not UTF-8 ({e}): {b!r}")
            return None

    if raw_controls(p.stdout) or utf8(p.stdout, "the report") is None or \
            b"Benchmark 1: n\\x1b[2J\\x0d|e\\x1b]0;title\\x07\\xff (v = e\\x1b" not in p.stdout:
        fail(f"the report does not escape the name:\n{p.stdout!r}")
    md = open(paths["md"], "rb").read()
    if raw_controls(md) or utf8(md, "the Markdown") is None or \
            b"| `n\\x1b[2J\\x0d\\|e\\x1b]0;title\\x07\\xff` |" not in md:
        fail(f"the Markdown does not escape the name:\n{md!r}")
    name = json.load(open(paths["json"]))["results"][0]["command"]
    text = utf8(open(paths["csv"], "rb").read(), "the CSV")
    if text is not None:
        rows = list(csv.reader(text.splitlines(keepends=True)))
        if rows[1][0] != name or rows[1][-1] != "e\x1b]0;title\x07\ufffd":
            fail(f"the CSV's name {rows[1][0]!r} and value {rows[1][-1]!r}, the JSON's {name!r}")

    # A long parameter name is whole in the CSV's header.
    long = "p" * 300
    rc, _, err = bench(EV + ["-r", "1", "-L", long, "1", "--export-csv", paths["csv"],
                             "echo {" + long + "}"])
    rows = list(csv.reader(open(paths["csv"]))) if rc == 0 else [[]]
    if rows[0][-1:] != ["parameter_" + long]:
        fail(f"a {len(long)}-byte parameter name in the CSV: exit {rc} {err}, {rows[0][-1:]}")


def check_errors():
    bad = [
        (["-P", "n", "3", "1", "echo {n}"], "-P n 3 1: empty parameter range"),
        (["-P", "n", "1", "3", "-D", "0", "echo {n}"], "-D 0: zero is not a valid parameter step"),
        (["-P", "n", "1", "3", "-D", "-1", "echo {n}"], "-D -1: the step must be above zero"),
        (["-P", "n", "1.5", "3", "echo {n}"], "a step size is required"),
        (["-P", "n", "a", "3", "echo {n}"], "-P n a 3: MIN 'a' is not a number"),
        (["-P", "n", "1", "3", "-D", "x", "echo {n}"], "-D x: STEP is not a number"),
        (["-P", "n", "1", "1000000", "echo {n}"], "parameter range is too large"),
        (["-P", "n", "1", "3", "echo {m}"], "-P n: no command, -n, --setup, --cleanup or --prepare says {n}"),
        (["-L", "n", "1,2", "-L", "n", "3", "echo {n}"], "-L n is given twice"),
        (["-P", "n", "1", "2", "-L", "m", "1", "echo {n}{m}"], "-P and -L cannot be used together"),
        (["-P", "n", "1", "2", "-P", "m", "1", "2", "echo {n}{m}"], "-P is given twice"),
        (["-D", "2", "echo"], "-D 2: a step for -P NAME MIN MAX, which is not given"),
        (["-L", "", "1", "echo"], "-L '': give a parameter name"),
        (["-L", "n"], "-L needs NAME VALUE,VALUE,..."),
        (["-P", "n", "1"], "-P needs NAME MIN MAX"),
        (["-n", "a", "-n", "b", "true"], "-n is given 2 times: at most once per command (1)"),
        (["-L", "n", "1,2", "-n", "a", "-n", "b", "-n", "c", "echo {n}"],
         "-n is given 3 times: give it once, or exactly 2 times"),
        (["-r", "3"], "no command"),
    ]
    for args, want in bad:
        rc, out, err = bench(EV + args)
        lines = err.strip("\n").split("\n")
        if rc != 2 or out != "" or len(lines) != 1 or want not in lines[0]:
            fail(f"dkperf bench {args}: exit {rc}, stdout {out!r}, stderr {err!r}; wanted exit "
                 f"2 and one line with {want!r}")


try:
    if vs_hyperfine:
        compare_with_hyperfine()
    else:
        check_runs_and_exports()
        check_untrusted_names()
        check_errors()
finally:
    shutil.rmtree(work, ignore_errors=True)
if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("ok")
