// The oracles of general networks, without Python: graphs captured from torchvision ResNet-50,
// ViT-B/16 and a small diffusers UNet2DConditionModel (random weights; tests/fixtures/captured/,
// written by tools/fixtures/make_capture_fixtures.py), each with the FLOP count that
// torch.utils.flop_counter.FlopCounterMode gave for the same inputs and the model's parameter
// total, recorded in oracles.json at capture time.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "roofline/network.h"
#include "roofline/network_analysis.h"
#include "tests/test_util.h"

namespace roofline {
namespace network_oracle_test {

using testing::Dev;

std::string Captured(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/captured/" + name;
}

nlohmann::json Oracles() {
  std::ifstream in(Captured("oracles.json"));
  return nlohmann::json::parse(in);
}

NetworkAnalysis Analyze(const std::string& file, const DimBindings& dims) {
  Result<NetworkGraph> g = LoadGraphFile(Captured(file));
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  const CostModel model(Dev("h100-sxm"));
  Result<NetworkAnalysis> a = AnalyzeNetwork(*g, dims, model);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return std::move(a).value();
}

// torchvision's model card for resnet50 (IMAGENET1K_V1): 25,557,032 parameters and 4.09 GFLOPS,
// which torchvision counts as multiply-accumulates: 8.18 GFLOP at 2 FLOP each.
TEST(NetworkOracle, Resnet50MatchesTorchvisionAndTheFlopCounter) {
  const nlohmann::json o = Oracles()["graphs"]["resnet50"];
  const NetworkAnalysis a = Analyze("resnet50.json", {});
  EXPECT_EQ(a.parameters, 25557032.0);
  EXPECT_EQ(a.parameters, o["parameters"].get<double>());
  EXPECT_EQ(a.matrix_flops, o["flop_counter_flops"].get<double>());
  EXPECT_NEAR(a.matrix_flops / 2 / 1e9, 4.09, 0.005);
  EXPECT_EQ(a.uncosted.count, 0);
  EXPECT_EQ(a.nodes, o["nodes"].get<int64_t>());
  // The batch is symbolic in the capture: 8 images, 8 times the matrix work.
  const NetworkAnalysis b8 = Analyze("resnet50.json", {{"batch", 8}});
  EXPECT_EQ(b8.matrix_flops, 8 * a.matrix_flops);
  EXPECT_EQ(b8.parameters, a.parameters);
}

// torchvision's model card for vit_b_16: 86,567,656 parameters, 17.56 GFLOPS (multiply-
// accumulates). FlopCounterMode counted attention through SDPA's math backend (two batched
// matmuls), the same 2·B·H·Lq·Lk·(D+Dv) the tool uses (no causal mask in a ViT).
TEST(NetworkOracle, VitB16MatchesTheFlopCounter) {
  const nlohmann::json o = Oracles()["graphs"]["vit_b_16"];
  const NetworkAnalysis a = Analyze("vit_b_16.json", {});
  EXPECT_EQ(a.parameters, 86567656.0);
  EXPECT_EQ(a.matrix_flops, o["flop_counter_flops"].get<double>());
  EXPECT_NEAR(a.matrix_flops / 2 / 1e9, 17.56, 0.01);
  EXPECT_EQ(a.uncosted.count, 0);
}

TEST(NetworkOracle, SmallUnetMatchesTheFlopCounter) {
  const nlohmann::json o = Oracles()["graphs"]["unet_small"];
  const NetworkAnalysis a = Analyze("unet_small.json", {});
  EXPECT_EQ(a.parameters, o["parameters"].get<double>());
  EXPECT_EQ(a.matrix_flops, o["flop_counter_flops"].get<double>());
  EXPECT_EQ(a.uncosted.count, 0);
  EXPECT_GT(a.totals.flops, a.matrix_flops);  // norms, activations and softmax on top
}

}  // namespace network_oracle_test
}  // namespace roofline
