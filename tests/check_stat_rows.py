#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf stat's breakdowns: -A, --per-core, --per-level and -C, in the human,
CSV and JSON reports, on Linux (software events) and on every simulated chip
(per-CPU counts, P and E totals that add up to the system total, -x's run
times, a command's own P/E split without root), and their errors.

usage: check_stat_rows.py DKPERF SIM_ROOT WORK_PROGRAM CHIP...
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

dkperf, sim_root, work = sys.argv[1:4]
chips = sys.argv[4:]

# P and E cores of each simulated chip (tests/sim/README.md).
LAYOUTS = {"a14": (4, 4), "a15": (4, 4), "a16": (2, 4), "as1": (4, 4), "as2": (2, 4),
           "as3": (6, 6), "as4": (4, 6), "as4-1": (10, 4), "as4-2": (12, 4), "as5": (4, 6),
           "as5-2": (10, 4), "haswell": (8, 0)}

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, file=sys.stderr)


def run(args, env=None, sim=False):
    e = dict(os.environ)
    e.pop("DKPERF_FRAMEWORK_ROOT", None)
    if sim:
        e["DKPERF_FRAMEWORK_ROOT"] = sim_root
    e.update(env or {})
    p = subprocess.run([dkperf, "stat"] + args, capture_output=True, text=True, env=e,
                       timeout=120)
    return p.returncode, p.stderr


def online_cpus():
    text = open("/sys/devices/system/cpu/online").read().strip()
    cpus = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus += range(int(lo), int(hi or lo) + 1)
    return cpus


def core_id(cpu):
    try:
        return int(open("/sys/devices/system/cpu/cpu%d/topology/core_id" % cpu).read())
    except OSError:
        return -1


def json_lines(err, what):
    """Each line of err as JSON (-I --json: one object per interval, then
    the report); [] and a failure when a line is not JSON."""
    try:
        return [json.loads(l) for l in err.splitlines()]
    except ValueError:
        fail("%s: a line is not JSON: %r" % (what, err))
        return []


def as_json(rc, err, what):
    if rc != 0:
        fail("%s: exit %d: %s" % (what, rc, err))
        return None
    try:
        return json.loads(err)
    except ValueError:
        fail("%s: not JSON: %r" % (what, err))
        return None


def totals(report):
    return {e["name"]: e["value"] for e in report["events"]}


def check_rows_add_up(report, what):
    """Rows of each event add up to its total."""
    sums = {}
    for r in report["rows"]:
        if r["value"] is not None:
            sums[r["event"]] = sums.get(r["event"], 0) + r["value"]
    for name, total in totals(report).items():
        if total is None:
            continue
        if abs(sums.get(name, -1) - total) > 1:
            fail("%s: the rows of %s add up to %s, the total is %s" %
                 (what, name, sums.get(name), total))


