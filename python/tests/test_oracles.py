"""The issue's oracles on real networks (random weights, batch 1, CPU):

* torchvision ResNet-50 at 224x224: 25,557,032 parameters and 4.09 G multiply-accumulates, i.e.
  ~8.18 GFLOP (torchvision's model documentation, ResNet50_Weights.IMAGENET1K_V1).
* torchvision ViT-B/16: 86,567,656 parameters, 17.56 G multiply-accumulates (same source).
* ResNet-50, ViT-B/16 and a small diffusers UNet2DConditionModel: the matrix FLOPs equal
  torch.utils.flop_counter.FlopCounterMode's total for the same inputs (FlopCounterMode counts
  matmuls, convolutions and attention at 2 FLOP per multiply-accumulate, biases not counted;
  attention is counted with SDPA's math backend: see roofline_capture.oracles.flop_counter_total).

Each is checked on the captured graph in Python, then with the C++ tool when the binary
(ROOFLINE_BIN, else build/roofline) reads graphs: `roofline model G.json --format json`, and for
the ONNX path `roofline model X.onnx --dim batch=1 --format json` on torch.onnx.export's file
(TorchScript exporter, opset 17). The tool's checks are skipped, with the reason, when the
binary cannot read graphs or was built without ONNX, unless ROOFLINE_CAPTURE_REQUIRE_CLI=1.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

import torch  # noqa: E402

from roofline_capture import capture, oracles  # noqa: E402
from test_capture import check_well_formed  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
REQUIRE_CLI = os.environ.get("ROOFLINE_CAPTURE_REQUIRE_CLI") == "1"
HW = "h100-sxm"


def roofline_bin():
    path = os.environ.get("ROOFLINE_BIN") or os.path.join(REPO, "build", "roofline")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def run_tool(*args):
    exe = roofline_bin()
    p = subprocess.run([exe, "model", *args, "--hw", HW, "--format", "json"],
                       capture_output=True, text=True, timeout=600)
    return p.returncode, p.stdout, p.stderr


_graph_probe = None


def graph_support():
    """(ok, reason): whether the binary analyses a small captured graph."""
    global _graph_probe
    if _graph_probe is None:
        if roofline_bin() is None:
            _graph_probe = (False, "no roofline binary (set ROOFLINE_BIN or build build/roofline)")
        else:
            from torch import nn
            g = capture(nn.Sequential(nn.Linear(8, 8), nn.ReLU()).eval(), (torch.randn(2, 8),),
                        batch_dim=0)
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "probe.json")
                g.save(path)
                rc, out, err = run_tool(path)
            if rc == 0:
                _graph_probe = (True, "")
            else:
                first = (err.strip().splitlines() or [""])[0][:160]
                _graph_probe = (False, f"{roofline_bin()} does not read graph files yet: "
                                f"exit {rc}: {first}")
    return _graph_probe


_onnx_probe = None


def onnx_support():
    """(ok, reason): whether the binary reads ONNX files, judged from its error on a file that
    is not ONNX (a binary that reads ONNX complains about the file, not about ONNX support)."""
    global _onnx_probe
    if _onnx_probe is None:
        if roofline_bin() is None:
            _onnx_probe = (False, "no roofline binary (set ROOFLINE_BIN or build build/roofline)")
        else:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "probe.onnx")
                with open(path, "wb") as f:
                    f.write(b"not an onnx file")
                rc, out, err = run_tool(path, "--dim", "batch=1")
            first = (err.strip().splitlines() or [""])[0][:200]
            if "without the ONNX" in err:
                _onnx_probe = (False, f"{roofline_bin()} was built without ONNX: {first}")
            elif "unknown option '--dim'" in err or "architectures" in err:
                _onnx_probe = (False, f"{roofline_bin()} does not read ONNX files yet: {first}")
            else:
                _onnx_probe = (True, "")
    return _onnx_probe


def skip_or_fail(test, reason):
    if REQUIRE_CLI:
        test.fail(reason + " (ROOFLINE_CAPTURE_REQUIRE_CLI=1)")
    test.skipTest(reason)


class _OracleBase:
    NAME = ""

    @classmethod
    def setUpClass(cls):
        cls.model, cls.args, cls.kwargs, cls.opts = oracles.build(cls.NAME)
        cls.graph = capture(cls.model, cls.args, cls.kwargs, name=cls.NAME, batch_dim=0,
                            **cls.opts)
        cls.counter_flops = oracles.flop_counter_total(cls.model, cls.args, cls.kwargs)
        cls.params = oracles.parameter_total(cls.model)

    def test_capture_matches_flop_counter(self):
        self.assertEqual(self.graph.matrix_flops(), self.counter_flops)
        self.assertEqual(self.graph.parameter_count(), self.params)
        self.assertEqual(self.graph.dims, {"batch": 1})
        self.assertEqual([w for w in self.graph.warnings if "unknown" not in w], [])
        self.assertNotIn("unknown", self.graph.op_counts())
        check_well_formed(self, self.graph)

    def test_batch_scaling(self):
        # every matrix op scales with the batch: at batch 8 the count is 8 times batch 1's
        self.assertEqual(self.graph.matrix_flops({"batch": 8}), 8 * self.counter_flops)

    def _check_tool_json(self, out, what):
        doc = json.loads(out)
        what = (f"{what}: uncosted {doc['network']['uncosted'].get('by_op')}, "
                f"notes {doc.get('notes')}")
        self.assertEqual(doc["network"]["parameters"], self.params, what)
        self.assertEqual(round(doc["totals"]["matrix_flops"]), self.counter_flops, what)
        self.assertGreaterEqual(doc["totals"]["flops"], doc["totals"]["matrix_flops"], what)
        return doc

    def test_tool_on_captured_graph(self):
        ok, reason = graph_support()
        if not ok:
            skip_or_fail(self, reason)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, self.NAME + ".json")
            self.graph.save(path)
            rc, out, err = run_tool(path)
            self.assertEqual(rc, 0, err)
            self._check_tool_json(out, "captured graph")
            rc, out8, err = run_tool(path, "--dim", "batch=8")
            self.assertEqual(rc, 0, err)
            self.assertEqual(round(json.loads(out8)["totals"]["matrix_flops"]),
                             8 * self.counter_flops)

    def test_tool_on_onnx_export(self):
        ok, reason = onnx_support()
        if not ok:
            skip_or_fail(self, reason)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, self.NAME + ".onnx")
            oracles.export_onnx(self.model, self.args, self.kwargs, path,
                                self.opts["input_names"])
            rc, out, err = run_tool(path, "--dim", "batch=1")
            self.assertEqual(rc, 0, err)
            # ONNX Gemm/Conv biases are not matrix FLOPs either (docs/graph-format.md)
            doc = self._check_tool_json(out, "ONNX export")
            # The export's batch axis is symbolic (shape chains computed at run time): every
            # node is costed, and the matrix FLOPs scale with the bound batch.
            self.assertEqual(doc["network"]["uncosted"]["count"], 0,
                             doc["network"]["uncosted"].get("by_op"))
            rc, out4, err = run_tool(path, "--dim", "batch=4")
            self.assertEqual(rc, 0, err)
            self.assertEqual(round(json.loads(out4)["totals"]["matrix_flops"]),
                             4 * self.counter_flops)


class ResNet50Test(_OracleBase, unittest.TestCase):
    NAME = "resnet50"

    def test_torchvision_documented_figures(self):
        docs = oracles.TORCHVISION_DOCS["resnet50"]
        self.assertEqual(self.params, docs["parameters"])
        self.assertEqual(self.graph.parameter_count(), 25_557_032)
        # 4.09 G multiply-accumulates = 8.18 GFLOP
        self.assertEqual(round(self.graph.matrix_flops() / 2e9, 2), docs["gmacs"])
        self.assertAlmostEqual(self.graph.matrix_flops() / 1e9, 8.18, delta=0.01)
        ops = self.graph.op_counts()
        self.assertEqual(ops["conv"], 53)
        self.assertEqual(ops["norm"], 53)
        self.assertEqual(ops["linear"], 1)

    def test_meta_device_gives_the_same_graph(self):
        # a model built on the meta device (no memory, no arithmetic) captures the same graph
        import torchvision
        with torch.device("meta"):
            model = torchvision.models.resnet50(weights=None).eval()
        x = torch.randn(1, 3, 224, 224, device="meta")
        g = capture(model, (x,), name=self.NAME, batch_dim=0, **self.opts)
        self.assertEqual(g.to_dict(), self.graph.to_dict())

    def test_buffers_are_weights_not_parameters(self):
        t = self.graph.tensors["bn1.running_var"]
        self.assertTrue(t["weight"])
        self.assertFalse(t["parameter"])
        self.assertEqual(self.graph.tensors["input"]["shape"], ["batch", 3, 224, 224])


class ViTB16Test(_OracleBase, unittest.TestCase):
    NAME = "vit_b_16"

    def test_torchvision_documented_figures(self):
        docs = oracles.TORCHVISION_DOCS["vit_b_16"]
        self.assertEqual(self.params, docs["parameters"])
        self.assertEqual(round(self.graph.matrix_flops() / 2e9, 2), docs["gmacs"])
        ops = self.graph.op_counts()
        self.assertEqual(ops["attention"], 12)
        self.assertEqual(ops["linear"], 12 * 4 + 1)


class UNetSmallTest(_OracleBase, unittest.TestCase):
    NAME = "unet_small"

    def test_structure(self):
        ops = self.graph.op_counts()
        self.assertEqual(ops["attention"], 8)     # self- and cross-attention in 4 transformers
        cross = [n for n in self.graph.nodes if n["op"] == "attention"
                 and n["module"].endswith("attn2")]
        self.assertEqual(len(cross), 4)
        k = self.graph.tensors[cross[0]["inputs"][1]]["shape"]
        self.assertEqual(k[0], "batch")
        self.assertEqual(k[2], 77)                 # keys from encoder_hidden_states
        self.assertEqual(self.graph.data["inputs"], ["sample", "timestep",
                                                     "encoder_hidden_states"])


if __name__ == "__main__":
    unittest.main()
