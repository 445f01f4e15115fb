// Oracle check against PyTorch: tests/fixtures/hf_flop_oracle.json holds FLOP counts that
// torch.utils.flop_counter.FlopCounterMode measured on HF transformers models built from shrunk
// configs (tools/oracle/hf_flop_oracle.py; versions in the fixture). FlopCounterMode counts
// matmul-like ops and SDPA with 2 FLOP per multiply-accumulate; it counts neither bias adds nor
// elementwise work, so we compare the FLOPs our graph puts on tensor engines.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "roofline/llm.h"
#include "src/util/json_util.h"
#include "tests/test_util.h"

namespace roofline {
namespace oracle_test {

using nlohmann::json;

const json& Fixture() {
  static const json j = [] {
    Result<std::string> text =
        ReadTextFile(std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/hf_flop_oracle.json");
    EXPECT_TRUE(text.ok()) << text.status().ToString();
    return text.ok() ? json::parse(*text) : json::object();
  }();
  return j;
}

/// Tensor-engine FLOPs of a step graph, and those attention skips under a causal flash kernel.
struct Count {
  double tensor = 0;
  double masked_skipped = 0;  ///< FLOPs of masked (query, key) pairs a flash kernel skips
};

Count TensorFlops(const TransformerConfig& c, const Workload& w, Phase phase) {
  Result<LlmGraph> g = BuildLlmGraph(c, w, phase);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  Count n;
  if (!g.ok()) return n;
  const CostModel model(testing::Dev("h100-sxm"));
  for (const Kernel& k : Fuse(g->graph, FusionMode::kEager)) {
    const KernelCost cost = model.Evaluate(g->graph, k);
    for (int e = 0; e < cost.num_engines; ++e) {
      if (cost.engines[e].requested.tensor) {
        n.tensor += cost.engines[e].flops * static_cast<double>(k.repeat);
      }
    }
    for (int o : k.ops) {
      const Op& op = g->graph.ops()[o];
      if (const auto* a = std::get_if<AttentionSpec>(&op.spec)) {
        const double full = AttentionPairs(*a, false);
        const double kept = AttentionPairs(*a, true);
        n.masked_skipped += 2.0 * a->batch * a->heads * (full - kept) *
                            static_cast<double>(a->head_dim + a->v_dim()) *
                            static_cast<double>(op.repeat);
      }
    }
  }
  return n;
}

TEST(Oracle, FixtureCoversEverySupportedArchitecture) {
  const json& f = Fixture();
  ASSERT_TRUE(f.contains("cases"));
  std::set<std::string> archs;
  for (const auto& c : f["cases"]) archs.insert(c["architecture"].get<std::string>());
  for (const char* a :
       {"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
        "Gemma2ForCausalLM", "Gemma3ForCausalLM", "Phi3ForCausalLM", "MixtralForCausalLM",
        "Qwen2MoeForCausalLM", "Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM", "GPT2LMHeadModel",
        "GPTNeoXForCausalLM"}) {
    EXPECT_TRUE(archs.count(a)) << a;
  }
}

// Eager attention computes the full score square, as HF's eager and SDPA paths do and as
// FlopCounterMode counts them: our count must equal PyTorch's exactly. Our flash kernel skips
// fully masked pairs: it must be lower by exactly those pairs' FLOPs (the stated convention).
TEST(Oracle, MatmulAndAttentionFlopsEqualPyTorch) {
  int compared = 0;
  for (const auto& cs : Fixture()["cases"]) {
    const std::string arch = cs["architecture"];
    Result<TransformerConfig> c = ParseHfConfig(cs["config"].dump(), arch + " (fixture)");
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    for (const auto& run : cs["runs"]) {
      const std::string phase_name = run["phase"];
      const Phase phase = phase_name == "prefill" ? Phase::kPrefill : Phase::kDecode;
      Workload w;
      w.batch = run["batch"].get<int64_t>();
      if (phase == Phase::kPrefill) {
        w.prompt = run["prompt"].get<int64_t>();
        w.all_logits = run.value("logits", "last") == "all";
      } else {
        w.prompt = run["context"].get<int64_t>();
        w.context = run["context"].get<int64_t>();
      }
      w.mla = MlaForm::kNaive;  // HF's form
      const double oracle = run["total_flops"].get<double>();
      const std::string what = arch + " " + phase_name + " " +
                               run["attn_implementation"].get<std::string>() +
                               " logits=" + run.value("logits", "-");
      w.attention = AttentionImpl::kEager;
      const Count eager = TensorFlops(*c, w, phase);
      EXPECT_DOUBLE_EQ(eager.tensor, oracle) << what;
      w.attention = AttentionImpl::kFlash;
      const Count flash = TensorFlops(*c, w, phase);
      EXPECT_DOUBLE_EQ(flash.tensor, oracle - flash.masked_skipped) << what;
      if (phase == Phase::kPrefill) {
        EXPECT_GT(flash.masked_skipped, 0) << what;
      }
      ++compared;
    }
  }
  EXPECT_GE(compared, 13 * 3);
}

}  // namespace oracle_test
}  // namespace roofline
