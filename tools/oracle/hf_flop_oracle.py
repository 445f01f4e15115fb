#!/usr/bin/env python3
"""PyTorch FLOP oracle for roofline's HuggingFace model front-end.

What it does
------------
For every decoder architecture that roofline reads from a HuggingFace ``config.json``
(Llama, Mistral, Qwen2, Qwen3, Gemma2, Gemma3 text, Phi3, Mixtral, Qwen2-MoE, Qwen3-MoE,
DeepSeek-V3, GPT-2, GPT-NeoX) it

1. builds the model from a *shrunk* config (hidden 64, 2-4 layers, 4 heads / 2 KV heads,
   vocab 512, 4-8 experts with top-2 ...) that keeps every structural feature of the family,
   with random weights: ``AutoModelForCausalLM.from_config(cfg)``; nothing is downloaded;
2. counts the FLOPs of
   * a prefill: batch 2, 24 random prompt tokens, logits for the last position only
     (``logits_to_keep=1``) and for all positions;
   * one decode step: batch 2, context 24 -- a 23-token prefill with ``use_cache=True``
     (not counted), then one forward of 1 new token per sequence with ``past_key_values``;
   with ``torch.utils.flop_counter.FlopCounterMode`` under both
   ``attn_implementation="eager"`` and ``"sdpa"``;
3. records the total, the per-aten-op breakdown, the per-module breakdown (sdpa runs; eager
   where sdpa is unsupported) and the shapes of the core attention ops (q.k^T and p.v, to show
   how many keys each query sees);
4. writes everything, with the shrunk config.json of each case, to
   ``tests/fixtures/hf_flop_oracle.json``. That file is committed; the C++ test
   compares roofline's FLOP counts against it, so nothing at test time needs Python.

Convention: FlopCounterMode counts 2 FLOP per multiply-accumulate and only matmul-like ops
(mm, addmm, bmm, baddbmm, convolutions) and the SDPA kernels -- no norms, activations,
softmax, rotary, residual adds or router top-k. SDPA is counted as two full bmm's
(q_len x kv_len per head) whatever the causal flag or mask.

MoE experts run with ``experts_implementation="eager"`` (a Python loop over the experts
that received tokens, each an ``F.linear``). The transformers default, ``grouped_mm``,
dispatches to ``aten._grouped_mm`` which FlopCounterMode has no formula for, so routed
experts would count as 0 FLOP.

How to run
----------
Needs only ``torch`` and ``transformers`` from PyPI (CPU is enough; no GPU, no network,
no HuggingFace hub access -- ``HF_HUB_OFFLINE=1`` is set before transformers is imported)::

    python3 -m venv /tmp/oracle-venv
    /tmp/oracle-venv/bin/pip install torch transformers
    /tmp/oracle-venv/bin/python tools/oracle/hf_flop_oracle.py            # writes the fixture
    /tmp/oracle-venv/bin/python tools/oracle/hf_flop_oracle.py --out x.json --only LlamaForCausalLM

It is deterministic (``torch.manual_seed``); a rerun with the same torch/transformers versions
gives a byte-identical fixture. It takes well under a minute on 2 CPU cores.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from collections import defaultdict
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
import transformers  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode, flop_registry  # noqa: E402
from transformers import CONFIG_MAPPING, AutoModelForCausalLM  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "tests" / "fixtures" / "hf_flop_oracle.json"

BATCH = 2
PROMPT = 24
CONTEXT = 24
SEED = 0
SECOND_SEED = 1  # MoE routing-invariance check: different weights and inputs
ATTN_IMPLS = ("eager", "sdpa")

# Keys of PretrainedConfig.to_dict() that say nothing about the architecture.
NOISE_KEYS = {
    "_name_or_path", "id2label", "label2id", "output_attentions", "output_hidden_states",
    "return_dict", "problem_type", "chunk_size_feed_forward", "is_encoder_decoder",
    "_experts_implementation", "_attn_implementation", "_attn_implementation_internal",
    "_experts_implementation_internal", "transformers_version",
}

COMMON = {
    "vocab_size": 512,
    "max_position_embeddings": 128,
    "torch_dtype": "float32",
    "initializer_range": 0.02,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "use_cache": True,
}

LLAMA_LIKE = {
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "intermediate_size": 128,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
}

# Hub-style (config.json as published) shrunk configs. Legacy keys a published config.json
# carries (rope_theta, torch_dtype, rotary_pct, num_experts, sliding_window_pattern) are kept
# next to the transformers-5 ones (rope_parameters, dtype, ...) in the fixture.
SPECS: list[dict] = [
    {
        "architecture": "LlamaForCausalLM",
        "config": {**COMMON, **LLAMA_LIKE, "model_type": "llama",
                   "attention_bias": False, "mlp_bias": False},
    },
    {
        "architecture": "MistralForCausalLM",
        "config": {**COMMON, **LLAMA_LIKE, "model_type": "mistral", "sliding_window": 16},
    },
    {
        "architecture": "Qwen2ForCausalLM",
        # no head_dim key: head_dim = hidden / heads; q/k/v carry a bias, o does not
        "config": {**COMMON, **{k: v for k, v in LLAMA_LIKE.items() if k != "head_dim"},
                   "model_type": "qwen2", "use_sliding_window": False, "sliding_window": None,
                   "max_window_layers": 2},
    },
    {
        "architecture": "Qwen3ForCausalLM",
        # head_dim 32 != hidden/heads = 16: exercises the explicit head_dim; q/k RMSNorm
        "config": {**COMMON, **LLAMA_LIKE, "model_type": "qwen3", "head_dim": 32,
                   "attention_bias": False, "use_sliding_window": False, "sliding_window": None,
                   "max_window_layers": 2},
    },
    {
        "architecture": "Gemma2ForCausalLM",
        "config": {**COMMON, **LLAMA_LIKE, "model_type": "gemma2", "num_hidden_layers": 4,
                   "head_dim": 32, "hidden_act": "gelu_pytorch_tanh",
                   "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 32,
                   "sliding_window": 16, "attn_logit_softcapping": 50.0,
                   "final_logit_softcapping": 30.0, "tie_word_embeddings": True,
                   "pad_token_id": 0, "attention_bias": False,
                   "layer_types": ["sliding_attention", "full_attention",
                                   "sliding_attention", "full_attention"]},
    },
    {
        "architecture": "Gemma3ForCausalLM",
        "config": {**COMMON, **LLAMA_LIKE, "model_type": "gemma3_text", "num_hidden_layers": 4,
                   "head_dim": 32, "hidden_act": "gelu_pytorch_tanh",
                   "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 32,
                   "sliding_window": 16, "sliding_window_pattern": 2,
                   "rope_local_base_freq": 10000.0, "rope_theta": 1000000.0,
                   "final_logit_softcapping": None, "attn_logit_softcapping": None,
                   "tie_word_embeddings": True, "pad_token_id": 0, "attention_bias": False,
                   "layer_types": ["sliding_attention", "full_attention",
                                   "sliding_attention", "full_attention"]},
    },
    {
        "architecture": "Phi3ForCausalLM",
        # fused qkv_proj and gate_up_proj; no head_dim key
        "config": {**COMMON, **{k: v for k, v in LLAMA_LIKE.items() if k != "head_dim"},
                   "model_type": "phi3", "rms_norm_eps": 1e-5, "sliding_window": None,
                   "partial_rotary_factor": 1.0, "pad_token_id": 0, "resid_pdrop": 0.0,
                   "embd_pdrop": 0.0, "attention_dropout": 0.0,
                   "original_max_position_embeddings": 128},
    },
    {
        "architecture": "MixtralForCausalLM",
        "config": {**COMMON, **LLAMA_LIKE, "model_type": "mixtral", "num_local_experts": 4,
                   "num_experts_per_tok": 2, "sliding_window": None,
                   "router_jitter_noise": 0.0, "output_router_logits": False},
        "moe": True,
    },
    {
        "architecture": "Qwen2MoeForCausalLM",
        "config": {**COMMON, **{k: v for k, v in LLAMA_LIKE.items() if k != "head_dim"},
                   "model_type": "qwen2_moe", "num_experts": 8, "num_experts_per_tok": 2,
                   "moe_intermediate_size": 64, "shared_expert_intermediate_size": 128,
                   "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": False,
                   "use_sliding_window": False, "sliding_window": None, "max_window_layers": 2,
                   "qkv_bias": True, "output_router_logits": False},
        "moe": True,
    },
    {
        "architecture": "Qwen3MoeForCausalLM",
        "config": {**COMMON, **LLAMA_LIKE, "model_type": "qwen3_moe", "num_experts": 8,
                   "num_local_experts": 8, "num_experts_per_tok": 2,
                   "moe_intermediate_size": 64, "decoder_sparse_step": 1, "mlp_only_layers": [],
                   "norm_topk_prob": True, "attention_bias": False, "use_sliding_window": False,
                   "sliding_window": None, "output_router_logits": False},
        "moe": True,
    },
    {
        "architecture": "DeepseekV3ForCausalLM",
        "config": {**COMMON, **LLAMA_LIKE, "model_type": "deepseek_v3", "num_hidden_layers": 3,
                   "num_key_value_heads": 4, "head_dim": 8,
                   "q_lora_rank": 32, "kv_lora_rank": 32, "qk_nope_head_dim": 16,
                   "qk_rope_head_dim": 8, "v_head_dim": 16, "intermediate_size": 128,
                   "moe_intermediate_size": 32, "n_routed_experts": 8, "num_experts_per_tok": 2,
                   "n_shared_experts": 1, "first_k_dense_replace": 1, "moe_layer_freq": 1,
                   "n_group": 2, "topk_group": 1, "topk_method": "noaux_tc",
                   "scoring_func": "sigmoid", "norm_topk_prob": True,
                   "routed_scaling_factor": 2.5, "rope_interleave": True,
                   "attention_bias": False, "num_nextn_predict_layers": 1},
        "moe": True,
    },
    {
        "architecture": "GPT2LMHeadModel",
        "config": {"vocab_size": 512, "n_positions": 128, "n_embd": 64, "n_layer": 2,
                   "n_head": 4, "n_inner": None, "activation_function": "gelu_new",
                   "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
                   "layer_norm_epsilon": 1e-5, "initializer_range": 0.02,
                   "scale_attn_weights": True, "scale_attn_by_inverse_layer_idx": False,
                   "reorder_and_upcast_attn": False, "tie_word_embeddings": True,
                   "bos_token_id": 1, "eos_token_id": 2, "use_cache": True,
                   "torch_dtype": "float32", "model_type": "gpt2"},
    },
    {
        "architecture": "GPTNeoXForCausalLM",
        "config": {**COMMON, "model_type": "gpt_neox", "hidden_size": 64,
                   "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 256,
                   "hidden_act": "gelu", "rotary_pct": 0.25, "partial_rotary_factor": 0.25,
                   "rotary_emb_base": 10000, "rope_theta": 10000.0,
                   "use_parallel_residual": True, "attention_bias": True,
                   "layer_norm_eps": 1e-5, "tie_word_embeddings": False,
                   "attention_dropout": 0.0, "hidden_dropout": 0.0},
    },
]


# ---------------------------------------------------------------------------------------------
# config handling


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, torch.dtype):
        return str(x).replace("torch.", "")
    return x


def build_config(spec: dict):
    hub = dict(spec["config"])
    hub["architectures"] = [spec["architecture"]]
    cfg = CONFIG_MAPPING[hub["model_type"]].from_dict(copy.deepcopy(hub))
    return hub, cfg


def fixture_config(hub: dict, cfg) -> dict:
    """The full config.json dict: transformers' to_dict() (minus noise) plus the hub keys."""
    full = _jsonable(cfg.to_dict())
    out = {k: v for k, v in full.items() if k not in NOISE_KEYS}
    for k, v in hub.items():
        out[k] = _jsonable(v)
    out["torch_dtype"] = "float32"
    out["dtype"] = "float32"
    out["architectures"] = list(hub["architectures"])
    # Round trip: the fixture dict must rebuild the very same config.
    again = CONFIG_MAPPING[out["model_type"]].from_dict(copy.deepcopy(out))
    a = {k: v for k, v in _jsonable(again.to_dict()).items() if k not in NOISE_KEYS}
    b = {k: v for k, v in full.items() if k not in NOISE_KEYS}
    if a != b:
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        raise RuntimeError(f"{hub['architectures'][0]}: fixture config does not round-trip: {diff}")
    return dict(sorted(out.items()))


