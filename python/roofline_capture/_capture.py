"""Dispatch-level capture of a torch.nn.Module's forward pass into a roofline graph."""

from __future__ import annotations

import collections
import contextlib
import math
import re
import warnings
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import _ops
from .graph import FORMAT, VERSION, Graph, entry_limits, format_entry

__version__ = "0.1"

_DTYPES = {
    torch.float64: "fp64", torch.float32: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16",
    torch.int64: "int64", torch.int32: "int32", torch.int16: "int16", torch.int8: "int8",
    torch.uint8: "uint8", torch.bool: "bool",
}
for _n in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"):
    if hasattr(torch, _n):
        _DTYPES[getattr(torch, _n)] = "fp8"
for _n, _v in (("uint16", "int16"), ("uint32", "int32"), ("uint64", "int64"),
               ("complex64", "fp64"), ("complex128", "fp64"), ("complex32", "fp32")):
    # No such dtype in the format: the one with the same element size (bytes stay right).
    if hasattr(torch, _n):
        _DTYPES[getattr(torch, _n)] = _v


def _dtype(t: torch.Tensor) -> str:
    return _DTYPES.get(t.dtype, "fp32")


def _flat_tensors(x) -> List[torch.Tensor]:
    """Tensors in a (nested) output: tuples, lists, dicts, ModelOutput-like objects."""
    out: List[torch.Tensor] = []
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            out.extend(_flat_tensors(v))
    elif isinstance(x, dict):
        for v in x.values():
            out.extend(_flat_tensors(v))
    elif hasattr(x, "to_tuple"):
        out.extend(_flat_tensors(x.to_tuple()))
    return out


def _bind(func, args, kwargs) -> Dict[str, Any]:
    """Arguments by schema name (defaults filled in)."""
    bound: Dict[str, Any] = {}
    for i, a in enumerate(func._schema.arguments):
        if i < len(args) and not a.kwarg_only:
            bound[a.name] = args[i]
        elif a.name in kwargs:
            bound[a.name] = kwargs[a.name]
        elif a.has_default_value():
            bound[a.name] = a.default_value
        else:
            bound[a.name] = None
    return bound


def _ints(v, n: Optional[int] = None) -> List[int]:
    if v is None:
        return []
    if isinstance(v, (int, torch.SymInt)):
        v = [int(v)] * (n or 1)
    v = [int(x) for x in v]
    if n is not None and len(v) == 1 and n > 1:
        v = v * n
    return v


