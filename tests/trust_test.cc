// Trust bands: the published runs behind each band (data/validation/published_runs.json, each
// with its source), the range they give, the fallback to the nearest group, and where the band is
// printed (model, sweep, plan).
#include "roofline/trust.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roofline/model_registry.h"
#include "roofline/plan.h"
#include "roofline/published.h"
#include "roofline/report.h"
#include "roofline/setup.h"
#include "roofline/sweep.h"
#include "roofline/sweep_table.h"
#include "src/report/band_json.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace trust_test {

struct Published {
  std::vector<PublishedRun> runs;
  ModelRegistry registry;
  std::shared_ptr<const EfficiencyData> data;
};

const Published& Runs() {
  static const Published p = [] {
    Published out;
    Result<std::vector<PublishedRun>> runs = LoadDefaultPublishedRuns();
    EXPECT_TRUE(runs.ok()) << runs.status().ToString();
    if (runs.ok()) out.runs = *runs;
    Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
    EXPECT_TRUE(registry.ok());
    if (registry.ok()) out.registry = *registry;
    Result<EfficiencyData> data = LoadDefaultEfficiencyData();
    EXPECT_TRUE(data.ok());
    out.data = std::make_shared<const EfficiencyData>(data.ok() ? *data : EfficiencyData{});
    return out;
  }();
  return p;
}

TrustKey Key(Runtime runtime, Phase phase, bool parallel, const std::string& vendor) {
  TrustKey k;
  k.runtime = runtime;
  k.phase = phase;
  k.parallel = parallel;
  k.vendor = vendor;
  return k;
}

// A band is its group's published runs: each costed as `validate published` costs it, each in the
// group, and each measurement inside the range the band gives that run's expected time (the range
// holds every error of the group by construction: a check of the arithmetic on real runs).
TEST(Trust, ABandIsItsGroupsPublishedRuns) {
  const Published& p = Runs();
  Result<PublishedValidation> all = ValidatePublished(p.runs, testing::Db(), p.registry, p.data);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  std::map<std::string, const PublishedCheck*> by_id;
  for (const PublishedCheck& c : all->checks) by_id[c.run.id] = &c;
  const std::vector<TrustKey> keys = {Key(Runtime::kEager, Phase::kDecode, false, "NVIDIA"),
                                      Key(Runtime::kCudaGraph, Phase::kPrefill, false, "NVIDIA"),
                                      Key(Runtime::kCompiled, Phase::kDecode, true, "NVIDIA")};
  Result<std::vector<TrustBand>> bands =
      TrustBands(keys, p.runs, testing::Db(), p.registry, p.data);
  ASSERT_TRUE(bands.ok()) << bands.status().ToString();
  ASSERT_EQ(bands->size(), keys.size());
  for (const TrustBand& b : *bands) {
    ASSERT_TRUE(b.own()) << static_cast<int>(b.key.runtime);
    ASSERT_GE(static_cast<int>(b.runs.size()), kTrustMinRows);
    std::vector<double> errors;
    for (const TrustRun& r : b.runs) {
      ASSERT_TRUE(by_id.count(r.id)) << r.id;
      const PublishedCheck& c = *by_id[r.id];
      // Its own group: every criterion of the key holds for the run.
      EXPECT_EQ(c.run.phase, b.key.phase) << r.id;
      EXPECT_EQ(c.run.scenario.expected.runtime, b.key.runtime) << r.id;
      EXPECT_EQ(!c.run.scenario.expected.modules.empty(), b.key.modules) << r.id;
      EXPECT_EQ(c.run.scenario.workload.tp * c.run.scenario.workload.Stages() > 1, b.key.parallel)
          << r.id;
      EXPECT_EQ(testing::Dev(c.run.scenario.hw).vendor, b.key.vendor) << r.id;
      const Workload& w = c.run.scenario.workload;
      const DType act = w.dtype.value_or(DType::kBf16);
      EXPECT_EQ(w.weight_dtype.has_value() && BitsOf(*w.weight_dtype) < BitsOf(act),
                b.key.quantized)
          << r.id;
      EXPECT_EQ(r.expected_s, c.expected_s) << r.id;
      EXPECT_EQ(r.error, c.error) << r.id;
      // The range's arithmetic (true by construction): each run lies in the range its own
      // expected time gives.
      const double slack = 1e-12 * r.measured_s;
      EXPECT_GE(r.measured_s, b.Low(r.expected_s) - slack) << r.id;
      EXPECT_LE(r.measured_s, b.High(r.expected_s) + slack) << r.id;
      errors.push_back(r.error);
    }
    std::sort(errors.begin(), errors.end());
    EXPECT_EQ(b.min_error, errors.front());
    EXPECT_EQ(b.max_error, errors.back());
    EXPECT_LE(b.min_error, b.median_error);
    EXPECT_LE(b.median_error, b.max_error);
  }
}

