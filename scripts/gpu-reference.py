#!/usr/bin/env python3
"""PyTorch's figures for the GPU checks of docs/measurements/gpu-method.md.

Prints device-to-device copy bandwidth (bytes read + bytes written per second) and the bf16
torch.matmul rate at 8192^3, both medians of CUDA-event-timed runs after warm-up, on random
inputs, to compare with `roofline measure --device cuda`. Needs a CUDA GPU and PyTorch.

With --kernels OUT.json it also measures, for the expected-time model, what kernel-level data
it needs: bf16 matmuls with few rows (M = 1..4096) against Llama-3-8B's weight shapes, the weights
rotated over copies larger than L2 so each product reads them from device memory, and the cost of
one kernel launch: PyTorch eager (host time per launch of a one-element add, and the GPU time per
kernel when the host is the limit) and CUDA-graph replay (GPU time per kernel).

usage: python3 scripts/gpu-reference.py [--device 0] [--repetitions 20] [--kernels OUT.json]
"""
import argparse
import json
import statistics
import sys
import time


def time_ms(torch, fn, warmup, repetitions, queue_ahead=False, before=None):
    """Median, min, max milliseconds between CUDA events around fn. queue_ahead: the GPU first
    sleeps ~1 ms so the launch is queued before the start event runs, and the events bracket
    the kernel alone, not the host's launch time (needed for kernels of tens of us). before:
    called before every call of fn (warm-up too), outside the events."""
    for _ in range(warmup):
        if before:
            before()
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repetitions):
        if before:
            before()
        if queue_ahead:
            torch.cuda._sleep(2_000_000)
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
    parser.add_argument("--kernels", default="", help="also measure skinny matmuls and launch "
                        "costs, written to this JSON file")
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
          f"(median of {args.repetitions}, spread {(hi - lo) / med:.1%}, back to back)")
    del a, b, src, dst
    torch.cuda.empty_cache()
    same_method_gemms(torch, dev, e, args.repetitions)
    if args.kernels:
        kernels_main(torch, dev, args)


