#!/usr/bin/env python3
"""Puts the end-to-end timings of scripts/gpu-e2e.py beside roofline's ideal bound and expected
time for the same workload, as a Markdown table.

For every prefill and decode point it runs `roofline model MODEL --hw HW --format json` with the
point's batch, prompt / context and runtime (eager for eager steps, cuda-graph for replayed
graphs), and prints measured / bound and measured / expected. An ideal bound above a measured
time is flagged (it would mean a counting or ceiling error). --rows writes the points (phase,
batch, tokens, runtime, measured seconds) as JSON, to turn into rows of
data/validation/published_runs.json by hand (each needs its source and quote).

usage: python3 scripts/e2e-compare.py E2E.json [--roofline build/roofline] [--hw h100-sxm]
           [--model llama-3-8b] [--rows ROWS.json]
"""
import argparse
import json
import subprocess
import sys


def predict(roofline, model, hw, phase, batch, tokens, runtime):
    cmd = [roofline, "model", model, "--hw", hw, "--phase", phase, "--batch", str(batch),
           "--runtime", runtime, "--format", "json"]
    cmd += ["--prompt", str(tokens)] if phase == "prefill" else ["--context", str(tokens)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: e2e-compare.py: {' '.join(cmd)}: {out.stderr.strip()}")
    phases = json.loads(out.stdout)["phases"]
    p = next(x for x in phases if x["phase"] == phase)
    return p["time_s"], p["expected_time_s"], p["bound"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("e2e")
    parser.add_argument("--roofline", default="build/roofline")
    parser.add_argument("--hw", default="h100-sxm")
    parser.add_argument("--model", default="llama-3-8b")
    parser.add_argument("--rows", default="", help="also write the points to this JSON file")
    args = parser.parse_args()
    with open(args.e2e) as f:
        e2e = json.load(f)

    points = []  # (phase, batch, tokens, runtime, measured seconds)
    for p in e2e["prefill"]:
        points.append(("prefill", p["batch"], p["prompt"], "eager", p["median_ms"] * 1e-3))
    for p in e2e["decode"]:
        points.append(("decode", p["batch"], p["context"], "eager", p["eager"]["median_ms"] * 1e-3))
        if "graph" in p:
            points.append(("decode", p["batch"], p["context"], "cuda-graph",
                           p["graph"]["median_ms"] * 1e-3))

    print(f"{e2e['gpu']}, torch {e2e['torch']}, transformers {e2e['transformers']}, "
          f"{args.model} shape, bf16, SDPA; prediction: roofline model --hw {args.hw}\n")
    print("| phase | batch | prompt/context | launch | measured | bound | expected "
          "| measured/bound | measured/expected | binding |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---|")
    rows = []
    bound_above = 0
    for phase, batch, tokens, runtime, measured in points:
        bound, expected, verdict = predict(args.roofline, args.model, args.hw, phase, batch,
                                           tokens, runtime)
        flag = "" if bound <= measured else " (bound above measured!)"
        bound_above += bound > measured
        print(f"| {phase} | {batch} | {tokens} | {runtime} | {measured * 1e3:.2f} ms "
              f"| {bound * 1e3:.2f} ms | {expected * 1e3:.2f} ms | {measured / bound:.2f}x{flag} "
              f"| {measured / expected:.2f}x | {verdict} |")
        rows.append({"phase": phase, "batch": batch, "tokens": tokens, "runtime": runtime,
                     "measured_s": measured})
    print(f"\n{len(points)} points; ideal bound above the measured time: {bound_above}")
    if args.rows:
        with open(args.rows, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
