// Invariants that hold for every shape on every device: attainable FLOP/s never exceeds the
// roofline, the time bound is the largest term, totals equal the sum of kernels.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <set>

#include "roofline/engine.h"
#include "roofline/op_analysis.h"
#include "tests/test_util.h"

namespace roofline {
namespace invariants_test {

using testing::Analyze;
using testing::Db;

int64_t Pick(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  // Log-uniform, so small and large sizes are both well represented.
  std::uniform_real_distribution<double> u(std::log(static_cast<double>(lo)),
                                           std::log(static_cast<double>(hi)));
  return std::max<int64_t>(lo, static_cast<int64_t>(std::exp(u(rng))));
}

DType PickDType(std::mt19937_64& rng) {
  static const DType kTypes[] = {DType::kBf16, DType::kFp16, DType::kFp8,
                                 DType::kInt8, DType::kFp32, DType::kInt4};
  return kTypes[rng() % 6];
}

OpRequest RandomRequest(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0: {
      MatmulSpec s;
      s.batch = Pick(rng, 1, 64);
      s.m = Pick(rng, 1, 65536);
      s.n = Pick(rng, 1, 65536);
      s.k = Pick(rng, 1, 65536);
      s.a_dtype = PickDType(rng);
      if (s.a_dtype == DType::kInt4) s.a_dtype = DType::kBf16;
      s.b_dtype = PickDType(rng);
      if (s.b_dtype == DType::kInt4 && rng() % 2 == 0) {  // group-wise int4 weights, bf16 in
        s.a_dtype = DType::kBf16;
        s.group_size = int64_t{32} << (rng() % 3);
        s.k = std::max<int64_t>(1, s.k / s.group_size) * s.group_size;  // groups divide k
      } else if (s.b_dtype == DType::kInt8 && rng() % 2 == 0) {         // int8 weights, a few rows
        s.a_dtype = DType::kBf16;
        s.batch = 1;
        s.m = Pick(rng, 1, 24);
      } else if (s.b_dtype == DType::kFp8 && rng() % 2 == 0) {  // float8 weights, a few rows
        s.a_dtype = rng() % 2 == 0 ? DType::kBf16 : DType::kFp8;
        s.batch = 1;
        s.m = Pick(rng, 1, 80);
      }
      s.out_dtype = DType::kBf16;
      s.bias = rng() % 2;
      return OpRequest{s};
    }
    case 1: {
      AttentionSpec a;
      a.batch = Pick(rng, 1, 64);
      a.kv_heads = Pick(rng, 1, 16);
      a.heads = a.kv_heads * Pick(rng, 1, 8);
      a.head_dim = 16 * Pick(rng, 1, 16);
      a.kv_len = Pick(rng, 1, 131072);
      a.q_len = rng() % 2 ? 1 : Pick(rng, 1, a.kv_len);
      a.causal = rng() % 2;
      a.window = rng() % 3 == 0 ? Pick(rng, 1, 8192) : 0;
      a.kv_dtype = rng() % 2 ? DType::kFp8 : DType::kBf16;
      return OpRequest{a, rng() % 2 ? AttentionImpl::kFlash : AttentionImpl::kEager};
    }
    case 2: {
      ElementwiseSpec e;
      e.elements = static_cast<double>(Pick(rng, 1, int64_t{1} << 32));
      e.inputs = static_cast<int>(rng() % 4);
      e.flops_per_element = static_cast<double>(rng() % 20);
      return OpRequest{e};
    }
    case 3: {
      Conv2dSpec c;
      c.batch = Pick(rng, 1, 64);
      c.groups = rng() % 4 == 0 ? 4 : 1;
      c.in_channels = c.groups * Pick(rng, 1, 256);
      c.out_channels = c.groups * Pick(rng, 1, 256);
      c.height = Pick(rng, 8, 256);
      c.width = Pick(rng, 8, 256);
      c.kernel_h = c.kernel_w = 1 + 2 * static_cast<int64_t>(rng() % 3);
      c.padding = c.kernel_h / 2;
      c.stride = 1 + static_cast<int64_t>(rng() % 2);
      return OpRequest{c};
    }
    case 4: {
      NormSpec n;
      n.rows = Pick(rng, 1, 1 << 20);
      n.cols = Pick(rng, 1, 16384);
      n.kind = rng() % 2 ? NormKind::kRms : NormKind::kLayer;
      return OpRequest{n};
    }
    default: {
      SoftmaxSpec s;
      s.rows = static_cast<double>(Pick(rng, 1, 1 << 20));
      s.cols = Pick(rng, 1, 65536);
      return OpRequest{s};
    }
  }
}

TEST(Invariants, AttainableNeverExceedsTheRooflineAndTheBoundIsTheLargestTerm) {
  std::mt19937_64 rng(20261122);
  int checked = 0;
  for (const Device& d : Db().devices()) {
    const CostModel model(d);
    for (int i = 0; i < 300; ++i) {
      const OpRequest r = RandomRequest(rng);
      Result<OpAnalysis> a = AnalyzeOp(r, model);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      double sum_time = 0;
      for (const KernelCost& c : a->costs) {
        ++checked;
        // The time bound is the largest of its terms (no launch overhead configured).
        double largest = c.compute_time_s;
        for (int l = 0; l < c.num_levels; ++l) largest = std::max(largest, c.memory_time_s[l]);
        largest = std::max(largest, c.comm_time_s);
        EXPECT_DOUBLE_EQ(c.time_s, largest) << d.id << " " << c.name;
        // Attainable <= FLOPs / compute time (the peak, or the blend of peaks for mixed engines).
        if (c.compute_time_s > 0) {
          EXPECT_LE(c.attainable_flops_per_s, c.flops / c.compute_time_s * (1 + 1e-12));
        }
        for (int e = 0; e < c.num_engines; ++e) {
          const EngineTerm& t = c.engines[e];
          if (t.ceiling < 0 || c.num_engines != 1) continue;
          EXPECT_LE(c.attainable_flops_per_s, d.compute[t.ceiling].peak.value * (1 + 1e-12));
        }
        // Attainable <= intensity x bandwidth at every level with a bandwidth.
        for (int l = 0; l < c.num_levels; ++l) {
          if (!d.memory[l].has_bandwidth() || c.bytes[l] <= 0) continue;
          EXPECT_LE(c.attainable_flops_per_s,
                    c.Intensity(l) * d.memory[l].bandwidth_bytes_per_s() * (1 + 1e-12))
              << d.id << " " << c.name << " level " << l;
        }
        EXPECT_GE(c.flops, 0);
        sum_time += c.time_s * static_cast<double>(c.repeat);
      }
      // Totals equal the sum of the kernels.
      EXPECT_NEAR(a->totals.time_s, sum_time, 1e-12 * sum_time);
    }
  }
  EXPECT_GT(checked, 5000);
}

TEST(Invariants, OnChipTrafficIsAtLeastTheCompulsoryTraffic) {
  // With a nearer level, a matmul's on-chip bytes are never below its device-memory bytes.
  std::mt19937_64 rng(7);
  const CostModel model(testing::Dev("a100-sxm-80gb"));
  for (int i = 0; i < 500; ++i) {
    MatmulSpec s = testing::Mm(Pick(rng, 1, 32768), Pick(rng, 1, 32768), Pick(rng, 1, 32768));
    const OpAnalysis a = Analyze(OpRequest{s}, model);
    EXPECT_GE(a.totals.bytes[1], a.totals.bytes[0] * (1 - 1e-12))
        << s.m << " " << s.n << " " << s.k;
  }
}

// Issue "expected times", must hold: the ideal bound is never above the expected time, for every
// kernel, device, ceiling set, runtime and workload; and each expected term is at least its
// ideal term (achievable ceilings are at most the spec ones, efficiencies at most 1).
TEST(Invariants, TheBoundIsNeverAboveTheExpectedTime) {
  Result<EfficiencyData> data = LoadDefaultEfficiencyData();
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const auto shared = std::make_shared<const EfficiencyData>(*data);
  std::mt19937_64 rng(20261124);
  int checked = 0;
  std::map<std::string, std::set<int>> weight_kernel_regimes;  // the regimes that ran
  size_t compiled_turn = 0, served_turn = 0, moe_turn = 0;
  // Every engine's host work (data/engines) is a step term too: half the cost models take one.
  Result<std::vector<Engine>> engines = ListEngines();
  ASSERT_TRUE(engines.ok()) << engines.status().ToString();
  ASSERT_FALSE(engines->empty());
  size_t engine_turn = 0;
  for (const Device& d : Db().devices()) {
    if (d.model_split || d.memory.front().weights_only) {
      // SRAM-only and wafer-scale devices have no expected-time model: bounds only.
      CostOptions o;
      o.efficiency = shared;
      const CostModel model(d, o);
      EXPECT_FALSE(model.has_expected()) << d.id;
      continue;
    }
    for (CeilingSet set : {CeilingSet::kSpec, CeilingSet::kAchievable}) {
      for (Runtime rt : {Runtime::kEager, Runtime::kCudaGraph, Runtime::kCompiled}) {
        CostOptions o;
        o.efficiency = shared;
        o.expected.ceilings = set;
        o.expected.runtime = rt;
        o.launch_overhead_s = rng() % 2 ? 0 : 3e-6;
        if (rng() % 4 == 0) o.expected.class_efficiency[rng() % kNumClasses] = 0.5;
        // Quantized matmuls run as a measured kernel: under torch.compile four times in five
        // (each kernel in turn: tinygemm for int4, Inductor's for int8 and float8, PyTorch's
        // row-wise float8 product), under the other runtimes too (in turn tinygemm, vLLM's
        // CUTLASS float8 product and aiter's, where its vendor's GPU runs it).
        if (rng() % 5 != 0) {
          static const char* const kKernels[] = {"tinygemm", "inductor-int8", "inductor-fp8",
                                                 "scaled-mm-rowwise"};
          static const char* const kServed[] = {"tinygemm", "vllm-cutlass-fp8",
                                                "aiter-ck-fp8-rowwise"};
          const char* kernel = rt == Runtime::kCompiled ? kKernels[compiled_turn % 4] : nullptr;
          for (size_t i = 0; kernel == nullptr && i < 3; ++i) {
            const char* served = kServed[(served_turn + i) % 3];
            if (CheckWeightKernel(*data, served, d, rt, "test").ok()) kernel = served;
          }
          ++served_turn;
          if (kernel == nullptr) kernel = "tinygemm";
          // The turn passes only where the kernel runs, and not to a forced matmul class.
          if (CheckWeightKernel(*data, kernel, d, rt, "test").ok()) {
            o.expected.weight_kernel = kernel;
            const bool forced =
                o.expected.class_efficiency[static_cast<size_t>(KernelClass::kMatmul)] > 0;
            if (rt == Runtime::kCompiled && !forced) ++compiled_turn;
          }
        }
        // Half the time a mixture of experts' routed products run as a fused MoE call (float8
        // or bf16 experts, in turn), where it runs.
        if (rng() % 2 == 0) {
          const char* moe = moe_turn++ % 2 ? "vllm-fused-moe-fp8" : "vllm-fused-moe-bf16";
          if (CheckWeightKernel(*data, moe, d, rt, "test", /*experts=*/true).ok()) {
            o.expected.moe_kernel = moe;
          }
        }
        // Half the time matmuls accumulate in FP16 (the RTX 4090's faster figure).
        o.expected.fp16_accumulate = rng() % 2 == 0;
        // Half the time norms, rotary embeddings and attention launch as HuggingFace's modules.
        if (rng() % 2 == 0) o.expected.modules = "hf-transformers";
        if (rng() % 2 == 0) {
          o.step_terms.push_back(std::make_shared<const EngineHost>(std::make_shared<const Engine>(
              (*engines)[engine_turn++ % engines->size()])));
        }
        const CostModel model(d, o);
        for (int i = 0; i < 60; ++i) {
          const OpRequest r = RandomRequest(rng);
          Result<OpAnalysis> a = AnalyzeOp(r, model);
          ASSERT_TRUE(a.ok()) << a.status().ToString();
          for (const KernelCost& c : a->costs) {
            ++checked;
            ASSERT_TRUE(c.has_expected);
            const ExpectedCost& e = c.expected;
            if (e.weight_kernel_regime >= 0) {
              weight_kernel_regimes[o.expected.weight_kernel].insert(e.weight_kernel_regime);
            }
            EXPECT_GE(e.time_s, c.time_s * (1 - 1e-12)) << d.id << " " << c.name;
            EXPECT_GE(e.compute_s, c.compute_time_s * (1 - 1e-12)) << d.id << " " << c.name;
            for (int l = 0; l < c.num_levels; ++l) {
              EXPECT_GE(e.memory_s[l], c.memory_time_s[l] * (1 - 1e-12)) << d.id << " " << l;
            }
            EXPECT_GE(e.comm_s, c.comm_time_s * (1 - 1e-12)) << d.id << " " << c.name;
            EXPECT_GT(e.efficiency, 0);
            EXPECT_LE(e.efficiency, 1);
          }
          EXPECT_GE(a->totals.expected_s, a->totals.time_s * (1 - 1e-12));
        }
        // And a product of each regime of the kernel in use, at its fewest rows, so that every
        // regime is checked whatever the random shapes.
        const bool matmul_forced =
            o.expected.class_efficiency[static_cast<size_t>(KernelClass::kMatmul)] > 0;
        if (const auto* wk = model.used_weight_kernel().kernel; wk != nullptr && !matmul_forced) {
          for (const auto& regime : wk->regimes) {
            MatmulSpec s;
            s.m = regime.min_rows;
            s.n = Pick(rng, 1, 65536);
            s.k = Pick(rng, 1, 65536);
            s.a_dtype = wk->activation_dtype;
            s.b_dtype = wk->weight_dtype;
            s.out_dtype = DType::kBf16;
            if (!wk->channel_scales) {
              s.group_size = 128;
              s.k = std::max<int64_t>(1, s.k / 128) * 128;
            }
            if (wk->zero_points && rng() % 2 == 0) s.zero_dtype = DType::kBf16;
            Result<OpAnalysis> a = AnalyzeOp(OpRequest{s}, model);
            ASSERT_TRUE(a.ok()) << a.status().ToString();
            for (const KernelCost& c : a->costs) {
              ++checked;
              const ExpectedCost& e = c.expected;
              ASSERT_GE(e.weight_kernel_regime, 0) << d.id << " " << wk->name;
              weight_kernel_regimes[wk->name].insert(e.weight_kernel_regime);
              EXPECT_GE(e.time_s, c.time_s * (1 - 1e-12)) << d.id << " " << wk->name;
              EXPECT_GE(e.compute_s, c.compute_time_s * (1 - 1e-12)) << d.id << " " << wk->name;
              for (int l = 0; l < c.num_levels; ++l) {
                EXPECT_GE(e.memory_s[l], c.memory_time_s[l] * (1 - 1e-12)) << d.id << " " << l;
              }
            }
          }
        }
        // And the routed experts' products of each regime of the fused MoE call in use (one
        // expert chosen per token, so that the fewest rows are a whole number of tokens).
        if (const auto* mk = model.used_moe_kernel().kernel; mk != nullptr && !matmul_forced) {
          for (const auto& regime : mk->regimes) {
            MatmulSpec s;
            s.experts = Pick(rng, 2, 256);
            s.expert_top_k = 1;
            s.m = regime.min_rows;
            s.n = Pick(rng, 1, 32768);
            s.k = Pick(rng, 1, 32768);
            s.a_dtype = mk->activation_dtype;
            s.b_dtype = mk->weight_dtype;
            s.out_dtype = DType::kBf16;
            Result<OpAnalysis> a = AnalyzeOp(OpRequest{s}, model);
            ASSERT_TRUE(a.ok()) << a.status().ToString();
            for (const KernelCost& c : a->costs) {
              ++checked;
              const ExpectedCost& e = c.expected;
              ASSERT_GE(e.moe_kernel_regime, 0) << d.id << " " << mk->name;
              weight_kernel_regimes[mk->name].insert(e.moe_kernel_regime);
              EXPECT_GE(e.time_s, c.time_s * (1 - 1e-12)) << d.id << " " << mk->name;
              EXPECT_GE(e.compute_s, c.compute_time_s * (1 - 1e-12)) << d.id << " " << mk->name;
              for (int l = 0; l < c.num_levels; ++l) {
                EXPECT_GE(e.memory_s[l], c.memory_time_s[l] * (1 - 1e-12)) << d.id << " " << l;
              }
            }
          }
        }
        // Collectives on every link of the device: bandwidth and step latency.
        for (size_t l = 0; l < d.links.size(); ++l) {
          CollectiveSpec cs;
          cs.kind = static_cast<CollectiveKind>(rng() % 4);
          cs.devices = Pick(rng, 2, 64);
          cs.message_bytes = static_cast<double>(Pick(rng, 1, int64_t{1} << 34));
          cs.link = d.links[l].name;
          Graph g;
          ASSERT_TRUE(g.AddOp("collective", cs).ok());
          for (const Kernel& k : Fuse(g, FusionMode::kEager)) {
            const KernelCost c = model.Evaluate(g, k);
            ++checked;
            ASSERT_TRUE(c.has_expected);
            EXPECT_GT(c.comm_time_s, 0) << d.id << " " << cs.link;
            EXPECT_GE(c.expected.comm_s, c.comm_time_s * (1 - 1e-12)) << d.id << " " << cs.link;
            EXPECT_GE(c.expected.time_s, c.time_s * (1 - 1e-12)) << d.id << " " << cs.link;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 5000);
  // Every regime of the measured kernels ran.
  EXPECT_EQ(weight_kernel_regimes["tinygemm"], (std::set<int>{0}));
  EXPECT_EQ(weight_kernel_regimes["inductor-int8"], (std::set<int>{0, 1}));
  EXPECT_EQ(weight_kernel_regimes["inductor-fp8"], (std::set<int>{0}));
  EXPECT_EQ(weight_kernel_regimes["scaled-mm-rowwise"], (std::set<int>{0}));
  EXPECT_EQ(weight_kernel_regimes["vllm-cutlass-fp8"], (std::set<int>{0, 1}));
  EXPECT_EQ(weight_kernel_regimes["aiter-ck-fp8-rowwise"], (std::set<int>{0, 1}));
  EXPECT_EQ(weight_kernel_regimes["vllm-fused-moe-fp8"], (std::set<int>{0}));
  EXPECT_EQ(weight_kernel_regimes["vllm-fused-moe-bf16"], (std::set<int>{0}));
}

}  // namespace invariants_test
}  // namespace roofline
