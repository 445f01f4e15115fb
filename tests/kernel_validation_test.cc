// The expected-time model against single kernels timed on a real GPU: PyTorch's bf16 matmuls,
// SDPA attention and memory-bound ops measured on an H100 SXM5 by this project
// (scripts/gpu-reference.py --kernels, docs/measurements/h100-2026-11-25/kernels.json), and on
// 2026-11-26 the same on an H100 and an H200 plus fp8, int8 and int4 matmuls and many-wave
// attention (scripts/gpu-quant-kernels.py). The bound must be below every one; kernels never
// used to set any figure check the expected time; for the data a figure was fitted to
// (data/efficiency.json), the test checks the fit the file states.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "roofline/efficiency.h"
#include "roofline/op_analysis.h"
#include "tests/test_util.h"

namespace roofline {
namespace kernel_validation_test {

using nlohmann::json;
using testing::Analyze;
using testing::Dev;
using testing::Mm;

// A measurement file under docs/measurements/.
json Load(const std::string& path) {
  std::ifstream in(std::string(ROOFLINE_SOURCE_DIR) + "/docs/measurements/" + path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

json Kernels() { return Load("h100-2026-11-25/kernels.json"); }

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

// Kernels in a stream, as a CUDA graph replays them (the measurement's own launch pattern;
// `compiled`, the same launch costs, for a kernel torch.compile generates).
CostModel InStream(double waves = 1, const std::string& device = "h100-sxm",
                   const std::string& weight_kernel = "", Runtime runtime = Runtime::kCudaGraph) {
  CostOptions o;
  o.efficiency = Data(waves);
  o.expected.runtime = runtime;
  o.expected.weight_kernel = weight_kernel;
  return CostModel(Dev(device), o);
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

// Time(), checking that the bound is below both the measured and the expected time.
Timed TimeUnderBound(const OpRequest& r, const CostModel& model, const std::string& what,
                     double measured) {
  const Timed t = Time(r, model, what, measured);
  EXPECT_LE(t.bound, t.measured) << what;
  EXPECT_LE(t.bound, t.expected) << what;
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
                             const std::string& backend, int64_t min_waves = 0) {
  std::vector<Timed> out;
  for (const json& r : k["attention"]) {
    if (r.contains("refused") || r["backend"] != backend) continue;
    // Thread blocks of 128 query rows (a grouped decode's group in one) in waves of 132 SMs.
    const bool grouped = r["sq"] == 1;
    const int64_t rows =
        grouped ? r["hq"].get<int64_t>() / r["hkv"].get<int64_t>() : r["sq"].get<int64_t>();
    const int64_t blocks = r["b"].get<int64_t>() * (grouped ? r["hkv"] : r["hq"]).get<int64_t>() *
                           ((rows + 127) / 128);
    if ((blocks + 131) / 132 < min_waves) continue;
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

// The quantized and 8-bit matmuls of scripts/gpu-quant-kernels.py whose op names `op` (fp8
// tensorwise/rowwise: fp8 inputs, bf16 out; int8: int8 inputs; bf16; int4 weight-only: bf16
// activations by int4 weights in groups of 128).
std::vector<Timed> QuantMatmuls(const json& q, const CostModel& model, double bracket,
                                const std::string& op) {
  std::vector<Timed> out;
  for (const json& section : {q["matmuls"], q["int4"]}) {
    for (const json& r : section) {
      if (r.contains("refused") || r["op"] != op) continue;
      MatmulSpec s = Mm(r["m"], r["n"], r["k"]);
      if (op == "int4 weight-only") {
        s.b_dtype = DType::kInt4;
        s.group_size = 128;
      } else if (op != "bf16") {
        s.a_dtype = s.b_dtype = op == "int8" ? DType::kInt8 : DType::kFp8;
      }
      out.push_back(
          Time(OpRequest{s}, model,
               op + " " + r["shape"].get<std::string>() + " m=" + std::to_string(r["m"].get<int>()),
               r["median_us"].get<double>() * 1e-6 - bracket));
    }
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

double LargestAbsError(const std::vector<Timed>& ts) {
  double largest = 0;
  for (const Timed& t : ts) largest = std::max(largest, std::abs(t.Error()));
  return largest;
}

// The runs of 2026-11-26 (scripts/gpu-reference.py --kernels and scripts/gpu-quant-kernels.py
// on an H100 SXM5 and an H200, docs/measurements/h100-2026-11-26/, h200-2026-11-26/): the bound
// is below every kernel of both, 8-bit and int4 matmuls and many-wave attention included.
TEST(KernelValidation, TheBoundIsBelowEveryKernelOfTheH100AndH200RunsOfNovember26) {
  size_t checked = 0;
  for (const auto& [folder, device] :
       {std::pair<std::string, std::string>{"h100-2026-11-26", "h100-sxm"},
        {"h200-2026-11-26", "h200"}}) {
    const json k = Load(folder + "/kernels.json");
    const json q = Load(folder + "/quant.json");
    const double bracket = EventBracket(k);
    for (const std::string& wk : {std::string(), std::string("tinygemm")}) {
      const CostModel model = InStream(1, device, wk);
      std::vector<Timed> all = Matmuls(k, model, bracket);
      for (const char* backend : {"flash", "cudnn", "efficient"}) {
        for (Timed& t : Attention(k, model, bracket, backend)) all.push_back(t);
      }
      for (Timed& t : Attention(q, model, bracket, "flash")) all.push_back(t);
      for (Timed& t : MemoryOps(k, model, bracket)) all.push_back(t);
      for (const char* op : {"fp8 tensorwise", "fp8 rowwise", "int8", "bf16", "int4 weight-only"}) {
        for (Timed& t : QuantMatmuls(q, model, bracket, op)) all.push_back(t);
      }
      for (const Timed& t : all) {
        EXPECT_LE(t.bound, t.measured) << folder << " " << t.what;
        EXPECT_LE(t.bound, t.expected) << folder << " " << t.what;
      }
      checked += all.size();
    }
  }
  EXPECT_GT(checked, 1000u);
}

// The model built from H100 data, on the H200 (published H200 ceilings: Azure's 4.01 TB/s copy,
// the MAMF table's best shapes), before anything was fitted to an H200: the 52 bf16 matmuls
// within a median 5.5%, the 22 flash kernels 6.0% (the H100's own on 2026-11-25: 4.5% and 5.1%;
// on 2026-11-26: 4.6% and 5.2%).
TEST(KernelValidation, TheH100ModelHoldsOnTheH200) {
  const json k = Load("h200-2026-11-26/kernels.json");
  const double bracket = EventBracket(k);
  const CostModel model = InStream(1, "h200");
  const std::vector<Timed> mm = Matmuls(k, model, bracket);
  ASSERT_EQ(mm.size(), 52u);
  EXPECT_NEAR(MedianAbsError(mm), 0.055, 0.003);
  EXPECT_LT(LargestAbsError(mm), 0.25);
  const std::vector<Timed> flash = Attention(k, model, bracket, "flash");
  ASSERT_EQ(flash.size(), 22u);
  EXPECT_NEAR(MedianAbsError(flash), 0.060, 0.003);
  EXPECT_LT(LargestAbsError(flash), 0.25);
}

// fp8 GEMMs (torch._scaled_mm, one scale per tensor; cuBLASLt) set no figure: the tile and wave
// model at the MAMF table's best fp8 shape, 1 to 8192 rows over Llama-3 weights. Medians 9.5%
// (H100) and 8.8% (H200), largest 24.0% and 27.2%: the limits pin today's figures.
TEST(KernelValidation, Fp8MatmulsComeWithinAMedianTenthOfTheirExpectedTime) {
  for (const auto& [folder, device] :
       {std::pair<std::string, std::string>{"h100-2026-11-26", "h100-sxm"},
        {"h200-2026-11-26", "h200"}}) {
    const json k = Load(folder + "/kernels.json");
    const std::vector<Timed> fp8 = QuantMatmuls(Load(folder + "/quant.json"), InStream(1, device),
                                                EventBracket(k), "fp8 tensorwise");
    ASSERT_EQ(fp8.size(), 44u) << folder;
    EXPECT_LT(MedianAbsError(fp8), 0.10) << folder;
    EXPECT_LT(LargestAbsError(fp8), 0.28) << folder;
  }
}

// --weight-kernel tinygemm is the fit data/efficiency.json states (scripts/fit-kernel-figures.py
// on the H100 rerun of 2026-11-26, every weight copy with its own scales and zeros, groups of 32,
// 64 and 128: medians 4.6%, 2.0%, 2.3%, largest 28.4% at 4 rows), through the tool's own bytes;
// the first runs (group 128, H100 and H200) check it. The limits pin today's figures with a
// little room. Without the kernel, int4 weight-only matmuls are expected at the copy bandwidth,
// far too fast (they reach 0.1-2 TB/s).
TEST(KernelValidation, Int4WeightOnlyMatmulsAreTheTinygemmFit) {
  const std::string rerun = "h100-2026-11-26/int4-rerun/";
  const json k = Load(rerun + "kernels.json");
  const json q = Load(rerun + "quant-int4.json");
  const CostModel model = InStream(1, "h100-sxm", "tinygemm");
  std::map<int64_t, std::vector<Timed>> by_group;
  for (const json& section : {q["int4"], q["int4_groups"]}) {
    for (const json& r : section) {
      if (r.contains("refused")) continue;
      MatmulSpec s = Mm(r["m"], r["n"], r["k"]);
      s.b_dtype = DType::kInt4;
      s.group_size = r["group"];
      by_group[s.group_size].push_back(Time(OpRequest{s}, model,
                                            r["shape"].get<std::string>() + " m=" + r["m"].dump(),
                                            r["median_us"].get<double>() * 1e-6 - EventBracket(k)));
    }
  }
  ASSERT_EQ(by_group.size(), 3u);
  EXPECT_NEAR(MedianAbsError(by_group[32]), 0.046, 0.005);
  EXPECT_NEAR(MedianAbsError(by_group[64]), 0.020, 0.005);
  EXPECT_NEAR(MedianAbsError(by_group[128]), 0.023, 0.005);
  for (const auto& [group, ts] : by_group) EXPECT_LT(LargestAbsError(ts), 0.30) << group;
  std::vector<Timed> first, without;
  for (const auto& [folder, device] :
       {std::pair<std::string, std::string>{"h100-2026-11-26", "h100-sxm"},
        {"h200-2026-11-26", "h200"}}) {
    const json k1 = Load(folder + "/kernels.json");
    const json q1 = Load(folder + "/quant.json");
    for (Timed& t :
         QuantMatmuls(q1, InStream(1, device, "tinygemm"), EventBracket(k1), "int4 weight-only")) {
      first.push_back(t);
    }
    for (Timed& t : QuantMatmuls(q1, InStream(1, device), EventBracket(k1), "int4 weight-only")) {
      without.push_back(t);
    }
  }
  ASSERT_EQ(first.size(), 64u);
  EXPECT_LT(MedianAbsError(first), 0.03);
  EXPECT_LT(LargestAbsError(first), 0.27);
  EXPECT_GT(MedianAbsError(without), 0.7);
}

// --weight-kernel inductor-int8 is the fit data/efficiency.json states (scripts/fit-kernel-
// figures.py on the two H100 runs of 2026-11-26 at the int8 validation rows' shapes: one row,
// the bytes once at the copy rate, median 9.1%, largest 36.0%; 2 to 16 rows, five times the
// bytes, median 4.1%, largest 43.8%), through the tool's own bytes (int8 weights, a 2-byte scale
// per column, activations, output). Without the kernel the 2- to 16-row products are expected
// at the copy bandwidth, several times too fast.
TEST(KernelValidation, Int8WeightOnlyMatmulsUnderCompileAreTheInductorFit) {
  const double bracket = EventBracket(Load("h100-2026-11-26/kernels.json"));
  const CostModel with = InStream(1, "h100-sxm", "inductor-int8", Runtime::kCompiled);
  const CostModel without = InStream(1, "h100-sxm");
  std::vector<Timed> one, more, more_without;
  for (const char* run : {"int8-shapes-run1.json", "int8-shapes-run2.json"}) {
    const json q = Load(std::string("h100-2026-11-26/quant-compiled/") + run);
    for (const json& r : q["int8_shapes"]) {
      if (!r.contains("median_us")) continue;
      MatmulSpec s = Mm(r["m"], r["n"], r["k"]);
      s.b_dtype = DType::kInt8;
      s.group_size = 0;
      s.scale_dtype = DType::kBf16;
      const std::string what = r["shape"].get<std::string>() + " m=" + r["m"].dump();
      const double measured = r["median_us"].get<double>() * 1e-6 - bracket;
      const Timed t = TimeUnderBound(OpRequest{s}, with, what, measured);
      (r["m"] == 1 ? one : more).push_back(t);
      if (r["m"] != 1) more_without.push_back(Time(OpRequest{s}, without, what, measured));
    }
  }
  ASSERT_EQ(one.size(), 28u);
  ASSERT_EQ(more.size(), 110u);
  EXPECT_NEAR(MedianAbsError(one), 0.091, 0.005);
  EXPECT_LT(LargestAbsError(one), 0.38);
  EXPECT_NEAR(MedianAbsError(more), 0.041, 0.005);
  EXPECT_LT(LargestAbsError(more), 0.45);
  EXPECT_GT(MedianAbsError(more_without), 0.7);
}

// --weight-kernel inductor-fp8 and scaled-mm-rowwise are the fits data/efficiency.json states
// (scripts/fit-kernel-figures.py, sections 4 and 5), through the tool's own bytes. The errors
// here are of in-stream times, the 1.0 us launch gap in both the measured and the expected
// time, so a little smaller than the fit's (which leaves the gap out of both). torchao's float8
// weight-only linear compiled, at one row: its bytes once at the copy rate, median 6.8%,
// largest 28.8% (the fit: 8.0%, 31.6%). Its dynamic per-row linear (the activation's scaling
// and the row-wise torch._scaled_mm): median 2.1%, largest 10.7% (the fit: 2.2%, 11.0%), where
// the model without the kernel, which streams the bytes at the copy rate, is more than 40%
// fast. The step along K (564 cycles) was fitted to the row-wise product alone at 1 to 128
// rows on the H100 with the product's own fixed time (3.20 us, which the fit prints; the
// regime's is the whole linear's): median 2.8%, largest 10.1% here; the H200's timings, which
// set nothing, within a median 3.9%, largest 12.9%.
TEST(KernelValidation, Fp8LinearsUnderCompileAreTheirKernelFits) {
  const double bracket = EventBracket(Load("h100-2026-11-26/kernels.json"));
  const CostModel weight_only = InStream(1, "h100-sxm", "inductor-fp8", Runtime::kCompiled);
  const CostModel rowwise = InStream(1, "h100-sxm", "scaled-mm-rowwise", Runtime::kCompiled);
  const CostModel without = InStream(1, "h100-sxm");
  std::vector<Timed> wo, dynamic, dynamic_without;
  const json compiled = Load("h100-2026-11-26/quant-compiled/fp8-compiled.json");
  for (const json& r : compiled["fp8_compiled"]) {
    MatmulSpec s = Mm(r["m"], r["n"], r["k"]);
    s.b_dtype = DType::kFp8;
    const bool dyn = r["op"] == "fp8 dynamic-row compiled";
    if (dyn) s.a_dtype = DType::kFp8;
    const std::string what = r["op"].get<std::string>() + " " + r["shape"].get<std::string>();
    const double measured = r["median_us"].get<double>() * 1e-6 - bracket;
    const Timed t = TimeUnderBound(OpRequest{s}, dyn ? rowwise : weight_only, what, measured);
    (dyn ? dynamic : wo).push_back(t);
    if (dyn) dynamic_without.push_back(Time(OpRequest{s}, without, what, measured));
  }
  ASSERT_EQ(wo.size(), 4u);
  ASSERT_EQ(dynamic.size(), 4u);
  EXPECT_NEAR(MedianAbsError(wo), 0.068, 0.005);
  EXPECT_LT(LargestAbsError(wo), 0.30);
  EXPECT_NEAR(MedianAbsError(dynamic), 0.021, 0.005);
  EXPECT_LT(LargestAbsError(dynamic), 0.11);
  EXPECT_GT(MedianAbsError(dynamic_without), 0.4);

  // The product alone: the regime with the product's own fixed time.
  EfficiencyData product = *Data();
  for (auto& k : product.weight_kernels) {
    if (k.name == "scaled-mm-rowwise") k.regimes.at(0).fixed_s.value = 3.20e-6;
  }
  CostOptions o;
  o.efficiency = std::make_shared<const EfficiencyData>(product);
  o.expected.runtime = Runtime::kCompiled;
  o.expected.weight_kernel = "scaled-mm-rowwise";
  for (const auto& [folder, device, median, largest] :
       {std::tuple<std::string, std::string, double, double>{"h100-2026-11-26", "h100-sxm", 0.028,
                                                             0.11},
        {"h200-2026-11-26", "h200", 0.039, 0.13}}) {
    const double b = EventBracket(Load(folder + "/kernels.json"));
    const CostModel model(Dev(device), o);
    std::vector<Timed> alone;
    for (Timed& t : QuantMatmuls(Load(folder + "/quant.json"), model, b, "fp8 rowwise")) {
      if (std::stoi(t.what.substr(t.what.rfind("m=") + 2)) <= 128) alone.push_back(t);
    }
    ASSERT_EQ(alone.size(), 20u) << device;
    EXPECT_NEAR(MedianAbsError(alone), median, 0.005) << device;
    EXPECT_LT(LargestAbsError(alone), largest) << device;
  }
}

// The cap on attention waves (max_waves 16, fitted to the H100's four kernels of 32 and 63
// waves): those within 12% (in-sample: the cap was fitted to them; 6-32% slow without it); on
// the H200, not fitted, the two prefills of 63 waves within 3% (1.99% and 0.1% today).
TEST(KernelValidation, ManyWaveAttentionIsTheCapTheDataFileStates) {
  const json k100 = Load("h100-2026-11-26/kernels.json");
  const std::vector<Timed> h100 =
      Attention(Load("h100-2026-11-26/quant.json"), InStream(), EventBracket(k100), "flash", 17);
  ASSERT_EQ(h100.size(), 4u);
  for (const Timed& t : h100) EXPECT_LT(std::abs(t.Error()), 0.12) << t.what;
  EfficiencyData uncapped = *Data();
  uncapped.attention_waves.front().max_waves = 0;
  CostOptions o;
  o.efficiency = std::make_shared<const EfficiencyData>(uncapped);
  o.expected.runtime = Runtime::kCudaGraph;
  const std::vector<Timed> before =
      Attention(Load("h100-2026-11-26/quant.json"), CostModel(Dev("h100-sxm"), o),
                EventBracket(k100), "flash", 17);
  EXPECT_GT(MedianAbsError(before), 0.2);
  const json k200 = Load("h200-2026-11-26/kernels.json");
  int prefill = 0;
  for (const Timed& t : Attention(Load("h200-2026-11-26/quant.json"), InStream(1, "h200"),
                                  EventBracket(k200), "flash", 17)) {
    if (json::parse(t.what)["kind"] != "prefill") continue;
    EXPECT_LT(std::abs(t.Error()), 0.03) << t.what;
    ++prefill;
  }
  EXPECT_EQ(prefill, 2);
}

}  // namespace kernel_validation_test
}  // namespace roofline
