"""roofline: is an inference workload limited by compute, memory bandwidth, capacity, the
interconnect or launch overhead, how fast will it run, and where does the verdict flip?

    import roofline
    r = roofline.model("llama-3-8b", hw="h100-sxm", batch=8, prompt=2048)
    r.phase("decode").expected_time_s        # seconds per output token, expected
    r.to_pandas()                            # one row per kernel and phase (pandas optional)
    roofline.sweep("llama-3-8b", vary={"context": (2048, 131072, "x2")}).crossovers
    roofline.op.matmul(m=16, n=4096, k=4096, hw="a100-sxm-80gb").bound

Every function runs the same C++ core as the ``roofline`` command, in-process, with the same
options (a keyword ``kv_dtype="fp8"`` is the CLI's ``--kv-dtype fp8``) and returns the numbers
``--format json`` prints; ``str(result)`` is the CLI's table. Bad input raises
``roofline.RooflineError`` with the CLI's one-line message. See python/README.md.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional, Union

from . import _cli, op
from ._cli import RooflineError, run
from ._results import (Kernel, ModelResult, NetworkResult, OpResult, Phase, PlanResult,
                       ProfileResult,
                       Record, SweepResult)

__version__ = "0.1.0"

__all__ = [
    "model", "sweep", "plan", "op", "profile", "capture", "hw", "models", "run", "fields",
    "RooflineError",
    "ModelResult", "NetworkResult", "SweepResult", "PlanResult", "OpResult", "ProfileResult",
    "Phase",
    "Kernel", "Record", "__version__",
]

_ModelSource = Union[str, "os.PathLike[str]", Any]


def fields():
    """The scenario's options as the C++ core's field table describes them: one dict per option
    with ``name`` (the keyword), ``flag`` (the CLI option), ``type``, ``default``, ``help``,
    ``choices`` and ``scope`` (``llm``, ``network`` or ``both``). The keywords of ``model()``
    and ``sweep()`` are these names."""
    keys = ("name", "flag", "type", "default", "help", "choices", "scope")
    return [dict(zip(keys, row)) for row in _cli.fields()]


def _check_keywords(function: str, given: Mapping[str, Any]) -> None:
    names = {f[0] for f in _cli.fields()}
    for key in given:
        if key not in names:
            import difflib

            close = difflib.get_close_matches(key, sorted(names), n=1)
            hint = f"; did you mean {close[0]!r}" if close else ""
            raise TypeError(f"{function}() got an unexpected keyword {key!r}{hint} (the "
                            f"options: {', '.join(sorted(names))}; roofline.fields() describes "
                            "them)")


def _analysis(data: Dict[str, Any], argv, keep) -> Union[ModelResult, NetworkResult]:
    return (NetworkResult if "network" in data else ModelResult)(data, argv, keep)


def model(model: _ModelSource, hw: Optional[str] = None, *, phase: Optional[str] = None,
          batch: Optional[int] = None, prompt: Optional[int] = None,
          context: Optional[int] = None, dtype: Optional[str] = None,
          weight_dtype: Optional[str] = None, kv_dtype: Optional[str] = None,
          group_size: Optional[int] = None, tp: Optional[int] = None,
          attention: Optional[str] = None, fusion: Optional[str] = None,
          ceilings: Optional[str] = None, runtime: Optional[str] = None,
          efficiency: Optional[Mapping[str, float]] = None,
          dims: Optional[Mapping[str, int]] = None, tf32: Optional[bool] = None,
          steps: Optional[int] = None, cfg: bool = False,
          **options: Any) -> Union[ModelResult, NetworkResult]:
    """Analyses a model, as ``roofline model``.

    model: an LLM preset id (``roofline.models.list()``), a network preset id
    (``roofline.models.networks()``: ``"sdxl-unet"``, ``"flux-dev"``, ``"resnet-50"``, ...), a
    HuggingFace ``config.json`` (or its directory), a graph JSON file, an ``.onnx`` file, or a
    graph from ``roofline.capture()``. steps, cfg: a diffusion denoiser run for whole images
    (``steps=30, cfg=True``: 30 passes at twice the batch of images), giving ``.diffusion``
    with seconds per image and images/s.
    hw: a device id (``roofline.hw.list()``) or a device JSON file; the CLI's default
    (h100-sxm) when None. The keywords are the CLI's options (``kv_dtype`` is ``--kv-dtype``;
    ``efficiency={"matmul": 0.7}`` is ``--efficiency matmul=0.7``; ``dims={"batch": 32}`` is
    ``--dim batch=32`` for graphs); any other option of the scenario's field table
    (``roofline.fields()``) can be given the same way
    (``mla="absorbed"``, ``all_logits=True``, ``launch_overhead_us=5``, ``pp=2``,
    ``weight_kernel="tinygemm"`` for int4 weights run by PyTorch's tinygemm kernel,
    ``weight_kernel="inductor-int8"`` for int8 weights under torch.compile (``"inductor-fp8"``
    for float8 ones; ``"scaled-mm-rowwise"`` for float8 weights and activations through
    torch._scaled_mm's row-wise kernel),
    ``quantize_lm_head=True`` where the quantizer replaces the output layer too).
    tf32: graphs' fp32 products on TF32 tensor cores: None does what PyTorch does (fp32
    convolutions on TF32, matmuls in FP32), True all of them, False none.

    Returns a ModelResult (LLMs: ``.phases``) or a NetworkResult (graphs: ``.kernels``).
    """
    _check_keywords("model", options)
    keep: list = []
    argv = ["model", _cli.model_source(model, keep)]
    argv += _cli.options(hw=hw, phase=phase, batch=batch, prompt=prompt, context=context,
                         dtype=dtype, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                         group_size=group_size, tp=tp, attention=attention, fusion=fusion,
                         ceilings=ceilings, runtime=runtime, efficiency=efficiency, dims=dims,
                         tf32=tf32, steps=steps, cfg=cfg, **options)
    return _analysis(_cli.run_json(argv), argv, keep)


def sweep(model: _ModelSource, vary: Mapping[str, Any], hw: Optional[str] = None, *,
          phase: Optional[str] = None, **options: Any) -> SweepResult:
    """Sweeps one or two variables, as ``roofline sweep``: the verdict and times at every
    point and the exact values where a verdict flips (``.crossovers``).

    vary: ``{"batch": (1, 1024)}``, ``{"context": (2048, 131072, "x2")}`` (a step ``"x2"``
    multiplies, ``"+256"`` adds), ``{"batch": [1, 8, 64]}`` (the values), two variables for a
    grid, and ``{"hw": ["h100-sxm", "h200"]}`` for the same sweep on each device. The other
    keywords are ``model()``'s. A graph (preset, file or capture) varies one of its dimensions:
    ``{"height": (512, 4096, "x2")}`` (``width`` follows unless given in ``dims=``; values on
    the dimension's step), with the exact values where verdicts flip, where fused attention
    overtakes the convolutions and matmuls, and where weights + activations stop fitting.
    """
    _check_keywords("sweep", options)
    keep: list = []
    source = _cli.model_source(model, keep)
    vary_argv = _cli.vary_options(vary)
    argv = ["sweep", source, *vary_argv]
    argv += _cli.options(hw=hw, phase=phase, **options)
    # An LLM on one device: evaluated from the scenario into columns (NumPy arrays, no JSON);
    # the rest through the CLI's JSON.
    direct = _cli.sweep_columns(_cli.field_pairs(model=source, hw=hw, phase=phase, **options),
                                vary_argv[1::2])
    if direct is not None:
        import json

        head, columns = direct
        return SweepResult(json.loads(head), argv, keep, columns=columns)
    return SweepResult(_cli.run_json(argv), argv, keep)


def plan(model: _ModelSource, hw: Optional[str] = None, *, gpus: Optional[int] = None,
         rate: Optional[float] = None, concurrency: Optional[int] = None,
         prompt: Optional[Union[int, str]] = None, output: Optional[Union[int, str]] = None,
         price_per_hour: Optional[float] = None, prefix_hit: Optional[float] = None,
         max_batched_tokens: Optional[int] = None, ttft: Optional[str] = None,
         tpot: Optional[str] = None, e2e: Optional[str] = None,
         **options: Any) -> PlanResult:
    """Plans a fleet, as ``roofline plan``: the layout (tensor parallelism, pipeline stages,
    replicas), the largest batch that fits and meets the targets, latency, throughput and cost
    per million tokens, as configured and in FP8.

    gpus: devices in the fleet, or None with ``rate`` (requests/s) or ``concurrency`` for the
    fewest that carry the load. prompt, output: one length (``2048``) or a spread
    (``"lognormal:2048,0.6"``, ``"uniform:64,512"``). ttft, tpot, e2e: targets such as
    ``"2s@p99"`` or ``"50ms@p90"``. The other keywords are the scenario's options
    (``roofline.fields()``: ``tp``, ``pp``, ``dtype``, ``weight_dtype``, ``engine``, ...).
    ``.to_pandas()`` gives one row per operating point; ``.plot()`` the Pareto chart.
    """
    _check_keywords("plan", options)
    keep: list = []
    argv = ["plan", _cli.model_source(model, keep)]
    argv += _cli.options(hw=hw, gpus=gpus, rate=rate, concurrency=concurrency, prompt=prompt,
                         output=output, price_per_hour=price_per_hour, prefix_hit=prefix_hit,
                         max_batched_tokens=max_batched_tokens, ttft=ttft, tpot=tpot, e2e=e2e,
                         **options)
    return PlanResult(_cli.run_json(argv), argv, keep)


def profile(source: Any, hw: Optional[str] = None, *, kind: Optional[str] = None,
            model: Optional[_ModelSource] = None, **options: Any) -> ProfileResult:
    """Reads a profile, as ``roofline profile``: measured kernels by class and op, and with
    ``model`` (and its workload keywords: ``batch``, ``prompt``, ``phase``, ...) measured vs
    expected vs ideal per kernel class.

    source: a PyTorch profiler trace (``.json``/``.json.gz``), an Nsight Compute CSV, an Nsight
    Systems ``cuda_gpu_kern_sum`` CSV, or a live ``torch.profiler.profile`` object (after it
    stopped; its trace is exported to a temporary file). kind: ``"torch"``, ``"ncu"`` or
    ``"nsys"``; found from the file when None.
    """
    keep: list = []
    if hasattr(source, "export_chrome_trace") and not isinstance(source, (str, os.PathLike)):
        import tempfile

        tmp = tempfile.TemporaryDirectory(prefix="roofline-")
        keep.append(tmp)
        path = os.path.join(tmp.name, "trace.json")
        source.export_chrome_trace(path)
        kind = kind or "torch"
    elif isinstance(source, (str, os.PathLike)):
        path = _cli.absolute(os.fspath(source))
    else:
        raise TypeError("source: a profile file path or a torch.profiler.profile object, not "
                        f"{type(source).__name__}")
    kind = kind or _profile_kind(path)
    argv = ["profile", kind, path]
    if model is not None:
        argv += ["--model", _cli.model_source(model, keep)]
    argv += _cli.options(hw=hw, **options)
    return ProfileResult(_cli.run_json(argv), argv, keep)


def _profile_kind(path: str) -> str:
    lower = path.lower()
    if lower.endswith((".json", ".json.gz", ".gz")):
        return "torch"
    try:
        with open(path, "rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
    except OSError:
        return "torch"  # the CLI reports the file it cannot read, in its own words
    if any(mark in head for mark in ('"Metric Name"', '"Kernel Name"', "==PROF==")):
        return "ncu"  # Nsight Compute: --csv --page details|raw, or its log around the CSV
    if any(mark in head for mark in ("Time (%)", "Total Time", "Duration (ns)")):
        return "nsys"  # nsys stats: cuda_gpu_kern_sum or cuda_gpu_trace
    if head.lstrip().startswith(("{", "[")):
        return "torch"
    raise RooflineError(f"error: {path}: not a profile this reads (a PyTorch trace, an Nsight "
                        "Compute CSV or an nsys cuda_gpu_kern_sum/gpu_trace CSV); name its kind "
                        "with kind='torch'|'ncu'|'nsys'", 2)


def capture(module: Any, example_inputs: Any = (), kwargs: Optional[Dict[str, Any]] = None, *,
            dims: Optional[Mapping[str, int]] = None, name: Optional[str] = None,
            input_names: Any = None):
    """Records a ``torch.nn.Module``'s forward pass as a roofline graph (roofline_capture), to
    pass to ``model()``/``sweep()`` or ``.save()``. A model and inputs made under ``with
    torch.device("meta"):`` are captured with no weights in memory and no arithmetic; a forward
    that needs tensor values there (``.item()``, ``nonzero``, ``if x.sum() > 0``) raises
    ``roofline_capture.CaptureError`` with one line naming the op and the module.

    dims: ``{"batch": 0}`` makes dimension 0 of the tensor inputs the symbolic ``batch`` (so
    ``model(g, dims={"batch": 64})`` and ``sweep(g, vary={"batch": ...})`` work): one batch-like
    dimension that every input shares.

    Several dimensions (batch, height, width, sequence length, frames): pass a function as
    ``example_inputs`` that builds the inputs at given sizes, ``example_inputs(**sizes) ->
    (args, kwargs)``, and ``dims={"batch": 1, "height": (1024, 64), ...}``: each dimension's
    size to capture at and, optionally, the step its values take (an image side the network
    halves six times: 64). The model runs at the corners one step up and once two steps up;
    every activation size becomes a polynomial in the dimensions (``"height*width/4096"``), and
    one that is not affine in each dimension raises ``roofline_capture.CaptureError`` naming the
    tensor, op and module.
    """
    try:
        import torch
    except ImportError:
        raise ImportError("roofline.capture needs PyTorch: pip install torch (the capture runs "
                          "the model on the meta device; nothing else of roofline needs it)") \
            from None

    from roofline_capture import capture as _capture

    if not isinstance(module, torch.nn.Module):
        raise TypeError(f"capture: module must be a torch.nn.Module, not {type(module).__name__}")
    # A model built under `with torch.device("meta"):` is captured without memory; a forward that
    # needs tensor values there raises roofline_capture.CaptureError naming the op.
    if callable(example_inputs) and not isinstance(example_inputs, torch.Tensor):
        if kwargs:
            raise TypeError("capture: with example_inputs a function, it returns the keyword "
                            "inputs too (args, kwargs): pass no kwargs")
        return _capture(module, example_inputs, name=name, input_names=input_names,
                        dims=dict(dims or {}))
    batch_dim, dim_name = None, "batch"
    if dims:
        if len(dims) != 1:
            raise ValueError("capture: with example inputs (not a function of the sizes), one "
                             "symbolic dimension that every input shares (e.g. dims={'batch': "
                             f"0}}), got {len(dims)}: {', '.join(dims)}; for several, pass a "
                             "function example_inputs(**sizes) -> (args, kwargs)")
        ((dim_name, batch_dim),) = dims.items()
    return _capture(module, example_inputs, kwargs, name=name, batch_dim=batch_dim,
                    dim_name=dim_name, input_names=input_names)


class _Listing:
    """``roofline.hw`` and ``roofline.models``: the database and the presets."""

    def __init__(self, command: str, key: str):
        self._command, self._key = command, key

    def list(self):
        """One Record per entry (``roofline hw list`` or ``roofline models list``, as JSON)."""
        data = _cli.run_json([self._command, "list"])
        return [Record(r) for r in data[self._key]]

    def to_pandas(self):
        """The list as a DataFrame, one row per entry."""
        from ._results import _frame

        return _frame(_cli.run_json([self._command, "list"])[self._key])


class _Hw(_Listing):
    def show(self, device: str) -> Record:
        """Every ceiling of a device with its provenance and ridge points (``hw show``)."""
        return Record(_cli.run_json(["hw", "show", device]))


class _Models(_Listing):
    def networks(self):
        """The network presets (data/graphs/: diffusion and vision models), one Record each:
        ``id``, ``name``, ``dims``, ``nodes``, ``parameters``, ``matrix_flops`` per pass, and
        ``note`` (where it was captured from). ``roofline.model(id, dims={"batch": 4})``."""
        return [Record(r) for r in _cli.run_json(["models", "list"])["networks"]]


hw = _Hw("hw", "devices")
models = _Models("models", "models")
