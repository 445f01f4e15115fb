// Lowering general networks to the cost model: FLOPs from closed forms, bytes, parameters,
// bounds, uncosted nodes and sweeps over a symbolic dimension.
#include "roofline/network_analysis.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

#include "roofline/network_report.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace network_analysis_test {

std::string Fixture(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/graphs/" + name;
}

/// One tensor engine of 1 TFLOP/s and one memory level of 1 GB/s: every byte crosses once, so
/// bytes and times can be written down by hand.
const Device& SimpleDevice() {
  static const Device d = [] {
    Result<Device> r = ParseDevice(testing::SimpleDeviceJson(1e12, 1e9), "simple.json");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::move(r).value();
  }();
  return d;
}

NetworkAnalysis Analyze(const std::string& file, const DimBindings& dims, const CostModel& m) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture(file));
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  Result<NetworkAnalysis> a = AnalyzeNetwork(*g, dims, m);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return std::move(a).value();
}

/// The kernel of node `name`.
size_t KernelOf(const NetworkAnalysis& a, const std::string& name) {
  for (size_t i = 0; i < a.info.size(); ++i) {
    if (a.info[i].node == name) return i;
  }
  ADD_FAILURE() << "no kernel " << name;
  return 0;
}

TEST(NetworkAnalysis, SmallConvNet) {
  const CostModel m(SimpleDevice());
  const NetworkAnalysis a = Analyze("small_cnn.json", {}, m);
  // conv1 16*3*3*3 + bn weight/bias 2*16 + conv2 32*16*3*3 + 32 + fc 10*32 + 10; the two
  // running statistics (parameter: false) are buffers.
  EXPECT_EQ(a.parameters, 432 + 32 + 4608 + 32 + 320 + 10);
  EXPECT_EQ(a.weight_bytes, (5434 + 32) * 4.0);
  EXPECT_EQ(a.nodes, 9);
  EXPECT_EQ(a.views, 1);
  EXPECT_EQ(a.kernels.size(), 8u);
  EXPECT_EQ(a.uncosted.count, 0);
  // Matrix FLOPs, 2 per MAC: conv1 2*N*O*Ho*Wo*C*kh*kw = 2*1*16*32*32*3*3*3, conv2
  // 2*1*32*8*8*16*3*3, fc 2*1*10*32.
  const double conv1 = 2.0 * 16 * 32 * 32 * 3 * 3 * 3;
  const double conv2 = 2.0 * 32 * 8 * 8 * 16 * 3 * 3;
  const double fc = 2.0 * 10 * 32;
  EXPECT_EQ(a.matrix_flops, conv1 + conv2 + fc);
  EXPECT_EQ(a.info[KernelOf(a, "conv1")].matrix_flops, conv1);
  // Other FLOPs: conv2 bias (N*O*Ho*Wo), fc bias (10), batch norm 2/element, relu 1/element,
  // max pool 2x2 per output, global pool 8*8 per output, softmax 5/element.
  const double other = 32 * 64 + 10 + 2 * 16384 + 16384 + 4096 * 4 + 32 * 64 + 5 * 10;
  EXPECT_EQ(a.totals.flops, conv1 + conv2 + fc + other);
  // Bytes (fp32, each operand once): conv1 reads x 3*32*32, w 432, writes 16*32*32 elements.
  EXPECT_EQ(a.costs[KernelOf(a, "conv1")].bytes[0], (3072 + 432 + 16384) * 4.0);
  // batch norm: x, four vectors of 16, y.
  EXPECT_EQ(a.costs[KernelOf(a, "bn1")].bytes[0], (16384 + 64 + 16384) * 4.0);
  EXPECT_EQ(a.costs[KernelOf(a, "pool")].bytes[0], (16384 + 4096) * 4.0);
  EXPECT_EQ(a.costs[KernelOf(a, "fc")].bytes[0], (32 + 320 + 10 + 10) * 4.0);
  EXPECT_EQ(a.totals.bytes[0], 476896.0);
  EXPECT_DOUBLE_EQ(a.totals.time_s, 476896.0 / 1e9);  // every kernel memory-bound at 1 GB/s
  EXPECT_EQ(NameOf(a.totals.verdict, m.device()), "memory:hbm");
  EXPECT_EQ(m.BoundName(a.costs[0]), "memory:hbm");
  // The sum of the kernels is the total.
  double sum = 0;
  for (const KernelCost& c : a.costs) sum += c.flops;
  EXPECT_EQ(sum, a.totals.flops);
}

