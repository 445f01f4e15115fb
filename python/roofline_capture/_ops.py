"""How aten ops map onto the graph format's op vocabulary (docs/graph-format.md).

The tables here are the documentation of record for the mapping (python/README.md repeats them).
Every aten op the tracer sees falls into exactly one class:

* a named class below (matmul, conv, attention, norm, softmax, pool, reduce, resize, embedding,
  copy, view, elementwise),
* otherwise an op tagged ``torch.Tag.pointwise`` becomes ``elementwise`` with 1 FLOP per
  output element, an op whose schema says it returns a view becomes ``view``,
* otherwise ``unknown`` with ``attrs = {"op": "aten::name"}``.
"""

from __future__ import annotations

import torch

# Matmuls. aten.linear/aten.matmul are CompositeImplicitAutograd: they reach the dispatch-level
# tracer already decomposed into t/view + mm/addmm/bmm, so the tracer rebuilds `linear` from an
# mm/addmm whose B operand is the transpose of a 2-D weight (see _capture.py).
MATMUL = {"mm", "addmm", "bmm", "baddbmm", "matmul", "_int_mm", "addbmm", "addmv", "mv", "dot"}

CONV = {"convolution", "_convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
        "conv_transpose2d", "conv_transpose3d", "mkldnn_convolution", "cudnn_convolution",
        "_convolution_mode"}

ATTENTION = {"scaled_dot_product_attention", "_scaled_dot_product_flash_attention",
             "_scaled_dot_product_flash_attention_for_cpu",
             "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
             "_scaled_dot_product_fused_attention_overrideable",
             "_flash_attention_forward", "_efficient_attention_forward"}

# op -> norm kind
NORM = {
    "native_layer_norm": "layer", "layer_norm": "layer",
    "native_group_norm": "group", "group_norm": "group",
    "native_batch_norm": "batch", "batch_norm": "batch", "_native_batch_norm_legit": "batch",
    "_native_batch_norm_legit_no_training": "batch", "_batch_norm_no_update": "batch",
    "_batch_norm_with_update": "batch", "cudnn_batch_norm": "batch", "miopen_batch_norm": "batch",
    "instance_norm": "instance",
    "rms_norm": "rms", "_fused_rms_norm": "rms",
}

SOFTMAX = {"_softmax": "softmax", "softmax": "softmax", "_log_softmax": "log_softmax",
           "log_softmax": "log_softmax", "_safe_softmax": "softmax"}

# op -> (kind, global)
POOL = {
    "max_pool1d": ("max", False), "max_pool2d": ("max", False), "max_pool3d": ("max", False),
    "max_pool1d_with_indices": ("max", False), "max_pool2d_with_indices": ("max", False),
    "max_pool3d_with_indices": ("max", False), "mkldnn_max_pool2d": ("max", False),
    "avg_pool1d": ("avg", False), "avg_pool2d": ("avg", False), "avg_pool3d": ("avg", False),
    "adaptive_avg_pool1d": ("avg", True), "adaptive_avg_pool2d": ("avg", True),
    "_adaptive_avg_pool2d": ("avg", True), "adaptive_avg_pool3d": ("avg", True),
    "_adaptive_avg_pool3d": ("avg", True),
    "adaptive_max_pool1d": ("max", True), "adaptive_max_pool2d": ("max", True),
    "adaptive_max_pool3d": ("max", True),
}

# op -> reduce function
REDUCE = {
    "sum": "sum", "mean": "mean", "amax": "max", "amin": "min", "max": "max", "min": "min",
    "var": "var", "std": "std", "var_mean": "var_mean", "std_mean": "std_mean", "prod": "prod",
    "argmax": "argmax", "argmin": "argmin", "linalg_vector_norm": "norm", "norm": "norm",
    "any": "any", "all": "all", "logsumexp": "logsumexp", "nansum": "sum", "aminmax": "minmax",
}

# op -> resize mode
RESIZE = {
    "upsample_nearest1d": "nearest", "upsample_nearest2d": "nearest",
    "upsample_nearest3d": "nearest",
    "_upsample_nearest_exact1d": "nearest", "_upsample_nearest_exact2d": "nearest",
    "_upsample_nearest_exact3d": "nearest",
    "upsample_linear1d": "linear", "upsample_bilinear2d": "linear",
    "upsample_trilinear3d": "linear",
    "_upsample_bilinear2d_aa": "linear",
    "upsample_bicubic2d": "cubic", "_upsample_bicubic2d_aa": "cubic",
}

EMBEDDING = {"embedding", "embedding_bag", "_embedding_bag"}

