#!/usr/bin/env python3
"""Host time per module call of a HuggingFace transformers decode step, timed module by module.

`--modules hf-transformers` counts the kernels transformers launches in a decode step; the host
time between those kernels (module calls, views, the cache's bookkeeping) needs a figure of its
own: data/efficiency.json's host_factor. This script measures it on a GPU:

* for each config (Llama-3-8B by default), a one-layer model with random weights, bf16, SDPA
  attention, a static cache holding `--context` positions (small, so the GPU never limits the
  host), batch 1, one new token;
* one real decode step runs with forward pre-hooks that keep the arguments each module is called
  with (the embedding, the rotary embedding, the decoder layer, its attention, MLP, RMSNorm and
  q_proj, the final norm, lm_head); the hooks are then removed;
* each module is called again on those arguments, `--calls` times in a row with no
  synchronisation between calls: a call's host time is perf_counter around the call alone (the
  GPU runs behind); `host_limited` says whether the wall time of the calls, synchronised at the
  end, stayed within 10% of their host time (the GPU not the limit); the median of `--rounds`;
* the GPU activities (kernels, memsets) of one call, counted and named by torch.profiler;
* beside them, in the same process, a bare op (x.add_(1) on one element: the runtime's eager
  host time per launch), F.linear on one row, and the same as an nn.Linear module; with
  `--repeat N` the bare ops and every config's modules are measured N times, interleaved;
* the whole decode step of models of `--layers` layers (host time per layer and per step, a
  least-squares line), and model.generate's wall time per new token (its default cache);
* `--full-step LAYERS CONTEXT`: the first config's whole step at that size.

Writes one JSON object. Needs a CUDA GPU, PyTorch and transformers (`--device cpu` runs the
same code on the CPU, to check the script itself; its times mean nothing).

usage: python3 scripts/gpu-module-host.py --out host.json [--configs CONFIG.json ...]
           [--context 128] [--calls 40] [--rounds 5] [--repeat 3] [--layers 1 2 4 8]
           [--full-step 32 1024]
"""
import argparse
import json
import statistics
import sys
import time

DEVICE = "cuda"  # --device cpu: a dry run of the script's logic (its times mean nothing)


def sync(torch):
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def load_config(transformers, path, layers=None):
    with open(path) as f:
        raw = json.load(f)
    raw = {k: v for k, v in raw.items() if not k.startswith("_")}
    if layers is not None:
        raw["num_hidden_layers"] = layers
        raw.pop("layer_types", None)
    model_type = raw.pop("model_type", "llama")
    config = transformers.AutoConfig.for_model(model_type, **raw)
    config._attn_implementation = "sdpa"
    return config


def build(torch, transformers, config):
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(DEVICE):
            model = transformers.AutoModelForCausalLM.from_config(config)
    finally:
        torch.set_default_dtype(previous)
    return model.to(torch.bfloat16).eval()


