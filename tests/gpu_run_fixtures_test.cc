// Profiler files from the H100 runs of 2026-11-24 and -25 (scripts/gpu-run.sh, scripts/gpu-e2e.py;
// docs/measurements/h100.md), read back and joined with the prediction, so what those runs found
// wrong stays fixed without a GPU: PyTorch traces of one HuggingFace Llama-3-8B decode step (with
// transformers' SDPA, and with one fused SDPA call over the grouped KV heads), Nsight Compute CSVs
// of a bf16 GEMM and of the start of a decode step, and the `validate --device cuda --format json`
// output of Llama-3-8B's kernels timed against the measured profile committed beside them.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roofline/cost.h"
#include "roofline/device.h"
#include "roofline/efficiency.h"
#include "roofline/llm.h"
#include "roofline/model_registry.h"
#include "roofline/op_analysis.h"
#include "roofline/profile.h"
#include "roofline/validate.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace gpu_run_fixtures_test {

using testing::RunCli;

std::string Fixture(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/profiles/" + name;
}

std::string MeasuredProfile(const std::string& date) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/data/hardware/measured/h100-sxm5-80gb-" + date +
         ".json";
}

struct ValidateFixture {
  const char* file;
  Phase phase;
  int64_t prompt, context;
};

// `roofline validate llama-3-8b --device cuda --hw measured.json --format json` on the H100 of
// 2026-11-25 (scripts/gpu-run.sh core, run 4; docs/measurements/h100-2026-11-25/), measured.json
// being the device file committed as data/hardware/measured/h100-sxm5-80gb-2026-11-25.json.
const ValidateFixture kValidateRuns[] = {
    {"validate_h100_llama3_8b_prefill2048.json", Phase::kPrefill, 2048, 0},
    {"validate_h100_llama3_8b_prefill8192.json", Phase::kPrefill, 8192, 0},
    {"validate_h100_llama3_8b_decode4096.json", Phase::kDecode, 2048, 4096},
};

// The fixture's kernels re-predicted under a device file: ValidationFromTimings on the same
// graph, each op given the measured time of the fixture row of its name. Returns the rows.
std::vector<ValidationRow> Repredict(const ValidateFixture& f, const Device& device,
                                     nlohmann::json* fixture_rows) {
  std::ifstream in(Fixture(f.file));
  const nlohmann::json j = nlohmann::json::parse(in);
  *fixture_rows = j.at("kernels");
  std::map<std::string, double> measured;
  for (const auto& k : *fixture_rows) {
    measured.emplace(k.at("name").get<std::string>(), k.at("measured_s").get<double>());
  }
  Result<TransformerConfig> c = ResolveModel("llama-3-8b", ModelRegistry::LoadEmbedded());
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  Workload w;
  w.batch = 1;
  w.prompt = f.prompt;
  w.context = f.context;
  w.dtype = DType::kBf16;
  Result<LlmGraph> g = BuildLlmGraph(*c, w, f.phase);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  std::vector<OpTiming> timings;
  for (size_t i = 0; i < g->graph.ops().size(); ++i) {
    OpTiming t;
    t.op = static_cast<int>(i);
    t.name = g->graph.ops()[i].name;
    t.repetitions = 5;
    const auto it = measured.find(t.name);
    if (it == measured.end() || !(it->second > 0)) {
      t.skipped = true;
      t.why_skipped = "not in the fixture";
    } else {
      t.seconds = it->second;
    }
    timings.push_back(t);
  }
  return ValidationFromTimings(g->graph, CostModel(device), timings).rows;
}

