#!/usr/bin/env bash
# Render libdkbench's sample HTML report (a benchmark with its baseline
# overlaid) in headless Chromium and check the plots were drawn: the PNG
# decodes and holds many pixels of each plot colour (bars, fitted line,
# baseline). The page and its PNG stay under OUTDIR for a look.
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
html=$out/bench-report.html png=$out/bench-report.png
DKB_SAMPLE_HTML=$html DKB_REPORT_CHECK=$checker "$bin" html_with_baseline_overlay
python3 "$here/html_render.py" shot "file://$html" "$png" 1200x2000 "$out/chromium.log"
python3 - "$here" "$png" <<'PY'
import sys

sys.path.insert(0, sys.argv[1])
from html_render import rows

path = sys.argv[2]
w, h, bpp, lines = rows(path)
stride = w * bpp


def near(px, rgb, tol):
    return all(abs(px[k] - rgb[k]) <= tol for k in range(3))

# Bars and points (#1f77b4 at 75% on white), fitted line (#d62728),
# baseline histogram (#ff7f0e), baseline points (#aaa at 70%).
# (colour, tolerance, pixels needed), counted on every second pixel of
# every second row.
colours = {"bars/points": ((71, 146, 199), 40, 800), "fit": ((214, 39, 40), 40, 80),
           "baseline": ((255, 127, 14), 40, 80), "baseline points": ((195, 195, 195), 5, 50)}
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
