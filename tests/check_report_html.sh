#!/usr/bin/env bash
# Render dkperf report's HTML flame graph of a recording of known content
# (tests/record_fixture) in headless Chromium, as check_bench_html.sh does
# for dkbench's report, and check that the flame graph was drawn: the PNG
# decodes and holds many pixels of the flame colours (red to yellow) and
# of the grey root bar. The page and its PNG stay under OUTDIR for a look.
# usage: check_report_html.sh DKPERF RECORD_FIXTURE OUTDIR
# Exits 77 (skipped) when Chromium is not installed.
set -euo pipefail
dkperf=$1 fixture=$2 out=$3
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "skipped: no chromium to render the flame graph (apt-get install chromium)" >&2
    exit 77
fi
mkdir -p "$out"
out=$(cd "$out" && pwd) # file:// wants an absolute path
data=$out/fixture.data html=$out/flame.html png=$out/flame.png
rm -f "$png"
"$fixture" "$data" --rounds 20
"$dkperf" report -i "$data" --html "$html"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --hide-scrollbars --screenshot="$png" --window-size=1200,600 "file://$html" \
    >"$out/chromium.log" 2>&1 || { cat "$out/chromium.log" >&2; echo "chromium failed" >&2; exit 1; }
if [ ! -s "$png" ]; then
    cat "$out/chromium.log" >&2
    echo "chromium wrote no screenshot $png (its log is above)" >&2
    exit 1
fi
# The page's search, run by its own script from the address (#search=...):
# the matching frames turn magenta.
spng=$out/flame-search.png
rm -f "$spng"
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$profile" \
    --hide-scrollbars --screenshot="$spng" --window-size=1200,600 "file://$html#search=fx_co" \
    >"$out/chromium-search.log" 2>&1 || { cat "$out/chromium-search.log" >&2; echo "chromium failed" >&2; exit 1; }
python3 - "$spng" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
w, h, depth, ctype = ihdr[:4]
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
magenta, prev, i = 0, bytearray(stride), 0
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
    for x in range(0, stride, bpp):
        if abs(line[x] - 230) < 20 and line[x + 1] < 30 and abs(line[x + 2] - 230) < 20:
            magenta += 1
    prev = line
print(f"{sys.argv[1]}: {magenta} magenta pixels after searching fx_co")
# fx_cold: 20/101 of 1176 px, 16 px high: about 3700 pixels.
if magenta < 2000:
    sys.exit(f"{sys.argv[1]}: the search did not highlight fx_cold")
PY
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

flame = grey = 0
for line in rows[::2]:
    for x in range(0, stride, 2 * bpp):
        r, g, b = line[x], line[x + 1], line[x + 2]
        if r >= 200 and 55 <= g <= 215 and b <= 60:
            flame += 1
        if abs(r - 200) <= 3 and abs(g - 200) <= 3 and abs(b - 200) <= 3:
            grey += 1
print(f"{path}: {w}x{h}, {flame} flame pixels, {grey} root-bar pixels (every second pixel)")
# Four rows of frames 16 px high over most of 1200 px, sampled 1 in 4.
if flame < 3000:
    sys.exit(f"{path}: too few flame-coloured pixels: the flame graph was not drawn")
if grey < 1000:
    sys.exit(f"{path}: the root bar is missing")
PY
