// The ONNX frontend on the fixtures of tools/fixtures/make_onnx_fixtures.py: the mapped graph
// (ops, attributes, shapes after binding, weight and parameter flags) and the errors on bad files.
// Expected numbers are derived from the fixture definitions in that script.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <numeric>
#include <string>

#include "roofline/network.h"
#include "roofline/network_analysis.h"
#include "tests/test_util.h"

namespace roofline {
namespace onnx_frontend_test {

const std::string kDir = std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/onnx/";

#define REQUIRE_ONNX()                                                            \
  if (!OnnxFrontendAvailable()) GTEST_SKIP() << "built without the ONNX library"; \
  static_assert(true, "")

NetworkGraph Load(const std::string& file, const DimBindings& dims = {}) {
  Result<NetworkGraph> r = LoadOnnxModel(kDir + file, dims);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : NetworkGraph();
}

/// The error of loading `file` (fails the test when it loads).
Status LoadError(const std::string& file, const DimBindings& dims = {}) {
  Result<NetworkGraph> r = LoadOnnxModel(kDir + file, dims);
  EXPECT_FALSE(r.ok()) << file << " loaded";
  return r.status();
}

const NetNode* Node(const NetworkGraph& g, const std::string& name) {
  for (const auto& n : g.nodes) {
    if (n.name == name) return &n;
  }
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

const NetTensor* Tensor(const NetworkGraph& g, const std::string& name) {
  for (const auto& t : g.tensors) {
    if (t.name == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return nullptr;
}

std::vector<int64_t> Shape(const NetworkGraph& g, const std::string& name) {
  std::vector<int64_t> out;
  if (const NetTensor* t = Tensor(g, name)) {
    for (const auto& e : t->shape) {
      EXPECT_FALSE(e.symbolic()) << name << ": symbolic entry left after binding";
      out.push_back(e.value);
    }
  }
  return out;
}

int64_t Elements(const NetworkGraph& g, const std::string& name) {
  const auto s = Shape(g, name);
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

std::vector<double> Nums(const NetNode* n, const std::string& key) {
  if (n == nullptr) return {};
  auto it = n->attrs.numbers.find(key);
  return it == n->attrs.numbers.end() ? std::vector<double>{} : it->second;
}

double Num(const NetNode* n, const std::string& key) {
  const auto v = Nums(n, key);
  return v.empty() ? -1 : v[0];
}

std::string Str(const NetNode* n, const std::string& key) {
  if (n == nullptr) return "";
  auto it = n->attrs.strings.find(key);
  return it == n->attrs.strings.end() ? "" : it->second;
}

/// Elements of the weights counted as parameters.
int64_t ParameterCount(const NetworkGraph& g) {
  int64_t total = 0;
  for (const auto& t : g.tensors) {
    if (!t.weight || !t.parameter) continue;
    int64_t n = 1;
    for (const auto& e : t.shape) n *= e.value;
    total += n;
  }
  return total;
}

std::vector<std::string> Ops(const NetworkGraph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  return ops;
}

bool HasNote(const NetworkGraph& g, const std::string& text) {
  for (const auto& n : g.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

using V = std::vector<double>;
using I = std::vector<int64_t>;

TEST(OnnxFrontend, AvailabilityMatchesLoading) {
  Result<NetworkGraph> r = LoadOnnxModel(kDir + "uncosted.onnx", {});
  if (OnnxFrontendAvailable()) {
    EXPECT_TRUE(r.ok()) << r.status().ToString();
  } else {
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().ToString().find("built without the ONNX library"), std::string::npos);
  }
}

TEST(OnnxFrontend, SmallCnnOpsAttrsAndShapes) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("small_cnn.onnx", {{"batch", 2}});
  EXPECT_EQ(Ops(g), (std::vector<std::string>{"conv", "norm", "elementwise", "pool", "conv",
                                              "elementwise", "pool", "view", "linear"}));
  ASSERT_EQ(g.dims.size(), 1u);
  EXPECT_EQ(g.dims[0].first, "batch");
  EXPECT_EQ(g.dims[0].second, 2);
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(Shape(g, "x"), (I{2, 3, 32, 32}));

  const NetNode* conv1 = Node(g, "/conv1/Conv");
  EXPECT_EQ(conv1->module, "conv1");
  EXPECT_EQ(conv1->source, "Conv");
  EXPECT_EQ(conv1->inputs, (std::vector<std::string>{"x", "conv1.weight", "conv1.bias"}));
  EXPECT_EQ(Nums(conv1, "kernel"), (V{3, 3}));
  EXPECT_EQ(Nums(conv1, "padding"), (V{1, 1, 1, 1}));
  EXPECT_EQ(Nums(conv1, "stride"), (V{1, 1}));
  EXPECT_EQ(Num(conv1, "groups"), 1);
  EXPECT_EQ(Shape(g, "c1"), (I{2, 8, 32, 32}));
  // conv2: SAME_UPPER, stride 2 on 16x16: out = ceil(16 / 2) = 8, total pad =
  // (8 - 1) * 2 + 3 - 16 = 1, the odd one at the end: [top 0, left 0, bottom 1, right 1].
  const NetNode* conv2 = Node(g, "/conv2/Conv");
  EXPECT_EQ(Nums(conv2, "padding"), (V{0, 0, 1, 1}));
  EXPECT_EQ(Nums(conv2, "stride"), (V{2, 2}));
  EXPECT_EQ(Shape(g, "c2"), (I{2, 16, 8, 8}));

  EXPECT_EQ(Str(Node(g, "/bn1/BatchNormalization"), "kind"), "batch");
  const NetNode* relu = Node(g, "/relu/Relu");
  EXPECT_EQ(Str(relu, "function"), "relu");
  EXPECT_EQ(Num(relu, "flops_per_element"), 1);
  const NetNode* maxpool = Node(g, "/maxpool/MaxPool");
  EXPECT_EQ(Str(maxpool, "kind"), "max");
  EXPECT_EQ(Nums(maxpool, "kernel"), (V{2, 2}));
  EXPECT_EQ(Nums(maxpool, "stride"), (V{2, 2}));
  const NetNode* gap = Node(g, "/avgpool/GlobalAveragePool");
  EXPECT_EQ(Str(gap, "kind"), "avg");
  EXPECT_EQ(Num(gap, "global"), 1);
  EXPECT_EQ(Nums(gap, "kernel"), (V{8, 8}));     // the whole 8x8 map of conv2
  EXPECT_EQ(Node(g, "/fc/Gemm")->op, "linear");  // Gemm transB=1 with a weight: nn.Linear
  EXPECT_EQ(Shape(g, "y"), (I{2, 10}));
}

TEST(OnnxFrontend, SmallCnnWeightsAndParameters) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("small_cnn.onnx", {{"batch", 1}});
  EXPECT_TRUE(Tensor(g, "conv1.weight")->weight);
  EXPECT_TRUE(Tensor(g, "conv1.weight")->parameter);
  EXPECT_TRUE(Tensor(g, "bn1.running_mean")->weight);
  EXPECT_FALSE(Tensor(g, "bn1.running_mean")->parameter);  // a buffer, like torch's
  EXPECT_FALSE(Tensor(g, "bn1.running_var")->parameter);
  EXPECT_FALSE(Tensor(g, "x")->weight);
  EXPECT_FALSE(Tensor(g, "c1")->weight);
  EXPECT_EQ(Tensor(g, "x")->dtype, DType::kFp32);
  // conv1 8*3*3*3 + 8, bn1 8 + 8, conv2 16*8*3*3, fc 10*16 + 10 = 216 + 8 + 16 + 1152 + 170.
  EXPECT_EQ(ParameterCount(g), 1562);
}

TEST(OnnxFrontend, UnboundSymbolicDimensionNamesInputAndDimension) {
  REQUIRE_ONNX();
  const Status s = LoadError("small_cnn.onnx");
  EXPECT_NE(s.where().find("small_cnn.onnx"), std::string::npos) << s.ToString();
  EXPECT_NE(s.what().find("input 'x' dimension 'batch' is symbolic"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.what().find("--dim batch=N"), std::string::npos) << s.ToString();
}

TEST(OnnxFrontend, BindingAnUnknownDimensionListsTheModelsDimensions) {
  REQUIRE_ONNX();
  const Status s = LoadError("small_cnn.onnx", {{"batch", 1}, {"seq", 4}});
  EXPECT_NE(s.what().find("--dim seq"), std::string::npos) << s.ToString();
  EXPECT_NE(s.what().find("its symbolic dimensions: batch"), std::string::npos) << s.ToString();
  const Status none = LoadError("uncosted.onnx", {{"batch", 1}});
  EXPECT_NE(none.what().find("its inputs have none"), std::string::npos) << none.ToString();
}

TEST(OnnxFrontend, TransformerBlock) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("transformer_block.onnx", {{"batch", 2}, {"seq", 8}});
  EXPECT_EQ(Shape(g, "x"), (I{2, 8, 32}));
  const NetNode* ln = Node(g, "/ln1/LayerNorm");
  EXPECT_EQ(ln->op, "norm");
  EXPECT_EQ(Str(ln, "kind"), "layer");
  EXPECT_EQ(Num(ln, "axis"), 2);
  EXPECT_EQ(Num(ln, "normalized_dims"), 1);  // rank 3 - axis 2
  EXPECT_EQ(Node(g, "/attn/qkv/MatMul")->op, "matmul");
  EXPECT_EQ(Shape(g, "qkv"), (I{2, 8, 96}));
  EXPECT_EQ(Str(Node(g, "/attn/Split"), "function"), "split");
  EXPECT_EQ(Node(g, "/attn/Reshape_q")->op, "view");
  EXPECT_EQ(Str(Node(g, "/attn/Transpose_q"), "function"), "transpose");
  // Einsum bhqd,bhkd->bhqk on [2, 2, 8, 16] x [2, 2, 8, 16]: batch b*h = 4, m = q = 8,
  // n = k = 8, contracted d = 16 (FLOPs 2 * 4 * 8 * 8 * 16).
  const NetNode* einsum = Node(g, "/attn/Einsum");
  EXPECT_EQ(einsum->op, "matmul");
  EXPECT_EQ(Num(einsum, "batch"), 4);
  EXPECT_EQ(Num(einsum, "m"), 8);
  EXPECT_EQ(Num(einsum, "n"), 8);
  EXPECT_EQ(Num(einsum, "k"), 16);
  EXPECT_EQ(Num(einsum, "transpose_b"), 1);  // K given as [b, h, k, d]: [..., n, k]
  EXPECT_EQ(Str(einsum, "equation"), "bhqd,bhkd->bhqk");
  EXPECT_EQ(Shape(g, "scores"), (I{2, 2, 8, 8}));  // inferred by the frontend (libonnx: rank)
  const NetNode* softmax = Node(g, "/attn/Softmax");
  EXPECT_EQ(softmax->op, "softmax");
  EXPECT_EQ(Num(softmax, "axis"), 3);  // -1 of a rank-4 tensor
  EXPECT_EQ(Node(g, "/attn/MatMul")->op, "matmul");
  // The merge shape is computed from Shape(x): a constant once batch and seq are bound.
  EXPECT_EQ(Node(g, "/attn/Concat")->op, "view");
  EXPECT_EQ(Str(Node(g, "/attn/Concat"), "folded"), "constant");
  EXPECT_EQ(Shape(g, "ctx_m"), (I{2, 8, 32}));
  EXPECT_EQ(Node(g, "/attn/proj/MatMul")->op, "matmul");
  // GELU: the bias Add, Div, Erf, Add, Mul, Mul fuse into one node of 6 FLOPs per element.
  const NetNode* gelu = Node(g, "/mlp/act/Mul_1");
  EXPECT_EQ(gelu->op, "elementwise");
  EXPECT_EQ(Str(gelu, "function"), "gelu");
  EXPECT_EQ(Num(gelu, "flops_per_element"), 6);
  EXPECT_EQ(gelu->inputs, (std::vector<std::string>{"fc1_mm", "fc1.bias"}));
  EXPECT_EQ(gelu->outputs, (std::vector<std::string>{"gelu"}));
  for (const auto& n : g.nodes) EXPECT_NE(n.source, "Erf") << n.name << " was not fused";
  int matmuls = 0;
  for (const auto& n : g.nodes) matmuls += n.op == "matmul";
  EXPECT_EQ(matmuls, 6);  // qkv, einsum, probs x v, proj, fc1, fc2
  for (const auto& n : g.nodes) EXPECT_NE(n.op, "unknown") << n.name;
  // ln 2 * (32 + 32), qkv 32*96 + 96, proj 32*32, fc1 32*128 + 128, fc2 128*32; the scalar
  // constants and the int64 shape tensors are no parameters.
  EXPECT_EQ(ParameterCount(g), 128 + 3168 + 1024 + 4224 + 4096);
  EXPECT_FALSE(Tensor(g, "heads_shape")->parameter);
}

TEST(OnnxFrontend, UnetBlockAtANewerOpset) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("unet_block.onnx");
  EXPECT_TRUE(HasNote(g, "opset 21 is newer")) << (g.notes.empty() ? "" : g.notes[0]);
  EXPECT_EQ(Ops(g), (std::vector<std::string>{"conv", "norm", "elementwise", "conv", "resize",
                                              "copy", "conv"}));
  const NetNode* gn = Node(g, "/norm/GroupNorm");
  EXPECT_EQ(Str(gn, "kind"), "group");
  EXPECT_EQ(Num(gn, "groups"), 4);
  EXPECT_EQ(Shape(g, "gn"), (I{1, 16, 16, 16}));  // unknown to libonnx 1.12: filled here
  const NetNode* silu = Node(g, "/act/Mul");
  EXPECT_EQ(Str(silu, "function"), "silu");
  EXPECT_EQ(Num(silu, "flops_per_element"), 5);  // sigmoid 4 + mul 1
  const NetNode* up = Node(g, "/up/ConvTranspose");
  EXPECT_EQ(up->op, "conv");
  EXPECT_EQ(Num(up, "transposed"), 1);
  EXPECT_EQ(Nums(up, "stride"), (V{2, 2}));
  EXPECT_EQ(Shape(g, "up"), (I{1, 8, 32, 32}));  // (16 - 1) * 2 + 2 = 32
  const NetNode* resize = Node(g, "/skip/Resize");
  EXPECT_EQ(Str(resize, "mode"), "nearest");
  EXPECT_EQ(resize->inputs, (std::vector<std::string>{"x"}));
  EXPECT_EQ(Shape(g, "skip"), (I{1, 8, 32, 32}));
  EXPECT_EQ(Str(Node(g, "/Concat"), "function"), "concat");
  EXPECT_EQ(Shape(g, "y"), (I{1, 4, 32, 32}));
  // conv 16*8*9 + 16, gn 16 + 16, up 16*8*2*2 + 8, out 4*16 (the Resize scales are no input).
  EXPECT_EQ(ParameterCount(g), 1168 + 32 + 520 + 64);
}

TEST(OnnxFrontend, AttentionOps) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("attention_ops.onnx");
  const NetNode* a23 = Node(g, "attn23");
  EXPECT_EQ(a23->op, "attention");
  EXPECT_EQ(Num(a23, "causal"), 1);
  EXPECT_EQ(a23->inputs, (std::vector<std::string>{"q", "k", "v"}));
  EXPECT_EQ(Shape(g, "o23"), (I{1, 2, 8, 16}));
  // MultiHeadAttention, 2 heads: Q [1, 8, 32] viewed as [1, 2, 8, 16], K / V [1, 2, 12, 16].
  const NetNode* mha = Node(g, "mha");
  EXPECT_EQ(mha->op, "attention");
  EXPECT_EQ(Num(mha, "causal"), 0);
  ASSERT_EQ(mha->inputs.size(), 3u);
  EXPECT_EQ(Shape(g, mha->inputs[0]), (I{1, 2, 8, 16}));
  EXPECT_EQ(Shape(g, mha->inputs[1]), (I{1, 2, 12, 16}));
  EXPECT_EQ(Node(g, "mha/heads0")->op, "view");
  // com.microsoft Attention: the packed projection [32, 96] is a matmul, then attention.
  const NetNode* proj = Node(g, "ms_attn/qkv");
  EXPECT_EQ(proj->op, "matmul");
  EXPECT_EQ(proj->inputs, (std::vector<std::string>{"x", "qkv.weight", "qkv.bias"}));
  EXPECT_EQ(Shape(g, proj->outputs.at(0)), (I{1, 8, 96}));
  const NetNode* ms = Node(g, "ms_attn");
  EXPECT_EQ(ms->op, "attention");
  EXPECT_EQ(Shape(g, ms->inputs.at(2)), (I{1, 2, 8, 16}));
  EXPECT_EQ(Shape(g, "ms"), (I{1, 8, 32}));
}

TEST(OnnxFrontend, MiscOps) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("misc_ops.onnx");
  // GELU, tanh form: Pow, Mul, Add, Mul, Tanh, Add, Mul, Mul = 8 nodes of 1 FLOP per element.
  const NetNode* gelu = Node(g, "/gelu/Mul_3");
  EXPECT_EQ(Str(gelu, "function"), "gelu_tanh");
  EXPECT_EQ(Num(gelu, "flops_per_element"), 8);
  EXPECT_EQ(gelu->inputs, (std::vector<std::string>{"x"}));
  // ...ij,...jk->...ik on [3, 1, 4, 5] x [1, 2, 5, 6]: the ellipsis broadcasts to [3, 2]
  // (batch 6), i = 4, k = 6, j = 5: FLOPs 2 * 6 * 4 * 6 * 5 = 2 * (3 * 2 * 4 * 5 * 6).
  const NetNode* einsum = Node(g, "einsum");
  EXPECT_EQ(einsum->op, "matmul");
  EXPECT_EQ(Num(einsum, "batch"), 6);
  EXPECT_EQ(Num(einsum, "m"), 4);
  EXPECT_EQ(Num(einsum, "n"), 6);
  EXPECT_EQ(Num(einsum, "k"), 5);
  EXPECT_EQ(Num(einsum, "transpose_b"), -1);  // B is [..., k, n]: no transpose
  EXPECT_EQ(Shape(g, "e_out"), (I{3, 2, 4, 6}));
  // [8] x [8, 4]: the vector is one row (m = 1), k = 8, n = 4.
  const NetNode* vecmat = Node(g, "vecmat");
  EXPECT_EQ(vecmat->op, "matmul");
  EXPECT_EQ(Num(vecmat, "m"), 1);
  EXPECT_EQ(Num(vecmat, "k"), 8);
  EXPECT_EQ(Num(vecmat, "n"), 4);
  EXPECT_EQ(Shape(g, "vm"), (I{4}));
  // Gemm transA: A [8, 3] read as [3, 8]; B [8, 5] is an input, not a weight: matmul.
  const NetNode* gemm = Node(g, "gemm_ta");
  EXPECT_EQ(gemm->op, "matmul");
  EXPECT_EQ(Num(gemm, "transpose_a"), 1);
  EXPECT_EQ(Num(gemm, "m"), 3);
  EXPECT_EQ(Num(gemm, "k"), 8);
  EXPECT_EQ(Num(gemm, "n"), 5);
  // 1-D conv, 2 groups, stride 2, SAME_LOWER on length 10: out 5, total pad
  // (5 - 1) * 2 + 3 - 10 = 1, the odd one at the beginning: padding [1, 0].
  const NetNode* conv = Node(g, "conv1d");
  EXPECT_EQ(conv->op, "conv");
  EXPECT_EQ(Num(conv, "groups"), 2);
  EXPECT_EQ(Nums(conv, "padding"), (V{1, 0}));
  EXPECT_EQ(Nums(conv, "kernel"), (V{3}));
  EXPECT_EQ(Shape(g, "s_out"), (I{1, 4, 5}));
  const NetNode* mean = Node(g, "mean");
  EXPECT_EQ(mean->op, "reduce");
  EXPECT_EQ(Str(mean, "function"), "mean");
  EXPECT_EQ(Nums(mean, "axes"), (V{1}));
  EXPECT_EQ(Str(Node(g, "cast"), "function"), "cast");
  EXPECT_EQ(Tensor(g, "x_half")->dtype, DType::kFp16);
  EXPECT_EQ(Node(g, "slice")->op, "copy");
  EXPECT_EQ(Shape(g, "x_slice"), (I{2, 8}));
}

/// Matrix FLOPs per node name of the analysis of `g` on an H100.
std::map<std::string, double> MatrixFlops(const NetworkGraph& g, double* total = nullptr) {
  const CostModel model(testing::Dev("h100-sxm"));
  Result<NetworkAnalysis> a = AnalyzeNetwork(g, {}, model);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  std::map<std::string, double> out;
  if (!a.ok()) return out;
  for (const auto& k : a->info) out[k.node] = k.matrix_flops;
  if (total != nullptr) *total = a->matrix_flops;
  return out;
}

TEST(OnnxFrontend, MiscOpsAnalyseWithTheFrontendsMatmulSizes) {
  REQUIRE_ONNX();
  // The explicit batch / m / n / k of Einsum, vector MatMul and Gemm transA drive the lowering
  // (their operand shapes alone do not give the products).
  const auto flops = MatrixFlops(Load("misc_ops.onnx"));
  EXPECT_EQ(flops.at("einsum"), 2.0 * 6 * 4 * 6 * 5);  // batch [3, 2], m 4, n 6, k 5
  EXPECT_EQ(flops.at("vecmat"), 2.0 * 1 * 4 * 8);      // [8] x [8, 4]
  EXPECT_EQ(flops.at("gemm_ta"), 2.0 * 3 * 5 * 8);     // [8, 3]^T x [8, 5]
  // Conv: 2 * N * O * L_out * (C / groups) * kernel = 2 * 1 * 4 * 5 * 2 * 3.
  EXPECT_EQ(flops.at("conv1d"), 2.0 * 4 * 5 * 2 * 3);
}

TEST(OnnxFrontend, DynamicBatchShapeChainsAreFolded) {
  REQUIRE_ONNX();
  // dynamic_shapes() of make_onnx_fixtures.py: x [batch, 4, 8]; the class token makes 5 tokens,
  // the head split 2 heads of 8 / 2 = 4, all through run-time Shape chains that libonnx's own
  // data propagation does not resolve.
  const NetworkGraph g = Load("dynamic_shapes.onnx", {{"batch", 3}});
  EXPECT_EQ(Shape(g, "cls"), (I{3, 1, 8}));
  EXPECT_EQ(Shape(g, "h"), (I{3, 5, 8}));
  EXPECT_EQ(Shape(g, "q4"), (I{3, 5, 2, 4}));
  EXPECT_EQ(Shape(g, "scores"), (I{3, 2, 5, 5}));
  for (const auto& n : g.nodes) EXPECT_NE(n.op, "unknown") << n.name;
  // The shape arithmetic stays in the graph, as load-time constants (no kernel).
  // So is the class token's expand: computed from a weight and constants only.
  for (const std::string name : {"/Where", "/Concat_2", "/Div", "/Sqrt", "/Expand"}) {
    EXPECT_EQ(Node(g, name)->op, "view") << name;
    EXPECT_EQ(Str(Node(g, name), "folded"), "constant") << name;
  }
  EXPECT_EQ(Node(g, "/attn/Mul")->op, "elementwise");
  EXPECT_EQ(Node(g, "/Concat_1")->op, "copy");
  // q and k projections: 2 x (2 * 15 rows * 8 * 8); scores: 2 * (3 * 2) * 5 * 5 * 4.
  double total = 0;
  const auto flops = MatrixFlops(g, &total);
  EXPECT_EQ(flops.at("/q_proj/MatMul"), 2.0 * 15 * 8 * 8);
  EXPECT_EQ(flops.at("/attn/MatMul"), 2.0 * 6 * 5 * 5 * 4);
  EXPECT_EQ(total, 2 * 1920.0 + 1200);
  double total7 = 0;
  MatrixFlops(Load("dynamic_shapes.onnx", {{"batch", 7}}), &total7);
  EXPECT_EQ(total7, total / 3 * 7);
  EXPECT_EQ(ParameterCount(g), 8 + 2 * 64);  // class token, w_q, w_k
}

// Found by fuzz/fuzz_onnx.cc (a mutation of dynamic_shapes.onnx): libonnx 1.12's Shape inference
// read the type of a first input it held none for and crashed (SEGV). The guarded registry skips
// such a node; the model loads, and what could not be inferred is listed as uncosted.
TEST(OnnxFrontend, AFirstInputWithoutATypeIsNotInferred) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("fuzz_shape_untyped_input.onnx", {{"batch", 2}});
  ASSERT_FALSE(g.nodes.empty());
  int unknown = 0;
  for (const auto& n : g.nodes) unknown += n.op == "unknown" ? 1 : 0;
  EXPECT_GT(unknown, 0);
}

TEST(OnnxFrontend, ShapeArithmeticThatCannotBeFoldedIsLeftAlone) {
  REQUIRE_ONNX();
  // Division and modulo by zero are not evaluated (their outputs keep no value); the Reshape
  // target, a concatenation with an empty tensor, folds to [batch, 4].
  const NetworkGraph g = Load("hostile_folds.onnx", {{"batch", 2}});
  EXPECT_EQ(Shape(g, "y"), (I{2, 4}));
  EXPECT_EQ(Node(g, "mm")->op, "matmul");
  EXPECT_EQ(Shape(g, "out"), (I{2, 3}));
  EXPECT_EQ(Str(Node(g, "concat_empty"), "folded"), "constant");
}

TEST(OnnxFrontend, OptionalInputsLeftOutAreNotFolded) {
  REQUIRE_ONNX();
  // Clip without its min and a Concat with an empty input name, on shape values known at load
  // time: regression for a crash on torchvision's swin_v2_t export (clamp(max=...)).
  const NetworkGraph g = Load("absent_optional_input.onnx", {{"batch", 2}});
  EXPECT_EQ(Node(g, "mm")->op, "matmul");
  EXPECT_EQ(Shape(g, "out"), (I{2, 3}));
}

TEST(OnnxFrontend, PadsThroughATransposeAreFolded) {
  REQUIRE_ONNX();
  // F.pad as exported (torchvision's Swin: 1188 of 2026 nodes were uncosted before): the pad
  // pairs [[0, 0], [2, 1], [0, 0]] transposed into begins [0, 2, 0], ends [0, 1, 0].
  const NetworkGraph g = Load("transposed_pads.onnx", {{"batch", 2}});
  EXPECT_EQ(Shape(g, "y"), (I{2, 6, 5}));
  EXPECT_EQ(Node(g, "mm")->op, "matmul");
  EXPECT_EQ(Shape(g, "out"), (I{2, 6, 4}));
  EXPECT_EQ(Str(Node(g, "transpose"), "folded"), "constant");
}

TEST(OnnxFrontend, UncostedNodesAreListedWithTheirOutputs) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("uncosted.onnx");
  EXPECT_EQ(Ops(g), (std::vector<std::string>{"elementwise", "unknown", "elementwise"}));
  const NetNode* topk = Node(g, "topk");
  EXPECT_EQ(Str(topk, "op"), "TopK");
  EXPECT_EQ(topk->outputs, (std::vector<std::string>{"values", "indices"}));
  // values fp32 [2, 5] = 40 bytes, indices int64 [2, 5] = 80 bytes.
  double bytes = 0;
  for (const auto& o : topk->outputs) bytes += Elements(g, o) * BytesOf(Tensor(g, o)->dtype);
  EXPECT_EQ(bytes, 120);
  EXPECT_EQ(Num(Node(g, "sigmoid"), "flops_per_element"), 4);
}