TEST(NetworkAnalysis, BatchScalesActivationsNotParameters) {
  const CostModel m(SimpleDevice());
  const NetworkAnalysis one = Analyze("small_cnn.json", {}, m);
  const NetworkAnalysis four = Analyze("small_cnn.json", {{"batch", 4}}, m);
  EXPECT_EQ(four.dims.at("batch"), 4);
  EXPECT_EQ(four.matrix_flops, 4 * one.matrix_flops);
  EXPECT_EQ(four.parameters, one.parameters);
  EXPECT_GT(four.totals.bytes[0], one.totals.bytes[0]);
  EXPECT_LT(four.totals.bytes[0], 4 * one.totals.bytes[0]);  // weights are read once per pass
}

TEST(NetworkAnalysis, TransformerBlock) {
  const CostModel m(SimpleDevice());
  for (int64_t b : {1, 2, 8}) {
    const NetworkAnalysis a = Analyze("transformer_block.json", {{"batch", b}}, m);
    // T = 128 b tokens: linears 2*T*256*(768 + 256 + 1024) + 2*T*1024*256; attention over
    // 4b sequences ("4*batch") of 128 queries and keys, d = dv = 64: 2*4b*128*128*(64+64).
    const double t = 128.0 * b;
    const double linears = 2 * t * 256 * (768 + 256 + 1024) + 2 * t * 1024 * 256;
    const double attention = 2 * 4.0 * b * 128 * 128 * 128;
    EXPECT_EQ(a.matrix_flops, linears + attention) << "batch " << b;
    EXPECT_EQ(a.info[KernelOf(a, "sdpa")].matrix_flops, attention);
    // ln: 8 FLOPs per element (mean 1, variance 3, normalize 2, affine 2), as NormSpec and the
    // profile FLOP counter count it (it was 7 until the two were made to agree).
    EXPECT_EQ(a.costs[KernelOf(a, "ln1")].flops, 8 * t * 256);
    EXPECT_EQ(a.costs[KernelOf(a, "gelu")].flops, 8 * t * 1024);
    // split_heads copies 3 x 4b x 128 x 64 bf16 elements out of qkv: bytes only.
    EXPECT_EQ(a.costs[KernelOf(a, "split_heads")].flops, 0);
    EXPECT_EQ(a.costs[KernelOf(a, "split_heads")].bytes[0], 2 * 2 * t * 768);
  }
  const NetworkAnalysis a = Analyze("transformer_block.json", {}, m);
  EXPECT_EQ(a.dims.at("batch"), 2);  // the file's default
  EXPECT_EQ(a.parameters,
            512 + 768 * 256 + 768 + 256 * 256 + 256 + 512 + 1024 * 256 + 1024 + 256 * 1024 + 256);
}