class _Tracer:
    """Turns a stream of (aten op, args, result) into nodes and tensors."""

    def __init__(self, model: torch.nn.Module):
        self.nodes: List[Dict[str, Any]] = []
        self.tensors: Dict[str, Dict[str, Any]] = {}
        self.names: Dict[int, Tuple[torch.Tensor, str]] = {}   # id(tensor) -> (tensor, name)
        self.weight_t: Dict[int, Tuple[torch.Tensor, str]] = {}  # id(view) -> (view, param)
        self.pending: Dict[int, Tuple[torch.Tensor, str, str, str]] = {}  # lazily named views
        self.param_ids: Dict[int, str] = {}
        self.param_keys: Dict[Tuple, str] = {}
        self.node_names: Dict[str, int] = {}
        self.module_stack: List[str] = [""]
        self.counter = 0
        self.unknown: Dict[str, int] = {}
        params = dict(model.named_parameters())
        buffers = dict(model.named_buffers())
        for names, is_param in ((params, True), (buffers, False)):
            for name, p in names.items():
                if id(p) in self.param_ids:
                    continue
                self.param_ids[id(p)] = name
                self.names[id(p)] = (p, name)
                self.tensors[name] = {"shape": list(p.shape), "dtype": _dtype(p), "weight": True}
                if not is_param:
                    self.tensors[name]["parameter"] = False
                if p.device.type != "meta":
                    self.param_keys[self._key(p)] = name

    @staticmethod
    def _key(t: torch.Tensor) -> Tuple:
        return (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), t.stride(),
                t.dtype)

    # --- tensor naming -----------------------------------------------------------------------
    def add_input(self, t: torch.Tensor, name: str) -> str:
        self.names[id(t)] = (t, name)
        self.tensors[name] = {"shape": list(t.shape), "dtype": _dtype(t)}
        return name

    def _fresh(self, t: torch.Tensor, prefix: str = "t") -> str:
        name = f"{prefix}{self.counter}"
        self.counter += 1
        self.names[id(t)] = (t, name)
        self.pending.pop(id(t), None)
        self.tensors[name] = {"shape": list(t.shape), "dtype": _dtype(t)}
        return name

    def name_of(self, t: torch.Tensor) -> str:
        """The tensor's current name; creates a constant for a tensor never seen before."""
        if isinstance(t, _WeightRef):
            return t.name
        key = id(t)
        if key in self.pending:
            base_t, base_name, source, module = self.pending.pop(key)
            name = self._fresh(t)
            self._emit(source, "view", {}, [base_name], [name], module)
            return name
        if key in self.names and self.names[key][0] is t:
            return self.names[key][1]
        if t.device.type != "meta" and self._key(t) in self.param_keys:
            return self.param_keys[self._key(t)]
        return self._fresh(t, "c")

    def is_weight(self, name: str) -> bool:
        return bool(self.tensors.get(name, {}).get("weight"))

    # --- nodes -------------------------------------------------------------------------------
    def _emit(self, source, op, attrs, inputs, outputs, module=None):
        module = self.module_stack[-1] if module is None else module
        short = source.split("::", 1)[-1].split(".")[0]
        base = f"{module}/{short}" if module else short
        n = self.node_names.get(base, 0)
        self.node_names[base] = n + 1
        name = base if n == 0 else f"{base}#{n + 1}"
        node = {"name": name, "op": op, "module": module, "source": source,
                "inputs": inputs, "outputs": outputs}
        if attrs:
            node["attrs"] = attrs
        self.nodes.append(node)

    def record(self, func, args, kwargs, out) -> None:
        kwargs = kwargs or {}
        name = _ops.short_name(func)
        base = _ops.base_name(func)
        source = _ops.source_name(func)
        outs = [t for t in _flat_tensors(out)]
        if name in _ops.ALLOC:
            for t in outs:
                self._fresh(t)
            return
        if not outs:
            return  # e.g. aten._local_scalar_dense (.item()): no tensor written
        b = _bind(func, args, kwargs)

        # A transpose (or alias) of a 2-D weight: named lazily, so that an mm/addmm reading it
        # becomes a `linear` over the weight itself and no view node is written for it.
        if base in ("t", "transpose", "permute", "numpy_T", "detach", "alias") and len(outs) == 1 \
                and isinstance(args[0], torch.Tensor):
            src, dst = args[0], outs[0]
            src_name = self._peek(src)
            transposed = base not in ("detach", "alias")
            if id(src) in self.pending and not transposed:       # alias of a weight transpose
                self.pending[id(dst)] = (dst,) + self.pending[id(src)][1:]
                self.weight_t[id(dst)] = (dst, self.weight_t[id(src)][1])
                return
            if src_name is not None and self.is_weight(src_name) and src.dim() == 2:
                if not transposed:                                # alias of a weight: same tensor
                    self.names[id(dst)] = (dst, src_name)
                    return
                if tuple(dst.shape) == tuple(reversed(src.shape)):
                    self.weight_t[id(dst)] = (dst, src_name)
                    self.pending[id(dst)] = (dst, src_name, source, self.module_stack[-1])
                    return

        op, attrs, in_tensors, out_tensors = self._classify(func, name, base, b, args, outs)
        if op is None:
            return
        inputs = [self.name_of(t) for t in in_tensors]
        outputs = []
        for t in out_tensors:
            if id(t) in self.param_ids:
                return  # an op handing back a weight unchanged (e.g. lift_fresh): no node
            outputs.append(self._fresh(t))
        self._emit(source, op, attrs, inputs, outputs)

    def _peek(self, t) -> Optional[str]:
        if not isinstance(t, torch.Tensor):
            return None
        key = id(t)
        if key in self.names and self.names[key][0] is t:
            return self.names[key][1]
        if t.device.type != "meta" and self._key(t) in self.param_keys:
            return self.param_keys[self._key(t)]
        return None

    def _tensor_args(self, b: Dict[str, Any], skip: Sequence[str] = ()) -> List[torch.Tensor]:
        ts: List[torch.Tensor] = []
        for k, v in b.items():
            if k in skip or k == "out":
                continue
            if isinstance(v, torch.Tensor):
                ts.append(v)
            elif isinstance(v, (list, tuple)):
                ts.extend(x for x in v if isinstance(x, torch.Tensor))
        return ts

    def _classify(self, func, name, base, b, args, outs):
        """-> (op, attrs, input tensors, output tensors); op None drops the node."""
        source = _ops.source_name(func)
        ins = self._tensor_args(b)
        if base in _ops.MATMUL:
            return self._matmul(base, b, ins, outs)
        if base in _ops.CONV:
            x, w, bias = b.get("input"), b.get("weight"), b.get("bias")
            nsp = w.dim() - 2
            if isinstance(b.get("padding"), str):   # _convolution_mode: "same" / "valid"
                k = [(s - 1) * d for s, d in zip(w.shape[2:], _ints(b.get("dilation"), nsp))]
                pad = [x // 2 for x in k] if b["padding"] == "same" else [0] * nsp
            else:
                pad = _ints(b.get("padding"), nsp)
            attrs = {"stride": _ints(b.get("stride"), nsp), "padding": pad + pad,
                     "dilation": _ints(b.get("dilation"), nsp), "groups": int(b.get("groups") or 1),
                     "transposed": bool(b.get("transposed", False))}
            if attrs["transposed"]:
                attrs["output_padding"] = _ints(b.get("output_padding"), nsp)
            return "conv", attrs, [t for t in (x, w, bias) if isinstance(t, torch.Tensor)], outs[:1]
        if base in _ops.ATTENTION:
            q, k, v = b.get("query"), b.get("key"), b.get("value")
            mask = b.get("attn_mask", b.get("attn_bias"))
            causal = bool(b.get("is_causal", False))
            ins = [t for t in (q, k, v, mask) if isinstance(t, torch.Tensor)]
            return "attention", {"causal": causal}, ins, outs[:1]
        if base in _ops.NORM:
            kind = _ops.NORM[base]
            attrs: Dict[str, Any] = {"kind": kind}
            if kind in ("layer", "rms") and b.get("normalized_shape") is not None:
                attrs["normalized_dims"] = len(_ints(b["normalized_shape"]))
            if kind == "group":
                attrs["groups"] = int(b.get("group") or b.get("num_groups") or 1)
            if kind == "batch" and b.get("training"):
                attrs["batch_statistics"] = True   # train mode or instance norm: stats from x
            order = ("input", "weight", "bias", "running_mean", "running_var")
            ins = [b[k] for k in order if isinstance(b.get(k), torch.Tensor)]
            return "norm", attrs, ins, outs[:1]
        if base in _ops.SOFTMAX:
            attrs = {"axis": int(b.get("dim", -1)) % max(ins[0].dim(), 1)}
            if _ops.SOFTMAX[base] != "softmax":
                attrs["function"] = _ops.SOFTMAX[base]
            return "softmax", attrs, ins[:1], outs[:1]
        if base in _ops.POOL:
            kind, glob = _ops.POOL[base]
            x = ins[0]
            nsp = x.dim() - 2
            if glob:
                out_sp = list(outs[0].shape[2:])
                attrs = {"kind": kind, "global": all(s == 1 for s in out_sp),
                         "output_size": out_sp}
            else:
                kernel = _ints(b.get("kernel_size"), nsp)
                stride = _ints(b.get("stride"), nsp) or kernel
                pad = _ints(b.get("padding"), nsp)
                attrs = {"kind": kind, "kernel": kernel, "stride": stride, "padding": pad + pad,
                         "global": False}
            return "pool", attrs, ins[:1], outs   # max pool with indices writes both
        if base in _ops.REDUCE and func._overloadname not in ("other", "binary_out"):
            dim = b.get("dim")
            nd = max(ins[0].dim(), 1)
            axes = sorted({a % nd for a in _ints(dim)}) if dim else list(range(ins[0].dim()))
            return "reduce", {"function": _ops.REDUCE[base], "axes": axes}, ins[:1], outs
        if base in _ops.RESIZE:
            return "resize", {"mode": _ops.RESIZE[base]}, ins[:1], outs[:1]
        if base in _ops.EMBEDDING:
            w, idx = b.get("weight"), b.get("indices")
            return "embedding", {}, [t for t in (w, idx) if isinstance(t, torch.Tensor)], outs[:1]
        if name in _ops.COPY or base in _ops.COPY:
            fn = _ops.COPY.get(name, _ops.COPY.get(base))
            if name == "copy_":           # dst.copy_(src): reads src, writes (a new version of) dst
                ins = [b["src"]]
            elif fn in ("fill", "arange", "random") and name.endswith("_"):
                ins = []
            return "copy", {"function": fn}, ins, outs
        if name in _ops.VIEW or base in _ops.VIEW or _ops.is_view(func):
            return "view", {}, ins[:1], outs
        if base in _ops.ELEMENTWISE or _ops.is_pointwise(func) or (
                base in ("max", "min") and func._overloadname == "other"):
            fpe = _ops.ELEMENTWISE.get(base, 1)
            if base == "gelu" and b.get("approximate") == "tanh":
                fpe = _ops.GELU_TANH
            return "elementwise", {"function": base, "flops_per_element": fpe}, ins, outs
        self.unknown[source] = self.unknown.get(source, 0) + 1
        return "unknown", {"op": source}, ins, outs

    def _matmul(self, base, b, ins, outs):
        if base in ("addmm", "baddbmm", "addbmm", "addmv"):
            a, m2, bias = b.get("mat1", b.get("batch1", b.get("mat"))), \
                b.get("mat2", b.get("batch2", b.get("vec"))), b.get("self")
        else:
            a, bias = b.get("self"), None
            m2 = b.get("mat2", b.get("other", b.get("vec", b.get("tensor"))))
        bias_l = [bias] if isinstance(bias, torch.Tensor) else []
        if base in ("mm", "addmm") and id(m2) in self.weight_t and self.weight_t[id(m2)][0] is m2:
            wname = self.weight_t[id(m2)][1]
            # linear: X [m, k] times W [n, k] transposed (the weight itself, read once)
            return "linear", {}, [a, _WeightRef(wname)] + bias_l, outs[:1]
        return "matmul", {}, [a, m2] + bias_l, outs[:1]


class _WeightRef:
    """Stands for a weight by name in an input list (used for linear's W)."""

    def __init__(self, name):
        self.name = name


class _Recorder(TorchDispatchMode):
    def __init__(self, tracer: _Tracer):
        super().__init__()
        self.tracer = tracer

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        try:
            out = func(*args, **kwargs)
        except (RuntimeError, NotImplementedError) as e:
            if _needs_values(func, e, (args, kwargs)):
                raise CaptureError(_needs_data(func, self.tracer, e)) from e
            raise
        self.tracer.record(func, args, kwargs, out)
        return out


class CaptureError(RuntimeError):
    """A forward pass that cannot be captured, in one line naming the op and the module: e.g.
    one that needs tensor values (``.item()``, ``nonzero``, Python control flow on a tensor) while
    the model runs on the meta device, which has shapes but no values."""


# Ops whose output depends on tensor values (shapes from data, or a value read on the host).
_DATA_DEPENDENT = {"_local_scalar_dense", "item", "is_nonzero", "nonzero", "nonzero_static",
                   "masked_select", "unique", "_unique", "_unique2", "unique_consecutive",
                   "unique_dim", "repeat_interleave", "bincount", "histc", "equal", "allclose",
                   "argwhere", "_to_copy"}


def _needs_values(func, e: BaseException, tensors) -> bool:
    """True when an op failed on meta tensors for want of values (not a shape or dtype bug)."""
    if not any(t.device.type == "meta" for t in _flat_tensors(tensors)):
        return False
    name = getattr(getattr(func, "overloadpacket", None), "__name__", "")
    text = str(e).lower()
    return name in _DATA_DEPENDENT or "no data" in text or (
        "meta" in text and ("item()" in text or "data-dependent" in text or "fake impl" in text
                            or "meta kernel" in text))


def _first_line(e: BaseException, limit: int = 160) -> str:
    text = str(e).strip()
    line = text.splitlines()[0] if text else type(e).__name__
    return line if len(line) <= limit else line[:limit].rstrip() + "..."


def _needs_data(func, tracer: "_Tracer", e: BaseException) -> str:
    module = tracer.module_stack[-1] if tracer.module_stack else ""
    op = str(func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else func)
    return (f"aten::{op} in module '{module or '<root>'}' needs tensor values, which the meta "
            f"device does not have (data-dependent shapes or control flow): capture on a real "
            f"device (CPU tensors at a small size, with batch_dim), or make the forward "
            f"independent of tensor values ({_first_line(e)})")


@contextlib.contextmanager
def _module_hooks(model: torch.nn.Module, stack: List[str]):
    """Keeps `stack[-1]` at the path of the module whose forward is running. The path is found
    from the calling module's children, so a module instance shared under several names (e.g. one
    activation object used everywhere) gets the path it was called through."""
    first_path = {}
    for path, mod in model.named_modules(remove_duplicate=False):
        first_path.setdefault(id(mod), path)
    objs: List[torch.nn.Module] = [model]
    handles = []

    def pre(m, inputs):
        path = None
        parent = objs[-1]
        for child_name, child in parent.named_children():
            if child is m:
                path = f"{stack[-1]}.{child_name}" if stack[-1] else child_name
                break
        if m is model and len(objs) == 1:
            path = ""
        if path is None:
            path = first_path.get(id(m), "")
        stack.append(path)
        objs.append(m)

    def post(m, inputs, output):
        if len(objs) > 1 and objs[-1] is m:
            objs.pop()
            stack.pop()

    seen = set()
    for mod in model.modules():
        if id(mod) in seen:
            continue
        seen.add(id(mod))
        handles.append(mod.register_forward_pre_hook(pre))
        handles.append(mod.register_forward_hook(post, always_call=True))
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def _mha_fastpath_off():
    """nn.MultiheadAttention's inference fast path is one opaque aten op
    (_native_multi_head_attention); without it the projections and the attention appear as
    separate ops."""
    mha = getattr(torch.backends, "mha", None)
    if mha is None or not hasattr(mha, "set_fastpath_enabled"):
        yield
        return
    was = mha.get_fastpath_enabled()
    mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        mha.set_fastpath_enabled(was)


@contextlib.contextmanager
def _fused_sdpa_on_meta():
    """On the meta device SDPA has no fused kernel to choose and runs its math path (two bmm
    and a softmax, in fp32 for half inputs), so a model captured without memory would not show
    the fused attention a CPU or GPU runs. While capturing, SDPA on meta tensors calls the
    fused CPU kernel (which has a meta implementation), as it does on real CPU tensors; inputs
    that kernel does not take (grouped KV heads with enable_gqa, dropout, not 4-D) keep the
    original path."""
    import torch.nn.functional as F
    original = F.scaled_dot_product_attention
    # The fused CPU kernel with a mask and a meta implementation: torch >= 2.3; older versions
    # keep SDPA as it is (the math path on meta tensors).
    fused = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    if fused is not None and tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 3):
        fused = None

    def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
             enable_gqa=False):
        if (fused is not None and isinstance(query, torch.Tensor)
                and query.device.type == "meta" and not enable_gqa
                and dropout_p == 0.0 and query.dim() == 4 and key.dim() == 4
                and value.dim() == 4 and query.shape[1] == key.shape[1] == value.shape[1]):
            return fused(query, key, value, 0.0, is_causal, attn_mask=attn_mask, scale=scale)[0]
        kw = {"enable_gqa": True} if enable_gqa else {}
        return original(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p,
                        is_causal=is_causal, scale=scale, **kw)

    F.scaled_dot_product_attention = sdpa
    try:
        yield
    finally:
        F.scaled_dot_product_attention = original