// The GPU run of 2026-11-24 found prefill down_proj (2048 x 4096 x 14336 bf16) at 101-106% of
// its bound under the measured profile of that day: the ceiling, a median of GEMMs timed right
// after a memset, read 774-823 TFLOP/s while the same cuBLAS call ran at 826-846 alone. `measure`
// and `validate` now time every launch after a 1 ms GPU spin (Timer::SetLeadCycles) and a
// ceiling is its fastest launch (CudaCeilingOf). Every kernel timed on 2026-11-25 is at or above
// the bound the committed profile gives, and the profile is the one the run predicted with.
TEST(GpuRunFixtures, TheMeasuredProfileBoundsEveryKernelTimedWithIt) {
  Result<Device> device = LoadDeviceFile(MeasuredProfile("2026-11-25"));
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  for (const ValidateFixture& f : kValidateRuns) {
    nlohmann::json fixture;
    const std::vector<ValidationRow> rows = Repredict(f, *device, &fixture);
    ASSERT_EQ(rows.size(), fixture.size()) << f.file;
    int timed = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const nlohmann::json& k = fixture[i];
      ASSERT_EQ(rows[i].name, k.at("name").get<std::string>()) << f.file;
      // The same bound as the run printed (the same device file and graph).
      EXPECT_NEAR(rows[i].predicted_s / k.at("predicted_s").get<double>(), 1.0, 1e-9)
          << f.file << " " << rows[i].name;
      if (rows[i].skipped || !(rows[i].measured_s > 0)) continue;
      ++timed;
      EXPECT_LE(rows[i].predicted_s, rows[i].measured_s)
          << f.file << " " << rows[i].name << ": faster than its ideal bound";
    }
    EXPECT_GE(timed, 15) << f.file;
  }
}

// The profile of 2026-11-24 (median ceilings, bf16 774 TFLOP/s) gives the long-reduction prefill
// projection a bound above what cuBLAS measured: what the old ceiling got wrong, and what the test
// above would catch again.
TEST(GpuRunFixtures, TheMedianCeilingOfTheFirstRunUnderReadsTheLongReduction) {
  Result<Device> device = LoadDeviceFile(MeasuredProfile("2026-11-24"));
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  nlohmann::json fixture;
  const std::vector<ValidationRow> rows = Repredict(kValidateRuns[0], *device, &fixture);
  bool saw = false;
  for (const ValidationRow& r : rows) {
    if (r.name != "down_proj") continue;
    saw = true;
    EXPECT_GT(r.predicted_s, r.measured_s);
  }
  EXPECT_TRUE(saw);
}