TEST(NetworkAnalysis, EveryOpKind) {
  const CostModel m(SimpleDevice());
  const NetworkAnalysis a = Analyze("all_ops.json", {}, m);
  auto flops = [&](const char* n) { return a.costs[KernelOf(a, n)].flops; };
  auto matrix = [&](const char* n) { return a.info[KernelOf(a, n)].matrix_flops; };
  auto bytes = [&](const char* n) { return a.costs[KernelOf(a, n)].bytes[0]; };
  // Batched matmul, B [4, 24, 32] transposed and broadcast over A's leading 2: 2*8*16*24*32.
  EXPECT_EQ(matrix("mm"), 2.0 * 8 * 16 * 24 * 32);
  EXPECT_EQ(bytes("mm"), (8 * 16 * 32 + 4 * 24 * 32 + 8 * 16 * 24) * 2.0);
  // Bias: batch*m*n vector FLOPs on top, not matrix FLOPs.
  EXPECT_EQ(matrix("mm_bias"), 2.0 * 16 * 24 * 32);
  EXPECT_EQ(flops("mm_bias"), 2.0 * 16 * 24 * 32 + 16 * 24);
  // Transposed conv: 2*N*C_in*H*W*(O/g)*kh*kw = 2*1*8*8*8*4*4*4.
  EXPECT_EQ(matrix("conv_t"), 2.0 * 8 * 64 * 4 * 16);
  EXPECT_EQ(bytes("conv_t"), (8 * 64 + 8 * 4 * 16 + 4 * 18 * 18) * 2.0);
  EXPECT_EQ(matrix("conv1d"), 2.0 * 6 * 96 * 4 * 5);            // 2*N*O*L_out*C*k
  EXPECT_EQ(matrix("dwconv"), 2.0 * 8 * 100 * 1 * 9);           // groups = C: C/g = 1
  EXPECT_EQ(matrix("conv3d"), 2.0 * 3 * (2 * 4 * 4) * 2 * 27);  // 2*N*O*D*H*W*C*kd*kh*kw
  // Causal GQA attention, 16 queries at the end of 20 keys: 16*5 + 16*15/2 = 200 visible pairs;
  // 2*B*H*pairs*(D + Dv) tensor FLOPs plus 5 per score for the online softmax.
  EXPECT_EQ(matrix("attn"), 2.0 * 8 * 200 * (32 + 48));
  EXPECT_EQ(flops("attn"), 2.0 * 8 * 200 * (32 + 48) + 5.0 * 8 * 200);
  EXPECT_EQ(flops("rms"), 4.0 * 256);  // 4 per element
  EXPECT_EQ(flops("gn"), 8.0 * 800);   // group norm: as LayerNorm, 8 per element
  EXPECT_EQ(bytes("gn"), (800 + 8 + 8 + 800) * 2.0);
  EXPECT_EQ(flops("inorm"), 8.0 * 800);
  EXPECT_EQ(flops("mean"), 256);       // one per input element
  EXPECT_EQ(flops("up"), 4.0 * 3200);  // linear: 4 per output element
  EXPECT_EQ(flops("emb"), 0);
  EXPECT_EQ(bytes("emb"), 5 * 8 + 5 * 16 * 2 + 5 * 16 * 2);  // int64 ids, gathered rows, output
  EXPECT_EQ(flops("cat"), 0);
  EXPECT_EQ(bytes("cat"), (256 + 256 + 512) * 2.0);
  EXPECT_EQ(bytes("cast"), 256 * 2 + 256 * 4);  // fp16 in, fp32 out
  EXPECT_EQ(flops("bias_add"), 256);
  EXPECT_EQ(bytes("bias_add"), (256 + 64 + 256) * 2.0);  // the broadcast bias read once
  // The view has no kernel; the unknown node is listed, not dropped.
  EXPECT_EQ(a.nodes, 18);
  EXPECT_EQ(a.views, 1);
  EXPECT_EQ(a.kernels.size(), 16u);
  EXPECT_EQ(a.uncosted.count, 1);
  EXPECT_EQ(a.uncosted.output_bytes, 256 * 2 * 8);
  EXPECT_EQ(a.uncosted.by_op.at("aten::nonzero"), 1);
  EXPECT_DOUBLE_EQ(a.uncosted.share_of_nodes, 1.0 / 17);
  EXPECT_DOUBLE_EQ(a.uncosted.share_of_bytes, 4096.0 / 41672);
  const std::string table = RenderNetworkTable(a, m);
  EXPECT_NE(table.find("not costed: 1 nodes"), std::string::npos) << table;
  EXPECT_NE(table.find("aten::nonzero x1"), std::string::npos);
  // The module column only where a module is not the head of its kernel's name ("<module>/op"
  // repeats it; a terminal's width is kept for the names).
  NetworkAnalysis other = a;
  bool headed = true;
  for (size_t i = 0; i < a.info.size(); ++i) {
    const std::string& mod = a.info[i].module;
    const std::string& name = a.costs[i].name;
    headed = headed && (mod.empty() || name == mod || name.rfind(mod + "/", 0) == 0 ||
                        name.rfind(mod + ".", 0) == 0);
  }
  EXPECT_EQ(table.find(" module "), headed ? std::string::npos : table.find(" module ")) << table;
  other.info[0].module = "some.other.module";
  const std::string with = RenderNetworkTable(other, m);
  EXPECT_NE(with.find("kernel"), std::string::npos);
  EXPECT_NE(with.substr(0, with.find("\n---")).find("module"), std::string::npos) << with;
}

