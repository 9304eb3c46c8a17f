#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Change calibration: are dkbench's change verdicts and intervals honest?

Runs calib-bodies (examples/bench_example.c's two bodies and a
layout-sensitive one) TRIALS times, each run measuring every benchmark in
its fresh processes (dkbench's default, 10):

  trial K:  calib-bodies      --save-baseline base_K --json saved.json
            calib-bodies      --baseline base_K      --json same.json
            calib-bodies-slow --baseline base_K      --json slow.json

and prints, per benchmark:
  false verdicts  "improved" or "regressed" of the time measure against a
                  baseline of the same code (target: at most 5 of 40);
  power           "regressed" against the slow build, each body made 5%
                  slower (target: at least 36 of 40; a verdict "unresolved"
                  counts as met only when it says what it resolves, its
                  "resolution", and is listed apart);
  coverage        how many of the TRIALS intervals of the unchanged runs
                  (same.json) hold the median of their point estimates
                  (target: at least 34 of 40, scaled to TRIALS);
  the spread of the point estimates between runs, the median interval
  half-width of one, the processes a run measured and the share of their
  variance that lies between processes, and the slow build's estimates over
  the unchanged one's, medians and means (its 5% made real).

Then AB_TRIALS times (--ab-trials, 5), one A/B invocation each with the
default stopping rule:

  calib-bodies-2pct --ab calib-bodies       --json ab_K.json    (each body 2% slower)
  calib-bodies      --ab <copy of itself>   --json abid_K.json  (the same code)

and prints per benchmark the time verdicts, the pairs each took, and the
wall time per benchmark (target: "regressed" for every benchmark of the 2%
build within 10 s a benchmark; with the same code "improved" or "regressed"
rarely).

Exit status 0 when every run ran and its report was read, 1 otherwise: the
targets are judged by whoever reads the table (the machine is shared).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

VERDICTS = ["improved", "regressed", "within noise", "no change", "unresolved"]


class Failure(Exception):
    pass


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise Failure("%s exited %d: %s" % (" ".join(cmd), p.returncode,
                                            p.stderr.strip() or p.stdout.strip() or "(no output)"))


def num(x):
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def read_report(path, cmd):
    """{benchmark: time measure} of a dkbench JSON report; the measure is a
    dict of what could be read, with 'missing' listing the fields not found."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except OSError as e:
        raise Failure("%s wrote no JSON report %s: %s" % (" ".join(cmd), path, e.strerror))
    except ValueError as e:
        raise Failure("%s: its JSON report %s does not parse: %s" % (" ".join(cmd), path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise Failure("%s: its JSON report %s has no results array" % (" ".join(cmd), path))
    out = {}
    for r in doc["results"]:
        if not isinstance(r, dict) or not isinstance(r.get("name"), str):
            continue
        got = {"missing": []}
        ms = [m for m in r.get("measures") or [] if isinstance(m, dict) and m.get("name") == "time"]
        if not ms:
            got["missing"].append("measure time")
            out[r["name"]] = got
            continue
        m = ms[0]
        s = m.get("slope") if isinstance(m.get("slope"), dict) else {}
        for k in ("point", "lo", "hi"):
            got[k] = num(s.get(k))
            if got[k] is None:
                got["missing"].append("slope." + k)
        ch = m.get("change")
        got["change"] = ch if isinstance(ch, dict) else None
        if isinstance(ch, dict):
            got["verdict"] = ch.get("verdict") if isinstance(ch.get("verdict"), str) else None
            if got["verdict"] is None:
                got["missing"].append("change.verdict")
            got["resolution"] = num(ch.get("resolution"))
            rel = ch.get("rel") if isinstance(ch.get("rel"), dict) else {}
            got["rel"] = tuple(num(rel.get(k)) for k in ("point", "lo", "hi"))
            got["p_value"] = num(ch.get("p_value"))
            got["basis"] = ch.get("basis") if isinstance(ch.get("basis"), str) else None
            if got["basis"] is None:
                got["missing"].append("change.basis")
        # The multi-process model: processes per result (one_process says
        # why one, or null), and per measure their estimates or null.
        got["processes"] = num(r.get("processes"))
        if got["processes"] is None:
            got["missing"].append("processes")
        got["one_process"] = r.get("one_process") if isinstance(r.get("one_process"), str) else None
        if "processes" not in m:
            got["missing"].append("measure processes")
        pr = m.get("processes")
        if isinstance(pr, dict):
            got["between_share"] = num(pr.get("between_share"))
            est = pr.get("estimates")
            got["estimates"] = [num(x) for x in est] if isinstance(est, list) else []
        out[r["name"]] = got
    return out


def median_of(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def pct_list(xs):
    return ", ".join("+-%.2f%%" % (100 * x) for x in sorted(xs))


def mark(ok):
    return "MET" if ok else "MISSED"


def ab_report(runs, n):
    """Prints the A/B trials; returns the problems found."""
    problems = []
    print("A/B, one --ab invocation a trial, default stopping rule (%d trials)" % n)
    for kind, title in (("ab", "2% slower build --ab the build"),
                        ("abid", "the build --ab a copy of itself")):
        names = []
        for _, rep in runs[kind]:
            names += [x for x in rep if x not in names]
        walls = [w / len(rep) for w, rep in runs[kind] if rep]
        print("  %s: wall per benchmark %s" %
              (title, ", ".join("%.1f s" % w for w in walls) or "none"))
        if walls:
            print("    max %.1f s a benchmark   target <= 10 s   %s" %
                  (max(walls), mark(max(walls) <= 10)))
        for name in names:
            gs = [rep.get(name) for _, rep in runs[kind]]
            vs = [g.get("verdict") if g else None for g in gs]
            c = dict((v, vs.count(v)) for v in VERDICTS + [None] if vs.count(v))
            pairs = [int(g["processes"]) for g in gs if g and g.get("processes")]
            rels = [g["rel"][0] for g in gs if g and g.get("rel") and g["rel"][0] is not None]
            print("  %-20s %s" % (name, ", ".join("%s %d" % (v or "not read", k)
                                                  for v, k in c.items())))
            print("    pairs %s; change %s" %
                  (", ".join(str(p) for p in pairs),
                   ", ".join("%+.2f%%" % (100 * r) for r in rels)))
            res = [g.get("resolution") for g in gs if g and g.get("verdict") == "unresolved"
                   and g.get("resolution") is not None]
            if res:
                print("    unresolved resolve: %s" % pct_list(res))
            bases = sorted(set(g.get("basis") for g in gs if g and g.get("basis")))
            if bases != ["pairs"]:
                problems.append("%s %s: change basis %s, not pairs" % (kind, name, bases))
            if kind == "ab":
                print("    regressed %d of %d   target %d   %s" %
                      (c.get("regressed", 0), n, n, mark(c.get("regressed", 0) == n)))
            else:
                k = c.get("improved", 0) + c.get("regressed", 0)
                print("    improved+regressed %d of %d (should be rare)" % (k, n))
        print()
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bodies", required=True, help="the calib-bodies program")
    ap.add_argument("--slow", required=True, help="the calib-bodies-slow program")
    ap.add_argument("--slow-2pct", help="the calib-bodies-2pct program (for --ab-trials)")
    ap.add_argument("--trials", type=int, default=40, help="trials (40)")
    ap.add_argument("--ab-trials", type=int, default=5,
                    help="A/B trials, each one --ab invocation of the 2%% slower build and one "
                    "of the same code (5; 0: none)")
    ap.add_argument("--json-dir", help="keep every run's JSON report here (default: a temporary "
                    "folder, removed at the end)")
    ap.add_argument("--filter", default="", help="benchmark regex passed to both programs")
    a = ap.parse_args()
    if a.trials < 2:
        ap.error("--trials must be at least 2")
    if a.ab_trials < 0:
        ap.error("--ab-trials must be 0 or more")
    if a.ab_trials and not a.slow_2pct:
        ap.error("--ab-trials needs --slow-2pct (or --ab-trials 0)")
    for exe in (a.bodies, a.slow) + ((a.slow_2pct,) if a.ab_trials else ()):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            print("change_calibration: %s: not an executable file" % exe, file=sys.stderr)
            return 1
    tmp = tempfile.mkdtemp(prefix="change-calibration-")
    jdir = a.json_dir or tmp
    os.makedirs(jdir, exist_ok=True)
    results = os.path.join(tmp, "results")
    extra = [a.filter] if a.filter else []
    t0 = time.monotonic()
    runs = {"saved": [], "same": [], "slow": [], "ab": [], "abid": []}
    problems = []
    try:
        for k in range(a.trials):
            base = "base_%d" % k
            steps = [("saved", a.bodies, ["--save-baseline", base]),
                     ("same", a.bodies, ["--baseline", base]),
                     ("slow", a.slow, ["--baseline", base])]
            for kind, exe, args in steps:
                path = os.path.join(jdir, "%s_%d.json" % (kind, k))
                cmd = [exe] + args + ["--results-dir", results, "--json", path, "-q"] + extra
                try:
                    run(cmd)
                    runs[kind].append(read_report(path, cmd))
                except Failure as e:
                    problems.append(str(e))
                    runs[kind].append({})
                    print("change_calibration: trial %d: %s" % (k, e), file=sys.stderr)
            if sys.stderr.isatty():
                sys.stderr.write("\rchange_calibration: trial %d of %d" % (k + 1, a.trials))
                sys.stderr.flush()
        if sys.stderr.isatty():
            sys.stderr.write("\n")
        if a.ab_trials:
            # A copy, so that --ab compares two programs of the same code.
            twin = os.path.join(tmp, "calib-bodies-copy")
            shutil.copy2(a.bodies, twin)
            for k in range(a.ab_trials):
                for kind, exe, other in (("ab", a.slow_2pct, a.bodies), ("abid", a.bodies, twin)):
                    path = os.path.join(jdir, "%s_%d.json" % (kind, k))
                    cmd = [exe, "--ab", other, "--results-dir", results, "--json", path,
                           "-q"] + extra
                    t = time.monotonic()
                    try:
                        run(cmd)
                        runs[kind].append((time.monotonic() - t, read_report(path, cmd)))
                    except Failure as e:
                        problems.append(str(e))
                        runs[kind].append((time.monotonic() - t, {}))
                        print("change_calibration: A/B trial %d: %s" % (k, e), file=sys.stderr)
                if sys.stderr.isatty():
                    sys.stderr.write("\rchange_calibration: A/B trial %d of %d" %
                                     (k + 1, a.ab_trials))
                    sys.stderr.flush()
            if sys.stderr.isatty():
                sys.stderr.write("\n")
    except KeyboardInterrupt:
        print("\nchange_calibration: interrupted", file=sys.stderr)
        return 1
    finally:
        if not a.json_dir:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            shutil.rmtree(results, ignore_errors=True)
    wall = time.monotonic() - t0

    names = []
    for rep in runs["same"] + runs["saved"]:
        for n in rep:
            if n not in names:
                names.append(n)
    T = a.trials
    max_false = round(5 * T / 40)
    min_power = -(-36 * T // 40)
    min_cover = -(-34 * T // 40)
    for name in names:
        missing = set()
        same = [rep.get(name) for rep in runs["same"]]
        slow = [rep.get(name) for rep in runs["slow"]]
        saved = [rep.get(name) for rep in runs["saved"]]
        for g in same + slow + saved:
            if g is None:
                missing.add("result")
            else:
                missing.update(g["missing"])

        def count(gs):
            c = dict((v, 0) for v in VERDICTS)
            c["not read"] = 0
            c["other"] = 0
            unsaid = 0
            for g in gs:
                v = g.get("verdict") if g else None
                if v is None:
                    c["not read"] += 1
                elif v in c:
                    c[v] += 1
                else:
                    c["other"] += 1
                if v == "unresolved" and g.get("resolution") is None:
                    unsaid += 1
            return c, unsaid

        cs, _ = count(same)
        cw, unsaid = count(slow)
        false_n = cs["improved"] + cs["regressed"]
        power_n = cw["regressed"]
        said = cw["unresolved"] - unsaid
        power_ok = power_n + said >= min_power
        pts = [g.get("point") for g in same if g]
        med = median_of(pts)
        ivs = [(g.get("lo"), g.get("hi")) for g in same if g and g.get("lo") is not None
               and g.get("hi") is not None]
        cover = sum(1 for lo, hi in ivs if med is not None and lo <= med <= hi)
        halfw = median_of([(hi - lo) / 2 / med for lo, hi in ivs]) if med else None
        good = [p for p in pts if p is not None]
        spread = statistics.pstdev(good) / med if med and len(good) > 1 else None
        lo_pt, hi_pt = (min(good), max(good)) if good else (None, None)
        slow_med = median_of([g.get("point") for g in slow if g])
        resol = [g.get("resolution") for g in slow if g and g.get("verdict") == "unresolved"
                 and g.get("resolution") is not None]
        resol_same = [g.get("resolution") for g in same if g and g.get("verdict") == "unresolved"
                      and g.get("resolution") is not None]
        nproc = [g.get("processes") for g in same + slow + saved if g and g.get("processes")]
        share = [g.get("between_share") for g in same + slow + saved
                 if g and g.get("between_share") is not None]
        bases = sorted(set(g.get("basis") for g in same + slow if g and g.get("basis")))
        ones = sorted(set(g.get("one_process") for g in same + slow + saved
                          if g and g.get("one_process")))

        print("%s (%d trials)" % (name, T))
        if nproc:
            print("  processes a run: %d to %d; between-process share of the variance: %s; "
                  "change basis: %s" %
                  (min(nproc), max(nproc),
                   "median %.3f (%.3f to %.3f)" % (statistics.median(share), min(share),
                                                    max(share)) if share else "none given",
                   ", ".join(bases) or "none"))
        if ones:
            print("  measured in one process: %s" % "; ".join(ones))
        print("  false verdicts, same code:  improved %d, regressed %d, within noise %d, "
              "no change %d, unresolved %d%s" %
              (cs["improved"], cs["regressed"], cs["within noise"], cs["no change"],
               cs["unresolved"], (", not read %d" % cs["not read"]) if cs["not read"] else "") +
              ("; other %d" % cs["other"] if cs["other"] else ""))
        if resol_same:
            print("    unresolved resolve: %s" % pct_list(resol_same))
        print("    improved+regressed %d of %d   target <= %d   %s" %
              (false_n, T, max_false, mark(false_n <= max_false)))
        print("  power, 5%% slower build:     regressed %d, improved %d, within noise %d, "
              "no change %d, unresolved %d (%d not saying what they resolve)%s" %
              (cw["regressed"], cw["improved"], cw["within noise"], cw["no change"],
               cw["unresolved"], unsaid,
               (", not read %d" % cw["not read"]) if cw["not read"] else ""))
        if resol:
            print("    unresolved resolve: %s" % pct_list(resol))
        print("    regressed %d + unresolved saying what they resolve %d = %d of %d   "
              "target >= %d   %s" % (power_n, said, power_n + said, T, min_power, mark(power_ok)))
        print("  coverage: %d of %d intervals hold the median of the %d estimates (%s)   "
              "target >= %d   %s" %
              (cover, len(ivs), len(good), "%.3f ns" % med if med else "none",
               min_cover, mark(cover >= min_cover and len(ivs) == T)))
        if med:
            print("    between processes: sd %.2f%% of the median, range %.2f to %.2f ns; "
                  "within one: median half-width %.2f%%" %
                  (100 * spread if spread is not None else float("nan"), lo_pt, hi_pt,
                   100 * halfw if halfw is not None else float("nan")))
        slow_pts = [g.get("point") for g in slow if g and g.get("point") is not None]
        if med and slow_med:
            # Means too: the median of a body with two modes jumps between them.
            print("  slow build / same build, %d processes each: medians %.4f, means %.4f" %
                  (len(good), slow_med / med, statistics.mean(slow_pts) / statistics.mean(good)))
        if missing:
            print("  not in the JSON: %s" % ", ".join(sorted(missing)))
            problems.append("%s: fields missing from the JSON: %s" % (name, ", ".join(sorted(missing))))
        print()
    if a.ab_trials:
        problems += ab_report(runs, a.ab_trials)
    print("wall time of the experiment: %.1f s (%d trials, %d A/B trials, %d runs)" %
          (wall, T, a.ab_trials, sum(len(v) for v in runs.values())))
    if not names:
        problems.append("no benchmark was read from any report")
    if problems:
        print("change_calibration: %d problem(s); the first: %s" % (len(problems), problems[0]),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
