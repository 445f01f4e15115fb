// The weight kernels fitted to kernel timings published by others (data/efficiency.json,
// scripts/fit-published-kernels.py, docs/research/decode-gemm-kernels.md): the tool's kernel term
// gives back the published timings within the fit's stated error, each kernel runs only on its
// vendor's GPUs, a fused MoE call runs only routed experts' products, engines pick the first of
// their kernels that runs on the device, and bad names give one line naming the flag or file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/efficiency.h"
#include "roofline/op_analysis.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace published_kernels_test {

using testing::Analyze;
using testing::Dev;
using testing::Mm;
using testing::RunCli;

std::shared_ptr<const EfficiencyData> Data() { return testing::EmbeddedEfficiency(); }

CostModel WithKernels(const Device& d, const std::string& weight_kernel,
                      const std::string& moe_kernel = "") {
  CostOptions o;
  o.efficiency = Data();
  o.expected.runtime = Runtime::kCudaGraph;
  o.expected.weight_kernel = weight_kernel;
  o.expected.moe_kernel = moe_kernel;
  return CostModel(d, o);
}

// A float8 product (W8A8) with a scale per output column and bf16 output, rows x n x k.
MatmulSpec Fp8(int64_t m, int64_t n, int64_t k) {
  MatmulSpec s = Mm(m, n, k, DType::kFp8);
  s.out_dtype = DType::kBf16;
  return s;
}

// The kernel's own time: what the term gives beside the launch gap.
double KernelTime(const ExpectedCost& e) { return std::max(e.memory_s[0], e.compute_s) + e.fixed_s; }

// The gap between kernels the tool adds to each (launch.cuda-graph.gap_s), which timings of
// back-to-back calls hold.
constexpr double kGap = 1.0e-6;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// vllm-project/vllm PR #5144 ("[Kernel] Update Cutlass fp8 configs", 2024-05-30), H100:
// cutlass_fp8_fp8_bf16_scaled_mm, column "cutlass this PR", microseconds; (M, K, N, us). The
// kernel's fixed time holds the activation's quantization besides (vllm-project/vllm PR #49363:
// 2.3 us at one row, 4.1 us at 16-64), which these timings of the product alone do not.
TEST(PublishedKernels, VllmsCutlassFp8ProductGivesBackItsTimings) {
  struct Timing {
    int64_t m, k, n;
    double us;
  };
  const Timing timings[] = {{1, 4096, 12288, 21.6}, {1, 4096, 4096, 8.2},   {1, 4096, 22016, 36.8},
                            {1, 11008, 4096, 20.4}, {16, 4096, 12288, 22.5}, {16, 4096, 4096, 8.2},
                            {16, 4096, 22016, 37.1}, {16, 11008, 4096, 20.7}};
  const CostModel model = WithKernels(Dev("h100-sxm"), "vllm-cutlass-fp8");
  ASSERT_NE(model.used_weight_kernel().kernel, nullptr);
  EXPECT_TRUE(model.used_weight_kernel().measured_here);
  for (const Timing& t : timings) {
    const ExpectedCost e = Analyze(OpRequest{Fp8(t.m, t.n, t.k)}, model).costs[0].expected;
    ASSERT_EQ(e.weight_kernel_regime, t.m == 1 ? 0 : 1) << t.m;
    const double quantization = t.m == 1 ? 2.3e-6 : 4.1e-6;
    const double product = KernelTime(e) - quantization;
    // The fit's largest error over these 8, their gaps taken off, is 5.5%.
    EXPECT_NEAR(product / (t.us * 1e-6 - kGap), 1.0, 0.056) << t.m << "x" << t.k << "x" << t.n;
  }
  // PR #49363 (2026-07-21), H100, 5376 deep, 12288 wide, with the activation's quantization:
  // 4.733311 TFLOP/s at one row (27.9 us) and 275.078859 at 64 (30.7 us); the fit, of products two
  // years older, with the gap is within 8% of them.
  const double with1 = 2.0 * 1 * 12288 * 5376 / 4.733311e12;
  const double with64 = 2.0 * 64 * 12288 * 5376 / 275.078859e12;
  EXPECT_NEAR(
      (KernelTime(Analyze(OpRequest{Fp8(1, 12288, 5376)}, model).costs[0].expected) + kGap) /
          with1,
      1.0, 0.09);
  EXPECT_NEAR(
      (KernelTime(Analyze(OpRequest{Fp8(64, 12288, 5376)}, model).costs[0].expected) + kGap) /
          with64,
      1.0, 0.09);
  // Beyond 64 rows, and for bf16 activations (weight-only FP8), the model's default.
  EXPECT_EQ(Analyze(OpRequest{Fp8(65, 12288, 5376)}, model).costs[0].expected.weight_kernel_regime,
            -1);
  MatmulSpec w8a16 = Fp8(1, 12288, 5376);
  w8a16.a_dtype = DType::kBf16;
  EXPECT_EQ(Analyze(OpRequest{w8a16}, model).costs[0].expected.weight_kernel_regime, -1);
  // It needs float8 tensor cores (an A100 has none) and runs on NVIDIA GPUs only.
  const Status a100 = CheckWeightKernel(*Data(), "vllm-cutlass-fp8", Dev("a100-sxm-80gb"),
                                        Runtime::kCudaGraph, "--wk");
  ASSERT_FALSE(a100.ok());
  EXPECT_NE(a100.ToString().find("no tensor.fp8 ceiling"), std::string::npos) << a100.ToString();
  const Status amd =
      CheckWeightKernel(*Data(), "vllm-cutlass-fp8", Dev("mi300x"), Runtime::kCudaGraph, "--wk");
  ASSERT_FALSE(amd.ok());
  EXPECT_NE(amd.ToString().find("runs on NVIDIA GPUs, not on mi300x (AMD)"), std::string::npos)
      << amd.ToString();
}

