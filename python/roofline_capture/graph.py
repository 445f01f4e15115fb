"""The captured graph: a thin wrapper over the roofline-graph JSON (docs/graph-format.md), with a
reference implementation of the format's FLOP formulas for the matrix ops so that Python tests
can check a capture without the C++ tool."""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import Any, Dict, List, Optional, Tuple

FORMAT = "roofline-graph"
VERSION = 1

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/]))")


def parse_entry(text: str) -> List[Tuple[Fraction, Tuple[str, ...]]]:
    """A symbolic shape entry ("batch", "4*batch", "height*width/64+77") as its terms: (coefficient,
    dimension names) pairs whose sum is the entry (the grammar of docs/graph-format.md)."""
    tokens, pos = [], 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise ValueError(f"shape entry {text!r}: unexpected {text[pos]!r}")
        tokens.append(m.groups())
        pos = m.end()
    terms, i, sign = [], 0, 1
    while i < len(tokens):
        if tokens[i][2] in ("+", "-"):
            sign = -1 if tokens[i][2] == "-" else 1
            i += 1
        coef, names = Fraction(sign), []
        while True:
            if i >= len(tokens) or tokens[i][2]:
                raise ValueError(f"shape entry {text!r}: a term ends early")
            num, name, _ = tokens[i]
            if num is not None:
                coef *= int(num)
            else:
                names.append(name)
            i += 1
            if i < len(tokens) and tokens[i][2] == "*":
                i += 1
                continue
            break
        if i < len(tokens) and tokens[i][2] == "/":
            if i + 1 >= len(tokens) or tokens[i + 1][0] is None or int(tokens[i + 1][0]) == 0:
                raise ValueError(f"shape entry {text!r}: '/' needs an integer >= 1")
            coef /= int(tokens[i + 1][0])
            i += 2
        if i < len(tokens) and tokens[i][2] not in ("+", "-"):
            raise ValueError(f"shape entry {text!r}: unexpected {tokens[i]!r}")
        terms.append((coef, tuple(names)))
        sign = 1
    return terms


def format_entry(terms: List[Tuple[Fraction, Tuple[str, ...]]]) -> str:
    """The graph-file text of a sum of (coefficient, names) terms, constants last."""
    out = ""
    for coef, names in sorted(terms, key=lambda t: len(t[1]) == 0):
        if coef == 0:
            continue
        mag = abs(coef)
        out += "-" if coef < 0 else ("+" if out else "")
        body = [str(mag.numerator)] if (mag.numerator != 1 or not names) else []
        out += "*".join(body + list(names))
        if mag.denominator != 1:
            out += f"/{mag.denominator}"
    return out or "0"


def entry_limits(terms: List[Tuple[Fraction, Tuple[str, ...]]]) -> Optional[str]:
    """What of the graph-file limits on an entry (docs/graph-format.md: at most 32 terms of at
    most 8 names, coefficients up to 2^40, divisors up to 2^20 whose common multiple is at most
    2^40) a sum of terms breaks; None when it keeps them."""
    if len(terms) > 32:
        return f"has {len(terms)} terms (at most 32)"
    common = 1
    for coef, names in terms:
        if len(names) > 8:
            return f"has a term of {len(names)} dimensions (at most 8)"
        if abs(coef.numerator) > 2 ** 40 or coef.denominator > 2 ** 20:
            return f"has the coefficient {coef} (numerator up to 2^40, divisor up to 2^20)"
        common = math.lcm(common, coef.denominator)
    if common > 2 ** 40:
        return "has divisors whose common multiple exceeds 2^40"
    return None


def resolve_dim(d, dims: Dict[str, int]) -> int:
    """An entry of a tensor shape (int, "batch", "4*batch", "height*width/64+77") -> its value."""
    if isinstance(d, int):
        return d
    total = sum(coef * math.prod(int(dims[n]) for n in names) for coef, names in parse_entry(d))
    if total.denominator != 1:
        raise ValueError(f"shape entry {d!r} is not a whole number at {dims}")
    return int(total)


def dim_defaults(dims: Dict[str, Any]) -> Dict[str, Optional[int]]:
    """A graph's "dims" object with {"default": N, "multiple": M} entries read as N."""
    return {k: (v.get("default") if isinstance(v, dict) else v) for k, v in dims.items()}


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
        """Each symbolic dimension's default (None: none)."""
        return dim_defaults(self.data["dims"])

    @property
    def dim_multiples(self) -> Dict[str, int]:
        """The dimensions whose values must be multiples of a step, with the step."""
        return {k: v["multiple"] for k, v in self.data["dims"].items()
                if isinstance(v, dict) and v.get("multiple", 1) > 1}

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
