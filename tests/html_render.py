#!/usr/bin/env python3
# SPDX-License-Identifier: MIT OR Apache-2.0
"""Render a self-contained HTML page in headless Chromium and read the
screenshot back, for the tests that check that a report's plots were drawn
(check_bench_html.sh, check_report_html.sh).

usage: html_render.py browser              print Chromium's path, or exit 77
       html_render.py shot URL PNG WxH LOG screenshot URL into PNG (log in LOG)
       html_render.py dom URL WxH LOG      print the DOM after the page's scripts
                                           ran in a WxH window (log in LOG)

As a module: rows(path) decodes an 8-bit RGB or RGBA PNG into its rows of
pixel bytes (Chromium's screenshots; no other PNG layout is needed).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser():
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def run(args, log, what):
    """Run headless Chromium with args; exits with the log on failure."""
    exe = browser()
    if exe is None:
        sys.exit("no chromium to render %s (apt-get install chromium)" % what)
    with tempfile.TemporaryDirectory() as profile, open(log, "w") as err:
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run",
               "--user-data-dir=" + profile, "--hide-scrollbars"] + args
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, timeout=120)
            rc, text = p.returncode, p.stdout.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            rc, text = "timeout (120 s)", ""
    if rc != 0:
        sys.stderr.write(open(log).read())
        sys.exit("chromium failed (%s) on %s; its log is above" % (rc, what))
    return text


def shot(url, png, size, log):
    """Screenshot url into png at size "WxH"; exits with the log on failure."""
    if os.path.exists(png):
        os.unlink(png)
    run(["--screenshot=" + png, "--window-size=" + size.replace("x", ","), url], log, url)
    if not os.path.exists(png) or os.path.getsize(png) == 0:
        sys.stderr.write(open(log).read())
        sys.exit("chromium wrote no screenshot %s; its log is above" % png)


def dom(url, size, log):
    """The DOM of url laid out in a "WxH" window, after its scripts ran."""
    return run(["--dump-dom", "--window-size=" + size.replace("x", ","), url], log, url)


def rows(path):
    """(width, height, bytes per pixel, rows) of an 8-bit RGB/RGBA PNG."""
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
    if ihdr is None:
        sys.exit(f"{path}: no IHDR chunk")
    w, h, depth, ctype, _, _, interlace = ihdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        sys.exit(f"{path}: unexpected PNG layout depth {depth} colour type {ctype}")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    out, prev, i = [], bytearray(stride), 0
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
        out.append(line)
        prev = line
    return w, h, bpp, out


if __name__ == "__main__":
    if sys.argv[1:2] == ["browser"]:
        path = browser()
        if path is None:
            sys.exit(77)
        print(path)
    elif sys.argv[1:2] == ["shot"] and len(sys.argv) == 6:
        shot(*sys.argv[2:])
    elif sys.argv[1:2] == ["dom"] and len(sys.argv) == 5:
        sys.stdout.write(dom(*sys.argv[2:]))
    else:
        sys.exit(__doc__)