// ROCm/aiter commit fbb52ddf (PR #1092, 2025-09-26, "[MI300X] tune Gemm performance for llama
// 70b/405b"), aiter/configs/a8w8_tuned_gemm.csv, rows cu_num 304, column us: the tp-8 products of
// Llama-3.1-405B and Llama-3-70B; (N, K, us at 1, 16, 32 and 64 rows).
TEST(PublishedKernels, AitersFp8RowwiseProductGivesBackItsTimings) {
  struct Row {
    int64_t n, k;
    double us[4];
  };
  const Row rows[] = {{2304, 16384, {28.6795, 23.2689, 23.5703, 25.47}},
                      {16384, 2048, {12.3237, 12.5761, 13.9189, 17.2724}},
                      {13312, 16384, {71.7882, 72.6482, 79.4559, 95.4713}},
                      {16384, 6656, {31.3479, 32.8949, 32.7568, 39.3254}},
                      {1280, 8192, {15.9787, 12.7577, 12.9103, 12.8697}},
                      {8192, 1024, {6.1655, 6.2013, 6.4955, 7.6483}},
                      {7168, 8192, {26.3577, 25.5898, 26.0863, 28.916}},
                      {8192, 3584, {12.0983, 11.9126, 12.5332, 15.0246}}};
  const int64_t ms[] = {1, 16, 32, 64};
  const CostModel model = WithKernels(Dev("mi300x"), "aiter-ck-fp8-rowwise");
  ASSERT_NE(model.used_weight_kernel().kernel, nullptr);
  std::vector<double> errors;
  for (const Row& r : rows) {
    for (int i = 0; i < 4; ++i) {
      const ExpectedCost e = Analyze(OpRequest{Fp8(ms[i], r.n, r.k)}, model).costs[0].expected;
      ASSERT_EQ(e.weight_kernel_regime, ms[i] <= 32 ? 0 : 1);
      errors.push_back(std::abs(KernelTime(e) / (r.us[i] * 1e-6) - 1));
    }
  }
  // The fit over all 96 timings of the file: median 9.1% and 6.9% by regime, largest 27%.
  EXPECT_LT(Median(errors), 0.12);
  EXPECT_LT(*std::max_element(errors.begin(), errors.end()), 0.30);
  // The narrow, deep QKV of the 405B is held by its steps along K, not its bytes.
  const ExpectedCost qkv = Analyze(OpRequest{Fp8(1, 2304, 16384)}, model).costs[0].expected;
  EXPECT_GT(qkv.k_steps_s, 16384.0 * 2304 / (4.15e12 / 1.3));
  EXPECT_DOUBLE_EQ(qkv.memory_s[0], qkv.k_steps_s);
  // Not on NVIDIA GPUs.
  EXPECT_FALSE(
      CheckWeightKernel(*Data(), "aiter-ck-fp8-rowwise", Dev("h100-sxm"), Runtime::kEager, "--wk")
          .ok());
}

