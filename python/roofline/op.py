"""``roofline.op``: one operator at a time, as ``roofline op KIND``. Each function takes the
CLI's options as keywords (``hw``, ``dtype``, ``ceilings``, ``runtime``, ``efficiency``) and
returns an OpResult (``.time_s``, ``.expected_time_s``, ``.bound``, ``.flip``, ``.explain()``)."""

from __future__ import annotations

from typing import Any, Optional

from . import _cli
from ._results import OpResult


def _op(op_kind: str, /, **kw: Any) -> OpResult:
    argv = ["op", op_kind, *_cli.options(**kw)]
    return OpResult(_cli.run_json(argv), argv)


def matmul(m: int, n: int, k: int, *, hw: Optional[str] = None, batch: Optional[int] = None,
           dtype: Optional[str] = None, weight_dtype: Optional[str] = None,
           group_size: Optional[int] = None, bias: bool = False, activation_b: bool = False,
           **options: Any) -> OpResult:
    """[m, k] x [k, n] (m: tokens; the k x n operand is a weight unless ``activation_b``)."""
    return _op("matmul", m=m, n=n, k=k, hw=hw, batch=batch, dtype=dtype,
               weight_dtype=weight_dtype, group_size=group_size, bias=bias,
               activation_b=activation_b, **options)


def attention(batch: int, heads: int, head_dim: int, q_len: int, kv_len: int, *,
              kv_heads: Optional[int] = None, impl: Optional[str] = None, causal: bool = False,
              window: Optional[int] = None, kv_dtype: Optional[str] = None,
              hw: Optional[str] = None, **options: Any) -> OpResult:
    """Scaled dot-product attention (``impl``: flash or eager)."""
    return _op("attention", batch=batch, heads=heads, kv_heads=kv_heads, head_dim=head_dim,
               q_len=q_len, kv_len=kv_len, impl=impl, causal=causal, window=window,
               kv_dtype=kv_dtype, hw=hw, **options)


def elementwise(elements: int, *, inputs: Optional[int] = None,
                flops_per_element: Optional[float] = None, hw: Optional[str] = None,
                **options: Any) -> OpResult:
    """An elementwise op over ``elements`` outputs reading ``inputs`` tensors."""
    return _op("elementwise", elements=elements, inputs=inputs,
               flops_per_element=flops_per_element, hw=hw, **options)


def conv2d(batch: int, in_channels: int, out_channels: int, height: int, width: int,
           kernel: int, *, stride: Optional[int] = None, padding: Optional[int] = None,
           dilation: Optional[int] = None, groups: Optional[int] = None, bias: bool = False,
           hw: Optional[str] = None, **options: Any) -> OpResult:
    """A 2-D convolution (NCHW, a square kernel)."""
    return _op("conv2d", batch=batch, in_channels=in_channels, out_channels=out_channels,
               height=height, width=width, kernel=kernel, stride=stride, padding=padding,
               dilation=dilation, groups=groups, bias=bias, hw=hw, **options)


def norm(rows: int, cols: int, *, kind: Optional[str] = None, hw: Optional[str] = None,
         **options: Any) -> OpResult:
    """A layer or RMS norm over ``rows`` vectors of ``cols``."""
    return _op("norm", rows=rows, cols=cols, kind=kind, hw=hw, **options)


def softmax(rows: int, cols: int, *, hw: Optional[str] = None, **options: Any) -> OpResult:
    """A softmax over ``rows`` vectors of ``cols``."""
    return _op("softmax", rows=rows, cols=cols, hw=hw, **options)


def embedding(tokens: int, vocab: int, dim: int, *, hw: Optional[str] = None,
              **options: Any) -> OpResult:
    """An embedding lookup of ``tokens`` rows of a ``vocab`` x ``dim`` table."""
    return _op("embedding", tokens=tokens, vocab=vocab, dim=dim, hw=hw, **options)
