#!/usr/bin/env python3
"""Figures of data/efficiency.json fitted to kernel-level timings only (scripts/gpu-quant-kernels.py
and gpu-reference.py on an H100 and an H200): the weight-only int4 kernel ("weight_only_kernels"),
the cap on fused attention's waves ("attention_waves" max_waves), Inductor's int8 and float8
weight-only matmuls and PyTorch's row-wise float8 product (more "weight_only_kernels" entries,
sections 3 to 5).

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

Fits, on an H100 rerun in which every weight copy has its own scales and zeros, at groups of
32, 64 and 128 along K: fixed and stream_rate by least squares on the rows m = 1, 2 (the weights
streamed once, the matrix work small); matrix_rate as the median rate of the rows m >= 32 (the
time linear in m). Bytes are what the kernel reads: int4 weights, a bf16 scale and zero per
group and column, activations and output. Prints the fit, its error per group size, and the
same on the first H100 and H200 runs (group 128).

2. Attention waves. The fixed time per wave of thread blocks (10.6 us on the H100, fitted to 22
flash kernels of at most 16 waves) over-counts kernels of many more waves: an SM that runs block
after block overlaps one block's fixed work with the next's. For each H100 kernel of more than 16
waves, the expected time less its wave term (`roofline op attention --format json`: the kernel's
expected time less expected.attention_waves_s) leaves room for (measured - rest) / 10.6 us waves;
the cap is the median of those, rounded. Prints them, and the H200's as a check.

3. Inductor's int8 weight-only matmul (gpt-fast's int8 linear under torch.compile), timed twice
on H100s at the int8 validation rows' shapes (docs/measurements/h100-2026-11-26/quant-compiled/):
the "inductor-int8" kernel's two regimes, one row and 2 to 16 rows. A free line through fixed time
and bytes gives each regime's rate: the copy rate at one row, a fifth of it from two rows on (5
bytes moved per byte read); with that traffic at the H100's copy bandwidth, the fixed time is
fitted (least squares of the relative error).

4. torch.compile's float8 weight-only linear (torchao's float8 weight-only pattern), four shapes at
one row on an H100 (docs/measurements/h100-2026-11-26/quant-compiled/fp8-compiled.json): the
"inductor-fp8" kernel, fixed + bytes once at the copy rate, the fixed time fitted as in 3.

5. PyTorch's row-wise float8 product (torch._scaled_mm with a scale per activation row and per
weight column, what torchao's float8 dynamic per-row linear calls): the "scaled-mm-rowwise"
kernel. At 1 to 128 rows it takes the same time on an H100 and an H200 for a 4096 x 4096 weight
(11.5-12.3 us beyond the events and the launch gap, for 17 MB that the H100's copy rate moves in
5.8 us), and 34-37 us on both for a 14336 x 4096 one: its thread blocks walk K in tiles of 128
(RowwiseScaledMM.cu), each step a fixed number of cycles. Fitted: the cycles of a
step, on the H100 timings (the H200's check it); the fixed time of the whole compiled linear
(the activation's scaling included) at one row.

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
CYCLES = 132 * 1.98e9  # both chips: 132 SMs at 1.98 GHz
# The fit: an H100 rerun whose every weight copy has its own scales and zeros (so they stream
# from device memory too), at the group sizes of gpt-fast (32), torchao (64) and 128.
FIT = ("docs/measurements/h100-2026-11-26/int4-rerun/quant-int4.json",
       "docs/measurements/h100-2026-11-26/int4-rerun/kernels.json")
# Checks: the first runs on both chips (group 128; one scales tensor shared by the copies).
CHECKS = [
    ("docs/measurements/h100-2026-11-26/quant.json", "docs/measurements/h100-2026-11-26/kernels.json"),
    ("docs/measurements/h200-2026-11-26/quant.json", "docs/measurements/h200-2026-11-26/kernels.json"),
]
# Both runs of the attention cap.
DEFAULT = CHECKS


def rows_of(quant_path, kernels_path, sections=("int4", "int4_groups")):
    """Timed int4 rows: in-stream seconds, bytes the kernel reads (int4 weights, a bf16 scale and
    zero per group and column, activations, output) and matrix FLOPs."""
    with open(os.path.join(ROOT, quant_path)) as f:
        q = json.load(f)
    with open(os.path.join(ROOT, kernels_path)) as f:
        k = json.load(f)
    tiny = [r for r in k["memory"] if r["op"] == "add" and r["elements"] == 4096]
    bracket = tiny[0]["median_us"] * 1e-6 - k["launch"]["graph_gpu_s_per_kernel"]
    out = []
    for section in sections:
        for r in q.get(section, []):
            if "median_us" not in r:
                continue
            out.append({"gpu": q["gpu"], "shape": r["shape"], "m": r["m"],
                        "group": r.get("group", 128), "bytes": r["bytes"], "flops": r["flops"],
                        "t": r["median_us"] * 1e-6 - bracket})
    return out


def report(label, rows, fixed, stream, matrix):
    by_group = {}
    for r in rows:
        model = GAP_S + fixed + max(r["bytes"] / stream, r["flops"] / matrix)
        by_group.setdefault(r["group"], []).append((model - r["t"]) / r["t"])
    for group, errs in sorted(by_group.items()):
        a = [abs(e) for e in errs]
        print(f"  {label}, group {group}: {len(a)} rows, median |error| "
              f"{statistics.median(a) * 100:.1f}%, largest {max(a) * 100:.1f}%")


def fit_tinygemm():
    rows = rows_of(*FIT)
    # fixed + bytes * a (a = 1 / stream rate), least squares over m = 1, 2.
    low = [r for r in rows if r["m"] <= 2]
    xs = [r["bytes"] for r in low]
    ys = [r["t"] - GAP_S for r in low]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    a = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    fixed = my - a * mx
    stream = 1 / a
    high = [r for r in rows if r["m"] >= 32]
    matrix = statistics.median(r["flops"] / (r["t"] - GAP_S - fixed) for r in high)
    print(f"tinygemm: fit over the {len(low)} rows with m <= 2 and the {len(high)} with m >= 32 of "
          f"{FIT[0]}:")
    print(f"  fixed {fixed * 1e6:.2f} us; stream {stream / 1e12:.3f} TB/s = "
          f"{stream / CYCLES:.2f} B per SM-cycle; matrix {matrix / 1e12:.2f} TFLOP/s = "
          f"{matrix / CYCLES:.1f} FLOP per SM-cycle")
    report("the fit's own rows", rows, fixed, stream, matrix)
    for check in CHECKS:
        report(check[0], rows_of(*check, sections=("int4",)), fixed, stream, matrix)
    # The first runs, chip against chip: the same shapes and rows.
    h100, h200 = (rows_of(*c, sections=("int4",)) for c in CHECKS)
    diffs = [abs(x["t"] - y["t"]) / y["t"] for x, y in zip(h100, h200)]
    print(f"  H100 against H200 (first runs, {len(diffs)} rows): median difference "
          f"{statistics.median(diffs) * 100:.1f}%, largest {max(diffs) * 100:.1f}%")


# Inductor's int8 weight-only GEMV (gpt-fast's int8 linear under torch.compile with gpt-fast's
# settings), timed twice on H100s at the int8 validation rows' shapes.
INT8_RUNS = ["docs/measurements/h100-2026-11-26/quant-compiled/int8-shapes-run1.json",
             "docs/measurements/h100-2026-11-26/quant-compiled/int8-shapes-run2.json"]


def fixed_of_relative_error(model_s, ys):
    """The fixed time f that makes f + model_s[i] closest to ys[i] in relative error (least
    squares, each point weighted by 1 / y^2): the model is judged by relative error, and a plain
    fit lets the largest shapes decide the small ones' fixed time."""
    ws = [1 / y ** 2 for y in ys]
    return sum(w * (y - m) for w, y, m in zip(ws, ys, model_s)) / sum(ws)


