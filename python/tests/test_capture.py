"""Capture of small hand-made modules: exact nodes, shapes and flags.

Run: .venv-capture/bin/python python/tests/run.py  (or -m unittest discover -s python/tests)
"""

import json
import math
import os
import sys
import tempfile
import unittest
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from roofline_capture import CaptureError, Graph, capture  # noqa: E402
from roofline_capture.graph import parse_entry, resolve_dim  # noqa: E402


def ops(g):
    return [n["op"] for n in g.nodes if n["op"] != "view"]


def check_well_formed(test, g):
    """Every node reads known tensors, every tensor is written at most once, weights never."""
    d = g.to_dict()
    test.assertEqual(d["format"], "roofline-graph")
    test.assertEqual(d["version"], 1)
    written = set(d["inputs"])
    names = set()
    for n in d["nodes"]:
        test.assertNotIn(n["name"], names)
        names.add(n["name"])
        for t in n["inputs"]:
            test.assertIn(t, d["tensors"], n["name"])
        for t in n["outputs"]:
            test.assertIn(t, d["tensors"])
            test.assertNotIn(t, written, f"{t} written twice")
            test.assertFalse(d["tensors"][t].get("weight"), f"{n['name']} writes weight {t}")
            written.add(t)
    for t in d["outputs"]:
        test.assertIn(t, d["tensors"])
    dtypes = {"fp64", "fp32", "bf16", "fp16", "fp8", "int64", "int32", "int16", "int8", "uint8",
              "bool"}
    for name, t in d["tensors"].items():
        test.assertIn(t["dtype"], dtypes, name)
        for s in t["shape"]:
            if isinstance(s, int):
                continue
            for _, names in parse_entry(s):
                for n in names:
                    test.assertIn(n, d["dims"], s)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(32, 8, bias=False)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class CaptureSmallTest(unittest.TestCase):
    def test_mlp_linear_nodes_and_batch(self):
        g = capture(Mlp().eval(), (torch.randn(4, 16),), name="mlp", batch_dim=0)
        check_well_formed(self, g)
        self.assertEqual(g.name, "mlp")
        self.assertEqual(g.dims, {"batch": 4})
        self.assertEqual(ops(g), ["linear", "elementwise", "linear"])
        fc1, act, fc2 = [n for n in g.nodes if n["op"] != "view"]
        self.assertEqual(fc1["inputs"], ["input", "fc1.weight", "fc1.bias"])
        self.assertEqual(fc1["source"], "aten::addmm")
        self.assertEqual(fc1["module"], "fc1")
        self.assertEqual(act["module"], "act")
        self.assertEqual(act["attrs"], {"function": "relu", "flops_per_element": 1})
        self.assertEqual(fc2["inputs"][1:], ["fc2.weight"])       # no bias: mm
        self.assertEqual(fc2["source"], "aten::mm")
        self.assertEqual(g.tensors["input"]["shape"], ["batch", 16])
        self.assertEqual(g.tensors[fc1["outputs"][0]]["shape"], ["batch", 32])
        self.assertEqual(g.tensors["fc1.weight"], {"shape": [32, 16], "dtype": "fp32",
                                                   "weight": True})
        self.assertEqual(g.data["outputs"], fc2["outputs"])
        self.assertEqual(g.parameter_count(), 16 * 32 + 32 + 32 * 8)
        self.assertEqual(g.matrix_flops(), 2 * 4 * (16 * 32 + 32 * 8))
        self.assertEqual(g.matrix_flops({"batch": 64}), 2 * 64 * (16 * 32 + 32 * 8))
        # the transposes of the weights (aten.t) leave no node behind
        self.assertNotIn("aten::t", [n["source"] for n in g.nodes])

    def test_concrete_shapes_without_batch_dim(self):
        g = capture(Mlp().eval(), torch.randn(4, 16))
        self.assertEqual(g.dims, {})
        self.assertEqual(g.tensors["input"]["shape"], [4, 16])
        self.assertEqual(g.name, "Mlp")

    def test_conv_batchnorm_buffers(self):
        model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False),
                              nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                              nn.Conv2d(8, 8, 3, padding=(1, 2), dilation=(1, 2), groups=4),
                              nn.AdaptiveAvgPool2d(1)).eval()
        g = capture(model, (torch.randn(2, 3, 16, 16),), batch_dim=0)
        check_well_formed(self, g)
        self.assertEqual(ops(g), ["conv", "norm", "elementwise", "conv", "reduce"])
        conv0, bn, relu, conv3, pool = [n for n in g.nodes if n["op"] != "view"]
        self.assertEqual(conv0["attrs"], {"stride": [2, 2], "padding": [1, 1, 1, 1],
                                          "dilation": [1, 1], "groups": 1, "transposed": False})
        self.assertEqual(conv0["inputs"], ["input", "0.weight"])
        self.assertEqual(conv3["attrs"]["padding"], [1, 2, 1, 2])
        self.assertEqual(conv3["attrs"]["dilation"], [1, 2])
        self.assertEqual(conv3["attrs"]["groups"], 4)
        self.assertEqual(bn["attrs"], {"kind": "batch"})
        self.assertEqual(bn["inputs"][1:], ["1.weight", "1.bias", "1.running_mean",
                                            "1.running_var"])
        # running statistics are weights (read every pass) but not parameters
        self.assertEqual(g.tensors["1.running_mean"],
                         {"shape": [8], "dtype": "fp32", "weight": True, "parameter": False})
        self.assertEqual(g.tensors["1.num_batches_tracked"]["dtype"], "int64")
        self.assertFalse(g.tensors["1.num_batches_tracked"]["parameter"])
        # in-place relu_: a new tensor version, read by the next conv
        self.assertEqual(relu["source"], "aten::relu_")
        self.assertEqual(conv3["inputs"][0], relu["outputs"][0])
        self.assertNotEqual(relu["inputs"][0], relu["outputs"][0])
        self.assertEqual(pool["attrs"], {"function": "mean", "axes": [2, 3]})
        self.assertEqual(g.tensors[pool["outputs"][0]]["shape"], ["batch", 8, 1, 1])
        self.assertEqual(g.tensors[conv0["outputs"][0]]["shape"], ["batch", 8, 8, 8])
        self.assertEqual(g.parameter_count(), sum(p.numel() for p in model.parameters()))
        want = 2 * 2 * 8 * 8 * 8 * 3 * 9 + 2 * 2 * 8 * 8 * 8 * 2 * 9
        self.assertEqual(g.matrix_flops(), want)

    def test_transposed_conv_pool_resize(self):
        model = nn.Sequential(nn.MaxPool2d(2), nn.ConvTranspose2d(4, 6, 2, stride=2),
                              nn.Upsample(scale_factor=2, mode="nearest"),
                              nn.Upsample(scale_factor=2, mode="bilinear")).eval()
        g = capture(model, (torch.randn(1, 4, 8, 8),))
        check_well_formed(self, g)
        self.assertEqual(ops(g), ["pool", "conv", "resize", "resize"])
        pool, deconv, near, lin = [n for n in g.nodes if n["op"] != "view"]
        self.assertEqual(pool["attrs"], {"kind": "max", "kernel": [2, 2], "stride": [2, 2],
                                         "padding": [0, 0, 0, 0], "global": False})
        self.assertTrue(deconv["attrs"]["transposed"])
        self.assertEqual(deconv["attrs"]["output_padding"], [0, 0])
        self.assertEqual(near["attrs"], {"mode": "nearest"})
        self.assertEqual(lin["attrs"], {"mode": "linear"})
        # transposed conv: every input element meets O/g * kh * kw weights
        self.assertEqual(g.node_matrix_flops(deconv), 2 * 4 * 4 * 4 * 6 * 2 * 2)

    def test_attention_heads_folded_into_batch(self):
        class Attn(nn.Module):
            def __init__(self):
                super().__init__()
                self.qkv = nn.Linear(32, 96)
                self.norm = nn.LayerNorm(32)

            def forward(self, x):
                b, l, _ = x.shape
                q, k, v = self.qkv(self.norm(x)).view(b, l, 3, 4, 8).permute(2, 0, 3, 1, 4)
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                s = torch.softmax(q.reshape(b * 4, l, 8) @ k.reshape(b * 4, l, 8).transpose(1, 2),
                                  dim=-1)
                return o, s

        g = capture(Attn().eval(), (torch.randn(2, 5, 32),), batch_dim=0)
        check_well_formed(self, g)
        self.assertEqual(ops(g), ["norm", "linear", "attention", "copy", "copy", "matmul",
                                  "softmax"])
        norm, qkv, attn, _, _, bmm, sm = [n for n in g.nodes if n["op"] != "view"]
        self.assertEqual(norm["attrs"], {"kind": "layer", "normalized_dims": 1})
        self.assertEqual(norm["inputs"], ["input", "norm.weight", "norm.bias"])
        self.assertEqual(attn["attrs"], {"causal": True})
        self.assertEqual([g.tensors[t]["shape"] for t in attn["inputs"]],
                         [["batch", 4, 5, 8]] * 3)
        self.assertEqual(bmm["source"], "aten::bmm")
        self.assertEqual(g.tensors[bmm["outputs"][0]]["shape"], ["4*batch", 5, 5])
        self.assertEqual(sm["attrs"], {"axis": 2})
        # linear over a 3-D input: rows = batch * 5
        self.assertEqual(g.node_matrix_flops(qkv), 2 * 2 * 5 * 96 * 32)
        self.assertEqual(g.node_matrix_flops(attn), 2 * 2 * 4 * 5 * 5 * (8 + 8))
        self.assertEqual(g.node_matrix_flops(bmm, {"batch": 3}), 2 * 12 * 5 * 5 * 8)

    def test_meta_device_records_the_fused_attention(self):
        # On the meta device SDPA would take its math path (bmm, softmax, bmm); the capture
        # records the fused kernel a CPU runs, so a memory-free capture has the same nodes as
        # a real one, and FlopCounterMode (math backend) counts the same matrix FLOPs.
        from roofline_capture.oracles import flop_counter_total

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.qkv = nn.Linear(32, 96)
                self.mha = nn.MultiheadAttention(32, 4, batch_first=True)

            def forward(self, x, mask):
                b, l, _ = x.shape
                q, k, v = self.qkv(x).view(b, l, 3, 4, 8).permute(2, 0, 3, 1, 4)
                o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
                y = o.transpose(1, 2).reshape(b, l, 32)
                return self.mha(y, y, y, need_weights=False)[0]

        real = capture(Block().eval(), (torch.randn(2, 6, 32), torch.zeros(6, 6)), batch_dim=0)
        with torch.device("meta"):
            model = Block().eval()
            args = (torch.randn(2, 6, 32), torch.zeros(6, 6))
        fake = capture(model, args, batch_dim=0)
        self.assertEqual(ops(fake), ops(real))
        self.assertEqual(ops(fake).count("attention"), 2)
        self.assertEqual(fake.matrix_flops({"batch": 2}), flop_counter_total(model, args))
        self.assertEqual(fake.parameter_count(), real.parameter_count())

    def test_meta_capture_of_a_forward_that_needs_values(self):
        from roofline_capture import CaptureError

        class Branchy(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(4, 4))

            def forward(self, x):
                y = self.body(x)
                return y * 2 if y.sum() > 0 else y

        class Select(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = Mlp()

            def forward(self, x):
                y = self.head(x)
                return y[torch.nonzero(y > 0, as_tuple=True)]

        for cls, op in ((Branchy, "aten::_local_scalar_dense"), (Select, "aten::nonzero")):
            with self.subTest(cls.__name__):
                with torch.device("meta"):
                    model, x = cls().eval(), torch.randn(2, 4 if cls is Branchy else 16)
                with self.assertRaises(CaptureError) as ctx:
                    capture(model, (x,))
                message = str(ctx.exception)
                self.assertEqual(len(message.splitlines()), 1)
                self.assertIn(op, message)
                self.assertIn("meta device", message)
                self.assertLess(len(message), 500)
                # The same forward on real tensors captures.
                real = capture(cls().eval(), (torch.ones(2, 4 if cls is Branchy else 16),))
                self.assertTrue(real.nodes)
        with self.assertRaises(TypeError):
            capture(lambda x: x, (torch.randn(2),))
        # A shape bug on meta tensors stays the shape error it is, not "needs tensor values".
        with torch.device("meta"):
            bad, x = nn.Linear(4, 4), torch.randn(2, 5)
        with self.assertRaises(RuntimeError) as ctx:
            capture(bad.eval(), (x,))
        self.assertNotIsInstance(ctx.exception, CaptureError)

    def test_weight_used_untransposed_is_a_matmul(self):
        class XW(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(16, 8))

            def forward(self, x):
                return x @ self.w

        g = capture(XW(), (torch.randn(3, 16),))
        mm = [n for n in g.nodes if n["op"] == "matmul"]
        self.assertEqual(len(mm), 1)
        self.assertEqual(mm[0]["inputs"], ["input", "w"])
        self.assertTrue(g.tensors["w"]["weight"])
        self.assertEqual(g.matrix_flops(), 2 * 3 * 16 * 8)

    def test_embedding_elementwise_table_unknown(self):
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(100, 16)

            def forward(self, ids):
                h = self.emb(ids)
                h = F.gelu(h, approximate="tanh") + torch.sigmoid(h) * F.silu(h)
                return torch.topk(h, 2, dim=-1).values

        g = capture(M().eval(), (torch.randint(0, 100, (2, 7)),), batch_dim=0)
        check_well_formed(self, g)
        emb = g.nodes[0]
        self.assertEqual(emb["op"], "embedding")
        self.assertEqual(emb["inputs"], ["emb.weight", "input"])
        self.assertEqual(g.tensors["input"]["dtype"], "int64")
        fpe = {n["attrs"]["function"]: n["attrs"]["flops_per_element"]
               for n in g.nodes if n["op"] == "elementwise"}
        self.assertEqual(fpe, {"gelu": 9, "sigmoid": 4, "silu": 5, "mul": 1, "add": 1})
        unknown = [n for n in g.nodes if n["op"] == "unknown"]
        self.assertEqual([n["attrs"] for n in unknown], [{"op": "aten::topk"}])
        self.assertTrue(any("aten::topk" in w for w in g.warnings))
        self.assertEqual(g.data["notes"], ["capture: ops mapped to unknown: aten::topk x1"])

    def test_shared_module_gets_the_calling_path(self):
        act = nn.SiLU()

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)
                self.act = act

            def forward(self, x):
                return self.act(self.lin(x))

        model = nn.Sequential(Block(), Block()).eval()
        g = capture(model, (torch.randn(1, 4),))
        silu = [n["module"] for n in g.nodes if n["op"] == "elementwise"]
        self.assertEqual(silu, ["0.act", "1.act"])
        self.assertEqual([n["module"] for n in g.nodes if n["op"] == "linear"],
                         ["0.lin", "1.lin"])

    def test_tied_weights_counted_once(self):
        class Tied(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
                self.head = nn.Linear(4, 10, bias=False)
                self.head.weight = self.emb.weight

            def forward(self, ids):
                return self.head(self.emb(ids))

        model = Tied().eval()
        g = capture(model, (torch.tensor([[1, 2, 3]]),))
        self.assertEqual(g.parameter_count(), 40)
        lin = [n for n in g.nodes if n["op"] == "linear"][0]
        self.assertEqual(lin["inputs"][1], "emb.weight")

    def test_save_and_load(self):
        g = capture(Mlp().eval(), (torch.randn(2, 16),), batch_dim=0)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "g.json")
            g.save(path)
            with open(path) as f:
                text = f.read()
            self.assertNotIn("\n ", text)                 # compact by default
            data = json.loads(text)
            self.assertEqual(data["producer"].split()[0], "roofline_capture")
            self.assertIn("torch " + torch.__version__, data["producer"])
            self.assertEqual(Graph.load(path).to_dict(), g.to_dict())

    def test_training_mode_warns(self):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            capture(Mlp().train(), (torch.randn(2, 16),))
        self.assertTrue(any("training mode" in str(x.message) for x in w))

    def test_dtypes(self):
        model = Mlp().to(torch.bfloat16).eval()
        g = capture(model, (torch.randn(2, 16, dtype=torch.bfloat16),))
        self.assertEqual(g.tensors["fc1.weight"]["dtype"], "bf16")
        self.assertEqual(g.tensors["input"]["dtype"], "bf16")
        self.assertTrue(all(t["dtype"] == "bf16" for t in g.tensors.values()))
        self.assertEqual(math.prod(g.tensors["fc1.weight"]["shape"]), 512)


