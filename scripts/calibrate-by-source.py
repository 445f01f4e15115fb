#!/usr/bin/env python3
"""Calibrate on half of each source's published runs, predict the other half.

For every source of data/validation/published_runs.json (its URL) and engine (or stack) with at
least 6 runs that have expected times, the runs sorted by id are split alternately: the first,
third, ... fit the engine's host work (`roofline calibrate`), the others are predicted with it
(`--check`). Prints a Markdown table of the predicted half's median |error| before and after, per
phase: the table of docs/calibrate.md. Calibrated rows never enter the uncalibrated statistics.

usage: scripts/calibrate-by-source.py [ROOFLINE_BIN]
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "roofline")
NO_EXPECTED = {"groq-lpu", "cerebras-cs2", "cerebras-cs3", "cerebras-cs2-memoryx",
               "cerebras-cs3-memoryx"}


def label(source):
    """A short name for a source: owner/repo and the file of a GitHub address."""
    m = re.match(r"https://github.com/([^/]+/[^/]+)/blob/[0-9a-f]+/(.*)", source)
    if m:
        return f"{m.group(1)} {m.group(2).split('/')[-1]}"
    return "this project's runs" if source == "this" else source


def main():
    with open(os.path.join(ROOT, "data/validation/published_runs.json")) as f:
        data = json.load(f)
    groups = collections.defaultdict(list)
    for r in data["runs"]:
        if r["hw"] in NO_EXPECTED:
            continue
        source = r["source"].split(" ")[0]
        groups[(source, r.get("engine", r["stack"]))].append(r)
    print("| source | engine or stack | fit / predicted | phase | predicted half, before | after |")
    print("|---|---|---|---|---:|---:|")
    totals = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for (source, engine), rows in sorted(groups.items()):
            if len(rows) < 6:
                continue
            rows.sort(key=lambda r: r["id"])
            fit, check = rows[0::2], rows[1::2]
            paths = []
            for name, part in (("fit", fit), ("check", check)):
                path = os.path.join(tmp, name + ".json")
                with open(path, "w") as f:
                    json.dump({"schema_version": 1, "comment": "", "runs": part}, f)
                paths.append(path)
            out = subprocess.run([BIN, "calibrate", paths[0], "--check", paths[1], "-o",
                                  os.path.join(tmp, "engine.json"), "--format", "json"],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                print(f"| {label(source)} | {engine} | {len(fit)} / {len(check)} | - | "
                      f"not calibrated: {out.stderr.strip()} | |")
                continue
            result = json.loads(out.stdout)
            for ph in result["phases"]:
                before, after = ph["check_before"], ph["check_after"]
                if not before:
                    continue
                totals["before"].extend(
                    abs(r["before_s"] - r["measured_s"]) / r["measured_s"]
                    for r in result["runs"] if r["check"] and r["phase"] == ph["phase"])
                totals["after"].extend(
                    abs(r["after_s"] - r["measured_s"]) / r["measured_s"]
                    for r in result["runs"] if r["check"] and r["phase"] == ph["phase"])
                print(f"| {label(source)} | {engine} | {ph['runs']} / {before['runs']} | {ph['phase']} | "
                      f"{100 * before['median_abs_error']:.1f}% | "
                      f"{100 * after['median_abs_error']:.1f}% |")
    for k in ("before", "after"):
        v = sorted(totals[k])
        if v:
            n = len(v)
            med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
            print(f"\nall predicted halves, {k}: {n} runs, median |error| {100 * med:.1f}%")


if __name__ == "__main__":
    main()
