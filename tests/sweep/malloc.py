#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Malloc-failure sweep: each command runs once clean under the
tests/malloc_fail.c shim to count its allocations, then once for every N
up to that count with the N-th allocation failing. Every run must succeed,
or exit non-zero with an error line on stderr; never crash, hang or stay
silent; on the simulated frameworks force_all_ctrs must be back at 0 and
nothing left counting. Commands: dkperf info, list, stat, stat -a,
stat -r 3 on the sim and on perf_event (software events), stat -a with -A or
--per-core and -C, and the API
driver on the sim; with --record-fixture, dkperf report --stdio of a
recording whose images have ELF symbols (and its --pprof, its
differential flame graph and dkperf diff of it with itself), once failing
each of its allocations and once each allocation made inside elfutils' libelf (the
shim's DKPERF_MALLOC_ONLY). A report that exits 0 must print exactly what
the clean run printed: a symbol dropped or misnamed for want of memory is
a failure, not a success.

usage: malloc.py --dkperf BIN --driver BIN --shim SO --sim-root DIR
                 [--record-fixture BIN] [--jobs N] [--light] [--only NAMES]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweeplib  # noqa: E402

SIM_EV = ["-e", "instructions,cycles,branches", "--", "true"]
SW_EV = ["-e", "task-clock,context-switches,page-faults", "--", "true"]


def commands(a):
    d = [a.dkperf]
    report = {}
    if a.recording:
        report = {
            "report-stdio": (d + ["report", "-i", a.recording, "--stdio"], False),
            "report-stdio libelf": (d + ["report", "-i", a.recording, "--stdio"], False),
            "report-pprof": (d + ["report", "-i", a.recording, "--pprof", "out.pb.gz"], False),
            "report-html-diff": (d + ["report", "-i", a.recording, "--html", "out.html",
                                      "--diff", a.recording], False),
            "report-diff": (d + ["diff", a.recording, a.recording], False),
        }
    return {
        "sim info": (d + ["info"], True),
        "sim list": (d + ["list"], True),
        "sim stat": (d + ["stat"] + SIM_EV, True),
        "sim stat-a": (d + ["stat", "-a"] + SIM_EV, True),
        "sim stat-r3": (d + ["stat", "-r", "3"] + SIM_EV, True),
        "sim api": ([a.driver], True),
        "linux info": (d + ["info"], False),
        "linux list": (d + ["list"], False),
        "linux stat": (d + ["stat"] + SW_EV, False),
        "linux stat-a": (d + ["stat", "-a"] + SW_EV, False),
        "linux stat-r3": (d + ["stat", "-r", "3"] + SW_EV, False),
        "sim stat-a-per-core-C": (d + ["stat", "-a", "--per-core", "-C", "0-3"] + SIM_EV, True),
        "linux stat-a-A": (d + ["stat", "-a", "-A", "-x", ","] + SW_EV, False),
        **report,
    }


# Cases whose allocations are counted and failed in one library only.
ONLY = {"report-stdio libelf": "libelf"}


def run(args, name, argv, sim, fail_at=None):
    w = sweeplib.Workdir("dkperf-malloc-")
    try:
        env = sweeplib.base_env(args.sim_root if sim else None)
        env["LD_PRELOAD"] = args.shim
        if name in ONLY:
            env["DKPERF_MALLOC_ONLY"] = ONLY[name]
        env["DKPERF_MALLOC_COUNT"] = w.file("count")
        env["DKPERF_SIM_STATE"] = w.file("state")
        if fail_at is not None:
            env["DKPERF_MALLOC_FAIL_AT"] = str(fail_at)
        r = sweeplib.run(argv, env, timeout=args.timeout, cwd=w.path)
        count, r.loader = 0, False
        try:
            with open(w.file("count")) as f:
                for l in f:
                    if l.startswith("allocations"):
                        count += int(l.split()[1])
                    elif l.startswith("loader"):
                        r.loader = True
        except FileNotFoundError:
            pass
        return r, count, sweeplib.read_state(w.file("state"))
    finally:
        w.close()


