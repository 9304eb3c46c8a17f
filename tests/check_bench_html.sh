#!/usr/bin/env bash
# Render libdkbench's sample HTML report (a benchmark with its baseline
# overlaid) in headless Chromium and check the plots were drawn: the PNG
# decodes and holds many pixels of each plot colour (bars, fitted line,
# baseline). The page and its PNG stay under OUTDIR for a look.
# usage: check_bench_html.sh TEST_BENCH_REPORTS CHECKER OUTDIR
# Exits 77 (skipped) when Chromium is not installed.
set -euo pipefail
bin=$1 checker=$2 out=$3
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "skipped: no chromium to render the HTML report (apt-get install chromium)" >&2
    exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd) # file:// wants an absolute path
html=$out/bench-report.html png=$out/bench-report.png
rm -f "$png"
DKB_SAMPLE_HTML=$html DKB_REPORT_CHECK=$checker "$bin" html_with_baseline_overlay
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --hide-scrollbars --screenshot="$png" --window-size=1200,2000 "file://$html" \
    >"$out/chromium.log" 2>&1 || { cat "$out/chromium.log" >&2; echo "chromium failed" >&2; exit 1; }
if [ ! -s "$png" ]; then
    cat "$out/chromium.log" >&2
    echo "chromium wrote no screenshot $png (its log is above)" >&2
    exit 1
fi
python3 - "$png" <<'PY'
import struct, sys, zlib

path = sys.argv[1]
data = open(path, "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit(f"{path}: not a PNG")
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
w, h, depth, ctype, _, _, interlace = ihdr
if depth != 8 or ctype not in (2, 6) or interlace:
    sys.exit(f"{path}: unexpected PNG layout depth {depth} colour type {ctype}")
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
rows, prev, i = [], bytearray(stride), 0
for _ in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1:
            line[x] = (line[x] + a) & 255
        elif f == 2:
            line[x] = (line[x] + b) & 255
        elif f == 3:
            line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line

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
for line in rows[::2]:
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
