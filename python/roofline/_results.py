"""Result objects: read-only views of the CLI's JSON with attribute access, ``to_dict()``,
``to_pandas()`` (one row per kernel, point or op), the CLI's text (``str()``) and, where the CLI
draws one, the SVG roofline for Jupyter (``_repr_svg_``)."""

from __future__ import annotations

import copy
import os
import tempfile
from typing import Any, Dict, Iterator, List, Optional, Sequence

from . import _cli


def _wrap(v: Any) -> Any:
    if isinstance(v, dict):
        return Record(v)
    if isinstance(v, list):
        return [_wrap(x) for x in v]
    return v


def _flatten(d: Dict[str, Any], prefix: str = "") -> Dict[str, Any]:
    """{"bytes": {"hbm": 1}} -> {"bytes_hbm": 1}; lists are kept as they are."""
    row: Dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            row.update(_flatten(v, key + "_"))
        else:
            row[key] = v
    return row


def _frame(rows: List[Dict[str, Any]]):
    try:
        import pandas
    except ImportError as e:  # pandas is optional
        raise ImportError("to_pandas() needs pandas: pip install pandas") from e
    return pandas.DataFrame(rows)


class Record:
    """A JSON object of a result: fields as attributes (``phase.time_s``) and items
    (``phase["time_s"]``); nested objects are Records, arrays lists."""

    __slots__ = ("_data",)

    def __init__(self, data: Dict[str, Any]):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        data = object.__getattribute__(self, "_data")
        if name in data:
            return self._field(name, data[name])
        raise AttributeError(f"{type(self).__name__} has no field {name!r} "
                             f"(fields: {', '.join(sorted(data))})")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def _field(self, name: str, value: Any) -> Any:
        return _wrap(value)

    def __getitem__(self, key: str) -> Any:
        return self._field(key, self._data[key])

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def keys(self):
        return self._data.keys()

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._data else default

    def __dir__(self) -> List[str]:
        return sorted(set(object.__dir__(self)) | set(self._data))

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Record) and self._data == other._data

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._data.items()
                           if not isinstance(v, (dict, list)))
        return f"{type(self).__name__}({fields})"

    def to_dict(self) -> Dict[str, Any]:
        """A deep copy of the JSON object, exactly as ``--format json`` prints it."""
        return copy.deepcopy(self._data)


def _kernel_row(phase: Optional[str], k: Dict[str, Any]) -> Dict[str, Any]:
    """A kernel as a DataFrame row: its fields flattened, and ``step_time_s`` (and
    ``expected_step_time_s``): ``time_s`` is one instance's, the step runs ``repeat`` of them,
    so ``df.groupby("phase").step_time_s.sum()`` is each phase's time."""
    row = _flatten(k) if phase is None else dict(phase=phase, **_flatten(k))
    repeat = k.get("repeat", 1)
    if "time_s" in k:
        row["step_time_s"] = k["time_s"] * repeat
    if k.get("expected_time_s") is not None:
        row["expected_step_time_s"] = k["expected_time_s"] * repeat
    return row


class Kernel(Record):
    """One kernel: ``name``, ``flops``, ``bytes`` (per memory level), ``intensity``,
    ``time_s`` (the ideal bound), ``expected_time_s``, ``bound`` and ``expected.bound``."""


class Phase(Record):
    """One phase of an LLM (``phase``: prefill or decode): totals, ``ttft_s`` or ``tpot_s``,
    ``expected_time_s`` and its ``kernels``."""

    def _field(self, name: str, value: Any) -> Any:
        if name == "kernels":
            return [Kernel(k) for k in value]
        return _wrap(value)

    def to_pandas(self):
        """One row per kernel; nested fields flattened (``bytes_hbm``, ``expected_bound``);
        ``time_s`` per instance and ``step_time_s`` (x ``repeat``) per step."""
        return _frame([_kernel_row(self._data.get("phase"), k)
                       for k in self._data.get("kernels", [])])


