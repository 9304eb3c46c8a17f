#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Performance sweep: large inputs that are valid but built to hurt, each
run through a tool with a bound on its wall time. The bound is ten times
the target, so that a quiet machine never misses it but a reader whose time
grows with the square of its input does. Every case must also exit 0 with
the output it names, and never crash or stay silent. Each case's time (and
its CPU time, which a busy machine changes less) is printed.

Cases are rows of CASES: an input (made once, by a function of INPUTS, and
shared by every case that names it), the command, the target in seconds,
and a check of the output (a check marked refusal wants the input refused,
in bounded time, with one error line). Add a case by adding a row (and its
input).

usage: perf.py --dkperf BIN [--bench-example BIN --flood-baseline BIN] [--flood-pids BIN]
               [--only 'NAME|...'] [--keep DIR]
(the libdkbench cases run with --bench-example only, the pids case with --flood-pids)
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sweeplib  # noqa: E402
from wide_baseline import write_wide_baseline  # noqa: E402
from recording import (HEADER, chunk, chunked, comm, deep, end, event, many_maps, map_,  # noqa: E402
                       meta, nodes, remaps, sample, shared_chain, svarint, varint)

DEPTH, SAMPLES = 300000, 3000
# The frames report keeps of a deeper chain: its innermost (REPORT_MAX_STACK).
KEPT = 1024
SLACK = 10  # the bound: ten times the target


# ---- inputs: name -> function(path) that writes it ----------------------

def deep_chain(path):
    """One chain of 300,000 frames, every one of 3000 samples on its leaf
    (about 620 KB): a reader that walks each sample's stack again is
    quadratic here."""
    with open(path, "wb") as f:
        f.write(deep(DEPTH, SAMPLES, 1))


EVENTS = 20000


def events(path):
    """The deep chain, its samples all of the first of 20,000 events
    (about 850 KB): a reader that goes through every sample and stack node
    for each event is quadratic here."""
    with open(path, "wb") as f:
        f.write(deep(DEPTH, SAMPLES, 1, nevents=EVENTS))


SAMPLED = 240000


def events_sampled(path):
    """240,000 events, a sample of each on a stack of its own (about 6 MB):
    a report that goes through every entry or stack node for each event
    that has samples is quadratic here."""
    evs = [event(i, "e%d" % i) for i in range(SAMPLED)]
    # A sample naming its event (change bit 0x01) on node i + 1.
    smp = [b"s" + varint((i + 1) << 3 | 1) + b"\x01" + varint(i) + svarint(1000)
           for i in range(SAMPLED)]
    body = [chunk(meta("comm", "ev") + nodes([(0, 0x1000)] + [(0, 0x10)] * (SAMPLED - 1)))]
    with open(path, "wb") as f:
        f.write(HEADER + b"".join(body) + b"".join(chunk(b"".join(evs[i:i + 4000]))
                                                   for i in range(0, SAMPLED, 4000))
                + b"".join(chunk(b"".join(smp[i:i + 4000])) for i in range(0, SAMPLED, 4000))
                + chunk(end(SAMPLED)))


COMMS = 200000


def renamed(path):
    """One process renamed before each of its 200,000 samples (about 3 MB):
    a reader that looks through every comm record for each sample is
    quadratic here."""
    body = meta("comm", "c") + event(0, "cpu-clock") + map_(1, 0x400000, 0x1000, "/nonexistent/c.so") \
        + nodes([(0, 0x400100)])
    # Each chunk starts the sample fields again: the pid is given in each.
    recs = [comm(1, "c%d" % i) + sample(1, pid=1 if i % 4000 == 0 else None) for i in range(COMMS)]
    chunks = [chunk(body)] + [chunk(b"".join(recs[i:i + 4000])) for i in range(0, COMMS, 4000)]
    with open(path, "wb") as f:
        f.write(HEADER + b"".join(chunks) + chunk(end(COMMS)))


METAS = 60000