# op -> copy function
COPY = {
    "clone": "clone", "contiguous": "clone", "copy_": "copy", "copy": "copy", "_to_copy": "cast",
    "to": "cast", "_copy_from": "copy", "_copy_from_and_resize": "copy",
    "lift_fresh_copy": "copy", "_reshape_copy": "clone", "view_copy": "clone",
    "cat": "concat", "concat": "concat", "stack": "concat", "_cat": "concat", "hstack": "concat",
    "vstack": "concat",
    "constant_pad_nd": "pad", "pad": "pad", "reflection_pad1d": "pad", "reflection_pad2d": "pad",
    "reflection_pad3d": "pad", "replication_pad1d": "pad", "replication_pad2d": "pad",
    "replication_pad3d": "pad",
    "index": "gather", "index_select": "gather", "gather": "gather", "take": "gather",
    "take_along_dim": "gather", "masked_select": "gather",
    "scatter": "scatter", "scatter_add": "scatter", "index_put": "scatter", "index_put_": "scatter",
    "index_copy": "scatter", "slice_scatter": "scatter", "select_scatter": "scatter",
    "index_add": "scatter", "masked_scatter": "scatter",
    "repeat": "repeat", "repeat_interleave": "repeat", "tile": "repeat",
    "roll": "roll", "flip": "flip", "pixel_shuffle": "transpose", "pixel_unshuffle": "transpose",
    "channel_shuffle": "transpose", "im2col": "gather", "col2im": "scatter",
    "tril": "mask", "triu": "mask",
    # factories: write their output, read nothing
    "zeros": "fill", "ones": "fill", "full": "fill", "zeros_like": "fill", "ones_like": "fill",
    "full_like": "fill", "fill": "fill", "fill_": "fill", "zero_": "fill", "new_zeros": "fill",
    "new_ones": "fill", "new_full": "fill", "scalar_tensor": "fill", "arange": "arange",
    "linspace": "arange", "rand": "random", "randn": "random", "rand_like": "random",
    "randn_like": "random", "normal_": "random", "uniform_": "random", "bernoulli_": "random",
    "randint": "random", "eye": "fill",
}

# Allocations: no kernel, no node; their output tensor appears without a producer if used.
ALLOC = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"}

# Views: no kernel. (An op whose schema marks its output as a non-written alias of an input is a
# view too, whatever its name.)
VIEW = {
    "view", "_unsafe_view", "reshape", "_reshape_alias", "t", "transpose", "permute", "expand",
    "expand_as", "slice", "select", "unsqueeze", "squeeze", "detach", "alias", "as_strided",
    "unflatten", "flatten", "split", "split_with_sizes", "chunk", "unbind", "narrow", "diagonal",
    "unfold", "view_as", "view_as_real", "view_as_complex", "lift_fresh", "movedim", "swapaxes",
    "numpy_T", "mT", "mH", "adjoint", "_conj", "_neg_view", "real", "imag", "tensor_split",
    "_nested_view_from_buffer", "dropout", "feature_dropout", "alpha_dropout",
}

# Elementwise ops and their FLOPs per output element. Convention: count the arithmetic operations
# of the textbook formula, a transcendental function (exp, log, tanh, erf, sqrt, sin, ...) counting
# as 1. Any other op tagged torch.Tag.pointwise counts 1.
ELEMENTWISE = {
    # arithmetic and comparisons: 1
    **{k: 1 for k in (
        "add", "sub", "rsub", "mul", "div", "neg", "abs", "reciprocal", "sqrt", "rsqrt", "exp",
        "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "tanh", "asin",
        "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc",
        "erfinv", "pow", "square", "sign", "sgn", "floor", "ceil", "round", "trunc", "frac",
        "relu", "threshold", "maximum", "minimum", "fmax", "fmin", "clamp_min", "clamp_max",
        "eq", "ne", "lt", "le", "gt", "ge", "where", "logical_not", "logical_and", "logical_or",
        "logical_xor", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "masked_fill",
        "remainder", "fmod", "floor_divide", "isnan", "isinf", "isfinite", "nan_to_num",
        "cumsum", "cumprod", "relu6", "heaviside", "copysign", "signbit", "bucketize",
    )},
    "clamp": 2, "hardtanh": 2, "leaky_relu": 2, "prelu": 2, "_prelu_kernel": 2,
    "sigmoid": 4,        # 1 / (1 + exp(-x))
    "silu": 5,           # x * sigmoid(x)
    "gelu": 5,           # erf form: x * 0.5 * (1 + erf(x / sqrt(2))); tanh form: 9 (attr)
    "elu": 4, "selu": 5, "celu": 4,
    "softplus": 3,       # log(1 + exp(x))
    "mish": 5,           # x * tanh(softplus(x))
    "hardsigmoid": 4,    # clamp(x + 3, 0, 6) / 6
    "hardswish": 5,      # x * hardsigmoid(x)
    "logit": 3, "log_sigmoid_forward": 4, "glu": 5,
    "addcmul": 3, "addcdiv": 3, "lerp": 3, "xlogy": 2,
}
GELU_TANH = 9            # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))


def short_name(func: torch._ops.OpOverload) -> str:
    """aten.add_.Tensor -> 'add_'."""
    return func._schema.name.split("::", 1)[-1]


def base_name(func: torch._ops.OpOverload) -> str:
    """The op without a trailing in-place underscore: add_ -> add (but not _softmax)."""
    n = short_name(func)
    if n.endswith("_") and not n.endswith("__") and n not in COPY:
        return n[:-1]
    return n


def source_name(func: torch._ops.OpOverload) -> str:
    """'aten::convolution', 'aten::add.Tensor'."""
    overload = func._overloadname
    return func._schema.name + ("" if overload == "default" else "." + overload)


def is_pointwise(func) -> bool:
    return torch.Tag.pointwise in getattr(func, "tags", ())


def is_view(func) -> bool:
    return bool(getattr(func, "is_view", False))