TEST(OnnxFrontend, ExternalDataLoadsWithoutReadingIt) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("external_data.onnx");
  EXPECT_TRUE(HasNote(g, "external data 'external_data.bin' (1 tensors): present"));
  EXPECT_TRUE(Tensor(g, "w")->weight);
  EXPECT_EQ(Shape(g, "w"), (I{16, 32}));
  EXPECT_EQ(Node(g, "mm")->op, "matmul");
  EXPECT_EQ(ParameterCount(g), 16 * 32);
}

// torchvision ResNet-50 at 224x224, batch 1, weights referenced as absent external data.
TEST(OnnxFrontend, ResNet50ParametersAndMacs) {
  REQUIRE_ONNX();
  const NetworkGraph g = Load("resnet50_shapes.onnx", {{"batch", 1}});
  EXPECT_TRUE(HasNote(g, "'resnet50.weights.bin' (267 tensors): missing"));
  // torchvision's documented count: sum(p.numel() for p in resnet50().parameters()).
  EXPECT_EQ(ParameterCount(g), 25557032);
  // MACs of convs and the classifier, from the mapped shapes: sum over convs of
  // N * O * Ho * Wo * (C / g) * kh * kw, plus rows * n * k of the Linear. torchvision lists
  // 4.09 GFLOPS (multiply-accumulates) for ResNet-50; the exact sum is 4,089,184,256.
  int64_t macs = 0;
  int convs = 0, norms = 0;
  for (const auto& n : g.nodes) {
    norms += n.op == "norm";
    if (n.op == "conv") {
      ++convs;
      const auto w = Shape(g, n.inputs[1]);
      macs += Elements(g, n.outputs[0]) * w[1] * w[2] * w[3];
    } else if (n.op == "linear") {
      macs += Elements(g, n.outputs[0]) * Shape(g, n.inputs[1])[1];
    }
  }
  EXPECT_EQ(convs, 53);  // stem 1 + 16 blocks * 3 + 4 downsamples
  EXPECT_EQ(norms, 53);
  EXPECT_EQ(macs, 4089184256);
  EXPECT_EQ(Node(g, "/layer1/layer1.0/conv2/Conv")->module, "layer1.0.conv2");
  const NetNode* stem = Node(g, "/conv1/Conv");
  EXPECT_EQ(Nums(stem, "padding"), (V{3, 3, 3, 3}));
  EXPECT_EQ(Shape(g, "/conv1/Conv_output_0"), (I{1, 64, 112, 112}));
}