def metas(path):
    """60,000 meta records, then 60,000 samples each of another process
    that has no name of its own (about 1 MB): a reader that looks
    through the meta records for each process's fallback name is quadratic
    here."""
    head = [meta("k%d" % i, "v") for i in range(METAS)] + [
        meta("comm", "c"), event(0, "cpu-clock"),
        map_(1, 0x400000, 0x1000, "/nonexistent/c.so"), nodes([(0, 0x400100)])]
    recs = [sample(1, pid=i + 2) for i in range(METAS)]
    with open(path, "wb") as f:
        f.write(HEADER + b"".join(chunked(head) + chunked(recs)) + chunk(end(METAS)))


MAPS = 200000


def maps(path):
    """One process with 200,000 maps of one image side by side and a
    frame in each (about 8 MB): a reader that looks through every map for
    each address is quadratic here."""
    with open(path, "wb") as f:
        f.write(many_maps(MAPS))


REMAPS, REMAP_IMAGES = 200000, 1000


def remapped(path):
    """One process that maps an image over one address 200,000 times, a
    sample after each (about 7 MB): a reader that builds each map's view of
    the process's maps anew is quadratic here."""
    with open(path, "wb") as f:
        f.write(remaps(REMAPS, REMAP_IMAGES))


def nested(path):
    """As remapped, each map 4 KiB longer than the one before, over all of
    them: a reader that keeps every map that covers each range is
    quadratic here."""
    with open(path, "wb") as f:
        f.write(remaps(REMAPS, REMAP_IMAGES, nested=True))


def remapped_deep(path):
    """20,000 maps over one address, each followed by a sample of a
    200-frame stack there (about 800 KB): each generation of the maps
    translates the stack anew, so report refuses it past its bound on
    translations rather than following it."""
    with open(path, "wb") as f:
        f.write(remaps(20000, 100, depth=200))


IMAGES = 100000


def images(path):
    """100,000 images that cannot be read, one map and one frame each
    (about 4 MB): a reader that looks through every image, or every note
    of one that gave no names, for each address is quadratic here."""
    with open(path, "wb") as f:
        f.write(many_maps(IMAGES, images=IMAGES))


PIDS = 64


def shared(path):
    """The deep chain in 64 processes whose lists of maps differ (each has
    an image of its own, away from the chain), 3000 samples on its leaf
    from them in turn (about 630 KB): a reader that translates the chain
    once per list of maps is quadratic here; report keeps its innermost
    1024 frames."""
    with open(path, "wb") as f:
        f.write(shared_chain(DEPTH, SAMPLES, PIDS))


def shared8(path):
    """As shared, in 8 processes: under report's bound, so answered."""
    with open(path, "wb") as f:
        f.write(shared_chain(DEPTH, SAMPLES, 8))


def shared_over(path):
    """As shared, but each process's own image is mapped over the chain's
    leaf: the processes' frames differ there, and the chain above is
    theirs alike."""
    with open(path, "wb") as f:
        f.write(shared_chain(DEPTH, SAMPLES, PIDS, overlap=True))


MEMBERS = 400000


def wide(path):
    """A libdkbench baseline whose top object has 400,000 members (about
    5 MB): a reader that compares each member's name with every earlier
    one is quadratic here."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_wide_baseline(path, MEMBERS)


FLOOD = 200000
FLOOD_TOOL = None  # tests/sweep/flood_baseline.c, from --flood-baseline


def flood(path):
    """A libdkbench baseline whose top object has 200,000 members named to
    share 1024 slots of a fixed member-name hash (about 4 MB): a reader
    whose hash a file can aim at is quadratic here."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    subprocess.run([FLOOD_TOOL, str(FLOOD), path], check=True)


FLOOD_PIDS = 200000
PIDS_TOOL = None  # tests/sweep/flood_pids.c, from --flood-pids


def flooded_pids(path):
    """200,000 processes, a map and a sample each, their pids chosen to
    share 256 slots of the fixed hash report's tables once took slots from
    (about 9 MB): a report whose tables a file can aim at is quadratic
    here."""
    pids = subprocess.run([PIDS_TOOL, str(FLOOD_PIDS)], check=True, capture_output=True,
                          text=True).stdout.split()
    head = meta("comm", "flood") + event(0, "cpu-clock") + nodes([(0, 0x10000100)])
    recs = [map_(int(p), 0x10000000, 0x1000, "/nonexistent/flood.so") + sample(1, pid=int(p))
            for p in pids]
    with open(path, "wb") as f:
        f.write(HEADER + chunk(head) + b"".join(chunked(recs)) + chunk(end(len(recs))))


