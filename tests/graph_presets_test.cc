// The network presets of data/graphs/ (diffusion and vision models captured on the meta device
// by scripts/capture-presets.py) and diffusion runs (`--steps N --cfg`).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "roofline/network.h"
#include "roofline/network_analysis.h"
#include "roofline/network_report.h"
#include "tests/cli_runner.h"
#include "tests/test_util.h"

namespace roofline {
namespace graph_presets_test {

using testing::CliOutput;
using testing::RunCli;

nlohmann::json Oracle() {
  std::ifstream in(std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/graph_presets_oracle.json");
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str())["presets"];
}

// Every preset against PyTorch: the parameter count is the model's own (sum of p.numel() in
// diffusers, transformers, torchvision), the matrix FLOPs at the captured dims are
// torch.utils.flop_counter.FlopCounterMode's count (tests/fixtures/graph_presets_oracle.json,
// written by the capture), and nothing is left uncosted.
TEST(GraphPresets, MatchPyTorchsCounts) {
  Result<std::vector<GraphPresetInfo>> presets = DescribeGraphPresets();
  ASSERT_TRUE(presets.ok()) << presets.status().ToString();
  const nlohmann::json oracle = Oracle();
  ASSERT_EQ(presets->size(), oracle.size());
  for (const GraphPresetInfo& p : *presets) {
    SCOPED_TRACE(p.id);
    ASSERT_TRUE(oracle.contains(p.id));
    const nlohmann::json& o = oracle[p.id];
    EXPECT_EQ(p.parameters, o["parameters"].get<double>());
    EXPECT_EQ(p.matrix_flops, o["flop_counter_mode"].get<double>());
    EXPECT_EQ(p.uncosted, 0);
    EXPECT_EQ(p.dims.at("batch"), o["dims"]["batch"].get<int64_t>());
    EXPECT_NE(p.note.find("scripts/capture-presets.py"), std::string::npos);
  }
}

// The symbolic dimensions of the presets (batch; height and width in image pixels where the
// network takes any resolution) are fitted from captures at other sizes: at dims off those
// captures (batch 2, sides 1.5x and 0.75x the default on their steps) the lowered graph's matrix
// FLOPs equal FlopCounterMode's count of a fresh PyTorch run at those sizes (the oracle's "at").
TEST(GraphPresets, MatchPyTorchAtOtherSizes) {
  Result<std::vector<GraphPreset>> presets = LoadGraphPresets();
  ASSERT_TRUE(presets.ok());
  const nlohmann::json oracle = Oracle();
  int with_sides = 0;
  for (const GraphPreset& p : *presets) {
    SCOPED_TRACE(p.id);
    Result<NetworkGraph> g = ParseGraphJson(p.text, p.origin);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const nlohmann::json& at = oracle[p.id]["at"];
    DimBindings dims;
    for (const auto& [name, value] : at["dims"].items()) dims[name] = value.get<int64_t>();
    EXPECT_EQ(dims.size(), g->dims.size());
    with_sides += dims.count("height") > 0 && dims.count("width") > 0;
    Result<LoweredNetwork> lowered = LowerNetwork(*g, dims);
    ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
    EXPECT_EQ(lowered->matrix_flops, at["flop_counter_mode"].get<double>());
    EXPECT_EQ(lowered->uncosted.count, 0);
  }
  // SD 1.5 and SDXL UNets, FLUX.1, the VAE decoder, ResNet-50.
  EXPECT_EQ(with_sides, 5);
}

NetworkGraph Preset(const std::string& id) {
  Result<std::vector<GraphPreset>> presets = LoadGraphPresets();
  for (const GraphPreset& p : *presets) {
    if (p.id == id) return *ParseGraphJson(p.text, p.origin);
  }
  ADD_FAILURE() << "no preset " << id;
  return {};
}

// A sweep over the image height of SDXL's UNet: width follows, every value is on the 32-pixel
// step, and each crossover is exact on that step (the signal differs at value - 32 and value).
TEST(GraphPresets, ImageSideSweepIsExactOnItsStep) {
  NetworkGraph g = Preset("sdxl-unet");
  ASSERT_TRUE(RetypeNetwork(g, NetRetype{DType::kBf16, false}).ok());
  const CostModel m(testing::Dev("h100-sxm"));
  const DimBindings batch = {{"batch", 16}};
  Result<NetSweepAxis> axis =
      MakeNetSweepAxis(g, "height", {256, 512, 1024, 2048, 4096, 8192}, batch);
  ASSERT_TRUE(axis.ok()) << axis.status().ToString();
  EXPECT_EQ(axis->follow, std::vector<std::string>{"width"});
  EXPECT_EQ(axis->multiple, 32);
  Result<NetSweepResult> r = SweepNetwork(g, batch, m, *axis);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto at = [&](int64_t side) {
    Result<NetSweepAxis> one = MakeNetSweepAxis(g, "height", {side}, batch);
    return SweepNetwork(g, batch, m, *one)->points.at(0);
  };
  std::set<SignalKind> seen;
  for (const Crossover& x : r->crossovers) {
    SCOPED_TRACE(Describe(x, *r).sentence);
    EXPECT_EQ(x.int_value % 32, 0);
    seen.insert(x.signal.kind);
    const NetSweepPoint before = at(x.int_value - 32), after = at(x.int_value);
    if (x.signal.kind == SignalKind::kAttentionShare) {
      EXPECT_LE(before.attention_s, before.conv_matmul_s);
      EXPECT_GT(after.attention_s, after.conv_matmul_s);
    } else if (x.signal.kind == SignalKind::kCapacity) {
      EXPECT_TRUE(before.fits());
      EXPECT_FALSE(after.fits());
      EXPECT_GT(after.memory_bytes(), 80e9);
    } else if (x.signal.kind == SignalKind::kNetwork) {
      EXPECT_NE(before.bound, after.bound);
    }
  }
  // At batch 16 on an 80 GB H100 all three happen between 256 and 8192 pixels.
  EXPECT_EQ(seen.count(SignalKind::kAttentionShare), 1u);
  EXPECT_EQ(seen.count(SignalKind::kCapacity), 1u);
  EXPECT_EQ(seen.count(SignalKind::kNetwork), 1u);
  // Width given: it does not follow. A value off the step is refused, naming the step.
  Result<NetSweepAxis> fixed = MakeNetSweepAxis(g, "height", {512}, {{"width", 512}});
  ASSERT_TRUE(fixed.ok());
  EXPECT_TRUE(fixed->follow.empty());
  Result<NetSweepAxis> off = MakeNetSweepAxis(g, "height", {512, 1000}, batch);
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.status().where(), "--vary height");
  EXPECT_NE(off.status().what().find("1000 is not a multiple of 32"), std::string::npos);
}

// Published parameter counts: torchvision's model documentation gives num_params exactly
// (ResNet-50 25,557,032; ViT-B/16 86,567,656); the SDXL paper (Podell et al. 2023, table 1)
// a 2.6 B UNet and the Stable Diffusion v1-5 model card an 860 M UNet (to the digits quoted).
TEST(GraphPresets, PublishedParameterCounts) {
  Result<std::vector<GraphPresetInfo>> presets = DescribeGraphPresets();
  ASSERT_TRUE(presets.ok());
  // id -> (published count, half a unit of its last quoted digit)
  const std::map<std::string, std::pair<double, double>> published = {
      {"resnet-50", {25557032.0, 0}},
      {"vit-b-16", {86567656.0, 0}},
      {"sdxl-unet", {2.6e9, 0.05e9}},
      {"sd15-unet", {860e6, 0.5e6}}};
  int seen = 0;
  for (const GraphPresetInfo& p : *presets) {
    const auto it = published.find(p.id);
    if (it == published.end()) continue;
    EXPECT_NEAR(p.parameters, it->second.first, it->second.second) << p.id;
    ++seen;
  }
  EXPECT_EQ(seen, 4);
}

TEST(GraphPresets, ModelByIdAndInTheList) {
  const CliOutput o = RunCli({"model", "sdxl-unet", "--hw", "h100-sxm", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["network"]["name"], "Stable Diffusion XL base UNet");
  EXPECT_EQ(j["network"]["uncosted"]["count"], 0);
  // The fused attention SDPA runs, not the math path's bmm + softmax (the capture on meta).
  int attention = 0;
  for (const auto& k : j["kernels"]) attention += k["op"] == "attention";
  EXPECT_EQ(attention, 140);  // 70 transformer blocks x (self, cross)
  EXPECT_LE(j["totals"]["time_s"].get<double>(), j["totals"]["expected_time_s"].get<double>());
  const CliOutput list = RunCli({"models", "list", "--format", "json"});
  ASSERT_EQ(list.status, 0);
  EXPECT_EQ(nlohmann::json::parse(list.out)["networks"].size(), Oracle().size());
}

// A diffusion run is `steps` passes; with classifier-free guidance each pass runs the batch of
// images twice over (conditional and unconditional).
TEST(GraphPresets, DiffusionStepsAndGuidance) {
  const CliOutput run = RunCli({"model", "sd15-unet", "--hw", "a100-sxm-80gb", "--dim", "batch=4",
                                "--steps", "50", "--cfg", "--format", "json"});
  ASSERT_EQ(run.status, 0) << run.err;
  const CliOutput pass = RunCli(
      {"model", "sd15-unet", "--hw", "a100-sxm-80gb", "--dim", "batch=8", "--format", "json"});
  ASSERT_EQ(pass.status, 0) << pass.err;
  const nlohmann::json r = nlohmann::json::parse(run.out);
  const nlohmann::json p = nlohmann::json::parse(pass.out);
  EXPECT_EQ(r["dims"]["batch"], 8);
  const nlohmann::json& d = r["diffusion"];
  EXPECT_EQ(d["steps"], 50);
  EXPECT_EQ(d["cfg"], true);
  EXPECT_EQ(d["images"], 4);
  EXPECT_EQ(d["pass_batch"], 8);
  const double pass_s = p["totals"]["time_s"].get<double>();
  EXPECT_DOUBLE_EQ(d["time_s"].get<double>(), 50 * pass_s);
  EXPECT_DOUBLE_EQ(d["seconds_per_image"].get<double>(), 50 * pass_s / 4);
  EXPECT_DOUBLE_EQ(d["images_per_s"].get<double>(), 4 / (50 * pass_s));
  EXPECT_DOUBLE_EQ(d["expected_time_s"].get<double>(),
                   50 * p["totals"]["expected_time_s"].get<double>());
  EXPECT_GE(d["expected_seconds_per_image"].get<double>(), d["seconds_per_image"].get<double>());

  // Without guidance the pass runs at the batch of images.
  const CliOutput plain = RunCli({"model", "sd15-unet", "--hw", "a100-sxm-80gb", "--dim", "batch=8",
                                  "--steps", "50", "--format", "json"});
  ASSERT_EQ(plain.status, 0);
  const nlohmann::json q = nlohmann::json::parse(plain.out)["diffusion"];
  EXPECT_EQ(q["images"], 8);
  EXPECT_DOUBLE_EQ(q["time_s"].get<double>(), 50 * pass_s);

  const CliOutput table = RunCli({"model", "sdxl-unet", "--steps", "30", "--cfg", "--top", "1"});
  ASSERT_EQ(table.status, 0);
  EXPECT_NE(table.out.find("per image: 30 steps with classifier-free guidance"), std::string::npos);
}

// "Images/s against resolution": a sweep that does not vary the batch takes --steps and --cfg;
// each row's per-image figures are those of `model` at that height (the width follows it: a
// square image), the pass run at twice the images under guidance.
TEST(GraphPresets, DiffusionSweepOverResolutionIsPerImage) {
  const CliOutput sweep = RunCli({"sweep", "sd15-unet", "--hw", "a100-sxm-80gb", "--vary",
                                  "height=64:128:x2", "--steps", "20", "--cfg", "--format", "csv"});
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  std::istringstream in(sweep.out);
  std::string line;
  std::getline(in, line);
  auto split = [](const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
    return out;
  };
  const std::vector<std::string> header = split(line);
  auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<size_t>(it - header.begin());
  };
  int rows = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> row = split(line);
    ASSERT_EQ(row.size(), header.size());
    const std::string height = row[column("height")];
    EXPECT_EQ(row[column("pass_batch")], "2");
    EXPECT_EQ(row[column("images")], "1");
    const CliOutput pass = RunCli({"model", "sd15-unet", "--hw", "a100-sxm-80gb", "--dim",
                                   "batch=2", "--dim", "height=" + height, "--dim", "width=" + height,
                                   "--format", "json"});
    ASSERT_EQ(pass.status, 0) << pass.err;
    const nlohmann::json t = nlohmann::json::parse(pass.out)["totals"];
    const double per_image = std::stod(row[column("seconds_per_image")]);
    EXPECT_NEAR(per_image, 20 * t["time_s"].get<double>(), 1e-12 * per_image) << height;
    EXPECT_NEAR(std::stod(row[column("images_per_s")]), 1 / per_image, 1e-9 / per_image);
    const double expected = std::stod(row[column("expected_seconds_per_image")]);
    EXPECT_NEAR(expected, 20 * t["expected_time_s"].get<double>(), 1e-12 * expected) << height;
    EXPECT_GE(expected, per_image);
    ++rows;
  }
  EXPECT_EQ(rows, 2);
}