def human_rows(text, event):
    """(label, count) of each human row of event."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"^(\S+)\s+(?:(\d+)\s+)?([\d,.]+)\s+(?:msec\s+)?(\S+)$", line)
        if m and m.group(4) == event:
            rows.append((m.group(1), float(m.group(3).replace(",", ""))))
    return rows


# ---- Linux: software events on every online CPU ------------------------------
if sys.platform.startswith("linux"):
    cpus = online_cpus()
    rc, err = run(["-a", "-A", "--json", "-e", "cpu-clock", "--", "sleep", "0.05"])
    rep = as_json(rc, err, "linux -a -A --json")
    if rep is not None:
        rows = rep.get("rows", [])
        if rep.get("aggregation") != "cpu" or sorted(r["cpu"] for r in rows) != cpus:
            fail("linux -A --json: rows %r, online CPUs %r" % (rows, cpus))
        for r in rows:
            if r["core"] != core_id(r["cpu"]) or r["label"] != "CPU%d" % r["cpu"]:
                fail("linux -A --json: row %r, sysfs core %d" % (r, core_id(r["cpu"])))
            # Each CPU's clock ran for the whole time the command did.
            if r["value"] < rep["elapsed_ns"] * 0.5:
                fail("linux -A: CPU %d counted %d ns of %d" % (r["cpu"], r["value"],
                                                               rep["elapsed_ns"]))
            # And its counter ran that long: its own run time, not a share
            # of every CPU's.
            if r.get("running_fraction") != 1 or not \
                    r["value"] * 0.9 - 1e6 <= r.get("run_ns", -1) <= r["value"] * 1.1 + 1e6:
                fail("linux -A --json: CPU %d counted %d ns and ran %r ns (%r)" %
                     (r["cpu"], r["value"], r.get("run_ns"), r.get("running_fraction")))
        check_rows_add_up(rep, "linux -A --json")

    rc, err = run(["-a", "-A", "-e", "cpu-clock,task-clock", "--", "sleep", "0.05"])
    if rc != 0:
        fail("linux -a -A: exit %d: %s" % (rc, err))
    for ev in ("cpu-clock", "task-clock"):
        labels = [label for label, _ in human_rows(err, ev)]
        if labels != ["CPU%d" % c for c in cpus]:
            fail("linux -a -A human, %s: rows %r\n%s" % (ev, labels, err))

    rc, err = run(["-a", "-A", "-x", ",", "-e", "cpu-clock", "--", "sleep", "0.05"])
    lines = [l.split(",") for l in err.splitlines() if l]
    if rc != 0 or [l[0] for l in lines] != ["CPU%d" % c for c in cpus] or \
            any(l[2] != "msec" or l[3] != "cpu-clock" or float(l[1]) <= 0 for l in lines):
        fail("linux -a -A -x,: exit %d: %r" % (rc, err))

    rc, err = run(["-a", "--per-core", "-x", ";", "-e", "cpu-clock", "--", "true"])
    labels = sorted(l.split(";")[0] for l in err.splitlines() if l)
    # perf's label: socket, die (one per package here), core.
    want = sorted(set("S%d-D0-C%d" % (max(0, int(open(
        "/sys/devices/system/cpu/cpu%d/topology/physical_package_id" % c).read())), core_id(c))
        for c in cpus))
    if rc != 0 or labels != want:
        fail("linux --per-core: exit %d, rows %r, want %r: %s" % (rc, labels, want, err))

    rc, err = run(["-a", "--per-level", "--json", "-e", "cpu-clock", "--", "true"])
    rep = as_json(rc, err, "linux -a --per-level --json")
    if rep is not None:
        if [(r["label"], r["cpus"]) for r in rep["rows"]] != [("all", len(cpus))]:
            fail("linux --per-level: rows %r" % rep["rows"])
        check_rows_add_up(rep, "linux --per-level")

    # -C 0: one CPU's clock, not every CPU's.
    rc, err = run(["-C", "0", "--json", "-e", "cpu-clock", "--", "sleep", "0.1"])
    rep = as_json(rc, err, "linux -C 0 --json")
    if rep is not None:
        v = totals(rep)["cpu-clock"]
        if rep.get("cpus") != [0] or not rep["scope"].startswith("CPUs 0 of"):
            fail("linux -C 0: cpus %r, scope %r" % (rep.get("cpus"), rep["scope"]))
        if not (rep["elapsed_ns"] * 0.5 <= v <= rep["elapsed_ns"] * 1.5):
            fail("linux -C 0: %d ns of cpu-clock in %d ns" % (v, rep["elapsed_ns"]))
    # -C 0 -I: each interval counts CPU 0 alone, as the total does, and the
    # intervals add up to the total.
    rc, err = run(["-C", "0", "-I", "50", "--json", "-e", "cpu-clock", "--", "sleep", "0.3"])
    objs = json_lines(err, "linux -C 0 -I 50 --json")
    if rc != 0 or len(objs) < 3:
        fail("linux -C 0 -I 50 --json: exit %d: %r" % (rc, err))
    else:
        ivs, rep = objs[:-1], objs[-1]
        total = totals(rep)["cpu-clock"]
        got = sum(o["events"][0]["value"] for o in ivs)
        if abs(got - total) > 1:
            fail("linux -C 0 -I 50: the intervals add up to %d, the total is %d" % (got, total))
        # A whole interval only: the last one may be a fraction of a
        # millisecond, less than a loaded machine's delay between a read
        # and its time stamp.
        for o in ivs:
            if o["interval_ns"] >= 20000000 and o["events"][0]["value"] > o["interval_ns"] * 1.5:
                fail("linux -C 0 -I 50: %d ns of one CPU's clock in an interval of %d ns" %
                     (o["events"][0]["value"], o["interval_ns"]))
    # -A -I: each interval prints one row per CPU and event (not the
    # totals), and each CPU's intervals add up to its row in the report.
    # With -C 0 the same, for CPU 0 alone (its rows and the restricted
    # totals come from one read of the per-CPU counts).
    for args, want in ((["-a"], cpus), (["-C", "0"], [0])):
        what = "linux %s -A -I 50 --json" % " ".join(args)
        rc, err = run(args + ["-A", "-I", "50", "--json", "-e", "cpu-clock,task-clock", "--",
                              "sleep", "0.3"])
        objs = json_lines(err, what)
        if rc != 0 or len(objs) < 3:
            fail("%s: exit %d: %r" % (what, rc, err))
            continue
        ivs, rep = objs[:-1], objs[-1]
        sums = {}
        for o in ivs:
            keys = sorted((r["cpu"], r["event"]) for r in o.get("rows", []))
            if o.get("aggregation") != "cpu" or "events" in o or \
                    keys != sorted((c, e) for c in want for e in ("cpu-clock", "task-clock")):
                fail("%s: an interval's rows are %r" % (what, o))
                break
            for r in o["rows"]:
                sums[(r["cpu"], r["event"])] = sums.get((r["cpu"], r["event"]), 0) + r["value"]
        if sorted(r["cpu"] for r in rep.get("rows", [])) != sorted(c for c in want for _ in "ab"):
            fail("%s: the report's rows are %r" % (what, rep.get("rows")))
        for r in rep.get("rows", []):
            if sums.get((r["cpu"], r["event"])) != r["value"]:
                fail("%s: CPU %d's %s intervals add up to %r, its row is %d" %
                     (what, r["cpu"], r["event"], sums.get((r["cpu"], r["event"])), r["value"]))
    rc, err = run(["-a", "-A", "-I", "50", "-e", "cpu-clock", "--", "sleep", "0.2"])
    ivrows = [l.split() for l in err.splitlines() if re.match(r"^\s+\d+\.\d{9} CPU\d+ ", l)]
    if rc != 0 or not err.startswith("#           time CPU ") or len(ivrows) < 2 * len(cpus) or \
            any(l[3:] != ["msec", "cpu-clock"] for l in ivrows):
        fail("linux -a -A -I 50 human: exit %d: %r" % (rc, err))
    rc, err = run(["-a", "--per-core", "-I", "50", "-x", ",", "-e", "cpu-clock", "--",
                   "sleep", "0.2"])
    # perf's layout: time, core, cpus, value, unit, event, run time, percent,
    # metric, metric unit; the intervals alone.
    ivrows = [l.split(",") for l in err.splitlines() if re.match(r"^ *\d+\.\d{9},", l)]
    if rc != 0 or len(ivrows) < 2 or len(ivrows) != len(err.splitlines()) or \
            any(len(l) != 10 or not l[1].startswith("S") or l[4] != "msec" or
                l[5] != "cpu-clock" or l[9] != "CPUs utilized" for l in ivrows):
        fail("linux -a --per-core -I 50 -x,: exit %d: %r" % (rc, err))
    rc, err = run(["-C", "0", "-A", "-x", ",", "-e", "cpu-clock", "--", "true"])
    if rc != 0 or [l.split(",")[0] for l in err.splitlines() if l] != ["CPU0"]:
        fail("linux -C 0 -A: exit %d: %r" % (rc, err))

    # Few file descriptors for every CPU's counters: one line that says to
    # raise the limit.
    import resource

    def low_files():
        resource.setrlimit(resource.RLIMIT_NOFILE, (8, 8))
    p = subprocess.run([dkperf, "stat", "-a", "-A", "-e",
                        "task-clock,context-switches,page-faults,cpu-clock", "--", "true"],
                       capture_output=True, text=True, preexec_fn=low_files, timeout=120)
    if p.returncode != 1 or len(p.stderr.splitlines()) != 1 or "ulimit -n" not in p.stderr:
        fail("linux -a -A, ulimit -n 8: exit %d, %r" % (p.returncode, p.stderr))

    # A hybrid machine (a sysfs of two core PMUs, cpu_core on CPU 0 and
    # cpu_atom on the rest): levels P and E.
    if len(cpus) > 1:
        with tempfile.TemporaryDirectory() as fake:
            for pmu, typ, listed in (("cpu_core", "4", "%d" % cpus[0]),
                                     ("cpu_atom", "10", ",".join(str(c) for c in cpus[1:]))):
                os.mkdir(os.path.join(fake, pmu))
                open(os.path.join(fake, pmu, "type"), "w").write(typ + "\n")
                open(os.path.join(fake, pmu, "cpus"), "w").write(listed + "\n")
            hybrid = {"DKPERF_SYSFS_EVENT_SOURCE": fake}
            rc, err = run(["-a", "--per-level", "--json", "-e", "cpu-clock", "--", "true"], hybrid)
            rep = as_json(rc, err, "linux hybrid --per-level")
            if rep is not None:
                got = [(r["label"], r["cpus"]) for r in rep["rows"]]
                if got != [("P", 1), ("E", len(cpus) - 1)]:
                    fail("linux hybrid --per-level: rows %r" % got)
                check_rows_add_up(rep, "linux hybrid --per-level")
            rc, err = run(["-a", "-A", "--json", "-e", "cpu-clock", "--", "true"], hybrid)
            rep = as_json(rc, err, "linux hybrid -A")
            if rep is not None:
                levels = [(r["cpu"], r["level"]) for r in rep["rows"]]
                if levels != [(c, "P" if c == cpus[0] else "E") for c in cpus]:
                    fail("linux hybrid -A: levels %r" % levels)

# ---- errors: one line, exit 2, nothing run -----------------------------------
with tempfile.TemporaryDirectory() as tmp:
    ran = os.path.join(tmp, "ran")
    cases = [(["-C", "0,4095"], "CPU 4095 does not exist"),
             (["-C", "3-1"], "-C 3-1: give CPU numbers"),
             (["-C", "x"], "-C x: give CPU numbers"),
             (["-A"], "-A breaks down the counts of every CPU: add -a"),
             (["--per-core"], "--per-core breaks down the counts of every CPU: add -a"),
             (["-a", "-A", "--per-level"], "exclude each other")]
    if sys.platform.startswith("linux"):
        cases.append((["--per-level"], "--per-level without -a"))
    for args, words in cases:
        rc, err = run(args + ["-e", "task-clock" if sys.platform.startswith("linux") else
                              "instructions", "--", "touch", ran])
        lines = err.splitlines()
        if rc != 2 or len(lines) != 1 or words not in err or os.path.exists(ran):
            fail("%s: exit %d, %r (wanted one line with %r, nothing run)" %
                 (" ".join(args), rc, err, words))

    # Attached without -a, nothing is counted per CPU, nor a thread per level:
    # each is refused, not ignored (-a -p and -C -p count every CPU, and -p
    # --per-level splits a process by level where the OS does:
    # check_stat_attach.py).
    me = str(os.getpid())
    for args in (["-t", me, "-C", "0"], ["-p", me, "-A"],
                 ["-p", me, "--per-core"], ["-t", me, "--per-level"]):
        for sim in (False, True):
            rc, err = run(args + ["--timeout", "50", "-e", "instructions"], sim=sim,
                          env={"DKPERF_SIM_PRIVILEGED": "0"})
            if rc != 2 or len(err.splitlines()) != 1 or "cannot be used" not in err:
                fail("%s%s: exit %d, %r (wanted a usage error)" %
                     (" ".join(args), " (sim)" if sim else "", rc, err))

    # On the sim an unknown CPU gives the counters back (force_all_ctrs 0).
    state = os.path.join(tmp, "state")
    rc, err = run(["-C", "0,8", "--", "touch", ran], sim=True,
                  env={"DKPERF_SIM_STATE": state, "DKPERF_SIM_CPU": "a14"})
    if rc != 2 or "CPU 8 does not exist" not in err or "CPUs 0-7" not in err:
        fail("sim -C 0,8 on a14: exit %d, %r" % (rc, err))
    st = open(state).read() if os.path.exists(state) else ""
    if "force_all_ctrs 0" not in st or "counting 0x0" not in st or os.path.exists(ran):
        fail("sim -C 0,8: counters left taken or command run: %r" % st)

# ---- the sim, every chip ------------------------------------------------------
burn = [work, "--work-only", "--burn-ms", "150"]
for chip in chips:
    p, e = LAYOUTS[chip]
    env = {"DKPERF_SIM_CPU": chip}
    what = "sim %s" % chip

    rc, err = run(["-a", "-A", "--json", "-e", "instructions,cycles", "--"] + burn, env, True)
    rep = as_json(rc, err, what + " -a -A --json")
    if rep is not None:
        rows = rep["rows"]
        ids = sorted(set(r["cpu"] for r in rows))
        if ids != list(range(p + e)):
            fail("%s -A: CPUs %r, the layout has %d" % (what, ids, p + e))
        levels = {r["cpu"]: r["level"] for r in rows}
        want = {c: ("E" if c < e else "P") if e else "all" for c in range(p + e)}
        if levels != want:
            fail("%s -A: levels %r, want %r" % (what, levels, want))
        cycles = [r["value"] for r in rows if r["event"] == "cycles"]
        if len(set(cycles)) < 2 or max(cycles) == 0:
            fail("%s -A: per-CPU cycles do not differ: %r" % (what, cycles))
        check_rows_add_up(rep, what + " -A")

    # -x, rows with perf's run time and percentage: kpc never time-shares,
    # so every CPU ran the whole time the group was enabled (at least the
    # command's 150 ms, at most the whole of dkperf's run).
    t0 = time.monotonic()
    rc, err = run(["-a", "-A", "-x", ",", "-e", "instructions,cycles", "--"] + burn, env, True)
    wall_ns = (time.monotonic() - t0) * 1e9
    lines = [l.split(",") for l in err.splitlines() if l]
    runs = set(int(l[4]) for l in lines if len(l) > 5 and l[4].isdigit())
    if rc != 0 or len(lines) != 2 * (p + e) or len(runs) != 1 or \
            not 150e6 <= min(runs) <= wall_ns or any(l[5] != "100.00" for l in lines):
        fail("%s -a -A -x,: one run time for every row, 150 ms to %.0f ns, 100.00%%: "
             "exit %d: %r" % (what, wall_ns, rc, err))

    rc, err = run(["-a", "--per-level", "--json", "-e", "instructions,cycles", "--"] + burn,
                  env, True)
    rep = as_json(rc, err, what + " -a --per-level --json")
    if rep is not None:
        got = [(r["label"], r["cpus"]) for r in rep["rows"] if r["event"] == "cycles"]
        want = [("P", p), ("E", e)] if e else [("all", p)]
        if got != want:
            fail("%s --per-level: rows %r, want %r" % (what, got, want))
        if any(r["value"] <= 0 for r in rep["rows"]):
            fail("%s --per-level: a level counted nothing: %r" % (what, rep["rows"]))
        check_rows_add_up(rep, what + " --per-level")

    # --per-level -I: P and E rows in each interval, adding up to the report's.
    rc, err = run(["-a", "--per-level", "-I", "100", "--json", "-e", "cycles", "--"] + burn,
                  env, True)
    objs = json_lines(err, what + " --per-level -I 100 --json")
    if rc != 0 or len(objs) < 2:
        fail("%s --per-level -I 100 --json: exit %d: %r" % (what, rc, err))
    else:
        sums = {}
        for o in objs[:-1]:
            if [r["label"] for r in o.get("rows", [])] != (["P", "E"] if e else ["all"]):
                fail("%s --per-level -I 100: an interval's rows are %r" % (what, o))
            for r in o.get("rows", []):
                sums[r["label"]] = sums.get(r["label"], 0) + r["value"]
        final = {r["label"]: r["value"] for r in objs[-1].get("rows", [])}
        if sums != final:
            fail("%s --per-level -I 100: intervals add up to %r, the report's rows are %r" %
                 (what, sums, final))
    rc, err = run(["-a", "--per-level", "-e", "instructions,cycles", "--"] + burn, env, True)
    rows = human_rows(err, "cycles")
    if rc != 0 or [label for label, _ in rows] != (["P", "E"] if e else ["all"]):
        fail("%s --per-level human: exit %d, rows %r\n%s" % (what, rc, rows, err))

    # Without root: the command's own instructions and cycles, split by level.
    unpriv = dict(env, DKPERF_SIM_PRIVILEGED="0")
    rc, err = run(["--json", "-e", "instructions,cycles", "--"] + burn, unpriv, True)
    rep = as_json(rc, err, what + " unprivileged --json")
    if rep is not None:
        if rep["backend"] != "selfcounts":
            fail("%s unprivileged: backend %s" % (what, rep["backend"]))
        split = {(l["level"], l["event"]): l["value"] for l in rep.get("levels", [])}
        if e == 0:
            if "levels" in rep:
                fail("%s unprivileged: a one-level machine shows levels %r" % (what, split))
        else:
            for name, total in totals(rep).items():
                pv, ev = split.get(("P", name), 0), split.get(("E", name), 0)
                if pv <= 0 or ev <= 0 or pv + ev != total:
                    fail("%s unprivileged %s: P %d + E %d != %d" % (what, name, pv, ev, total))
    rc, err = run(["-e", "instructions,cycles", "--"] + burn, unpriv, True)
    block = err.split("by CPU performance level:")
    if e and (rc != 0 or len(block) != 2 or
              [l.split()[0] for l in block[1].strip("\n").split("\n\n")[0].splitlines()]
              != ["P", "E", "P", "E"]):
        fail("%s unprivileged human: no P/E split\n%s" % (what, err))
    if not e and len(block) != 1:
        fail("%s unprivileged human: a split on a one-level machine\n%s" % (what, err))
    rc, err = run(["--per-level", "-x", ",", "-e", "instructions,cycles", "--"] + burn, unpriv,
                  True)
    lv = [l.split(",")[0] for l in err.splitlines() if l and l.split(",")[0] in ("P", "E")]
    if e and (rc != 0 or lv != ["P", "E", "P", "E"]):
        fail("%s unprivileged --per-level -x,: exit %d\n%s" % (what, rc, err))
    if not e and (rc != 2 or "--per-level without -a" not in err):
        fail("%s unprivileged --per-level on one level: exit %d %s" % (what, rc, err))

if failures:
    sys.exit(1)
print("per-CPU, per-core and per-level reports parse and add up (%s)" % " ".join(chips))