TEST(NetworkAnalysis, BindingResourceOnARealDevice) {
  // A100: ridge 312 TFLOP/s / 2.04 TB/s ~ 153 FLOP/B. fc1 (n = 1024, k = 256) at T tokens has
  // intensity T*n*k / (T*k + n*k + T*n) in bf16: ~79 at batch 1 (T = 128), ~200 at batch 64.
  const CostModel m(testing::Dev("a100-sxm-80gb"));
  const NetworkAnalysis small = Analyze("transformer_block.json", {{"batch", 1}}, m);
  const NetworkAnalysis big = Analyze("transformer_block.json", {{"batch", 64}}, m);
  EXPECT_EQ(m.BoundName(small.costs[KernelOf(small, "fc1")]), "memory:hbm");
  EXPECT_EQ(m.BoundName(big.costs[KernelOf(big, "fc1")]), "compute:tensor.bf16");
  EXPECT_EQ(m.BoundName(big.costs[KernelOf(big, "gelu")]).rfind("memory:", 0), 0u);
}

Result<NetworkAnalysis> AnalyzeText(const std::string& nodes, const std::string& tensors) {
  Result<NetworkGraph> g =
      ParseGraphJson(R"({"format": "roofline-graph", "version": 1, "tensors": {)" + tensors +
                         R"(}, "nodes": [)" + nodes + "]}",
                     "g.json");
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  static const CostModel m(SimpleDevice());
  return AnalyzeNetwork(*g, {}, m);
}

TEST(NetworkAnalysis, InconsistentNodesNameTheNode) {
  const std::string t =
      R"("a": {"shape": [4, 8], "dtype": "fp16"}, "b": {"shape": [9, 3], "dtype": "fp16"},
         "c": {"shape": [4, 3], "dtype": "fp16"}, "x": {"shape": [1, 4, 8, 8], "dtype": "fp16"},
         "w": {"shape": [6, 3, 3, 3], "dtype": "fp16"}, "y": {"shape": [1, 6, 6, 6], "dtype": "fp16"})";
  Result<NetworkAnalysis> mm =
      AnalyzeText(R"({"name": "mm", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]})", t);
  ASSERT_FALSE(mm.ok());
  EXPECT_EQ(mm.status().where(), "g.json: nodes[0]");
  EXPECT_NE(mm.status().what().find("node 'mm' (matmul): A 'a' has k = 8 but B 'b' has k = 9"),
            std::string::npos)
      << mm.status().ToString();
  Result<NetworkAnalysis> conv =
      AnalyzeText(R"({"name": "c1", "op": "conv", "inputs": ["x", "w"], "outputs": ["y"]})", t);
  ASSERT_FALSE(conv.ok());
  EXPECT_NE(conv.status().what().find("node 'c1' (conv): W 'w' is [6, 3, ...], expected [6, 4"),
            std::string::npos)
      << conv.status().ToString();
  Result<NetworkAnalysis> pool =
      AnalyzeText(R"({"name": "p", "op": "pool", "inputs": ["x"], "outputs": ["y"]})", t);
  ASSERT_FALSE(pool.ok());
  EXPECT_NE(pool.status().what().find("attrs.kernel missing"), std::string::npos);
}