// A routed-expert product of `tokens` tokens over `experts` experts, top `top`: gate or up
// (hidden -> width) or down (width -> hidden).
MatmulSpec Expert(int64_t tokens, int64_t experts, int64_t top, int64_t n, int64_t k, DType dt) {
  MatmulSpec s = Mm(tokens * top, n, k, dt);
  s.out_dtype = DType::kBf16;
  s.experts = experts;
  s.expert_top_k = top;
  return s;
}

// vllm-project/vllm PR #24700 (2025-09-11, "Benchmarks on H100"), benchmark_moe.py's kernel time
// of the whole fused_moe call, microseconds: the three products the graph counts (gate, up,
// down) together give it back.
TEST(PublishedKernels, VllmsFusedMoeCallGivesBackItsTimings) {
  struct Case {
    const char* kernel;
    DType dt;
    int64_t experts, top, hidden, width;
    std::vector<std::pair<int64_t, double>> timings;  // tokens, us
    double largest;                                   // the fit's largest error
  };
  const Case cases[] = {
      // Qwen3-30B-A3B FP8 (per-tensor) at tp 1, column "PR".
      {"vllm-fused-moe-fp8", DType::kFp8, 128, 8, 2048, 768,
       {{1, 40.44}, {4, 78.10}, {16, 164.64}, {64, 237.26}, {128, 247.67}}, 0.03},
      // Mixtral-8x7B bf16 at tp 2 (expert width 14336 / 2), tuned column.
      {"vllm-fused-moe-bf16", DType::kBf16, 8, 2, 4096, 7168,
       {{1, 144.03}, {4, 351.10}, {8, 434.98}, {64, 483.14}, {256, 536.77}}, 0.06}};
  // The three products, each with the gap the tool adds: the call's time in the graph.
  for (const Case& c : cases) {
    const CostModel model = WithKernels(Dev("h100-sxm"), "", c.kernel);
    ASSERT_NE(model.used_moe_kernel().kernel, nullptr) << c.kernel;
    ASSERT_EQ(model.used_weight_kernel().kernel, nullptr);
    for (const auto& [tokens, us] : c.timings) {
      double call = 0;
      for (const MatmulSpec& s :
           {Expert(tokens, c.experts, c.top, c.width, c.hidden, c.dt),
            Expert(tokens, c.experts, c.top, c.width, c.hidden, c.dt),
            Expert(tokens, c.experts, c.top, c.hidden, c.width, c.dt)}) {
        const ExpectedCost e = Analyze(OpRequest{s}, model).costs[0].expected;
        EXPECT_EQ(e.moe_kernel_regime, 0) << c.kernel << " " << tokens;
        EXPECT_EQ(e.weight_kernel_regime, -1);
        call += KernelTime(e) + kGap;
      }
      EXPECT_NEAR(call / (us * 1e-6), 1.0, c.largest) << c.kernel << " at " << tokens << " tokens";
    }
    // A dense product of the same dtype is not the call's.
    const ExpectedCost dense =
        Analyze(OpRequest{Mm(8, c.width, c.hidden, c.dt)}, model).costs[0].expected;
    EXPECT_EQ(dense.moe_kernel_regime, -1);
    EXPECT_EQ(dense.fixed_s, 0);
  }
  // A fused MoE call is not a linear's kernel, nor the reverse.
  const Status as_linear =
      CheckWeightKernel(*Data(), "vllm-fused-moe-fp8", Dev("h100-sxm"), Runtime::kEager, "--wk");
  ASSERT_FALSE(as_linear.ok());
  EXPECT_NE(as_linear.ToString().find("--moe-kernel takes it"), std::string::npos);
  const Status as_moe = CheckWeightKernel(*Data(), "vllm-cutlass-fp8", Dev("h100-sxm"),
                                          Runtime::kEager, "--moe", /*experts=*/true);
  ASSERT_FALSE(as_moe.ok());
  EXPECT_NE(as_moe.ToString().find("--weight-kernel takes it"), std::string::npos);
}