class _Result(Record):
    """A whole command's result: its JSON, and the arguments that reproduce it."""

    __slots__ = ("_argv", "_keep", "_text")

    def __init__(self, data: Dict[str, Any], argv: Sequence[str], keep: Sequence[Any] = ()):
        super().__init__(data)
        object.__setattr__(self, "_argv", list(argv))
        object.__setattr__(self, "_keep", list(keep))  # temporary graph files the argv names
        object.__setattr__(self, "_text", None)

    @property
    def argv(self) -> List[str]:
        """The CLI arguments that print this result (``roofline`` + argv)."""
        return list(self._argv)

    def __str__(self) -> str:
        """The CLI's table for the same input."""
        if self._text is None:
            object.__setattr__(self, "_text", _cli.run(*self._argv))
        return self._text

    def _write(self, option: str, path: Optional[str]) -> str:
        if path is not None:
            _cli.run(*self._argv, option, os.fspath(path))
            with open(path, encoding="utf-8") as f:
                return f.read()
        with tempfile.TemporaryDirectory(prefix="roofline-") as tmp:
            out = os.path.join(tmp, "out.svg" if option == "--plot" else "out.html")
            _cli.run(*self._argv, option, out)
            with open(out, encoding="utf-8") as f:
                return f.read()

    def plot(self, path: Optional[str] = None) -> str:
        """The SVG chart the CLI's ``--plot`` draws; written to ``path`` when given. Returns
        the SVG text."""
        return self._write("--plot", path)

    def report(self, path: Optional[str] = None) -> str:
        """The self-contained HTML report of ``--report``; written to ``path`` when given."""
        return self._write("--report", path)

    def _repr_svg_(self) -> Optional[str]:
        """Jupyter shows the roofline chart inline."""
        try:
            return self.plot()
        except _cli.RooflineError:
            return None


class ModelResult(_Result):
    """``roofline.model()`` on an LLM: ``model``, ``workload``, ``memory``, ``phases``
    (Phase: prefill, decode), ``notes``."""

    def _field(self, name: str, value: Any) -> Any:
        if name == "phases":
            return [Phase(p) for p in value]
        return _wrap(value)

    def phase(self, name: str) -> Phase:
        """The phase called ``name`` (``"prefill"`` or ``"decode"``)."""
        for p in self._data.get("phases", []):
            if p.get("phase") == name:
                return Phase(p)
        raise KeyError(f"no phase {name!r} (phases: "
                       f"{', '.join(p.get('phase', '?') for p in self._data.get('phases', []))})")

    def to_pandas(self):
        """One row per kernel and phase (a ``phase`` column), nested fields flattened; ``time_s``
        is one instance's and ``step_time_s`` (x ``repeat``) what the step spends on it, so
        ``df.groupby("phase").step_time_s.sum()`` is each phase's time."""
        return _frame([_kernel_row(p.get("phase"), k)
                       for p in self._data.get("phases", []) for k in p.get("kernels", [])])

    def explain(self, kernel: str) -> str:
        """The derivation of one kernel's numbers (``--explain KERNEL``)."""
        return _cli.run(*self._argv, "--explain", kernel)

    def __repr__(self) -> str:
        parts = [f"{p.get('phase')} {p.get('time_s', 0):.4g} s bound"
                 + (f", {p['expected_time_s']:.4g} s expected" if "expected_time_s" in p else "")
                 + f" ({p.get('bound')})" for p in self._data.get("phases", [])]
        model = self._data.get("model", {}).get("config", "?")
        return f"<ModelResult {model} on {self._data.get('device')}: {'; '.join(parts)}>"


class _KernelsResult(_Result):
    """A result whose ``kernels`` are one list (a network, an operator): Kernel objects, and a
    DataFrame of one row per kernel with nested fields flattened."""

    def _field(self, name: str, value: Any) -> Any:
        if name == "kernels":
            return [Kernel(k) for k in value]
        return _wrap(value)

    def to_pandas(self):
        """One row per kernel, nested fields flattened (``bytes_hbm``, ``expected_bound``), with
        ``step_time_s`` (``time_s`` x ``repeat``)."""
        return _frame([_kernel_row(None, k) for k in self._data.get("kernels", [])])


class NetworkResult(_KernelsResult):
    """``roofline.model()`` on a graph or ONNX model: ``network``, ``dims``, ``totals``,
    ``kernels`` (Kernel), ``notes``; ``diffusion`` with ``steps=``."""

    def __repr__(self) -> str:
        t = self._data.get("totals", {})
        return (f"<NetworkResult {self._data.get('network', {}).get('name')} on "
                f"{self._data.get('device')}: {t.get('time_s', 0):.4g} s bound "
                f"({t.get('bound')})>")


