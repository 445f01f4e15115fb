"""The bridge to the C++ core: argument lists in, the CLI's JSON and text out, errors raised."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

try:
    from . import _roofline
except ImportError as _e:  # the source folder on sys.path, without the compiled core
    raise ImportError("roofline's compiled core (roofline._roofline) is missing: install the "
                      "package with `pip install .` from the repository root (python/ on "
                      "PYTHONPATH holds only its sources)") from _e


class RooflineError(ValueError):
    """Bad input, as the CLI reports it: ``line`` is the CLI's one line (``error: <where>:
    <what>``); ``str(err)`` is that line without the ``error: `` prefix; ``status`` is the CLI's
    exit status (2)."""

    def __init__(self, line: str, status: int, stdout: str = ""):
        self.line = line
        self.status = status
        self.stdout = stdout  # what the command printed (a `validate` that found a violation)
        super().__init__(line[len("error: "):] if line.startswith("error: ") else line)


def fields():
    """The C++ field table, cached: (name, flag, type, default, help, choices, scope) rows."""
    global _FIELDS
    if _FIELDS is None:
        _FIELDS = [tuple(r) for r in _roofline.fields()]
    return _FIELDS


_FIELDS = None


def field_pairs(**kw: Any) -> List[Tuple[str, str]]:
    """Keyword arguments as the scenario's (field name, text) pairs, as options() makes flags:
    None and False left out, True "true", a mapping one "KEY=VALUE" per item, a list one pair
    per element; paths of files made absolute."""
    pairs: List[Tuple[str, str]] = []
    for name, v in kw.items():
        if name == "tf32" and v is False:
            pairs.append((name, "false"))  # none on TF32 (None: PyTorch's default)
            continue
        if v is None or v is False:
            continue
        if name in ("hw", "model") and isinstance(v, (str, os.PathLike)):
            v = absolute(os.fspath(v))
        if v is True:
            pairs.append((name, "true"))
        elif isinstance(v, Mapping):
            pairs += [(name, f"{key}={_value(val)}") for key, val in v.items()]
        elif isinstance(v, (list, tuple)):
            pairs += [(name, _value(val)) for val in v]
        else:
            pairs.append((name, _value(v)))
    return pairs


def sweep_columns(pairs: List[Tuple[str, str]], vary: List[str]):
    """The C++ core's sweep into columns (see _roofline.sweep_columns); RooflineError on bad
    input; None when the CLI path serves the request."""
    try:
        return _roofline.sweep_columns(pairs, vary)
    except ValueError as e:
        raise RooflineError(str(e), 2) from None


def run(*args: str) -> str:
    """Runs ``roofline ARGS...`` in-process and returns what it prints; raises RooflineError
    with the CLI's error line on bad input. ``run("hw", "list")`` prints what ``roofline hw
    list`` prints."""
    status, out, err = run_status(*args)
    if status != 0:
        raise RooflineError(_error_line(err, status), status, out)
    return out


def run_status(*args: str) -> Tuple[int, str, str]:
    """Runs ``roofline ARGS...`` and returns (exit status, stdout, stderr) without raising."""
    argv = [str(a) for a in args]
    return _roofline.run(argv)


def _error_line(err: str, status: int) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error: ")]
    if errors:
        return errors[-1]
    return lines[-1] if lines else f"error: roofline exited with status {status}"


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if not v.is_integer() else str(int(v)) if abs(v) < 2**53 else repr(v)
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    return str(v)


def flag(name: str) -> str:
    """``kv_dtype`` -> ``--kv-dtype``."""
    return "--" + name.replace("_", "-")


def options(**kw: Any) -> List[str]:
    """Keyword arguments as CLI options: None is left out, True is a bare flag (False left
    out), a mapping is one ``--name KEY=VALUE`` per item (``efficiency``, ``dims`` ->
    ``--dim``), a list or tuple one ``--name VALUE`` per element."""
    argv: List[str] = []
    for name, v in kw.items():
        if name == "tf32" and v is False:
            argv.append("--tf32=false")  # none on TF32 (None: PyTorch's default, convolutions)
            continue
        if v is None or v is False:
            continue
        if name in ("hw", "model") and isinstance(v, (str, os.PathLike)):
            v = absolute(os.fspath(v))  # a device JSON or model file
        opt = "--dim" if name == "dims" else flag(name)
        if v is True:
            argv.append(opt)
        elif isinstance(v, Mapping):
            for key, val in v.items():
                argv += [opt, f"{key}={_value(val)}"]
        elif isinstance(v, (list, tuple)):
            for val in v:
                argv += [opt, _value(val)]
        else:
            argv += [opt, _value(v)]
    return argv


def vary_options(vary: Mapping[str, Any]) -> List[str]:
    """``{"context": (1024, 131072, "x2"), "hw": ["h100-sxm", "h200"], "batch": "1:64"}`` ->
    ``--vary context=1024:131072:x2 --vary hw=h100-sxm,h200 --vary batch=1:64``. A tuple is
    (from, to) or (from, to, step) with step ``"x2"`` (multiply) or ``"+256"`` (add); a list is
    the values themselves."""
    if not isinstance(vary, Mapping) or not vary:
        raise TypeError("vary: a dict such as {'batch': (1, 64, 'x2')}")
    argv: List[str] = []
    for name, spec in vary.items():
        if name == "hw" and isinstance(spec, (list, tuple)):
            spec = [absolute(os.fspath(v)) if isinstance(v, (str, os.PathLike)) else v
                    for v in spec]  # device JSON files
        if isinstance(spec, tuple):
            if len(spec) not in (2, 3):
                raise TypeError(f"vary[{name!r}]: a tuple (from, to) or (from, to, step), "
                                f"got {len(spec)} elements")
            text = ":".join(_value(x) for x in spec)
        elif isinstance(spec, (list, range)):
            text = ",".join(_value(x) for x in spec)
        else:
            text = _value(spec)
        argv += ["--vary", f"{name}={text}"]
    return argv


def model_source(model: Any, keep: List[Any]) -> str:
    """A preset id, a path, or a captured graph (roofline_capture.Graph: written to a temporary
    file that lives as long as ``keep``, the result holding it)."""
    if isinstance(model, (str, os.PathLike)):
        return absolute(os.fspath(model))
    if hasattr(model, "save") and hasattr(model, "nodes") and hasattr(model, "tensors"):
        import tempfile

        tmp = tempfile.TemporaryDirectory(prefix="roofline-")
        keep.append(tmp)
        path = os.path.join(tmp.name, "graph.json")
        model.save(path)
        return path
    raise TypeError("model: a preset id, a path to a config.json, graph JSON or .onnx file, or a "
                    f"graph from roofline.capture(), not {type(model).__name__}")


def absolute(path: str) -> str:
    """An existing file or folder as an absolute path, so that a result re-run later (its
    table, chart or report) reads the same file whatever the working directory is then; any
    other string (a preset or device id) unchanged."""
    return os.path.abspath(path) if os.path.exists(path) else path


def run_json(argv: Sequence[str]) -> Dict[str, Any]:
    import json

    return json.loads(run(*argv, "--format", "json"))


def optional(name: str, value: Optional[Any]) -> List[str]:
    return [] if value is None else [flag(name), _value(value)]