def _trace(model, args: Tuple, kwargs: Dict[str, Any], input_names: Optional[Sequence[str]]):
    tracer = _Tracer(model)
    inputs = []
    pos = [a for a in args]
    names = list(input_names or [])
    for i, a in enumerate(pos):
        for j, t in enumerate(_flat_tensors(a)):
            if i < len(names):
                nm = names[i] if len(_flat_tensors(a)) == 1 else f"{names[i]}_{j}"
            else:
                nm = "input" if len(pos) == 1 and not kwargs and len(_flat_tensors(a)) == 1 \
                    else f"input_{i}" + (f"_{j}" if len(_flat_tensors(a)) > 1 else "")
            inputs.append(tracer.add_input(t, nm))
    for k, v in kwargs.items():
        flat = _flat_tensors(v)
        for j, t in enumerate(flat):
            inputs.append(tracer.add_input(t, k if len(flat) == 1 else f"{k}_{j}"))
    with torch.no_grad(), _mha_fastpath_off(), _fused_sdpa_on_meta(), \
            _module_hooks(model, tracer.module_stack), _Recorder(tracer):
        try:
            result = model(*args, **kwargs)
        except CaptureError:
            raise
        except (RuntimeError, NotImplementedError) as e:
            # Reading values outside the dispatcher (Tensor.tolist(), .numpy()) on meta tensors.
            text = str(e).lower()
            on_meta = any(t.device.type == "meta" for t in _flat_tensors((args, kwargs)))
            if not (on_meta and "meta" in text and ("no data" in text or "item()" in text)):
                raise
            module = tracer.module_stack[-1] if tracer.module_stack else ""
            raise CaptureError(f"module '{module or '<root>'}' needs tensor values, which the "
                               f"meta device does not have: capture on a real device, or make "
                               f"the forward independent of tensor values "
                               f"({_first_line(e)})") from e
    outputs = [tracer.name_of(t) for t in _flat_tensors(result)]
    # Keep the tensors some node, input or output names (allocations nobody read are dropped).
    used = set(inputs) | set(outputs)
    for n in tracer.nodes:
        used.update(n["inputs"])
        used.update(n["outputs"])
    tensors = {k: v for k, v in tracer.tensors.items() if k in used or v.get("weight")}
    return tracer, inputs, outputs, tensors


