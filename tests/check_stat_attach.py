#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""dkperf stat -I (intervals), -p/-t (attaching) and --timeout, end to end.

usage: check_stat_attach.py DKPERF SIM_ROOT

On Linux (perf_event, software events) and on the simulated Mac frameworks.
Every output form is parsed (JSON strictly, one object per line), the
intervals must add up to the total, attached counts must match what the
kernel says the process did, and each misuse must be one line and a
non-zero exit. Bounds are generous: the machine is loaded.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

dkperf, sim_root = sys.argv[1], sys.argv[2]
LINUX = dict(os.environ, DKPERF_FRAMEWORK_ROOT="")
SIM = dict(os.environ, DKPERF_FRAMEWORK_ROOT=sim_root)
SIM_NOROOT = dict(SIM, DKPERF_SIM_PRIVILEGED="0")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def run(args, env=LINUX, timeout=120):
    p = subprocess.run([dkperf, "stat"] + args, env=env, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode(), p.stderr.decode("utf-8", errors="strict")


# A command busy for 0.6 s of wall time (a fixed amount of work takes 0.09 s
# on a quiet machine and seconds on a loaded one: too few intervals, or too
# slow), and processes to attach to.
BUSY_CMD = ["python3", "-c",
            "import time\nend = time.monotonic() + 0.6\nwhile time.monotonic() < end: pass\n"]
SPIN = "import time\nwhile True: pass\n"
# Two spinning threads, started before anyone attaches, and a sleeping main
# thread: only counters on the existing threads see the spinning.
THREADS = ("import threading, time, sys\n"
           "def spin():\n    while True: pass\n"
           "for _ in range(2): threading.Thread(target=spin, daemon=True).start()\n"
           "print('ready', flush=True)\n"
           "time.sleep(600)\n")


def cpu_seconds(pid):
    """utime + stime of a process, from /proc (clock ticks)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(code):
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    if "print('ready'" in code:
        p.stdout.readline()
    return p


def stop(p):
    p.kill()
    p.wait()


def one_line_error(args, want, env=LINUX, status=None):
    rc, out, err = run(args, env)
    lines = [l for l in err.splitlines() if l.strip()]
    if rc == 0 or (status is not None and rc != status):
        fail(f"stat {' '.join(args)}: exit {rc}, expected an error\n{err}")
    elif len(lines) != 1 or not re.search(want, lines[0]):
        fail(f"stat {' '.join(args)}: expected one line matching {want!r}, got:\n{err}")


# ---- intervals -------------------------------------------------------------

def check_interval_times(times, elapsed, where):
    """Ascending, never before their deadline (absolute deadlines: no drift),
    none printed twice, the last one at the end."""
    if len(times) < 2:
        fail(f"{where}: {len(times)} intervals over {elapsed:.3f} s")
        return
    if any(b <= a for a, b in zip(times, times[1:])):
        fail(f"{where}: interval times not ascending: {times}")
    for k, t in enumerate(times[:-1]):
        if t < 0.1 * (k + 1) - 0.001:
            fail(f"{where}: interval {k} printed at {t}, before its deadline")
    if len(times) > elapsed / 0.1 + 2:
        fail(f"{where}: {len(times)} intervals in {elapsed:.3f} s at -I 100")
    if abs(times[-1] - elapsed) > 1e-6:
        fail(f"{where}: the last interval ends at {times[-1]}, the total at {elapsed}")


def intervals_json(env, events, cmd, where, extra=()):
    rc, _, err = run(["-I", "100", "--json", "-e", events] + list(extra) + ["--"] + cmd, env)
    if rc != 0:
        return fail(f"{where}: exit {rc}\n{err}")
    objs = []
    for line in err.splitlines():
        try:
            objs.append(json.loads(line, strict=True))
        except json.JSONDecodeError as e:
            return fail(f"{where}: a line that is not one JSON object ({e}): {line!r}")
    *ivs, total = objs
    if not ivs or "interval" not in ivs[0] or "command" not in total:
        return fail(f"{where}: expected interval objects then the totals:\n{err}")
    check_interval_times([o["interval"] for o in ivs], total["elapsed_ns"] / 1e9, where)
    if sum(o["interval_ns"] for o in ivs) != total["elapsed_ns"]:
        fail(f"{where}: interval_ns do not add up to elapsed_ns")
    for i, ev in enumerate(total["events"]):
        if ev["value"] is None:
            if any(o["events"][i]["value"] is not None for o in ivs):
                fail(f"{where}: {ev['name']} has intervals but no total")
            continue
        s = sum(o["events"][i]["value"] for o in ivs)
        scaled = ev["running_fraction"] < 1
        # Unscaled counts add up exactly; scaled ones within 1%.
        if (s != ev["value"]) if not scaled else abs(s - ev["value"]) > 0.01 * ev["value"] + 1:
            fail(f"{where}: {ev['name']}: intervals add up to {s}, the total is {ev['value']}")
    return ivs, total


def intervals_csv(env, events, cmd, where):
    rc, _, err = run(["-I", "100", "-x", ";", "-e", events, "--"] + cmd, env)
    if rc != 0:
        return fail(f"{where}: exit {rc}\n{err}")
    # perf stat -I -x's layout: time, value, unit, event, run time, percent,
    # metric, metric unit; the intervals alone, no totals after them.
    rows = [l.split(";") for l in err.splitlines() if l]
    ivs = [r for r in rows if len(r) == 8 and r[0].startswith(" ")]
    if len(ivs) != len(rows) or not ivs:
        return fail(f"{where}: rows of 8 fields (intervals) expected:\n{err}")
    names = {r[3] for r in ivs}
    if names != set(events.split(",")):
        fail(f"{where}: the intervals count {sorted(names)}, not {events}:\n{err}")
    times = sorted({float(r[0]) for r in ivs})
    if len(times) < 2:
        fail(f"{where}: fewer than 2 interval times:\n{err}")


def intervals_human(env, events, cmd, where):
    rc, _, err = run(["-I", "100", "-e", events, "--"] + cmd, env)
    if rc != 0:
        return fail(f"{where}: exit {rc}\n{err}")
    lines = err.splitlines()
    if not lines or not lines[0].startswith("#           time"):
        return fail(f"{where}: no interval header:\n{err}")
    rx = re.compile(r"^\s+(\d+\.\d{9})\s+([\d,.]+|<not supported>|<not counted>)\s+(msec\s+)?(\S+)")
    sums, n = {}, 0
    for l in lines[1:]:
        if not l.strip():
            break
        m = rx.match(l)
        if not m:
            return fail(f"{where}: not an interval line: {l!r}")
        n += 1
        if not m.group(2).startswith("<"):
            sums[m.group(4)] = sums.get(m.group(4), 0) + float(m.group(2).replace(",", ""))
    for name, s in sums.items():
        m = re.search(r"^\s+([\d,.]+) (msec )?\s*" + re.escape(name) + r"\b", err, re.M)
        if not m:
            fail(f"{where}: no total for {name}")
            continue
        total = float(m.group(1).replace(",", ""))
        slack = 0.005 * (n + 1) if m.group(2) else 0
        if abs(s - total) > slack + 1e-9:
            fail(f"{where}: {name}: intervals add up to {s}, the total is {total}")


LINUX_EVENTS = "task-clock,page-faults,context-switches"
intervals_json(LINUX, LINUX_EVENTS, BUSY_CMD, "linux -I 100 --json")
intervals_csv(LINUX, LINUX_EVENTS, BUSY_CMD, "linux -I 100 -x;")
intervals_human(LINUX, LINUX_EVENTS, BUSY_CMD, "linux -I 100")
# The sim (a Mac's process counters), and -a with every CPU's.
SIM_EVENTS = "instructions,cycles,branches"
intervals_json(SIM_NOROOT, SIM_EVENTS, BUSY_CMD, "sim unprivileged -I 100 --json")
intervals_json(SIM, SIM_EVENTS, BUSY_CMD, "sim -I 100 --json")
intervals_json(SIM, SIM_EVENTS, BUSY_CMD, "sim -a -I 100 --json", extra=["-a"])
intervals_human(SIM, SIM_EVENTS, BUSY_CMD, "sim -I 100")

# --timeout with a command: it is sent SIGTERM, and its status is dkperf's.
t0 = time.monotonic()
rc, _, err = run(["--timeout", "300", "-e", "task-clock", "--", "sleep", "30"])
if rc != 143 or time.monotonic() - t0 > 20:
    fail(f"--timeout 300 -- sleep 30: exit {rc} after {time.monotonic() - t0:.1f} s\n{err}")

# ---- attaching -------------------------------------------------------------

def attach(args, env=LINUX):
    rc, _, err = run(["--json"] + args, env)
    try:
        return rc, json.loads(err.splitlines()[-1], strict=True), err
    except (json.JSONDecodeError, IndexError):
        fail(f"stat {' '.join(args)}: exit {rc}, no JSON:\n{err}")
        return rc, None, err


def value(rep, name):
    return next(e["value"] for e in rep["events"] if e["name"] == name)


# A sleeping process: next to no CPU time. It says when its start-up (the
# loader, the interpreter) is over, so that only its sleep is counted.
sleeper = subprocess.Popen([sys.executable, "-c",
                            "import sys, time; print('ready', flush=True); time.sleep(600)"],
                           stdout=subprocess.PIPE, text=True)
sleeper.stdout.readline()
rc, rep, err = attach(["-p", str(sleeper.pid), "--timeout", "500",
                       "-e", "task-clock,context-switches"])
if rep is not None:
    el = rep["elapsed_ns"] / 1e9
    if rc != 0 or not 0.45 <= el <= 10:
        fail(f"-p sleeping --timeout 500: exit {rc}, elapsed {el}")
    if value(rep, "task-clock") > 20e6 or value(rep, "context-switches") > 20:
        fail(f"-p sleeping: {rep['events']}")
    if f"process {sleeper.pid}" not in rep["scope"] or rep["processes"] != [sleeper.pid]:
        fail(f"-p sleeping: scope {rep['scope']!r}")

# A busy process: its task-clock is the CPU time the kernel gives it meanwhile.
busy = start(SPIN)
time.sleep(0.2)
before = cpu_seconds(busy.pid)
rc, rep, err = attach(["-p", str(busy.pid), "--timeout", "1000", "-e", "task-clock"])
after = cpu_seconds(busy.pid)
if rep is not None:
    tc, el = value(rep, "task-clock") / 1e9, rep["elapsed_ns"] / 1e9
    if rc != 0 or not (after - before) - 0.1 - 0.3 * el <= tc <= (after - before) + 0.1:
        fail(f"-p busy: task-clock {tc:.3f} s, the kernel says {after - before:.3f} s "
             f"of CPU over {el:.3f} s\n{err}")
    if tc < 0.02:
        fail(f"-p busy: task-clock {tc:.3f} s over {el:.3f} s")
stop(busy)

# A process whose threads run before dkperf attaches: each is counted, not
# only the (sleeping) first one; -t counts one thread alone.
threaded = start(THREADS)
tids = sorted(int(t) for t in os.listdir(f"/proc/{threaded.pid}/task"))
spinners = [t for t in tids if t != threaded.pid]
before = cpu_seconds(threaded.pid)
rc, rep, err = attach(["-p", str(threaded.pid), "--timeout", "600", "-e", "task-clock"])
after = cpu_seconds(threaded.pid)
if rep is not None:
    # Counting the first thread alone would give next to nothing.
    tc, el, cpu = value(rep, "task-clock") / 1e9, rep["elapsed_ns"] / 1e9, after - before
    if rc != 0 or tc < max(0.02, 0.5 * cpu - 0.05) or tc > cpu + 0.1 or \
            "3 threads" not in rep["scope"]:
        fail(f"-p of a process with 2 busy threads: task-clock {tc:.3f} s over {el:.3f} s, "
             f"the kernel says {cpu:.3f} s of CPU; scope {rep['scope']!r}")
rc, rep, err = attach(["-t", str(threaded.pid), "--timeout", "400", "-e", "task-clock"])
if rep is not None and (rc != 0 or value(rep, "task-clock") > 20e6 or
                        rep["scope"] != f"thread {threaded.pid} (not the threads it starts)"):
    fail(f"-t of a sleeping thread: exit {rc}, {rep['scope']!r} {rep['events']}")
rc, rep, err = attach(["-t", str(spinners[0]), "--timeout", "600", "-e", "task-clock"])
if rep is not None:
    tc, el = value(rep, "task-clock") / 1e9, rep["elapsed_ns"] / 1e9
    if rc != 0 or tc < 0.02 or tc > 1.1 * el or rep["threads"] != [spinners[0]]:
        fail(f"-t of a busy thread: task-clock {tc:.3f} s over {el:.3f} s")
stop(threaded)

# Intervals while attached, ended by Ctrl-C: the last partial interval and
# the totals are printed, and dkperf then ends by the signal.
p = subprocess.Popen([dkperf, "stat", "-p", str(sleeper.pid), "-I", "100", "--json", "-e",
                      "task-clock"], env=LINUX, stderr=subprocess.PIPE)
first = p.stderr.readline()  # one interval is out: counting is on
p.send_signal(signal.SIGINT)
rest = p.stderr.read().decode()
p.wait(timeout=60)
objs = [json.loads(l, strict=True) for l in [first.decode()] + rest.splitlines() if l.strip()]
if p.returncode != -signal.SIGINT or len(objs) < 3 or "interval" not in objs[-2] or \
        "events" not in objs[-1]:
    fail(f"-p -I then SIGINT: exit {p.returncode}, output:\n{first.decode()}{rest}")
elif abs(objs[-2]["interval"] - objs[-1]["elapsed_ns"] / 1e9) > 1e-6:
    fail("-p -I then SIGINT: the last interval does not end with the totals")

# The same with a command: Ctrl-C reaches it, and its end ends the count.
p = subprocess.Popen([dkperf, "stat", "-I", "100", "--json", "-e", "task-clock", "--", "sleep",
                      "30"], env=LINUX, stderr=subprocess.PIPE)
first = p.stderr.readline()
p.send_signal(signal.SIGINT)
rest = p.stderr.read().decode()
p.wait(timeout=60)
objs = [json.loads(l, strict=True) for l in [first.decode()] + rest.splitlines() if l.strip()]
if p.returncode != -signal.SIGINT or len(objs) < 3 or "interval" not in objs[-2] or \
        objs[-1].get("exit_status") != 130 or objs[-1]["elapsed_ns"] > 20e9:
    fail(f"-I -- sleep 30 then SIGINT: exit {p.returncode}, output:\n{first.decode()}{rest}")

# Several processes at once, and one that exits while attached.
short = subprocess.Popen(["sleep", "0.5"])
t0 = time.monotonic()
rc, rep, err = attach(["-p", f"{sleeper.pid},{short.pid}", "--timeout", "2500", "-e",
                       "task-clock"])
short.wait()
if rep is not None:
    m = re.search(rf"process {short.pid} exited after (\d+\.\d+) s", rep["notes"])
    if rc != 0 or not m or not 0.1 <= float(m.group(1)) <= 2.4:
        fail(f"-p with one exiting: exit {rc}, notes {rep['notes']!r}")
    if rep["elapsed_ns"] < 2.4e9:  # the other one was counted to the timeout
        fail(f"-p with one exiting: ended after {rep['elapsed_ns'] / 1e9:.3f} s")
short = subprocess.Popen(["sleep", "0.5"])
rc, _, err = run(["-p", str(short.pid), "-e", "task-clock"])
short.wait()
if rc != 0 or not re.search(rf"process {short.pid} exited after \d+\.\d+ s", err):
    fail(f"-p of a process that exits: exit {rc}\n{err}")

# ---- misuse: one line each, non-zero ----------------------------------------
with open("/proc/sys/kernel/pid_max") as f:
    nopid = int(f.read()) + 1
spid = str(sleeper.pid)
one_line_error(["-p", str(nopid), "-e", "task-clock"], rf"-p {nopid}: there is no process")
one_line_error(["-t", str(nopid), "-e", "task-clock"], rf"-t {nopid}: there is no thread")
# A process that has exited but is not reaped yet: said so, not "no process".
zombie = subprocess.Popen(["true"])
for _ in range(200):
    with open(f"/proc/{zombie.pid}/stat") as f:
        if f.read().rsplit(")", 1)[1].split()[0] == "Z":
            break
    time.sleep(0.01)
one_line_error(["-p", str(zombie.pid), "-e", "task-clock"],
               rf"-p {zombie.pid}: process {zombie.pid} has exited \(a zombie")
zombie.wait()
one_line_error(["-t", spid, "-a"], r"-t and -a cannot be used together", status=2)
one_line_error(["-p", spid, "--per-core"], r"--per-core cannot be used with -p", status=2)
one_line_error(["-t", spid, "--per-level"], r"--per-level cannot be used with -t: -t counts whole "
               r"threads, not split by level", status=2)
one_line_error(["-p", spid, "--per-level", "--timeout", "100", "-e", "task-clock"],
               r"--per-level without -a needs the processes' counts split by performance level")

one_line_error(["-t", spid, "-C", "0"], r"-t and -C cannot be used together", status=2)
# -p with -a: every CPU while the process runs, and the scope says so.
rc, rep, err = attach(["-p", spid, "-a", "--timeout", "300", "-e", "task-clock"])
if rep is not None:
    el = rep["elapsed_ns"] / 1e9
    if rc != 0 or not rep["scope"].startswith("every CPU") or \
            f"while process {spid} ran" not in rep["scope"] or \
            value(rep, "task-clock") / 1e9 < 0.9 * el:
        fail(f"-p -a: exit {rc}, scope {rep['scope']!r}, task-clock "
             f"{value(rep, 'task-clock')} over {el:.3f} s")
rc, rep, err = attach(["-p", spid, "-C", "0", "-A", "--timeout", "200", "-e", "task-clock"])
if rep is not None and (rc != 0 or [r["cpu"] for r in rep.get("rows", [])] != [0]):
    fail(f"-p -C 0 -A: exit {rc}, rows {rep.get('rows')}")
one_line_error(["-p", spid, "--", "true"], r"-p counts what already runs: give no command",
               status=2)
one_line_error(["-t", spid, "true"], r"-t counts what already runs", status=2)
one_line_error(["-p", spid, "-t", spid], r"-p and -t cannot be used together", status=2)
one_line_error(["-p", spid, "-r", "2"], r"-r repeats a command", status=2)
one_line_error(["-p", f"{spid},{spid}"], r"given twice", status=2)
one_line_error(["-p", "0"], r"-p 0: give process ids above 0", status=2)
one_line_error(["-p", "12x"], r"give process ids", status=2)
one_line_error(["-I", "5", "true"], r"-I 5: give milliseconds from 10", status=2)
one_line_error(["--timeout", "9", "true"], r"--timeout 9: give milliseconds from 10", status=2)
one_line_error(["-I", "100", "-r", "2", "true"], r"-I and -r cannot be used together", status=2)
one_line_error(["-p", spid, "-I", "100", "-I"], r"-I needs a value", status=2)
# Another user's process: the kernel's rule is named.
setpriv = shutil.which("setpriv")
if os.geteuid() == 0 and setpriv:
    p = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", dkperf,
                        "stat", "-p", spid, "--timeout", "100", "-e", "task-clock"], env=LINUX,
                       capture_output=True)
    err = p.stderr.decode()
    if p.returncode != 1 or len(err.splitlines()) != 1 or \
            not re.search(r"-p \d+: counting process \d+ .*refused.*CAP_SYS_PTRACE.*"
                          r"perf_event_paranoid", err):
        fail(f"-p of root's process as nobody: exit {p.returncode}\n{err}")

# ---- the simulated Mac ------------------------------------------------------
busy = start(SPIN)
for env, backend in ((SIM, "kperf"), (SIM_NOROOT, "selfcounts")):
    rc, rep, err = attach(["-p", str(busy.pid), "--timeout", "400"], env)
    if rep is None:
        continue
    if rc != 0 or rep["backend"] != backend or \
            rep["scope"] != f"process {busy.pid} (its own threads)":
        fail(f"sim {backend} -p: exit {rc}, backend {rep['backend']}, scope {rep['scope']!r}")
    ev = {e["name"]: e for e in rep["events"]}
    if not ev["instructions"]["value"] or not ev["cycles"]["value"] or ev["branches"]["supported"]:
        fail(f"sim {backend} -p: instructions and cycles only expected: {rep['events']}")
    if backend == "kperf" and "-a -p PID" not in ev["branches"]["reason"]:
        fail(f"sim kperf -p: the reason does not point at -a: {ev['branches']['reason']!r}")
    # The human form says which scope was measured.
    rc, _, err = run(["-p", str(busy.pid), "--timeout", "200"], env)
    if rc != 0 or f"scope: process {busy.pid} (its own threads) ({backend} backend)" not in err:
        fail(f"sim {backend} -p: no scope line:\n{err}")
    one_line_error(["-t", str(busy.pid), "--timeout", "200"],
                   r"-t \d+: .*macOS counts one thread only from inside its own process", env)
# Without -a, a process's instructions and cycles split by level (P and E
# on the simulated Macs), by default and with --per-level, adding up to the
# totals; -A and --per-core split CPUs, which whole processes are not.
for env, backend in ((SIM, "kperf"), (SIM_NOROOT, "selfcounts")):
    rc, rep, err = attach(["-p", str(busy.pid), "--timeout", "300", "--per-level", "-e",
                           "instructions,cycles"], env)
    if rep is None:
        continue
    split = {}
    for lv in rep.get("levels", []):
        split.setdefault(lv["event"], {})[lv["level"]] = lv["value"]
    if rc != 0 or sorted(split) != ["cycles", "instructions"] or \
            any(sorted(v) != ["E", "P"] or sum(v.values()) != value(rep, name) or not v["P"]
                for name, v in split.items()):
        fail(f"sim {backend} -p --per-level: exit {rc}, {rep['events']}, levels {split}")
    rc, _, err = run(["-p", str(busy.pid), "--timeout", "200", "-e", "instructions"], env)
    if rc != 0 or "by CPU performance level:" not in err or not re.search(r"\n P +[\d,]+ +instr", err):
        fail(f"sim {backend} -p: no P/E split shown:\n{err}")
one_line_error(["-p", str(busy.pid), "-A", "--timeout", "200"],
               r"-A cannot be used with -p: -p counts whole processes, not split by CPU \(add -a",
               SIM)
# With root, -a -p counts every event on every CPU while the process runs;
# per level, P and E add up to the total.
rc, rep, err = attach(["-a", "-p", str(busy.pid), "--timeout", "300", "--per-level"], SIM)
if rep is not None:
    ev = {e["name"]: e for e in rep["events"]}
    levels = {}
    for r in rep.get("rows", []):
        levels.setdefault(r["event"], []).append(r["value"])
    if rc != 0 or rep["backend"] != "kperf" or not rep["scope"].startswith("every CPU") or \
            not ev["branches"]["supported"] or not ev["branches"]["value"] or \
            any(sum(v) != ev[name]["value"] for name, v in levels.items()) or len(levels) != len(ev):
        fail(f"sim -a -p --per-level: exit {rc}, scope {rep['scope']!r}, {rep['events']}, "
             f"rows {rep.get('rows')}")
rc, _, err = run(["-a", "-p", str(busy.pid), "--timeout", "200", "-A"], SIM)
if rc != 0 or f"while process {busy.pid} ran (kperf backend), per cpu" not in err or \
        "seconds user" in err:
    fail(f"sim -a -p -A: exit {rc}:\n{err}")
stop(busy)
# A process reaped at once by its parent: macOS cannot read it any more, so
# its counts are those of the last reading before its exit, not 0.
parent = subprocess.Popen(["sh", "-c", f"{sys.executable} -c 'import time\nt = time.time()\n"
                           f"while time.time() - t < 0.8: pass' & echo $!; wait; sleep 30"],
                          stdout=subprocess.PIPE)
child = int(parent.stdout.readline())
rc, rep, err = attach(["-p", str(child), "-e", "instructions"], SIM_NOROOT)
stop(parent)
if rep is not None and (rc != 0 or not value(rep, "instructions") or
                        f"process {child} exited after" not in rep["notes"]):
    fail(f"sim -p of a process reaped at its exit: exit {rc}, {rep['events']}, "
         f"notes {rep['notes']!r}")
# Nothing is left held when attaching fails on the sim (machine state from outside).
state = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"dkperf-attach-state-{os.getpid()}")
env = dict(SIM, DKPERF_SIM_STATE=state)
one_line_error(["-p", str(nopid)], rf"there is no process {nopid}", env)
one_line_error(["-t", spid], r"macOS counts one thread only", env)
if os.path.exists(state):
    with open(state) as f:
        held = f.read()
    os.unlink(state)
    if re.search(r"^(force_all_ctrs|counting|thread_counting) (?!0\b|0x0\b)", held, re.M):
        fail(f"sim: a failed attach left state behind:\n{held}")

stop(sleeper)
if failures:
    sys.exit(f"{len(failures)} failure(s)")
print("ok")
