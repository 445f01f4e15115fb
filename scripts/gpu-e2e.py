#!/usr/bin/env python3
"""End-to-end ground truth on a GPU: a HuggingFace Llama model built from a preset's config.json
with random weights (no download), bf16, SDPA attention, timed with CUDA events.

* prefill: one forward pass over a batch-1 prompt, logits for the last position only (what
  `generate` computes, and what `roofline model --phase prefill` counts);
* decode: one step of one new token per sequence against a static KV cache already holding
  `context` random keys and values, eager (every kernel launched from Python) and, when the
  step can be captured, replayed as a CUDA graph (launch gaps removed);
* a torch.profiler Chrome trace of one eager decode step (for `roofline profile torch`).

Writes one JSON object with every measurement (median, min, max of the timed repetitions, after
warm-up; inputs random, never zeros). Needs a CUDA GPU, PyTorch and transformers.

usage: python3 scripts/gpu-e2e.py --config data/models/llama-3-8b.json --out e2e.json
           [--trace decode_trace.json] [--quick] [--attention sdpa|sdpa-gqa]
       python3 scripts/gpu-e2e.py --ncu-app gemm|decode ...   (a minimal program for ncu)
"""
import argparse
import json
import sys
import time


def _time_ms():
    """time_ms of gpu-reference.py beside this script (one CUDA-event timing loop for both)."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu-reference.py")
    spec = importlib.util.spec_from_file_location("gpu_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.time_ms


def median_ms(torch, fn, warmup, repetitions, before=None):
    """CUDA-event time of fn; `before` (outside the events) runs before every call."""
    med, lo, hi = _time_ms()(torch, fn, warmup, repetitions, before=before)
    return {"median_ms": med, "min_ms": lo, "max_ms": hi, "repetitions": repetitions,
            "warmup": warmup}


def sdpa_gqa(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """Attention as one fused SDPA call over the grouped KV heads (enable_gqa: no copy of the
    cache to every query head, as FlashAttention and vLLM read it), for the shapes this script
    runs: a prompt without a cache (causal, keys = queries) or one query per sequence against a
    static cache whose every position is filled (max_cache_len = context + 1, nothing to mask).
    The mask transformers builds is therefore not needed and not passed."""
    import torch.nn.functional as F
    causal = query.shape[2] == key.shape[2] and query.shape[2] > 1
    if query.shape[2] != key.shape[2] and query.shape[2] != 1:
        raise ValueError("sdpa-gqa: only prompts without a cache and one-token decode steps")
    out = F.scaled_dot_product_attention(query, key, value, is_causal=causal, scale=scaling,
                                         enable_gqa=query.shape[1] != key.shape[1])
    return out.transpose(1, 2).contiguous(), None


def register_attention(transformers, name):
    """Registers sdpa_gqa with transformers' attention functions under `name`."""
    interface = getattr(transformers, "AttentionInterface", None)
    if interface is not None:
        interface.register(name, sdpa_gqa)
    else:
        from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
        ALL_ATTENTION_FUNCTIONS[name] = sdpa_gqa
    # No mask is built for it (sdpa_gqa needs none): no mask kernels in the step either.
    try:
        from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS
        ALL_MASK_ATTENTION_FUNCTIONS.register(name, lambda *a, **k: None)
    except (ImportError, AttributeError):
        pass


def load_config(transformers, path, layers=None, attention="sdpa"):
    with open(path) as f:
        raw = json.load(f)
    raw = {k: v for k, v in raw.items() if not k.startswith("_")}
    if layers is not None:
        raw["num_hidden_layers"] = layers
    config = transformers.LlamaConfig(**raw)
    if attention == "sdpa-gqa":
        register_attention(transformers, "sdpa_gqa")
        config._attn_implementation = "sdpa_gqa"
    else:
        config._attn_implementation = "sdpa"
    return config


def build_model(torch, transformers, config, random_init=True, device="cuda"):
    """The model on the GPU in bf16. random_init=False leaves the weights uninitialised (no
    kernels run before the measured ones: for ncu's launch count)."""
    torch.set_default_dtype(torch.bfloat16)
    if random_init:
        with torch.device(device):
            model = transformers.LlamaForCausalLM(config)
    else:
        with torch.device("meta"):
            model = transformers.LlamaForCausalLM(config)
        model = model.to_empty(device=device)
    torch.set_default_dtype(torch.float32)
    model = model.to(torch.bfloat16).eval()
    return model