TEST(NetworkAnalysis, MatmulBatchDimsBroadcastBothWays) {
  // numpy matmul semantics: [4, 1, 2, 8] x [3, 8, 5] -> [4, 3, 2, 5], 12 products of 2 x 5 x 8.
  const std::string t =
      R"("a": {"shape": [4, 1, 2, 8], "dtype": "fp16"}, "b": {"shape": [3, 8, 5], "dtype": "fp16"},
         "c": {"shape": [4, 3, 2, 5], "dtype": "fp16"})";
  Result<NetworkAnalysis> r =
      AnalyzeText(R"({"name": "mm", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]})", t);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->matrix_flops, 2.0 * 12 * 2 * 5 * 8);
  const auto& spec = std::get<MatmulSpec>(r->graph.ops().at(0).spec);
  EXPECT_EQ(spec.batch, 12);
  // 3 distinct B matrices (fewer than A's 4): B is counted once per distinct matrix.
  EXPECT_EQ(spec.b_broadcast, 4);
}

TEST(NetworkAnalysis, MatmulExplicitSizesAndTransposeA) {
  // Explicit sizes (what the ONNX frontend writes for Einsum): "bij,bjk->bik" on [2, 3, 4] x
  // [2, 4, 5] is batch 2, m 3, n 5, k 4.
  const std::string t =
      R"("a": {"shape": [2, 3, 4], "dtype": "fp32"}, "b": {"shape": [2, 4, 5], "dtype": "fp32"},
         "c": {"shape": [2, 3, 5], "dtype": "fp32"}, "at": {"shape": [8, 3], "dtype": "fp32"},
         "bt": {"shape": [8, 5], "dtype": "fp32"}, "ct": {"shape": [3, 5], "dtype": "fp32"})";
  Result<NetworkAnalysis> e = AnalyzeText(
      R"({"name": "e", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"],
          "attrs": {"batch": 2, "m": 3, "n": 5, "k": 4}})",
      t);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->matrix_flops, 2.0 * 2 * 3 * 5 * 4);
  // transpose_a: A [8, 3] read as [3, 8].
  Result<NetworkAnalysis> ta = AnalyzeText(
      R"({"name": "g", "op": "matmul", "inputs": ["at", "bt"], "outputs": ["ct"],
          "attrs": {"transpose_a": 1}})",
      t);
  ASSERT_TRUE(ta.ok()) << ta.status().ToString();
  EXPECT_EQ(ta->matrix_flops, 2.0 * 3 * 5 * 8);
  // Explicit sizes that disagree with the output are an error naming the node.
  Result<NetworkAnalysis> bad = AnalyzeText(
      R"({"name": "e", "op": "matmul", "inputs": ["a", "b"], "outputs": ["c"],
          "attrs": {"batch": 3, "m": 3, "n": 5, "k": 4}})",
      t);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().what().find("node 'e' (matmul): output 'c' has 30 elements"),
            std::string::npos)
      << bad.status().ToString();
}

TEST(NetworkAnalysis, MaxPoolIndicesAreWrittenNotComputed) {
  // max_pool2d_with_indices: 3x3 windows over [1, 4, 8, 8] -> values and int64 indices
  // [1, 4, 4, 4]. FLOPs: 9 per pooled value (64 x 4 = 256 values); bytes: X, Y and the indices.
  const std::string t =
      R"("x": {"shape": [1, 4, 8, 8], "dtype": "fp32"}, "y": {"shape": [1, 4, 4, 4], "dtype": "fp32"},
         "i": {"shape": [1, 4, 4, 4], "dtype": "int64"})";
  Result<NetworkAnalysis> r = AnalyzeText(
      R"({"name": "p", "op": "pool", "inputs": ["x"], "outputs": ["y", "i"],
          "attrs": {"kind": "max", "kernel": [3, 3], "stride": [2, 2], "padding": [1, 1, 1, 1]}})",
      t);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->totals.flops, 9.0 * 64);
  EXPECT_EQ(r->costs.at(0).bytes.at(0), 4.0 * 256 + 4.0 * 64 + 8.0 * 64);
}

