// Reference numbers from named outside sources. Each test says where its number comes from.
#include <gtest/gtest.h>

#include <cmath>

#include "roofline/flip.h"
#include "roofline/op_analysis.h"
#include "tests/test_util.h"

namespace roofline {
namespace reference_numbers_test {

using testing::Analyze;
using testing::Db;
using testing::Dev;
using testing::Mm;

/// Smallest m at which the matmul becomes compute-bound on `model`, found by the flip solver.
int64_t ComputeBoundFrom(MatmulSpec s, const CostModel& model) {
  auto verdict = [&](int64_t m) {
    s.m = m;
    return NameOf(Analyze(OpRequest{s}, model).totals.verdict, model.device())
        .substr(0, 7);  // "compute" / "memory:"
  };
  const FlipPoint p = FindFlipUp(verdict, 1, 1 << 20);
  EXPECT_TRUE(p.found);
  EXPECT_EQ(p.from, "memory:");
  EXPECT_EQ(p.to, "compute");
  return p.value;
}

// jax-ml scaling-book, "All About Rooflines": a bf16 [B,D]x[D,F] matmul on TPU v5e is
// compute-bound once B exceeds the ridge 1.97e14 / 8.2e11 ~= 240 FLOP/byte (D, F >> B).
TEST(ScalingBook, TpuV5eBf16MatmulFlipsNearTheRidge) {
  const Device& v5e = Dev("tpu-v5e");
  const CostModel model(v5e);
  const double ridge = 197e12 / 8.19e11;  // Google Cloud TPU v5e figures: 240.5
  const int64_t d = 65536, f = 65536;
  const int64_t b = ComputeBoundFrom(Mm(1, f, d), model);
  // Closed form with every byte counted: B*D*F / (B*D + D*F + B*F) >= ridge.
  const double closed = ridge * d * f / (static_cast<double>(d) * f - ridge * (d + f));
  EXPECT_EQ(b, static_cast<int64_t>(std::ceil(closed)));
  EXPECT_NEAR(static_cast<double>(b), 240.0, 0.02 * 240);
}

// Same source, question 2: bf16 activations x int8 weights, computed in bf16: the weight bytes
// halve, so the threshold on B halves (~120).
TEST(ScalingBook, TpuV5eInt8WeightsHalveTheThreshold) {
  const CostModel model(Dev("tpu-v5e"));
  MatmulSpec s = Mm(1, 65536, 65536);
  s.b_dtype = DType::kInt8;
  const int64_t b = ComputeBoundFrom(s, model);
  EXPECT_NEAR(static_cast<double>(b), 120.0, 0.03 * 120);
  const int64_t b16 = ComputeBoundFrom(Mm(1, 65536, 65536), model);
  EXPECT_NEAR(static_cast<double>(b) / static_cast<double>(b16), 0.5, 0.01);
}

// Same source, question 1: int8 x int8 -> int8 runs at the int8 peak (3.94e14 OP/s), one byte
// per element: compute-bound once 2B > 3.94e14 / 8.1e11 ~= 486, i.e. B > ~243.
TEST(ScalingBook, TpuV5eInt8TimesInt8NeedsBAbout243) {
  const CostModel model(Dev("tpu-v5e"));
  MatmulSpec s = Mm(1, 65536, 65536, DType::kInt8);
  const int64_t b = ComputeBoundFrom(s, model);
  EXPECT_NEAR(static_cast<double>(b), 243.0, 0.02 * 243);
}

// NVIDIA H100 datasheet (989 TFLOP/s dense BF16, 3.35 TB/s HBM3): ridge ~= 295 FLOP/byte, as the
// roofline deep-dive seed text derives.
TEST(Datasheet, H100SxmBf16RidgeIs295) {
  const Device& h100 = Dev("h100-sxm");
  const CostModel model(h100);
  const OpAnalysis a = Analyze(OpRequest{Mm(4096, 4096, 4096)}, model);
  EXPECT_NEAR(model.Ridge(a.costs[0], 0), 295.0, 0.5);
}

// scaling-book: a dot product of two bf16 vectors of length N does 2N FLOPs, loads 4N bytes:
// intensity 0.5 (plus the 2-byte scalar result, which we count).
TEST(ScalingBook, DotProductIntensityIsOneHalf) {
  const CostModel model(Dev("tpu-v5e"));
  const int64_t n = 1 << 24;
  MatmulSpec s = Mm(1, 1, n);
  s.b_is_weight = false;
  const OpAnalysis a = Analyze(OpRequest{s}, model);
  EXPECT_DOUBLE_EQ(a.totals.flops, 2.0 * n);
  EXPECT_DOUBLE_EQ(a.totals.bytes[0], 4.0 * n + 2);
  EXPECT_NEAR(a.totals.flops / a.totals.bytes[0], 0.5, 1e-6);
  EXPECT_EQ(NameOf(a.totals.verdict, model.device()), "memory:hbm");
}

// Llama-2-7B (hidden 4096) q_proj in prefill of 2048 tokens, fp16 - hand computation:
// 2*2048*4096*4096 = 6.872e10 FLOP; (2048*4096 + 4096*4096 + 2048*4096) * 2 B = 6.711e7 B;
// intensity 1024. Compute-bound on every GPU of the database; at m = 1 (decode) ~1 FLOP/B and
// memory-bound on every device.
TEST(Llama2, QProjPrefillIsComputeBoundOnEveryGpuAndDecodeMemoryBoundEverywhere) {
  for (const Device& d : Db().devices()) {
    const CostModel model(d);
    const OpAnalysis prefill = Analyze(OpRequest{Mm(2048, 4096, 4096, DType::kFp16)}, model);
    EXPECT_DOUBLE_EQ(prefill.totals.flops, 68719476736.0);
    // Each operand crosses device memory once when the smaller one (A, 16.8 MB) fits half the
    // next level (L2 etc.); with a smaller L2 the tiles re-read A and B (docs/cost-model.md).
    const bool resident =
        d.memory.size() < 2 || d.memory[1].capacity.value / 2 >= 2048.0 * 4096 * 2;
    if (d.memory.front().weights_only) {
      // A store holding only weights (weight streaming): only B (4096*4096*2 B) crosses it.
      EXPECT_DOUBLE_EQ(prefill.totals.bytes[0], 33554432.0) << d.id;
    } else if (resident) {
      EXPECT_DOUBLE_EQ(prefill.totals.bytes[0], 67108864.0) << d.id;
      EXPECT_DOUBLE_EQ(prefill.totals.flops / prefill.totals.bytes[0], 1024.0) << d.id;
    } else {
      EXPECT_GT(prefill.totals.bytes[0], 67108864.0) << d.id;
    }
    if (d.kind == "gpu") {
      EXPECT_EQ(NameOf(prefill.totals.verdict, d).rfind("compute:tensor.", 0), 0u)
          << d.id << " " << NameOf(prefill.totals.verdict, d);
    }
    const OpAnalysis decode = Analyze(OpRequest{Mm(1, 4096, 4096, DType::kFp16)}, model);
    EXPECT_NEAR(decode.totals.flops / decode.totals.bytes[0], 1.0, 0.001) << d.id;
    EXPECT_EQ(NameOf(decode.totals.verdict, d).rfind("memory:", 0), 0u)
        << d.id << " " << NameOf(decode.totals.verdict, d);
  }
}

// The RTX A6000 has a 6 MB L2: neither A (16.8 MB) nor B (33.6 MB) fits half of it, so tiles of
// T = floor16(sqrt(6291456 / 4)) = 1248 re-read A ceil(4096/1248) = 4x and B ceil(2048/1248) = 2x.
TEST(Llama2, QProjOnASmallL2RereadsOperands) {
  const Device& d = Dev("rtx-a6000");
  ASSERT_GE(d.memory.size(), 2u);
  const double c = d.memory[1].capacity.value;
  const double t = std::max(16.0, std::floor(std::sqrt(c / 4) / 16) * 16);
  const double ra = std::ceil(4096 / t);
  const double rb = std::ceil(2048 / t);
  const CostModel model(d);
  const OpAnalysis a = Analyze(OpRequest{Mm(2048, 4096, 4096, DType::kFp16)}, model);
  EXPECT_DOUBLE_EQ(a.totals.bytes[0], 16777216.0 * ra + 33554432.0 * rb + 16777216.0);
  EXPECT_GT(ra, 1);
  EXPECT_EQ(NameOf(a.totals.verdict, model.device()), "compute:tensor.fp16");
}

// Modal GPU glossary, "compute-bound": a 500e9-parameter 16-bit model does ~1e12 FLOP per batch
// element; on 1 PFLOP/s that is ~1 ms per element, and to be compute-bound at batch 1 the device
// would need ~1 PB/s to load the 1 TB of weights in that millisecond.
TEST(ModalGlossary, FiveHundredBillionParametersOnOnePetaflop) {
  const int64_t k = 500000, n = 1000000;  // 5e11 weights
  for (double bw : {0.99e15, 1.01e15}) {
    Result<Device> d = ParseDevice(testing::SimpleDeviceJson(1e15, bw, 1e13), "glossary");
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    const CostModel model(*d);
    const OpAnalysis one = Analyze(OpRequest{Mm(1, n, k)}, model);
    EXPECT_NEAR(one.totals.flops, 1e12, 1e9);
    EXPECT_NEAR(one.totals.bytes[0], 1e12, 1e10);  // weights dominate: 1 TB
    EXPECT_EQ(NameOf(one.totals.verdict, model.device()),
              bw > 1e15 ? "compute:tensor.bf16" : "memory:hbm")
        << bw;
    const OpAnalysis big = Analyze(OpRequest{Mm(512, n, k)}, model);
    EXPECT_EQ(NameOf(big.totals.verdict, model.device()), "compute:tensor.bf16");
    EXPECT_NEAR(big.totals.time_s / 512, 1e-3, 1e-6);  // ~1 ms per batch element
  }
}

}  // namespace reference_numbers_test
}  // namespace roofline
