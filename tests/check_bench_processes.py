#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dk_bench_main measures each benchmark in --processes N fresh processes of
the program (tests/bench_processes_program.c): the combined results in JSON
and in the terminal block, the option and its variable, the worker variable
set by hand, a program that is no worker when run again, a worker that
crashes, a signal while workers run, and baselines on both sides.

usage: check_bench_processes.py BENCH_PROCESSES_PROGRAM
"""
import atexit
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

prog = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)  # on every exit, a failed check's too
failures = []
QUICK = ["--time", "0.05", "--warm-up", "0.01", "--results-dir", os.path.join(tmp, "results")]
VERDICTS = {"no change", "within noise", "improved", "regressed", "unresolved"}


def fail(what):
    failures.append(what)


# Under ASan (a -O0 build) the statistics take ~25 times as long: one --ab
# run of this script took 86 s there against 3.3 s in the plain build.
SLOW = 5 if "ASAN_OPTIONS" in os.environ else 1


def run(args, env=None, timeout=120):
    timeout *= SLOW
    e = {k: v for k, v in os.environ.items() if not k.startswith(("DKBENCH_", "BPP_"))}
    e.update(env or {})
    return subprocess.run([prog, *args], env=e, cwd=tmp, capture_output=True, text=True,
                          timeout=timeout)


def report(args, env=None, name="r.json"):
    """Run with --json; (process, document or None)."""
    path = os.path.join(tmp, name)
    p = run([*QUICK, "--json", path, *args], env)
    doc = None
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
        os.unlink(path)
    return p, doc


def results(doc):
    return {r["name"]: r for r in doc["results"]} if doc else {}


def check_processes(label, doc, want):
    rs = results(doc)
    if sorted(rs) != ["quick/a", "quick/b"]:
        fail(f"{label}: results {sorted(rs)}, expected quick/a and quick/b")
    for name, r in rs.items():
        if r.get("processes") != want:
            fail(f"{label}: {name}: processes {r.get('processes')}, expected {want}")
        for m in r["measures"]:
            if not m["available"]:
                continue
            pm = m.get("processes")
            if want < 2:
                if pm is not None:
                    fail(f"{label}: {name}/{m['name']}: processes {pm}, expected null")
                continue
            est = (pm or {}).get("estimates") or []
            if len(est) != want or not all(isinstance(x, (int, float)) and math.isfinite(x)
                                           for x in est):
                fail(f"{label}: {name}/{m['name']}: estimates {est}, expected {want} finite")
                continue
            s = m["slope"]
            mean = sum(est) / len(est)
            if not math.isclose(s["point"], mean, rel_tol=1e-9, abs_tol=1e-12):
                fail(f"{label}: {name}/{m['name']}: slope {s['point']} is not the mean "
                     f"{mean} of the processes' estimates")
            if m["name"] == "time" and not s["lo"] < s["point"] < s["hi"]:
                fail(f"{label}: {name}/{m['name']}: not lo < point < hi: {s}")
            res = pm.get("resolution")
            if m["name"] == "time" and not (isinstance(res, (int, float)) and res > 0):
                fail(f"{label}: {name}/{m['name']}: processes.resolution {res}, expected > 0")


# 1. By default 10 processes a benchmark; --processes N, DKBENCH_PROCESSES.
path = os.path.join(tmp, "d.json")
p = run([*QUICK, "--json", path, "quick"])
if p.returncode != 0:
    fail(f"default run: exit {p.returncode}\n{p.stderr}")
else:
    with open(path) as f:
        check_processes("default", json.load(f), 10)
    lines = [ln for ln in p.stdout.splitlines() if ln.strip().startswith("processes:")]
    if len(lines) != 2 or not all(" 10, each estimated alone" in ln for ln in lines):
        fail(f"default run: 'processes:' lines {lines}, expected one of 10 per benchmark")
    said = [ln for ln in p.stdout.splitlines() if ln.strip().startswith("resolves:")]
    if len(said) != 2 or not all("between two runs like this one" in ln for ln in said):
        fail(f"default run: 'resolves:' lines {said}, expected one per benchmark")
    os.unlink(path)
for label, args, env, want in (("--processes 3", ["--processes", "3"], None, 3),
                               ("DKBENCH_PROCESSES=2", [], {"DKBENCH_PROCESSES": "2"}, 2),
                               ("--processes 3 over DKBENCH_PROCESSES=2", ["--processes", "3"],
                                {"DKBENCH_PROCESSES": "2"}, 3)):
    p, doc = report([*args, "quick"], env)
    if p.returncode != 0:
        fail(f"{label}: exit {p.returncode}\n{p.stderr}")
    check_processes(label, doc, want)

# 2. Out of range: one line naming the option and the range.
for v in ("0", "-1", "abc", "1001"):
    p = run(["--processes", v, "quick"])
    err = p.stderr.strip().splitlines()
    if p.returncode != 2 or len(err) != 1 or "--processes" not in err[0] or \
            "from 1 to 1000" not in err[0]:
        fail(f"--processes {v}: exit {p.returncode}, stderr {err}: expected exit 2 and one "
             "line naming --processes and its range")

# 3. --processes 1: measured in this process, and said so.
p, doc = report(["--processes", "1", "quick"])
if p.returncode != 0:
    fail(f"--processes 1: exit {p.returncode}\n{p.stderr}")
check_processes("--processes 1", doc, 1)
for name, r in results(doc).items():
    if r.get("one_process") != "--processes 1":
        fail(f"--processes 1: {name}: one_process {r.get('one_process')!r}")
if p.stdout.count("the intervals describe this process only") != 2:
    fail(f"--processes 1: the terminal blocks do not say so:\n{p.stdout}")

# 4. DKBENCH_WORKER set by hand: refused, naming who sets it.
for v in ("x", "3:0:1:0:0", "99:0:1:0:1"):
    p = run(["quick"], {"DKBENCH_WORKER": v})
    err = p.stderr.strip().splitlines()
    if p.returncode != 2 or len(err) != 1 or "DKBENCH_WORKER" not in err[0] or \
            "set only by a benchmark program" not in err[0]:
        fail(f"DKBENCH_WORKER={v}: exit {p.returncode}, stderr {err}: expected exit 2 and one "
             "line saying a benchmark program sets it")

# 5. A program that does not act as a worker when run again: measured here.
p, doc = report(["quick"], {"BPP_NOT_A_WORKER": "1"})
if p.returncode != 0:
    fail(f"no worker: exit {p.returncode}\n{p.stderr}")
if p.stderr.count("measuring within this one process") != 1:
    fail(f"no worker: stderr does not say once that it measures in one process:\n{p.stderr}")
check_processes("no worker", doc, 1)

# 6. A body that crashes in a worker: that benchmark fails, named with the
# process and the signal; the others are reported; no core is left.
# Under AddressSanitizer the worker's SIGSEGV is its report and an abort
# (abort_on_error): the signal is let through to end the worker as is.
no_segv = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0"}
for sig in (signal.SIGSEGV, signal.SIGABRT):
    p, doc = report(["^(quick/a|crash)$"], {"BPP_CRASH": str(int(sig)), **no_segv},
                    name="c.json")
    label = f"crash by {sig.name}"
    err = p.stderr
    if p.returncode != 1:
        fail(f"{label}: exit {p.returncode}, expected 1\n{err}")
    line = [ln for ln in err.splitlines() if "crash" in ln and "process 1 of 10" in ln]
    if len(line) != 1 or f"signal {int(sig)}" not in line[0]:
        fail(f"{label}: stderr does not name the benchmark, the process and the signal:\n{err}")
    if sorted(results(doc)) != ["quick/a"]:
        fail(f"{label}: reported {sorted(results(doc))}, expected quick/a alone")
# A worker's core goes where a crash of the program itself would (its
# working folder, here tmp): with the limits ctest gives, none.
left = [f for f in os.listdir(tmp) if f.startswith("core")]
if left:
    fail(f"a crashing worker left {left} in its working folder")
    for f in left:
        os.unlink(os.path.join(tmp, f))


# 7. SIGINT to the process group while the workers run: the program ends
# by it, writes no report, and no worker is left.
def processes_of(exe):
    pids = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and os.readlink(f"/proc/{d}/exe") == exe:
                pids.append(int(d))
        except OSError:
            pass
    return pids


def children(pid):
    got = []
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                if d.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    got.append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    return got


sig_report = os.path.join(tmp, "sig.json")
e = {k: v for k, v in os.environ.items() if not k.startswith(("DKBENCH_", "BPP_"))}
e["BPP_SLOW"] = "1"
p = subprocess.Popen([prog, "--time", "5", "--warm-up", "0.5", "--results-dir",
                      os.path.join(tmp, "results"), "--json", sig_report, "slow"],
                     env=e, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                     start_new_session=True)
end = time.monotonic() + 20
while time.monotonic() < end and p.poll() is None and not children(p.pid):
    time.sleep(0.01)
if p.poll() is not None or not children(p.pid):
    fail("SIGINT: no worker process started")
    p.kill()
    p.communicate()
else:
    time.sleep(0.2)  # into the slow body
    os.killpg(p.pid, signal.SIGINT)
    try:
        _, err = p.communicate(timeout=30)
        if p.returncode != -signal.SIGINT:
            fail(f"SIGINT: ended with {p.returncode}, expected to end by SIGINT\n"
                 + err.decode(errors="replace"))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        fail("SIGINT: still running 30 s after the signal")
    if os.path.exists(sig_report):
        fail("SIGINT: a report was written of a run cut short")
        os.unlink(sig_report)
    end = time.monotonic() + 5
    while time.monotonic() < end and processes_of(prog):
        time.sleep(0.05)
    if processes_of(prog):
        fail(f"SIGINT: left running: {processes_of(prog)}")
        for pid in processes_of(prog):
            os.kill(pid, signal.SIGKILL)

# A run of "slow" whose worker sleeps a minute in its body: the program,
# once a worker of it is inside that sleep, or None after saying why not.
e["BPP_HANG"] = "60"
del e["BPP_SLOW"]


def in_a_long_body(what, stderr):
    p = subprocess.Popen([prog, "--time", "2", "--processes", "2", "--results-dir",
                          os.path.join(tmp, "results"), "slow"],
                         env=e, cwd=tmp, stdout=subprocess.DEVNULL, stderr=stderr,
                         start_new_session=True)
    end = time.monotonic() + 20
    while time.monotonic() < end and p.poll() is None and not children(p.pid):
        time.sleep(0.01)
    if p.poll() is not None or not children(p.pid):
        fail(f"{what}: no worker process started")
        p.kill()
        p.communicate()
        return None
    time.sleep(0.5)  # into the body's sleep
    return p


def none_left(what, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end and processes_of(prog):
        time.sleep(0.05)
    if processes_of(prog):
        fail(f"{what}: left running: {processes_of(prog)}")
        for pid in processes_of(prog):
            os.kill(pid, signal.SIGKILL)


# SIGTERM to the program alone (not its group): the signal is passed on to
# the worker, the program ends by it in far less than the minute, and no
# worker is left.
p = in_a_long_body("SIGTERM", subprocess.PIPE)
if p is not None:
    p.send_signal(signal.SIGTERM)
    try:
        _, err = p.communicate(timeout=30)
        if p.returncode != -signal.SIGTERM:
            fail(f"SIGTERM to the program alone: ended with {p.returncode}, expected to end "
                 "by SIGTERM\n" + err.decode(errors="replace"))
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        fail("SIGTERM to the program alone: still running 30 s after the signal (its "
             "worker was not told)")
    none_left("SIGTERM to the program alone", 5)

# SIGKILL to the program (Linux): its worker is ended by the kernel's
# signal on its parent's death, not left to finish a minute-long body.
if sys.platform.startswith("linux"):
    p = in_a_long_body("SIGKILL", subprocess.DEVNULL)
    if p is not None:
        p.send_signal(signal.SIGKILL)
        p.communicate()
        none_left("SIGKILL to the program: its workers", 10)

# A body that leaves a child process behind it, which holds the worker's
# pipe open for a minute: the worker's end is its exit, not the pipe's.
e = {k: v for k, v in os.environ.items() if not k.startswith(("DKBENCH_", "BPP_"))}
e["BPP_FORK"] = "60"
p = subprocess.Popen([prog, *QUICK, "--processes", "2", "forks"], env=e, cwd=tmp,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
try:
    p.wait(timeout=30)  # not for the output: the children left hold it too
    if p.returncode != 0:
        fail(f"a worker's child holding its pipe: exit {p.returncode}")
except subprocess.TimeoutExpired:
    p.kill()
    fail("a worker's child holding its pipe: still running after 30 s (waits for the child)")
try:
    os.killpg(p.pid, signal.SIGKILL)  # the children left sleeping
except ProcessLookupError:
    pass
p.communicate()


# 8. Baselines: processes on both sides compare the processes' estimates;
# a baseline of one process compares the samples, and says so.
def changes(doc):
    return [(r["name"], m["name"], m["change"]) for r in doc["results"]
            for m in r["measures"] if m.get("change") is not None] if doc else []


p = run([*QUICK, "--save-baseline", "ten", "quick/a"])
if p.returncode != 0:
    fail(f"--save-baseline ten: exit {p.returncode}\n{p.stderr}")
p, doc = report(["--baseline", "ten", "quick/a"])
ch = changes(doc)
if p.returncode != 0 or not any(m == "time" for _, m, _ in ch):
    fail(f"--baseline ten: exit {p.returncode}, changes {ch}\n{p.stderr}")
for name, m, c in ch:
    if c.get("basis") != "processes" or c.get("verdict") not in VERDICTS:
        fail(f"--baseline ten: {name}/{m}: change {c}")
    if m == "time" and not c.get("resolution", 0) > 0:
        fail(f"--baseline ten: {name}/time: resolution {c.get('resolution')}, expected > 0")
if not any(ln.strip().startswith("change (time):") and ", resolves +-" in ln
           for ln in p.stdout.splitlines()):
    fail(f"--baseline ten: no time change line saying what it resolves:\n{p.stdout}")
p = run([*QUICK, "--processes", "1", "--save-baseline", "one", "quick/a"])
if p.returncode != 0:
    fail(f"--save-baseline one --processes 1: exit {p.returncode}\n{p.stderr}")
p, doc = report(["--baseline", "one", "quick/a"])
ch = changes(doc)
if p.returncode != 0 or not any(m == "time" for _, m, _ in ch):
    fail(f"--baseline one: exit {p.returncode}, changes {ch}\n{p.stderr}")
for name, m, c in ch:
    if c.get("basis") != "samples" or c.get("verdict") not in VERDICTS:
        fail(f"--baseline one: {name}/{m}: change {c}")
if not any(ln.strip().startswith("change (time):") and ln.endswith(", within one process")
           for ln in p.stdout.splitlines()):
    fail(f"--baseline one: no time change line saying 'within one process':\n{p.stdout}")

# 9. --ab with an external body among loop bodies: the loop bodies are
# compared in pairs; the external body, measured here, is said not to be.
ext = {"BPP_EXTERNAL": "1"}
p = run([*QUICK, "--processes", "2", "--save-build", "me", "quick/a"], ext)
if p.returncode != 0:
    fail(f"--save-build me: exit {p.returncode}\n{p.stderr}")
p, doc = report(["--processes", "2", "--ab", "me", "^(quick/a|external)$"], ext)
rs = results(doc)
if p.returncode != 0 or sorted(rs) != ["external", "quick/a"]:
    fail(f"--ab with an external body: exit {p.returncode}, results {sorted(rs)}\n{p.stderr}")
if not any(c.get("basis") == "pairs" for _, _, c in changes(doc)):
    fail(f"--ab with an external body: quick/a not compared in pairs: {changes(doc)}")
said = [ln for ln in p.stderr.splitlines() if "external: not compared with" in ln]
if len(said) != 1 or "external body" not in said[0]:
    fail(f"--ab with an external body: stderr does not say once that it is not compared:\n"
         f"{p.stderr}")

# 9b. --benchmark_min_time=Nx on an external body: N runs of one iteration,
# not the time budget's worth.
p, doc = report(["--benchmark_min_time=5x", "^external$"], ext)
r = results(doc).get("external", {})
if p.returncode != 0 or r.get("iterations") != [1] * 5:
    fail(f"--benchmark_min_time=5x, external body: exit {p.returncode}, iterations "
         f"{str(r.get('iterations'))[:80]}, not five of 1\n{p.stderr}")

# 9c. --benchmark_repetitions on an external body: its runs are the
# processes; one line says the repetitions are not separate entries.
p, doc = report(["--benchmark_repetitions=3", "--benchmark_min_time=4x", "^external$"], ext)
said = [ln for ln in p.stderr.splitlines() if "--benchmark_repetitions" in ln]
if p.returncode != 0 or len(said) != 1 or "external body" not in said[0]:
    fail(f"--benchmark_repetitions, external body: exit {p.returncode}, stderr {p.stderr!r}")

# 10. A body too slow for its share: fewer processes (3 here: 20 samples of
# 10 ms take 0.2 s a process, against 3 budgets of 0.06 s), said in the
# stop reason; a count given by --processes is kept.
slow_env = {"BPP_SLOW": "1"}
p, doc = report(["slow"], slow_env)
r = results(doc).get("slow", {})
if p.returncode != 0 or r.get("processes") != 3 or "a slow body" not in r.get("stop_reason", ""):
    fail(f"slow body: exit {p.returncode}, processes {r.get('processes')}, stop reason "
         f"{r.get('stop_reason')!r}: expected 3 processes and 'a slow body'\n{p.stderr}")
p, doc = report(["--processes", "4", "slow"], slow_env)
r = results(doc).get("slow", {})
if p.returncode != 0 or r.get("processes") != 4 or "a slow body" in r.get("stop_reason", ""):
    fail(f"slow body, --processes 4: exit {p.returncode}, processes {r.get('processes')}, "
         f"stop reason {r.get('stop_reason')!r}\n{p.stderr}")

# 10b. A --compare group of slow bodies is cut the same way: 3 samples of
# the two interleaved take 60 ms and more a process, against 3 budgets of
# 0.06 s each.
p, doc = report(["--compare", "--samples", "3", "^sleepy/"], slow_env)
for name in ("sleepy/a", "sleepy/b"):
    r = results(doc).get(name, {})
    if (p.returncode != 0 or not 3 <= (r.get("processes") or 0) < 10
            or "a slow body" not in r.get("stop_reason", "") or not r.get("measure_s", 0) > 0):
        fail(f"slow --compare group: {name}: exit {p.returncode}, processes "
             f"{r.get('processes')}, measure_s {r.get('measure_s')}, stop reason "
             f"{r.get('stop_reason')!r}: expected 3 to 9 processes and 'a slow body'\n{p.stderr}")

# 11. Many processes: the pooled samples (500 processes of 20 or more, some
# 10,000) are fitted in memory linear in them (a Theil-Sen fit of all
# their pairs took 400 MB and more).
import resource  # noqa: E402
p = run([*QUICK, "--processes", "500", "-q", "quick/a"], timeout=300)
rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
if p.returncode != 0 or rss_kb > 150 * 1024:
    fail(f"--processes 500: exit {p.returncode}, largest resident set of a program run here "
         f"{rss_kb} KB, expected under 150 MB\n{p.stderr}")

for f in failures:
    print("FAIL:", f, file=sys.stderr)
if not failures:
    print("each benchmark measured in fresh processes, combined, compared and reported")
sys.exit(1 if failures else 0)