// A group without enough runs takes the nearest one that has them, and says whose figures they are.
TEST(Trust, AGroupWithoutRunsTakesTheNearestOne) {
  const Published& p = Runs();
  TrustKey moe = Key(Runtime::kEager, Phase::kDecode, true, "Intel");
  moe.moe = true;
  const TrustKey intel = Key(Runtime::kCompiled, Phase::kPrefill, true, "Intel");
  Result<std::vector<TrustBand>> bands =
      TrustBands({moe, intel}, p.runs, testing::Db(), p.registry, p.data);
  ASSERT_TRUE(bands.ok()) << bands.status().ToString();
  for (const TrustBand& b : *bands) {
    EXPECT_FALSE(b.own());
    EXPECT_GE(static_cast<int>(b.runs.size()), kTrustMinRows);
  }
  // The published rows hold no MoE run on an Intel GPU, so the MoE key falls back (to a group of
  // another vendor or none); every run of the group taken
  // keeps the criteria its level keeps.
  for (const TrustBand& b : *bands) {
    for (const TrustRun& r : b.runs) {
      const PublishedRun* run = nullptr;
      for (const PublishedRun& x : p.runs) run = x.id == r.id ? &x : run;
      ASSERT_NE(run, nullptr);
      EXPECT_EQ(run->phase, b.key.phase) << r.id;
      if (b.level <= TrustLevel::kAnyModules) {
        EXPECT_EQ(run->scenario.expected.runtime, b.key.runtime) << r.id;
      }
      if (b.level <= TrustLevel::kAnyVendor) {
        EXPECT_EQ(run->scenario.workload.tp * run->scenario.workload.Stages() > 1, b.key.parallel)
            << r.id;
      }
    }
  }
  // No published run is a compiled prefill: the Intel key keeps only its phase.
  EXPECT_EQ((*bands)[1].level, TrustLevel::kPhase);
  const std::string said = DescribeBand((*bands)[0], 0.01);
  EXPECT_EQ(said.rfind("not validated for decode, runtime eager", 0), 0u) << said;
  EXPECT_NE(said.find("mixture of experts"), std::string::npos) << said;
  EXPECT_NE(said.find("nearest group"), std::string::npos) << said;
}