TEST(NetworkAnalysis, UnboundDimensionIsAnError) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("bad_unbound_dim.json"));
  ASSERT_TRUE(g.ok());
  const CostModel m(SimpleDevice());
  Result<NetworkAnalysis> a = AnalyzeNetwork(*g, {}, m);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().where().find("dims.batch"), std::string::npos);
  EXPECT_TRUE(AnalyzeNetwork(*g, {{"batch", 2}}, m).ok());
}

// --dtype and --tf32 on a graph: every floating-point tensor re-typed (integer ones kept), the
// FLOPs unchanged, the bytes of the new width, and fp32 products on TF32 tensor cores.
TEST(NetworkRetype, FloatingPointTensorsTakeTheNewDTypeAndIntegersStay) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("all_ops.json"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const CostModel h100(testing::Dev("h100-sxm"));
  Result<NetworkAnalysis> before = AnalyzeNetwork(*g, {}, h100);
  ASSERT_TRUE(before.ok());
  int floats = 0, ints = 0;
  for (const NetTensor& t : g->tensors) {
    floats += t.bits == 0 && (t.dtype == DType::kFp32 || t.dtype == DType::kFp16);
    ints += t.bits == 64;
  }
  ASSERT_GT(floats, 0);
  ASSERT_GT(ints, 0);  // int64 indices
  NetworkGraph fp8 = *g;
  NetRetype r;
  r.dtype = DType::kFp8;
  Result<int> n = RetypeNetwork(fp8, r);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, floats);
  for (size_t i = 0; i < fp8.tensors.size(); ++i) {
    const NetTensor& t = fp8.tensors[i];
    if (g->tensors[i].bits == 64) {  // int64 indices: as they were
      EXPECT_EQ(t.bits, 64) << t.name;
      EXPECT_EQ(t.dtype, g->tensors[i].dtype) << t.name;
      EXPECT_DOUBLE_EQ(t.ElementBytes(), 8) << t.name;
    } else {
      EXPECT_EQ(t.dtype, DType::kFp8) << t.name;
    }
  }
  EXPECT_NE(fp8.notes.back().find("--dtype fp8: " + std::to_string(floats)), std::string::npos)
      << fp8.notes.back();
  Result<NetworkAnalysis> after = AnalyzeNetwork(fp8, {}, h100);
  ASSERT_TRUE(after.ok());
  EXPECT_DOUBLE_EQ(after->matrix_flops, before->matrix_flops);
  EXPECT_LT(after->weight_bytes, before->weight_bytes);
  // Re-typing again to the same dtype changes nothing.
  EXPECT_EQ(*RetypeNetwork(fp8, r), 0);
  // --tf32 with a dtype other than fp32 has no fp32 products to move.
  r.tf32 = true;
  const Result<int> both = RetypeNetwork(fp8, r);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().ToString().find("--tf32"), std::string::npos);
  r.tf32 = false;
  // A dtype a graph is not re-typed to.
  r.dtype = DType::kInt8;
  const Result<int> bad = RetypeNetwork(fp8, r);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("--dtype"), std::string::npos);
  EXPECT_NE(bad.status().ToString().find("not int8"), std::string::npos);
}

