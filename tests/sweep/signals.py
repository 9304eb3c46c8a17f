#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Signal sweep: signals sent at random (seeded) delays to `dkperf stat --
<busy command>`, `dkperf stat -a -- <busy command>`, `dkperf stat -I 20 --
<busy command>`, `dkperf stat -p PID -I 50` (a busy process started apart,
in a session of its own), `dkperf record -e cycles/100000 -- <busy
command>` (also under a file size limit of 8 KiB, as `ulimit -f 8`, so
that the recording's writes fail with EFBIG) and `dkperf bench -N -r 3 --
'<busy command>'` on the simulated frameworks, some runs with
DKPERF_SIM_SLOW on framework calls so that the signal lands inside opening,
starting, reading or releasing the counters, or setting up and tearing down
sampling. The signals: every terminating one dkperf catches (SIGINT,
SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF),
the two it ignores (SIGPIPE, SIGXFSZ) and SIGKILL. For each run:

- A caught signal: dkperf ends by that signal, after giving everything
  back, or before it held anything by the default action (exit 0 only when the command had already finished and the report
  is complete); SIGKILL: killed. An ignored one changes nothing: dkperf
  finishes as it would have (`stat -p`, which would count on, is then
  stopped with SIGINT), or, sent before dkperf held anything, ends it by
  its default action. Under the file size limit, `record` may also exit
  1 saying the recording could not be written ("File too large").
- No process of the run is left: nothing running (after a SIGKILL of
  dkperf, its command must still end by itself within its own run time
  plus a grace period) and no zombie.
- force_all_ctrs is back at 0 and nothing is left counting
  (DKPERF_SIM_STATE); after record, nothing is left sampling, no trace
  buffer and no ktrace owner. After a SIGKILL of dkperf, that holds once
  the next `dkperf stat` has run: the kernel gives force_all_ctrs back when
  its holder dies, so the next stat must not adopt it, and keeps the rest
  of a killed record's sampling (kern_ktrace.c only drops the dead owner),
  which the next stat must reset (saying so on stderr when it did).

usage: signals.py --dkperf BIN --busy BIN --sim-root DIR [--seconds S] [--seed N] [--jobs N]
(--busy: tests/region_program, run as `--work-only --burn-ms MS`).
"""

import argparse
import os
import random
import resource
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweeplib  # noqa: E402

SLOW = {
    "none": "",
    "open": "kpep_db_create:150,kpc_force_all_ctrs_get:100",
    "start": "kpc_set_config:100,kpc_set_counting:150",
    "read": "kpc_get_cpu_counters:150,proc_pid_rusage:100",
    "release": "kpc_force_all_ctrs_set:200",
    "sampling": "kperf_sample_set:150,kpc_set_period:100,sysctl:20",
}
# The policy of tools/dkperf/signals.c: caught (the counters are given back,
# then dkperf ends by the signal), ignored (writes fail instead), KILL.
CAUGHT = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
          signal.SIGUSR2, signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF)
IGNORED = (signal.SIGPIPE, signal.SIGXFSZ)
SIGNALS = CAUGHT + IGNORED + (signal.SIGKILL,)
MODES = ("stat", "stat-a", "stat-I", "stat-p", "record", "record-fsize", "bench")
FSIZE_LIMIT = 8192  # ulimit -f 8


def become_subreaper():
    """Take the orphans of dkperf (a command left running when dkperf is
    killed) as children, so that their end can be reaped here: where PID 1
    does not reap (a container's), an orphan that ended would stay a
    zombie and read as left behind. Linux only; elsewhere nothing."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def session_procs(sid):
    """(pid, state) of every process whose session is sid, after reaping
    those of them that ended and are this process's (orphans it adopted)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[3]) != sid:  # state ppid pgrp session
            continue
        if fields[0] == "Z" and int(fields[1]) == os.getpid() and int(d) != sid:
            try:
                if os.waitpid(int(d), os.WNOHANG)[0] == int(d):
                    continue
            except ChildProcessError:
                pass
        out.append((int(d), fields[0]))
    return out


def one(args, case):
    mode, slow, sig, delay, burn = case
    w = sweeplib.Workdir("dkperf-signal-")
    target = None
    try:
        env = sweeplib.base_env(args.sim_root)
        # LeakSanitizer checks at exit from a tracer it clones: a signal that
        # ends the process during that check orphans the tracer, which is
        # then a zombie wherever PID 1 does not reap. Leaks are the fault and
        # malloc sweeps' to find; here only the exit and the leftovers count.
        env["ASAN_OPTIONS"] = env["ASAN_OPTIONS"].replace("detect_leaks=1", "detect_leaks=0")
        env["DKPERF_SIM_STATE"] = w.file("state")
        if SLOW[slow]:
            env["DKPERF_SIM_SLOW"] = SLOW[slow]
        busy = [args.busy, "--work-only", "--burn-ms", str(burn)]
        if mode == "stat-p":
            # Counted until the signal: it outlives any delay, and is ended below.
            target = subprocess.Popen([args.busy, "--work-only", "--burn-ms", "60000"],
                                      stdin=subprocess.DEVNULL, start_new_session=True)
            argv = [args.dkperf, "stat", "-p", str(target.pid), "-I", "50"]
        elif mode == "bench":
            # Three runs of the command, each read from its zombie.
            argv = [args.dkperf, "bench", "-N", "-r", "3", "--", " ".join(busy)]
        elif mode in ("record", "record-fsize"):
            argv = [args.dkperf, "record", "-e", "cycles/100000", "-o", w.file("rec.data"),
                    "--"] + busy
        else:
            argv = [args.dkperf, "stat"] + {"stat-a": ["-a"], "stat-I": ["-I", "20"]}.get(
                mode, []) + ["--"] + busy
        if not mode.startswith("record"):
            argv[2:2] = ["-e", "instructions,cycles"]
        limit = None
        if mode == "record-fsize":
            def limit():
                resource.setrlimit(resource.RLIMIT_FSIZE, (FSIZE_LIMIT, FSIZE_LIMIT))
        p = subprocess.Popen(argv, env=env, cwd=w.path, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True, preexec_fn=limit)
        time.sleep(delay)
        sent = p.poll() is None
        if sent:
            os.kill(p.pid, sig)
        ended_by = sig
        problems = []
        if sent and sig in IGNORED and mode == "stat-p":
            # It counts until told to stop: the ignored signal must not have
            # ended it (but by its default action before dkperf held
            # anything), and SIGINT still must.
            time.sleep(0.2)
            if p.poll() is not None:
                if p.returncode != -sig:
                    problems.append("%s ended stat -p with exit %s" % (
                        signal.Signals(sig).name, p.returncode))
            else:
                os.kill(p.pid, signal.SIGINT)
                ended_by = signal.SIGINT
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return ["dkperf hung after the signal"]
        err = err.decode(errors="replace")
        rc = p.returncode
        r = sweeplib.Result(rc, "", err, 0, False)
        if sweeplib.SANITIZER.search(err) or rc == 86:
            problems.append("sanitizer report: " + next(
                (l for l in err.splitlines() if sweeplib.SANITIZER.search(l)), "exit 86")[:160])
        complete = "time elapsed" in err or "[ dkperf record:" in err or \
            (mode == "bench" and b"3 runs;" in out)
        # Under the file size limit the recording may not fit: a write error
        # (EFBIG, SIGXFSZ being ignored), said so, exit 1.
        too_large = mode == "record-fsize" and rc == 1 and \
            "cannot write the recording: File too large" in err
        if not sent:
            if rc != 0 and not too_large:
                problems.append("finished before the signal with exit %d" % rc)
        elif ended_by in IGNORED:
            # Death by the default action is right only before dkperf held
            # anything: the checks of what is left below tell.
            if not (rc == 0 and complete) and not too_large and rc != -sig:
                problems.append("%s (ignored): exit %s, not a complete run%s" % (
                    signal.Signals(sig).name, rc,
                    ": " + err.strip().splitlines()[-1][:120] if err.strip() else ""))
        elif sig == signal.SIGKILL:
            # A SIGKILL that lands after dkperf exited (poll saw it running a
            # moment before) meets a zombie: a complete report and exit 0.
            if rc != -signal.SIGKILL and not (rc == 0 and complete):
                problems.append("SIGKILL: exit %s, not killed" % rc)
        elif rc != -ended_by and not (rc == 0 and complete) and not too_large:
            problems.append("%s: exit %s (want death by the signal)%s" % (
                signal.Signals(sig).name, rc,
                ": " + err.strip().splitlines()[-1][:120] if err.strip() else ", stderr empty"))
        # Nothing of the run may stay: wait for the command's own run time
        # after a SIGKILL of dkperf (it is orphaned then), briefly otherwise.
        grace = burn / 1000.0 + 2.0 if rc == -signal.SIGKILL else 1.0
        deadline = time.monotonic() + grace
        left = session_procs(p.pid)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = session_procs(p.pid)
        if left:
            problems.append("left behind: " + ", ".join(
                "%d (%s)" % (pid, "zombie" if st == "Z" else "state " + st) for pid, st in left))
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        if rc == -signal.SIGKILL:
            # The kernel gave force_all_ctrs back when dkperf died: the next
            # stat takes the counters afresh, and gives them back.
            nxt = sweeplib.run([args.dkperf, "stat", "-e", "instructions", "--", args.busy,
                                "--work-only", "--burn-ms", "10"], env, cwd=w.path)
            if nxt.rc != 0:
                problems.append("the next stat after SIGKILL: exit %s" % nxt.rc)
            reset = [l for l in nxt.err.splitlines() if "note: reset" in l]
            if reset and "which no longer exists" not in reset[0]:
                problems.append("the next stat's note does not say whose state it reset: "
                                + reset[0][:160])
        state = sweeplib.read_state(w.file("state"))
        if state.get("force_all_ctrs", 0) != 0:
            problems.append("force_all_ctrs left at %d" % state["force_all_ctrs"])
        # The sampling state outlives a killed dkperf as it would on a Mac
        # (tests/sim/README.md): judged after the next stat then.
        keys = ("counting", "thread_counting", "kperf.sampling", "kperf.actions_set",
                "kperf.timers_set", "kdebug.bufinit", "kdebug.enabled", "ktrace.owning_pid",
                "ktrace.active_mask", "kpc.pmi")
        for k in keys:
            if state.get(k, 0) != 0:
                problems.append("%s left at 0x%x" % (k, state[k]))
        del r
        return problems
    finally:
        if target is not None:
            target.kill()
            target.wait()
        w.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dkperf", required=True)
    ap.add_argument("--busy", required=True)
    ap.add_argument("--sim-root", required=True)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--quick", action="store_true",
                    help="random cases only, without first covering every combination")
    args = ap.parse_args()
    become_subreaper()
    args.dkperf, args.busy = os.path.abspath(args.dkperf), os.path.abspath(args.busy)
    args.sim_root = os.path.abspath(args.sim_root)
    rng = random.Random(args.seed)
    # Every mode x signal and every mode x slow call once, then random ones,
    # in batches, until the time is up.
    slows = list(SLOW)
    first = [] if args.quick else [
        (m, slows[i % len(slows)], g) for i, (m, g) in enumerate(
            (m, g) for m in MODES for g in SIGNALS)] + [
        (m, s, SIGNALS[i % len(SIGNALS)]) for i, (m, s) in enumerate(
            (m, s) for m in MODES for s in SLOW)]
    results = []
    end = time.monotonic() + args.seconds
    batch_no = 0
    while time.monotonic() < end or batch_no == 0:
        batch = []
        for i in range(args.jobs * 4):
            if first:
                m, s, g = first.pop(0)
            else:
                m, s, g = rng.choice(MODES), rng.choice(list(SLOW)), rng.choice(SIGNALS)
            delay = round(rng.uniform(0.0, 0.6), 3)
            burn = rng.choice((50, 300, 800))
            batch.append((m, s, int(g), delay, burn))
        results += sweeplib.run_pool(batch, lambda c: one(args, c), args.jobs)
        batch_no += 1
        if first:
            end = max(end, time.monotonic() + 1)
    labelled = [("%s slow=%s %s at %.3fs (command %d ms)" % (
        m, s, signal.Signals(g).name, d, b), p) for (m, s, g, d, b), p in results]
    print("signal sweep: seed %d" % args.seed)
    return sweeplib.report("signal sweep", labelled)


if __name__ == "__main__":
    sys.exit(main())