# The regimes of "inductor-int8": rows, and the bytes of device memory moved per byte the
# product reads (one row: the weights once; 2 to 16 rows: 5, a bf16 copy of the int8 weights
# written and read back, inferred from the rate, not profiled).
INT8_REGIMES = [((1, 1), 1.0), ((2, 16), 5.0)]


def fit_inductor_int8():
    """The "inductor-int8" kernel of data/efficiency.json: per regime of rows, fixed + bytes x
    traffic / the H100's achievable copy bandwidth, the fixed time fitted; the free line
    (fixed + bytes / rate) beside it, which gives the traffic. The events' bracket is the one of
    the first 2026-11-26 H100 run (these ran on other machines of the same pool)."""
    with open(os.path.join(ROOT, CHECKS[0][1])) as f:
        k = json.load(f)
    with open(os.path.join(ROOT, "data/hardware/h100-sxm.json")) as f:
        copy = json.load(f)["achievable"]["memory"]["hbm"]["value"]
    tiny = [r for r in k["memory"] if r["op"] == "add" and r["elements"] == 4096]
    bracket = tiny[0]["median_us"] * 1e-6 - k["launch"]["graph_gpu_s_per_kernel"]
    timings = []
    for path in INT8_RUNS:
        with open(os.path.join(ROOT, path)) as f:
            q = json.load(f)
        timings += [r for r in q.get("int8_shapes", []) if "median_us" in r]
    print(f"Inductor int8 (inductor-int8): {len(INT8_RUNS)} runs, events' bracket "
          f"{bracket * 1e6:.2f} us, gap {GAP_S * 1e6:.1f} us, copy {copy / 1e12:.2f} TB/s:")
    for (lo, hi), traffic in INT8_REGIMES:
        rows = [(r["bytes"], r["median_us"] * 1e-6 - bracket - GAP_S) for r in timings
                if lo <= r["m"] <= hi]
        xs, ys = [r[0] for r in rows], [r[1] for r in rows]
        # The free line, for the rate it implies.
        ws = [1 / y ** 2 for y in ys]
        mx = sum(w * x for w, x in zip(ws, xs)) / sum(ws)
        my = sum(w * y for w, y in zip(ws, ys)) / sum(ws)
        a = (sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys))
             / sum(w * (x - mx) ** 2 for w, x in zip(ws, xs)))
        memory = [x * traffic / copy for x in xs]
        fixed = fixed_of_relative_error(memory, ys)
        errs = [abs(fixed + m - y) / y for m, y in zip(memory, ys)]
        print(f"  rows {lo}-{hi}: {len(rows)} timings; the free line's rate {1 / a / 1e12:.3f} "
              f"TB/s = copy / {copy * a:.2f}; with traffic {traffic:g} at the copy rate: fixed "
              f"{fixed * 1e6:.2f} us, median |error| {statistics.median(errs) * 100:.1f}%, "
              f"largest {max(errs) * 100:.1f}%")