TEST(OnnxFrontend, BadFilesAreErrorsNamingTheFile) {
  REQUIRE_ONNX();
  for (const std::string file : {"truncated.onnx", "not_onnx.onnx"}) {
    const Status s = LoadError(file);
    EXPECT_NE(s.where().find(file), std::string::npos) << s.ToString();
    EXPECT_EQ(s.what(), "not an ONNX model (protobuf parse failed)") << s.ToString();
  }
  const Status absurd = LoadError("absurd_dims.onnx");
  EXPECT_NE(absurd.where().find("initializer 'huge'"), std::string::npos) << absurd.ToString();
  EXPECT_NE(absurd.what().find("overflows"), std::string::npos) << absurd.ToString();
  // libonnx's conv shape inference would loop on this kernel: rejected before it runs.
  const Status conv = LoadError("hostile_conv.onnx");
  EXPECT_NE(conv.where().find("node 'hostile_conv' (Conv)"), std::string::npos) << conv.ToString();
  EXPECT_NE(conv.what().find("kernel_shape value -4611686018427387904 is out of range"),
            std::string::npos)
      << conv.ToString();
  // libonnx's Slice inference does not return on a step of -2^63: rejected before it runs.
  const Status slice = LoadError("hostile_slice.onnx");
  EXPECT_NE(slice.what().find("node 'hostile_slice' (Slice): steps value -9223372036854775808 is "
                              "out of range"),
            std::string::npos)
      << slice.ToString();
  // A scalar ConvTranspose weight crashes libonnx 1.12's inference: guarded, an error.
  const Status rank = LoadError("bad_conv_rank.onnx");
  EXPECT_NE(rank.what().find("node 'scalar_w' (ConvTranspose): weight W has rank 0"),
            std::string::npos)
      << rank.ToString();
  // Found by fuzz/fuzz_onnx.cc: "Reshape" mutated to "Rewhape" made libonnx 1.12's strict
  // inference dereference a null pointer (SEGV). A standard-domain op it does not know is now an
  // error before inference runs.
  const Status unknown_op = LoadError("fuzz_unknown_standard_op.onnx", {{"batch", 2}});
  EXPECT_NE(unknown_op.what().find("'Rewhape' is not an ONNX operator at opset 17"),
            std::string::npos)
      << unknown_op.ToString();
  const Status shapes = LoadError("bad_shapes.onnx");
  EXPECT_NE(shapes.where().find("bad_shapes.onnx"), std::string::npos) << shapes.ToString();
  EXPECT_NE(shapes.what().find("node 'bad_mm' (MatMul)"), std::string::npos) << shapes.ToString();
  // batch 2^48: c1 [2^48, 8, 32, 32] holds 2^61 elements, 2^63 bytes in fp32: beyond int64.
  const Status huge = LoadError("small_cnn.onnx", {{"batch", int64_t{1} << 48}});
  EXPECT_NE(huge.what().find("tensor 'c1' (output of node '/conv1/Conv') has absurd size"),
            std::string::npos)
      << huge.ToString();
  const Status missing = LoadError("no_such_model.onnx");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.ToString();
  const Status dir = LoadError("");  // the fixture directory itself
  EXPECT_NE(dir.what().find("directory"), std::string::npos) << dir.ToString();
}

// --dtype re-types an ONNX model's floating-point tensors only: its int64 starts, ends, axes
// and indices (held as fp64, the type of their size) keep their dtype and bytes.
TEST(OnnxFrontend, RetypingKeepsIntegerTensors) {
  REQUIRE_ONNX();
  NetworkGraph g = Load("misc_ops.onnx");
  int fixed = 0, floating = 0;
  std::map<std::string, DType> before;
  for (const NetTensor& t : g.tensors) {
    before[t.name] = t.dtype;
    fixed += t.fixed_dtype;
    floating += !t.fixed_dtype && t.bits == 0;
  }
  ASSERT_GT(fixed, 0);
  ASSERT_GT(floating, 0);
  NetRetype r;
  r.dtype = DType::kBf16;
  Result<int> n = RetypeNetwork(g, r);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_GT(*n, 0);
  for (const NetTensor& t : g.tensors) {
    if (t.fixed_dtype) {
      EXPECT_EQ(t.dtype, before[t.name]) << t.name;
    } else if (t.bits == 0 && before[t.name] != DType::kInt8) {
      EXPECT_EQ(t.dtype, DType::kBf16) << t.name;
    }
  }
}

}  // namespace onnx_frontend_test
}  // namespace roofline