def _grow_batch(x, batch_dim: int, b1: int, b2: int):
    """The example inputs with the batch dimension grown from b1 to b2 (rows repeated)."""
    if isinstance(x, torch.Tensor):
        if x.dim() > batch_dim and x.shape[batch_dim] == b1:
            idx = torch.arange(b2, device=x.device) % b1
            return x.index_select(batch_dim, idx).contiguous()
        return x
    if isinstance(x, tuple):
        return tuple(_grow_batch(v, batch_dim, b1, b2) for v in x)
    if isinstance(x, list):
        return [_grow_batch(v, batch_dim, b1, b2) for v in x]
    if isinstance(x, dict):
        return {k: _grow_batch(v, batch_dim, b1, b2) for k, v in x.items()}
    return x


def _correspondence(run1, run2) -> Dict[str, str]:
    """Tensor names of run 1 -> run 2. The op sequences are aligned (difflib): they can differ,
    e.g. a reshape of a transposed tensor is a view at batch 1 and a copy at batch 2."""
    import difflib
    nodes1, nodes2 = run1[0].nodes, run2[0].nodes
    def key(n, tensors):
        # Not the aten op of costed nodes: a linear is addmm at one batch, mm + add at another.
        outs = n["outputs"]
        return (n["op"], n["module"], len(tensors[outs[0]]["shape"]) if outs else -1)
    sm = difflib.SequenceMatcher(None, [key(n, run1[3]) for n in nodes1],
                                 [key(n, run2[3]) for n in nodes2], autojunk=False)
    corr: Dict[str, str] = {}
    for a, b in zip(run1[1] + run1[2], run2[1] + run2[2]):   # graph inputs, outputs
        corr.setdefault(a, b)
    for blk in sm.get_matching_blocks():
        for i in range(blk.size):
            n1, n2 = nodes1[blk.a + i], nodes2[blk.b + i]
            for a, b in zip(n1["inputs"] + n1["outputs"], n2["inputs"] + n2["outputs"]):
                corr.setdefault(a, b)
    return corr


