#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf bench when things go wrong: a later command that fails keeps the
earlier results (report and exports), export files are checked before the
first run, hostile baselines are named, not read forever.

usage: check_bench_errors.py DKPERF   (DKPERF_FRAMEWORK_ROOT etc. from the environment;
       with it set, a state file checks that nothing stays acquired)
"""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

dkperf = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp(prefix="dkperf-bench-errors-")
atexit.register(shutil.rmtree, tmp, True)  # on every exit, a failed check's too
env = dict(os.environ)
sim = bool(env.get("DKPERF_FRAMEWORK_ROOT"))
state = os.path.join(tmp, "sim-state")
if sim:
    env["DKPERF_SIM_STATE"] = state
events = ["-e", "instructions" if sim else "task-clock"]
failures = []


def fail(msg):
    failures.append(msg)
    print(f"FAIL: {msg}", file=sys.stderr)


def bench(args, want_rc, timeout=60):
    try:
        p = subprocess.run([dkperf, "bench"] + args, capture_output=True, env=env,
                           timeout=timeout, cwd=tmp)
    except subprocess.TimeoutExpired:
        fail(f"dkperf bench {args}: still running after {timeout} s")
        return "", ""
    out, err = p.stdout.decode(), p.stderr.decode()
    if p.returncode != want_rc:
        fail(f"dkperf bench {args}: exit {p.returncode}, want {want_rc}\n{out}\n{err}")
    if sim and os.path.exists(state):
        with open(state) as f:
            for line in f.read().splitlines():
                if int(line.split()[1], 0) != 0:
                    fail(f"dkperf bench {args} left {line!r} behind")
    return out, err


def path(name):
    return os.path.join(tmp, name)


# 1. A later command fails: the first command's block is printed and the
# exports hold it, as hyperfine keeps what finished.
out, err = bench(["-r", "2"] + events + ["--export-json", path("two.json"), "--export-csv",
                                          path("two.csv"), "--", "true", "false", "true"], 1)
if "Benchmark 1: true" not in out or "2 runs" not in out or "Benchmark 2" in out:
    fail(f"the first command's results are not kept when the second fails:\n{out}")
if "command 'false' exited with status 1" not in err:
    fail(f"the failure is not named: {err}")
try:
    with open(path("two.json")) as f:
        doc = json.load(f)
    if [r["command"] for r in doc["results"]] != ["true"] or doc["results"][0]["runs"] != 2:
        fail(f"the JSON export does not hold the command that ran: {doc['results']}")
    with open(path("two.csv")) as f:
        rows = f.read().splitlines()
    if len(rows) != 2 or not rows[1].startswith("true,"):
        fail(f"the CSV export does not hold the command that ran: {rows}")
except (OSError, ValueError, KeyError) as e:
    fail(f"no export after a later command failed: {e}")
# Nothing ran at all: no export file is left behind, empty and invalid.
bench(["-r", "2"] + events + ["--export-json", path("none.json"), "--", "/nonexistent/cmd"], 127)
if os.path.exists(path("none.json")):
    fail("an export file was left when no command ran")

# 2. An export that cannot be written ends dkperf before the first run
# (--prepare would leave a mark), naming the option and the file.
marks = path("marks")
prep = ["--prepare", f"sh -c 'echo x >> {marks}'"]
for bad, why in ((path("no-such-dir/r.json"), "No such file or directory"),
                 (tmp, "Is a directory")):
    _, err = bench(["-r", "2"] + events + prep + ["--export-json", bad, "--", "true"], 1)
    if f"--export-json {bad}: cannot write {bad}: {why}" not in err:
        fail(f"export to {bad}: {err!r}")
if os.path.exists(marks):
    fail("the commands ran although an export file could not be written")
# The same file for two exports (however spelled), or standard output twice.
_, err = bench(["-r", "2"] + events + prep + ["--export-json", path("same"), "--export-csv",
                                               os.path.join(tmp, ".", "same"), "--", "true"], 2)
if "--export-json" not in err or "--export-csv" not in err or "the same file" not in err:
    fail(f"two exports to one file: {err!r}")
_, err = bench(["-r", "2"] + events + ["--export-json", "-", "--export-markdown", "-", "--", "true"], 2)
if "the same file" not in err:
    fail(f"two exports to standard output: {err!r}")
if os.path.exists(marks):
    fail("the commands ran although two exports named one file")
# An export on standard output is all that standard output holds.
out, err = bench(["-r", "2"] + events + ["--export-json", "-", "--", "true"], 0)
try:
    if json.loads(out)["results"][0]["command"] != "true":
        fail(f"--export-json -: {out}")
except ValueError:
    fail(f"--export-json -: standard output is not the JSON alone:\n{out}")
if "Benchmark 1: true" not in err:
    fail(f"--export-json -: the report is not on standard error:\n{err}")

# 3. --save-baseline: a benchmark that fails keeps the previous baseline.
rdir = path("results")
bench(["-r", "2"] + events + ["--results-dir", rdir, "--save-baseline", "b", "--", "true"], 0)
with open(os.path.join(rdir, "b.json")) as f:
    saved = f.read()
bench(["-r", "2"] + events + ["--results-dir", rdir, "--save-baseline", "b", "--", "true", "false"], 1)
with open(os.path.join(rdir, "b.json")) as f:
    if f.read() != saved:
        fail("a failed benchmark replaced the saved baseline")
if sorted(os.listdir(rdir)) != ["b.json"]:
    fail(f"files left in the results directory: {os.listdir(rdir)}")
# A save that does not complete leaves no empty results directory it made
# (one that was there, with its baselines, stays).
newdir = path("results-new")
bench(["-r", "2"] + events + ["--results-dir", newdir, "--save-baseline", "b", "--", "false"], 1)
if os.path.exists(newdir):
    fail(f"a save that did not complete left {newdir}: {os.listdir(newdir)}")

# 4. Baselines that are no file to read: named, and not read forever.
os.mkfifo(os.path.join(rdir, "fifo.json"))
os.mkdir(os.path.join(rdir, "dir.json"))
for name, why in (("fifo", ": not a regular file (a FIFO)"), ("dir", ": not a regular file (a directory)")):
    _, err = bench(["-r", "2"] + events + ["--results-dir", rdir, "--baseline", name, "--", "true"],
                   1, timeout=20)
    if f"{name}.json{why}" not in err:
        fail(f"baseline {name}: {err!r}")

# 5. Baselines with malformed members (libdkbench's strict reader): one
# line naming the file, the byte and the member; nothing is run.
odd = json.loads(saved)
odd["results"][0]["measures"][0]["totals"][0] = "1"
with open(os.path.join(rdir, "strtotal.json"), "w") as f:
    json.dump(odd, f)
_, err = bench(["-r", "2"] + events + ["--results-dir", rdir, "--baseline", "strtotal", "--", "true"], 1)
if "strtotal.json: byte" not in err or '"totals"' not in err or len(err.splitlines()) != 1:
    fail(f"a baseline whose totals hold a string:\n{err}")
# A baseline's names reach the terminal escaped: a file from elsewhere
# must not clear the screen or retitle the window.
odd = json.loads(saved)
odd["results"][0]["name"] = "evil\x1b]0;owned\x07\x1b[2J\u009b1m"
with open(os.path.join(rdir, "esc.json"), "w") as f:
    json.dump(odd, f)
out, _ = bench(["-r", "2"] + events + ["--results-dir", rdir, "--baseline", "esc", "--", "true"], 0)
if "\x1b" in out or "\x07" in out or "\u009b" in out or \
        "but not run: 'evil\\x1b]0;owned\\x07\\x1b[2J\\xc2\\x9b1m'" not in out:
    fail(f"control characters of a baseline reach the terminal: {out!r}")
# JSON is UTF-8: a baseline with a byte that is not is refused where the
# byte is, as libdkbench's baselines are, and the byte reaches no terminal.
with open(os.path.join(rdir, "badutf.json"), "wb") as f:
    f.write(saved.replace('"name":"true"', '"name":"x\udcff"', 1)
            .encode("utf-8", "surrogateescape"))
p = subprocess.run([dkperf, "bench", "-r", "2"] + events + ["--results-dir", rdir, "--baseline",
                    "badutf", "--", "true"], capture_output=True, env=env)
at = saved.index('"name":"true"') + len('"name":"x')
if p.returncode != 1 or b"\xff" in p.stdout + p.stderr or \
        f"badutf.json: byte {at}: invalid UTF-8 in a string;".encode() not in p.stderr:
    fail(f"a baseline's bytes that are not UTF-8: exit {p.returncode}, {p.stdout!r} {p.stderr!r}")
# A member twice is refused too: which of the two would count is a guess.
with open(os.path.join(rdir, "twice.json"), "w") as f:
    f.write(saved.replace('"name":"true"', '"name":"true","name":"false"', 1))
at = saved.index('"name":"true"') + len('"name":"true",')
_, err = bench(["-r", "2"] + events + ["--results-dir", rdir, "--baseline", "twice", "--", "true"], 1)
if f"twice.json: byte {at}: duplicate member name;" not in err:
    fail(f"a baseline with a member twice: {err!r}")

# 6. A --prepare that cannot be split is named as --prepare, not as a command.
_, err = bench(events + ["--prepare", "echo 'a", "--", "true"], 2)
if "--prepare 'echo 'a': an unterminated ' quote" not in err:
    fail(f"--prepare with an unterminated quote: {err!r}")

# 7. With -i the failed runs are measured, and said to have failed.
out, _ = bench(["-r", "3", "-i"] + events + ["--", "sh -c 'exit 3'"], 0)
if "warning: 3 of 3 runs exited non-zero (the first with status 3), ignored with -i" not in out:
    fail(f"-i does not say that the runs failed:\n{out}")
out, _ = bench(["-r", "2", "-i"] + events + ["--", "true"], 0)
if "warning" in out:
    fail(f"a warning without a failed run:\n{out}")

# 8. A reader that goes away (| head -1) stops the benchmark at the next
# report block: the commands after it are not run for nothing.
marks2 = path("marks2")
p = subprocess.Popen([dkperf, "bench", "-r", "2"] + events +
                     ["--", "true", f"sh -c 'echo x >> {marks2}'", f"sh -c 'echo x >> {marks2}'"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp)
p.stdout.close()  # before the first block is written
err = p.stderr.read().decode()
p.wait(timeout=60)
# Killed by SIGPIPE (as any filter) once the counters are given back, or 1.
if p.returncode not in (1, -13):
    fail(f"a closed standard output: exit {p.returncode}: {err!r}")
if os.path.exists(marks2):
    fail("commands ran after standard output was closed")

# 9. On Linux one group counts every process dkperf starts: what a command
# leaves running is counted in the runs that follow, and the report says so.
if not sim:
    out, _ = bench(["-r", "3"] + events + ["-S", "sh", "--", "sleep 1 & true", "true"], 0)
    blocks = out.split("Benchmark 2:")
    if len(blocks) != 2 or "warning: it left processes running after it exited" not in blocks[0] \
            or "warning: processes an earlier command left running ran during its runs" not in blocks[1]:
        fail(f"processes left running are not reported:\n{out}")

if failures:
    sys.exit(f"check_bench_errors: {len(failures)} failed")
print("check_bench_errors: ok")
