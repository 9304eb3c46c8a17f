#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Run dkperf with --json and check the output parses and carries its fields.

usage: check_json.py DKPERF WORK_COMMAND...   (DKPERF_FRAMEWORK_ROOT etc. from the environment)
"""
import json
import subprocess
import sys

dkperf, work = sys.argv[1], sys.argv[2:]


def run(args, stream="stdout"):
    """Run dkperf; its JSON must be strict UTF-8 and strict JSON (no raw control characters)."""
    p = subprocess.run([dkperf] + args, capture_output=True)
    data = p.stdout if stream == "stdout" else p.stderr
    shown = " ".join(a.decode(errors="backslashreplace") if isinstance(a, bytes) else a for a in args)
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        sys.exit(f"dkperf {shown}: not UTF-8 ({e}):\n{data!r}")
    try:
        return json.loads(text, strict=True), p.returncode
    except json.JSONDecodeError as e:
        sys.exit(f"dkperf {shown}: not JSON ({e}):\n{text}\n{p.stderr!r}")


def need(obj, key, kinds, where):
    if key not in obj:
        sys.exit(f"{where}: no field {key!r} in {obj}")
    if not isinstance(obj[key], kinds):
        sys.exit(f"{where}: {key!r} is {type(obj[key]).__name__}, want {kinds}")
    return obj[key]


info, rc = run(["info", "--json"])
assert rc == 0, rc
for key, kinds in [("version", str), ("backend", str), ("why", str), ("cpu", str),
                   ("marketing_name", str), ("database", str), ("cpu_id", str), ("arch", str),
                   ("pmu", str), ("counters", dict), ("privileges", str), ("capabilities", dict),
                   ("perf_levels", list), ("os", dict)]:
    need(info, key, kinds, "info")
for key in ("fixed", "configurable", "power"):
    need(info["counters"], key, int, "info.counters")

listing, rc = run(["list", "--json"])
assert rc == 0, rc
need(listing, "backend", str, "list")
need(listing, "database", str, "list")
portable = need(listing, "portable", list, "list")
names = [p["name"] for p in portable]
assert names[:4] == ["instructions", "cycles", "branches", "branch-misses"], names
events = need(listing, "events", list, "list")
assert events, "list: no events"
for ev in events:
    for key, kinds in [("name", str), ("kind", str), ("fixed", bool), ("counters", list),
                       ("description", str), ("supported", bool)]:
        need(ev, key, kinds, f"list event {ev.get('name')}")
    need(ev, "alias", (str, type(None)), "list event")
filtered, rc = run(["list", "--json", "CYCLE"])
assert all("cycle" in (e["name"] + (e["alias"] or "")).lower() for e in filtered["events"]), filtered
assert len(filtered["events"]) < len(events)
# A portable name listed alone (its pattern matches no database event's
# name) says whether it counts as the whole listing does.
supported = {e["name"]: e["supported"] for e in events}
for p in portable:
    if p["event"] not in supported:
        continue
    alone, rc = run(["list", "--json", p["name"]])
    assert rc == 0, rc
    for q in alone["portable"]:
        if q["event"] in supported:
            assert q["supported"] == supported[q["event"]], (p["name"], q, supported[q["event"]])

for args in (["stat", "--json"], ["stat", "--json", "-r", "2"]):
    stat, rc = run(args + ["--"] + work, "stderr")
    assert rc == 0, rc
    for key, kinds in [("command", list), ("exit_status", int), ("runs", int), ("backend", str),
                       ("scope", str), ("elapsed_ns", (int, float)), ("events", list)]:
        need(stat, key, kinds, "stat")
    assert stat["command"] == work, stat["command"]
    assert stat["runs"] == (2 if "-r" in args else 1)
    counted = 0
    for ev in stat["events"]:
        for key, kinds in [("name", str), ("supported", bool), ("counted", bool),
                           ("running_fraction", (int, float)), ("relative_stddev", (int, float))]:
            need(ev, key, kinds, f"stat event {ev.get('name')}")
        need(ev, "value", (int, float, type(None)), "stat event")
        need(ev, "unit", (str, type(None)), "stat event")
        if ev["counted"]:
            counted += 1
            assert ev["value"] is not None and ev["value"] >= 0, ev
            assert 0 < ev["running_fraction"] <= 1, ev
        else:
            assert ev["value"] is None, ev
            if not ev["supported"]:
                assert ev["reason"], ev
    assert counted > 0, f"stat counted nothing: {stat}"
# Arguments that are not UTF-8, or hold control characters: the JSON stays
# UTF-8, each byte that is not well-formed becomes U+FFFD, text survives.
R = "\ufffd"
odd = [
    (b"\xff", R),                                   # never valid
    (b"a\x80b", f"a{R}b"),                          # stray continuation byte
    (b"\xc0\xaf", R + R),                           # overlong '/'
    (b"\xe0\x80\xaf", R * 3),                       # overlong, 3 bytes
    (b"\xed\xa0\x80", R * 3),                       # a surrogate (U+D800)
    (b"\xf4\x90\x80\x80", R * 4),                   # above U+10FFFF
    (b"\xe2\x82", R * 2),                           # cut short
    (b"\xf0\x9f\x98", R * 3),                       # cut short, 4 bytes
    (b"\x01\x1f\x7f\t\n\"\\", "\x01\x1f\x7f\t\n\"\\"),  # control characters
    ("é€😀".encode(), "é€😀"),                      # well-formed, kept as is
    (b"\xe2\x82\xac\xff\xe2\x82\xac", f"€{R}€"),     # valid around invalid
]
stat, rc = run(["stat", "--json", "-e", "instructions", "--", "true"] + [b for b, _ in odd], "stderr")
assert rc == 0, rc
want = ["true"] + [w for _, w in odd]
assert stat["command"] == want, f"command {stat['command']!r}, want {want!r}"
print("info, list and stat JSON parse and carry their fields; odd bytes stay valid JSON")