def _symbolize(run1, run2, b1: int, b2: int, dim_name: str, warn: List[str]) -> None:
    """Rewrites run 1's activation shapes: a size s that is s*b2/b1 in run 2 (batch b2) becomes
    "batch" (s = b1) or "k*batch" (s = k*b1). Weights keep their shapes."""
    corr = _correspondence(run1, run2)
    tensors1, tensors2 = run1[3], run2[3]
    unmatched, odd = [], []
    for name, spec in tensors1.items():
        if spec.get("weight"):
            continue
        other = tensors2.get(corr.get(name, ""))
        if other is None or len(other["shape"]) != len(spec["shape"]):
            unmatched.append(name)
            continue
        shape = []
        for s1, s2 in zip(spec["shape"], other["shape"]):
            if s1 == s2:
                shape.append(s1)
            elif s1 % b1 == 0 and s2 == (s1 // b1) * b2:
                k = s1 // b1
                shape.append(dim_name if k == 1 else f"{k}*{dim_name}")
            else:
                odd.append(f"{name} ({s1} -> {s2})")
                shape.append(s1)
        spec["shape"] = shape
    if odd:
        warn.append(f"{len(odd)} sizes change with the batch ({b1} -> {b2}) but not in proportion"
                    f" (data-dependent shapes, e.g. squeeze() of a batch of 1): left concrete:"
                    f" {', '.join(odd[:8])}")
    if unmatched:
        warn.append(f"{len(unmatched)} tensors without a counterpart at batch {b2} left concrete:"
                    f" {', '.join(unmatched[:8])}")


def _producers(run) -> Dict[str, Dict[str, Any]]:
    """Tensor name -> the node that wrote it (for error messages)."""
    return {o: n for n in run[0].nodes for o in n["outputs"]}


def _subsets(names: Sequence[str]):
    """Every subset of `names` as a tuple in their order, the empty one first."""
    for mask in range(1 << len(names)):
        yield tuple(n for i, n in enumerate(names) if mask >> i & 1)


def _fit_dims(runs: Dict[Tuple[str, ...], Any], checks: List[Tuple[Dict[str, int], Any]],
              base: Dict[str, int], step: Dict[str, int], warn: List[str]) -> None:
    """Rewrites the activation shapes of runs[()] (the run at `base`) as polynomials in the
    dimensions. runs[S] is the run with the dimensions in S one step larger; `checks` are runs at
    other sizes (each dimension two steps up alone, and all of them together). Each size is fitted
    as the polynomial of degree at most one in each dimension through the 2^n corner runs (e.g.
    "batch*height*width/256+512*batch") and must give the size of every check run; a size that
    does not fit, or a tensor without a counterpart in some run, raises CaptureError naming the
    tensor, its op and its module."""
    order = list(base)
    run0 = runs[()]
    corr = {S: _correspondence(run0, r) for S, r in runs.items() if S}
    check_corr = [_correspondence(run0, r) for _, r in checks]
    producers = _producers(run0)

    # The same matrix ops (matmul, linear, conv, attention) per module in every run: a forward
    # that branches on the sizes gives another graph at other sizes, which no symbolic shape
    # describes. Other ops may differ: a reshape that is a view at one size can be a copy at
    # another (batch 1 and 2), a linear one addmm or mm + add; the graph keeps the run at `base`,
    # and a warning says where the runs differ.
    matrix = ("matmul", "linear", "conv", "attention")

    def matrix_ops(run):
        return collections.Counter(n["module"] for n in run[0].nodes if n["op"] in matrix)

    def other_ops(run):
        return collections.Counter((n["op"], n["module"]) for n in run[0].nodes
                                   if n["op"] not in matrix and n["op"] != "view")
    matrix0, other0 = matrix_ops(run0), other_ops(run0)
    op_note = None
    for sizes, r in [({d: base[d] + (step[d] if d in S else 0) for d in order}, r)
                     for S, r in runs.items() if S] + list(checks):
        got = matrix_ops(r)
        if got != matrix0:
            module = sorted((got - matrix0) + (matrix0 - got))[0]
            raise CaptureError(
                f"the run at {_at(sizes)} has {got[module]} matrix ops (matmul, linear, conv, "
                f"attention) in module '{module or '<root>'}', the run at {_at(base)} "
                f"{matrix0[module]}: the forward branches on the sizes, so no symbolic graph "
                f"describes both; capture at the sizes you want to analyse")
        others = other_ops(r)
        if others != other0 and op_note is None:
            (op, module), *_ = sorted((others - other0) + (other0 - others))
            op_note = (f"the run at {_at(sizes)} differs from the one at {_at(base)} in ops "
                         f"that are not matrix ops ({op} in module '{module or '<root>'}': "
                         f"{others[(op, module)]} against {other0[(op, module)]}; e.g. a reshape "
                         f"that is a view at one size and a copy at another): the graph has the "
                         f"ops of the run at {_at(base)}")
    if op_note:
        warn.append(op_note)

    def where(name):
        node = producers.get(name, {})
        return (f" ({node.get('source', node.get('op', '?'))} in module "
                f"'{node.get('module') or '<root>'}')") if node else ""

    def size_in(run, c, name, i):
        other = run[3].get(c.get(name, ""))
        if other is None or len(other["shape"]) != len(run0[3][name]["shape"]):
            return None
        return other["shape"][i]

    for name, spec in run0[3].items():
        if spec.get("weight"):
            continue
        shape = []
        for i, s0 in enumerate(spec["shape"]):
            f = {(): s0}
            for S in runs:
                if S:
                    f[S] = size_in(runs[S], corr[S], name, i)
            checked = [size_in(r, c, name, i) for (_, r), c in zip(checks, check_corr)]
            missing = [S for S, v in f.items() if v is None]
            missing += [sizes for (sizes, _), v in zip(checks, checked) if v is None]
            if missing:
                at = missing[0]
                at = at if isinstance(at, dict) else {
                    d: base[d] + (step[d] if d in at else 0) for d in order}
                raise CaptureError(
                    f"tensor '{name}'{where(name)} has no counterpart of the same rank in the "
                    f"run at {_at(at)} (the op sequence differs there: control flow that "
                    f"depends on the sizes); it cannot be made symbolic")
            if all(v == s0 for v in f.values()) and all(v == s0 for v in checked):
                shape.append(s0)
                continue
            # Coefficients in the step counts u_d = (x_d - base_d) / step_d (inclusion-exclusion
            # over the corners), then expanded into the dimensions themselves.
            poly: Dict[Tuple[str, ...], Fraction] = {}
            for S in f:
                a_s = sum((-1) ** (len(S) - len(T)) * f[T] for T in _subsets(S))
                if a_s == 0:
                    continue
                for T in _subsets(S):
                    c = Fraction(a_s)
                    for d in S:
                        c *= Fraction(1, step[d]) if d in T else Fraction(-base[d], step[d])
                    poly[T] = poly.get(T, Fraction(0)) + c
            for (sizes, _), want in zip(checks, checked):
                got = sum(c * math.prod(sizes[d] for d in T) for T, c in poly.items())
                if got != want:
                    corners = ", ".join(f"{f[(d,)]} at {d}+{step[d]}" for d in order)
                    raise CaptureError(
                        f"tensor '{name}'{where(name)} axis {i}: sizes {s0} at {_at(base)}, "
                        f"{corners}, and {want} at {_at(sizes)} (not the {got} that the "
                        f"one-step runs predict): not affine in each dimension on these steps "
                        f"(a network that rounds sizes needs a step every resize divides, e.g. "
                        f"64 for an image it halves six times; a size growing with a dimension "
                        f"squared cannot be symbolic)")
            terms = [(c, T) for T, c in poly.items() if c != 0]
            terms.sort(key=lambda t: (-len(t[1]), [order.index(d) for d in t[1]]))
            if not any(T for _, T in terms):
                shape.append(int(sum(c for c, _ in terms)))
                continue
            text = format_entry(terms)
            problem = entry_limits(terms)
            if problem:
                raise CaptureError(f"tensor '{name}'{where(name)} axis {i}: the fitted size "
                                   f"{text} {problem}, beyond what a graph file holds")
            shape.append(text)
        spec["shape"] = shape


def _at(values: Dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items())


def _call_inputs(make_inputs, values: Dict[str, int]):
    got = make_inputs(**values)
    if not (isinstance(got, tuple) and len(got) == 2 and isinstance(got[1], dict)):
        raise TypeError("capture: example_inputs(**dims) must return (args, kwargs): a tuple of "
                        "positional inputs and a dict of keyword inputs")
    args = got[0]
    if isinstance(args, torch.Tensor):
        args = (args,)
    return tuple(args), dict(got[1])


def capture(model: torch.nn.Module, example_inputs: Any = (),
            kwargs: Optional[Dict[str, Any]] = None, *, name: Optional[str] = None,
            batch_dim: Optional[int] = None, dim_name: str = "batch",
            input_names: Optional[Sequence[str]] = None,
            dims: Optional[Dict[str, Any]] = None) -> Graph:
    """Runs `model(*example_inputs, **kwargs)` under a dispatch-level tracer (no gradients) and
    returns the roofline graph of that forward pass (docs/graph-format.md).

    batch_dim: when given, the tensor inputs' dimension `batch_dim` is the batch. The model then
    runs a second time with that dimension one larger, and every activation dimension that grows
    in proportion (size k*B at batch B) is written as "batch" or "k*batch"; weights stay concrete.

    Several symbolic dimensions (batch, height, width, sequence length, frames): pass a function
    as `example_inputs` that builds the inputs at given sizes, `example_inputs(**values)` ->
    (args, kwargs), and `dims` = {name: value} or {name: (value, step)}: the sizes to capture at
    and, per dimension, the step its values take (default 1; an image side the network halves
    three times needs 8). The model runs at the given values, at each dimension one step larger,
    and at every dimension two steps larger; each activation size is fitted as a + c * (product
    of the dimensions it changes with), e.g. "height*width/64+77", checked at the last run. A
    size that does not fit raises CaptureError naming the tensor, its op and its module.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"capture: model must be a torch.nn.Module, not {type(model).__name__}")
    if callable(example_inputs) and not isinstance(example_inputs, torch.Tensor):
        return _capture_dims(model, example_inputs, dims or {}, name, input_names)
    if dims:
        raise TypeError("capture: dims= needs example_inputs to be a function of them "
                        "(example_inputs(**dims) -> (args, kwargs)); for one batch-like input "
                        "dimension use batch_dim=")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    args = tuple(example_inputs)
    kwargs = dict(kwargs or {})
    if model.training:
        warnings.warn("roofline_capture: the model is in training mode (dropout, batch-norm "
                      "statistics); call model.eval() for an inference graph")
    warn: List[str] = []
    run1 = _trace(model, args, kwargs, input_names)
    dims: Dict[str, Optional[int]] = {}
    if batch_dim is not None:
        sizes = {t.shape[batch_dim] for t in _flat_tensors((args, kwargs)) if t.dim() > batch_dim}
        if not sizes:
            raise ValueError("batch_dim given but no tensor input has that dimension")
        b1 = next(t.shape[batch_dim] for t in _flat_tensors((args, kwargs))
                  if t.dim() > batch_dim)
        b2 = b1 + 1
        args2 = _grow_batch(args, batch_dim, b1, b2)
        kwargs2 = _grow_batch(kwargs, batch_dim, b1, b2)
        run2 = _trace(model, args2, kwargs2, input_names)
        _symbolize(run1, run2, b1, b2, dim_name, warn)
        dims[dim_name] = int(b1)
    return _assemble(model, run1, dims, warn, name)


def _assemble(model, run, dims, warn: List[str], name: Optional[str]) -> Graph:
    tracer, inputs, outputs, tensors = run
    if tracer.unknown:
        warn.append("ops mapped to unknown: " + ", ".join(f"{k} x{v}" for k, v in
                                                          sorted(tracer.unknown.items())))
    for w in warn:
        warnings.warn("roofline_capture: " + w)
    data = {
        "format": FORMAT,
        "version": VERSION,
        "name": name or type(model).__name__,
        "producer": f"roofline_capture {__version__} (torch {torch.__version__})",
        "dims": dims,
        "tensors": tensors,
        "inputs": inputs,
        "outputs": outputs,
        "nodes": tracer.nodes,
    }
    if warn:
        data["notes"] = ["capture: " + w for w in warn]
    return Graph(data, warn)


def _capture_dims(model, make_inputs, dims: Dict[str, Any], name: Optional[str],
                  input_names: Optional[Sequence[str]]) -> Graph:
    """capture() with example_inputs a function of the dimensions (see capture)."""
    if not dims:
        raise TypeError("capture: example_inputs is a function: name its dimensions, "
                        "dims={'height': (1024, 64), ...}")
    base, step = {}, {}
    for d, v in dims.items():
        if not isinstance(d, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d):
            raise ValueError(f"capture: dims: {d!r} is not a dimension name (letters, digits, _)")
        value, st = (v if isinstance(v, (tuple, list)) else (v, 1)) if v is not None else (None, 1)
        if not (isinstance(value, int) and isinstance(st, int) and value >= 1 and st >= 1):
            raise ValueError(f"capture: dims[{d!r}] must be a size >= 1 or (size, step) with a "
                             f"step >= 1, got {v!r}")
        if value % st:
            raise ValueError(f"capture: dims[{d!r}]: the size {value} is not a multiple of its "
                             f"step {st}")
        base[d], step[d] = value, st
    if model.training:
        warnings.warn("roofline_capture: the model is in training mode (dropout, batch-norm "
                      "statistics); call model.eval() for an inference graph")

    def run_at(values):
        args, kwargs = _call_inputs(make_inputs, values)
        return _trace(model, args, kwargs, input_names)

    runs = {S: run_at({d: base[d] + (step[d] if d in S else 0) for d in base})
            for S in _subsets(list(base))}
    # Checks off the corners: each dimension two steps up alone, then all of them together.
    check_sizes = [{**base, d: base[d] + 2 * step[d]} for d in base]
    check_sizes.append({d: base[d] + 2 * step[d] for d in base})
    checks = [(sizes, run_at(sizes)) for sizes in check_sizes]
    warn: List[str] = []
    _fit_dims(runs, checks, base, step, warn)
    run0 = runs[()]
    out_dims = {d: (base[d] if step[d] == 1 else {"default": base[d], "multiple": step[d]})
                for d in base}
    return _assemble(model, run0, out_dims, warn, name)