// One eager decode step of the same model with attention as one fused SDPA call over the grouped
// KV heads (scripts/gpu-e2e.py --attention sdpa-gqa --trace, 2026-11-25; no repeat_kv copy): one
// step, every projection and the attention kernel at or below 100% of their bounds.
TEST(GpuRunFixtures, FusedGqaDecodeStepJoinsWithAttentionUnderItsBound) {
  const auto o = RunCli({"profile", "torch", Fixture("torch_h100_llama3_8b_decode_gqa.json.gz"),
                         "--model", "llama-3-8b", "--phase", "decode", "--context", "4096", "--hw",
                         "h100-sxm", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json p = nlohmann::json::parse(o.out).at("prediction");
  EXPECT_DOUBLE_EQ(p.at("steps").get<double>(), 1.0);
  EXPECT_FALSE(p.at("mismatch").at("suspect").get<bool>()) << p.at("mismatch").dump();
  int attention = 0, gemm = 0;
  for (const auto& k : p.at("kernels")) {
    if (k.at("matched").get<int64_t>() == 0) continue;
    if (k.at("class") == "attention") {
      ++attention;
      EXPECT_LE(k.at("efficiency").get<double>(), 1.0);
    }
    if (k.at("class") == "gemm") {
      ++gemm;
      EXPECT_LE(k.at("efficiency").get<double>(), 1.0) << k.at("name");
    }
  }
  EXPECT_EQ(attention, 1);
  EXPECT_EQ(gemm, 8);
}

// The same trace joined with another model (Llama-3.2-1B, whose projections are 4-8x smaller)
// reads as kernels running far faster than their bound; the join says so at the top.
TEST(GpuRunFixtures, TheTraceJoinedWithAnotherModelIsFlagged) {
  const auto o =
      RunCli({"profile", "torch", Fixture("torch_h100_llama3_8b_decode.json.gz"), "--model",
              "llama-3.2-1b", "--phase", "decode", "--context", "4096", "--hw", "h100-sxm"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out.rfind("warning: this profile does not look like a run of llama-3.2-1b", 0), 0u)
      << o.out.substr(0, 400);
  EXPECT_NE(o.out.find("measured faster than their ideal bound"), std::string::npos);
  const auto j = RunCli({"profile", "torch", Fixture("torch_h100_llama3_8b_decode.json.gz"),
                         "--model", "llama-3.2-1b", "--phase", "decode", "--context", "4096",
                         "--hw", "h100-sxm", "--format", "json"});
  ASSERT_EQ(j.status, 0) << j.err;
  const nlohmann::json m = nlohmann::json::parse(j.out).at("prediction").at("mismatch");
  EXPECT_TRUE(m.at("suspect").get<bool>());
  EXPECT_GT(m.at("max_efficiency").get<double>(), 1.05);
  EXPECT_GT(m.at("shapes_off").get<int64_t>() * 4, m.at("shapes_checked").get<int64_t>());
}

// --modules hf-transformers counts the kernels of HuggingFace's modules from this trace
// (data/efficiency.json, module_launches). Reconciled kernel by kernel: the model's launches per
// step, plus cuBLAS's split-K reductions and the kernels the step runs once before its first
// layer (the mask and the rotary tables), are exactly the trace's kernels.
// The launches `model MODEL --modules hf-transformers` counts for one decode step on the H100
// at this context (its JSON setup), and for one of its `layers` layers (the kernels repeated
// once a layer); -1 when the command fails.
struct HfLaunches {
  int64_t step = -1, layer = -1;
};
HfLaunches HfLaunchesOf(const std::string& model, const std::string& context, int64_t layers) {
  const auto o = RunCli({"model", model, "--hw", "h100-sxm", "--phase", "decode", "--prompt",
                         context, "--modules", "hf-transformers", "--format", "json"});
  EXPECT_EQ(o.status, 0) << o.err;
  if (o.status != 0) return {};
  const nlohmann::json phase = nlohmann::json::parse(o.out).at("phases")[0];
  HfLaunches n;
  n.step = phase.at("expected").at("setup").at("modules").at("launches_per_step").get<int64_t>();
  n.layer = 0;
  for (const auto& k : phase.at("kernels")) {
    if (k.at("repeat").get<int64_t>() != layers) continue;
    const nlohmann::json& e = k.at("expected");
    n.layer += e.contains("launches") ? e.at("launches").get<int64_t>() : 1;
  }
  return n;
}

TEST(GpuRunFixtures, HfModulesLaunchTheTracesKernels) {
  Result<TorchTrace> t = LoadTorchTrace(Fixture("torch_h100_llama3_8b_decode.json.gz"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  int64_t split_k = 0, memsets = 0;
  for (const TorchKernel& k : t->kernels) {
    if (k.name.find("splitKreduce") != std::string::npos) ++split_k;
    if (k.name.find("Memset") != std::string::npos) ++memsets;  // a cudaMemsetAsync
  }
  EXPECT_EQ(memsets, 1);
  // Before the first RMSNorm's pow: the embedding (the model's first kernel), the step's head,
  // and the first norm's cast to fp32 (counted with the norm).
  int64_t before_first_norm = 0;
  for (const TorchOp& op : t->ops) {
    if (op.name == "aten::pow") break;
    before_first_norm += op.kernels;
  }
  const int64_t head = before_first_norm - 2;
  // Module by module, from the ops' own kernels (the trace keeps the innermost op that launched
  // each: a cast is aten::copy_, SDPA its fills, where and cuDNN call).
  Result<EfficiencyData> data = LoadDefaultEfficiencyData();
  ASSERT_TRUE(data.ok());
  Result<const EfficiencyData::ModuleLaunches*> hf =
      FindModuleLaunches(*data, "hf-transformers", "test");
  ASSERT_TRUE(hf.ok());
  const std::vector<TorchOp>& ops = t->ops;
  auto kernels_of = [&](size_t from, size_t to, std::initializer_list<const char*> names) {
    int64_t n = 0;
    size_t i = from;
    for (const char* name : names) {
      EXPECT_EQ(ops[i].name, std::string("aten::") + name) << "op " << i;
      n += ops[i++].kernels;
    }
    EXPECT_EQ(i, to);
    return n;
  };
  int norms = 0, ropes = 0, attentions = 0;
  std::vector<double> copies_s;  // repeat_kv's copies, one for K and one for V per layer
  for (size_t i = 1; i + 7 < ops.size(); ++i) {
    if (ops[i].name == "aten::pow") {  // RMSNorm: cast, pow, mean, add, rsqrt, mul, cast, mul
      ++norms;
      EXPECT_EQ(
          kernels_of(i - 1, i + 7, {"copy_", "pow", "mean", "add", "rsqrt", "mul", "copy_", "mul"}),
          (*hf)->rms_norm);
    } else if (ops[i].name == "aten::neg") {  // half a rotary embedding: q or k
      ++ropes;
      EXPECT_EQ(2 * kernels_of(i - 1, i + 4, {"mul", "neg", "cat", "mul", "add"}), (*hf)->rope);
    } else if (ops[i].name == "aten::_cudnn_attention_forward" && i >= 10) {
      // The static cache's update, repeat_kv's two copies (grouped K/V), then SDPA.
      ++attentions;
      const int64_t cache =
          kernels_of(i - 10, i - 5, {"arange", "add", "add_", "index_copy_", "index_copy_"});
      const int64_t repeat_kv = kernels_of(i - 5, i - 3, {"copy_", "copy_"});
      copies_s.push_back(ops[i - 5].gpu_time_s);
      copies_s.push_back(ops[i - 4].gpu_time_s);
      const int64_t sdpa =
          kernels_of(i - 3, i + 1, {"fill_", "fill_", "where", "_cudnn_attention_forward"});
      EXPECT_EQ(cache + sdpa, (*hf)->attention);
      EXPECT_EQ(repeat_kv, (*hf)->grouped_kv);
    }
  }
  EXPECT_EQ(norms, 65);
  EXPECT_EQ(ropes, 64);
  EXPECT_EQ(attentions, 32);
  EXPECT_EQ(t->kernels.size() - memsets, 1757u);
  EXPECT_EQ(split_k, 160);  // 5 of the 7 projections of each of the 32 layers
  EXPECT_EQ(head, 19);
  const int64_t launches = HfLaunchesOf("llama-3-8b", "4096", 32).step;
  EXPECT_EQ(launches + split_k + head, static_cast<int64_t>(t->kernels.size()) - memsets);
  // The copies' time: the model's rate (grouped_kv_copy, from Nsight Compute's timing of one
  // copy) against the trace's 64 copies, within 5% of their median. Each reads the 8 cached
  // heads of K (or V) at 4097 positions and writes 32.
  ASSERT_EQ(copies_s.size(), 64u);
  std::sort(copies_s.begin(), copies_s.end());
  const AttentionSpec step = roofline::testing::Llama3DecodeAttention(1, 4097);
  CostOptions options;
  options.efficiency = std::make_shared<EfficiencyData>(*data);
  options.expected.modules = "hf-transformers";
  const CostModel model(roofline::testing::Dev("h100-sxm"), options);
  const double per_copy =
      roofline::testing::Analyze(OpRequest{step}, model).costs[0].expected.grouped_kv_copy_s / 2;
  EXPECT_NEAR(copies_s[32] / per_copy, 1.0, 0.05) << copies_s[32] << " s against " << per_copy;
  // `profile ... --modules` puts the copies' expected time in the copy class, where the trace
  // has them, not in attention's (which would then read 3.7x its measured time).
  const auto p = RunCli({"profile", "torch", Fixture("torch_h100_llama3_8b_decode.json.gz"),
                         "--model", "llama-3-8b", "--phase", "decode", "--context", "4096", "--hw",
                         "h100-sxm", "--modules", "hf-transformers", "--format", "json"});
  ASSERT_EQ(p.status, 0) << p.err;
  double copies_total = 0;
  for (double x : copies_s) copies_total += x;
  int classes = 0;
  const nlohmann::json profiled = nlohmann::json::parse(p.out);
  for (const auto& c : profiled.at("prediction").at("classes")) {
    const double expected = c.at("expected_s_per_step").get<double>();
    const double measured = c.at("measured_s").get<double>();
    if (c.at("class") == "copy") {
      ++classes;
      EXPECT_NEAR(expected / copies_total, 1.0, 0.05) << expected;
    } else if (c.at("class") == "attention") {
      ++classes;
      EXPECT_LT(expected, 1.5 * measured) << expected;
    }
  }
  EXPECT_EQ(classes, 2);
}

// transformers' Python per launch (scripts/gpu-module-host.py on an H100 of 2026-11-26,
// docs/measurements/h100-2026-11-26/module-host/run2-interleaved.json): one decoder layer of
// Llama-3-8B and of Qwen2.5-7B called on its own with a real decode step's arguments, three
// repeats interleaved with a bare op in one process. data/efficiency.json's host_factor is the
// median of the six ratios: the layer's host time per launch the model counts for a layer
// (its GPU activities less cuBLAS's split-K reductions and memsets), over the bare op's. Then,
// on the same machine: the model's host time for the whole 32-layer step (its launches x that
// machine's bare op x the factor) against the step measured there, which did not set it.
TEST(GpuRunFixtures, HfModulesPythonFromTheLayersTimedAlone) {
  std::ifstream in(std::string(ROOFLINE_SOURCE_DIR) +
                   "/docs/measurements/h100-2026-11-26/module-host/run2-interleaved.json");
  ASSERT_TRUE(in.good());
  const nlohmann::json run = nlohmann::json::parse(in);
  const std::map<std::string, HfLaunches> counted = {
      {"data/models/llama-3-8b.json", HfLaunchesOf("llama-3-8b", "128", 32)},
      {"data/models/qwen2.5-7b.json", HfLaunchesOf("qwen2.5-7b", "128", 28)}};
  std::vector<double> ratios, bare;
  for (const auto& repeat : run.at("repeats")) {
    const nlohmann::json& add = repeat.at("bare").at(0);
    ASSERT_EQ(add.at("module"), "bare x.add_(1)");
    ASSERT_EQ(add.at("kernels"), 1);
    EXPECT_TRUE(add.at("host_limited").get<bool>());
    bare.push_back(add.at("host_us").get<double>());
    for (const auto& [config, modules] : repeat.at("modules").items()) {
      ASSERT_EQ(counted.count(config), 1u) << config;
      const int64_t per_layer = counted.at(config).layer;
      int layers = 0;
      for (const auto& m : modules) {
        if (m.at("module") != "decoder_layer") continue;
        ++layers;
        EXPECT_TRUE(m.at("host_limited").get<bool>()) << config;  // the GPU never waited on
        // The model's launches are the layer's activities less split-K reductions and memsets.
        int64_t left_out = 0;
        for (const auto& name : m.at("kernel_names")) {
          const std::string n = name.get<std::string>();
          left_out +=
              n.find("splitKreduce") != std::string::npos || n.find("Memset") != std::string::npos;
        }
        EXPECT_NEAR(static_cast<double>(m.at("kernels").get<int64_t>() - left_out),
                    static_cast<double>(per_layer), 1.0)
            << config;
        ratios.push_back(m.at("host_us").get<double>() / static_cast<double>(per_layer) /
                         bare.back());
      }
      EXPECT_EQ(layers, 1) << config;
    }
  }
  ASSERT_EQ(ratios.size(), 6u);
  std::sort(ratios.begin(), ratios.end());
  std::sort(bare.begin(), bare.end());
  Result<EfficiencyData> data = LoadDefaultEfficiencyData();
  ASSERT_TRUE(data.ok());
  Result<const EfficiencyData::ModuleLaunches*> hf =
      FindModuleLaunches(*data, "hf-transformers", "test");
  ASSERT_TRUE(hf.ok());
  const double factor = (*hf)->host_factor.value;
  EXPECT_NEAR((ratios[2] + ratios[3]) / 2, factor, 0.005);
  EXPECT_GT(ratios.front(), 2.0);
  EXPECT_LT(ratios.back(), 2.4);

  // The 32-layer step at context 1024, batch 1, on the same machine: 39.5 ms of wall time with
  // the host the limit, 1.98x the bare op per counted launch where the layer alone took 2.22x.
  // The model reads high there, within 20%.
  const nlohmann::json& step = run.at("full_step");
  ASSERT_EQ(step.at("layers"), 32);
  ASSERT_EQ(step.at("context"), 1024);
  EXPECT_TRUE(step.at("host_limited").get<bool>());
  const double launches = static_cast<double>(HfLaunchesOf("llama-3-8b", "1024", 32).step);
  EXPECT_LT(launches, step.at("kernels").get<double>());
  const double predicted_us = launches * bare[1] * factor;
  const double ratio = predicted_us / step.at("wall_us").get<double>();
  EXPECT_GT(ratio, 1.0) << predicted_us << " us predicted";
  EXPECT_LT(ratio, 1.2) << predicted_us << " us predicted";
}

// Nsight Compute's counters of the same decode step: cuDNN's attention reads the 32 heads'
// copies from device memory, not the 8 cached heads (67.2 MB where the cache is 16.8 MB), as
// --modules hf-transformers counts; the copy moves the bytes grouped_kv_copy's rate is of.
TEST(GpuRunFixtures, NcuAttentionReadsTheRepeatedKvHeads) {
  Result<NcuReport> r = LoadNcuCsv(Fixture("ncu_h100_llama3_8b_decode.csv"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const double cache = 1.0 * 8 * 4097 * (128 + 128) * 2;  // K and V of one layer, bf16
  int attentions = 0, copies = 0;
  for (const NcuKernel& k : r->kernels) {
    const double* read = k.Find("dram__bytes_read.sum");
    const double* time = k.Find("gpu__time_duration.sum");
    ASSERT_NE(read, nullptr) << k.name;
    ASSERT_NE(time, nullptr) << k.name;
    if (k.name.find("sdpa") != std::string::npos) {
      ++attentions;
      EXPECT_NEAR(*read / (4 * cache), 1.0, 0.01) << *read;  // the copies: 4x the cache
    } else if (k.grid == "(32776, 1, 1)") {  // repeat_kv: 4 x 8 x 4097 x 128 / 128 / 4 blocks
      ++copies;
      EXPECT_NEAR(*read / (cache / 2), 1.0, 0.01) << *read;  // it reads K (or V) once
      // data/efficiency.json's rate: the copy's logical bytes (read 1x, written 4x) over its
      // time, as a fraction of the H100's achievable memory figure.
      Result<EfficiencyData> data = LoadDefaultEfficiencyData();
      ASSERT_TRUE(data.ok());
      const Device& h100 = roofline::testing::Dev("h100-sxm");
      const Quantity* achievable = h100.achievable.MemoryFigure(h100.memory[0].name);
      ASSERT_NE(achievable, nullptr);
      Result<const EfficiencyData::ModuleLaunches*> hf =
          FindModuleLaunches(*data, "hf-transformers", "test");
      ASSERT_TRUE(hf.ok());
      EXPECT_NEAR(5 * (cache / 2) / *time / achievable->value / (*hf)->grouped_kv_copy.value, 1.0,
                  0.005);
    }
  }
  EXPECT_EQ(attentions, 1);
  EXPECT_EQ(copies, 2);
}

// The trace: transformers 5.17 LlamaForCausalLM at Llama-3-8B's shapes, bf16, SDPA, one decode
// step at batch 1 against a static cache of 4097 positions (scripts/gpu-e2e.py --trace).
TEST(GpuRunFixtures, TorchDecodeStepJoinsOneStepOfTheModel) {
  const auto o = RunCli({"profile", "torch", Fixture("torch_h100_llama3_8b_decode.json.gz"),
                         "--model", "llama-3-8b", "--phase", "decode", "--context", "4096", "--hw",
                         "h100-sxm", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  const nlohmann::json& p = j.at("prediction");
  // cuBLAS ran 161 of the step's 225 products as split-K (a GEMM and a reduction kernel: 386
  // launches). Counted per launch, that read as 1.72 steps and put every GEMM at 129% of its
  // bound; one entry per aten call gives exactly one step.
  EXPECT_DOUBLE_EQ(p.at("steps").get<double>(), 1.0);
  bool saw_gemm = false, saw_attention = false;
  for (const auto& c : p.at("classes")) {
    if (c.at("class") == "gemm") {
      saw_gemm = true;
      EXPECT_EQ(c.at("measured").get<int64_t>(), 225);  // 7 per layer x 32 + lm_head
      EXPECT_EQ(c.at("predicted_per_step").get<int64_t>(), 225);
    }
    if (c.at("class") == "attention") {
      saw_attention = true;
      EXPECT_EQ(c.at("measured").get<int64_t>(), 32);
    }
  }
  EXPECT_TRUE(saw_gemm);
  EXPECT_TRUE(saw_attention);
  // The ideal bound is never above a measured time: every projection mapped onto its predicted
  // kernel runs at or below 100% of its bound (on the datasheet's 3.35 TB/s).
  int gemm_rows = 0;
  for (const auto& k : p.at("kernels")) {
    if (k.at("class") != "gemm" || k.at("matched").get<int64_t>() == 0) continue;
    ++gemm_rows;
    EXPECT_LE(k.at("efficiency").get<double>(), 1.0) << k.at("name");
    EXPECT_GT(k.at("efficiency").get<double>(), 0.1) << k.at("name");
  }
  EXPECT_EQ(gemm_rows, 8);  // q, k, v, o, gate, up, down, lm_head
  // The right model and workload: no sign of a mismatched join.
  EXPECT_FALSE(p.at("mismatch").at("suspect").get<bool>()) << p.at("mismatch").dump();
  for (const auto& k : p.at("kernels")) {
    if (k.at("name") != "q_proj") continue;
    EXPECT_EQ(k.at("measured_kernel").get<std::string>().rfind("nvjet", 0), 0u)
        << k.at("measured_kernel");
  }
}

/// The H100 SXM5 reports itself as "NVIDIA H100 80GB HBM3", which names the PCIe card as much
/// as the SXM5 part: the trace's numSms (132) picks the SXM5, and the output says why.
TEST(GpuRunFixtures, TorchTraceOfTheSxmPartMatchesTheSxmDevice) {
  Result<TorchTrace> t = LoadTorchTrace(Fixture("torch_h100_llama3_8b_decode.json.gz"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->num_sms, 132);
  const auto o = RunCli({"profile", "torch", Fixture("torch_h100_llama3_8b_decode.json.gz")});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("to h100-sxm, told apart by its 132 SMs"), std::string::npos)
      << o.out.substr(0, 600);
}

TEST(GpuRunFixtures, TorchTraceKeepsEveryKernelInTheClassTotals) {
  Result<TorchTrace> t = LoadTorchTrace(Fixture("torch_h100_llama3_8b_decode.json.gz"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->device_name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t->kernels.size(), 1758u);
  const TorchSummary s = SummarizeTorch(*t, &roofline::testing::Dev("h100-sxm"));
  // Launch counts per class stay per kernel (the profile table), while the join's entries are
  // per aten call: fewer entries than kernels, the same total time.
  EXPECT_EQ(s.classes.at(OpClass::kGemm).launches, 386);
  EXPECT_LT(s.measured.size(), t->kernels.size());
  double kernels_s = 0, measured_s = 0;
  for (const TorchKernel& k : t->kernels) kernels_s += k.duration_s;
  for (const MeasuredKernel& m : s.measured) measured_s += m.time_s;
  EXPECT_NEAR(measured_s, kernels_s, 1e-12);
}

// `ncu-command --hw h100-sxm` on `python3 scripts/gpu-e2e.py --ncu-app gemm`: two random fills,
// one 8192^3 bf16 torch.matmul.
TEST(GpuRunFixtures, NcuGemmCountsTheProductFromTheTensorCounters) {
  Result<NcuReport> r = LoadNcuCsv(Fixture("ncu_h100_gemm_bf16_8192.csv"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const NcuSummary s = SummarizeNcu(*r, &roofline::testing::Dev("h100-sxm"));
  EXPECT_EQ(s.launches, 5u);
  const NcuKernelSummary* gemm = nullptr;
  for (const NcuKernelSummary& k : s.kernels) {
    if (k.name.rfind("nvjet", 0) == 0) gemm = &k;
  }
  ASSERT_NE(gemm, nullptr);
  const double exact = 2.0 * 8192.0 * 8192.0 * 8192.0;
  // The tensor pipe counts the work of whole tiles: 8192 rows in tiles of 320 are 26 tiles, 8320
  // rows, so the counters read 8320/8192 of the exact product (+1.6%), never less.
  EXPECT_GE(gemm->flops, exact);
  EXPECT_NEAR(gemm->flops / exact, 8320.0 / 8192.0, 0.005);
  EXPECT_EQ(gemm->engine, "tensor.bf16");
  // A, B read and C written once at least: 3 x 8192^2 x 2 bytes.
  ASSERT_TRUE(gemm->sum.dram_bytes.has_value());
  EXPECT_GE(*gemm->sum.dram_bytes, 3 * 8192.0 * 8192.0 * 2);
  // Below the datasheet's dense bf16 peak (989.4 TFLOP/s, H100 whitepaper).
  ASSERT_TRUE(gemm->time_s.has_value());
  EXPECT_LT(exact / *gemm->time_s, 989.4e12);
}

// The first 300 kernels of `--ncu-app decode` (cache set-up, then the first layers of the step).
TEST(GpuRunFixtures, NcuDecodeStepReadsAndFoldsSplitKReductions) {
  Result<NcuReport> r = LoadNcuCsv(Fixture("ncu_h100_llama3_8b_decode.csv"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kernels.size(), 300u);
  const NcuSummary s = SummarizeNcu(*r, &roofline::testing::Dev("h100-sxm"));
  // The gate/up projection at batch 1 reads its 4096 x 14336 bf16 weights (117.4 MB) once: one
  // GEMM kernel of the file moves within 5% above that per launch.
  bool saw_gate = false;
  for (const NcuKernelSummary& k : s.kernels) {
    if (!k.sum.dram_bytes || k.launches == 0) continue;
    const double per_launch = *k.sum.dram_bytes / k.launches;
    if (per_launch >= 4096.0 * 14336 * 2 && per_launch <= 1.05 * 4096.0 * 14336 * 2) {
      saw_gate = k.name.rfind("nvjet", 0) == 0;
    }
  }
  EXPECT_TRUE(saw_gate);
  const auto o =
      RunCli({"profile", "ncu", Fixture("ncu_h100_llama3_8b_decode.csv"), "--model", "llama-3-8b",
              "--phase", "decode", "--context", "4096", "--hw", "h100-sxm", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  bool folded = false, left_out = false;
  for (const auto& n : j.at("prediction").at("notes")) {
    folded = folded || n.get<std::string>().find("split-K reduction") != std::string::npos;
    left_out =
        left_out || n.get<std::string>().find("1 GEMM call(s) under 1%") != std::string::npos;
  }
  EXPECT_TRUE(folded);
  // The right model: ncu's counter FLOPs (whole padded tiles) are not taken for shapes, so the
  // join is not flagged.
  EXPECT_FALSE(j.at("prediction").at("mismatch").at("suspect").get<bool>())
      << j.at("prediction").at("mismatch").dump();
  // HuggingFace's rotary-frequency product (a 69.6 kFLOP fp32 SIMT GEMM) runs before the first
  // projection; left out, q_proj maps onto the first cuBLAS projection kernel.
  EXPECT_TRUE(left_out);
  for (const auto& k : j.at("prediction").at("kernels")) {
    if (k.at("name") != "q_proj") continue;
    EXPECT_EQ(k.at("measured_kernel").get<std::string>().rfind("nvjet", 0), 0u)
        << k.at("measured_kernel");
  }
}

}  // namespace gpu_run_fixtures_test
}  // namespace roofline