def every_flooded_pid(r, _):
    rows = [l.split() for l in r.out.splitlines() if l.startswith(" ") and "%" in l]
    if len(rows) == 1 and rows[0][2] == str(FLOOD_PIDS) and rows[0][-1] == "flood.so":
        return []
    return ["wanted one row of flood.so with %d samples: %s" % (FLOOD_PIDS, rows[:3])]


INPUTS = {
    "deep-chain.data": deep_chain,
    "renamed.data": renamed,
    "events.data": events,
    "events-sampled.data": events_sampled,
    "maps.data": maps,
    "metas.data": metas,
    "images.data": images,
    "remapped.data": remapped,
    "nested.data": nested,
    "remapped-deep.data": remapped_deep,
    "shared.data": shared,
    "shared-over.data": shared_over,
    "shared8.data": shared8,
    "baselines/wide.json": wide,
    "baselines/flood.json": flood,
    "flooded-pids.data": flooded_pids,
}


# ---- output checks: function(result, workdir) -> list of problems -------

def leaf_row(r, _):
    # The leaf holds every sample as self; the outermost frame as children.
    ok = "%s samples" % format(SAMPLES, ",") in r.out and "100.00%   100.00%" in r.out
    return [] if ok else ["no row of the leaf with every sample: %r" % r.out[:300]]


def one_folded_line(r, _):
    lines = r.out.splitlines()
    if len(lines) != 1 or not lines[0].endswith(" %d" % SAMPLES) or lines[0].count(";") != KEPT:
        return ["wanted one line of %d frames and %d samples: %d lines, %r"
                % (KEPT, SAMPLES, len(lines), r.out[:100])]
    return []


def one_speedscope_run(_, work):
    with open(os.path.join(work, "out.speedscope.json"), encoding="utf-8") as f:
        doc = json.load(f)
    pr = doc["profiles"][0]
    if pr["weights"] != [SAMPLES] or [len(s) for s in pr["samples"]] != [KEPT]:
        return ["wanted one entry of %d frames weighing %d: weights %r"
                % (KEPT, SAMPLES, pr["weights"][:5])]
    return []


def flame_graph(_, work):
    with open(os.path.join(work, "out.html"), encoding="utf-8") as f:
        text = f.read()
    n = text.count('<g class="f"')
    # Every frame of the chain is drawn (each holds every sample), and the root.
    return [] if n == KEPT + 1 else ["%d boxes in the flame graph, wanted %d" % (n, KEPT + 1)]


def every_event(r, _):
    heads = r.out.count("# Event: ")
    return leaf_row(r, _) + ([] if heads == EVENTS else ["%d events, wanted %d"
                                                          % (heads, EVENTS)])


def every_event_sampled(r, _):
    rows = len(re.findall(r"^ +100\.00% +100\.00% +1 ", r.out, re.M))
    return [] if rows == SAMPLED else ["%d rows of events' samples, wanted %d" % (rows, SAMPLED)]


def every_profile(_, work):
    with open(os.path.join(work, "out.events.json"), encoding="utf-8") as f:
        n = len(json.load(f)["profiles"])
    return [] if n == SAMPLED else ["%d profiles, wanted %d" % (n, SAMPLED)]


def every_name(r, _):
    rows = [l for l in r.out.splitlines() if l.startswith(" ") and l.split()[-1].startswith("c")]
    return [] if len(rows) == COMMS else ["%d rows of names, wanted %d" % (len(rows), COMMS)]


def one_image_row(n):
    # Every address of the image has no symbol: one [i0.so] row holds all
    # n samples, each found through the maps.
    def check(r, _):
        rows = [l.split() for l in r.out.splitlines() if l.startswith(" ") and "%" in l]
        if len(rows) == 1 and rows[0][-1] == "[i0.so]" and rows[0][2] == str(n):
            return []
        return ["wanted one [i0.so] row of %d samples, got %s" % (n, rows[:3])]
    return check


