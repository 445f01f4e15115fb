"""The captured graph: a thin wrapper over the roofline-graph JSON (docs/graph-format.md), with a
reference implementation of the format's FLOP formulas for the matrix ops so that Python tests
can check a capture without the C++ tool."""

from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, List, Optional

FORMAT = "roofline-graph"
VERSION = 1

_SCALED = re.compile(r"^(\d+)\*([A-Za-z_][A-Za-z0-9_]*)$")


def resolve_dim(d, dims: Dict[str, int]) -> int:
    """An entry of a tensor shape (int, "batch", "4*batch") -> its value."""
    if isinstance(d, int):
        return d
    m = _SCALED.match(d)
    if m:
        return int(m.group(1)) * int(dims[m.group(2)])
    return int(dims[d])


class Graph:
    """One forward pass as nodes over tensors. `data` is the JSON object."""

    def __init__(self, data: Dict[str, Any], warnings: Optional[List[str]] = None):
        self.data = data
        self.warnings = list(warnings or [])

    # --- plain accessors -------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.data["name"]

    @property
    def dims(self) -> Dict[str, Optional[int]]:
        return self.data["dims"]

    @property
    def tensors(self) -> Dict[str, Dict[str, Any]]:
        return self.data["tensors"]

    @property
    def nodes(self) -> List[Dict[str, Any]]:
        return self.data["nodes"]

    def to_dict(self) -> Dict[str, Any]:
        return self.data

    def to_json(self, indent: Optional[int] = None) -> str:
        if indent is None:
            return json.dumps(self.data, separators=(",", ":"))
        return json.dumps(self.data, indent=indent)

    def save(self, path: str, indent: Optional[int] = None) -> None:
        """Writes the graph JSON (compact by default; indent=1 for a readable file)."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json(indent))
            f.write("\n")

    @classmethod
    def load(cls, path: str) -> "Graph":
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if data.get("format") != FORMAT or data.get("version", 0) > VERSION:
            raise ValueError(f"{path}: not a {FORMAT} version <= {VERSION} file")
        return cls(data)

    # --- reference arithmetic --------------------------------------------------------------
    def shape(self, tensor: str, dims: Optional[Dict[str, int]] = None) -> List[int]:
        d = dict(self.dims)
        d.update(dims or {})
        return [resolve_dim(x, d) for x in self.tensors[tensor]["shape"]]

    def parameter_count(self) -> int:
        """Elements of the tensors with weight=true and parameter not false (buffers excluded):
        equals sum(p.numel() for p in model.parameters())."""
        total = 0
        for t in self.tensors.values():
            if t.get("weight") and t.get("parameter", True):
                total += math.prod(resolve_dim(x, self.dims) for x in t["shape"])
        return total

    def node_matrix_flops(self, node: Dict[str, Any], dims: Optional[Dict[str, int]] = None) -> int:
        """FLOPs of one matmul/linear/conv/attention node by docs/graph-format.md (2 per
        multiply-accumulate, biases not counted); 0 for every other op."""
        op = node["op"]
        ins = node["inputs"]
        sh = lambda i: self.shape(ins[i], dims)  # noqa: E731
        if op == "linear":
            x, w = sh(0), sh(1)
            rows = math.prod(x[:-1])
            return 2 * rows * w[0] * w[1]
        if op == "matmul":
            a, b = sh(0), sh(1)
            if node.get("attrs", {}).get("transpose_b"):
                b = b[:-2] + [b[-1], b[-2]]
            if len(a) == 1:
                a = [1] + a
            if len(b) == 1:
                b = b + [1]
            m, k, n = a[-2], a[-1], b[-1]
            lead_a, lead_b = a[:-2], b[:-2]
            nlead = max(len(lead_a), len(lead_b))
            lead_a = [1] * (nlead - len(lead_a)) + lead_a
            lead_b = [1] * (nlead - len(lead_b)) + lead_b
            batch = math.prod(max(p, q) for p, q in zip(lead_a, lead_b))
            return 2 * batch * m * n * k
        if op == "conv":
            x, w = sh(0), sh(1)
            out = self.shape(node["outputs"][0], dims)
            groups = node.get("attrs", {}).get("groups", 1)
            kernel = math.prod(w[2:])
            if node.get("attrs", {}).get("transposed"):
                # W is [C, O/g, k...]: every input element meets O/g * kernel weights
                return 2 * math.prod(x) * w[1] * kernel
            return 2 * math.prod(out) * (x[1] // groups) * kernel
        if op == "attention":
            q, k, v = sh(0), sh(1), sh(2)
            b, h, lq, d = q[0], q[1], q[-2], q[-1]
            lk, dv = k[-2], v[-1]
            return 2 * b * h * lq * lk * (d + dv)
        return 0

    def matrix_flops(self, dims: Optional[Dict[str, int]] = None) -> int:
        """Sum of node_matrix_flops: what FlopCounterMode counts."""
        return sum(self.node_matrix_flops(n, dims) for n in self.nodes)

    def op_counts(self) -> Dict[str, int]:
        counts: Dict[str, int] = {}
        for n in self.nodes:
            counts[n["op"]] = counts.get(n["op"], 0) + 1
        return counts
