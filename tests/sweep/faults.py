#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Fault-injection sweep over the simulated frameworks.

Each sequence (the API driver and dkperf info/list/stat) runs once clean
with DKPERF_SIM_CALLS to learn how often it calls each framework function;
then every call index N of every function is failed in turn
(DKPERF_SIM_FAIL=fn:code@N) with a few codes, under the ASan+LSan build.
Each run must succeed, or exit non-zero with an error line on stderr; it
must never crash, hang, or draw a sanitizer report; and the machine state
the sim keeps in DKPERF_SIM_STATE must be given back: force_all_ctrs at its
starting value and nothing left counting, unless the fault hit the very
call that gives it back, which must then be reported (non-zero exit and an
error line that says so).

usage: faults.py --dkperf BIN --driver BIN --sim-root DIR [--jobs N] [--light]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweeplib  # noqa: E402

EPERM, EBUSY, EINVAL = 1, 16, 22
# KPEP codes: out of memory, database corrupt, event not found.
KPEP_CODES = (2, 10, 11)
# Functions that return a count (or a version): failing them returns 0,
# whatever the code.
COUNT_FUNCTIONS = {"kpc_pmu_version", "kpc_get_counting", "kpc_get_thread_counting",
                   "kpc_get_config_count", "kpc_get_counter_count", "kperf_ns_to_ticks",
                   "kperf_ticks_to_ns", "kperf_tick_frequency"}
# The calls that give the machine state back: a fault there may leave it
# changed, but only with a non-zero exit and an error that says so.
GIVE_BACK = {"kpc_force_all_ctrs_set": r"force_all_ctrs|restor|give",
             "kpc_set_counting": r"counting",
             "kpc_set_thread_counting": r"counting"}
# Sampling state the sim shows (kperf, kpc PMIs, the trace buffer, ktrace):
# all of it must be given back, whatever failed (each undo step is tried
# twice, so one injected failure cannot leave it).
SAMPLING_ZERO = ("kperf.sampling", "kperf.actions_set", "kperf.timers_set", "kpc.pmi",
                 "sim.perf_events", "kdebug.bufinit", "kdebug.enabled", "ktrace.owning_pid")

STAT = ["-e", "instructions,cycles,branches", "--", "true"]


def sequences(a):
    d = [a.dkperf]
    return {
        "api": ([a.driver], {}),
        "info": (d + ["info"], {}),
        "list": (d + ["list"], {}),
        "stat": (d + ["stat"] + STAT, {}),
        "stat-a": (d + ["stat", "-a"] + STAT, {}),
        "stat-r3": (d + ["stat", "-r", "3"] + STAT, {}),
        # Without privileges: the selfcounts backend and proc_pid_rusage.
        "stat-noroot": (d + ["stat"] + STAT, {"DKPERF_SIM_PRIVILEGED": "0"}),
        "api-noroot": ([a.driver, "--process-only", "instructions", "cycles"],
                       {"DKPERF_SIM_PRIVILEGED": "0"}),
        # force_all_ctrs was 1 before: it must be 1 again after.
        "api-force1": ([a.driver], {"START_FORCE_ALL": "1"}),
        "stat-a-force1": (d + ["stat", "-a"] + STAT, {"START_FORCE_ALL": "1"}),
        # Per-CPU rows of a CPU list, and a process's split by level.
        "stat-a-A-C": (d + ["stat", "-a", "-A", "-C", "0-3", "--json"] + STAT, {}),
        "stat-noroot-per-level": (d + ["stat", "--per-level"] + STAT,
                                  {"DKPERF_SIM_PRIVILEGED": "0"}),
        # Sampling: kperf PMIs and the kdebug trace buffer (dkperf record).
        "record": (d + ["record", "-e", "cycles/100000", "-g", "-o", "out.data", "--", "true"],
                   {}),
        # Every CPU (a pid filter of none), and kperf's timer.
        "record-a": (d + ["record", "-a", "-e", "cycles/100000000", "-o", "out.data", "--",
                          "true"], {}),
        "record-timer": (d + ["record", "-e", "timer@1000", "-o", "out.data", "--", "true"], {}),
        # dkperf bench: a run is posix_spawn, the zombie's proc_pid_rusage
        # and the reap; with a modifier, the held child and its counters.
        "bench": (d + ["bench", "-r", "2"] + STAT, {}),
        "bench-noroot": (d + ["bench", "-r", "2"] + STAT, {"DKPERF_SIM_PRIVILEGED": "0"}),
    }


