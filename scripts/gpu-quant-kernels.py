#!/usr/bin/env python3
"""Kernel-level timings of the matmuls that quantized inference runs, for the expected-time model.

On a CUDA GPU with PyTorch, for the weight shapes of Llama-3-8B (and one of Llama-3-70B), with
the weights rotated over copies larger than four times the L2 so each product reads its weights
from device memory, every launch queued behind a GPU sleep so the CUDA events bracket the kernel
alone (gpu-reference.py's time_ms):

* fp8 (e4m3) x fp8 -> bf16 through torch._scaled_mm (cuBLASLt for one scale per tensor, and
  PyTorch's row-wise kernel for one scale per row and column), fast accumulation, and bf16
  torch.matmul at the same shapes on the same card, for the ratio;
* int8 x int8 -> int32 through torch._int_mm (cuBLASLt), as W8A8 (SmoothQuant-style) runs;
* weight-only int4 (groups of 128 along K) through torch._weight_int4pack_mm (the tinygemm kernel
  gpt-fast and torchao use) at decode sizes;
* weight-only int8 as gpt-fast writes it, F.linear(x, w.to(bf16)) * scales, eager (two kernels)
  and under torch.compile (one generated kernel), at one and four rows, with Inductor's defaults
  and again with the settings gpt-fast's generate.py makes (coordinate descent tuning);
* RMSNorm under torch.compile (one generated kernel) at gpu-reference.py's sizes;
* torchao's float8 linears under torch.compile (--only fp8_compiled): weight-only, and dynamic
  per-row activations through torch._scaled_mm;
* flash attention (SDPA's FlashAttention-2 backend) with more thread-block waves than
  gpu-reference.py's: grouped-query decode at batches 128 to 512, causal prefill at batch 4 to 16.

A shape or kernel the installed PyTorch refuses is recorded with the first line of its error, and
the rest still run. Writes one JSON file (rows as gpu-reference.py's, plus bytes and FLOPs).

usage: python3 scripts/gpu-quant-kernels.py --out quant.json [--repetitions 20]
           [--compile-budget 150] [--only SECTION...]
"""
import argparse
import importlib.util
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, k, n): x[m, k] @ W[k, n]
SHAPES = [("q_proj/o_proj", 4096, 4096), ("gate_proj/up_proj", 4096, 14336),
          ("down_proj", 14336, 4096), ("70b gate_proj", 8192, 28672)]
# The int8 weight-only projections of the validation rows that run gpt-fast's int8 linear
# (Llama-2-7B and -70B, Llama-3-8B, at tensor parallelism 1 and 8): what a fit of Inductor's
# kernel needs beyond the four shapes above, whose m = 1 times a line through fixed time and
# bytes fits only to 25%.
INT8_SHAPES = [("l2-7b q/o", 4096, 4096), ("l2-7b gate/up", 4096, 11008),
               ("l2-7b down", 11008, 4096), ("l3-8b k/v", 4096, 1024),
               ("l3-8b gate/up", 4096, 14336), ("l3-8b down", 14336, 4096),
               ("l2-70b q/o", 8192, 8192), ("l2-70b k/v", 8192, 1024),
               ("l2-70b gate/up", 8192, 28672), ("l2-70b down", 28672, 8192),
               ("l2-70b tp8 q", 8192, 1024), ("l2-70b tp8 o", 1024, 8192),
               ("l2-70b tp8 gate/up", 8192, 3584), ("l2-70b tp8 down", 3584, 8192),
               ("l2-7b lm_head", 4096, 32000)]


