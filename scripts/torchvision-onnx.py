#!/usr/bin/env python3
"""Exports every classification model torchvision.models lists to ONNX (random weights, the
TorchScript exporter, opset 17, a dynamic batch axis: roofline_capture.oracles.export_onnx) and
costs each with `roofline model X.onnx --dim batch=1`: nodes, uncosted nodes, and the matrix
FLOPs against torch.utils.flop_counter.FlopCounterMode on the same input (SDPA's math backend:
roofline_capture.oracles.flop_counter_total). Prints one table row per model as it goes and a
summary; exit status 1 when a model is left partly uncosted or its FLOPs differ.

    .venv-capture/bin/python scripts/torchvision-onnx.py [--roofline build/roofline]
        [--only resnet50 swin_t ...] [--json results.json]

Input: 1x3x224x224 (inception_v3: 299x299). Convention: work the exporter folds into constants
(it reads only weights: Swin V2's position-bias MLP, `cpb_mlp`) is subtracted from
FlopCounterMode's count. CI runs a handful (--only); the whole list takes about an hour on 2
cores.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from roofline_capture.oracles import export_onnx, flop_counter_total  # noqa: E402


FOLDED_AT_EXPORT = ("cpb_mlp",)  # module names whose work reads only weights and constants


def folded_flops(model, args) -> int:
    """FlopCounterMode's count inside modules the exporter folds to constants."""
    if not any(name.endswith(FOLDED_AT_EXPORT) for name, _ in model.named_modules()):
        return 0
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), sdpa_kernel(SDPBackend.MATH), counter:
        model(*args)
    return int(sum(sum(v.values()) for k, v in counter.get_flop_counts().items()
                   if k.endswith(FOLDED_AT_EXPORT)))


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--roofline", default=os.path.join(ROOT, "build/roofline"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--json", help="write every row as JSON here")
    a = ap.parse_args(argv)
    names = torchvision.models.list_models(module=torchvision.models)
    if a.only:
        unknown = sorted(set(a.only) - set(names))
        if unknown:
            ap.error(f"not classification models of torchvision {torchvision.__version__}: "
                     f"{', '.join(unknown)}")
        names = [n for n in names if n in a.only]
    torch.manual_seed(0)
    rows, bad = [], 0
    print(f"{'model':22} {'params':>12} {'nodes':>6} {'uncosted':>8} {'matrix GFLOP':>13} "
          f"{'FlopCounterMode':>15}  result")
    for name in names:
        t0 = time.time()
        model = torchvision.models.get_model(name, weights=None).eval()
        side = 299 if name == "inception_v3" else 224
        x = torch.randn(1, 3, side, side)
        row = {"model": name, "input": [1, 3, side, side],
               "parameters": sum(p.numel() for p in model.parameters())}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, name + ".onnx")
            try:
                export_onnx(model, (x,), {}, path, ["input"])
            except Exception as e:  # noqa: BLE001  (reported in the table)
                row["error"] = f"export: {str(e).splitlines()[0][:200]}"
            if "error" not in row:
                p = subprocess.run([a.roofline, "model", path, "--dim", "batch=1", "--format",
                                    "json"], capture_output=True, text=True)
                if p.returncode != 0:
                    row["error"] = "roofline: " + p.stderr.strip()
                else:
                    j = json.loads(p.stdout)
                    row["nodes"] = j["network"]["nodes"]
                    row["uncosted"] = j["network"]["uncosted"]["count"]
                    row["uncosted_ops"] = j["network"]["uncosted"]["by_op"]
                    row["matrix_flops"] = j["totals"]["matrix_flops"]
        row["flop_counter_mode"] = flop_counter_total(model, (x,))
        # Convention: the exporter's constant folding computes what reads only weights and
        # constants once, at export (Swin V2's continuous position bias MLP, cpb_mlp), so it is
        # not in the graph; FlopCounterMode counts it in every pass.
        folded = folded_flops(model, (x,))
        if folded:
            row["folded_at_export"] = folded
            row["flop_counter_mode"] -= folded
        row["seconds"] = round(time.time() - t0, 1)
        ok = "error" not in row and row["uncosted"] == 0 and \
            row["matrix_flops"] == row["flop_counter_mode"]
        bad += not ok
        rows.append(row)
        result = "ok" if ok else row.get("error") or (
            f"uncosted {row['uncosted_ops']}" if row["uncosted"] else "FLOPs differ")
        print(f"{name:22} {row['parameters']:>12,} {row.get('nodes', '-'):>6} "
              f"{row.get('uncosted', '-'):>8} {row.get('matrix_flops', 0) / 1e9:>13.3f} "
              f"{row['flop_counter_mode'] / 1e9:>15.3f}  {result}", flush=True)
        del model
    print(f"{len(rows) - bad} of {len(rows)} models: every node costed and matrix FLOPs equal to "
          f"FlopCounterMode's")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