# torchao's float8 linears re-implemented and compiled (scripts/gpu-quant-kernels.py --only
# fp8_compiled), and PyTorch's row-wise float8 product timed alone (its "matmuls" section).
FP8_COMPILED = "docs/measurements/h100-2026-11-26/quant-compiled/fp8-compiled.json"
# PyTorch's row-wise kernel on sm90 (aten/src/ATen/native/cuda/RowwiseScaledMM.cu): tiles of
# 64 or 128 rows by 128 columns by 128 along K (transposed at 65 to 128 rows of a product up to
# 4096 x 4096), always 128 along K. The fit takes 1 to 128 rows, where the time stays flat.
ROWWISE_K_TILE, ROWWISE_N_TILE, ROWWISE_MAX_ROWS = 128, 128, 128


def events_bracket(kernels_path):
    with open(os.path.join(ROOT, kernels_path)) as f:
        k = json.load(f)
    tiny = [r for r in k["memory"] if r["op"] == "add" and r["elements"] == 4096]
    return tiny[0]["median_us"] * 1e-6 - k["launch"]["graph_gpu_s_per_kernel"]


def copy_rate(device):
    with open(os.path.join(ROOT, f"data/hardware/{device}.json")) as f:
        return json.load(f)["achievable"]["memory"]["hbm"]["value"]


def sms_and_clock(device):
    """The device file's SM count and boost clock (the H100 and H200: 132 at 1.98 GHz)."""
    with open(os.path.join(ROOT, f"data/hardware/{device}.json")) as f:
        info = json.load(f)["info"]
    return info["sm_count"]["value"], info["boost_clock"]["value"]


def fit_inductor_fp8():
    """The "inductor-fp8" kernel: torch.compile's float8 weight-only linear at one row, fixed +
    its bytes once at the H100's copy rate, the fixed time fitted as for inductor-int8."""
    bracket = events_bracket(CHECKS[0][1])
    copy = copy_rate("h100-sxm")
    with open(os.path.join(ROOT, FP8_COMPILED)) as f:
        q = json.load(f)
    rows = [r for r in q["fp8_compiled"] if r["op"] == "fp8 weight-only compiled"]
    ys = [r["median_us"] * 1e-6 - bracket - GAP_S for r in rows]
    memory = [r["bytes"] / copy for r in rows]
    fixed = fixed_of_relative_error(memory, ys)
    errs = [(fixed + m - y) / y for m, y in zip(memory, ys)]
    # The free line (fixed + bytes / rate), weighted by 1 / y^2 as in section 3, for its rate.
    xs = [r["bytes"] for r in rows]
    ws = [1 / y ** 2 for y in ys]
    mx = sum(w * x for w, x in zip(ws, xs)) / sum(ws)
    my = sum(w * y for w, y in zip(ws, ys)) / sum(ws)
    a = (sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys))
         / sum(w * (x - mx) ** 2 for w, x in zip(ws, xs)))
    print(f"Inductor float8 weight-only (inductor-fp8): {len(rows)} timings at one row; the free "
          f"line's rate {1 / a / 1e12:.3f} TB/s = copy x {1 / a / copy:.2f}; traffic 1 "
          f"at {copy / 1e12:.2f} TB/s: fixed {fixed * 1e6:.2f} us, median |error| "
          f"{statistics.median(abs(e) for e in errs) * 100:.1f}%, largest "
          f"{max(abs(e) for e in errs) * 100:.1f}%")
    for r, e in zip(rows, errs):
        print(f"  {r['shape']}: {e * 100:+.1f}%")