nlohmann::json ModelJson(std::vector<std::string> args) {
  std::vector<std::string> all = {"model"};
  all.insert(all.end(), args.begin(), args.end());
  all.insert(all.end(), {"--phase", "decode", "--format", "json"});
  const testing::CliOutput run = RunCli(all);
  EXPECT_EQ(run.status, 0) << run.err;
  return run.status == 0 ? nlohmann::json::parse(run.out) : nlohmann::json::object();
}

const nlohmann::json& PhaseSetup(const nlohmann::json& j) {
  return j.at("phases").at(0).at("expected").at("setup");
}

// vLLM's and SGLang's entries run FP8 linears and routed experts as the kernels timed with vLLM,
// on NVIDIA GPUs; where a kernel does not run (an AMD GPU) the weights stream as without one,
// and an engine file listing a kernel per kind of GPU gets the one that runs.
TEST(PublishedKernels, EnginesTakeTheFirstKernelThatRunsOnTheDevice) {
  const std::vector<std::string> fp8 = {"llama-3-70b", "--tp", "8",     "--batch", "16",
                                        "--dtype",     "fp8", "--weight-dtype", "fp8"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = fp8;
    a.insert(a.end(), extra.begin(), extra.end());
    return ModelJson(a);
  };
  const nlohmann::json h100 = with({"--hw", "h100-sxm", "--engine", "vllm@0.6.3"});
  ASSERT_TRUE(PhaseSetup(h100).contains("weight_kernel"));
  EXPECT_EQ(PhaseSetup(h100).at("weight_kernel").at("name"), "vllm-cutlass-fp8");
  // Four products a layer as vLLM loads them (qkv, o, gate-up, down) and the lm_head, all FP8
  // at 16 rows.
  EXPECT_EQ(PhaseSetup(h100).at("weight_kernel").at("kernels_run_as_it"), 4 + 1);
  // With the seven linears kept apart (q, k, v, o, gate, up, down): seven products a layer.
  const nlohmann::json apart =
      with({"--hw", "h100-sxm", "--engine", "vllm@0.6.3", "--fused-linears", "none"});
  EXPECT_EQ(PhaseSetup(apart).at("weight_kernel").at("kernels_run_as_it"), 7 + 1);
  const nlohmann::json mi300x = with({"--hw", "mi300x", "--engine", "vllm@0.6.3"});
  EXPECT_FALSE(PhaseSetup(mi300x).contains("weight_kernel"));
  // An engine file of one's own with a kernel per kind of GPU.
  const std::string path = ::testing::TempDir() + "/two-kernels-engine.json";
  {
    std::ofstream f(path);
    f << R"({"schema_version": 1, "id": "mine", "name": "Mine", "entries": [{"versions": "1-",
          "runtime": {"prefill": "eager", "decode": "cuda-graph"},
          "weight_kernels": {"fp8": ["vllm-cutlass-fp8", "aiter-ck-fp8-rowwise"]},
          "moe_kernels": {"bf16": "vllm-fused-moe-bf16"},
          "source": "a test", "host": []}]})";
  }
  EXPECT_EQ(PhaseSetup(with({"--hw", "mi300x", "--engine", path})).at("weight_kernel").at("name"),
            "aiter-ck-fp8-rowwise");
  EXPECT_EQ(PhaseSetup(with({"--hw", "h100-sxm", "--engine", path})).at("weight_kernel").at("name"),
            "vllm-cutlass-fp8");
  // A given kernel is the user's: one that does not run on the device is refused.
  const testing::CliOutput refused =
      RunCli({"model", "llama-3-70b", "--hw", "h100-sxm", "--dtype", "fp8", "--weight-dtype",
              "fp8", "--weight-kernel", "aiter-ck-fp8-rowwise"});
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("--weight-kernel: the aiter-ck-fp8-rowwise kernel runs on AMD GPUs"),
            std::string::npos)
      << refused.err;
  std::remove(path.c_str());
  // Mixtral under vLLM: its routed experts run as the bf16 call, three products a layer.
  const nlohmann::json mixtral =
      ModelJson({"mixtral-8x7b", "--hw", "h100-sxm", "--tp", "2", "--batch", "8", "--engine",
                 "vllm"});
  ASSERT_TRUE(PhaseSetup(mixtral).contains("moe_kernel"));
  EXPECT_EQ(PhaseSetup(mixtral).at("moe_kernel").at("name"), "vllm-fused-moe-bf16");
  EXPECT_EQ(PhaseSetup(mixtral).at("moe_kernel").at("kernels_run_as_it"), 3);
  EXPECT_FALSE(PhaseSetup(mixtral).contains("weight_kernel"));
  // The text says what ran as it.
  const testing::CliOutput text = RunCli(
      {"model", "mixtral-8x7b", "--hw", "h100-sxm", "--tp", "2", "--batch", "8", "--phase",
       "decode", "--moe-kernel", "vllm-fused-moe-bf16"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("routed experts' bf16 products run as the vllm-fused-moe-bf16 fused "
                          "MoE call (per product 6.50 us"),
            std::string::npos)
      << text.out;
  // A model whose experts the call does not take (bf16 Mixtral, a float8 call) says so.
  const testing::CliOutput other = RunCli(
      {"model", "mixtral-8x7b", "--hw", "h100-sxm", "--tp", "2", "--phase", "decode",
       "--moe-kernel", "vllm-fused-moe-fp8"});
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_NE(other.out.find("no routed-expert product here runs as the vllm-fused-moe-fp8"),
            std::string::npos)
      << other.out;
  // A dense model has no routed experts: a call given is refused, an engine's left out.
  const testing::CliOutput dense = RunCli({"model", "llama-3-8b", "--phase", "decode",
                                           "--moe-kernel", "vllm-fused-moe-bf16"});
  EXPECT_EQ(dense.status, 2);
  EXPECT_NE(dense.err.find("--moe-kernel: runs a mixture of experts' routed products; "
                           "llama-3-8b has no routed experts"),
            std::string::npos)
      << dense.err;
  const nlohmann::json dense_engine = ModelJson({"llama-3-8b", "--engine", "vllm"});
  EXPECT_FALSE(PhaseSetup(dense_engine).contains("moe_kernel"));
  // A float8 kernel needs float8 tensor cores: not on an A100, where the engine's is left out.
  const nlohmann::json a100 =
      ModelJson({"llama-3-8b", "--hw", "a100-sxm-80gb", "--dtype", "fp8", "--engine", "vllm"});
  EXPECT_FALSE(PhaseSetup(a100).contains("weight_kernel"));
  // --dtype alone sets the weights' dtype the engine's kernels follow.
  const nlohmann::json dtype_only =
      ModelJson({"llama-3-8b", "--hw", "h100-sxm", "--dtype", "fp8", "--engine", "vllm"});
  ASSERT_TRUE(PhaseSetup(dtype_only).contains("weight_kernel"));
  EXPECT_EQ(PhaseSetup(dtype_only).at("weight_kernel").at("name"), "vllm-cutlass-fp8");
}

