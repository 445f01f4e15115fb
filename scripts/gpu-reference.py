#!/usr/bin/env python3
"""PyTorch's figures for the GPU checks of docs/measurements/gpu-method.md.

Prints device-to-device copy bandwidth (bytes read + bytes written per second) and the bf16
torch.matmul rate at 8192^3, both medians of CUDA-event-timed runs after warm-up, on random
inputs, to compare with `roofline measure --device cuda`. Needs a CUDA GPU and PyTorch.

usage: python3 scripts/gpu-reference.py [--device 0] [--repetitions 20]
"""
import argparse
import statistics
import sys


def time_ms(torch, fn, warmup, repetitions):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repetitions):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", type=int, default=0)
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--copy-bytes", type=float, default=2**30, help="bytes per buffer")
    parser.add_argument("--edge", type=int, default=8192, help="matmul m = n = k")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("error: gpu-reference.py: PyTorch is not installed")
    if not torch.cuda.is_available():
        sys.exit("error: gpu-reference.py: no CUDA device found (torch.cuda.is_available())")
    torch.cuda.set_device(args.device)
    dev = torch.device("cuda", args.device)
    print(f"{torch.cuda.get_device_name(dev)} (cuda:{args.device}), torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}")

    n = int(args.copy_bytes) // 4
    src = torch.rand(n, device=dev, dtype=torch.float32) * 2 - 1
    dst = torch.empty_like(src)
    med, lo, hi = time_ms(torch, lambda: dst.copy_(src), 3, args.repetitions)
    moved = 2 * n * 4
    print(f"copy {n * 4 / 2**30:.2f} GiB: {moved / (med * 1e-3) / 1e12:.3f} TB/s "
          f"(bytes read + written; median of {args.repetitions}, spread {(hi - lo) / med:.1%})")

    e = args.edge
    a = torch.randn(e, e, device=dev, dtype=torch.bfloat16)
    b = torch.randn(e, e, device=dev, dtype=torch.bfloat16)
    med, lo, hi = time_ms(torch, lambda: torch.matmul(a, b), 3, args.repetitions)
    print(f"bf16 matmul {e}^3: {2 * e**3 / (med * 1e-3) / 1e12:.1f} TFLOP/s "
          f"(median of {args.repetitions}, spread {(hi - lo) / med:.1%})")


if __name__ == "__main__":
    main()
