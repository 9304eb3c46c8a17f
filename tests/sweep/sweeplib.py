# SPDX-License-Identifier: MIT OR Apache-2.0
"""Shared parts of the fault, signal and malloc sweeps: running one case
with a time limit, reading the simulated machine state, judging stderr,
and running cases on a pool of worker threads."""

import concurrent.futures
import os
import re
import shutil
import subprocess
import tempfile
import time

SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|"
                       r"ThreadSanitizer|runtime error:|MemorySanitizer")
# An error line: "<program>[ <command>]: <text>", the text not empty and not
# ending in ": " (a detail that was left out).
ERROR_LINE = re.compile(r"^(dkperf|sweep_api_driver)( [a-z]+)?: \S.*$")


def sanitizer_env(env):
    env = dict(env)
    env["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:exitcode=86"
    env["LSAN_OPTIONS"] = "exitcode=86"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    return env


def base_env(sim_root):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DKPERF_")}
    if sim_root is not None:
        env["DKPERF_FRAMEWORK_ROOT"] = sim_root
    else:
        env["DKPERF_FRAMEWORK_ROOT"] = ""
    return sanitizer_env(env)


class Result:
    def __init__(self, rc, out, err, secs, timed_out):
        self.rc, self.out, self.err, self.secs, self.timed_out = rc, out, err, secs, timed_out


def run(argv, env, timeout=30, cwd=None):
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return Result(p.returncode, p.stdout.decode(errors="replace"),
                      p.stderr.decode(errors="replace"), time.monotonic() - t0, False)
    except subprocess.TimeoutExpired as e:
        return Result(None, (e.stdout or b"").decode(errors="replace"),
                      (e.stderr or b"").decode(errors="replace"), time.monotonic() - t0, True)


def read_state(path):
    """The sim's machine state file as a dict, or {} when it was never written."""
    state = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    state[parts[0]] = int(parts[1], 0)
    except FileNotFoundError:
        pass
    return state


def read_calls(path):
    calls = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    calls[parts[0]] = calls.get(parts[0], 0) + int(parts[1])
    except FileNotFoundError:
        pass
    return calls


def error_lines(err):
    return [l for l in err.splitlines() if ERROR_LINE.match(l) and not l.rstrip().endswith(":")]


def judge_exit(r):
    """Problems common to every sweep: sanitizer reports, crashes, hangs,
    and failures without a message. Returns a list of strings."""
    problems = []
    if r.timed_out:
        problems.append("hung (timed out)")
        return problems
    m = SANITIZER.search(r.err)
    if m or r.rc == 86:
        line = next((l for l in r.err.splitlines() if SANITIZER.search(l)), "exit 86")
        problems.append("sanitizer report: " + line.strip()[:160])
    elif r.rc < 0:
        problems.append("crashed with signal %d" % -r.rc)
    elif r.rc != 0:
        if not r.err.strip():
            problems.append("exit %d with empty stderr (silence)" % r.rc)
        elif not error_lines(r.err):
            problems.append("exit %d without an error line on stderr: %r"
                            % (r.rc, r.err.strip().splitlines()[-1][:160]))
        if "(no detail)" in r.err or "(null)" in r.err:
            problems.append("error without detail: %r" % r.err.strip().splitlines()[-1][:160])
    return problems


class Workdir:
    def __init__(self, prefix):
        self.path = tempfile.mkdtemp(prefix=prefix)

    def file(self, name):
        return os.path.join(self.path, name)

    def close(self):
        shutil.rmtree(self.path, ignore_errors=True)


def run_pool(cases, fn, jobs):
    """fn(case) -> list of problems; returns [(case, problems)] in order."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        return list(zip(cases, ex.map(fn, cases)))


def report(label, results, show=60):
    failed = [(c, p) for c, p in results if p]
    print("%s: %d cases, %d passed, %d failed" % (label, len(results), len(results) - len(failed),
                                                  len(failed)))
    for c, p in failed[:show]:
        print("  FAIL %s: %s" % (c, "; ".join(p)))
    if len(failed) > show:
        print("  ... and %d more" % (len(failed) - show))
    return 1 if failed else 0
