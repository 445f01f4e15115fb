"""Tests of the Python package `roofline`: the API gives the CLI's numbers (the same JSON and
the same text, compared with build/roofline), keywords become the CLI's options, bad input
raises RooflineError with the CLI's one line, results convert to dicts, DataFrames and SVG, and
profiles and captures go through from live PyTorch objects."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

import roofline

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Absolute now: some tests change the working directory.
CLI = os.path.abspath(os.environ["ROOFLINE_BIN"]) if os.environ.get("ROOFLINE_BIN") else None
RESNET = os.path.join(ROOT, "tests/fixtures/captured/resnet50.json")
ONNX_CNN = os.path.join(ROOT, "tests/fixtures/onnx/small_cnn.onnx")
PROFILES = os.path.join(ROOT, "tests/fixtures/profiles")

try:
    import pandas  # noqa: F401
    HAVE_PANDAS = True
except ImportError:
    HAVE_PANDAS = False
try:
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def cli(*args):
    """(status, stdout, stderr) of the CLI binary, run from the repository root."""
    p = subprocess.run([CLI, *args], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    return p.returncode, p.stdout, p.stderr


def in_root(fn, *args, **kw):
    """Runs fn with the repository root as working directory (relative paths from there)."""
    old = os.getcwd()
    os.chdir(ROOT)
    try:
        return fn(*args, **kw)
    finally:
        os.chdir(old)


def fixture(relative):
    return os.path.join(ROOT, relative)


@unittest.skipUnless(CLI, "ROOFLINE_BIN (the CLI binary) not given: no CLI-parity tests")
class SameNumbersAsTheCli(unittest.TestCase):
    """The package and the CLI print the same numbers for the same input: JSON equal field by
    field, and str(result) equal to the CLI's table, byte for byte."""

    def check(self, result, cli_args):
        self.assertEqual(result.argv, list(cli_args))
        status, out, err = cli(*cli_args, "--format", "json")
        self.assertEqual(status, 0, err)
        self.assertEqual(result.to_dict(), json.loads(out))
        status, text, err = cli(*cli_args)
        self.assertEqual(status, 0, err)
        self.assertEqual(str(result), text)

    def test_llm_model_with_workload_keywords(self):
        r = in_root(roofline.model, "llama-3-8b", hw="h100-sxm", batch=8, prompt=2048,
                    kv_dtype="fp8", efficiency={"matmul": 0.6}, runtime="cuda-graph")
        self.check(r, ["model", "llama-3-8b", "--hw", "h100-sxm", "--batch", "8", "--prompt",
                       "2048", "--kv-dtype", "fp8", "--runtime", "cuda-graph", "--efficiency",
                       "matmul=0.6"])

    def test_int4_model_with_a_measured_weight_kernel(self):
        r = in_root(roofline.model, "llama-3-8b", hw="h100-sxm", phase="decode",
                    weight_dtype="int4", weight_kernel="tinygemm", runtime="compiled")
        self.check(r, ["model", "llama-3-8b", "--hw", "h100-sxm", "--phase", "decode",
                       "--weight-dtype", "int4", "--runtime", "compiled", "--weight-kernel",
                       "tinygemm"])
        self.assertEqual(r.phases[0].expected.setup.weight_kernel.name, "tinygemm")
        self.assertTrue(any(k.expected.to_dict().get("weight_kernel_fixed_s", 0) > 0
                            for k in r.phases[0].kernels))

    def test_int8_batched_decode_runs_the_regime_of_its_rows(self):
        r = in_root(roofline.model, "llama-3-8b", hw="h100-sxm", phase="decode", batch=8,
                    weight_dtype="int8", weight_kernel="inductor-int8", runtime="compiled")
        self.check(r, ["model", "llama-3-8b", "--hw", "h100-sxm", "--phase", "decode",
                       "--batch", "8", "--weight-dtype", "int8", "--runtime", "compiled",
                       "--weight-kernel", "inductor-int8"])
        wk = r.phases[0].expected.setup.weight_kernel
        self.assertEqual(wk.scales, "channel")
        # Eight rows: the 2-16-row regime, for every int8 projection (7 a layer); none at 1 row.
        self.assertEqual([g.kernels_run_as_it for g in wk.regimes], [0, 7])
        self.assertEqual((wk.regimes[1].min_rows, wk.regimes[1].max_rows), (2, 16))

    def test_quantizer_storage_options_reach_the_workload_and_the_bytes(self):
        # torchao's int4wo-64 on Llama-3-8B: its README's 763.33 GB/s at 180.80 tok/s is
        # 4.222 GB a step, embedding left out; only an int4 head with bf16 zeros counts that.
        r = in_root(roofline.model, "llama-3-8b", hw="a100-sxm-80gb", phase="decode",
                    prompt=5, context=105, weight_dtype="int4", group_size=64,
                    zero_dtype="bf16", quantize_lm_head=True)
        self.check(r, ["model", "llama-3-8b", "--hw", "a100-sxm-80gb", "--phase", "decode",
                       "--prompt", "5", "--context", "105", "--weight-dtype", "int4",
                       "--group-size", "64", "--zero-dtype", "bf16", "--quantize-lm-head"])
        self.assertEqual((r.workload["zero_dtype"], r.workload["quantize_lm_head"]),
                         ("bf16", True))
        embedding = 128256 * 4096 * 2
        self.assertAlmostEqual((r.memory["weights_bytes"] - embedding) / 4.222e9, 1.0,
                               delta=0.005)

    def test_moe_model_with_tensor_parallelism(self):
        r = in_root(roofline.model, "mixtral-8x7b", hw="a100-sxm-80gb", tp=2, phase="decode",
                    batch=16)
        self.check(r, ["model", "mixtral-8x7b", "--hw", "a100-sxm-80gb", "--phase", "decode",
                       "--batch", "16", "--tp", "2"])

    def test_graph_with_dims_and_dtype(self):
        # A relative path is made absolute: the result's table, read later from elsewhere,
        # still finds the file.
        r = in_root(roofline.model, "tests/fixtures/captured/resnet50.json", hw="h100-sxm",
                    dtype="bf16", dims={"batch": 32})
        old = os.getcwd()
        with tempfile.TemporaryDirectory() as elsewhere:
            os.chdir(elsewhere)
            try:
                self.check(r, ["model", RESNET, "--hw", "h100-sxm", "--dtype", "bf16", "--dim",
                               "batch=32"])
            finally:
                os.chdir(old)

    def test_onnx_model(self):
        r = roofline.model(ONNX_CNN, hw="l4", tf32=True, dims={"batch": 8})
        self.check(r, ["model", ONNX_CNN, "--hw", "l4", "--dim", "batch=8", "--tf32"])
        # tf32=False keeps every product in FP32; None (the default) does what PyTorch does.
        r = roofline.model(ONNX_CNN, hw="l4", tf32=False, dims={"batch": 8})
        self.check(r, ["model", ONNX_CNN, "--hw", "l4", "--dim", "batch=8", "--tf32=false"])

    def test_plan_with_a_load_and_a_target(self):
        r = in_root(roofline.plan, "llama-3-8b", hw="h100-sxm", gpus=2, rate=3, prompt=1024,
                    output=128, tpot="50ms@p90")
        self.check(r, ["plan", "llama-3-8b", "--hw", "h100-sxm", "--gpus", "2", "--rate", "3",
                       "--prompt", "1024", "--output", "128", "--tpot", "50ms@p90"])

    def test_plan_with_pipeline_stages(self):
        r = in_root(roofline.plan, "llama-3-70b", hw="h100-sxm", gpus=8, tp=4, pp=2)
        self.check(r, ["plan", "llama-3-70b", "--hw", "h100-sxm", "--gpus", "8", "--tp", "4",
                       "--pp", "2"])
        self.assertEqual(r.variants[0].micro_batches, 2)

    def test_sweep_over_context(self):
        r = in_root(roofline.sweep, "llama-3-8b", vary={"context": (2048, 131072, "x2")},
                    phase="decode", batch=4)
        self.check(r, ["sweep", "llama-3-8b", "--vary", "context=2048:131072:x2", "--phase",
                       "decode", "--batch", "4"])

    def test_sweep_across_devices(self):
        r = in_root(roofline.sweep, "qwen2.5-7b", vary={"hw": ["h100-sxm", "mi300x"],
                                                        "batch": (1, 256, "x4")})
        self.check(r, ["sweep", "qwen2.5-7b", "--vary", "hw=h100-sxm,mi300x", "--vary",
                       "batch=1:256:x4"])

    def test_graph_sweep(self):
        r = roofline.sweep(RESNET, vary={"batch": [1, 8, 64]}, hw="a100-sxm-80gb")
        self.check(r, ["sweep", RESNET, "--vary", "batch=1,8,64", "--hw", "a100-sxm-80gb"])

    def test_diffusion_preset(self):
        r = roofline.model("sdxl-unet", hw="h100-sxm", steps=30, cfg=True, dims={"batch": 2})
        self.check(r, ["model", "sdxl-unet", "--hw", "h100-sxm", "--dim", "batch=2", "--steps",
                       "30", "--cfg"])
        self.assertEqual(r.diffusion.images, 2)
        self.assertEqual(r.dims.batch, 4)

    def test_ops(self):
        self.check(roofline.op.matmul(16, 4096, 4096, hw="a100-sxm-80gb", weight_dtype="int4",
                                      group_size=128),
                   ["op", "matmul", "--m", "16", "--n", "4096", "--k", "4096", "--hw",
                    "a100-sxm-80gb", "--weight-dtype", "int4", "--group-size", "128"])
        self.check(roofline.op.attention(batch=4, heads=32, kv_heads=8, head_dim=128, q_len=1,
                                         kv_len=8192, hw="h200"),
                   ["op", "attention", "--batch", "4", "--heads", "32", "--kv-heads", "8",
                    "--head-dim", "128", "--q-len", "1", "--kv-len", "8192", "--hw", "h200"])
        self.check(roofline.op.conv2d(8, 64, 128, 56, 56, 3, padding=1),
                   ["op", "conv2d", "--batch", "8", "--in-channels", "64", "--out-channels",
                    "128", "--height", "56", "--width", "56", "--kernel", "3", "--padding", "1"])
        self.check(roofline.op.elementwise(1 << 24, inputs=2, flops_per_element=1.5),
                   ["op", "elementwise", "--elements", "16777216", "--inputs", "2",
                    "--flops-per-element", "1.5"])
        self.check(roofline.op.norm(2048, 4096, kind="rms"),
                   ["op", "norm", "--rows", "2048", "--cols", "4096", "--kind", "rms"])
        self.check(roofline.op.softmax(4096, 4096),
                   ["op", "softmax", "--rows", "4096", "--cols", "4096"])
        self.check(roofline.op.embedding(2048, 128256, 4096),
                   ["op", "embedding", "--tokens", "2048", "--vocab", "128256", "--dim", "4096"])

    def test_profile_with_model(self):
        path = fixture("tests/fixtures/profiles/torch_kineto_shapes.json")
        r = roofline.profile(path, hw="h100-sxm", model="llama-3-8b", phase="decode")
        self.check(r, ["profile", "torch", path, "--model", "llama-3-8b", "--hw", "h100-sxm",
                       "--phase", "decode"])

    def test_profiles_of_each_kind_found_from_the_file(self):
        for kind, name in [("ncu", "ncu_raw_page.csv"), ("ncu", "ncu_details_noise.csv"),
                           ("nsys", "nsys_kern_sum.csv"), ("nsys", "nsys_gpu_trace.csv"),
                           ("torch", "torch_kineto_shapes.json.gz")]:
            path = os.path.join(PROFILES, name)
            with self.subTest(name):
                self.check(roofline.profile(path, hw="h100-sxm"),
                           ["profile", kind, path, "--hw", "h100-sxm"])

    def test_listings(self):
        status, out, _ = cli("hw", "list", "--format", "json")
        self.assertEqual(status, 0)
        self.assertEqual([r.to_dict() for r in roofline.hw.list()], json.loads(out)["devices"])
        status, out, _ = cli("models", "list", "--format", "json")
        self.assertEqual([r.to_dict() for r in roofline.models.list()],
                         json.loads(out)["models"])
        self.assertEqual([r.to_dict() for r in roofline.models.networks()],
                         json.loads(out)["networks"])
        status, out, _ = cli("hw", "show", "mi300x", "--format", "json")
        self.assertEqual(roofline.hw.show("mi300x").to_dict(), json.loads(out))
        self.assertEqual(roofline.run("hw", "list"), cli("hw", "list")[1])

    def test_bad_input_raises_the_clis_line(self):
        cases = [
            (lambda: roofline.model("llama-3-8"), ["model", "llama-3-8"]),
            (lambda: roofline.model("llama-3-8b", batch=0), ["model", "llama-3-8b", "--batch",
                                                             "0"]),
            (lambda: roofline.model("llama-3-8b", efficiency={"matmul": 1.5}),
             ["model", "llama-3-8b", "--efficiency", "matmul=1.5"]),
            (lambda: roofline.model("llama-3-8b", hw="h100"), ["model", "llama-3-8b", "--hw",
                                                               "h100"]),
            (lambda: roofline.op.matmul(0, 1, 1), ["op", "matmul", "--m", "0", "--n", "1",
                                                   "--k", "1"]),
            (lambda: roofline.model(fixture("tests/fixtures/onnx/truncated.onnx")),
             ["model", fixture("tests/fixtures/onnx/truncated.onnx")]),
            (lambda: roofline.profile(os.path.join(PROFILES, "torch_truncated.json")),
             ["profile", "torch", os.path.join(PROFILES, "torch_truncated.json")]),
        ]
        for call, args in cases:
            with self.subTest(args=args):
                status, out, err = cli(*args, "--format", "json")
                self.assertEqual(status, 2)
                self.assertEqual(out, "")
                self.assertEqual(len(err.splitlines()), 1)
                with self.assertRaises(roofline.RooflineError) as ctx:
                    call()
                self.assertEqual(ctx.exception.line, err.rstrip("\n"))
                self.assertEqual(str(ctx.exception), err.rstrip("\n")[len("error: "):])
                self.assertEqual(ctx.exception.status, 2)