# ---------------------------------------------------------------------------------------------
# model construction and counting


def make_model(cfg, attn_impl: str, moe: bool, seed: int):
    torch.manual_seed(seed)
    kwargs = {"attn_implementation": attn_impl, "dtype": torch.float32}
    if moe:
        kwargs["experts_implementation"] = "eager"
    model = AutoModelForCausalLM.from_config(copy.deepcopy(cfg), **kwargs)
    model.eval()
    got = model.config._attn_implementation
    if got != attn_impl:
        raise RuntimeError(f"asked for attn_implementation={attn_impl}, model uses {got}")
    return model


def _op_name(op) -> str:
    # aten.mm.default -> "aten.mm" (OpOverloadPacket names are what FlopCounterMode keys on)
    s = str(op)
    return s[: -len(".default")] if s.endswith(".default") else s


class AttentionShapeRecorder(TorchDispatchMode):
    """Records shapes of the FLOP-counted ops that run directly in an attention module
    (not in one of its Linear children): the q.k^T / p.v bmm's of eager attention, or the
    SDPA kernel."""

    def __init__(self, model):
        super().__init__()
        self.names = {m: n for n, m in model.named_modules()}
        self.stack: list[torch.nn.Module] = []
        self.records: list[dict] = []
        self.handles = []

    def _attention_owner(self):
        if not self.stack:
            return None
        top = self.stack[-1]
        return top if "Attention" in type(top).__name__ else None

    def _record_sdpa_call(self, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                          enable_gqa=False, **kw):
        owner = self._attention_owner()
        if owner is not None:
            self.records.append({
                "module": self.names.get(owner, "?"), "op": "F.scaled_dot_product_attention",
                "q": list(q.shape), "k": list(k.shape), "v": list(v.shape),
                "attn_mask": None if attn_mask is None else list(attn_mask.shape),
                "is_causal": bool(is_causal), "enable_gqa": bool(enable_gqa)})

    def __enter__(self):
        self._orig_sdpa = torch.nn.functional.scaled_dot_product_attention
        orig = self._orig_sdpa

        def sdpa(*args, **kwargs):
            self._record_sdpa_call(*args, **kwargs)
            return orig(*args, **kwargs)

        torch.nn.functional.scaled_dot_product_attention = sdpa

        def pre(mod, args):
            self.stack.append(mod)

        def post(mod, args, out):
            if self.stack and self.stack[-1] is mod:
                self.stack.pop()

        self.handles = [
            torch.nn.modules.module.register_module_forward_pre_hook(pre),
            torch.nn.modules.module.register_module_forward_hook(post, always_call=True),
        ]
        return super().__enter__()

    def __exit__(self, *args):
        for h in self.handles:
            h.remove()
        torch.nn.functional.scaled_dot_product_attention = self._orig_sdpa
        return super().__exit__(*args)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        owner = self._attention_owner()
        if owner is not None and func.overloadpacket in flop_registry:
            shapes = [list(a.shape) for a in args[:3] if isinstance(a, torch.Tensor)]
            self.records.append({"module": self.names.get(owner, "?"),
                                 "op": _op_name(func.overloadpacket), "shapes": shapes})
        return func(*args, **kwargs)