// With --engine the band's group is that engine's published runs (any version), in the step's
// phase, layout, vendor, dense or MoE and weight quantization; with too few of them it falls back
// to the groups of the runtime, saying which engine group it lacked.
TEST(Trust, AnEngineBandIsThatEnginesRuns) {
  const Published& p = Runs();
  TrustKey vllm = Key(Runtime::kCudaGraph, Phase::kDecode, true, "NVIDIA");
  vllm.engine = "vllm";
  TrustKey sglang_one_chip = Key(Runtime::kCudaGraph, Phase::kDecode, false, "NVIDIA");
  sglang_one_chip.engine = "sglang";
  Result<std::vector<TrustBand>> bands =
      TrustBands({vllm, sglang_one_chip}, p.runs, testing::Db(), p.registry, p.data);
  ASSERT_TRUE(bands.ok()) << bands.status().ToString();
  const TrustBand& v = (*bands)[0];
  ASSERT_TRUE(v.own());
  EXPECT_EQ(v.level, TrustLevel::kEngine);
  ASSERT_GE(static_cast<int>(v.runs.size()), kTrustMinRows);
  for (const TrustRun& r : v.runs) {
    const PublishedRun* run = nullptr;
    for (const PublishedRun& x : p.runs) run = x.id == r.id ? &x : run;
    ASSERT_NE(run, nullptr);
    const std::string& engine = run->scenario.expected.engine;
    EXPECT_EQ(engine.substr(0, engine.find('@')), "vllm") << r.id;  // vllm@0.6.3 and the like
    EXPECT_EQ(run->phase, Phase::kDecode) << r.id;
    EXPECT_EQ(run->scenario.expected.runtime, Runtime::kCudaGraph) << r.id;  // not enforce-eager
    EXPECT_GT(run->scenario.workload.tp, 1) << r.id;
    EXPECT_EQ(testing::Dev(run->scenario.hw).vendor, "NVIDIA") << r.id;
  }
  EXPECT_NE(DescribeBand(v, 0.01).find("(engine vllm, decode, runtime cuda-graph, modules not "
                                       "counted, unquantized weights, several chips, NVIDIA, "
                                       "dense)"),
            std::string::npos)
      << DescribeBand(v, 0.01);
  // The published rows hold no dense one-chip SGLang decode: the runtime's group stands in.
  const TrustBand& s = (*bands)[1];
  EXPECT_FALSE(s.own());
  EXPECT_EQ(s.level, TrustLevel::kOwn);
  const std::string said = DescribeBand(s, 0.01);
  EXPECT_EQ(said.rfind("not validated for engine sglang, decode, runtime cuda-graph", 0), 0u)
      << said;
  // The JSON level counts the criteria dropped from the key's own group.
  EXPECT_EQ(BandJson(v, 0.01)["level"], 0);
  EXPECT_EQ(BandJson(s, 0.01)["level"], 1);
  // From the command line: the engine names the group.
  const testing::CliOutput text = testing::RunCli(
      {"model", "llama-3-8b", "--phase", "decode", "--tp", "2", "--engine", "vllm@0.6.3"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("trust: on the published runs costed as this step is (engine vllm,"),
            std::string::npos)
      << text.out;
  // An engine file of the user's own, even one naming itself vllm, was never costed against a
  // published run: the errors of the runtime's group, no range.
  const std::string own =
      (std::filesystem::temp_directory_path() /
       ("roofline-trust-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
        "-engine.json"))
          .string();
  {
    std::ifstream in(std::string(ROOFLINE_SOURCE_DIR) + "/data/engines/vllm.json");
    std::ofstream(own) << in.rdbuf();
  }
  const testing::CliOutput mine =
      testing::RunCli({"model", "llama-3-8b", "--phase", "decode", "--tp", "2", "--engine", own});
  ASSERT_EQ(mine.status, 0) << mine.err;
  EXPECT_NE(mine.out.find("with an engine file (" + own + ") the figures are not the model's own"),
            std::string::npos)
      << mine.out;
  EXPECT_EQ(mine.out.find("(engine vllm,"), std::string::npos) << mine.out;
  std::filesystem::remove(own);
}

// `model` prints a band after each phase with an expected time and gives it in JSON beside
// expected_time_s; a device without expected times gets none; --explain lists the runs behind it.
TEST(Trust, ModelPrintsABandBesideEachExpectedTime) {
  const testing::CliOutput text = testing::RunCli({"model", "llama-3-8b", "--phase", "both"});
  ASSERT_EQ(text.status, 0) << text.err;
  size_t lines = 0;
  for (size_t at = text.out.find("\ntrust: "); at != std::string::npos;
       at = text.out.find("\ntrust: ", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, 2u) << text.out;
  const testing::CliOutput json =
      testing::RunCli({"model", "llama-3-8b", "--phase", "decode", "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json phase = nlohmann::json::parse(json.out)["phases"][0];
  ASSERT_TRUE(phase.contains("expected_band"));
  const nlohmann::json& band = phase["expected_band"];
  const double expected = phase["expected_time_s"].get<double>();
  EXPECT_NEAR(band["low_s"].get<double>(), expected / (1 + band["max_error"].get<double>()), 1e-15);
  EXPECT_LE(band["low_s"].get<double>(), band["high_s"].get<double>());
  EXPECT_EQ(band["runs"].size(), band["rows"].get<size_t>());
  const testing::CliOutput groq = testing::RunCli({"model", "llama-3-70b", "--hw", "groq-lpu"});
  ASSERT_EQ(groq.status, 0) << groq.err;
  EXPECT_EQ(groq.out.find("trust:"), std::string::npos);
  const testing::CliOutput explained =
      testing::RunCli({"model", "llama-3-8b", "--phase", "decode", "--explain", "lm_head"});
  ASSERT_EQ(explained.status, 0) << explained.err;
  EXPECT_NE(explained.out.find("published runs behind the decode trust band"), std::string::npos);
  // --explain prints the derivation under the lines that say what ran, not the kernel table.
  EXPECT_NE(explained.out.find("Kernel lm_head (decode"), std::string::npos);
  EXPECT_EQ(explained.out.find("== decode =="), std::string::npos);
  EXPECT_EQ(explained.out.rfind("<embedded>/data/models/llama-3-8b.json", 0), 0u);
  EXPECT_NE(explained.out.find(band["runs"][0].get<std::string>()), std::string::npos);
}

// Figures the user overrode were never validated: the band gives the errors, no range.
TEST(Trust, OverriddenFiguresGetNoRange) {
  const testing::CliOutput json =
      testing::RunCli({"model", "llama-3-8b", "--phase", "decode", "--efficiency", "matmul=0.5",
                       "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json band = nlohmann::json::parse(json.out)["phases"][0]["expected_band"];
  EXPECT_FALSE(band["validated"].get<bool>());
  EXPECT_EQ(band["overridden"], "--efficiency");
  EXPECT_FALSE(band.contains("low_s"));
  const testing::CliOutput text =
      testing::RunCli({"model", "llama-3-8b", "--phase", "decode", "--launch-overhead-us", "5"});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("with --launch-overhead-us the figures are not the model's own"),
            std::string::npos);
  EXPECT_EQ(text.out.find("expect "), std::string::npos);
}

// Sweeps carry the band's range as columns (JSON columns, npy, Python), not in the CSV's stable
// set; along a tp sweep the band changes from one chip to several.
TEST(Trust, SweepColumnsCarryTheRange) {
  const testing::CliOutput csv =
      testing::RunCli({"sweep", "llama-3-8b", "--vary", "tp=1,2", "--format", "csv"});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out.find("expected_low_s"), std::string::npos);
  const testing::CliOutput json =
      testing::RunCli({"sweep", "llama-3-8b", "--vary", "tp=1,2", "--format", "json"});
  ASSERT_EQ(json.status, 0) << json.err;
  const nlohmann::json doc = nlohmann::json::parse(json.out);
  const nlohmann::json& data = doc["data"];
  ASSERT_TRUE(data.contains("expected_low_s"));
  const auto& low = data["expected_low_s"];
  const auto& high = data["expected_high_s"];
  const auto& expected = data["expected_time_s"];
  const auto& tp = data["tp"];
  ASSERT_EQ(low.size(), expected.size());
  std::map<std::pair<int64_t, std::string>, double> ratio;  // low / expected per (tp, phase)
  for (size_t i = 0; i < low.size(); ++i) {
    ASSERT_TRUE(low[i].is_number()) << i;
    EXPECT_LE(low[i].get<double>(), high[i].get<double>());
    ratio[{tp[i].get<int64_t>(), data["phase"][i].get<std::string>()}] =
        low[i].get<double>() / expected[i].get<double>();
  }
  EXPECT_EQ(ratio.size(), 4u);
  // The bands differ by layout: one chip has its own group; several chips (eager, unquantized,
  // NVIDIA) have fewer than 3 runs and borrow the nearest group's.
  Scenario s;
  s.model = "llama-3-8b";
  Result<roofline::Setup> setup = Resolve(s, testing::Db());
  ASSERT_TRUE(setup.ok());
  const CostModel model(setup->device, setup->cost);
  Result<SweepAxis> axis = ParseSweepAxis("tp=1,2");
  ASSERT_TRUE(axis.ok());
  Result<SweepResult> r =
      RunSweep(setup->config, setup->workload, model, PhaseSelection::kBoth, {*axis});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(
      AttachBands(*r, setup->config, setup->workload, setup->device, setup->cost, testing::Db())
          .ok());
  const TrustBand* one = r->BandOf(r->points[0], Phase::kDecode);
  const TrustBand* several = r->BandOf(r->points[1], Phase::kDecode);
  ASSERT_TRUE(one != nullptr && several != nullptr);
  EXPECT_TRUE(one->own());
  EXPECT_FALSE(several->own());
  EXPECT_TRUE(several->key.parallel);
}

// Plans carry the range of each operating point's expected TTFT and time per output token.
TEST(Trust, PlanTableCarriesTheRange) {
  PlanRequest r;
  r.gpus = 8;
  r.cost.efficiency = Runs().data;
  Result<TransformerConfig> config = ResolveModel("llama-3-70b", Runs().registry);
  ASSERT_TRUE(config.ok());
  Result<Plan> plan = MakePlan(*config, Workload{}, testing::Dev("h100-sxm"), r);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_TRUE(AttachBands(*plan, *config, testing::Dev("h100-sxm"), testing::Db()).ok());
  const Table t = PlanTable(*plan);
  const Column* low = t.Find("expected_time_per_output_token_low_s");
  const Column* mid = t.Find("expected_time_per_output_token_s");
  const Column* high = t.Find("expected_time_per_output_token_high_s");
  ASSERT_TRUE(low && mid && high);
  for (size_t row = 0; row < t.rows(); ++row) {
    if (std::isnan(mid->reals[row])) {
      EXPECT_TRUE(std::isnan(low->reals[row]));  // the FLOP limit: no expected time, no range
      EXPECT_TRUE(std::isnan(t.Find("ttft_s")->reals[row]));  // nor a TTFT (the text's "-")
      continue;
    }
    EXPECT_LE(low->reals[row], high->reals[row]);
    const PlanVariant& v = plan->variants[row / 3];
    EXPECT_DOUBLE_EQ(high->reals[row], mid->reals[row] / (1 + v.decode_band->min_error));
  }
}

}  // namespace trust_test
}  // namespace roofline