def same_method_gemms(torch, dev, e, repetitions):
    """torch.matmul in bf16 at the seven shapes `roofline measure` times for its tensor ceiling
    (m x n x k: e^3, (e/2)^3, 7e/4 x e/4 x e/2, 7e/4 x e/2 x e/2, e/2 x e/4 x 7e/4,
    e/2 x e/2 x 7e/4, e/2 x e x 7e/4), timed as `measure` times them: inputs uniform in (-1, 1), a buffer twice
    the L2 size written before each timed launch, the launch queued behind a GPU sleep so the
    events bracket the kernel alone; median and fastest launch of each. The fastest launch of the
    fastest shape is the like-for-like figure for the device file's ceiling."""
    l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 50 * 2**20)
    flush = torch.empty(2 * l2, device=dev, dtype=torch.uint8)
    shapes = [(e, e, e), (e // 2, e // 2, e // 2), (7 * e // 4, e // 4, e // 2),
              (7 * e // 4, e // 2, e // 2), (e // 2, e // 4, 7 * e // 4),
              (e // 2, e // 2, 7 * e // 4), (e // 2, e, 7 * e // 4)]
    best_median = (0, None)
    best_fastest = (0, None)
    for m, n, k in shapes:
        a = torch.rand(m, k, device=dev, dtype=torch.bfloat16) * 2 - 1
        b = torch.rand(k, n, device=dev, dtype=torch.bfloat16) * 2 - 1
        med, lo, hi = time_ms(torch, lambda: torch.matmul(a, b), 3, repetitions,
                              queue_ahead=True, before=lambda: flush.fill_(0x5a))
        flops = 2 * m * n * k
        rate, fastest = flops / (med * 1e-3), flops / (lo * 1e-3)
        print(f"bf16 matmul {m}x{n}x{k} as measure times it: median {rate / 1e12:.1f}, fastest "
              f"{fastest / 1e12:.1f} TFLOP/s (of {repetitions}, spread {(hi - lo) / med:.1%})")
        best_median = max(best_median, (rate, (m, n, k)), key=lambda x: x[0])
        best_fastest = max(best_fastest, (fastest, (m, n, k)), key=lambda x: x[0])
        del a, b
    for what, (rate, shape) in [("median", best_median), ("fastest launch", best_fastest)]:
        print(f"bf16 matmul, the seven shapes, best {what}: {rate / 1e12:.1f} TFLOP/s at "
              f"{shape[0]}x{shape[1]}x{shape[2]}")
    torch.cuda.empty_cache()


def attention_kernels(torch, dev, repetitions):
    """scaled_dot_product_attention in bf16 through each fused backend that accepts the shape:
    causal prefill (FLOPs: 4 b h s^2 d / 2, the causal half of QK^T and PV), the non-causal
    shape of FlashAttention-2's benchmark (b 2, s 8192, 16 heads of 128), and decode against a
    cache (one query per sequence, grouped heads 32/8; bytes: the K and V cache read once). L2
    written before every timed run, launches queued ahead."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import torch.nn.functional as F
    l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 50 * 2**20)
    flush = torch.empty(2 * l2, device=dev, dtype=torch.uint8)
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    rows = []

    def run(kind, b, hq, hkv, sq, skv, d, causal):
        q = torch.rand(b, hq, sq, d, device=dev, dtype=torch.bfloat16) - 0.5
        k = torch.rand(b, hkv, skv, d, device=dev, dtype=torch.bfloat16) - 0.5
        v = torch.rand(b, hkv, skv, d, device=dev, dtype=torch.bfloat16) - 0.5
        for name, backend in backends.items():
            def call():
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                          enable_gqa=hq != hkv)
            try:
                call()
                torch.cuda.synchronize()
            except Exception as exc:  # a backend that refuses the shape
                rows.append({"kind": kind, "backend": name, "b": b, "hq": hq, "hkv": hkv,
                             "sq": sq, "skv": skv, "d": d, "causal": causal,
                             "refused": str(exc).splitlines()[0][:160]})
                continue
            med, lo, hi = time_ms(torch, call, 3, repetitions, queue_ahead=True,
                                  before=lambda: flush.fill_(1))
            pairs = sq * skv - (sq * (sq - 1) // 2 if causal and sq == skv else 0)
            flops = 4 * b * hq * pairs * d
            moved = 2 * (q.numel() * 2 + k.numel() + v.numel())
            rows.append({"kind": kind, "backend": name, "b": b, "hq": hq, "hkv": hkv, "sq": sq,
                         "skv": skv, "d": d, "causal": causal, "median_us": med * 1e3,
                         "min_us": lo * 1e3, "max_us": hi * 1e3,
                         "flop_per_s": flops / (med * 1e-3), "bytes_per_s": moved / (med * 1e-3)})
            r = rows[-1]
            print(f"attention {kind:7} {name:9} b {b:3} h {hq}/{hkv} q {sq:5} kv {skv:6} d {d:3} "
                  f"{'causal' if causal else 'full  '}: {r['median_us']:9.1f} us "
                  f"{r['flop_per_s'] / 1e12:7.1f} TFLOP/s {r['bytes_per_s'] / 1e12:6.2f} TB/s")
        del q, k, v
        torch.cuda.empty_cache()

    for d, heads in [(64, 32), (128, 32)]:
        for s in [512, 1024, 2048, 4096, 8192]:
            run("prefill", 1, heads, heads, s, s, d, True)
    run("prefill", 2, 16, 16, 8192, 8192, 128, False)
    run("prefill", 2, 16, 16, 8192, 8192, 128, True)
    for ctx in [1024, 4096, 16384, 32768]:
        for b in [1, 8, 64]:
            if b * ctx <= 262144:
                run("decode", b, 32, 8, 1, ctx, 128, False)
    return rows


def memory_kernels(torch, dev, repetitions):
    """Memory-bound PyTorch kernels in bf16 over sizes from 8 kB to 512 MiB per tensor: add
    (2 reads, 1 write), silu (1 read, 1 write) and rms_norm over rows of 4096 (1 read, 1 write);
    bytes moved per second, the L2 written before each timed launch, launches queued ahead."""
    import torch.nn.functional as F
    l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 50 * 2**20)
    flush = torch.empty(2 * l2, device=dev, dtype=torch.uint8)
    rows = []
    for elements in [4096 * 2**i for i in range(0, 18, 2)]:
        x = torch.rand(elements, device=dev, dtype=torch.bfloat16) - 0.5
        y = torch.rand(elements, device=dev, dtype=torch.bfloat16) - 0.5
        w = torch.rand(4096, device=dev, dtype=torch.bfloat16)
        ops = [("add", lambda: x + y, 3), ("silu", lambda: F.silu(x), 2),
               ("rms_norm", lambda: F.rms_norm(x.view(-1, 4096), (4096,), w, 1e-5), 2)]
        for name, fn, passes in ops:
            med, lo, hi = time_ms(torch, fn, 3, repetitions, queue_ahead=True,
                                  before=lambda: flush.fill_(1))
            moved = passes * elements * 2
            rows.append({"op": name, "elements": elements, "bytes": moved, "median_us": med * 1e3,
                         "min_us": lo * 1e3, "bytes_per_s": moved / (med * 1e-3)})
            print(f"{name:8} {elements * 2:>12} B per tensor: {med * 1e3:9.1f} us "
                  f"{moved / (med * 1e-3) / 1e12:6.2f} TB/s")
        del x, y
    torch.cuda.empty_cache()
    return rows


def skinny_matmuls(torch, dev, repetitions):
    """bf16 x[M, K] @ W[K, N] for Llama-3-8B's projections, W rotated over copies > 4x L2."""
    l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 50 * 2**20)
    rows = []
    shapes = [("q_proj/o_proj", 4096, 4096), ("gate_proj/up_proj", 4096, 14336),
              ("down_proj", 14336, 4096), ("lm_head", 4096, 128256)]
    for name, k, n in shapes:
        copies = max(2, int(4 * l2 // (k * n * 2)) + 1)
        weights = [torch.rand(k, n, device=dev, dtype=torch.bfloat16) - 0.5
                   for _ in range(copies)]
        for m in [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]:
            x = torch.rand(m, k, device=dev, dtype=torch.bfloat16) - 0.5
            state = {"i": 0}

            def product():
                state["i"] = (state["i"] + 1) % copies
                return torch.matmul(x, weights[state["i"]])
            med, lo, hi = time_ms(torch, product, 3, repetitions, queue_ahead=True)
            moved = (m * k + k * n + m * n) * 2
            rows.append({"op": name, "m": m, "k": k, "n": n, "median_us": med * 1e3,
                         "min_us": lo * 1e3, "max_us": hi * 1e3,
                         "flop_per_s": 2 * m * k * n / (med * 1e-3),
                         "bytes_per_s": moved / (med * 1e-3), "weight_copies": copies})
        del weights
        torch.cuda.empty_cache()
    return rows


def launch_costs(torch, dev, kernels=2000):
    """Eager: host seconds per launch of x.add_(1) on one element, and GPU seconds per kernel
    while the host is the limit; graph: GPU seconds per kernel of a replayed graph of them."""
    x = torch.ones(1, device=dev)
    for _ in range(100):
        x.add_(1)
    torch.cuda.synchronize()
    host = []
    gpu = []
    for _ in range(5):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        start.record()
        for _ in range(kernels):
            x.add_(1)
        stop.record()
        t1 = time.perf_counter()
        stop.synchronize()
        host.append((t1 - t0) / kernels)
        gpu.append(start.elapsed_time(stop) * 1e-3 / kernels)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        x.add_(1)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(kernels):
            x.add_(1)
    med, lo, hi = time_ms(torch, graph.replay, 2, 10)
    return {"kernels": kernels,
            "eager_host_s_per_launch": statistics.median(host),
            "eager_gpu_s_per_kernel": statistics.median(gpu),
            "graph_gpu_s_per_kernel": med * 1e-3 / kernels,
            "graph_gpu_s_per_kernel_min": lo * 1e-3 / kernels}


def kernels_main(torch, dev, args):
    result = {"gpu": torch.cuda.get_device_name(dev), "torch": torch.__version__,
              "cuda": torch.version.cuda}
    result["launch"] = launch_costs(torch, dev)
    launch = result["launch"]
    print(f"launch: eager {launch['eager_host_s_per_launch'] * 1e6:.2f} us host per launch, "
          f"{launch['eager_gpu_s_per_kernel'] * 1e6:.2f} us GPU per kernel; graph "
          f"{launch['graph_gpu_s_per_kernel'] * 1e6:.2f} us GPU per kernel")
    result["attention"] = attention_kernels(torch, dev, args.repetitions)
    result["memory"] = memory_kernels(torch, dev, args.repetitions)
    result["matmuls"] = skinny_matmuls(torch, dev, args.repetitions)
    for r in result["matmuls"]:
        print(f"{r['op']:18} m {r['m']:5} k {r['k']:6} n {r['n']:6}: {r['median_us']:9.1f} us "
              f"{r['flop_per_s'] / 1e12:7.1f} TFLOP/s {r['bytes_per_s'] / 1e12:6.2f} TB/s")
    with open(args.kernels, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.kernels}")


if __name__ == "__main__":
    main()