def summarize_attention(records: list[dict], heads: int) -> list[dict]:
    """One entry per attention module: its core ops with shapes, the SDPA call (if any) and
    the query/key lengths per query head. transformers packs GQA queries for a single decode
    token into [B, H_kv, n_rep, d] on some SDPA paths, hence q_len = rows / heads."""
    per: dict[str, list] = defaultdict(list)
    order: list[str] = []
    for r in records:
        if r["module"] not in per:
            order.append(r["module"])
        per[r["module"]].append(r)
    out = []
    for m in order:
        entries = per[m]
        calls = [r for r in entries if r["op"] == "F.scaled_dot_product_attention"]
        ops = [r for r in entries if r["op"] != "F.scaled_dot_product_attention"]
        kv_len = None
        q_len = None
        for r in ops:
            if "scaled_dot_product" in r["op"]:
                q, k = r["shapes"][0], r["shapes"][1]
                q_len, kv_len = q[-2] * q[-3] // heads, k[-2]
                break
            if r["op"] in ("aten.bmm", "aten.baddbmm"):
                a, b = r["shapes"][-2:] if r["op"] == "aten.baddbmm" else r["shapes"][:2]
                batch = a[0] // heads  # [B*H, q, d] x [B*H, d, kv]
                q_len, kv_len = a[1] if batch else None, b[2]
                break
        e = {"module": m, "q_len": q_len, "kv_len": kv_len,
             "ops": [[r["op"], r["shapes"]] for r in ops]}
        if calls:
            e["sdpa_call"] = {k: v for k, v in calls[0].items() if k not in ("module", "op")}
        out.append(e)
    return out


