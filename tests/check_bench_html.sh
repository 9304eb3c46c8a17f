#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Render libdkbench's sample HTML report (a benchmark with its baseline
# overlaid) in headless Chromium and check the plots were drawn: the PNG
# decodes and holds many pixels of each plot colour (bars, fitted line,
# baseline). Then lay the page out at 1000 and 1400 px and check, with a
# script measuring the elements, that nothing is wider than the window,
# no table cell of numbers wraps onto a second line, each measure's two
# plots sit side by side, and every legend fits its plot's width. The
# page, its screenshots and the measurements stay under OUTDIR for a look.
# usage: check_bench_html.sh TEST_BENCH_REPORTS CHECKER OUTDIR
# Exits 77 (skipped) when Chromium is not installed.
set -euo pipefail
bin=$1 checker=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! python3 "$here/html_render.py" browser >/dev/null; then
    echo "skipped: no chromium to render the HTML report (apt-get install chromium)" >&2
    exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd) # file:// wants an absolute path
html=$out/bench-report.html
DKB_SAMPLE_HTML=$html DKB_REPORT_CHECK=$checker "$bin" html_with_baseline_overlay
for w in 1000 1400; do
    python3 "$here/html_render.py" shot "file://$html" "$out/bench-report-$w.png" ${w}x2000 "$out/chromium.log"
done
python3 - "$here" "$out/bench-report-1000.png" <<'PY'
import sys

sys.path.insert(0, sys.argv[1])
from html_render import rows

path = sys.argv[2]
w, h, bpp, lines = rows(path)
stride = w * bpp


def near(px, rgb, tol):
    return all(abs(px[k] - rgb[k]) <= tol for k in range(3))

# Bars and points (#1f77b4 at 75% on white), fitted line (#d62728),
# baseline histogram (#666), baseline points (#aaa at 70%), severe
# outliers (#9467bd). (colour, tolerance, pixels needed), counted on
# every second pixel of every second row.
colours = {"bars/points": ((71, 146, 199), 40, 800), "fit": ((214, 39, 40), 40, 80),
           "baseline": ((102, 102, 102), 6, 80), "baseline points": ((195, 195, 195), 5, 50),
           "severe outliers": ((148, 103, 189), 20, 10)}
count = dict.fromkeys(colours, 0)
nonwhite = 0
for line in lines[::2]:
    for x in range(0, stride, 2 * bpp):
        px = line[x:x + 3]
        if px[0] < 245 or px[1] < 245 or px[2] < 245:
            nonwhite += 1
        for k, (rgb, tol, _) in colours.items():
            if near(px, rgb, tol):
                count[k] += 1
print(f"{path}: {w}x{h}, {nonwhite} non-white pixels, by colour {count}")
bad = [k for k, (_, _, want) in colours.items() if count[k] < want]
if bad:
    sys.exit(f"{path}: too few pixels of {bad}: the plots were not drawn")
PY
# The report holds no script; a copy gets one that measures the layout
# and leaves its findings in the DOM Chromium prints.
measured=$out/bench-report-measured.html
python3 - "$html" "$measured" <<'PY'
import sys

page = open(sys.argv[1], encoding="utf-8").read()
script = r"""<script>
(function () {
  const vw = document.documentElement.clientWidth, bad = [];
  const right = e => e.getBoundingClientRect().right;
  if (document.documentElement.scrollWidth > vw)
    bad.push(`page ${document.documentElement.scrollWidth} px wide in a ${vw} px window`);
  let cells = 0, tables = 0;
  for (const t of document.querySelectorAll("table")) {
    tables++;
    if (right(t) > vw) bad.push(`a table ends at ${Math.round(right(t))} px`);
    for (const c of t.querySelectorAll("td, th")) {
      if (c.classList.contains("why")) continue; /* a sentence, free to wrap */
      const r = document.createRange();
      r.selectNodeContents(c);
      const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
      cells++;
      if (tops.size > 1) bad.push(`cell "${c.textContent}" on ${tops.size} lines`);
    }
  }
  let pairs = 0;
  for (const p of document.querySelectorAll(".plots")) {
    const f = [...p.querySelectorAll("figure")];
    pairs++;
    if (f.length != 2 || f[0].getBoundingClientRect().top != f[1].getBoundingClientRect().top)
      bad.push("a measure's plots are not side by side");
    for (const x of f) {
      if (right(x) > vw) bad.push(`a plot ends at ${Math.round(right(x))} px`);
      for (const s of x.querySelectorAll("figcaption span"))
        if (right(s) > right(x) + 0.5) bad.push(`legend "${s.textContent}" is wider than its plot`);
    }
  }
  const pre = document.createElement("pre");
  pre.id = "layout";
  pre.textContent = JSON.stringify({viewport: vw, tables, cells, pairs, bad});
  document.body.appendChild(pre);
})();
</script>"""
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", script + "</body>"))
PY
for w in 1000 1400; do
    python3 "$here/html_render.py" dom "file://$measured" ${w}x2000 "$out/chromium.log" >"$out/layout-$w.html"
    python3 - "$out/layout-$w.html" $w <<'PY'
import html
import json
import re
import sys

text = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="layout">(.*?)</pre>', text, re.S)
if not m:
    sys.exit(f"{sys.argv[1]}: the layout script left no findings")
found = json.loads(html.unescape(m.group(1)))
print(f"{sys.argv[2]} px: {found}")
if found["viewport"] != int(sys.argv[2]) or found["tables"] < 2 or found["cells"] < 50 or found["pairs"] < 5:
    sys.exit(f"{sys.argv[1]}: measured the wrong page or window: {found}")
if found["bad"]:
    sys.exit(f"at {sys.argv[2]} px: " + "; ".join(found["bad"]))
PY
done
