#!/usr/bin/env python3
"""Two figures of data/efficiency.json fitted to kernel-level timings only (scripts/gpu-quant-kernels.py
and gpu-reference.py on an H100 and an H200): the weight-only int4 kernel ("weight_only_kernels")
and the cap on fused attention's waves ("attention_waves" max_waves).

1. tinygemm.
PyTorch's int4 weight-only matmul (torch._weight_int4pack_mm, the "tinygemm" kernel gpt-fast and
torchao run) takes the same time on an H100 (3.35 TB/s) and an H200 (4.8 TB/s): it is limited by
the work its SMs issue, not by device memory. The model (docs/expected-time.md):

    in-stream time = gap + fixed + max(bytes / stream_rate, matrix FLOPs / matrix_rate)

with stream_rate and matrix_rate per SM per clock cycle (both chips: 132 SMs at 1.98 GHz), so a
device with other SMs and clocks scales them (an assumption, printed as such). Each timing is
its CUDA-event median less what the events add around a kernel (a tiny add's event time less its
time per kernel in a replayed CUDA graph: kernel-validation.py's method); gap is the launch gap
of data/efficiency.json (1.0 us, in the model's expected time already).

Fits: fixed and stream_rate by least squares on the rows m = 1, 2 (the weights streamed once,
the matrix work small); matrix_rate as the median rate of the rows m >= 32 (the time linear in
m). Prints the fit and every row's error.

2. Attention waves. The fixed time per wave of thread blocks (10.6 us on the H100, fitted to 22
flash kernels of at most 16 waves) over-counts kernels of many more waves: an SM that runs block
after block overlaps one block's fixed work with the next's. For each H100 kernel of more than 16
waves, the expected time less its wave term (`roofline op attention --format json`: the kernel's
expected time less expected.attention_waves_s) leaves room for (measured - rest) / 10.6 us waves;
the cap is the median of those, rounded. Prints them, and the H200's as a check.

usage: python3 scripts/fit-kernel-figures.py [--roofline build/roofline]
       (the H100 and H200 runs of 2026-11-26 in docs/measurements/)
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAP_S = 1.0e-6
DEFAULT = [
    ("docs/measurements/h100-2026-11-26/quant.json", "docs/measurements/h100-2026-11-26/kernels.json",
     132, 1.98e9),
    ("docs/measurements/h200-2026-11-26/quant.json", "docs/measurements/h200-2026-11-26/kernels.json",
     132, 1.98e9),
]


def rows_of(quant_path, kernels_path, sms, clock):
    with open(os.path.join(ROOT, quant_path)) as f:
        q = json.load(f)
    with open(os.path.join(ROOT, kernels_path)) as f:
        k = json.load(f)
    tiny = [r for r in k["memory"] if r["op"] == "add" and r["elements"] == 4096]
    bracket = tiny[0]["median_us"] * 1e-6 - k["launch"]["graph_gpu_s_per_kernel"]
    out = []
    for r in q["int4"]:
        if "median_us" not in r:
            continue
        out.append({"gpu": q["gpu"], "shape": r["shape"], "m": r["m"], "bytes": r["bytes"],
                    "flops": r["flops"], "t": r["median_us"] * 1e-6 - bracket,
                    "cycles": sms * clock})
    return out


def fit_tinygemm():
    rows = [r for run in DEFAULT for r in rows_of(*run)]
    # fixed + bytes * a (a = 1 / stream rate), least squares over m = 1, 2.
    low = [r for r in rows if r["m"] <= 2]
    xs = [r["bytes"] for r in low]
    ys = [r["t"] - GAP_S for r in low]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    a = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    fixed = my - a * mx
    stream = 1 / a  # B/s on these chips
    cycles = low[0]["cycles"]
    high = [r for r in rows if r["m"] >= 32]
    matrix = statistics.median(r["flops"] / (r["t"] - GAP_S - fixed) for r in high)
    print(f"fit over {len(low)} rows with m <= 2 and {len(high)} with m >= 32 "
          f"({', '.join(sorted({r['gpu'] for r in rows}))}):")
    print(f"  fixed {fixed * 1e6:.2f} us; stream {stream / 1e12:.3f} TB/s = "
          f"{stream / cycles:.3f} B per SM-cycle; matrix {matrix / 1e12:.2f} TFLOP/s = "
          f"{matrix / cycles:.1f} FLOP per SM-cycle")
    errors = []
    for r in rows:
        model = GAP_S + fixed + max(r["bytes"] / stream, r["flops"] / matrix)
        err = (model - r["t"]) / r["t"]
        errors.append(abs(err))
        print(f"  {r['gpu']:22} {r['shape']:18} m {r['m']:4}: measured {r['t'] * 1e6:8.1f} us, "
              f"model {model * 1e6:8.1f} us, {err * 100:+6.1f}%")
    print(f"  {len(errors)} rows: median |error| {statistics.median(errors) * 100:.1f}%, "
          f"largest {max(errors) * 100:.1f}%")


def fit_max_waves(roofline):
    wave_s = None
    with open(os.path.join(ROOT, "data/efficiency.json")) as f:
        for w in json.load(f)["attention_waves"]:
            if w["device"] == "h100-sxm":
                wave_s = w["value"]
    for quant_path, kernels_path, _, _ in DEFAULT:
        with open(os.path.join(ROOT, quant_path)) as f:
            q = json.load(f)
        with open(os.path.join(ROOT, kernels_path)) as f:
            k = json.load(f)
        hw = "h200" if "H200" in q["gpu"] else "h100-sxm"
        tiny = [r for r in k["memory"] if r["op"] == "add" and r["elements"] == 4096]
        bracket = tiny[0]["median_us"] * 1e-6 - k["launch"]["graph_gpu_s_per_kernel"]
        room = []
        print(f"attention waves on {q['gpu']} ({hw}), {wave_s * 1e6:.1f} us per wave:")
        for r in q["attention"]:
            if "median_us" not in r:
                continue
            grouped = r["sq"] == 1
            rows = r["hq"] // r["hkv"] if grouped else r["sq"]
            blocks = r["b"] * (r["hkv"] if grouped else r["hq"]) * math.ceil(rows / 128)
            waves = max(1, math.ceil(blocks / q["sm_count"]))
            what = ["attention", "--batch", str(r["b"]), "--heads", str(r["hq"]), "--kv-heads",
                    str(r["hkv"]), "--head-dim", str(r["d"]), "--q-len", str(r["sq"]),
                    "--kv-len", str(r["skv"])] + (["--causal"] if r["causal"] else [])
            out = subprocess.run([roofline, "op", *what, "--hw", hw, "--format", "json",
                                  "--runtime", "cuda-graph"], capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"fit-kernel-figures: roofline op: {out.stderr.strip()}")
            kern = json.loads(out.stdout)["kernels"][0]
            rest = kern["expected_time_s"] - kern["expected"].get("attention_waves_s", 0)
            measured = r["median_us"] * 1e-6 - bracket
            fits = (measured - rest) / wave_s
            if waves > 16:
                room.append(fits)
            print(f"  {r['kind']:7} b {r['b']:3} q {r['sq']:4} kv {r['skv']:5} d {r['d']:3}: "
                  f"{waves:3} waves; measured {measured * 1e6:8.1f} us, the rest of the model "
                  f"{rest * 1e6:8.1f} us: room for {fits:5.1f} waves")
        if room:
            print(f"  kernels of more than 16 waves: room for {', '.join(f'{x:.1f}' for x in room)}"
                  f" waves, median {statistics.median(room):.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--roofline", default=os.path.join(ROOT, "build/roofline"))
    args = parser.parse_args()
    fit_tinygemm()
    fit_max_waves(args.roofline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