def self_flops_by_module(counts: dict, root: str) -> dict[str, int]:
    """Per-module FLOPs that are not inside a child module (a Linear, an attention core,
    an experts block, a router), keyed by the module path without the root class name."""
    totals = {k: sum(v.values()) for k, v in counts.items() if k != "Global"}
    self_flops = {}
    for name, tot in totals.items():
        desc = [c for c in totals if c.startswith(name + ".")]
        # nearest recorded descendants (a ModuleList is never called, so it has no entry)
        children = [c for c in desc if not any(c.startswith(p + ".") for p in desc if p != c)]
        own = tot - sum(totals[c] for c in children)
        if own:
            key = name[len(root) + 1:] if name.startswith(root + ".") else ("<root>" if name == root else name)
            self_flops[key] = own
    return dict(sorted(self_flops.items()))


def count(model, fn, with_modules: bool) -> dict:
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        fn()
    counts = fc.get_flop_counts()
    by_op = {_op_name(k): int(v) for k, v in sorted(counts.get("Global", {}).items(), key=lambda kv: str(kv[0]))}
    res = {"total_flops": int(fc.get_total_flops()), "by_op": by_op}
    if with_modules:
        res["by_module"] = self_flops_by_module(counts, type(model).__name__)
    return res


def record_shapes(model, fn) -> list[dict]:
    rec = AttentionShapeRecorder(model)
    with torch.no_grad(), rec:
        fn()
    return summarize_attention(rec.records, model.config.num_attention_heads)


