// FLOP and byte rules per op kind, checked against hand computations.
#include <gtest/gtest.h>

#include "roofline/op_analysis.h"
#include "tests/test_util.h"

namespace roofline {
namespace op_cost_test {

using testing::Analyze;
using testing::Dev;
using testing::Mm;

AttentionSpec Att(int64_t heads, int64_t kv_heads, int64_t q, int64_t kv, bool causal) {
  AttentionSpec a;
  a.batch = 2;
  a.heads = heads;
  a.kv_heads = kv_heads;
  a.head_dim = 128;
  a.q_len = q;
  a.kv_len = kv;
  a.causal = causal;
  return a;
}

double Tensor(const OpAnalysis& a) {
  double f = 0;
  for (const KernelCost& c : a.costs) {
    for (int e = 0; e < c.num_engines; ++e) {
      if (c.engines[e].requested.tensor) f += c.engines[e].flops;
    }
  }
  return f;
}

// DESIGN.md: eager attention writes and reads the score and probability matrices through device
// memory (write S, read S, write P, read P); flash does not.
TEST(Attention, EagerExceedsFlashByScoresAndProbabilities) {
  const CostModel model(Dev("h100-sxm"));
  for (bool causal : {false, true}) {
    const AttentionSpec a = Att(32, 32, 2048, 2048, causal);
    const OpAnalysis flash = Analyze(OpRequest{a, AttentionImpl::kFlash}, model);
    const OpAnalysis eager = Analyze(OpRequest{a, AttentionImpl::kEager}, model);
    ASSERT_EQ(eager.costs.size(), 3u);
    EXPECT_EQ(eager.costs[0].name, "attn_qk");
    EXPECT_EQ(eager.costs[1].name, "attn_softmax");
    EXPECT_EQ(eager.costs[2].name, "attn_pv");
    const double s_bytes = 2.0 * 32 * 2048 * 2048 * 2;  // batch*heads*Sq*Skv*2 B
    EXPECT_DOUBLE_EQ(eager.totals.bytes[0] - flash.totals.bytes[0], 4 * s_bytes);
    // Flash at device memory: Q, K, V read once, O written once.
    EXPECT_DOUBLE_EQ(flash.totals.bytes[0], 4.0 * 2 * 32 * 2048 * 128 * 2);
  }
}

// DESIGN.md: GQA/MQA - K/V bytes use the KV-head count.
TEST(Attention, GqaCutsKvBytesByTheGroupSize) {
  const CostModel model(Dev("h100-sxm"));
  const double qo = 2.0 * 2 * 32 * 1 * 128 * 2;  // Q and O of a decode step
  const OpAnalysis mha = Analyze(OpRequest{Att(32, 32, 1, 8192, true)}, model);
  const OpAnalysis gqa = Analyze(OpRequest{Att(32, 8, 1, 8192, true)}, model);
  const OpAnalysis mqa = Analyze(OpRequest{Att(32, 1, 1, 8192, true)}, model);
  EXPECT_DOUBLE_EQ((mha.totals.bytes[0] - qo) / (gqa.totals.bytes[0] - qo), 4.0);
  EXPECT_DOUBLE_EQ((mha.totals.bytes[0] - qo) / (mqa.totals.bytes[0] - qo), 32.0);
  EXPECT_DOUBLE_EQ(mha.totals.flops, gqa.totals.flops);  // same arithmetic
}

// FlashAttention skips fully masked blocks: causal prefill scores S(S+1)/2 pairs, about half of
// the S^2 a non-causal (or eager) kernel computes.
TEST(Attention, CausalFlashDoesAboutHalfTheFlops) {
  const CostModel model(Dev("h100-sxm"));
  const int64_t s = 4096;
  const OpAnalysis causal = Analyze(OpRequest{Att(32, 8, s, s, true)}, model);
  const OpAnalysis full = Analyze(OpRequest{Att(32, 8, s, s, false)}, model);
  EXPECT_DOUBLE_EQ(Tensor(causal) / Tensor(full), (s + 1.0) / (2.0 * s));
  // QK^T and PV: 2*b*h*Sq*Skv*d each.
  EXPECT_DOUBLE_EQ(Tensor(full), 2 * (2.0 * 2 * 32 * s * s * 128));
  // Eager computes the full square even when causal.
  const OpAnalysis eager = Analyze(OpRequest{Att(32, 8, s, s, true), AttentionImpl::kEager}, model);
  EXPECT_DOUBLE_EQ(Tensor(eager), Tensor(full));
}

TEST(Attention, PairsWithCausalMaskAndSlidingWindow) {
  AttentionSpec a = Att(1, 1, 4, 10, true);
  // Queries at positions 6..9 see 7, 8, 9, 10 keys.
  EXPECT_DOUBLE_EQ(AttentionPairs(a, true), 7 + 8 + 9 + 10);
  a.window = 8;
  EXPECT_DOUBLE_EQ(AttentionPairs(a, true), 7 + 8 + 8 + 8);
  EXPECT_DOUBLE_EQ(AttentionPairs(a, false), 40);  // eager: the full square
  a.q_len = a.kv_len = 5;
  a.window = 0;
  EXPECT_DOUBLE_EQ(AttentionPairs(a, true), 15);  // S(S+1)/2
}

TEST(Attention, SlidingWindowDecodeReadsOnlyTheWindow) {
  const CostModel model(Dev("h100-sxm"));
  AttentionSpec a = Att(32, 8, 1, 32768, true);
  const OpAnalysis full = Analyze(OpRequest{a}, model);
  a.window = 4096;
  const OpAnalysis win = Analyze(OpRequest{a}, model);
  const double qo = 2.0 * 2 * 32 * 128 * 2;
  EXPECT_DOUBLE_EQ((full.totals.bytes[0] - qo) / (win.totals.bytes[0] - qo), 8.0);
}

TEST(Attention, DecodeNeverBecomesComputeBoundAsContextGrows) {
  const CostModel model(Dev("h100-sxm"));
  for (int64_t ctx : {1024, 32768, 1 << 20}) {
    const OpAnalysis a = Analyze(OpRequest{Att(32, 8, 1, ctx, true)}, model);
    EXPECT_EQ(NameOf(a.totals.verdict, model.device()), "memory:hbm") << ctx;
    // Intensity tends to 2*(d+dv)*group / ((d+dv)*2 B) = group = 4 FLOP/B (tensor part).
    EXPECT_NEAR(Tensor(a) / a.totals.bytes[0], 4.0, 0.02) << ctx;  // Q and O add <0.4%
  }
}

// Weight-only quantization: int4 weights with a group of 128 read k*n/2 bytes plus one fp16
// scale per 128 weights, and compute at the bf16 peak.
TEST(Matmul, Int4WeightsReadHalfBytesPlusGroupScales) {
  const CostModel model(Dev("h100-sxm"));
  MatmulSpec s = Mm(1, 4096, 4096);
  s.b_dtype = DType::kInt4;
  s.group_size = 128;
  const OpAnalysis a = Analyze(OpRequest{s}, model);
  const double expected = 4096.0 * 2 + 4096.0 * 4096 / 2 + (4096.0 / 128) * 4096 * 2 + 4096.0 * 2;
  EXPECT_DOUBLE_EQ(a.totals.bytes[0], expected);
  EXPECT_EQ(model.CeilingName(a.costs[0].engines[0]), "tensor.bf16");
}

// Asymmetric int4: a zero point beside each scale. tinygemm keeps both in bf16 (2 + 2 B a
// group); AWQ packs its zero points in 4 bits (0.5 B a group).
TEST(Matmul, ZeroPointsAddTheirBytesBesideTheScales) {
  const CostModel model(Dev("h100-sxm"));
  MatmulSpec s = Mm(1, 4096, 4096);
  s.b_dtype = DType::kInt4;
  s.group_size = 128;
  const double symmetric = Analyze(OpRequest{s}, model).totals.bytes[0];
  const double groups = (4096.0 / 128) * 4096;
  s.zero_dtype = DType::kBf16;
  EXPECT_DOUBLE_EQ(Analyze(OpRequest{s}, model).totals.bytes[0] - symmetric, groups * 2);
  s.zero_dtype = DType::kInt4;
  EXPECT_DOUBLE_EQ(Analyze(OpRequest{s}, model).totals.bytes[0] - symmetric, groups * 0.5);
  // Routed experts: like the scales, only the touched experts' zero points are read (one token,
  // top-2 of 8: two experts).
  MatmulSpec moe = Mm(2, 4096, 4096);
  moe.b_dtype = DType::kInt4;
  moe.group_size = 128;
  moe.experts = 8;
  moe.expert_top_k = 2;
  const double moe_symmetric = Analyze(OpRequest{moe}, model).totals.bytes[0];
  moe.zero_dtype = DType::kBf16;
  EXPECT_DOUBLE_EQ(Analyze(OpRequest{moe}, model).totals.bytes[0] - moe_symmetric, 2 * groups * 2);
}

TEST(Matmul, Fp8OnA100FallsBackToBf16Peak) {
  const CostModel model(Dev("a100-sxm-80gb"));
  const OpAnalysis a = Analyze(OpRequest{Mm(8192, 8192, 8192, DType::kFp8)}, model);
  EXPECT_EQ(a.costs[0].engines[0].requested.Name(), "tensor.fp8");
  EXPECT_EQ(model.CeilingName(a.costs[0].engines[0]), "tensor.bf16");
  EXPECT_EQ(NameOf(a.totals.verdict, model.device()), "compute:tensor.bf16");
}

TEST(Matmul, LargeOperandsAreReReadWhenTheyDoNotFitTheNearerLevel) {
  // A 16384 x 16384 x 16384 bf16 GEMM: A and B are 537 MB each, far beyond a 52 MB L2, so tiles
  // of T = floor16(sqrt(52428800 / 4)) = 3616 re-read A ceil(16384/3616) = 5 times, and B too.
  const CostModel model(Dev("h100-sxm"));
  const OpAnalysis a = Analyze(OpRequest{Mm(16384, 16384, 16384)}, model);
  const double one = 16384.0 * 16384 * 2;
  EXPECT_DOUBLE_EQ(a.totals.bytes[0], 5 * one + 5 * one + one);
}

// Hand computation: ResNet-50 conv1, 224x224x3 -> 64 channels, 7x7 stride 2 padding 3:
// output 112x112; FLOPs = 2 * 64 * 112 * 112 * 3 * 49 = 236,027,904 per image (118 M MACs).
TEST(Conv2d, ResNet50FirstLayer) {
  const CostModel model(Dev("a100-sxm-80gb"));
  Conv2dSpec c;
  c.batch = 1;
  c.in_channels = 3;
  c.out_channels = 64;
  c.height = c.width = 224;
  c.kernel_h = c.kernel_w = 7;
  c.stride = 2;
  c.padding = 3;
  EXPECT_EQ(c.out_height(), 112);
  const OpAnalysis a = Analyze(OpRequest{c}, model);
  EXPECT_DOUBLE_EQ(a.totals.flops, 236027904.0);
  EXPECT_DOUBLE_EQ(a.totals.bytes[0], (3.0 * 224 * 224 + 64 * 3 * 49 + 64.0 * 112 * 112) * 2);
}

TEST(Conv2d, DepthwiseGroups) {
  const CostModel model(Dev("a100-sxm-80gb"));
  Conv2dSpec c;
  c.batch = 8;
  c.in_channels = c.out_channels = c.groups = 256;
  c.height = c.width = 28;
  c.kernel_h = c.kernel_w = 3;
  c.padding = 1;
  const OpAnalysis a = Analyze(OpRequest{c}, model);
  EXPECT_DOUBLE_EQ(a.totals.flops, 2.0 * 8 * 256 * 28 * 28 * 1 * 9);
  EXPECT_EQ(NameOf(a.totals.verdict, model.device()),
            "memory:hbm");  // depthwise convs are bandwidth-bound
}

TEST(Elementwise, IntensityIsConstant) {
  const CostModel model(Dev("h100-sxm"));
  ElementwiseSpec e;
  e.elements = 1 << 24;
  e.inputs = 2;
  e.flops_per_element = 1;
  const OpAnalysis a = Analyze(OpRequest{e}, model);
  EXPECT_DOUBLE_EQ(a.totals.bytes[0], 3.0 * (1 << 24) * 2);
  EXPECT_DOUBLE_EQ(a.totals.flops / a.totals.bytes[0], 1.0 / 6);
  EXPECT_EQ(NameOf(a.totals.verdict, model.device()), "memory:hbm");
}

TEST(Norm, RmsAndLayerNormFlopsAndBytes) {
  const CostModel model(Dev("h100-sxm"));
  NormSpec n;
  n.rows = 2048;
  n.cols = 4096;
  const OpAnalysis rms = Analyze(OpRequest{n}, model);
  EXPECT_DOUBLE_EQ(rms.totals.flops, 4.0 * 2048 * 4096);
  EXPECT_DOUBLE_EQ(rms.totals.bytes[0], (2.0 * 2048 * 4096 + 4096) * 2);
  n.kind = NormKind::kLayer;
  const OpAnalysis ln = Analyze(OpRequest{n}, model);
  // 8 per element (mean 1, variance 3, normalize 2, affine 2), the profile counter's figure.
  EXPECT_DOUBLE_EQ(ln.totals.flops, 8.0 * 2048 * 4096);
  EXPECT_DOUBLE_EQ(ln.totals.bytes[0], (2.0 * 2048 * 4096 + 2 * 4096) * 2);
}

TEST(Embedding, ReadsOnlyTheGatheredRows) {
  const CostModel model(Dev("h100-sxm"));
  EmbeddingSpec e;
  e.tokens = 16;
  e.vocab = 128256;
  e.dim = 4096;
  const OpAnalysis a = Analyze(OpRequest{e}, model);
  EXPECT_DOUBLE_EQ(a.totals.bytes[0], 16 * 8 + 2 * (16.0 * 4096 * 2));
  EXPECT_DOUBLE_EQ(a.totals.flops, 0);
}

// Ring all-reduce: each device sends 2(n-1)/n of the buffer in 2(n-1) latency steps.
TEST(Collective, RingAllReduceBytesAndLatency) {
  Result<Device> d = ParseDevice(
      testing::SimpleDeviceJson(
          1e15, 3e12, 80e9,
          "[{\"name\": \"nvlink\", \"bandwidth\": {\"value\": 4.5e11, \"unit\": \"B/s\", "
          "\"provenance\": \"spec\", \"source\": \"t\"}, \"latency\": {\"value\": 2e-6, "
          "\"unit\": \"s\", \"provenance\": \"spec\", \"source\": \"t\"}}]"),
      "t");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  const CostModel model(*d);
  CollectiveSpec c;
  c.kind = CollectiveKind::kAllReduce;
  c.message_bytes = 64e6;
  c.devices = 8;
  const OpAnalysis a = Analyze(OpRequest{c}, model);
  EXPECT_DOUBLE_EQ(a.costs[0].comm_bytes, 2.0 * 7 / 8 * 64e6);
  EXPECT_EQ(a.costs[0].comm_steps, 14);
  EXPECT_DOUBLE_EQ(a.totals.time_s, 2.0 * 7 / 8 * 64e6 / 4.5e11 + 14 * 2e-6);
  EXPECT_EQ(NameOf(a.totals.verdict, model.device()), "comm:nvlink");
  c.kind = CollectiveKind::kAllGather;
  const OpAnalysis g = Analyze(OpRequest{c}, model);
  EXPECT_DOUBLE_EQ(g.costs[0].comm_bytes, 7.0 / 8 * 64e6);
  EXPECT_EQ(g.costs[0].comm_steps, 7);
}

TEST(Validate, RejectsAbsurdShapes) {
  EXPECT_FALSE(Validate(OpSpec(Mm(0, 1, 1))).ok());
  EXPECT_FALSE(Validate(OpSpec(Mm(-5, 1, 1))).ok());
  EXPECT_EQ(Validate(OpSpec(Mm(int64_t{1} << 41, 1, 1))).where(), "m");
  AttentionSpec a = Att(32, 5, 1, 10, true);
  EXPECT_EQ(Validate(OpSpec(a)).where(), "kv-heads");
  a = Att(32, 8, 100, 10, true);
  EXPECT_EQ(Validate(OpSpec(a)).where(), "kv-len");
  Conv2dSpec c;
  c.in_channels = 3;
  c.out_channels = 4;
  c.groups = 2;
  EXPECT_EQ(Validate(OpSpec(c)).where(), "groups");
}

}  // namespace op_cost_test
}  // namespace roofline