TEST(GraphPresets, DiffusionFlagsRefusedWhereTheyMeanNothing) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"model", "sdxl-unet", "--cfg"}, "error: --cfg: goes with --steps N"},
      {{"model", "sdxl-unet", "--steps", "0"}, "error: --steps: must be in 1..100000, got 0"},
      {{"model", "llama-3-8b", "--steps", "4"}, "error: --steps: applies to graph files"},
      {{"model", "sdxl-unet", "--steps", "2", "--cfg", "--dim", "batch=0"}, "batch"},
      // A misspelt preset is an unknown model, with the network presets suggested.
      {{"model", "sdxl-unt", "--steps", "3"}, "did you mean 'sdxl-unet'"},
      {{"model", "resnet50"}, "did you mean 'resnet-50'"},
      // Commands that take LLM configs say what a network preset is.
      {{"plan", "sdxl-unet", "--gpus", "8", "--prompt", "10", "--output", "10"},
       "'sdxl-unet' is a network preset"},
      // --steps runs a denoiser's pass per image: not a classifier's, an encoder's or a VAE's.
      {{"model", "resnet-50", "--steps", "30"}, "error: --steps: 'ResNet-50' is not a denoiser"},
      {{"model", "sd-vae-decoder", "--steps", "30"}, "is not a denoiser's pass"},
      {{"model", "clip-vit-l-14", "--steps", "4", "--cfg"}, "is not a denoiser's pass"},
      {{"model", std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/onnx/small_cnn.onnx",
        "--dim", "batch=2", "--steps", "4"},
       "is not a denoiser's pass"},
  };
  for (const auto& [args, expect] : cases) {
    const CliOutput o = RunCli(args);
    EXPECT_EQ(o.status, 2) << args.back();
    EXPECT_NE(o.err.find(expect), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_EQ(o.out, "");
  }
}