class SweepResult(_Result):
    """``roofline.sweep()``: ``crossovers`` (where a verdict flips) and ``never_flips``, and the
    points: as columns (``columns`` says what each is; ``arrays()`` gives them as NumPy arrays,
    one row per point and phase for an LLM), and for a sweep across devices (``vary={"hw":
    [...]}``) ``devices``, each with its ``sweep``."""

    __slots__ = ("_columns",)

    def __init__(self, data: Dict[str, Any], argv: Sequence[str], keep: Sequence[Any] = (),
                 columns: Optional[Dict[str, Any]] = None):
        super().__init__(data, argv, keep)
        object.__setattr__(self, "_columns", columns)

    def arrays(self) -> Dict[str, Any]:
        """The columns as NumPy arrays (labels such as ``bound`` as arrays of strings), one row
        per point (and phase). The C++ core's own memory for numbers: no copy, no JSON."""
        import numpy

        if self._columns is None and "devices" in self._data:
            # Across devices: each device's columns one after another, a `device` column first.
            parts = [(d.get("device"), d.get("sweep", {}).get("data", {}))
                     for d in self._data["devices"]]
            ids: List[str] = []
            for _, data in parts:
                ids += [k for k in data if k not in ids]
            out = {"device": numpy.asarray(
                [dev for dev, data in parts for _ in range(len(next(iter(data.values()), [])))],
                dtype=object)}
            for k in ids:
                out[k] = numpy.asarray(
                    [x for _, data in parts
                     for x in data.get(k, [None] * len(next(iter(data.values()), [])))])
            return out
        if self._columns is None:
            return {k: numpy.asarray(v) for k, v in self._data.get("data", {}).items()}
        out = {}
        for k, v in self._columns.items():
            if isinstance(v, tuple) and v and isinstance(v[0], str):  # ("bool", bytes)
                out[k] = v[1].astype(bool)
            elif isinstance(v, tuple):  # (codes, labels)
                out[k] = numpy.asarray(v[1], dtype=object)[v[0]]
            else:
                out[k] = numpy.asarray(v)
        return out

    def to_dict(self) -> Dict[str, Any]:
        """A deep copy of the document ``--format json`` prints."""
        d = copy.deepcopy(self._data)
        if self._columns is not None:
            data = {}
            for k, v in self._columns.items():
                if isinstance(v, tuple) and v and isinstance(v[0], str):
                    data[k] = [bool(x) for x in v[1]]
                elif isinstance(v, tuple):
                    data[k] = [v[1][c] for c in v[0].tolist()]
                else:
                    data[k] = v.tolist() if hasattr(v, "tolist") else list(v)
            d["data"] = data
        return d

    def to_pandas(self):
        """One row per point (and phase, for an LLM); across devices a ``device`` column."""
        try:
            import pandas
        except ImportError as e:  # pandas is optional
            raise ImportError("to_pandas() needs pandas: pip install pandas") from e

        def frame(sweep: Dict[str, Any], extra: Dict[str, Any]):
            if self._columns is not None and sweep is self._data:  # the core's own arrays
                cols = {}
                for k, v in self._columns.items():
                    if isinstance(v, tuple) and v and isinstance(v[0], str):
                        cols[k] = v[1].astype(bool)
                    elif isinstance(v, tuple):
                        cols[k] = pandas.Categorical.from_codes(v[0], categories=v[1])
                    else:
                        cols[k] = v
                df = pandas.DataFrame(cols)
            elif "data" in sweep:  # "schema": 2, the columns themselves
                df = pandas.DataFrame(sweep["data"])
            else:
                rows: List[Dict[str, Any]] = []
                for point in sweep.get("points", []):
                    base = {k: v for k, v in point.items() if k != "phases"}
                    for p in point.get("phases") or [{}]:
                        rows.append({**_flatten(base), **_flatten(p)})
                df = pandas.DataFrame(rows)
            for i, (k, v) in enumerate(extra.items()):
                df.insert(i, k, v)
            return df

        if "devices" in self._data:
            frames = [frame(d.get("sweep", {}), {"device": d.get("device")})
                      for d in self._data["devices"]]
            return pandas.concat(frames, ignore_index=True) if frames else pandas.DataFrame()
        return frame(self._data, {})

    def rows(self) -> List[Record]:
        """The table's rows as Records (one per point, and phase for an LLM; across devices a
        ``device`` field first): ``[r.batch for r in s.rows()]``."""
        if "devices" in self._data:
            out = []
            for d in self._data["devices"]:
                data = d.get("sweep", {}).get("data", {})
                n = d.get("sweep", {}).get("rows", 0)
                out += [Record({"device": d.get("device"), **{k: v[i] for k, v in data.items()}})
                        for i in range(n)]
            return out
        data = self.to_dict().get("data") if self._columns is not None else self._data.get("data")
        if data is None:
            return [Record(p) for p in self._data.get("points", [])]
        return [Record({k: v[i] for k, v in data.items()}) for i in range(self._data["rows"])]

    def _count(self, sweep: Dict[str, Any]) -> int:
        return sweep.get("rows", 0) if "rows" in sweep else len(sweep.get("points", []))

    def __repr__(self) -> str:
        n = self._count(self._data) or sum(
            self._count(d.get("sweep", {})) for d in self._data.get("devices", []))
        what = "rows" if "rows" in self._data or "devices" in self._data else "points"
        return (f"<SweepResult {n} {what}, {len(self._data.get('crossovers', []))} "
                f"crossovers>")