def every_remap(r, _):
    # Each sample named by the map it followed: every image, as often.
    rows = [l.split() for l in r.out.splitlines() if l.startswith(" ") and "%" in l]
    n = REMAPS // REMAP_IMAGES
    if len(rows) == REMAP_IMAGES and all(x[2] == str(n) and x[-1].startswith("[i") for x in rows):
        return []
    return ["wanted %d rows of [iK.so], %d samples each: %d rows, %s"
            % (REMAP_IMAGES, n, len(rows), rows[:3])]


def refused_translations(r, _):
    lines = r.err.strip().splitlines()
    if r.rc == 1 and len(lines) == 1 and "translations of an address" in lines[0]:
        return []
    return ["wanted one line refusing it: exit %s, %r" % (r.rc, r.err[-300:])]


refused_translations.refusal = True


def every_note(r, _):
    notes = [l for l in r.out.splitlines() if l.startswith("# /nonexistent/")]
    return [] if len(notes) == IMAGES else ["%d notes of images, wanted %d"
                                            % (len(notes), IMAGES)]


def cut_chain(r, _):
    # A chain deeper than report keeps is cut to KEPT frames: each process
    # translates those, and the work no longer grows with the depth.
    ok = r.rc == 0 and "call chain deeper than %d frames: cut" % KEPT in r.err \
        and r.out.count("\n") >= 1
    return [] if ok else ["wanted the chains cut: exit %s, %r" % (r.rc, r.err[-300:])]


def one_chain(r, _):
    lines = r.out.splitlines()
    if len(lines) != 1 or lines[0].count(";") != KEPT or not lines[0].endswith(" %d" % SAMPLES):
        return ["wanted one line of %d frames and %d samples: %d lines, %r"
                % (KEPT, SAMPLES, len(lines), r.out[:100])]
    return []


def read_whole(r, _):
    # The baseline was read to its end and compared: every benchmark run
    # is said to be missing from it.
    return [] if "not in baseline '" in r.err else ["no comparison with the baseline: %r"
                                                     % r.err[-300:]]


# ---- the cases: (name, input, arguments after the tool, target s, check) -
# "{in}" is the input's path, "{work}" the work directory; the tool is
# dkperf, or the program named by an argument that starts with "@".