class Results(unittest.TestCase):
    """What the result objects give, checked against the numbers they hold."""

    @classmethod
    def setUpClass(cls):
        cls.llm = roofline.model("llama-3-8b", hw="h100-sxm", batch=8, prompt=2048)

    def test_readme_line(self):
        # README, "Python": the first phase of the default workload is prefill, its bound is
        # the ideal roofline time and lies below the expected time.
        p = roofline.model("llama-3-8b").phases[0]
        self.assertEqual(p.phase, "prefill")
        self.assertGreater(p.time_s, 0)
        self.assertLessEqual(p.time_s, p.expected_time_s)
        # How far to trust it: the published runs costed alike, and the range they suggest.
        band = p.expected_band
        self.assertGreaterEqual(band.rows, 3)
        self.assertLessEqual(band.low_s, band.high_s)
        self.assertEqual(len(band.runs), band.rows)

    def test_readme_python_section_runs_as_written(self):
        with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        section = readme[readme.index("\n## Python\n"):]
        section = section[:section.index("\n## ", 1)]
        block = section[section.index("```python\n") + len("```python\n"):]
        block = block[:block.index("```")]
        self.assertIn("roofline.model(", block)
        self.assertLessEqual(len(block.strip().splitlines()), 6)
        printed = []
        exec(compile(block, "README.md (Python)", "exec"),  # noqa: S102 (the README's own code)
             {"print": lambda *a: printed.append(a)})
        self.assertEqual(len(printed), 2)
        self.assertIn(printed[0][1], ("memory:hbm", "overhead"))
        self.assertTrue(all("context" in c for c in printed[1][0]))
        one_liner = section[section.index("-c \"") + 4:]
        one_liner = one_liner[:one_liner.index("\"\n")]
        self.assertEqual(one_liner, "import roofline; print(roofline.model('llama-3-8b')"
                                    ".phases[0].time_s)")

    def test_attributes_and_items(self):
        decode = self.llm.phase("decode")
        self.assertIs(type(decode), roofline.Phase)
        self.assertEqual(decode.time_s, decode["time_s"])
        self.assertEqual(self.llm.workload.batch, 8)
        self.assertEqual(self.llm.workload.prompt, 2048)
        k = decode.kernels[0]
        self.assertIs(type(k), roofline.Kernel)
        self.assertIn("hbm", k.bytes)
        with self.assertRaises(AttributeError):
            decode.no_such_field
        with self.assertRaises(AttributeError):
            decode.time_s = 1
        with self.assertRaises(KeyError):
            self.llm.phase("training")
        # The phase time is the sum over its kernels of time x repeat (the CLI's total).
        total = sum(k.time_s * k.repeat for k in decode.kernels)
        self.assertAlmostEqual(total / decode.time_s, 1, places=9)

    def test_to_dict_is_a_copy(self):
        d = self.llm.to_dict()
        d["phases"].clear()
        self.assertEqual(len(self.llm.phases), 2)

    def test_keyword_changes_the_workload(self):
        # fp8 KV halves the KV-cache bytes per token against bf16 (1 byte vs 2).
        bf16 = roofline.model("llama-3-8b", phase="decode", context=8192)
        fp8 = roofline.model("llama-3-8b", phase="decode", context=8192, kv_dtype="fp8")
        self.assertEqual(fp8.workload.kv_dtype, "fp8")
        self.assertAlmostEqual(bf16.memory.kv_cache_bytes_per_token
                               / fp8.memory.kv_cache_bytes_per_token, 2.0)
        self.assertLess(fp8.phases[0].time_s, bf16.phases[0].time_s)

    def test_network_and_op_results(self):
        net = roofline.model(RESNET, dims={"batch": 4})
        self.assertIs(type(net), roofline.NetworkResult)
        self.assertEqual(net.dims.batch, 4)
        self.assertAlmostEqual(sum(k.time_s * k.repeat for k in net.kernels) / net.totals.time_s,
                               1, places=9)
        m = roofline.op.matmul(1, 4096, 4096)
        self.assertIs(type(m), roofline.OpResult)
        self.assertEqual(m.flops, 2 * 4096 * 4096)
        self.assertIn("flips", m.explain())

    def test_svg_for_jupyter(self):
        for result in (self.llm, roofline.model(RESNET),
                       roofline.sweep("llama-3-8b", vary={"batch": (1, 64, "x2")})):
            svg = result._repr_svg_()
            root = ET.fromstring(svg.encode())
            self.assertTrue(root.tag.endswith("svg"), root.tag)
            self.assertGreater(len(list(root.iter())), 20)
        self.assertIsNone(roofline.op.softmax(8, 8)._repr_svg_())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.html")
            html = self.llm.report(path)
            self.assertTrue(os.path.exists(path))
            self.assertIn("<svg", html)

    def test_sweep_columns_are_numpy_arrays(self):
        s = roofline.sweep("llama-3-8b", vary={"batch": (1, 64, "x4")}, phase="decode")
        a = s.arrays()
        self.assertEqual(str(a["time_s"].dtype), "float64")
        self.assertEqual(list(a["batch"]), [1, 4, 16, 64])
        self.assertEqual(set(a["bound"]), {"memory:hbm"})
        # The arrays hold the numbers the CLI prints.
        status, out, err = cli("sweep", "llama-3-8b", "--vary", "batch=1:64:x4", "--phase",
                               "decode", "--format", "json")
        self.assertEqual(status, 0, err)
        self.assertEqual(list(a["expected_time_s"]), json.loads(out)["data"]["expected_time_s"])
        self.assertEqual(len(s.rows()), 4)
        # The trust band's range of measured times brackets nothing smaller than its low end.
        self.assertTrue(all(lo <= hi for lo, hi in zip(a["expected_low_s"], a["expected_high_s"])))
        self.assertEqual(list(a["expected_low_s"]), json.loads(out)["data"]["expected_low_s"])
        # Across devices: every device's rows, a device column first.
        multi = roofline.sweep("llama-3-8b", vary={"hw": ["h100-sxm", "h200"], "batch": (1, 4)},
                               phase="decode")
        m = multi.arrays()
        self.assertEqual(list(m["device"]), ["h100-sxm"] * 3 + ["h200"] * 3)
        self.assertEqual(list(m["batch"]), [1, 2, 4] * 2)
        self.assertEqual(len(multi.rows()), 6)
        self.assertEqual(multi.rows()[3].device, "h200")

    def test_fields_are_the_clis_options(self):
        fields = {f["name"]: f for f in roofline.fields()}
        self.assertEqual(fields["kv_dtype"]["flag"], "--kv-dtype")
        self.assertEqual(fields["fusion"]["choices"], ["eager", "fused"])
        self.assertEqual(fields["batch"]["type"], "size")
        self.assertEqual(fields["dims"]["scope"], "network")
        # Every field's flag is in the CLI's help of `model`.
        help_text = roofline.run("model", "--help")
        for f in fields.values():
            if f["name"] != "model":
                self.assertIn(f["flag"], help_text)
        # A size takes k: the same result as the digits.
        self.assertEqual(roofline.model("llama-3-8b", phase="decode", context="32k").to_dict(),
                         roofline.model("llama-3-8b", phase="decode", context=32768).to_dict())

    def test_explain(self):
        text = self.llm.explain("attention")
        self.assertIn("attention", text)
        with self.assertRaises(roofline.RooflineError):
            self.llm.explain("no_such_kernel")

    def test_argument_errors_in_python(self):
        # Keywords are the field table's names: a misspelt one is a TypeError naming the close
        # one, before anything runs.
        with self.assertRaises(TypeError) as ctx:
            roofline.model("llama-3-8b", kv_dtpye="fp8")
        self.assertIn("did you mean 'kv_dtype'", str(ctx.exception))
        with self.assertRaises(TypeError):
            roofline.sweep("llama-3-8b", vary={"batch": (1, 4)}, batchsize=2)
        with self.assertRaises(TypeError):
            roofline.model(42)
        with self.assertRaises(TypeError):
            roofline.sweep("llama-3-8b", vary={"batch": (1,)})
        with self.assertRaises(TypeError):
            roofline.sweep("llama-3-8b", vary={})
        with self.assertRaises(TypeError):
            roofline.profile(3.5)
        with self.assertRaises(roofline.RooflineError):
            roofline.profile(os.path.join(ROOT, "README.md"))

    @unittest.skipUnless(HAVE_PANDAS, "pandas not installed")
    def test_to_pandas(self):
        df = self.llm.to_pandas()
        rows = sum(len(p.kernels) for p in self.llm.phases)
        self.assertEqual(len(df), rows)
        for col in ("phase", "name", "flops", "bytes_hbm", "time_s", "expected_time_s", "bound",
                    "expected_bound"):
            self.assertIn(col, df.columns)
        decode = df[df.phase == "decode"]
        self.assertAlmostEqual((decode.time_s * decode.repeat).sum()
                               / self.llm.phase("decode").time_s, 1, places=9)
        # The obvious sum is the step's: step_time_s is time_s x repeat.
        by_phase = df.groupby("phase").step_time_s.sum()
        for p in self.llm.phases:
            self.assertAlmostEqual(by_phase[p.phase] / p.time_s, 1, places=9)
        sweep = roofline.sweep("llama-3-8b", vary={"batch": (1, 64, "x2")})
        sdf = sweep.to_pandas()
        self.assertEqual(len(sdf), 7 * 2)  # 7 batches x (prefill, decode)
        self.assertEqual(sorted(set(sdf.batch)), [1, 2, 4, 8, 16, 32, 64])
        multi = roofline.sweep("llama-3-8b", vary={"hw": ["h100-sxm", "a100-sxm-80gb"],
                                                   "batch": [1, 8]}, phase="decode")
        mdf = multi.to_pandas()
        self.assertEqual(sorted(set(mdf.device)), ["a100-sxm-80gb", "h100-sxm"])
        self.assertEqual(len(mdf), 4)
        self.assertEqual(len(roofline.model(RESNET).to_pandas()),
                         len(roofline.model(RESNET).kernels))
        self.assertEqual(len(roofline.hw.to_pandas()), len(roofline.hw.list()))
        prof = roofline.profile(os.path.join(PROFILES, "nsys_kern_sum.csv"))
        self.assertEqual(len(prof.to_pandas()), len(prof.kernels))
        # A plan: one row per operating point of each variant (a load adds the "at_load" one).
        plan = roofline.plan("llama-3-8b", gpus=2, rate=3)
        pdf = plan.to_pandas()
        self.assertEqual(len(pdf), 4 * len(plan.variants))
        self.assertEqual(sorted(set(pdf.point)),
                         ["at_load", "batch1", "flop_limit", "largest_batch"])
        for col in ("variant", "tp", "micro_batches", "batch", "ttft_s",
                    "output_tokens_per_s_per_gpu", "steady_state_step_s"):
            self.assertIn(col, pdf.columns)