def prefill_inputs(vocab: int, seq: int, seed: int):
    g = torch.Generator().manual_seed(seed + 1000)
    return torch.randint(3, vocab, (BATCH, seq), generator=g)


def run_prefill(model, ids, logits_arg: str | None, keep: int | None):
    kwargs = {"input_ids": ids, "use_cache": True}
    if logits_arg is not None:
        kwargs[logits_arg] = keep
    return model(**kwargs)


def decode_fn(model, vocab: int, seed: int):
    """Returns a closure that runs one decode step on a freshly prefilled cache."""
    ids = prefill_inputs(vocab, CONTEXT, seed)
    with torch.no_grad():
        out = model(input_ids=ids[:, :-1], use_cache=True)
    cache = out.past_key_values

    def fn():
        res = model(input_ids=ids[:, -1:], past_key_values=cache, use_cache=True)
        return res

    return fn


def logits_kwarg(model) -> str | None:
    import inspect

    params = inspect.signature(model.forward).parameters
    for name in ("logits_to_keep", "num_logits_to_keep"):
        if name in params:
            return name
    return None


def run_case(spec: dict, hub: dict, cfg, seed: int, details: bool) -> tuple[list[dict], dict]:
    moe = bool(spec.get("moe"))
    vocab = cfg.vocab_size
    runs: list[dict] = []
    meta: dict = {}
    models = {}
    for impl in ATTN_IMPLS:
        try:
            models[impl] = make_model(cfg, impl, moe, seed)
        except Exception as e:  # an attention implementation the model does not support
            first = str(e).split(". ")[0].strip()
            meta.setdefault("unsupported_attn_implementations", {})[impl] = f"{type(e).__name__}: {first}"
    # by_module for the sdpa runs, or for eager where sdpa is not supported
    module_impl = "sdpa" if "sdpa" in models else next(iter(models), None)
    for impl, model in models.items():
        meta["logits_kwarg"] = logits_kwarg(model)
        with_modules = details and impl == module_impl
        ids = prefill_inputs(vocab, PROMPT, seed)
        for logits in ("last", "all"):
            la = meta["logits_kwarg"]
            if logits == "last" and la is None:
                continue
            keep = 1 if logits == "last" else 0
            fn = lambda: run_prefill(model, ids, la, keep)  # noqa: E731
            r = {"phase": "prefill", "batch": BATCH, "prompt": PROMPT,
                 "attn_implementation": impl, "logits": logits}
            r.update(count(model, fn, with_modules))
            if details:
                r["attention"] = record_shapes(model, fn)
            runs.append(r)
        r = {"phase": "decode", "batch": BATCH, "context": CONTEXT, "new_tokens": 1,
             "attn_implementation": impl}
        r.update(count(model, decode_fn(model, vocab, seed), with_modules))
        if details:
            r["attention"] = record_shapes(model, decode_fn(model, vocab, seed))
        runs.append(r)
        if impl == module_impl:
            meta["module_classes"] = sorted({type(m).__name__ for m in model.modules()})
            if moe:
                meta["expert_load"] = expert_load(model, prefill_inputs(vocab, PROMPT, seed))
    return runs, meta