// Bad names and files: one line naming the flag or the file and field, exit status 2.
TEST(PublishedKernels, BadKernelNamesAndFilesAreRefusedWithOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"model", "mixtral-8x7b", "--moe-kernel", "vllm-cutlass-fp8"},
       "--moe-kernel: the vllm-cutlass-fp8 kernel runs a linear's weights"},
      {{"model", "llama-3-8b", "--weight-kernel", "vllm-fused-moe-fp8"},
       "--weight-kernel: the vllm-fused-moe-fp8 kernel is a fused MoE call"},
      {{"model", "mixtral-8x7b", "--moe-kernel", "vllm-fused-moe"}, "--moe-kernel"},
  };
  for (const auto& [args, said] : cases) {
    const testing::CliOutput run = RunCli(args);
    EXPECT_EQ(run.status, 2) << args.back();
    EXPECT_EQ(run.err.rfind("error: " + said, 0), 0u) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
  const std::string base =
      R"({"schema_version": 1, "id": "bad", "name": "Bad", "entries": [{"versions": "1-",
          "source": "a test", "host": [], )";
  const std::vector<std::pair<std::string, std::string>> files = {
      {R"("moe_kernels": {"fp8": "vllm-cutlass-fp8"}}]})", "moe_kernels.fp8"},
      {R"("weight_kernels": {"fp8": "vllm-fused-moe-fp8"}}]})", "weight_kernels.fp8"},
      {R"("weight_kernels": {"fp8": ["vllm-cutlass-fp8", 3]}}]})", "weight_kernels.fp8[1]"},
      {R"("weight_kernels": {"fp8": []}}]})", "weight_kernels.fp8"},
      {R"("moe_kernels": {"bf16": "no-such-kernel"}}]})", "moe_kernels.bf16"},
      {R"("moe_kernels": {"bf16": "vllm-fused-moe-fp8"}}]})", "moe_kernels.bf16"},
      {R"("weight_kernels": {"fp9": "vllm-cutlass-fp8"}}]})", "weight_kernels.fp9"},
      {R"("weight_kernels": {"fp8": ["vllm-cutlass-fp8", "vllm-cutlass-fp8"]}}]})",
       "weight_kernels.fp8[1]"},
      {R"("moe_kernels": {"bf16": "vllm-fused-moe-bf16", "bfloat16": "vllm-fused-moe-bf16"}}]})",
       "moe_kernels.bfloat16"},
      {R"("weight_kernels": {"fp32": "vllm-cutlass-fp8"}}]})", "weight_kernels.fp32"}};
  for (const auto& [tail, field] : files) {
    const std::string path = ::testing::TempDir() + "/bad-kernels-engine.json";
    {
      std::ofstream f(path);
      f << base << tail;
    }
    const testing::CliOutput run =
        RunCli({"model", "mixtral-8x7b", "--dtype", "fp8", "--weight-dtype", "fp8", "--engine",
                path});
    EXPECT_EQ(run.status, 2) << tail;
    EXPECT_NE(run.err.find(path), std::string::npos) << run.err;
    EXPECT_NE(run.err.find(field), std::string::npos) << field << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    std::remove(path.c_str());
  }
}

// The efficiency file: an unquantized weight dtype only for a fused MoE call; `experts` a bool.
TEST(PublishedKernels, TheEfficiencyFileChecksItsKernels) {
  for (const char* id : {"vllm-cutlass-fp8", "aiter-ck-fp8-rowwise", "vllm-fused-moe-fp8",
                         "vllm-fused-moe-bf16"}) {
    const auto& ks = Data()->weight_kernels;
    const auto k = std::find_if(ks.begin(), ks.end(), [&](const auto& w) { return w.name == id; });
    ASSERT_NE(k, ks.end()) << id;
    EXPECT_FALSE(k->vendor.empty()) << id;
    EXPECT_NE(k->source.find("not this project's runs"), std::string::npos) << id;
    for (const auto& r : k->regimes) {
      EXPECT_FALSE(r.fixed_s.source.empty()) << id;
      EXPECT_GE(r.memory_traffic.value, 1.0) << id;
    }
  }
}

}  // namespace published_kernels_test
}  // namespace roofline