# glibc's dynamic loader aborts (x86_64: exit 127) or crashes (arm64)
# when it cannot allocate a dlopened library's thread-local storage: no
# program can handle that. The shim says when the allocation it failed was
# the loader's own; a run that then died is counted apart, not as a failure.
# (Most of the loader's failures are dlopen returning an error, which
# dkperf must report like any other: those are judged as usual.)
LDSO_ABORT = "the dynamic loader's own allocation, and died"


def died_in_loader(r):
    return r.loader and r.rc is not None and (r.rc == 127 or r.rc < 0 or r.rc >= 128)


def judge(r, state, want_out=None):
    if died_in_loader(r):
        return []
    problems = sweeplib.judge_exit(r)
    if want_out is not None and r.rc == 0 and r.out != want_out:
        diff = next((("%r instead of %r" % (g, w)) for g, w in
                     zip(r.out.splitlines() + [""] * 9999, want_out.splitlines()) if g != w),
                    "more lines than the clean run's")
        problems.append("exit 0 with output unlike the clean run's: %s" % diff[:240])
    if state.get("force_all_ctrs", 0) != 0:
        problems.append("force_all_ctrs left at %d (exit %s)" % (state["force_all_ctrs"], r.rc))
    for k in ("counting", "thread_counting"):
        if state.get(k, 0) != 0:
            problems.append("%s left at 0x%x" % (k, state[k]))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dkperf", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--sim-root", required=True)
    ap.add_argument("--record-fixture", help="tests/record_fixture: adds the report cases")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--light", action="store_true", help="the stat commands only")
    ap.add_argument("--only", help="comma-separated command names")
    args = ap.parse_args()
    for k in ("dkperf", "driver", "shim", "sim_root"):
        setattr(args, k, os.path.abspath(getattr(args, k)))
    args.recording = None
    rec_dir = sweeplib.Workdir("dkperf-malloc-rec-")
    if args.record_fixture:
        args.recording = rec_dir.file("fixture.data")
        r = sweeplib.run([os.path.abspath(args.record_fixture), args.recording],
                         sweeplib.base_env(None), timeout=args.timeout)
        if r.rc != 0:
            print("malloc sweep: record_fixture failed: %s" % r.err.strip())
            return 1
    try:
        return sweep(args)
    finally:
        rec_dir.close()


def sweep(args):
    cmds = commands(args)
    names = list(cmds)
    if args.light:
        names = ["sim stat", "linux stat"] + [n for n in ONLY if n in cmds]
    if args.only:
        names = args.only.split(",")
    cases, clean, want = [], [], {}
    for name in names:
        argv, sim = cmds[name]
        r, count, state = run(args, name, argv, sim)
        if name.startswith("report"):
            want[name] = r.out
        p = judge(r, state)
        if r.rc != 0:
            p.append("clean run exits %s: %s" % (r.rc, r.err.strip()[-200:]))
        if count == 0:
            p.append("clean run counted no allocation (is the shim loaded?)")
        clean.append(("%s clean (%d allocations)" % (name, count), p))
        cases += [(name, n) for n in range(1, count + 1)]

    ldso = []

    def one_noted(case):
        argv, sim = cmds[case[0]]
        r, _, state = run(args, case[0], argv, sim, case[1])
        if died_in_loader(r):
            ldso.append(case)
        return judge(r, state, want.get(case[0]))

    results = sweeplib.run_pool(cases, one_noted, args.jobs)
    if ldso:
        print("malloc sweep: %d cases failed %s, not counted "
              "as failures: %s" % (len(ldso), LDSO_ABORT,
                                   ", ".join("%s #%d" % c for c in sorted(ldso))))
    labelled = [("%s, allocation %d fails" % c, p) for c, p in results]
    return sweeplib.report("malloc sweep", clean + labelled)


if __name__ == "__main__":
    sys.exit(main())
