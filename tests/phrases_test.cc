// Shared report phrases: path abbreviation that keeps names unique, --top selections and the
// per-class summary line.
#include "src/report/phrases.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "tests/test_util.h"

namespace roofline {
namespace phrases_test {

// Node names as a diffusion UNet's ONNX export writes them: the same tail under many blocks.
TEST(AbbreviatePaths, ShortensToUniqueTails) {
  const std::vector<std::string> names = {
      "/down_blocks.0/resnets.0/conv1/Conv",
      "/down_blocks.0/resnets.1/conv1/Conv",
      "/down_blocks.1/resnets.0/conv1/Conv",
      "/mid_block/attentions.0/transformer_blocks.0/attn1/to_q/MatMul",
      "/up_blocks.2/attentions.1/transformer_blocks.0/attn1/to_q/MatMul",
      "/conv_in/Conv",
  };
  const std::vector<std::string> shown = AbbreviatePaths(names, 30);
  ASSERT_EQ(shown.size(), names.size());
  // Every shown name is unique and either the whole name or "..." and a tail of it that fits.
  EXPECT_EQ(std::set<std::string>(shown.begin(), shown.end()).size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    if (shown[i] == names[i]) continue;
    ASSERT_EQ(shown[i].rfind("...", 0), 0u) << shown[i];
    const std::string tail = shown[i].substr(3);
    EXPECT_EQ(names[i].compare(names[i].size() - tail.size(), tail.size(), tail), 0) << shown[i];
    EXPECT_LE(shown[i].size(), 30u);
  }
  // Short names stay whole. The first and third differ only in their block: no '/' tail but the
  // whole name is unique. The second's "/resnets.1/conv1/Conv" is.
  EXPECT_EQ(shown[5], "/conv_in/Conv");
  EXPECT_EQ(shown[0], names[0]);
  EXPECT_EQ(shown[1], ".../resnets.1/conv1/Conv");
  EXPECT_EQ(shown[2], names[2]);
  // The attention projections first differ at "attentions.0" / "attentions.1": their unique tails
  // are too long for 30 characters, so they stay whole; with room, the tails are used.
  EXPECT_EQ(shown[3], names[3]);
  const std::vector<std::string> wide = AbbreviatePaths(names, 60);
  EXPECT_EQ(wide[3], ".../attentions.0/transformer_blocks.0/attn1/to_q/MatMul");
  EXPECT_EQ(wide[4], ".../attentions.1/transformer_blocks.0/attn1/to_q/MatMul");
  EXPECT_EQ(AbbreviatePaths({"/a/x/y", "/b/x/z"}, 5),
            (std::vector<std::string>{".../y", ".../z"}));
  // Dotted module paths are cut at a dot.
  EXPECT_EQ(AbbreviatePaths({"model.layers.0.mlp.down_proj", "model.layers.0.mlp.up_proj"}, 20),
            (std::vector<std::string>{"...down_proj", "...up_proj"}));
  // Identical names are never shortened (no tail of theirs is unique).
  EXPECT_EQ(AbbreviatePaths({"/a/b/c", "/a/b/c"}, 2), (std::vector<std::string>{"/a/b/c", "/a/b/c"}));
}

GraphCosts DecodeOf(const std::string& id) {
  static const ModelRegistry registry = ModelRegistry::LoadEmbedded();
  Result<TransformerConfig> c = ResolveModel(id, registry);
  EXPECT_TRUE(c.ok());
  Workload w;
  Result<PhaseResult> p = AnalyzePhase(*c, w, CostModel(testing::Dev("h100-sxm")), Phase::kDecode);
  EXPECT_TRUE(p.ok());
  return *p;
}

// --top keeps the N kernels with the most time x repeat, in execution order, and the note says
// how much time the rest take.
TEST(TopKernels, KeepsTheLargestInExecutionOrder) {
  const GraphCosts g = DecodeOf("llama-3-8b");
  const std::vector<size_t> top = TopKernels(g, 4);
  ASSERT_EQ(top.size(), 4u);
  EXPECT_TRUE(std::is_sorted(top.begin(), top.end()));
  auto time = [&](size_t i) { return g.costs[i].time_s * static_cast<double>(g.costs[i].repeat); };
  double kept = 0;
  for (size_t i = 0; i < g.costs.size(); ++i) {
    const bool in = std::find(top.begin(), top.end(), i) != top.end();
    if (in) kept += time(i);
    for (size_t j : top) {
      if (!in) {
        EXPECT_LE(time(i), time(j)) << g.costs[i].name << " left out, " << g.costs[j].name;
      }
    }
  }
  const std::string note = TopNote(g, top);
  EXPECT_NE(note.find(fmt::format("top 4 of {} kernels", g.costs.size())), std::string::npos)
      << note;
  EXPECT_NE(note.find(fmt::format("{:.1f}% of the time", 100 * (g.totals.time_s - kept) /
                                                             g.totals.time_s)),
            std::string::npos)
      << note;
  EXPECT_EQ(TopKernels(g, 0).size(), g.costs.size());
  EXPECT_EQ(TopNote(g, TopKernels(g, 0)), "");
}

// The by-class line names every present class with its share, largest first, and they add up
// with the launch overhead to the step.
TEST(ClassSummaryLine, SharesAddUpToTheStep) {
  const GraphCosts g = DecodeOf("llama-3-8b");
  const std::string line = ClassSummaryLine(g, testing::Dev("h100-sxm"));
  ASSERT_EQ(line.rfind("by class: matmuls ", 0), 0u) << line;
  EXPECT_LT(line.find("matmuls"), line.find("attention"));
  double sum = g.overhead_s;
  for (double t : g.class_time_s) sum += t;
  EXPECT_NEAR(sum, g.totals.time_s, 1e-12 * g.totals.time_s);
  EXPECT_NE(line.find(fmt::format("matmuls {:.1f}%", 100 * g.class_time_s[0] / g.totals.time_s)),
            std::string::npos);
}

}  // namespace phrases_test
}  // namespace roofline
