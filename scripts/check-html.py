#!/usr/bin/env python3
"""Opens every kind of HTML report roofline writes in a real browser (Debian's chromium, headless).

For each report: the page's script ran without an error (the body carries data-ok="1" and no
data-error after load, read back with --dump-dom), sorting its first table by a numeric column
orders it (the page's own #selftest), it loads nothing from the network (no http(s) URL but the
SVG namespace), and a screenshot of it is not blank (its pixel rows vary). Screenshots are kept in
--out. Exit 0 when all hold, 1 when one does not, 77 (a skipped ctest) when chromium is missing
outside CI; under CI (CI=true) a missing chromium fails.

usage: scripts/check-html.py --bin build/roofline --out DIR
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

REPORTS = [
    ("model_llama3_8b", ["model", "llama-3-8b", "--hw", "h100-sxm"]),
    ("sweep_llama3_8b_batch", ["sweep", "llama-3-8b", "--hw", "h100-sxm", "--vary", "batch=1:256:x2"]),
    ("sweep_llama3_8b_two_axes",
     ["sweep", "llama-3-8b", "--hw", "h100-sxm", "--phase", "decode", "--vary", "batch=1:64:x4",
      "--prompt", "1024", "--vary", "context=1024:8192:x2"]),
    ("model_small_cnn", ["model", "tests/fixtures/graphs/small_cnn.json", "--hw", "a100-sxm-80gb"]),
    ("sweep_small_cnn",
     ["sweep", "tests/fixtures/graphs/small_cnn.json", "--hw", "a100-sxm-80gb", "--vary",
      "batch=1:64:x2"]),
]


def browser():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_browser(exe, args, url):
    cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--virtual-time-budget=5000"] + args + [url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def png_rows(path):
    """The unfiltered pixel rows of an 8-bit, non-interlaced RGB or RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            if depth != 8 or color not in (2, 6):
                raise ValueError("unexpected PNG format")
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    o = parser.parse_args()
    exe = browser()
    if exe is None:
        if os.environ.get("CI") == "true":
            print("check-html: chromium is missing under CI (scripts/install-deps.sh installs it)")
            return 1
        print("check-html: chromium is not installed; skipped")
        return 77
    os.makedirs(o.out, exist_ok=True)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in REPORTS:
            html = os.path.join(tmp, name + ".html")
            r = subprocess.run([os.path.abspath(o.bin)] + args + ["--report", html],
                               cwd=o.root, capture_output=True, text=True)
            if r.returncode != 0 or not os.path.exists(html):
                failures.append(f"{name}: roofline {' '.join(args)} --report failed: {r.stderr.strip()}")
                continue
            text = open(html, encoding="utf-8").read()
            urls = [u for u in re.findall(r"https?://[^\s\"'<>)]+", text)
                    if u != "http://www.w3.org/2000/svg"]
            if urls:
                failures.append(f"{name}: refers to the network: {urls[:3]}")
            dom = run_browser(exe, ["--dump-dom"], "file://" + html + "#selftest").stdout
            body = re.search(r"<body([^>]*)>", dom)
            attrs = body.group(1) if body else ""
            if 'data-ok="1"' not in attrs:
                failures.append(f"{name}: the page's script did not finish (body: {attrs.strip()!r})")
            if "data-error" in attrs:
                failures.append(f"{name}: script error: {attrs.strip()}")
            if "<table" in text and 'data-sort-ok="1"' not in attrs:
                failures.append(f"{name}: sorting the first table did not order it ({attrs.strip()!r})")
            png = os.path.join(o.out, name + ".png")
            run_browser(exe, ["--window-size=1280,2000", "--screenshot=" + png], "file://" + html)
            if not os.path.exists(png):
                failures.append(f"{name}: no screenshot")
                continue
            rows = png_rows(png)
            distinct_rows = len(set(rows))
            # A blank page is one or two distinct rows; a report has hundreds.
            if distinct_rows < 50:
                failures.append(f"{name}: the screenshot looks blank ({distinct_rows} distinct rows)")
            print(f"check-html: {name}: script ok, sort ok, {len(rows)} rows "
                  f"({distinct_rows} distinct) -> {png}")
    for f in failures:
        print("check-html: FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
