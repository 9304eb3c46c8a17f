#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Run a google benchmark program that counts with dkperf/benchmark.hpp
(gbench_counters.cpp) and check its JSON and its stderr.

usage: check_gbench_counters.py [--events LIST] [--counted A,B] [--missing X,Y]
                                [--named-once X,Y]
                                [--bad] [--linux] [--sim] [--exit] -- PROGRAM [ARGS...]

--events  the list every benchmark counts (default: the header's default)
--counted events every benchmark must report per iteration
--missing events named once each on stderr, reported by no benchmark
--named-once events named once each on stderr (counted or not by each
          benchmark: for counters failing part way through the run)
--bad     the list does not parse: one line says so, nothing is counted
--linux   task-clock and page-faults are plausible (a fresh page per
          iteration: 0.9 to 1.2 faults; task-clock 0.8 to 1.25 cpu_time)
--sim     the simulated frameworks' rates: 2 to 2.5 instructions a cycle,
          2 to 3 cycles a nanosecond of cpu_time
--exit    the program calls exit() in a benchmark's loop while counting
          ($DKPERF_GB_EXIT): it exits 0 and, on the simulated frameworks,
          leaves no counters taken

On the simulated frameworks ($DKPERF_FRAMEWORK_ROOT) the machine state
($DKPERF_SIM_STATE) must read all zeros after the run.
"""
import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile


def fail(msg, err=""):
    sys.stderr.write(err)
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events")
    ap.add_argument("--counted", default="")
    ap.add_argument("--missing", default="")
    ap.add_argument("--named-once", default="")
    ap.add_argument("--bad", action="store_true")
    ap.add_argument("--linux", action="store_true")
    ap.add_argument("--sim", action="store_true")
    ap.add_argument("--exit", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    env = dict(os.environ)
    env.pop("DKPERF_GB_EVENTS", None)
    if a.events is not None:
        env["DKPERF_GB_EVENTS"] = a.events
    env.pop("DKPERF_GB_EXIT", None)
    if a.exit:
        env["DKPERF_GB_EXIT"] = "1"
    state = None
    if env.get("DKPERF_FRAMEWORK_ROOT"):
        tmp = tempfile.mkdtemp(prefix="dkperf-gbench-")
        atexit.register(shutil.rmtree, tmp, True)
        state = env["DKPERF_SIM_STATE"] = os.path.join(tmp, "sim-state")
    p = subprocess.run(cmd + ["--benchmark_format=json", "--benchmark_min_time=0.02"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    err = p.stderr
    if p.returncode != 0:
        fail("the program exited with %d" % p.returncode, err)
    if state and os.path.exists(state):
        with open(state) as f:
            text = f.read()
        for line in text.splitlines():
            if int(line.split()[1], 0) != 0:
                fail("the program left %r behind:\n%s" % (line, text), err)
    if a.exit:
        if state and not os.path.exists(state):
            fail("no machine state written", err)
        print("ok: exit() while counting leaves the counters released")
        return
    try:
        runs = json.loads(p.stdout)["benchmarks"]
    except (ValueError, KeyError) as e:
        fail("no JSON benchmarks (%s)" % e, err)
    names = sorted(r["name"] for r in runs)
    want = sorted(["BM_fresh_page/iterations:2048", "BM_spin", "BM_spin_again",
                   "BM_spin/threads:2"])
    if names != want:
        fail("benchmarks run: %s, not %s" % (names, want), err)
    ours = [l for l in err.splitlines() if l.startswith("dkperf:")]

    counted = [e for e in a.counted.split(",") if e]
    missing = [e for e in a.missing.split(",") if e]
    for r in runs:
        for e in counted:
            if not isinstance(r.get(e), (int, float)) or r[e] < 0:
                fail("%s: %s is not a count per iteration: %r" % (r["name"], e, r.get(e)), err)
        for e in missing:
            if e in r:
                fail("%s reports %s, which is not counted here" % (r["name"], e), err)
    for e in missing + [e for e in a.named_once.split(",") if e]:
        said = [l for l in ours if e in l[len("dkperf: "):].split(": not counted")[0].split(", ")]
        if len(said) != 1:
            fail("%s is named on %d lines of stderr, not once" % (e, len(said)), err)
    if a.bad:
        if len(ours) != 1 or a.events not in ours[0] or "position" not in ours[0]:
            fail("a bad list gives %d lines, not one naming it and the position" % len(ours), err)
        for r in runs:
            extra = [k for k in r if k in ("task-clock", "cycles", "instructions", "page-faults")]
            if extra:
                fail("%s counts %s from a list that does not parse" % (r["name"], extra), err)
    elif not missing and not a.named_once and ours:
        fail("stderr names events though all are counted", err)

    for r in runs:
        cpu = r["cpu_time"]  # ns per iteration (the default time unit)
        if r["time_unit"] != "ns":
            fail("time unit %s" % r["time_unit"])
        if a.linux:
            if r["name"].startswith("BM_fresh_page"):
                pf = r["page-faults"]
                # ASan's shadow (a byte for every 8) faults once every 8 pages.
                if not 0.9 <= pf <= 1.2:
                    fail("a fresh page per iteration gives %.3f page faults each" % pf, err)
            elif r["name"] in ("BM_spin", "BM_spin_again"):
                tc = r["task-clock"]
                if not 0.8 <= tc / cpu <= 1.25:
                    fail("%s: task-clock %.1f ns per iteration against cpu_time %.1f ns"
                         % (r["name"], tc, cpu), err)
        if a.sim:
            ins, cyc = r["instructions"], r["cycles"]
            if not 1.99 <= ins / cyc <= 2.51:
                fail("%s: %.3f instructions a cycle, not 2 to 2.5" % (r["name"], ins / cyc), err)
            if r["name"] in ("BM_spin", "BM_spin_again") and not 1.6 <= cyc / cpu <= 3.75:
                fail("%s: %.2f cycles a nanosecond of cpu_time, not 2 to 3" % (r["name"], cyc / cpu), err)
    print("ok: %d benchmarks, %s" % (len(runs), ", ".join(
        "%s %.4g" % (e, runs[0][e]) for e in counted) or "no counters"))


if __name__ == "__main__":
    main()