class WithoutPyTorch(unittest.TestCase):
    def test_capture_says_what_to_install(self):
        # PyTorch made unimportable (None in sys.modules), whether or not it is installed here.
        from unittest import mock

        with mock.patch.dict(sys.modules, {"torch": None}):
            with self.assertRaises(ImportError) as e:
                roofline.capture(object())
        self.assertIn("pip install torch", str(e.exception))
        self.assertNotIn("\n", str(e.exception))


@unittest.skipUnless(HAVE_TORCH, "torch not installed")
class FromPyTorch(unittest.TestCase):

    def test_live_profiler_object(self):
        # A live torch.profiler.profile is exported (once: torch allows one export) to a file
        # the result keeps; reading that file again gives the same result.
        m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(),
                                torch.nn.Linear(128, 64))
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    record_shapes=True) as prof:
            m(torch.randn(8, 64))
        live = roofline.profile(prof, hw="h100-sxm")
        self.assertEqual(live.format, "torch kineto (cpu_op / kernel)")
        self.assertTrue(os.path.exists(live.file))
        with open(live.file, encoding="utf-8") as f:
            self.assertIn("aten::addmm", f.read())  # the trace of this forward pass
        self.assertEqual(roofline.profile(live.file, hw="h100-sxm").to_dict(), live.to_dict())
        self.assertEqual(str(live), roofline.run("profile", "torch", live.file, "--hw",
                                                 "h100-sxm"))

    def test_capture_then_model(self):
        # Matrix FLOPs of a captured MLP at batch 32 equal FlopCounterMode's count at batch 32.
        from torch.utils.flop_counter import FlopCounterMode

        m = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(),
                                torch.nn.Linear(256, 64)).eval()
        g = roofline.capture(m, (torch.randn(2, 64),), dims={"batch": 0}, name="mlp")
        self.assertEqual(g.dims, {"batch": 2})
        r = roofline.model(g, dims={"batch": 32}, hw="a100-sxm-80gb")
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            m(torch.randn(32, 64))
        self.assertEqual(r.totals.matrix_flops, counter.get_total_flops())
        self.assertEqual(r.network.parameters, sum(p.numel() for p in m.parameters()))
        s = roofline.sweep(g, vary={"batch": (1, 1024, "x4")})
        self.assertEqual([p.batch for p in s.rows()], [1, 4, 16, 64, 256, 1024])

    def test_capture_with_image_sides_then_sweep(self):
        # A network captured with symbolic height and width (a function of the sizes), costed at
        # a size it was never run at: matrix FLOPs equal FlopCounterMode's on a real run there.
        from torch.utils.flop_counter import FlopCounterMode

        m = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, stride=2, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(16, 16, 3, stride=2, padding=1)).eval()
        g = roofline.capture(m, lambda batch, height, width: (
            (torch.randn(batch, 3, height, width),), {}),
            dims={"batch": 1, "height": (32, 4), "width": (32, 4)}, name="convs")
        self.assertEqual(g.dims, {"batch": 1, "height": 32, "width": 32})
        r = roofline.model(g, dims={"batch": 2, "height": 96, "width": 64}, hw="h100-sxm")
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            m(torch.randn(2, 3, 96, 64))
        self.assertEqual(r.totals.matrix_flops, counter.get_total_flops())
        s = roofline.sweep(g, vary={"height": (64, 1024, "x2")}, hw="h100-sxm")
        self.assertEqual(s.to_dict()["follow"], ["width"])
        self.assertEqual([p.height for p in s.rows()], [64, 128, 256, 512, 1024])
        with self.assertRaises(roofline.RooflineError) as ctx:
            roofline.sweep(g, vary={"height": (30, 60)}, hw="h100-sxm")
        self.assertIn("not a multiple of 4", str(ctx.exception))

    def test_capture_errors(self):
        from roofline_capture import CaptureError

        class NeedsValues(torch.nn.Module):
            def forward(self, x):
                return x[: int(x.sum().item())]

        with torch.device("meta"):
            m, x = NeedsValues(), torch.randn(8)
        with self.assertRaises(CaptureError) as ctx:
            roofline.capture(m, (x,))
        self.assertIn("aten::_local_scalar_dense", str(ctx.exception))
        self.assertEqual(len(str(ctx.exception).splitlines()), 1)
        with self.assertRaises(TypeError):
            roofline.capture(lambda x: x, (torch.randn(2),))
        with self.assertRaises(ValueError):
            roofline.capture(torch.nn.Linear(4, 4), (torch.randn(2, 4),),
                             dims={"batch": 0, "height": 1})


if __name__ == "__main__":
    unittest.main()