// An ONNX denoiser with a symbolic batch: --cfg loads it at twice the images; every network
// preset that is a denoiser takes --steps, and only those.
TEST(GraphPresets, GuidanceOnOnnxAndTheDenoiserPresets) {
  const std::string onnx =
      std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/onnx/denoiser_block.onnx";
  const CliOutput o =
      RunCli({"model", onnx, "--dim", "batch=3", "--steps", "10", "--cfg", "--format", "json"});
  ASSERT_EQ(o.status, 0) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["dims"]["batch"], 6);
  EXPECT_EQ(j["diffusion"]["images"], 3);
  const CliOutput pass = RunCli({"model", onnx, "--dim", "batch=6", "--format", "json"});
  ASSERT_EQ(pass.status, 0) << pass.err;
  EXPECT_DOUBLE_EQ(j["diffusion"]["time_s"].get<double>(),
                   10 * nlohmann::json::parse(pass.out)["totals"]["time_s"].get<double>());
  for (const char* preset : {"sd15-unet", "sdxl-unet", "flux-dev", "dit-xl-2"}) {
    const CliOutput d = RunCli({"model", preset, "--steps", "2", "--format", "json"});
    EXPECT_EQ(d.status, 0) << preset << ": " << d.err;
  }
}

// A file named like a preset is read as that file; a preset id otherwise.
TEST(GraphPresets, AFileOfThePresetsNameWins) {
  const std::string dir = ::testing::TempDir() + "/roofline_preset_shadow";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/resnet-50";
  std::ofstream(file) << "{\"format\": \"roofline-graph\", \"version\": 1, \"name\": \"mine\", "
                         "\"tensors\": {\"x\": {\"shape\": [4], \"dtype\": \"fp32\"}, "
                         "\"y\": {\"shape\": [4], \"dtype\": \"fp32\"}}, \"nodes\": [{\"name\": "
                         "\"relu\", \"op\": \"elementwise\", \"inputs\": [\"x\"], \"outputs\": "
                         "[\"y\"]}]}";
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const CliOutput mine = RunCli({"model", "resnet-50", "--format", "json"});
  std::filesystem::remove(file);
  std::filesystem::create_directories(dir + "/resnet-50");  // a folder without config.json
  const CliOutput preset = RunCli({"model", "resnet-50", "--format", "json"});
  std::filesystem::current_path(cwd);
  ASSERT_EQ(mine.status, 0) << mine.err;
  EXPECT_EQ(nlohmann::json::parse(mine.out)["network"]["name"], "mine");
  ASSERT_EQ(preset.status, 0) << preset.err;
  EXPECT_EQ(nlohmann::json::parse(preset.out)["network"]["name"], "ResNet-50");
}

}  // namespace graph_presets_test
}  // namespace roofline