REPORT = ["report", "-i", "{in}"]
CASES = [
    ("report --stdio, deep chain", "deep-chain.data", REPORT + ["--stdio"], 2, leaf_row),
    ("report --children, deep chain", "deep-chain.data", REPORT + ["--stdio", "--children"], 2,
     leaf_row),
    ("report --sort dso, deep chain", "deep-chain.data", REPORT + ["--sort", "dso"], 2, None),
    ("report --folded, deep chain", "deep-chain.data", REPORT + ["--folded"], 2, one_folded_line),
    ("report --speedscope, deep chain", "deep-chain.data",
     REPORT + ["--speedscope", "{work}/out.speedscope.json"], 2, one_speedscope_run),
    ("report --html, deep chain", "deep-chain.data", REPORT + ["--html", "{work}/out.html"], 2,
     flame_graph),
    ("report --stdio, deep chain, 20,000 events", "events.data", REPORT + ["--stdio"], 2,
     every_event),
    ("report --stdio, 240,000 events with samples", "events-sampled.data", REPORT + ["--stdio"],
     2, every_event_sampled),
    ("report --speedscope, 240,000 events with samples", "events-sampled.data",
     REPORT + ["--speedscope", "{work}/out.events.json"], 2, every_profile),
    ("report --sort comm, 200,000 renames", "renamed.data", ["report", "-i", "{in}", "--sort", "comm"],
     2, every_name),
    ("report --folded, 60,000 nameless processes after 60,000 metas", "metas.data",
     REPORT + ["--folded"], 1, None),
    ("report --stdio, 200,000 maps", "maps.data", REPORT + ["--stdio"], 1,
     one_image_row(MAPS)),
    ("report --stdio, 200,000 maps over one address", "remapped.data", REPORT + ["--stdio"], 1,
     every_remap),
    ("report --stdio, 200,000 nested maps", "nested.data", REPORT + ["--stdio"], 1, every_remap),
    ("report --folded, 20,000 maps over a deep stack", "remapped-deep.data",
     REPORT + ["--folded"], 2, refused_translations),
    ("report --stdio, 100,000 unreadable images", "images.data", REPORT + ["--stdio"], 1,
     every_note),
    ("report --folded, deep chain in 8 processes", "shared8.data", REPORT + ["--folded"], 2,
     one_chain),
    ("report --folded, deep chain in 64 processes", "shared.data", REPORT + ["--folded"], 2,
     cut_chain),
    ("report --folded, deep chain in 64 processes, leaves apart", "shared-over.data",
     REPORT + ["--folded"], 2, cut_chain),
    ("report --stdio, 200,000 pids in few hash slots", "flooded-pids.data",
     REPORT + ["--stdio", "--sort", "dso"], 1, every_flooded_pid),
    # The target holds the two short measurements of bench_example too.
    ("dkbench --baseline, 400,000 members", "baselines/wide.json",
     ["@bench_example", "--results-dir", "{work}/baselines", "--baseline", "wide",
      "--samples", "2", "--warm-up", "0", "-q"], 1, read_whole),
    ("dkbench --baseline, 200,000 members in few hash slots", "baselines/flood.json",
     ["@bench_example", "--results-dir", "{work}/baselines", "--baseline", "flood",
      "--samples", "2", "--warm-up", "0", "-q"], 1, read_whole),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dkperf", required=True)
    ap.add_argument("--bench-example", help="a libdkbench program (examples/bench_example)")
    ap.add_argument("--flood-baseline", help="tests/sweep/flood_baseline (with --bench-example)")
    ap.add_argument("--flood-pids", help="tests/sweep/flood_pids (for the pids case)")
    ap.add_argument("--only", help="case names, separated by |")
    ap.add_argument("--keep", help="write the inputs and outputs here and keep them")
    args = ap.parse_args()
    tools = {"dkperf": os.path.abspath(args.dkperf)}
    cases = CASES
    if args.bench_example:
        if not args.flood_baseline:
            ap.error("--bench-example needs --flood-baseline")
        global FLOOD_TOOL
        FLOOD_TOOL = os.path.abspath(args.flood_baseline)
        tools["bench_example"] = os.path.abspath(args.bench_example)
    else:
        cases = [c for c in CASES if not c[2][0].startswith("@")]
    if args.flood_pids:
        global PIDS_TOOL
        PIDS_TOOL = os.path.abspath(args.flood_pids)
    else:
        cases = [c for c in cases if c[1] != "flooded-pids.data"]
    if args.only:
        names = args.only.split("|")
        cases = [c for c in cases if c[0] in names]
    wd = None
    if args.keep:
        work = os.path.abspath(args.keep)
        os.makedirs(work, exist_ok=True)
    else:
        wd = sweeplib.Workdir("dkperf-perf-")
        work = wd.path
    env = sweeplib.base_env(None)
    made = {}
    results = []
    # One at a time: the times are the point.
    for name, inp, argv, target, check in cases:
        if inp not in made:
            t0 = time.monotonic()
            INPUTS[inp](os.path.join(work, inp))
            made[inp] = os.path.join(work, inp)
            print("perf sweep: made %s (%d bytes) in %.2f s"
                  % (inp, os.path.getsize(made[inp]), time.monotonic() - t0))
        tool = tools["dkperf"]
        if argv[0].startswith("@"):
            tool, argv = tools[argv[0][1:]], argv[1:]
        full = [tool] + [a.replace("{in}", made[inp]).replace("{work}", work) for a in argv]
        bound = target * SLACK
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = sweeplib.run(full, env, timeout=bound)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        problems = sweeplib.judge_exit(r)
        if r.timed_out:
            problems = ["took more than %g s (target %g s)" % (bound, target)]
        elif r.rc != 0 and not problems and not getattr(check, "refusal", False):
            problems.append("exit %s: %s" % (r.rc, r.err.strip()[-200:]))
        elif not problems and check is not None:
            problems += check(r, work)
        print("  %6.2f s (%.2f s of CPU; target %g s, bound %g s)  %s%s"
              % (r.secs, cpu, target, bound, name, "" if not problems else "  FAILED"))
        sys.stdout.flush()
        results.append((name, problems))
    if wd is not None:
        wd.close()
    return sweeplib.report("perf sweep", results)


if __name__ == "__main__":
    sys.exit(main())