def expert_load(model, ids) -> list[list[int]]:
    """Tokens routed to each expert in each MoE layer during the prefill (routing evidence)."""
    loads = []

    def hook(mod, args):
        top_k_index = args[1]
        loads.append(torch.bincount(top_k_index.flatten(), minlength=mod.num_experts).tolist())

    handles = [m.register_forward_pre_hook(hook) for m in model.modules()
               if type(m).__name__.endswith("Experts") and hasattr(m, "num_experts")]
    with torch.no_grad():
        model(input_ids=ids, use_cache=False)
    for h in handles:
        h.remove()
    return loads


def moe_expert_check(spec: dict, cfg, runs: list[dict]) -> dict | None:
    """Routed-expert FLOPs in the by_module breakdown vs tokens x top_k x per-expert FLOPs."""
    if not spec.get("moe"):
        return None
    h = cfg.hidden_size
    i = cfg.moe_intermediate_size if hasattr(cfg, "moe_intermediate_size") else cfg.intermediate_size
    k = cfg.num_experts_per_tok
    per_token_expert = 2 * h * (2 * i) + 2 * i * h  # gate+up (fused), down
    out = {"per_expert_flops_per_token": per_token_expert, "top_k": k, "runs": []}
    for r in runs:
        if "by_module" not in r:
            continue
        routed = {m: f for m, f in r["by_module"].items() if m.endswith(".experts")}
        tokens = BATCH * (PROMPT if r["phase"] == "prefill" else 1)
        expected = tokens * k * per_token_expert
        out["runs"].append({
            "phase": r["phase"], "logits": r.get("logits"), "tokens": tokens,
            "moe_layers": len(routed), "expected_per_layer": expected,
            "counted_per_layer": sorted(set(routed.values())),
            "ok": all(v == expected for v in routed.values()),
        })
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output JSON (default: the fixture)")
    ap.add_argument("--only", action="append", help="architecture(s) to run (default: all)")
    args = ap.parse_args()

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    cases, skipped = [], []
    for spec in SPECS:
        arch = spec["architecture"]
        if args.only and arch not in args.only:
            continue
        if not hasattr(transformers, arch):
            skipped.append({"architecture": arch,
                            "reason": f"transformers {transformers.__version__} has no {arch}"})
            continue
        hub, cfg = build_config(spec)
        case = {"architecture": arch, "config": fixture_config(hub, cfg)}
        if spec.get("moe"):
            case["experts_implementation"] = "eager"
        runs, meta = run_case(spec, hub, cfg, SEED, details=True)
        case["runs"] = runs
        case.update({k: v for k, v in meta.items() if k not in ("module_classes", "expert_load")})
        case["module_classes"] = meta.get("module_classes", [])
        if spec.get("moe"):
            runs2, meta2 = run_case(spec, hub, cfg, SECOND_SEED, details=False)
            t1 = [(r["phase"], r["attn_implementation"], r.get("logits"), r["total_flops"]) for r in runs]
            t2 = [(r["phase"], r["attn_implementation"], r.get("logits"), r["total_flops"]) for r in runs2]
            case["routing_invariance"] = {
                "seeds": [SEED, SECOND_SEED],
                "note": "weights and input ids both re-drawn; totals of every run compared",
                "identical_total_flops": t1 == t2,
                "prefill_tokens_per_expert_by_layer": {
                    str(SEED): meta.get("expert_load"), str(SECOND_SEED): meta2.get("expert_load")},
            }
            case["expert_flops_check"] = moe_expert_check(spec, cfg, runs)
        cases.append(case)
        print(f"{arch}: " + ", ".join(
            f"{r['phase']}/{r['attn_implementation']}/{r.get('logits', '-')}={r['total_flops']}"
            for r in runs), file=sys.stderr)

    doc = {
        "generator": "tools/oracle/hf_flop_oracle.py",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "device": "cpu",
        "convention": "FlopCounterMode: 2 FLOP per multiply-accumulate; counts matmul-like ops and SDPA only",
        "workloads": {
            "prefill": f"batch {BATCH}, {PROMPT} random prompt tokens, use_cache=True; logits 'last' = "
                       "logits_to_keep=1, 'all' = logits_to_keep=0 (every position)",
            "decode": f"batch {BATCH}, context {CONTEXT}: a {CONTEXT - 1}-token prefill with use_cache=True "
                      "(not counted), then one counted forward of 1 new token per sequence with past_key_values",
        },
        "fields": {
            "by_op": "FlopCounterMode.get_flop_counts()['Global'] (aten op -> FLOP)",
            "by_module": "sdpa runs (eager runs where sdpa is unsupported): FLOP of each module not inside one of its children "
                         "(Linear layers, attention core, experts blocks, routers), root class name dropped",
            "attention": "shapes of the FLOP-counted ops run directly in each attention module: "
                         "eager = [q.k^T bmm, p.v bmm] as [B*H, q, d] x [B*H, d, kv]; sdpa = [q, k, v] as [B, H, len, d]",
        },
        "notes": [
            "SDPA is counted as two full q_len x kv_len bmm's per head: no causal or sliding-window discount "
            "(flop_counter.sdpa_flop ignores is_causal and the mask); eager counts the same two bmm's.",
            "MoE models run with experts_implementation='eager': one F.linear (aten.mm) per expert that got "
            "tokens. The transformers default 'grouped_mm' calls aten._grouped_mm, which FlopCounterMode does "
            "not count (0 FLOP for routed experts).",
            "Router (gate) F.linear is counted (aten.mm); top-k, softmax/sigmoid and weighting are not.",
            "Sliding-window layers keep only sliding_window-1 past tokens in DynamicCache, so in decode "
            "they attend min(context, sliding_window) keys; in prefill they still count the full square.",
            "DeepSeek-V3 (transformers 5) caches the compressed latent (kv_a_layernorm(kv) and k_rot) and "
            "re-runs kv_b_proj over every cached position on each decode step (non-absorbed MLA): decode "
            "kv_b_proj FLOP = 2 * batch * context * kv_lora_rank * heads * (qk_nope_head_dim + v_head_dim).",
            "DeepSeek-V3 with sdpa: q/k head dim (nope+rope) differs from v_head_dim, so on CPU torch runs the "
            "math fallback and FlopCounterMode sees two aten.bmm instead of an SDPA kernel (same FLOP).",
            "aten.addmm (Linear with bias: Qwen2 q/k/v, GPT-2, GPT-NeoX) counts only 2*m*n*k; the bias add is "
            "not counted.",
            "Op names are those of the CPU dispatch (aten._scaled_dot_product_flash_attention_for_cpu); on CUDA "
            "the SDPA op differs (flash/efficient/cudnn) but uses the same FLOP formula.",
            "For one decode token with GQA and an explicit mask (sliding layers) transformers packs the query "
            "heads as [B, H_kv, n_rep, d] (pack_gqa); attention[].q_len is given per query head.",
        ],
        "cases": cases,
        "skipped": skipped,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(doc, indent=1, sort_keys=False)
    out.write_text(text + "\n")
    print(f"wrote {out} ({len(text) / 1024:.0f} KB, {len(cases)} cases, {len(skipped)} skipped)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