def codes_for(fn, light):
    if fn in COUNT_FUNCTIONS:
        return (0,)
    if fn.startswith("kpep_"):
        return KPEP_CODES[:1] if light else KPEP_CODES
    return (EINVAL,) if light else (EPERM, EBUSY, EINVAL)


def run_case(args, seq, extra, fault=None):
    """Run one sequence; returns (Result, state dict, calls dict, start force_all)."""
    w = sweeplib.Workdir("dkperf-fault-")
    try:
        env = sweeplib.base_env(args.sim_root)
        start = int(extra.get("START_FORCE_ALL", "0"))
        for k, v in extra.items():
            if k != "START_FORCE_ALL":
                env[k] = v
        state = w.file("state")
        if start:
            with open(state, "w") as f:
                f.write("force_all_ctrs %d\ncounting 0x0\nthread_counting 0x0\n" % start)
        env["DKPERF_SIM_STATE"] = state
        env["DKPERF_SIM_CALLS"] = w.file("calls")
        if fault:
            env["DKPERF_SIM_FAIL"] = fault
        r = sweeplib.run(seq, env, timeout=args.timeout, cwd=w.path)
        return r, sweeplib.read_state(state), sweeplib.read_calls(w.file("calls")), start
    finally:
        w.close()


def judge(r, state, start, fn):
    import re
    problems = sweeplib.judge_exit(r)
    if r.timed_out:
        return problems
    force = state.get("force_all_ctrs", start)
    left = []
    if force != start:
        left.append("force_all_ctrs left at %d (was %d)" % (force, start))
    for k in ("counting", "thread_counting"):
        if state.get(k, 0) != 0:
            left.append("%s left at 0x%x" % (k, state[k]))
    sampling = ["%s left at %d" % (k, state[k]) for k in SAMPLING_ZERO if state.get(k, 0) != 0]
    if sampling:
        problems.append(", ".join(sampling) + " (exit %s)" % r.rc)
    if left:
        said = fn in GIVE_BACK and r.rc not in (None, 0) and any(
            re.search(GIVE_BACK[fn], l) for l in sweeplib.error_lines(r.err))
        if not said:
            how = "exit 0" if r.rc == 0 else "exit %s" % r.rc
            problems.append(", ".join(left) + " (%s%s)" % (
                how, "" if r.rc == 0 else ", stderr does not say so"))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dkperf", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--sim-root", required=True)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--light", action="store_true",
                    help="one code per function, the api and stat sequences only")
    ap.add_argument("--only", help="comma-separated sequence names")
    args = ap.parse_args()
    args.dkperf, args.driver = os.path.abspath(args.dkperf), os.path.abspath(args.driver)
    args.sim_root = os.path.abspath(args.sim_root)

    seqs = sequences(args)
    names = list(seqs)
    if args.light:
        names = ["api", "stat", "stat-a", "record"]
    if args.only:
        names = args.only.split(",")

    cases = []
    clean_problems = []
    for name in names:
        argv, extra = seqs[name]
        r, state, calls, start = run_case(args, argv, extra)
        p = judge(r, state, start, None)
        if r.rc != 0:
            p.append("clean run exits %s: %s" % (r.rc, r.err.strip()[-200:]))
        if not calls:
            p.append("clean run made no framework call (is DKPERF_SIM_CALLS supported?)")
        clean_problems.append(("%s clean" % name, p))
        for fn in sorted(calls):
            for n in range(1, calls[fn] + 1):
                for code in codes_for(fn, args.light):
                    cases.append((name, fn, code, n))
    print("fault sweep: %s; %d call sites x codes" % (
        ", ".join(names), len(cases)), flush=True)

    def one(case):
        name, fn, code, n = case
        argv, extra = seqs[name]
        r, state, _, start = run_case(args, argv, extra, "%s:%d@%d" % (fn, code, n))
        return judge(r, state, start, fn)

    results = sweeplib.run_pool(cases, one, args.jobs)
    labelled = [("%s %s:%d@%d" % c, p) for c, p in results]
    return sweeplib.report("fault sweep", clean_problems + labelled)


if __name__ == "__main__":
    sys.exit(main())