def load_time_ms():
    spec = importlib.util.spec_from_file_location("gpu_reference",
                                                  os.path.join(HERE, "gpu-reference.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.time_ms


class Bench:
    def __init__(self, torch, dev, repetitions):
        self.torch = torch
        self.dev = dev
        self.repetitions = repetitions
        self.time_ms = load_time_ms()
        self.l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 50 * 2**20)
        self.flush = torch.empty(2 * self.l2, device=dev, dtype=torch.uint8)

    def copies(self, weight_bytes):
        return max(2, int(4 * self.l2 // max(1, weight_bytes)) + 1)

    def rotate(self, fn, items, flush=False):
        """Times fn(item) with the item changing every call (weights rotated past the L2)."""
        state = {"i": 0}

        def call():
            state["i"] = (state["i"] + 1) % len(items)
            return fn(items[state["i"]])
        self.torch.cuda.synchronize()
        med, lo, hi = self.time_ms(self.torch, call, 3, self.repetitions, queue_ahead=True,
                                   before=(lambda: self.flush.fill_(1)) if flush else None)
        return {"median_us": med * 1e3, "min_us": lo * 1e3, "max_us": hi * 1e3}


def refused(exc):
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]


def fp8_int8_bf16(b, rows):
    torch = b.torch
    dev = b.dev
    f8 = torch.float8_e4m3fn
    one = torch.ones((), device=dev, dtype=torch.float32)
    for name, k, n in SHAPES:
        count = b.copies(k * n)
        w8 = [((torch.rand(n, k, device=dev) - 0.5) * 4).to(f8) for _ in range(count)]
        wi = [torch.randint(-63, 64, (n, k), device=dev, dtype=torch.int8) for _ in range(count)]
        wb = [(torch.rand(k, n, device=dev, dtype=torch.bfloat16) - 0.5) for _ in range(count)]
        col_scale = torch.rand(1, n, device=dev, dtype=torch.float32) + 0.5
        for m in [1, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]:
            x8 = ((torch.rand(m, k, device=dev) - 0.5) * 4).to(f8)
            xi = torch.randint(-63, 64, (m, k), device=dev, dtype=torch.int8)
            xb = torch.rand(m, k, device=dev, dtype=torch.bfloat16) - 0.5
            row_scale = torch.rand(m, 1, device=dev, dtype=torch.float32) + 0.5
            cases = [
                ("fp8 tensorwise", 1, 2,
                 lambda w: torch._scaled_mm(x8, w.t(), one, one, out_dtype=torch.bfloat16,
                                            use_fast_accum=True), w8),
                ("fp8 rowwise", 1, 2,
                 lambda w: torch._scaled_mm(x8, w.t(), row_scale, col_scale,
                                            out_dtype=torch.bfloat16, use_fast_accum=True), w8),
                ("int8", 1, 4, lambda w: torch._int_mm(xi, w.t()), wi),
                ("bf16", 2, 2, lambda w: torch.matmul(xb, w), wb),
            ]
            for op, in_bytes, out_bytes, fn, items in cases:
                row = {"op": op, "shape": name, "m": m, "k": k, "n": n, "weight_copies": count,
                       "flops": 2 * m * n * k,
                       "bytes": (m * k + k * n) * in_bytes + m * n * out_bytes}
                try:
                    fn(items[0])
                    row.update(b.rotate(fn, items))
                except Exception as exc:  # a shape or dtype this build refuses
                    row["refused"] = refused(exc)
                rows.append(row)
                if "median_us" in row:
                    t = row["median_us"] * 1e-6
                    print(f"{op:15} {name:18} m {m:5}: {row['median_us']:9.1f} us "
                          f"{row['flops'] / t / 1e12:7.1f} TFLOP/s {row['bytes'] / t / 1e12:6.2f} "
                          f"TB/s", flush=True)
                else:
                    print(f"{op:15} {name:18} m {m:5}: refused: {row['refused']}", flush=True)
            del x8, xi, xb
        del w8, wi, wb
        torch.cuda.empty_cache()


def int4_weight_only(b, rows, groups=(128,), ms=(1, 2, 4, 8, 16, 32, 64, 128)):
    """torch._weight_int4pack_mm; each weight copy has its own scales and zeros (bf16 pairs, one
    per group of K per column), so both stream from device memory."""
    torch = b.torch
    dev = b.dev
    for group in groups:
        for name, k, n in SHAPES:
            count = b.copies(k * n // 2)
            try:
                pairs = []
                for _ in range(count):
                    w = torch.randint(0, 256, (n, k // 2), device=dev, dtype=torch.uint8)
                    sz = torch.rand(k // group, n, 2, device=dev, dtype=torch.bfloat16) + 0.5
                    pairs.append((torch._convert_weight_to_int4pack(w, 8), sz))
            except Exception as exc:
                rows.append({"op": "int4 weight-only", "shape": name, "k": k, "n": n,
                             "group": group, "refused": refused(exc)})
                print(f"int4 weight-only {name}: refused: {rows[-1]['refused']}", flush=True)
                continue
            for m in ms:
                x = torch.rand(m, k, device=dev, dtype=torch.bfloat16) - 0.5
                row = {"op": "int4 weight-only", "shape": name, "m": m, "k": k, "n": n,
                       "group": group, "weight_copies": count, "flops": 2 * m * n * k,
                       "bytes": k * n // 2 + (k // group) * n * 2 * 2 + m * k * 2 + m * n * 2}
                fn = lambda p: torch._weight_int4pack_mm(x, p[0], group, p[1])  # noqa: E731
                try:
                    fn(pairs[0])
                    row.update(b.rotate(fn, pairs))
                    t = row["median_us"] * 1e-6
                    print(f"int4 weight-only g{group:<3} {name:18} m {m:4}: "
                          f"{row['median_us']:9.1f} us {row['bytes'] / t / 1e12:6.2f} TB/s",
                          flush=True)
                except Exception as exc:
                    row["refused"] = refused(exc)
                    print(f"int4 weight-only {name} m {m}: refused: {row['refused']}", flush=True)
                rows.append(row)
            del pairs
            torch.cuda.empty_cache()


def inductor_settings(torch, tuned):
    """Resets Dynamo and sets Inductor's tuning as gpt-fast's generate.py does (tuned) or to its
    defaults; returns what was set, for the rows, and the previous values, for restore()."""
    config = torch._inductor.config
    previous = (config.coordinate_descent_tuning, config.triton.unique_kernel_names)
    torch._dynamo.config.cache_size_limit = 64
    torch._dynamo.reset()
    config.coordinate_descent_tuning = tuned
    config.triton.unique_kernel_names = tuned
    return {"coordinate_descent_tuning": tuned, "unique_kernel_names": tuned}, previous


def restore(torch, previous):
    torch._inductor.config.coordinate_descent_tuning = previous[0]
    torch._inductor.config.triton.unique_kernel_names = previous[1]


def time_case(b, rows, row, fn, weights, start, budget_s, compiled=True, flush=False):
    """Times fn(weight) over the rotated weights into `row` (its first call, which compiles, apart;
    flush: the L2 emptied before each call) and appends it; a compiled case past the compile
    budget, or one that fails, is recorded as refused."""
    torch = b.torch
    label = " ".join(f"{k} {row[k]}" if k != "op" else str(row[k])
                     for k in ("op", "shape", "m", "elements") if k in row)
    if compiled and time.monotonic() - start > budget_s:
        row["refused"] = f"compile budget of {budget_s} s spent"
        rows.append(row)
        return
    try:
        t0 = time.monotonic()
        fn(weights[0])
        torch.cuda.synchronize()
        row["first_call_s"] = time.monotonic() - t0
        row.update(b.rotate(fn, weights, flush=flush))
        t = row["median_us"] * 1e-6
        print(f"{label:58}: {row['median_us']:9.1f} us {row['bytes'] / t / 1e12:6.2f} TB/s "
              f"(first call {row['first_call_s']:.1f} s)", flush=True)
    except Exception as exc:
        row["refused"] = refused(exc)
        print(f"{label}: refused: {row['refused']}", flush=True)
    rows.append(row)


def compiled(b, rows, budget_s, tuned=False, shapes=SHAPES, ms=(1, 4), norms=True):
    """gpt-fast's int8 weight-only linear and RMSNorm under torch.compile (default mode; the
    kernels are timed alone, not inside a CUDA graph). tuned: with the Inductor settings
    gpt-fast's generate.py makes (coordinate_descent_tuning, unique kernel names), rows named
    '... compiled-tuned'. shapes, ms: the products timed; norms: the RMSNorm rows too."""
    torch = b.torch
    dev = b.dev
    import torch.nn.functional as F
    start = time.monotonic()
    settings, previous = inductor_settings(torch, tuned)
    label = "compiled-tuned" if tuned else "compiled"

    def int8_linear(x, w, s):
        return F.linear(x, w.to(dtype=x.dtype)) * s
    compiled_linear = torch.compile(int8_linear, fullgraph=True, dynamic=False)
    for name, k, n in shapes:
        count = b.copies(k * n)
        ws = [torch.randint(-127, 128, (n, k), device=dev, dtype=torch.int8) for _ in range(count)]
        s = torch.rand(n, device=dev, dtype=torch.bfloat16) + 0.5
        for m in ms:
            x = torch.rand(m, k, device=dev, dtype=torch.bfloat16) - 0.5
            modes = [(label, lambda w: compiled_linear(x, w, s))]
            if not tuned:
                modes.insert(0, ("eager", lambda w: int8_linear(x, w, s)))
            for mode, fn in modes:
                row = {"op": f"int8 weight-only {mode}", "shape": name, "m": m, "k": k, "n": n,
                       "weight_copies": count, "flops": 2 * m * n * k,
                       "bytes": k * n + n * 2 + m * k * 2 + m * n * 2}
                if mode != "eager":
                    row["inductor"] = settings
                time_case(b, rows, row, fn, ws, start, budget_s, compiled=mode != "eager")
        del ws
        torch.cuda.empty_cache()
    if not norms:
        restore(torch, previous)
        return

    def rms(x, w):
        return F.rms_norm(x, (x.shape[-1],), w, 1e-5)
    compiled_rms = torch.compile(rms, fullgraph=True, dynamic=True)
    w = torch.rand(4096, device=dev, dtype=torch.bfloat16)
    for elements in [4096 * 2**i for i in range(0, 18, 2)]:
        x = (torch.rand(elements, device=dev, dtype=torch.bfloat16) - 0.5).view(-1, 4096)
        row = {"op": f"rms_norm {label}", "elements": elements, "bytes": 2 * elements * 2}
        time_case(b, rows, row, lambda _, x=x: compiled_rms(x, w), [0], start, budget_s,
                    flush=True)
    restore(torch, previous)


def fp8_compiled(b, rows, budget_s, shapes=SHAPES[:3] + [("l3-8b k/v", 4096, 1024)], ms=(1,)):
    """torchao's float8 decode linears re-implemented (torchao itself is not imported) and
    compiled with gpt-fast's Inductor settings, timed alone at `ms` rows: weight-only ('fp8
    weight-only compiled', the pattern of torchao's float8wo: e4m3 weights with a bf16 scale per
    output channel, dequantized to bf16 inside the generated kernel) and dynamic per row ('fp8
    dynamic-row compiled', the pattern of float8dq PerRow: each activation row scaled to e4m3 by
    its absolute maximum, then torch._scaled_mm with row-wise scales; the activation's
    quantization is timed with the product)."""
    torch = b.torch
    dev = b.dev
    import torch.nn.functional as F
    start = time.monotonic()
    settings, previous = inductor_settings(torch, True)
    f8 = torch.float8_e4m3fn

    def weight_only(x, w, s):
        return F.linear(x, w.to(dtype=x.dtype)) * s

    def dynamic_row(x, w, s):
        scale = x.abs().amax(dim=-1, keepdim=True).float().clamp(min=1e-12) / 448.0
        xq = (x.float() / scale).clamp(-448.0, 448.0).to(f8)
        return torch._scaled_mm(xq, w.t(), scale_a=scale, scale_b=s, out_dtype=torch.bfloat16,
                                use_fast_accum=True)
    modes = [("fp8 weight-only compiled", torch.compile(weight_only, fullgraph=True,
                                                        dynamic=False), 2),
             ("fp8 dynamic-row compiled", torch.compile(dynamic_row, fullgraph=True,
                                                        dynamic=False), 4)]
    for name, k, n in shapes:
        count = b.copies(k * n)
        ws = [(torch.rand(n, k, device=dev) - 0.5).to(f8) for _ in range(count)]
        scales = {2: torch.rand(n, device=dev, dtype=torch.bfloat16) + 0.5,
                  4: torch.rand(1, n, device=dev, dtype=torch.float32) + 0.5}
        for m in ms:
            x = torch.rand(m, k, device=dev, dtype=torch.bfloat16) - 0.5
            for mode, fn, scale_bytes in modes:
                row = {"op": mode, "shape": name, "m": m, "k": k, "n": n,
                       "weight_copies": count, "flops": 2 * m * n * k, "inductor": settings,
                       "bytes": k * n + n * scale_bytes + m * k * 2 + m * n * 2}
                s = scales[scale_bytes]
                time_case(b, rows, row, lambda w, fn=fn, s=s: fn(x, w, s), ws, start,
                            budget_s)
        del ws
        torch.cuda.empty_cache()
    restore(torch, previous)


def many_wave_attention(b, rows):
    torch = b.torch
    dev = b.dev
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    cases = [("decode", bt, 32, 8, 1, ctx, 128, False)
             for ctx in [1024, 4096] for bt in [128, 256, 512]]
    cases += [("prefill", bt, 32, 32, 2048, 2048, 128, True) for bt in [4, 16]]
    cases += [("prefill", 8, 32, 32, 4096, 4096, 64, True)]
    for kind, bt, hq, hkv, sq, skv, d, causal in cases:
        row = {"kind": kind, "backend": "flash", "b": bt, "hq": hq, "hkv": hkv, "sq": sq,
               "skv": skv, "d": d, "causal": causal}
        try:
            q = torch.rand(bt, hq, sq, d, device=dev, dtype=torch.bfloat16) - 0.5
            k = torch.rand(bt, hkv, skv, d, device=dev, dtype=torch.bfloat16) - 0.5
            v = torch.rand(bt, hkv, skv, d, device=dev, dtype=torch.bfloat16) - 0.5

            def call(_):
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                          enable_gqa=hq != hkv)
            call(0)
            row.update(b.rotate(call, [0], flush=True))
            pairs = sq * skv - (sq * (sq - 1) // 2 if causal and sq == skv else 0)
            t = row["median_us"] * 1e-6
            row["flop_per_s"] = 4 * bt * hq * pairs * d / t
            row["bytes_per_s"] = 2 * (q.numel() * 2 + k.numel() + v.numel()) / t
            print(f"attention {kind:7} b {bt:3} h {hq}/{hkv} q {sq:5} kv {skv:5} d {d}: "
                  f"{row['median_us']:9.1f} us {row['flop_per_s'] / 1e12:7.1f} TFLOP/s "
                  f"{row['bytes_per_s'] / 1e12:6.2f} TB/s", flush=True)
            del q, k, v
        except Exception as exc:
            row["refused"] = refused(exc)
            print(f"attention {kind} b {bt}: refused: {row['refused']}", flush=True)
        rows.append(row)
        torch.cuda.empty_cache()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--repetitions", type=int, default=20)
    parser.add_argument("--compile-budget", type=float, default=150,
                        help="seconds of torch.compile work before compiled cases are skipped")
    parser.add_argument("--only", nargs="*", default=[],
                        help="sections to run (matmuls int4 int4_groups attention compiled "
                             "compiled_tuned int8_shapes fp8_compiled); default: all but "
                             "int4_groups, int8_shapes and fp8_compiled")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        sys.exit("error: gpu-quant-kernels.py: PyTorch is not installed")
    if not torch.cuda.is_available():
        sys.exit("error: gpu-quant-kernels.py: no CUDA device found (torch.cuda.is_available())")
    dev = torch.device("cuda", 0)
    b = Bench(torch, dev, args.repetitions)
    result = {"gpu": torch.cuda.get_device_name(dev), "torch": torch.__version__,
              "cuda": torch.version.cuda, "l2_bytes": b.l2,
              "sm_count": torch.cuda.get_device_properties(dev).multi_processor_count}
    print(f"{result['gpu']}, torch {result['torch']}, CUDA {result['cuda']}", flush=True)
    sections = [("matmuls", fp8_int8_bf16), ("int4", int4_weight_only),
                ("attention", many_wave_attention),
                ("compiled", lambda bb, rows: compiled(bb, rows, args.compile_budget)),
                ("compiled_tuned",
                 lambda bb, rows: compiled(bb, rows, args.compile_budget, tuned=True)),
                # The group sizes gpt-fast (32) and torchao (64) use, beside 128.
                ("int4_groups",
                 lambda bb, rows: int4_weight_only(bb, rows, groups=(32, 64, 128),
                                                   ms=(1, 2, 4, 16, 64))),
                # Inductor's int8 weight-only kernel over the validation rows' shapes.
                ("int8_shapes",
                 lambda bb, rows: compiled(bb, rows, args.compile_budget, tuned=True,
                                           shapes=INT8_SHAPES, ms=(1, 2, 4, 8, 16),
                                           norms=False)),
                # torchao's float8 weight-only and dynamic per-row linears under torch.compile.
                ("fp8_compiled",
                 lambda bb, rows: fp8_compiled(bb, rows, args.compile_budget))]
    optional = {"int4_groups", "int8_shapes", "fp8_compiled"}
    wanted = set(args.only) if args.only else {k for k, _ in sections if k not in optional}
    for key, fn in sections:
        if key not in wanted:
            continue
        result[key] = []
        t0 = time.monotonic()
        try:
            fn(b, result[key])
        except Exception as exc:  # keep what the other sections measured
            result[key + "_error"] = refused(exc)
            print(f"section {key} failed: {result[key + '_error']}", flush=True)
        print(f"section {key}: {time.monotonic() - t0:.1f} s", flush=True)
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