TEST(NetworkRetype, Tf32PutsFp32ProductsOnTensorCoresAndKeepsTheirBytes) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("small_cnn.json"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const CostModel h100(testing::Dev("h100-sxm"));
  Result<NetworkAnalysis> fp32 = AnalyzeNetwork(*g, {}, h100);
  ASSERT_TRUE(fp32.ok());
  NetworkGraph tf32 = *g;
  NetRetype r;
  r.tf32 = true;
  ASSERT_TRUE(RetypeNetwork(tf32, r).ok());
  Result<NetworkAnalysis> t = AnalyzeNetwork(tf32, {}, h100);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->costs.size(), fp32->costs.size());
  int on_tf32 = 0;
  for (size_t i = 0; i < t->costs.size(); ++i) {
    const KernelCost& c = t->costs[i];
    EXPECT_DOUBLE_EQ(c.bytes[0], fp32->costs[i].bytes[0]) << c.name;  // fp32 storage
    EXPECT_DOUBLE_EQ(c.flops, fp32->costs[i].flops) << c.name;
    for (int e = 0; e < c.num_engines; ++e) {
      const std::string name = h100.CeilingName(c.engines[e]);
      if (t->info[i].matrix_flops > 0 && c.engines[e].requested.tensor) {
        EXPECT_EQ(name, "tensor.tf32") << c.name;
        ++on_tf32;
      } else {
        EXPECT_NE(name, "tensor.tf32") << c.name;  // elementwise work stays on fp32 cores
      }
    }
  }
  EXPECT_GT(on_tf32, 0);
  // The products' compute terms are shorter on TF32 tensor cores than on fp32 cores.
  double compute_tf32 = 0, compute_fp32 = 0;
  for (size_t i = 0; i < t->costs.size(); ++i) {
    if (t->info[i].matrix_flops <= 0) continue;
    compute_tf32 += t->costs[i].compute_time_s;
    compute_fp32 += fp32->costs[i].compute_time_s;
  }
  EXPECT_LT(compute_tf32, compute_fp32 / 2);
}

// PyTorch's defaults (torch.backends.cudnn.allow_tf32 true, torch.backends.cuda.matmul.allow_tf32
// false): an fp32 graph's convolutions run on TF32 tensor cores unless --tf32=false, its matmuls
// in FP32 unless --tf32; the note says so.
TEST(NetworkRetype, Fp32ConvolutionsRunOnTf32AsPyTorchsDefault) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("small_cnn.json"));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const CostModel h100(testing::Dev("h100-sxm"));
  auto engines = [&](const NetRetype& r) {
    NetworkGraph graph = *g;
    EXPECT_TRUE(RetypeNetwork(graph, r).ok());
    Result<NetworkAnalysis> a = AnalyzeNetwork(graph, {}, h100);
    EXPECT_TRUE(a.ok());
    std::map<std::string, std::string> by_op;  // op -> the matrix products' ceiling
    for (size_t i = 0; a.ok() && i < a->costs.size(); ++i) {
      const KernelCost& c = a->costs[i];
      int most = -1;  // the engine term doing the product (the most FLOPs)
      for (int e = 0; e < c.num_engines; ++e) {
        if (most < 0 || c.engines[e].flops > c.engines[most].flops) most = e;
      }
      if (a->info[i].matrix_flops > 0 && most >= 0) {
        by_op[a->info[i].op] = h100.CeilingName(c.engines[most]);
      }
    }
    return std::make_pair(by_op, graph.notes);
  };
  NetRetype pytorch;
  pytorch.conv_tf32 = true;
  const auto [by_default, notes] = engines(pytorch);
  EXPECT_EQ(by_default.at("conv"), "tensor.tf32");
  EXPECT_EQ(by_default.at("linear"), "vector.fp32");
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes.back().find("2 fp32 convolution(s) run on TF32 tensor cores, as PyTorch runs "
                              "them by default"),
            std::string::npos)
      << notes.back();
  const auto none = engines(NetRetype{}).first;  // --tf32=false
  EXPECT_EQ(none.at("conv"), "vector.fp32");
  EXPECT_EQ(none.at("linear"), "vector.fp32");
  NetRetype all;
  all.tf32 = true;
  all.conv_tf32 = true;
  const auto every = engines(all).first;  // --tf32
  EXPECT_EQ(every.at("conv"), "tensor.tf32");
  EXPECT_EQ(every.at("linear"), "tensor.tf32");
  // A bf16 graph has no fp32 convolution: nothing moves, no note.
  NetRetype bf16 = pytorch;
  bf16.dtype = DType::kBf16;
  NetworkGraph graph = *g;
  ASSERT_TRUE(RetypeNetwork(graph, bf16).ok());
  EXPECT_FALSE(graph.fp32_conv_on_tf32);
}

