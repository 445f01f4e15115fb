#!/usr/bin/env python3
"""The expected-time model against single kernels timed on a GPU.

Reads the kernel timings `scripts/gpu-reference.py --kernels OUT.json` writes (PyTorch's bf16
matmuls, SDPA attention per backend, add/silu/rms_norm) and prints, per kernel, its time in a
stream (the CUDA-event time less what the events add around a kernel: a tiny add's event time
less its time per kernel in a replayed CUDA graph), the bound and the expected time of
`roofline op` for the same shape, and the error of the expected time; then the median and
largest |error| per class. The same method as tests/kernel_validation_test.cc.

With --quant QUANT.json (scripts/gpu-quant-kernels.py's output from the same machine) it also
puts the fp8, int8, bf16 and int4 weight-only matmuls and the many-wave flash attention of that
file beside the model; the int4 rows as `--weight-kernel KERNEL` costs them (default tinygemm,
the kernel they ran; "" for none).

usage: python3 scripts/kernel-validation.py [KERNELS.json] [--hw h100-sxm] [--roofline PATH]
           [--quant QUANT.json] [--weight-kernel tinygemm]
default file: docs/measurements/h100-2026-11-25/kernels.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(path):
    """The JSON file at path; an unreadable or malformed one ends the run (status 2)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"kernel-validation: {path}: {e}", file=sys.stderr)
        raise SystemExit(2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernels", nargs="?",
                        default=os.path.join(ROOT, "docs/measurements/h100-2026-11-25/kernels.json"))
    parser.add_argument("--hw", default="h100-sxm", help="device id or device JSON")
    parser.add_argument("--roofline", default=os.path.join(ROOT, "build/roofline"))
    parser.add_argument("--quant", default="", help="gpu-quant-kernels.py output, same machine")
    parser.add_argument("--weight-kernel", default="tinygemm",
                        help="how the int4 rows are costed (\"\": no weight kernel)")
    args = parser.parse_args()
    k = load(args.kernels)
    q = load(args.quant) if args.quant else None

    def op(what):
        out = subprocess.run([args.roofline, "op", *what, "--hw", args.hw, "--format", "json",
                              "--runtime", "cuda-graph"], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"kernel-validation: roofline op {' '.join(what)}: "
                             f"{out.stderr.strip()}")
        j = json.loads(out.stdout)
        return j["time_s"], j["expected_time_s"]

    tiny = [r for r in k["memory"] if r["op"] == "add" and r["elements"] == 4096]
    bracket = tiny[0]["median_us"] * 1e-6 - k["launch"]["graph_gpu_s_per_kernel"]
    rows = []
    for r in k["matmuls"]:
        rows.append(("matmul", f"{r['op']} m={r['m']} n={r['n']} k={r['k']}", r,
                     ["matmul", "--m", str(r["m"]), "--n", str(r["n"]), "--k", str(r["k"])]))
    for r in k["attention"]:
        if "refused" in r:
            continue
        what = ["attention", "--batch", str(r["b"]), "--heads", str(r["hq"]), "--kv-heads",
                str(r["hkv"]), "--head-dim", str(r["d"]), "--q-len", str(r["sq"]), "--kv-len",
                str(r["skv"])] + (["--causal"] if r["causal"] else [])
        rows.append((f"attention/{r['backend']}",
                     f"{r['kind']} b{r['b']} h{r['hq']}/{r['hkv']} {r['sq']}x{r['skv']} "
                     f"d{r['d']}{' causal' if r['causal'] else ''}", r, what))
    if q is not None:
        for r in q.get("matmuls", []) + q.get("int4", []) + q.get("int4_groups", []):
            if "median_us" not in r:
                continue
            what = ["matmul", "--m", str(r["m"]), "--n", str(r["n"]), "--k", str(r["k"])]
            if r["op"].startswith("fp8"):
                what += ["--dtype", "fp8"]
            elif r["op"] == "int8":
                what += ["--dtype", "int8"]
            elif r["op"] == "int4 weight-only":
                what += ["--weight-dtype", "int4", "--group-size", str(r.get("group", 128))]
                if args.weight_kernel:
                    what += ["--weight-kernel", args.weight_kernel]
            rows.append((r["op"] if "group" not in r else f"{r['op']} g{r['group']}",
                         f"{r['shape']} m={r['m']}", r, what))
        for r in q.get("attention", []):
            if "median_us" not in r:
                continue
            what = ["attention", "--batch", str(r["b"]), "--heads", str(r["hq"]), "--kv-heads",
                    str(r["hkv"]), "--head-dim", str(r["d"]), "--q-len", str(r["sq"]),
                    "--kv-len", str(r["skv"])] + (["--causal"] if r["causal"] else [])
            rows.append(("attention/flash many", f"{r['kind']} b{r['b']} h{r['hq']}/{r['hkv']} "
                         f"{r['sq']}x{r['skv']} d{r['d']}{' causal' if r['causal'] else ''}", r,
                         what))
    for r in k["memory"]:
        if r["op"] == "rms_norm":
            what = ["norm", "--rows", str(r["elements"] // 4096), "--cols", "4096"]
        else:
            what = ["elementwise", "--elements", str(r["elements"]), "--inputs",
                    "2" if r["op"] == "add" else "1"]
        rows.append((r["op"], f"{r['op']} {r['bytes'] / 1e6:.3g} MB", r, what))

    print(f"{k.get('gpu', '?')}, torch {k.get('torch', '?')}: {args.kernels}")
    print(f"in-stream time = CUDA-event median - {bracket * 1e6:.2f} us (what the events add "
          f"around a kernel); model: roofline op --hw {args.hw} --runtime cuda-graph")
    print(f"{'class':20} {'kernel':42} {'measured':>10} {'bound':>10} {'expected':>10} "
          f"{'error':>8}")
    errors = {}
    below = True
    for cls, name, r, what in rows:
        bound, expected = op(what)
        measured = r["median_us"] * 1e-6 - bracket
        err = (expected - measured) / measured
        below &= bound <= measured and bound <= expected
        errors.setdefault(cls, []).append(err)
        print(f"{cls:20} {name:42} {measured * 1e6:8.1f}us {bound * 1e6:8.1f}us "
              f"{expected * 1e6:8.1f}us {err * 100:+7.1f}%")
    print()
    for cls, errs in errors.items():
        a = [abs(e) for e in errs]
        print(f"{cls:20} {len(a):3} kernels: median |error| {statistics.median(a) * 100:5.1f}%, "
              f"largest {max(a) * 100:5.1f}%")
    print("the bound is below every measured and every expected time" if below
          else "A BOUND IS ABOVE A MEASURED OR EXPECTED TIME")
    return 0 if below else 1


if __name__ == "__main__":
    sys.exit(main())
