// The fusion pass: eager vs fused kernels, and fused intermediates skipping device memory.
#include <gtest/gtest.h>

#include "roofline/cost.h"
#include "roofline/graph.h"
#include "tests/test_util.h"

namespace roofline {
namespace fusion_test {

// x -> rmsnorm -> matmul(up) -> silu -> mul(.., gate) ; a tiny MLP-like chain.
struct Chain {
  Graph g;
  int norm, up, gate, act, mul;
};

Chain Build(int64_t tokens, int64_t hidden, int64_t inter) {
  Chain c;
  NormSpec n;
  n.rows = tokens;
  n.cols = hidden;
  c.norm = *c.g.AddOp("norm", n);
  const int x = c.g.OutputOf(c.norm);
  c.up = *c.g.AddOp("up_proj", testing::Mm(tokens, inter, hidden), {x});
  c.gate = *c.g.AddOp("gate_proj", testing::Mm(tokens, inter, hidden), {x});
  ElementwiseSpec silu;
  silu.elements = static_cast<double>(tokens * inter);
  silu.inputs = 1;
  silu.flops_per_element = 4;
  c.act = *c.g.AddOp("act", silu, {c.g.OutputOf(c.gate)});
  ElementwiseSpec mul;
  mul.elements = static_cast<double>(tokens * inter);
  mul.inputs = 2;
  c.mul = *c.g.AddOp("mul", mul, {c.g.OutputOf(c.act), c.g.OutputOf(c.up)});
  return c;
}

TEST(Fusion, EagerIsOneKernelPerOp) {
  const Chain c = Build(128, 1024, 4096);
  EXPECT_EQ(Fuse(c.g, FusionMode::kEager).size(), c.g.ops().size());
}

TEST(Fusion, FusedFoldsEpiloguesIntoTheMatmul) {
  const Chain c = Build(128, 1024, 4096);
  const std::vector<Kernel> k = Fuse(c.g, FusionMode::kFused);
  // The norm feeds two matmuls, so it stays alone; act and mul fold into gate_proj.
  ASSERT_EQ(k.size(), 3u);
  EXPECT_EQ(k[0].name, "norm");
  EXPECT_EQ(k[1].name, "up_proj");
  EXPECT_EQ(k[2].name, "gate_proj");
  EXPECT_EQ(k[2].ops, (std::vector<int>{c.gate, c.act, c.mul}));
}

TEST(Fusion, FusedIntermediatesSkipDeviceMemory) {
  const Chain c = Build(128, 1024, 4096);
  const CostModel model(testing::Dev("h100-sxm"));
  double eager = 0;
  for (const Kernel& k : Fuse(c.g, FusionMode::kEager)) eager += model.Evaluate(c.g, k).bytes[0];
  double fused = 0;
  for (const Kernel& k : Fuse(c.g, FusionMode::kFused)) fused += model.Evaluate(c.g, k).bytes[0];
  // Eager moves gate output (written, read by act), act output (written, read by mul): 4 trips
  // of a [128 x 4096] bf16 tensor that fusion keeps on chip.
  const double t = 128.0 * 4096 * 2;
  EXPECT_DOUBLE_EQ(eager - fused, 4 * t);
}

// A norm stays a kernel of its own even where one product reads it (no stack the tool costs
// folds a norm into the next GEMM: vLLM's fused_add_rms_norm, TensorRT-LLM's RMSNorm, inductor's
// reduction before an extern matmul); an elementwise op read by one product is its prologue.
TEST(Fusion, NormStaysAKernelAnElementwiseOpFeedingOneMatmulIsAPrologue) {
  Graph g;
  NormSpec n;
  n.rows = 64;
  n.cols = 512;
  const int norm = *g.AddOp("post_norm", n);
  const int mm = *g.AddOp("down", testing::Mm(64, 512, 512), {g.OutputOf(norm)});
  const std::vector<Kernel> k = Fuse(g, FusionMode::kFused);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].ops, (std::vector<int>{norm}));
  EXPECT_EQ(k[1].ops, (std::vector<int>{mm}));

  Graph h;
  ElementwiseSpec e;
  e.elements = 64 * 512;
  e.inputs = 1;
  e.flops_per_element = 1;
  const int scale = *h.AddOp("scale", e);
  const int mm2 = *h.AddOp("down", testing::Mm(64, 512, 512), {h.OutputOf(scale)});
  const std::vector<Kernel> k2 = Fuse(h, FusionMode::kFused);
  ASSERT_EQ(k2.size(), 1u);
  EXPECT_EQ(k2[0].name, "down");
  EXPECT_EQ(k2[0].ops, (std::vector<int>{scale, mm2}));
  const CostModel model(testing::Dev("h100-sxm"));
  const KernelCost cost = model.Evaluate(h, k2[0]);
  // Reads x and the matmul weight; writes the output. The scaled activations never reach device
  // memory.
  EXPECT_DOUBLE_EQ(cost.bytes[0], (64.0 * 512 + 512.0 * 512 + 64.0 * 512) * 2);
}

TEST(Graph, RejectsMismatchedOperands) {
  Graph g;
  const int a = *g.AddOp("a", testing::Mm(4, 8, 16));
  // A [5 x 8] operand cannot bind to a [4 x 8] tensor.
  Result<int> bad = g.AddOp("b", testing::Mm(5, 8, 8), {g.OutputOf(a)});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().what().find("expects"), std::string::npos);
}

}  // namespace fusion_test
}  // namespace roofline