def e2e_helpers():
    """make_cache and rewind of gpu-e2e.py beside this script (the same static cache and the
    same reset between steps as the end-to-end timings)."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu-e2e.py")
    spec = importlib.util.spec_from_file_location("gpu_e2e", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_cache, module.rewind


def time_host(torch, fn, calls, rounds, warmup=3, before=None):
    """Host seconds per call (perf_counter around each call, no synchronisation between calls),
    median over rounds; and the wall seconds per call of each round (synchronised at its end).
    `before` runs before every call, outside the timed host region but inside the wall time:
    host_limited (wall within 10% of host) is then the stricter test."""
    before = before or (lambda: None)
    for _ in range(warmup):
        before()
        fn()
    sync(torch)
    hosts, walls = [], []
    for _ in range(rounds):
        sync(torch)
        host = 0.0
        w0 = time.perf_counter()
        for _ in range(calls):
            before()
            t0 = time.perf_counter()
            fn()
            host += time.perf_counter() - t0
        sync(torch)
        walls.append((time.perf_counter() - w0) / calls)
        hosts.append(host / calls)
    host = statistics.median(hosts)
    wall = statistics.median(walls)
    return {"host_us": host * 1e6, "host_min_us": min(hosts) * 1e6,
            "host_max_us": max(hosts) * 1e6, "wall_us": wall * 1e6, "calls": calls,
            "rounds": rounds, "host_limited": wall <= 1.1 * host}


def kernels(torch, fn, before=None):
    """The GPU activities (kernels, memsets, copies) one call of fn starts, by name."""
    from torch.profiler import ProfilerActivity, profile
    activity = ProfilerActivity.CUDA if DEVICE == "cuda" else ProfilerActivity.CPU
    if before:
        before()
    sync(torch)
    with profile(activities=[activity]) as prof:
        fn()
        sync(torch)
    names = [e.name for e in prof.events()
             if str(getattr(e, "device_type", "")).endswith("CUDA") or DEVICE == "cpu"]
    # What --modules counts: the activities less cuBLAS's split-K reductions and memsets.
    left_out = sum("splitKreduce" in n or "Memset" in n for n in names)
    return {"kernels": len(names), "kernels_counted": len(names) - left_out,
            "kernel_names": names}


def measure(torch, name, fn, args, rows, before=None):
    row = {"module": name}
    try:
        row.update(kernels(torch, fn, before))
        row.update(time_host(torch, fn, args.calls, args.rounds, before=before))
        per = row["host_us"] / row["kernels"] if row["kernels"] else float("nan")
        print(f"{name:28} {row['kernels']:4} kernels  host {row['host_us']:8.1f} us/call "
              f"({per:5.1f} us/kernel)  wall {row['wall_us']:8.1f} us/call"
              f"{'' if row['host_limited'] else '  (GPU-limited)'}", flush=True)
    except Exception as exc:  # recorded; the other modules still run
        row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        print(f"{name}: {row['error']}", flush=True)
    rows.append(row)


def time_generate(torch, model, config, layers, short=8, long=40, repeats=3):
    """Wall seconds per new token of model.generate (greedy, its default dynamic cache, a
    1-token prompt): (time of `long` tokens - time of `short`) / (long - short), medians of
    `repeats`; and the GPU activities per new token, from a profile of each length."""
    row = {"layers": layers, "short": short, "long": long, "cache": "generate's default"}
    try:
        ids = torch.randint(0, config.vocab_size, (1, 1), device=DEVICE)

        def gen(n):
            return model.generate(input_ids=ids, max_new_tokens=n, min_new_tokens=n,
                                  do_sample=False, pad_token_id=0)
        gen(short)
        times = {}
        for n in (short, long):
            runs = []
            for _ in range(repeats):
                sync(torch)
                t0 = time.perf_counter()
                gen(n)
                sync(torch)
                runs.append(time.perf_counter() - t0)
            times[n] = statistics.median(runs)
        counts = {n: kernels(torch, lambda n=n: gen(n))["kernels"] for n in (short, long)}
        row.update({"wall_s": times, "us_per_token": (times[long] - times[short])
                    / (long - short) * 1e6,
                    "kernels_per_token": (counts[long] - counts[short]) / (long - short)})
        print(f"generate, {layers} layers: {row['us_per_token']:8.1f} us per new token, "
              f"{row['kernels_per_token']:.1f} GPU activities per token", flush=True)
    except Exception as exc:
        row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        print(f"generate, {layers} layers: {row['error']}", flush=True)
    return row


def capture(model, names):
    """Forward pre-hooks that keep (args, kwargs) of the first call of each named module."""
    seen, handles = {}, []
    modules = dict(model.named_modules())
    for label, path in names.items():
        module = modules.get(path)
        if module is None:
            continue

        def hook(mod, args, kwargs, label=label):
            seen.setdefault(label, (mod, args, dict(kwargs)))
        handles.append(module.register_forward_pre_hook(hook, with_kwargs=True))
    return seen, handles


def module_rows(torch, model, step, reset, args, into):
    """One decode step with pre-hooks, then every captured module timed on its own."""
    inner = "model." if hasattr(model, "model") else ""
    names = {"embed_tokens": f"{inner}embed_tokens", "rotary_emb": f"{inner}rotary_emb",
             "decoder_layer": f"{inner}layers.0", "self_attn": f"{inner}layers.0.self_attn",
             "mlp": f"{inner}layers.0.mlp", "input_layernorm": f"{inner}layers.0.input_layernorm",
             "q_proj": f"{inner}layers.0.self_attn.q_proj", "final_norm": f"{inner}norm",
             "lm_head": "lm_head"}
    seen, handles = capture(model, names)
    step()
    reset()
    for h in handles:
        h.remove()
    for label in names:
        if label not in seen:
            into.append({"module": label, "error": "not called"})
            continue
        mod, a, kw = seen[label]
        measure(torch, label, lambda mod=mod, a=a, kw=kw: mod(*a, **kw), args, into, reset)


def bare_rows(torch, args, into):
    import torch.nn.functional as F
    x1 = torch.zeros(1, device=DEVICE)
    measure(torch, "bare x.add_(1)", lambda: x1.add_(1), args, into)
    xr = torch.rand(1, 4096, device=DEVICE, dtype=torch.bfloat16)
    lin = torch.nn.Linear(4096, 4096, bias=False, device=DEVICE, dtype=torch.bfloat16)
    measure(torch, "bare F.linear", lambda: F.linear(xr, lin.weight), args, into)
    measure(torch, "nn.Linear module", lambda: lin(xr), args, into)


def decode_model(torch, transformers, path, layers, context):
    """(model, config, step, reset): a model of `layers` layers and one decode step against a
    static cache holding `context` positions."""
    make_cache, rewind = e2e_helpers()
    config = load_config(transformers, path, layers)
    model = build(torch, transformers, config)
    cache = make_cache(torch, transformers, config, 1, context, device=DEVICE)
    ids = torch.randint(0, config.vocab_size, (1, 1), device=DEVICE)
    position = torch.tensor([context], device=DEVICE)

    def step():
        return model(input_ids=ids, past_key_values=cache, cache_position=position,
                     use_cache=True, logits_to_keep=1)
    reset = rewind(cache, context)
    reset()
    return model, config, step, reset


def fit_line(points):
    """Least-squares line (slope, intercept) through (x, y) points, or None with fewer than two
    distinct x."""
    if len({p[0] for p in points}) < 2:
        return None
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    slope = (sum((p[0] - mx) * (p[1] - my) for p in points)
             / sum((p[0] - mx) ** 2 for p in points))
    return slope, my - slope * mx


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=["data/models/llama-3-8b.json"])
    parser.add_argument("--out", required=True)
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--layers", type=int, nargs="*", default=[1, 2, 4, 8])
    parser.add_argument("--repeat", type=int, default=1,
                        help="times the bare ops and every config's modules are measured, "
                        "interleaved, in this one process")
    parser.add_argument("--full-step", nargs=2, type=int, metavar=("LAYERS", "CONTEXT"),
                        help="also the decode step of the first config at this many layers "
                        "and this context (host and wall time)")
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    args = parser.parse_args()
    global DEVICE
    DEVICE = args.device
    try:
        import torch
        import transformers
    except ImportError as e:
        sys.exit(f"error: gpu-module-host.py: {e}")
    if DEVICE == "cuda" and not torch.cuda.is_available():
        sys.exit("error: gpu-module-host.py: no CUDA device found (torch.cuda.is_available())")
    import platform
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name")), "")
    except OSError:
        pass
    gpu = torch.cuda.get_device_name(0) if DEVICE == "cuda" else "cpu"
    result = {"gpu": gpu, "cpu": cpu, "machine": platform.machine(), "torch": torch.__version__,
              "cuda": torch.version.cuda, "transformers": transformers.__version__,
              "python": sys.version.split()[0], "context": args.context, "batch": 1,
              "dtype": "bf16", "attention": "sdpa", "repeats": [], "configs": {}}
    print(f"{gpu}, CPU {cpu}, torch {result['torch']}, transformers "
          f"{result['transformers']}, Python {result['python']}", flush=True)
    with torch.inference_mode():
        small = {path: decode_model(torch, transformers, path, 1, args.context)
                 for path in args.configs}
        for r in range(args.repeat):
            entry = {"bare": [], "modules": {}}
            bare_rows(torch, args, entry["bare"])
            for path, (model, _, step, reset) in small.items():
                print(f"-- {path} (repeat {r + 1} of {args.repeat})", flush=True)
                entry["modules"][path] = []
                module_rows(torch, model, step, reset, args, entry["modules"][path])
            result["repeats"].append(entry)
        del small
        if DEVICE == "cuda":
            torch.cuda.empty_cache()

        for path in args.configs:
            out = result["configs"][path] = {"steps": [], "generate": []}
            for layers in args.layers:
                model, config, step, reset = decode_model(torch, transformers, path, layers,
                                                          args.context)
                rows = []
                measure(torch, f"decode step, {layers} layers", step, args, rows, reset)
                rows[0]["layers"] = layers
                out["steps"].append(rows[0])
                out["generate"].append(time_generate(torch, model, config, layers))
                del model, step, reset
                if DEVICE == "cuda":
                    torch.cuda.empty_cache()
            pts = [(s["layers"], s["host_us"]) for s in out["steps"] if "host_us" in s]
            line = fit_line(pts)
            if line is not None:
                slope, intercept = line
                out["step_fit"] = {"host_us_per_layer": slope, "host_us_per_step": intercept,
                                   "points": pts}
                print(f"{path}: decode step host time {intercept:.1f} us + {slope:.1f} us per "
                      "layer", flush=True)

        if args.full_step:
            layers, context = args.full_step
            model, _, step, reset = decode_model(torch, transformers, args.configs[0], layers,
                                                 context)
            rows = []
            measure(torch, f"decode step, {layers} layers, context {context}", step, args, rows,
                    reset)
            rows[0].update({"layers": layers, "context": context, "config": args.configs[0]})
            result["full_step"] = rows[0]
            del model, step, reset
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
