#!/usr/bin/env bash
# SPDX-License-Identifier: MIT OR Apache-2.0
# Render dkperf report's HTML flame graph of a recording of known content
# (tests/record_fixture) in headless Chromium, as check_bench_html.sh does
# for dkbench's report, and check that the flame graph was drawn: the PNG
# decodes and holds many pixels of the flame colours (red to yellow) and
# of the grey root bar. A recording with a stack 128 frames deep (a graph
# 2000 px high) must show its graph on the first screen too: the page opens
# scrolled to the root, not to the empty space above the deep stack.
# The pages and their PNGs stay under OUTDIR for a look.
# usage: check_report_html.sh DKPERF RECORD_FIXTURE OUTDIR
# Exits 77 (skipped) when Chromium is not installed.
set -euo pipefail
dkperf=$1 fixture=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! python3 "$here/html_render.py" browser >/dev/null; then
    echo "skipped: no chromium to render the flame graph (apt-get install chromium)" >&2
    exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd) # file:// wants an absolute path
data=$out/fixture.data html=$out/flame.html png=$out/flame.png spng=$out/flame-search.png
"$fixture" "$data" --rounds 20
"$dkperf" report -i "$data" --html "$html"
"$fixture" "$out/deep.data" --rounds 20 --deep
"$dkperf" report -i "$out/deep.data" --html "$out/deep.html"
python3 "$here/html_render.py" shot "file://$out/deep.html" "$out/deep.png" 1200x600 \
    "$out/chromium-deep.log"
python3 "$here/html_render.py" shot "file://$html" "$png" 1200x600 "$out/chromium.log"
# The page's search, run by its own script from the address (#search=...):
# the matching frames turn magenta.
python3 "$here/html_render.py" shot "file://$html#search=fx_co" "$spng" 1200x600 \
    "$out/chromium-search.log"
python3 - "$here" "$png" "$spng" "$out/deep.png" <<'PY'
import sys

sys.path.insert(0, sys.argv[1])
from html_render import rows

path, spath, dpath = sys.argv[2:5]
w, h, bpp, lines = rows(spath)
magenta = 0
for line in lines:
    for x in range(0, w * bpp, bpp):
        if abs(line[x] - 230) < 20 and line[x + 1] < 30 and abs(line[x + 2] - 230) < 20:
            magenta += 1
print(f"{spath}: {magenta} magenta pixels after searching fx_co")
# fx_cold: 20/101 of 1176 px, 16 px high: about 3700 pixels.
if magenta < 2000:
    sys.exit(f"{spath}: the search did not highlight fx_cold")


def drawn(path):
    w, h, bpp, lines = rows(path)
    flame = grey = 0
    for line in lines[::2]:
        for x in range(0, w * bpp, 2 * bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if r >= 200 and 55 <= g <= 215 and b <= 60:
                flame += 1
            if abs(r - 200) <= 3 and abs(g - 200) <= 3 and abs(b - 200) <= 3:
                grey += 1
    print(f"{path}: {w}x{h}, {flame} flame pixels, {grey} root-bar pixels (every second pixel)")
    # Four rows of frames 16 px high over most of 1200 px, sampled 1 in 4.
    if flame < 3000:
        sys.exit(f"{path}: too few flame-coloured pixels on the first screen: "
                 "the flame graph was not drawn there")
    if grey < 1000:
        sys.exit(f"{path}: the root bar is not on the first screen")


drawn(path)
drawn(dpath)
PY