// The default is CUDA's: on an NVIDIA GPU with TF32 tensor cores the note and the sweep's title
// say so; on ROCm (TF32 opt-in) and on a GPU without TF32 (a T4) fp32 convolutions stay FP32.
TEST(NetworkRetype, TheTf32DefaultIsCudasOnly) {
  const std::string note = "fp32 convolution(s) run on TF32 tensor cores";
  for (const auto& [hw, on] : std::vector<std::pair<std::string, bool>>{
           {"h100-sxm", true}, {"mi300x", false}, {"t4", false}}) {
    const testing::CliOutput run = testing::RunCli({"model", "resnet-50", "--hw", hw});
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_EQ(run.out.find(note) != std::string::npos, on) << hw;
  }
  const testing::CliOutput sweep =
      testing::RunCli({"sweep", "resnet-50", "--vary", "batch=1:4:x2"});
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  EXPECT_NE(sweep.out.find("sweep batch (fp32 convolutions on TF32)"), std::string::npos)
      << sweep.out.substr(0, 200);
  const testing::CliOutput off =
      testing::RunCli({"sweep", "resnet-50", "--vary", "batch=1:4:x2", "--tf32=false"});
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_NE(off.out.find("sweep batch (--tf32=false)"), std::string::npos)
      << off.out.substr(0, 200);
  // --tf32=false moves nothing in an LLM config and is accepted there; --tf32 is refused.
  EXPECT_EQ(testing::RunCli({"model", "llama-3-8b", "--tf32=false"}).status, 0);
  EXPECT_EQ(testing::RunCli({"model", "llama-3-8b", "--tf32"}).status, 2);
}

Result<NetSweepResult> Sweep(const NetworkGraph& g, const CostModel& m, const std::string& var,
                             std::vector<int64_t> values, const DimBindings& given = {}) {
  Result<NetSweepAxis> axis = MakeNetSweepAxis(g, var, std::move(values), given);
  if (!axis.ok()) return axis.status();
  return SweepNetwork(g, given, m, *axis);
}

TEST(NetworkSweep, FindsTheExactBatchWhereMatricesTurnComputeBound) {
  Result<NetworkGraph> g = LoadGraphFile(Fixture("transformer_block.json"));
  ASSERT_TRUE(g.ok());
  // On an H100 (ridge ~295 FLOP/B) this block's matrices never become compute-bound: fc1's
  // intensity tends to n*k/(n+k) = 204.8. The A100's ridge is lower.
  const CostModel m(testing::Dev("a100-sxm-80gb"));
  Result<NetSweepResult> r = Sweep(*g, m, "batch", {1, 2, 4, 8, 16, 32, 64});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->points.size(), 7u);
  auto name = [&](const std::optional<Verdict>& v) { return v ? r->names.Name(*v) : ""; };
  EXPECT_EQ(name(r->points.front().matrix_bound), "memory:hbm");
  EXPECT_EQ(name(r->points.back().matrix_bound), "compute:tensor.bf16");
  const Crossover* x = nullptr;
  for (const Crossover& c : r->crossovers) {
    if (c.signal.kind == SignalKind::kMatrixKernels) x = &c;
  }
  ASSERT_NE(x, nullptr);
  // Exact: the verdict at value - 1 differs from the one at value.
  auto matrix_bound = [&](int64_t b) {
    Result<NetSweepResult> p = Sweep(*g, m, "batch", {b});
    return name(p->points[0].matrix_bound);
  };
  EXPECT_EQ(matrix_bound(x->int_value - 1), "memory:hbm");
  EXPECT_EQ(matrix_bound(x->int_value), "compute:tensor.bf16");
  const SweepLine l = Describe(*x, *r);
  EXPECT_NE(l.sentence.find("from batch " + l.value), std::string::npos) << l.sentence;
  Result<NetSweepResult> bad = Sweep(*g, m, "height", {1, 2});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "--vary height");
}

TEST(NetworkSweep, AxisSyntax) {
  auto a = ParseDimAxis("height=32:256:x2");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "height");
  EXPECT_EQ(a->second, (std::vector<int64_t>{32, 64, 128, 256}));
  auto bad = ParseDimAxis("height=8:2");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().where(), "--vary height=8:2");
}

}  // namespace network_analysis_test
}  // namespace roofline