class OpResult(_KernelsResult):
    """``roofline.op.*()``: one operator's ``flops``, ``bytes``, ``intensity``, ``time_s``,
    ``expected_time_s``, ``bound``, ``flip`` (where the verdict flips) and ``kernels``."""

    def explain(self) -> str:
        """The derivation of every number and the size where the verdict flips."""
        return _cli.run(*self._argv, "--explain")

    def _repr_svg_(self) -> Optional[str]:
        return None  # the CLI draws no chart of one operator

    def __repr__(self) -> str:
        return (f"<OpResult {self._data.get('op')} on {self._data.get('device')}: "
                f"{self._data.get('time_s', 0):.4g} s bound, "
                f"{self._data.get('expected_time_s', 0):.4g} s expected "
                f"({self._data.get('bound')})>")


class ProfileResult(_Result):
    """``roofline.profile()``: the measured kernels by op and class (``ops``, ``classes``),
    with, given a model, the expected and ideal times beside them."""

    def to_pandas(self):
        """One row per op (torch traces) or kernel (Nsight files), nested fields flattened."""
        for key in ("ops", "kernels", "rows"):
            if isinstance(self._data.get(key), list):
                return _frame([_flatten(r) for r in self._data[key]])
        return _frame([])

    def __repr__(self) -> str:
        return (f"<ProfileResult {self._data.get('file')} ({self._data.get('format')}) on "
                f"{self._data.get('device')}>")


class PlanResult(_Result):
    """``roofline.plan()``: the serving plan's ``variants`` (as configured, FP8), each with its
    layout (``tp``, ``pp``, ``micro_batches``, ``replicas``), the ``layouts`` tried, the
    operating points (``batch1``, ``largest_batch``, ``flop_limit`` and, with a load,
    ``at_load``), the ``pareto`` points and the ``assumptions``."""

    _POINTS = ("batch1", "largest_batch", "flop_limit", "at_load")

    def to_pandas(self):
        """One row per operating point of each variant: ``variant``, ``point``, the layout
        (``tp``, ``pp``, ``micro_batches``, ``replicas``) and the point's fields, nested ones
        flattened (``steady_state_step_s``)."""
        rows: List[Dict[str, Any]] = []
        for v in self._data.get("variants", []):
            for key in self._POINTS:
                point = v.get(key) if key != "at_load" else (v.get("load") or {}).get("at_load")
                if not isinstance(point, dict):
                    continue
                row = {"variant": v.get("name"), "point": key, "tp": v.get("tp"),
                       "pp": v.get("pp"), "micro_batches": v.get("micro_batches"),
                       "replicas": v.get("replicas")}
                row.update(_flatten(point))
                rows.append(row)
        return _frame(rows)

    def __repr__(self) -> str:
        parts = []
        for v in self._data.get("variants", []):
            layout = f"tp {v.get('tp')}" + (f" x pp {v.get('pp')}" if v.get("pp", 1) > 1 else "")
            largest = v.get("largest_batch") or {}
            parts.append(f"{v.get('name')}: {layout} x {v.get('replicas')}, batch "
                         f"{largest.get('batch')}")
        return (f"<PlanResult {self._data.get('model')} on {self._data.get('gpus')} x "
                f"{self._data.get('device')}: {'; '.join(parts)}>")