def rowwise_terms(r, copy, step_s, sms):
    """The memory term of the row-wise kernel: its bytes at the copy rate, or its steps along
    K (column tiles in waves over the SMs), whichever is longer."""
    waves = math.ceil(math.ceil(r["n"] / ROWWISE_N_TILE) / sms)
    return max(r["bytes"] / copy, waves * math.ceil(r["k"] / ROWWISE_K_TILE) * step_s)


def fit_scaled_mm_rowwise():
    """The "scaled-mm-rowwise" kernel. The time of a step along K (and the product's own
    fixed time) fitted to the row-wise torch._scaled_mm timed alone at 1 to 128 rows on the
    H100, by least squares of the relative error over a grid of step times; the H200's same
    timings (more bandwidth, the same SMs and clock) check it. The regime's fixed time is then
    fitted, at that step, to the compiled dynamic per-row linear (the activation's scaling
    timed with the product) at one row."""
    def timings(quant_path, kernels_path):
        bracket = events_bracket(kernels_path)
        with open(os.path.join(ROOT, quant_path)) as f:
            q = json.load(f)
        rows = [r for r in q["matmuls"] if r["op"] == "fp8 rowwise" and "median_us" in r
                and r["m"] <= ROWWISE_MAX_ROWS]
        return rows, [r["median_us"] * 1e-6 - bracket - GAP_S for r in rows]

    def fit(rows, ys, copy):
        best = None
        for tenth_ns in range(500, 10000):
            step = tenth_ns * 1e-10
            terms = [rowwise_terms(r, copy, step, sms) for r in rows]
            fixed = fixed_of_relative_error(terms, ys)
            err = sum(((fixed + t - y) / y) ** 2 for t, y in zip(terms, ys))
            if best is None or err < best[0]:
                best = (err, step, fixed)
        return best[1], best[2]

    def errors(rows, ys, copy, step, fixed):
        return [(fixed + rowwise_terms(r, copy, step, sms) - y) / y for r, y in zip(rows, ys)]

    h100 = timings(*CHECKS[0])
    h200 = timings(*CHECKS[1])
    copy100, copy200 = copy_rate("h100-sxm"), copy_rate("h200")
    sms, clock = sms_and_clock("h100-sxm")
    assert sms_and_clock("h200") == (sms, clock), "the fit assumes the same SMs and clock"
    step, fixed = fit(*h100, copy100)
    print(f"Row-wise float8 product (scaled-mm-rowwise): {len(h100[0])} H100 timings at 1 to "
          f"{ROWWISE_MAX_ROWS} rows: a step along K {step * 1e6:.4f} us = {step * clock:.0f} "
          f"cycles at {clock / 1e9:.2f} GHz, the product's own fixed time {fixed * 1e6:.2f} us")
    for label, (rows, ys), copy in (("H100 (the fit)", h100, copy100),
                                    ("H200 (a check)", h200, copy200)):
        e = [abs(x) for x in errors(rows, ys, copy, step, fixed)]
        print(f"  {label}: median |error| {statistics.median(e) * 100:.1f}%, largest "
              f"{max(e) * 100:.1f}%")
    bracket = events_bracket(CHECKS[0][1])
    with open(os.path.join(ROOT, FP8_COMPILED)) as f:
        q = json.load(f)
    rows = [r for r in q["fp8_compiled"] if r["op"] == "fp8 dynamic-row compiled"]
    ys = [r["median_us"] * 1e-6 - bracket - GAP_S for r in rows]
    terms = [rowwise_terms(r, copy100, step, sms) for r in rows]
    linear_fixed = fixed_of_relative_error(terms, ys)
    errs = [(linear_fixed + t - y) / y for t, y in zip(terms, ys)]
    print(f"  the compiled dynamic per-row linear, {len(rows)} timings at one row: fixed "
          f"{linear_fixed * 1e6:.2f} us, median |error| "
          f"{statistics.median(abs(e) for e in errs) * 100:.1f}%, largest "
          f"{max(abs(e) for e in errs) * 100:.1f}%")
    for r, e in zip(rows, errs):
        print(f"    {r['shape']}: {e * 100:+.1f}%")


def fit_max_waves(roofline):
    wave_s = None
    with open(os.path.join(ROOT, "data/efficiency.json")) as f:
        for w in json.load(f)["attention_waves"]:
            if w["device"] == "h100-sxm":
                wave_s = w["value"]
    for quant_path, kernels_path in DEFAULT:
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
    fit_inductor_int8()
    fit_inductor_fp8()
    fit_scaled_mm_rowwise()
    return 0


if __name__ == "__main__":
    sys.exit(main())
