#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Read a libdkbench report with a strict parser and check its layout.

usage: check_bench_reports.py FORMAT FILE [baseline]
FORMAT: json | csv | md | gbench | html. The file is the one
test_bench_reports.c writes: two results, the first named NAME below with
100 samples and six measures (cache-misses unavailable), the second with
no samples and time unavailable. "baseline": the HTML overlays a baseline.
"""
import csv
import io
import json
import math
import sys
import xml.etree.ElementTree as ET

NAME = 'grp/fib "20" <&> ,x|`*\n\t\u00b5'
MEASURES = ["time", "instructions", "cycles", "branches", "branch-misses", "cache-misses"]
N = 100
SVG = "{http://www.w3.org/2000/svg}"
XHTML = "{http://www.w3.org/1999/xhtml}"

fmt, path = sys.argv[1], sys.argv[2]
baseline = len(sys.argv) > 3 and sys.argv[3] == "baseline"


def fail(msg):
    sys.exit(f"{path} ({fmt}): {msg}")


def need(cond, msg):
    if not cond:
        fail(msg)


with open(path, "rb") as f:
    raw = f.read()
try:
    text = raw.decode("utf-8", errors="strict")
except UnicodeDecodeError as e:
    fail(f"not UTF-8: {e}")


def load_json():
    try:
        return json.loads(text, strict=True)
    except json.JSONDecodeError as e:
        fail(f"not strict JSON: {e}")


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


if fmt == "json":
    doc = load_json()
    need(doc["schema"] == "dkbench-1", "schema")
    run = doc["run"]
    for k in ("backend", "cpu", "why_no_counters", "date", "host", "seed", "baseline"):
        need(isinstance(run[k], str), f"run.{k} is not a string")
    need(run["cpu"] == 'Apple M1 <"Firestorm">', "run.cpu not escaped right")
    need(run["seed"] == str(0xFFFFFFFFFFFFFFF1), "run.seed lost bits")
    rs = doc["results"]
    need(len(rs) == 2, "two results")
    a, b = rs
    need(a["name"] == NAME, f"name {a['name']!r}")
    need(a["n_samples"] == N and len(a["iterations"]) == N, "iterations")
    need(a["iterations"][:3] == [10, 20, 30], "iteration counts")
    need([m["name"] for m in a["measures"]] == MEASURES, "measure names")
    for m in a["measures"][:5]:
        need(m["available"] is True, f"{m['name']} available")
        need(len(m["totals"]) == N and all(is_num(v) for v in m["totals"]), f"{m['name']} totals")
        need(len(m["outlier_class"]) == N, "outlier classes")
        for k in ("point", "lo", "hi"):
            need(is_num(m["slope"][k]), f"slope.{k}")
        for k in ("mean", "median", "mad", "stddev", "min", "max"):
            need(is_num(m["per_iter"][k]), f"per_iter.{k}")
    t = a["measures"][0]
    need(t["slope"]["point"] == 1000 and t["fit"]["intercept"] == 500, "time estimate")
    need(t["outliers"]["high_mild"] == 2 and t["outliers"]["high_severe"] == 1, "outliers")
    need(t["outlier_class"][70] == 4 and t["outlier_class"][10] == 3, "outlier classes")
    need(t["change"]["verdict"] == "improved" and t["change"]["rel"]["point"] == -0.052, "change")
    need(a["measures"][1]["change"] is None, "no change for instructions")
    cm = a["measures"][5]
    need(cm["available"] is False and cm["why"].startswith("no counter left"), "unavailable")
    # Not measured: its estimates are null, not zeros that read as measured.
    for m in (cm, b["measures"][0]):
        need(m["slope"] == {"point": None, "lo": None, "hi": None}, f"{m['name']} slope not null")
        need(all(m["fit"][k] is None for k in ("slope", "intercept", "r2")), "fit not null")
        need(all(v is None for k, v in m["per_iter"].items() if k != "mean_ci"), "per_iter not null")
        need(all(v is None for v in m["outliers"].values()), "outliers not null")
    need(a["levels"] == [{"name": "P", "cycle_share": 0.92}, {"name": "E", "cycle_share": 0.08}], "levels")
    need(a["throughput"] == {"kind": "bytes", "per_iter": 4096}, "throughput")
    need(b["n_samples"] == 0 and b["iterations"] == [] and b["measures"][0]["available"] is False, "empty")
elif fmt == "gbench":
    doc = load_json()
    need(isinstance(doc["context"], dict), "context")
    for k in ("date", "host_name", "executable", "library_build_type"):
        need(isinstance(doc["context"][k], str), f"context.{k}")
    bs = doc["benchmarks"]
    need(len(bs) == 2, "two benchmarks")
    for e in bs:
        for k, kind in (("name", str), ("run_name", str), ("run_type", str), ("time_unit", str)):
            need(isinstance(e[k], kind), f"{k} type")
        need(e["run_type"] == "iteration" and e["time_unit"] == "ns", "run_type/time_unit")
        need(is_num(e["iterations"]), "iterations")
    a = bs[0]
    need(a["name"] == NAME and a["run_name"] == NAME, "name")
    need(a["iterations"] == sum(10 * (i + 1) for i in range(N)), "total iterations")
    need(a["real_time"] == 1000 and a["cpu_time"] == 1000, "times")
    need(a["instructions"] == 2000 and a["branch-misses"] == 8, "counters")
    need("cache-misses" not in a, "an unavailable event is no counter")
    need(abs(a["bytes_per_second"] - 4096e9 / 1000) < 1e-3, "bytes_per_second")
    # compare.py computes with real_time/cpu_time and stops on a null; an
    # unmeasured one is NaN, as google benchmark writes one.
    need(math.isnan(bs[1]["real_time"]) and math.isnan(bs[1]["cpu_time"]), "unmeasured time")
elif fmt == "csv":
    need("\r\n" in text, "RFC 4180 line ends")
    rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    head = rows[0]
    need(head[:3] == ["benchmark", "group", "measure"], "header")
    need(all(len(r) == len(head) for r in rows), "ragged rows")
    body = rows[1:]
    need(len(body) == 6 + 1, f"{len(body)} rows, want 7 (6 measures + 1)")
    # Control characters are escaped in CSV, line breaks and tabs too.
    csv_name = NAME.replace("\n", "\\x0a").replace("\t", "\\x09")
    need([r[0] for r in body[:6]] == [csv_name] * 6, f"names {body[0][0]!r}")
    need([r[2] for r in body[:6]] == MEASURES, "measures")
    col = {k: i for i, k in enumerate(head)}
    t = body[0]
    need(float(t[col["estimate"]]) == 1000 and float(t[col["lower"]]) == 990, "estimate")
    need(t[col["verdict"]] == "improved" and float(t[col["change_estimate"]]) == -0.052, "change")
    need(t[col["outliers_high_mild"]] == "2", "outliers")
    need(t[col["estimator"]] == "Theil-Sen" and body[1][col["estimator"]] == "OLS", "estimator")
    cmiss = body[5]
    need(cmiss[col["available"]] == "false" and cmiss[col["estimate"]] == "", "unavailable")
    need(cmiss[col["why"]] == "no counter left, it is measured in the next pass only on M1", "why")
    need(body[6][0] == "grp/empty" and body[6][col["available"]] == "false", "empty")
elif fmt == "md":
    lines = text.rstrip("\n").split("\n")
    table = [l for l in lines if l.startswith("|")]
    need(len(table) == 4, f"{len(table)} table lines, want header, rule and 2 rows")

    def cells(line):
        out, cur, esc = [], "", False
        for ch in line.strip():
            if esc:
                cur += ch
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == "|":
                out.append(cur.strip())
                cur = ""
            else:
                cur += ch
        return out[1:]

    widths = {len(cells(l)) for l in table}
    need(len(widths) == 1, f"rows of different widths {widths}")
    head = cells(table[0])
    need(head[:2] == ["Benchmark", "Time [\u00b5s]"] and head[5] == "Relative", f"header {head}")
    need(head[6:] == MEASURES[1:], f"event columns {head[6:]}")
    row = cells(table[2])
    need(row[0] == NAME.replace("\n", " ").replace("\t", " "), f"name {row[0]!r}")
    need(row[1] == "1 [0.99, 1.01]" and row[5] == "1.00", f"time {row[1]!r}")
    need(row[6] == "2000" and row[10] == "<not supported>", f"events {row[6:]}")
    need(text.count("no counter left") == 1 and "\n- cache-misses: no counter left" in text,
         "the unavailable reason, once, below the table")
elif fmt == "html":
    need("<script" not in text.lower() and "http://" not in text.replace(
        "http://www.w3.org/", ""), "fetches or scripts")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        fail(f"not well-formed: {e}")
    svgs = list(root.iter(SVG + "svg"))
    need(len(svgs) == 2 * 5, f"{len(svgs)} plots, want 2 per available measure")
    for s in svgs:  # each plot parses on its own as well
        ET.fromstring(ET.tostring(s))
    hist, scat = svgs[0], svgs[1]
    bars = [r for r in hist.iter(SVG + "rect") if r.get("class") == "bar"]
    need(len(bars) >= 2, "histogram bars")
    need(sum(1 for c in scat.iter() if "point" in (c.get("class") or "").split()) == N, "scatter points")
    need(any(l.get("class") == "fit" for l in scat.iter(SVG + "line")), "fitted line")
    base_hist = [p for p in hist.iter(SVG + "path") if p.get("class") == "baseline"]
    base_pts = [c for c in scat.iter() if "bpoint" in (c.get("class") or "").split()]
    if baseline:
        need(base_hist and len(base_pts) == N, "baseline overlay")
        need(any(l.get("class") == "bfit" for l in scat.iter(SVG + "line")), "baseline fit")
    else:
        need(not base_hist and not base_pts, "a baseline drawn without one")
    # Each axis: named with its unit, and at least three ticks whose values
    # step by 1, 2 or 5 times a power of ten (k, M, G: thousands and up).
    def texts(svg, cls):
        return [t.text for t in svg.iter(SVG + "text") if t.get("class") == cls]

    def ticks(svg, axis):
        return texts(svg, axis + "tick")

    def svg_labels(svg):
        return texts(svg, "xlabel") + texts(svg, "ylabel")

    def number(label):
        mult = {"k": 1e3, "M": 1e6, "G": 1e9}.get(label[-1], 1)
        return float(label[:-1] if mult != 1 else label) * mult

    for s in svgs:
        for axis in "xy":
            vals = [number(t) for t in ticks(s, axis)]
            need(len(vals) >= 3, f"{len(vals)} ticks on an axis")
            steps = {round(b - a, 9) for a, b in zip(vals, vals[1:])}
            need(len(steps) == 1, f"ticks {vals} not evenly spaced")
            step = steps.pop()
            mant = step / 10 ** math.floor(math.log10(step) + 1e-9)
            need(any(abs(mant - m) < 1e-6 for m in (1, 2, 5)), f"tick step {step} is not 1, 2 or 5")
    need(svg_labels(hist) == ["time per iteration (\u00b5s)", "samples in the bin"],
         f"histogram axes {svg_labels(hist)}")
    need(svg_labels(scat) == ["iterations per sample", "total time per sample (ms)"],
         f"scatter axes {svg_labels(scat)}")
    # The severe outlier (2.5 times the others) would squash them: it sits
    # on the top edge of a plot that spans the rest.
    clipped = [c.get("class") for c in scat.iter() if "clipped" in (c.get("class") or "").split()]
    need(clipped[-1:] == ["point severe clipped"], f"clipped samples {clipped}")
    need(ticks(scat, "y") == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"], f"y ticks {ticks(scat, 'y')}")
    need(ticks(scat, "x") == ["0", "200", "400", "600", "800", "1000"], f"x ticks {ticks(scat, 'x')}")
    need(ticks(svgs[3], "y")[-2:] == ["1.5M", "2.0M"], f"instructions ticks {ticks(svgs[3], 'y')}")
    # A legend under every plot says what each colour and line is.
    captions = [" | ".join("".join(s.itertext()) for s in c.iter(XHTML + "span"))
                for c in root.iter(XHTML + "figcaption")]
    need(len(captions) == len(svgs), f"{len(captions)} legends for {len(svgs)} plots")
    want_hist = ["samples, by time per iteration", "estimate: 1 \u00b5s per iteration (slope of the fit)"]
    want_scat = ["samples (total time of a run of iterations)", "mild outliers",
                 "severe outliers above the plot, on its edge",
                 "fit (Theil-Sen): slope = time per iteration"]
    if baseline:
        want_hist.append("baseline samples, same bins")
        want_scat += ["baseline samples", "baseline fit"]
    need(all(w in captions[0] for w in want_hist), f"histogram legend {captions[0]!r}")
    need(all(w in captions[1] for w in want_scat), f"scatter legend {captions[1]!r}")
    need(("baseline" in captions[3]) == baseline and "fit (OLS): slope = instructions per iteration"
         in captions[3], f"instructions legend {captions[3]!r}")
    h2 = [h.text for h in root.iter(XHTML + "h2")]
    need(h2 == [NAME, "grp/empty"], f"headings {h2!r}")
    tds = [td.text or "" for td in root.iter(XHTML + "td")]
    # An event's reason once, in the list above the benchmarks; its rows
    # say only <not supported>.
    lis = ["".join(li.itertext()) for li in root.iter(XHTML + "li")]
    need(lis == ["cache-misses: no counter left, it is measured in the next pass only on M1"],
         f"unavailable reasons {lis!r}")
    need(text.count("no counter left") == 1, "the unavailable reason said more than once")
    need("<not supported>" in tds and "the benchmark returned before one iteration" in tds,
         "unavailable rows")
    need(any("improved" in (t or "") for t in tds), "change")
    ths = [th.text or "" for th in root.iter(XHTML + "th")]
    need("estimator" in ths and "Theil-Sen" in tds and "OLS" in tds, "estimator named")
else:
    fail("unknown format")
