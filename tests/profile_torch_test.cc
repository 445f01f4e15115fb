// PyTorch profiler trace reader: fixtures the project wrote (tests/fixtures/profiles/torch_*)
// and the real kineto trace in ../shared/samples/profiles.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "roofline/profile.h"
#include "src/profile/torch_op_cost.h"
#include "tests/shared_samples.h"

namespace roofline {
namespace profile_torch_test {

std::string Fixture(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/profiles/" + name;
}

TorchTrace Load(const std::string& path) {
  Result<TorchTrace> r = LoadTorchTrace(path);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : TorchTrace();
}

/// The op a kernel whose name starts with `prefix` was joined to ("" when none).
std::string OpOf(const TorchTrace& t, const std::string& prefix) {
  for (const TorchKernel& k : t.kernels) {
    if (k.name.rfind(prefix, 0) == 0) return k.op >= 0 ? t.ops[k.op].name : "";
  }
  ADD_FAILURE() << "no kernel " << prefix;
  return "?";
}

const TorchOp& Op(const TorchTrace& t, const std::string& name) {
  for (const TorchOp& op : t.ops) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << "no op " << name;
  static const TorchOp kNone;
  return kNone;
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/roofline_torch_" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

/// A one-event kineto trace around `event`.
std::string OneEvent(const std::string& event) {
  std::string s = "{\"schemaVersion\": 1, \"traceEvents\": [";
  s += event;
  s += "]}";
  return s;
}

/// Loads `bytes` from a temp file expecting a one-line parse error that names the file and
/// contains `expected`.
void ExpectParseError(const std::string& name, const std::string& bytes,
                      const std::string& expected) {
  const std::string path = WriteTemp(name, bytes);
  Result<TorchTrace> r = LoadTorchTrace(path);
  ASSERT_FALSE(r.ok()) << name;
  EXPECT_EQ(r.status().code(), StatusCode::kParseError) << r.status().ToString();
  EXPECT_NE(r.status().ToString().find(path), std::string::npos) << r.status().ToString();
  EXPECT_NE(r.status().what().find(expected), std::string::npos) << r.status().ToString();
  EXPECT_EQ(r.status().ToString().find('\n'), std::string::npos);
}

// ------------------------------------------------------------------------------------ kineto

TEST(TorchTraceKineto, ReadsTopLevelFields) {
  const TorchTrace t = Load(Fixture("torch_kineto_shapes.json"));
  EXPECT_EQ(t.format, "kineto (cpu_op / kernel)");
  EXPECT_EQ(t.device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.cc, "9.0");
  EXPECT_EQ(t.num_sms, 132);
  EXPECT_DOUBLE_EQ(t.device_memory_bytes, 85028765696.0);
  EXPECT_EQ(t.schema_version, 1);
  EXPECT_EQ(t.events, 40);  // every object in traceEvents, odd ones included
  EXPECT_TRUE(t.has_shapes);
}

// The join: the innermost op enclosing the launch call (aten::linear > aten::addmm: addmm;
// sdpa > flash: flash; to > _to_copy > copy_: copy_); a kernel with only an ac2g flow start
// still finds its op (fill_); a kernel without ts / dur is skipped.
TEST(TorchTraceKineto, JoinsEachKernelToTheInnermostLaunchingOp) {
  const TorchTrace t = Load(Fixture("torch_kineto_shapes.json"));
  ASSERT_EQ(t.kernels.size(), 8u);
  EXPECT_EQ(OpOf(t, "ampere_sgemm"), "aten::addmm");
  EXPECT_EQ(OpOf(t, "sm90_xmma_gemm"), "aten::bmm");
  EXPECT_EQ(OpOf(t, "void pytorch_flash::flash_fwd"), "aten::_scaled_dot_product_flash_attention");
  EXPECT_EQ(OpOf(t, "void at::native::(anonymous namespace)::vectorized_layer_norm"),
            "aten::native_layer_norm");
  EXPECT_EQ(OpOf(t, "void at::native::(anonymous namespace)::cunn_SoftMax"), "aten::_softmax");
  EXPECT_EQ(
      OpOf(t, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"),
      "aten::add");
  EXPECT_EQ(OpOf(t, "Memcpy HtoD"), "aten::copy_");
  EXPECT_EQ(OpOf(t, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor"),
            "aten::fill_");
  ASSERT_EQ(t.ops.size(), 8u);  // only ops with GPU work; not linear, t, sdpa, layer_norm...
  for (const TorchOp& op : t.ops) EXPECT_EQ(op.kernels, 1) << op.name;
  for (const TorchKernel& k : t.kernels) {
    if (k.name.rfind("Memcpy", 0) == 0) {
      EXPECT_EQ(k.op_class, OpClass::kCopy);
    }
  }
  EXPECT_EQ(Op(t, "aten::addmm").op_class, OpClass::kGemm);
  EXPECT_EQ(Op(t, "aten::addmm").external_id, 12);
}

TEST(TorchTraceKineto, TimesAreSecondsFromTheEarliestEvent) {
  const TorchTrace t = Load(Fixture("torch_kineto_shapes.json"));
  // ProfilerStep#1 at 1700000000001000 us is the earliest (the "M" metadata event is ignored).
  EXPECT_DOUBLE_EQ(t.time_origin_us, 1700000000001000.0);
  ASSERT_FALSE(t.kernels.empty());
  EXPECT_EQ(t.kernels[0].name, "ampere_sgemm_32x128_tn");  // start order
  EXPECT_NEAR(t.kernels[0].start_s, 100e-6, 1e-12);
  EXPECT_NEAR(t.kernels[0].duration_s, 20e-6, 1e-12);
  EXPECT_EQ(t.kernels[0].correlation, 501);
  double sum = 0;
  for (const TorchKernel& k : t.kernels) sum += k.duration_s;
  EXPECT_NEAR(sum, (20 + 10 + 30 + 6 + 5 + 4 + 3 + 2) * 1e-6, 1e-12);
  const TorchOp& addmm = Op(t, "aten::addmm");
  EXPECT_NEAR(addmm.start_s, 20e-6, 1e-12);
  EXPECT_NEAR(addmm.cpu_duration_s, 40e-6, 1e-12);
  EXPECT_NEAR(addmm.gpu_time_s, 20e-6, 1e-12);
  EXPECT_EQ(t.ops[0].name, "aten::addmm");  // ops in start order
}

TEST(TorchTraceKineto, CostsOpsFromTheirShapes) {
  const TorchTrace t = Load(Fixture("torch_kineto_shapes.json"));
  const TorchOp& addmm = Op(t, "aten::addmm");  // bias [128], [32,64] x [64,128], float
  ASSERT_EQ(addmm.input_dims.size(), 5u);
  EXPECT_EQ(addmm.input_dims[1], (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(addmm.input_types[0], "float");
  EXPECT_DOUBLE_EQ(*addmm.flops, 2.0 * 32 * 128 * 64);  // 2MNK, bias add not counted
  EXPECT_DOUBLE_EQ(*addmm.min_bytes, (128 + 32 * 64 + 64 * 128 + 32 * 128) * 4.0);
  const TorchOp& bmm = Op(t, "aten::bmm");  // [8,16,32] x [8,32,24] bf16
  EXPECT_DOUBLE_EQ(*bmm.flops, 2.0 * 8 * 16 * 24 * 32);
  EXPECT_DOUBLE_EQ(*bmm.min_bytes, (8 * 16 * 32 + 8 * 32 * 24 + 8 * 16 * 24) * 2.0);
  const TorchOp& flash = Op(t, "aten::_scaled_dot_product_flash_attention");
  EXPECT_DOUBLE_EQ(*flash.flops, 2.0 * (2 * 4) * 128 * 128 * (64 + 64));  // QK^T + PV, full
  EXPECT_DOUBLE_EQ(*flash.min_bytes, 4 * (2 * 4 * 128 * 64) * 2.0);       // q, k, v, out
  EXPECT_NE(flash.cost_note.find("causal=True"), std::string::npos) << flash.cost_note;
  const TorchOp& ln = Op(t, "aten::native_layer_norm");  // [32,128] + weight, bias [128]
  EXPECT_DOUBLE_EQ(*ln.flops, 8.0 * 32 * 128);
  EXPECT_DOUBLE_EQ(*ln.min_bytes, (2 * 32 * 128 + 2 * 128) * 4.0);
  const TorchOp& sm = Op(t, "aten::_softmax");
  EXPECT_DOUBLE_EQ(*sm.flops, 5.0 * 32 * 128);
  EXPECT_DOUBLE_EQ(*sm.min_bytes, 2 * 32 * 128 * 4.0);
  const TorchOp& add = Op(t, "aten::add");  // [32,128] + [128] broadcast
  EXPECT_DOUBLE_EQ(*add.flops, 32.0 * 128);
  EXPECT_DOUBLE_EQ(*add.min_bytes, (32 * 128 + 128 + 32 * 128) * 4.0);
  const TorchOp& copy = Op(t, "aten::copy_");
  EXPECT_DOUBLE_EQ(*copy.flops, 0);
  EXPECT_DOUBLE_EQ(*copy.min_bytes, 2 * 1024 * 4.0);
  EXPECT_DOUBLE_EQ(*Op(t, "aten::fill_").min_bytes, 64 * 4.0);
  for (const TorchOp& op : t.ops) EXPECT_FALSE(op.cost_note.empty()) << op.name;
}

TEST(TorchTraceKineto, GzipReadsLikePlain) {
  const TorchTrace plain = Load(Fixture("torch_kineto_shapes.json"));
  const TorchTrace gz = Load(Fixture("torch_kineto_shapes.json.gz"));
  ASSERT_EQ(gz.kernels.size(), plain.kernels.size());
  ASSERT_EQ(gz.ops.size(), plain.ops.size());
  for (size_t i = 0; i < gz.kernels.size(); ++i) {
    EXPECT_EQ(gz.kernels[i].name, plain.kernels[i].name);
    EXPECT_EQ(gz.kernels[i].op, plain.kernels[i].op);
    EXPECT_DOUBLE_EQ(gz.kernels[i].start_s, plain.kernels[i].start_s);
  }
  for (size_t i = 0; i < gz.ops.size(); ++i) EXPECT_EQ(gz.ops[i].flops, plain.ops[i].flops);
  EXPECT_EQ(gz.device_name, plain.device_name);
}

// ------------------------------------------------------------------------------------ legacy

// PyTorch 1.8: Operator / Runtime / Kernel / Memcpy / Memset, lowercase "external id" on GPU
// events, "Input dims" without types, string tids, async_gpu flows.
TEST(TorchTraceLegacy, ReadsPyTorch18Categories) {
  const TorchTrace t = Load(Fixture("torch_legacy_18.json"));
  EXPECT_EQ(t.format, "legacy (Operator / Kernel)");
  EXPECT_EQ(t.device_name, "");
  EXPECT_EQ(t.cc, "");
  ASSERT_EQ(t.kernels.size(), 3u);
  EXPECT_EQ(OpOf(t, "volta_sgemm"), "aten::mm");     // Runtime correlation 900 + time
  EXPECT_EQ(OpOf(t, "Memcpy DtoH"), "aten::copy_");  // no Runtime event: "external id" 4
  EXPECT_EQ(OpOf(t, "Memset (Device)"), "");         // "external id" 0 names no op
  EXPECT_EQ(t.kernels[2].op_class, OpClass::kCopy);
  const TorchOp& mm = Op(t, "aten::mm");
  EXPECT_EQ(mm.external_id, 3);
  EXPECT_DOUBLE_EQ(*mm.flops, 2.0 * 16 * 8 * 32);
  EXPECT_FALSE(mm.min_bytes.has_value());  // 1.8 wrote no "Input type"
  EXPECT_NE(mm.cost_note.find("min bytes unknown"), std::string::npos) << mm.cost_note;
  EXPECT_NEAR(t.kernels[0].start_s, 80e-6, 1e-12);  // from ProfilerStep#2 at ...100 us
}

// ------------------------------------------------------------------------------- no shapes

TEST(TorchTraceNoShapes, TimesByOpClassOnly) {
  const TorchTrace t = Load(Fixture("torch_kineto_noshapes.json"));
  EXPECT_FALSE(t.has_shapes);
  EXPECT_EQ(t.cc, "8.0");
  ASSERT_EQ(t.ops.size(), 3u);
  const TorchOp& conv = Op(t, "aten::cudnn_convolution");  // both conv kernels, not conv2d
  EXPECT_EQ(conv.kernels, 2);
  EXPECT_NEAR(conv.gpu_time_s, 152e-6, 1e-12);
  EXPECT_EQ(conv.op_class, OpClass::kConv);
  EXPECT_EQ(OpOf(t, "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous"),
            "aten::clamp_min_");
  std::map<OpClass, double> by_class;
  for (const TorchOp& op : t.ops) {
    EXPECT_FALSE(op.flops.has_value());
    EXPECT_NE(op.cost_note.find("no shapes"), std::string::npos);
    by_class[op.op_class] += op.gpu_time_s;
  }
  EXPECT_NEAR(by_class[OpClass::kConv], 152e-6, 1e-12);
  EXPECT_NEAR(
      by_class[OpClass::kConv] + by_class[OpClass::kElementwise] + by_class[OpClass::kOther],
      190e-6, 1e-12);  // add_ 20 us, clamp_min_ 18 us (its class is ClassifyAtenOp's)
}

// ---------------------------------------------------------------------------------- errors

TEST(TorchTraceErrors, TruncatedJsonSaysWhere) {
  Result<TorchTrace> r = LoadTorchTrace(Fixture("torch_truncated.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kParseError);
  EXPECT_NE(r.status().what().find("truncated JSON: the text ends at byte 6000"), std::string::npos)
      << r.status().ToString();
}

TEST(TorchTraceErrors, TruncatedGzip) {
  const std::string gz = ReadBytes(Fixture("torch_kineto_shapes.json.gz"));
  ExpectParseError("cut.json.gz", gz.substr(0, gz.size() / 2), "truncated gzip");
}

TEST(TorchTraceErrors, CorruptGzip) {
  std::string gz = ReadBytes(Fixture("torch_kineto_shapes.json.gz"));
  for (size_t i = 20; i < 60; ++i) gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  ExpectParseError("corrupt.json.gz", gz, "gzip");
}

TEST(TorchTraceErrors, NotATrace) {
  Result<TorchTrace> r = LoadTorchTrace(Fixture("torch_not_a_trace.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().what().find("traceEvents"), std::string::npos) << r.status().ToString();
  ExpectParseError("array.json", "[{\"ph\": \"X\"}]", "JSON array");
  ExpectParseError("empty.json", "", "empty file");
}

TEST(TorchTraceErrors, NeitherGzipNorJson) {
  ExpectParseError("zip.json", std::string("PK\x03\x04\x14\x00\x00\x00", 8),
                   "neither gzip nor JSON (starts with 0x50 0x4b 0x03 0x04)");
}

TEST(TorchTraceErrors, AbsurdValues) {
  ExpectParseError("neg.json",
                   OneEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": -3})"),
                   "negative dur");
  ExpectParseError("long.json",
                   OneEvent(R"({"ph": "X", "cat": "cpu_op", "name": "op", "ts": 5, "dur": 2e9})"),
                   "longer than 1e9 us");
  ExpectParseError("nan.json",
                   OneEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": NaN})"),
                   "invalid JSON at byte");
  ExpectParseError("inf.json",
                   OneEvent(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1e999, "dur": 1})"),
                   "number overflow");
}

TEST(TorchTraceErrors, MissingFileIsAnIoError) {
  Result<TorchTrace> r = LoadTorchTrace(Fixture("torch_no_such_file.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
}

// Odd shapes are skipped, long names are cut at 4 KiB, deep nesting does not recurse.
TEST(TorchTraceErrors, UnknownShapesAreSkippedSafely) {
  std::string events = R"({"ph": "X", "cat": "kernel", "name": ")";
  events += std::string(10000, 'k');
  events += R"(", "ts": 1, "dur": 2, "args": {"correlation": 1}}, )";
  events += R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 9, )";
  events += R"("args": {"Input Dims": [[[[[1]]]], "x", {"a": 1}], "Input type": [[1], 2]}}, )";
  events += std::string(5000, '[') + std::string(5000, ']') + ", 7, \"s\", null, ";
  events += R"({"args": 1, "ph": {"X": 1}, "cat": ["kernel"], "ts": "5"})";
  const std::string path = WriteTemp("odd.json", OneEvent(events));
  const TorchTrace t = Load(path);
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels[0].name.size(), 4096u);
  EXPECT_EQ(t.events, 3);
  bool noted = false;
  for (const std::string& n : t.notes) noted |= n.find("cut") != std::string::npos;
  EXPECT_TRUE(noted);
}

// -------------------------------------------------------------------------------- op costs

TorchOpShapes Shapes(std::vector<std::vector<int64_t>> dims, std::vector<std::string> types,
                     std::vector<std::string> concrete = {}) {
  TorchOpShapes s;
  s.dims = std::move(dims);
  s.types = std::move(types);
  s.concrete = std::move(concrete);
  return s;
}

TEST(TorchOpCost, DtypeSizes) {
  EXPECT_EQ(TorchDtypeBytes("float"), 4);
  EXPECT_EQ(TorchDtypeBytes("c10::Half"), 2);
  EXPECT_EQ(TorchDtypeBytes("c10::BFloat16"), 2);
  EXPECT_EQ(TorchDtypeBytes("double"), 8);
  EXPECT_EQ(TorchDtypeBytes("long int"), 8);
  EXPECT_EQ(TorchDtypeBytes("int"), 4);
  EXPECT_EQ(TorchDtypeBytes("bool"), 1);
  EXPECT_EQ(TorchDtypeBytes("unsigned char"), 1);
  EXPECT_EQ(TorchDtypeBytes("signed char"), 1);
  EXPECT_EQ(TorchDtypeBytes("c10::Float8_e4m3fn"), 1);
  EXPECT_EQ(TorchDtypeBytes("c10::Float8_e5m2"), 1);
  EXPECT_FALSE(TorchDtypeBytes("Scalar").has_value());
}

TEST(TorchOpCost, LinearAndMatmulBroadcast) {
  const TorchOpCost lin = CostTorchOp(
      "aten::linear", Shapes({{4, 10, 64}, {128, 64}, {128}}, {"float", "float", "float"}));
  EXPECT_DOUBLE_EQ(*lin.flops, 2.0 * 40 * 128 * 64);
  EXPECT_DOUBLE_EQ(*lin.min_bytes, (40 * 64 + 128 * 64 + 128 + 40 * 128) * 4.0);
  const TorchOpCost mm =
      CostTorchOp("aten::matmul", Shapes({{2, 3, 4, 5}, {5, 6}}, {"c10::Half", "c10::Half"}));
  EXPECT_DOUBLE_EQ(*mm.flops, 2.0 * 6 * 4 * 6 * 5);  // batch 2*3, M 4, N 6, K 5
  EXPECT_DOUBLE_EQ(*mm.min_bytes, (120 + 30 + 6 * 4 * 6) * 2.0);
  const TorchOpCost bad = CostTorchOp("aten::mm", Shapes({{4, 5}, {6, 7}}, {"float", "float"}));
  EXPECT_FALSE(bad.flops.has_value());
  EXPECT_FALSE(bad.note.empty());
}

// conv2d(input, weight, bias, stride, padding, dilation, groups); cudnn_convolution(self,
// weight, padding, stride, dilation, groups, ...): padding comes before stride there.
TEST(TorchOpCost, ConvolutionFromConcreteInputs) {
  const TorchOpCost c = CostTorchOp(
      "aten::conv2d",
      Shapes({{8, 3, 32, 32}, {16, 3, 3, 3}, {16}, {}, {}, {}, {}},
             {"float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"},
             {"", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"}));
  EXPECT_DOUBLE_EQ(*c.flops, 2.0 * 8 * (16 * 3 * 3 * 3) * (32 * 32));
  EXPECT_DOUBLE_EQ(*c.min_bytes, (8 * 3 * 32 * 32 + 16 * 27 + 16 + 8 * 16 * 32 * 32) * 4.0);
  const TorchOpCost cudnn =
      CostTorchOp("aten::cudnn_convolution",
                  Shapes({{1, 64, 56, 56}, {64, 64, 3, 3}, {}, {}, {}, {}, {}, {}, {}},
                         {"c10::Half", "c10::Half", "ScalarList", "ScalarList", "ScalarList",
                          "Scalar", "Scalar", "Scalar", "Scalar"},
                         {"", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "False", "False", "True"}));
  EXPECT_DOUBLE_EQ(*cudnn.flops, 2.0 * 1 * (64 * 64 * 9) * (28 * 28));
  EXPECT_NE(cudnn.note.find("[28, 28]"), std::string::npos) << cudnn.note;
  const TorchOpCost unknown = CostTorchOp(
      "aten::conv2d", Shapes({{8, 3, 32, 32}, {16, 3, 3, 3}, {16}}, {"float", "float", "float"}));
  EXPECT_FALSE(unknown.flops.has_value());
  EXPECT_NE(unknown.note.find("output size unknown"), std::string::npos) << unknown.note;
}

TEST(TorchOpCost, AttentionCountsLikeFlopCounter) {
  // sdpa with grouped K/V heads, non-causal: FLOPs follow the query heads.
  const TorchOpCost a = CostTorchOp(
      "aten::scaled_dot_product_attention",
      Shapes(
          {{1, 8, 256, 128}, {1, 2, 512, 128}, {1, 2, 512, 128}, {}, {}, {}, {}, {}},
          {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "Scalar", "Scalar", "", "Scalar"},
          {"", "", "", "", "0.", "False", "", "True"}));
  EXPECT_DOUBLE_EQ(*a.flops, 2.0 * 8 * 256 * 512 * (128 + 128));
  EXPECT_DOUBLE_EQ(*a.min_bytes, (8 * 256 * 128 + 2 * 2 * 512 * 128 + 8 * 256 * 128) * 2.0);
  EXPECT_NE(a.note.find("causal=False"), std::string::npos) << a.note;
}

// The kernel-level attention ops the innermost cpu_op of an SDPA call names (the launcher a
// kernel is attributed to). Arguments as recorded in the H100 trace of 2026-11-25
// (tests/fixtures/profiles/torch_h100_llama3_8b_decode_gqa.json.gz): one decode query per
// sequence over 4097 cached keys of 8 grouped heads.
TEST(TorchOpCost, KernelLevelAttentionOps) {
  const TorchOpCost cudnn =
      CostTorchOp("aten::_cudnn_attention_forward",
                  Shapes({{1, 32, 1, 128},
                          {1, 8, 4097, 128},
                          {1, 8, 4097, 128},
                          {},
                          {},
                          {},
                          {},
                          {},
                          {},
                          {},
                          {},
                          {},
                          {}},
                         {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "", "", "", "Scalar",
                          "Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "Scalar"},
                         {"", "", "", "", "", "", "1", "4097", "False", "0.", "False", "False",
                          "0.088388347648318447"}));
  ASSERT_TRUE(cudnn.flops.has_value()) << cudnn.note;
  EXPECT_DOUBLE_EQ(*cudnn.flops, 2.0 * 32 * 1 * 4097 * (128 + 128));
  EXPECT_DOUBLE_EQ(*cudnn.min_bytes, (32 * 128 + 2 * 8 * 4097 * 128 + 32 * 128) * 2.0);
  EXPECT_NE(cudnn.note.find("causal=False"), std::string::npos) << cudnn.note;
  // _flash_attention_forward(q, k, v, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal,
  // ...): [B, S, H, D], a causal prefill of 512 tokens, 32 query and 8 KV heads.
  const TorchOpCost flash = CostTorchOp(
      "aten::_flash_attention_forward",
      Shapes({{2, 512, 32, 64}, {2, 512, 8, 64}, {2, 512, 8, 64}, {}, {}, {}, {}, {}, {}, {}},
             {"c10::Half", "c10::Half", "c10::Half", "", "", "Scalar", "Scalar", "Scalar", "Scalar",
              "Scalar"},
             {"", "", "", "", "", "512", "512", "0.", "True", "False"}));
  ASSERT_TRUE(flash.flops.has_value()) << flash.note;
  EXPECT_DOUBLE_EQ(*flash.flops, 2.0 * 2 * 32 * 512 * 512 * (64 + 64));
  EXPECT_NE(flash.note.find("causal=True"), std::string::npos) << flash.note;
  // _efficient_attention_forward(q, k, v, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
  // max_seqlen_k, dropout_p, custom_mask_type, ...): [B, S, H, D]; mask type 1 is causal.
  const TorchOpCost eff = CostTorchOp(
      "aten::_efficient_attention_forward",
      Shapes({{1, 100, 4, 32}, {1, 300, 4, 32}, {1, 300, 4, 48}, {}, {}, {}, {}, {}, {}, {}, {}},
             {"float", "float", "float", "", "", "", "", "", "Scalar", "Scalar", "Scalar"},
             {"", "", "", "", "", "", "", "", "0.", "1", "False"}));
  ASSERT_TRUE(eff.flops.has_value()) << eff.note;
  EXPECT_DOUBLE_EQ(*eff.flops, 2.0 * 4 * 100 * 300 * (32 + 48));
  EXPECT_DOUBLE_EQ(*eff.min_bytes,
                   (4 * 100 * 32 + 4 * 300 * 32 + 4 * 300 * 48 + 4 * 100 * 48) * 4.0);
  EXPECT_NE(eff.note.find("causal=True"), std::string::npos) << eff.note;
  // Packed (varlen) sequences: the cumulative lengths are tensors, the pairs per sequence are
  // not in the trace, so no figures (not the quadratic count over every token).
  const TorchOpCost packed = CostTorchOp(
      "aten::_flash_attention_forward",
      Shapes({{1000, 32, 64}, {1000, 8, 64}, {1000, 8, 64}, {5}, {5}, {}, {}, {}, {}, {}},
             {"c10::Half", "c10::Half", "c10::Half", "int", "int", "Scalar", "Scalar", "Scalar",
              "Scalar", "Scalar"},
             {"", "", "", "", "", "300", "300", "0.", "True", "False"}));
  EXPECT_FALSE(packed.flops.has_value());
  EXPECT_NE(packed.note.find("packed sequences"), std::string::npos) << packed.note;
}

// HuggingFace's RMSNorm (x.pow(2).mean(-1, keepdim=True)), its static-cache write and its
// position ids, as recorded in the same trace.
TEST(TorchOpCost, ReductionsCacheWritesAndRanges) {
  const TorchOpCost mean = CostTorchOp(
      "aten::mean", Shapes({{1, 1, 4096}, {}, {}, {}}, {"float", "ScalarList", "Scalar", ""},
                           {"", "[-1]", "True", ""}));
  ASSERT_TRUE(mean.flops.has_value()) << mean.note;
  EXPECT_DOUBLE_EQ(*mean.flops, 4096);
  EXPECT_DOUBLE_EQ(*mean.min_bytes, (4096 + 1) * 4.0);
  EXPECT_NE(mean.note.find("[1, 1, 1]"), std::string::npos) << mean.note;
  const TorchOpCost sum = CostTorchOp("aten::sum", Shapes({{3, 5}}, {"c10::Half"}));
  EXPECT_DOUBLE_EQ(*sum.min_bytes, (15 + 1) * 2.0);  // no dims: the whole tensor
  const TorchOpCost bad = CostTorchOp(
      "aten::amax",
      Shapes({{3, 5}, {}, {}}, {"float", "ScalarList", "Scalar"}, {"", "[4]", "False"}));
  EXPECT_FALSE(bad.flops.has_value());
  const TorchOpCost ic = CostTorchOp(
      "aten::index_copy_",
      Shapes({{1, 8, 4097, 128}, {}, {1}, {1, 8, 1, 128}},
             {"c10::BFloat16", "Scalar", "long int", "c10::BFloat16"}, {"", "2", "", ""}));
  ASSERT_TRUE(ic.min_bytes.has_value()) << ic.note;
  EXPECT_DOUBLE_EQ(*ic.flops, 0);
  EXPECT_DOUBLE_EQ(*ic.min_bytes, 8 + 2 * 8 * 128 * 2.0);  // index, source read, slots written
  const TorchOpCost ar = CostTorchOp(
      "aten::arange",
      Shapes({{}, {}, {}, {}, {}}, {"Scalar", "", "", "", "Scalar"}, {"1", "", "", "", "False"}));
  ASSERT_TRUE(ar.min_bytes.has_value()) << ar.note;
  EXPECT_DOUBLE_EQ(*ar.min_bytes, 8);
  // arange.start_step(start, end, step, dtype, layout, device, pin_memory) with a dtype given:
  // the bounds are the first three, whatever else is recorded as a Scalar.
  const TorchOpCost ar3 = CostTorchOp(
      "aten::arange", Shapes({{}, {}, {}, {}, {}, {}, {}},
                             {"Scalar", "Scalar", "Scalar", "Scalar", "Scalar", "", "Scalar"},
                             {"2", "11", "3", "4", "0", "", "False"}));
  ASSERT_TRUE(ar3.min_bytes.has_value()) << ar3.note;
  EXPECT_DOUBLE_EQ(*ar3.min_bytes, 3 * 8.0);  // 2, 5, 8
  // arange(end, dtype=torch.long, layout=strided): 5 elements, not start 5 and end 4.
  const TorchOpCost ar1 = CostTorchOp(
      "aten::arange", Shapes({{}, {}, {}, {}, {}}, {"Scalar", "Scalar", "Scalar", "", "Scalar"},
                             {"5", "4", "0", "", "False"}));
  ASSERT_TRUE(ar1.min_bytes.has_value()) << ar1.note;
  EXPECT_DOUBLE_EQ(*ar1.min_bytes, 5 * 8.0);
  // sum(x, dtype=torch.float32) records the ScalarType where a dim list would be: a full sum.
  const TorchOpCost sum_dtype =
      CostTorchOp("aten::sum", Shapes({{3, 5}, {}}, {"c10::BFloat16", "Scalar"}, {"", "6"}));
  ASSERT_TRUE(sum_dtype.min_bytes.has_value()) << sum_dtype.note;
  EXPECT_DOUBLE_EQ(*sum_dtype.min_bytes, (15 + 1) * 2.0);
  // Out of place, index_copy copies self whole around the source.
  const TorchOpCost ic_out = CostTorchOp(
      "aten::index_copy",
      Shapes({{1, 8, 4097, 128}, {}, {1}, {1, 8, 1, 128}},
             {"c10::BFloat16", "Scalar", "long int", "c10::BFloat16"}, {"", "2", "", ""}));
  ASSERT_TRUE(ic_out.min_bytes.has_value()) << ic_out.note;
  EXPECT_DOUBLE_EQ(*ic_out.min_bytes, 8 + (8 * 128 + 2 * 8 * 4097 * 128) * 2.0);
  // A size too long for an int64 is not a size.
  EXPECT_FALSE(CostTorchOp("aten::arange", Shapes({{}}, {"Scalar"}, {"99999999999999999999"}))
                   .min_bytes.has_value());
}

TEST(TorchOpCost, PointwiseNormsAndCopies) {
  const TorchOpCost gelu = CostTorchOp("aten::gelu", Shapes({{4, 1024}, {}}, {"c10::Half", ""}));
  EXPECT_DOUBLE_EQ(*gelu.flops, 5.0 * 4096);
  EXPECT_DOUBLE_EQ(*gelu.min_bytes, 2 * 4096 * 2.0);
  const TorchOpCost bn = CostTorchOp(
      "aten::cudnn_batch_norm",
      Shapes({{2, 16, 8, 8}, {16}, {16}, {16}, {16}, {}, {}, {}},
             {"float", "float", "float", "float", "float", "Scalar", "Scalar", "Scalar"},
             {"", "", "", "", "", "False", "0.1", "1e-05"}));
  EXPECT_DOUBLE_EQ(*bn.flops, 2.0 * 2048);  // inference: scale + shift
  const TorchOpCost rms = CostTorchOp(
      "aten::rms_norm",
      Shapes({{8, 512}, {}, {512}, {}}, {"c10::BFloat16", "ScalarList", "c10::BFloat16", ""}));
  EXPECT_DOUBLE_EQ(*rms.flops, 4.0 * 8 * 512);
  EXPECT_DOUBLE_EQ(*rms.min_bytes, (2 * 8 * 512 + 512) * 2.0);
  const TorchOpCost emb =
      CostTorchOp("aten::embedding", Shapes({{1000, 64}, {4, 16}, {}, {}, {}},
                                            {"float", "long int", "Scalar", "Scalar", "Scalar"}));
  EXPECT_DOUBLE_EQ(*emb.flops, 0);
  EXPECT_DOUBLE_EQ(*emb.min_bytes, 64 * 8 + 2 * (4 * 16 * 64) * 4.0);
  TorchOpShapes cat = Shapes({{}, {}}, {"TensorList", "Scalar"}, {"", "0"});
  cat.lists = {{{2, 3}, {4, 3}}, {}};
  const TorchOpCost c = CostTorchOp("aten::cat", cat);
  EXPECT_DOUBLE_EQ(*c.flops, 0);
  EXPECT_FALSE(c.min_bytes.has_value());  // TensorList members carry no dtype
  EXPECT_NE(c.note.find("18 elements"), std::string::npos) << c.note;
  const TorchOpCost odd = CostTorchOp("aten::add", Shapes({{4}, {4}}, {"c10::Float4", "float"}));
  EXPECT_DOUBLE_EQ(*odd.flops, 4);
  EXPECT_NE(odd.note.find("dtype c10::Float4"), std::string::npos) << odd.note;
  EXPECT_NE(CostTorchOp("aten::nonzero", Shapes({{4}}, {"float"})).note.find("no cost rule"),
            std::string::npos);
}

// --------------------------------------------------------------------------- conformance

// The real kineto trace (HolisticTraceAnalysis alexnet on A100, recorded without shapes). The
// expected numbers were counted independently with Python:
//   python3 -c 'import gzip,json; d=json.load(gzip.open(P)); ev=d["traceEvents"];
//     k=[e for e in ev if e.get("cat")=="kernel"]; print(len(k), sum(e["dur"] for e in k))'
// -> 79 kernels, 10692 us; with gpu_memcpy (16) and gpu_memset (3): 98 events, 66203 us;
// deviceProperties[0].name "NVIDIA A100-PG509-200", 8.0, 108 SMs; the innermost cpu_op that
// encloses each event's cuda_runtime call (same pid/tid): 98 of 98 joined, 69 distinct ops,
// 31 events on aten::cudnn_convolution, 14 on aten::addmm; earliest ts 1695835542481129 us.
TEST(TorchConformance, AlexnetA100Trace) {
  const std::string path =
      ROOFLINE_SOURCE_DIR "/../shared/samples/profiles/torch_trace_alexnet_a100.json.gz";
  ROOFLINE_REQUIRE_SHARED_SAMPLE(path);
  const TorchTrace t = Load(path);
  EXPECT_EQ(t.format, "kineto (cpu_op / kernel)");
  EXPECT_EQ(t.device_name, "NVIDIA A100-PG509-200");
  EXPECT_EQ(t.cc, "8.0");
  EXPECT_EQ(t.num_sms, 108);
  EXPECT_EQ(t.schema_version, 1);
  EXPECT_EQ(t.events, 1408);
  EXPECT_FALSE(t.has_shapes);
  EXPECT_DOUBLE_EQ(t.time_origin_us, 1695835542481129.0);
  ASSERT_EQ(t.kernels.size(), 98u);
  int kernels = 0;
  double kernel_us = 0, all_us = 0;
  std::map<std::string, int> per_op;
  for (const TorchKernel& k : t.kernels) {
    const bool copy = k.name.rfind("Memcpy", 0) == 0 || k.name.rfind("Memset", 0) == 0;
    if (!copy) ++kernels, kernel_us += k.duration_s * 1e6;
    all_us += k.duration_s * 1e6;
    if (copy) {
      EXPECT_EQ(k.op_class, OpClass::kCopy);
    }
    ASSERT_GE(k.op, 0) << k.name;
    ++per_op[t.ops[k.op].name];
  }
  EXPECT_EQ(kernels, 79);
  EXPECT_NEAR(kernel_us, 10692, 1e-6);
  EXPECT_NEAR(all_us, 66203, 1e-6);
  EXPECT_EQ(t.ops.size(), 69u);
  EXPECT_EQ(per_op["aten::cudnn_convolution"], 31);
  EXPECT_EQ(per_op["aten::addmm"], 14);
  EXPECT_EQ(per_op["aten::copy_"], 16);
}

}  // namespace profile_torch_test
}  // namespace roofline