def make_cache(torch, transformers, config, batch, context, fill=True, device="cuda"):
    """A static cache of context + 1 positions holding `context` random keys and values."""
    import inspect
    params = inspect.signature(transformers.StaticCache.__init__).parameters
    kwargs = {"config": config, "max_cache_len": context + 1}
    if "max_batch_size" in params:
        kwargs["max_batch_size"] = batch
    if "device" in params:
        kwargs["device"] = device
    if "dtype" in params:
        kwargs["dtype"] = torch.bfloat16
    cache = transformers.StaticCache(**kwargs)
    heads = config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    position = torch.arange(context, device=device)
    for layer in range(config.num_hidden_layers):
        shape = (batch, heads, context, head_dim)
        if fill:
            k = torch.rand(shape, device=device, dtype=torch.bfloat16) * 2 - 1
            v = torch.rand(shape, device=device, dtype=torch.bfloat16) * 2 - 1
        else:
            k = torch.empty(shape, device=device, dtype=torch.bfloat16)
            v = torch.empty(shape, device=device, dtype=torch.bfloat16)
        cache.update(k, v, layer, {"cache_position": position})
    return cache


def rewind(cache, context):
    """Sets the cache back to `context` filled positions, so every timed step writes position
    `context` again (transformers 5 keeps a running length per layer; older ones take the
    position from the cache_position every step passes, and need no reset)."""
    def reset():
        for layer in getattr(cache, "layers", []):
            length = getattr(layer, "cumulative_length", None)
            if length is not None and hasattr(length, "fill_"):
                length.fill_(context)
    return reset


def decode_step_fn(model, ids, cache, position):
    def step():
        return model(input_ids=ids, past_key_values=cache, cache_position=position,
                     use_cache=True, logits_to_keep=1)
    return step