class _UNetLike(nn.Module):
    """Two stride-2 convolutions, self-attention over the pixels of the smallest map with a
    77-token context appended, and an upsampling path with a skip connection."""

    def __init__(self):
        super().__init__()
        self.down1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.down2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.ctx = nn.Parameter(torch.randn(77, 16))
        self.qkv = nn.Linear(16, 48)
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.out = nn.Conv2d(16, 3, 3, padding=1)

    def forward(self, x):
        h1 = F.relu(self.down1(x))
        h2 = F.relu(self.down2(h1))
        b, c, hh, ww = h2.shape
        tokens = torch.cat([h2.flatten(2).transpose(1, 2), self.ctx.expand(b, 77, c)], 1)
        q, k, v = self.qkv(tokens).view(b, -1, 3, 2, 8).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, -1, c)
        h2 = h2 + a[:, : hh * ww].transpose(1, 2).reshape(b, c, hh, ww)
        return self.out(torch.cat([self.up(h2), h1], 1))


class CaptureDimsTest(unittest.TestCase):
    """Several symbolic dimensions, fitted from captures at other sizes."""

    @staticmethod
    def image(batch, height, width):
        return (torch.randn(batch, 3, height, width),), {}

    def test_image_sides_are_polynomials_checked_against_pytorch(self):
        from roofline_capture.oracles import flop_counter_total
        m = _UNetLike().eval()
        g = capture(m, self.image, dims={"batch": 2, "height": (16, 4), "width": (24, 4)})
        check_well_formed(self, g)
        self.assertEqual(g.dims, {"batch": 2, "height": 16, "width": 24})
        self.assertEqual(g.dim_multiples, {"height": 4, "width": 4})
        entries = {s for t in g.tensors.values() for s in t["shape"] if isinstance(s, str)}
        # The pixels of the 4x smaller map, with the 77 context tokens appended.
        self.assertIn("height*width/16+77", entries)
        self.assertIn("height/4", entries)
        self.assertIn("width/2", entries)
        # FlopCounterMode on real runs at sizes the capture never ran (the fit used 16..24 x
        # 24..32 and batch 2..4).
        for b, h, w in [(1, 64, 40), (3, 8, 100), (5, 132, 4)]:
            args, _ = self.image(b, h, w)
            with torch.no_grad():
                want = flop_counter_total(m, args)
                out = m(*args)
            self.assertEqual(g.matrix_flops({"batch": b, "height": h, "width": w}), want)
            self.assertEqual(g.shape(g.data["outputs"][0], {"batch": b, "height": h, "width": w}),
                             list(out.shape))

    def test_sequence_and_frames(self):
        conv = nn.Conv3d(4, 8, (3, 3, 3), padding=1).eval()

        def video(frames, seq):
            return (torch.randn(1, 4, frames, seq, 6),), {}
        g = capture(conv, video, dims={"frames": 5, "seq": 7})
        out = g.tensors[g.data["outputs"][0]]["shape"]
        self.assertEqual(out, [1, 8, "frames", "seq", 6])
        self.assertEqual(resolve_dim(out[2], {"frames": 16, "seq": 3}), 16)

    def test_a_size_not_affine_in_a_dimension_is_one_clear_error(self):
        class Square(nn.Module):
            def forward(self, x):
                v = x.flatten()
                return torch.outer(v, v).flatten() * 2

        with self.assertRaises(CaptureError) as ctx:
            capture(Square().eval(), lambda n: ((torch.randn(n),), {}), dims={"n": 4})
        text = str(ctx.exception)
        self.assertEqual(len(text.splitlines()), 1)
        self.assertIn("not affine", text)
        self.assertIn("aten::", text)

    def test_curvature_that_cancels_on_the_diagonal_is_caught(self):
        # h*h - w*w + 100 is 100 + 17*(h - w) along the diagonal h = w; the runs with one
        # dimension two steps up alone catch it.
        class Curved(nn.Module):
            def forward(self, x):
                h, w = x.shape
                return torch.zeros(h * h - w * w + 100) + 1

        with self.assertRaises(CaptureError) as ctx:
            capture(Curved().eval(), lambda h, w: ((torch.randn(h, w),), {}),
                    dims={"h": 8, "w": 8})
        self.assertIn("at h=10, w=8", str(ctx.exception))

    def test_a_forward_that_branches_on_the_sizes_is_refused(self):
        class Branch(nn.Module):
            def __init__(self):
                super().__init__()
                self.small, self.large = nn.Linear(4, 4), nn.Linear(4, 4)

            def forward(self, x):
                return self.small(x) if x.shape[0] < 9 else self.large(x)

        with self.assertRaises(CaptureError) as ctx:
            capture(Branch().eval(), lambda n: ((torch.randn(n, 4),), {}), dims={"n": 8})
        self.assertIn("branches on the sizes", str(ctx.exception))
        self.assertIn("in module 'large', the run at n=8 0", str(ctx.exception))

    def test_bad_dims(self):
        m = nn.Linear(4, 4).eval()
        with self.assertRaises(ValueError):
            capture(m, lambda batch: ((torch.randn(batch, 4),), {}), dims={"batch": (6, 4)})
        with self.assertRaises(ValueError):
            capture(m, lambda batch: ((torch.randn(batch, 4),), {}), dims={"bat ch": 1})
        with self.assertRaises(TypeError):
            capture(m, lambda batch: (torch.randn(batch, 4),), dims={"batch": 2})
        with self.assertRaises(TypeError):
            capture(m, (torch.randn(2, 4),), dims={"batch": 2})


if __name__ == "__main__":
    unittest.main()
