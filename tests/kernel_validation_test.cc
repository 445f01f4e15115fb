// The expected-time model against single kernels timed on a real GPU: PyTorch's bf16 matmuls,
// SDPA attention and memory-bound ops measured on an H100 SXM5 by this project
// (scripts/gpu-reference.py --kernels, docs/measurements/h100-2026-11-25/kernels.json). The
// bound must be below every one; the matmuls, never used to set any figure, check the expected
// time; the flash-attention rows are the data the attention wave time was fitted to
// (data/efficiency.json), so for them the test only checks the fit the file states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "roofline/efficiency.h"
#include "roofline/op_analysis.h"
#include "tests/test_util.h"

namespace roofline {
namespace {

using nlohmann::json;
using testing::Analyze;
using testing::Dev;
using testing::Mm;

json Kernels() {
  std::ifstream in(std::string(ROOFLINE_SOURCE_DIR) +
                   "/docs/measurements/h100-2026-11-25/kernels.json");
  EXPECT_TRUE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

// CUDA events around one kernel add the time between the start event and the kernel's start,
// and between its end and the stop event: a one-element-scale add reads 3.74 us between events
// but takes 1.00 us per kernel in a replayed graph of 2000. The difference is taken off every
// event time to give the kernel's time in a stream, which is what the model predicts.
double EventBracket(const json& k) {
  for (const json& r : k["memory"]) {
    if (r["op"] == "add" && r["elements"] == 4096) {
      return r["median_us"].get<double>() * 1e-6 -
             k["launch"]["graph_gpu_s_per_kernel"].get<double>();
    }
  }
  ADD_FAILURE() << "no 4096-element add in the file";
  return 0;
}

// The efficiency data with the attention wave time scaled by `waves` (0: none).
std::shared_ptr<const EfficiencyData> Data(double waves = 1) {
  Result<EfficiencyData> r = LoadDefaultEfficiencyData();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EfficiencyData d = r.ok() ? *r : EfficiencyData{};
  if (waves == 0) d.attention_waves.clear();
  for (auto& w : d.attention_waves) w.wave_s.value *= waves;
  return std::make_shared<const EfficiencyData>(std::move(d));
}

// Kernels in a stream, as a CUDA graph replays them (the measurement's own launch pattern).
CostModel InStream(double waves = 1) {
  CostOptions o;
  o.efficiency = Data(waves);
  o.expected.runtime = Runtime::kCudaGraph;
  return CostModel(Dev("h100-sxm"), o);
}

struct Timed {
  std::string what;
  double measured = 0, bound = 0, expected = 0;
  double Error() const { return (expected - measured) / measured; }
};

Timed Time(const OpRequest& r, const CostModel& model, const std::string& what, double measured) {
  OpAnalysis a = Analyze(r, model);
  Timed t{what, measured, 0, 0};
  for (const KernelCost& c : a.costs) {
    t.bound += c.time_s * static_cast<double>(c.repeat);
    t.expected += c.expected.time_s * static_cast<double>(c.repeat);
  }
  return t;
}

std::vector<Timed> Matmuls(const json& k, const CostModel& model, double bracket) {
  std::vector<Timed> out;
  for (const json& r : k["matmuls"]) {
    OpRequest req{Mm(r["m"], r["n"], r["k"])};
    out.push_back(Time(req, model,
                       r["op"].get<std::string>() + " m=" + std::to_string(r["m"].get<int>()),
                       r["median_us"].get<double>() * 1e-6 - bracket));
  }
  return out;
}

std::vector<Timed> Attention(const json& k, const CostModel& model, double bracket,
                             const std::string& backend) {
  std::vector<Timed> out;
  for (const json& r : k["attention"]) {
    if (r.contains("refused") || r["backend"] != backend) continue;
    AttentionSpec s;
    s.batch = r["b"];
    s.heads = r["hq"];
    s.kv_heads = r["hkv"];
    s.head_dim = r["d"];
    s.q_len = r["sq"];
    s.kv_len = r["skv"];
    s.causal = r["causal"];
    out.push_back(
        Time(OpRequest{s}, model, r.dump(), r["median_us"].get<double>() * 1e-6 - bracket));
  }
  return out;
}

std::vector<Timed> MemoryOps(const json& k, const CostModel& model, double bracket) {
  std::vector<Timed> out;
  for (const json& r : k["memory"]) {
    const double elements = r["elements"];
    OpRequest req;
    if (r["op"] == "rms_norm") {
      NormSpec n;
      n.rows = static_cast<int64_t>(elements) / 4096;
      n.cols = 4096;
      req.spec = n;
    } else {
      ElementwiseSpec e;
      e.elements = elements;
      e.inputs = r["op"] == "add" ? 2 : 1;
      req.spec = e;
    }
    out.push_back(Time(req, model, r.dump(), r["median_us"].get<double>() * 1e-6 - bracket));
  }
  return out;
}

double MedianAbsError(const std::vector<Timed>& ts) {
  std::vector<double> e;
  for (const Timed& t : ts) e.push_back(std::abs(t.Error()));
  std::sort(e.begin(), e.end());
  if (e.empty()) return 0;
  const size_t h = e.size() / 2;
  return e.size() % 2 == 1 ? e[h] : (e[h - 1] + e[h]) / 2;
}

TEST(KernelValidation, TheBracketTheEventsAddIsAFewMicroseconds) {
  const double b = EventBracket(Kernels());
  EXPECT_GT(b, 1e-6);
  EXPECT_LT(b, 4e-6);
}

// The bound is never above a measured time: every kernel of every backend, in-stream time.
TEST(KernelValidation, TheBoundIsBelowEveryKernelTimedOnTheH100) {
  const json k = Kernels();
  const double bracket = EventBracket(k);
  const CostModel model = InStream();
  std::vector<Timed> all = Matmuls(k, model, bracket);
  for (const char* backend : {"flash", "cudnn", "efficient"}) {
    for (Timed& t : Attention(k, model, bracket, backend)) all.push_back(t);
  }
  for (Timed& t : MemoryOps(k, model, bracket)) all.push_back(t);
  EXPECT_GT(all.size(), 100u);
  for (const Timed& t : all) {
    EXPECT_GT(t.measured, 0) << t.what;
    EXPECT_LE(t.bound, t.measured) << t.what;
    EXPECT_LE(t.bound, t.expected) << t.what;
  }
}

// The matmuls (decode GEMVs to 4096-row prefill GEMMs over Llama-3-8B's weights, 52 of them)
// set no figure of the model: they are an independent check of the tile and wave model at the
// published best-shape rate and the published copy bandwidth.
TEST(KernelValidation, MatmulsComeWithinAThirdOfTheirExpectedTimeMedianATenth) {
  const json k = Kernels();
  const std::vector<Timed> mm = Matmuls(k, InStream(), EventBracket(k));
  ASSERT_EQ(mm.size(), 52u);
  for (const Timed& t : mm) EXPECT_LT(std::abs(t.Error()), 0.3) << t.what;
  EXPECT_LT(MedianAbsError(mm), 0.1);
}

// Large copies and activations, where bandwidth dominates: within 15% (the model reads
// bandwidth-bound kernels at the published BabelStream copy rate).
TEST(KernelValidation, LargeElementwiseKernelsMoveBytesAtTheAchievableBandwidth) {
  const json k = Kernels();
  int checked = 0;
  for (const Timed& t : MemoryOps(k, InStream(), EventBracket(k))) {
    const json r = json::parse(t.what);
    if (r["op"] == "rms_norm" || r["bytes"].get<double>() < 64e6) continue;
    EXPECT_LT(std::abs(t.Error()), 0.15) << t.what;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

// The fit data/efficiency.json states for attention_waves: with the wave time the flash
// backend's 22 kernels come within a median 5.1% (largest 23.5%); without it 29.4% (largest
// 79%, a batch-1 decode over 1k tokens at a fifth of its time).
TEST(KernelValidation, FlashAttentionWithItsWaveTimeIsTheFitTheDataFileStates) {
  const json k = Kernels();
  const double bracket = EventBracket(k);
  const std::vector<Timed> with = Attention(k, InStream(1), bracket, "flash");
  const std::vector<Timed> without = Attention(k, InStream(0), bracket, "flash");
  ASSERT_EQ(with.size(), 22u);
  EXPECT_NEAR(MedianAbsError(with), 0.051, 0.002);
  EXPECT_NEAR(MedianAbsError(without), 0.294, 0.002);
  double largest_without = 0;
  for (const Timed& t : without) largest_without = std::max(largest_without, std::abs(t.Error()));
  EXPECT_NEAR(largest_without, 0.79, 0.01);
  double largest = 0;
  for (const Timed& t : with) largest = std::max(largest, std::abs(t.Error()));
  EXPECT_NEAR(largest, 0.235, 0.002);
  // The figure is the least median: 5% less or more is no better.
  for (double scale : {0.95, 1.05}) {
    EXPECT_GE(MedianAbsError(Attention(k, InStream(scale), bracket, "flash")), MedianAbsError(with))
        << scale;
  }
}

}  // namespace
}  // namespace roofline