def run(args):
    import torch
    import transformers
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    result = {
        "gpu": torch.cuda.get_device_name(dev), "sm_count": props.multi_processor_count,
        "torch": torch.__version__, "cuda": torch.version.cuda,
        "transformers": transformers.__version__, "config": args.config,
        "attention": args.attention, "dtype": "bf16", "prefill": [], "decode": [],
        "errors": []}
    config = load_config(transformers, args.config, attention=args.attention)
    t0 = time.time()
    model = build_model(torch, transformers, config)
    torch.cuda.synchronize()
    result["build_s"] = time.time() - t0
    result["parameters"] = sum(p.numel() for p in model.parameters())
    print(f"{result['gpu']}: model of {result['parameters'] / 1e9:.2f} B parameters built in "
          f"{result['build_s']:.1f} s", flush=True)
    vocab = config.vocab_size
    gib = 1024**3
    kv_per_token = (2 * config.num_hidden_layers * config.num_key_value_heads
                    * (config.hidden_size // config.num_attention_heads) * 2)
    free_for_cache = props.total_memory - torch.cuda.memory_allocated() - 12 * gib

    prompts = [128, 512, 2048, 8192] if args.quick else [128, 256, 512, 1024, 2048, 4096, 8192]
    with torch.inference_mode():
        for prompt in prompts:
            ids = torch.randint(0, vocab, (1, prompt), device=dev)
            try:
                m = median_ms(torch, lambda: model(input_ids=ids, use_cache=False,
                                                   logits_to_keep=1),
                              2, 3 if args.quick else 5)
            except Exception as e:  # out of memory or an API difference: recorded, not fatal
                result["errors"].append(f"prefill {prompt}: {type(e).__name__}: {e}")
                continue
            m.update({"batch": 1, "prompt": prompt})
            result["prefill"].append(m)
            print(f"prefill batch 1 prompt {prompt}: {m['median_ms']:.2f} ms", flush=True)
        del ids
        torch.cuda.empty_cache()

        contexts = [1024, 4096, 16384, 32768] if args.quick else [1024, 2048, 4096, 8192, 16384,
                                                                    32768]
        batches = [1, 8, 64] if args.quick else [1, 2, 4, 8, 16, 32, 64]
        for context in contexts:
            for batch in batches:
                if batch * (context + 1) * kv_per_token > free_for_cache:
                    result["errors"].append(
                        f"decode batch {batch} context {context}: KV cache of "
                        f"{batch * (context + 1) * kv_per_token / 1e9:.1f} GB not run (memory)")
                    continue
                point = {"batch": batch, "context": context}
                try:
                    cache = make_cache(torch, transformers, config, batch, context)
                    ids = torch.randint(0, vocab, (batch, 1), device=dev)
                    position = torch.tensor([context], device=dev)
                    step = decode_step_fn(model, ids, cache, position)
                    reset = rewind(cache, context)
                    point["eager"] = median_ms(torch, step, 3, 10 if args.quick else 20, reset)
                except Exception as e:
                    result["errors"].append(f"decode batch {batch} context {context}: "
                                            f"{type(e).__name__}: {e}")
                    continue
                try:
                    stream = torch.cuda.Stream()
                    stream.wait_stream(torch.cuda.current_stream())
                    with torch.cuda.stream(stream):
                        for _ in range(2):
                            reset()
                            step()
                    torch.cuda.current_stream().wait_stream(stream)
                    graph = torch.cuda.CUDAGraph()
                    reset()
                    with torch.cuda.graph(graph):
                        step()
                    point["graph"] = median_ms(torch, graph.replay, 3, 10 if args.quick else 20,
                                               reset)
                    del graph
                except Exception as e:
                    point["graph_error"] = f"{type(e).__name__}: {str(e)[:300]}"
                result["decode"].append(point)
                graph_ms = point.get("graph", {}).get("median_ms")
                print(f"decode batch {batch} context {context}: eager "
                      f"{point['eager']['median_ms']:.2f} ms, graph "
                      f"{'-' if graph_ms is None else f'{graph_ms:.2f} ms'}", flush=True)
                del cache, step
                torch.cuda.empty_cache()

        if args.trace:
            cache = make_cache(torch, transformers, config, args.trace_batch, args.trace_context)
            ids = torch.randint(0, vocab, (args.trace_batch, 1), device=dev)
            position = torch.tensor([args.trace_context], device=dev)
            step = decode_step_fn(model, ids, cache, position)
            reset = rewind(cache, args.trace_context)
            for _ in range(3):
                reset()
                step()
            reset()
            torch.cuda.synchronize()
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                         record_shapes=True) as prof:
                step()
                torch.cuda.synchronize()
            prof.export_chrome_trace(args.trace)
            result["trace"] = {"path": args.trace, "batch": args.trace_batch,
                               "context": args.trace_context}
            print(f"trace of one decode step (batch {args.trace_batch}, context "
                  f"{args.trace_context}) written to {args.trace}", flush=True)
    return result


def check_gqa(args):
    """sdpa-gqa against transformers' sdpa on a 2-layer model with the same random weights and
    cache: relative error of the last position's logits after a 300-token prompt and after one
    decode step against a 1000-token cache (bf16: expect ~1e-3, never NaN)."""
    import torch
    import transformers
    errors = {}
    with torch.inference_mode():
        outs = {}
        for attention in ["sdpa", "sdpa-gqa"]:
            config = load_config(transformers, args.config, layers=2, attention=attention)
            torch.manual_seed(7)
            model = build_model(torch, transformers, config)
            torch.manual_seed(8)
            ids = torch.randint(0, config.vocab_size, (2, 300), device="cuda")
            prefill = model(input_ids=ids, use_cache=False, logits_to_keep=1).logits.float()
            torch.manual_seed(9)
            cache = make_cache(torch, transformers, config, 2, 1000)
            step_ids = torch.randint(0, config.vocab_size, (2, 1), device="cuda")
            position = torch.tensor([1000], device="cuda")
            decode = decode_step_fn(model, step_ids, cache, position)().logits.float()
            outs[attention] = (prefill, decode)
            del model, cache
        for i, phase in enumerate(["prefill", "decode"]):
            ref, got = outs["sdpa"][i], outs["sdpa-gqa"][i]
            errors[phase] = float((got - ref).norm() / ref.norm())
    print(f"sdpa-gqa against sdpa, relative error of the logits: {errors}")
    return errors


def ncu_app(args):
    """A short program for Nsight Compute: few kernels besides the ones to profile. The decode
    model's weights, rotary frequencies and cache are left uninitialised (no kernels to fill
    them): its kernels compute on arbitrary values, with the shapes and launches of a real step."""
    import torch
    import transformers
    if args.ncu_app == "gemm":
        a = torch.rand(8192, 8192, device="cuda", dtype=torch.bfloat16) - 0.5
        b = torch.rand(8192, 8192, device="cuda", dtype=torch.bfloat16) - 0.5
        torch.matmul(a, b)
        torch.cuda.synchronize()
        return
    config = load_config(transformers, args.config)
    model = build_model(torch, transformers, config, random_init=False)
    with torch.inference_mode():
        cache = make_cache(torch, transformers, config, 1, args.trace_context, fill=False)
        ids = torch.zeros((1, 1), device="cuda", dtype=torch.long)
        position = torch.tensor([args.trace_context], device="cuda")
        decode_step_fn(model, ids, cache, position)()
    torch.cuda.synchronize()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="data/models/llama-3-8b.json")
    parser.add_argument("--out", default="e2e.json")
    parser.add_argument("--trace", default="")
    parser.add_argument("--trace-batch", type=int, default=1)
    parser.add_argument("--trace-context", type=int, default=4096)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--attention", choices=["sdpa", "sdpa-gqa"], default="sdpa",
                        help="sdpa: transformers' own (repeats the KV heads); sdpa-gqa: one "
                        "fused SDPA call over the grouped heads")
    parser.add_argument("--ncu-app", choices=["gemm", "decode"])
    args = parser.parse_args()
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as e:
        sys.exit(f"error: gpu-e2e.py: {e}")
    if not torch.cuda.is_available():
        sys.exit("error: gpu-e2e.py: no CUDA device found (torch.cuda.is_available())")
    if args.ncu_app:
        ncu_app(args)
        return
    check = check_gqa(args) if args.attention == "sdpa-gqa" else None
    result = run(args)
    if check is not None:
        result["sdpa_gqa_check"] = check
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {args.out} ({len(result['prefill'])} prefill, {len(result['decode'])} decode "
          f"points, {len(result['errors'])} not run)")


if __name__ == "__main__":
    main()
