// The why section: the step against the ridge, the largest kernel per class, exact flips.
#include "roofline/why.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "roofline/model_registry.h"
#include "roofline/report.h"
#include "tests/test_util.h"

namespace roofline {
namespace why_test {

using testing::Dev;

TransformerConfig Preset(const std::string& id) {
  static const ModelRegistry registry = ModelRegistry::LoadEmbedded();
  Result<TransformerConfig> c = ResolveModel(id, registry);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : TransformerConfig{};
}

ModelAnalysis Analyze(const TransformerConfig& c, const Workload& w, const CostModel& model) {
  Result<ModelAnalysis> a = AnalyzeModel(c, w, model, PhaseSelection::kBoth);
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? *a : ModelAnalysis{};
}

const StepWhy* StepOf(const Why& why, const std::string& label) {
  for (const StepWhy& s : why.steps) {
    if (s.label == label) return &s;
  }
  ADD_FAILURE() << "no step " << label;
  return nullptr;
}

const ClassWhy* ClassOfWhy(const StepWhy& s, KernelClass cls) {
  for (const ClassWhy& c : s.classes) {
    if (c.cls == cls) return &c;
  }
  return nullptr;
}

/// The verdict of the first kernel named `kernel` in a phase at batch `batch` and prompt
/// `prompt`.
std::string KernelVerdict(const TransformerConfig& c, Workload w, const CostModel& model,
                          Phase phase, const std::string& kernel) {
  Result<PhaseResult> r = AnalyzePhase(c, w, model, phase);
  if (!r.ok()) {
    ADD_FAILURE() << r.status().ToString();
    return "error";
  }
  for (const KernelCost& k : r->costs) {
    if (k.name == kernel) return model.BoundName(k);
  }
  return "none";
}

// The decode flip of a weight matmul is exact (the batch before it has the starting verdict, the
// flip batch the new one), and in bf16 it lies near the device's ridge (about one FLOP per byte
// per token: the H100 SXM datasheet's 989.4 TFLOP/s / 3.35 TB/s = 295).
TEST(Why, TheDecodeMatmulFlipIsExactAndNearTheRidge) {
  const TransformerConfig c = Preset("llama-3-8b");
  Workload w;
  w.prompt = 2048;
  const CostModel model(Dev("h100-sxm"));
  const Why why = ExplainModel(Analyze(c, w, model), model);
  const StepWhy* decode = StepOf(why, "decode");
  ASSERT_NE(decode, nullptr);
  EXPECT_EQ(decode->axis, "batch");
  EXPECT_EQ(decode->top, kWhyTopBatch);
  EXPECT_NEAR(decode->ridge, 989.4e12 / 3.35e12, 0.5);
  const ClassWhy* mm = ClassOfWhy(*decode, KernelClass::kMatmul);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->name, "gate_proj");  // gate, up and down tie at batch 1: the first is named
  ASSERT_TRUE(mm->flip.found);
  EXPECT_EQ(mm->flip.from, "memory:hbm");
  EXPECT_EQ(mm->flip.to, "compute:tensor.bf16");
  EXPECT_GT(mm->flip.value, 200);
  EXPECT_LT(mm->flip.value, 400);
  Workload before = w, at = w;
  before.batch = mm->flip.value - 1;
  at.batch = mm->flip.value;
  EXPECT_EQ(KernelVerdict(c, before, model, Phase::kDecode, "gate_proj"), mm->flip.from);
  EXPECT_EQ(KernelVerdict(c, at, model, Phase::kDecode, "gate_proj"), mm->flip.to);
  // Attention reads each sequence's own KV cache: its intensity does not grow with the batch.
  const ClassWhy* attn = ClassOfWhy(*decode, KernelClass::kAttention);
  ASSERT_NE(attn, nullptr);
  EXPECT_FALSE(attn->flip.found);
  EXPECT_EQ(attn->flip.from, "memory:hbm");
  EXPECT_EQ(why.max_batch, Analyze(c, w, model).max_batch);
  EXPECT_EQ(why.context, 2048);
}

// Prefill flips along the prompt, exactly, and its matmuls turn compute-bound at a prompt near
// the ridge as well (one token per FLOP/B with 2-byte weights).
TEST(Why, ThePrefillMatmulFlipIsAlongThePromptAndExact) {
  const TransformerConfig c = Preset("llama-3-8b");
  Workload w;
  w.prompt = 2048;
  const CostModel model(Dev("h100-sxm"));
  const Why why = ExplainModel(Analyze(c, w, model), model);
  const StepWhy* prefill = StepOf(why, "prefill");
  ASSERT_NE(prefill, nullptr);
  EXPECT_EQ(prefill->axis, "prompt");
  EXPECT_EQ(prefill->tokens, 2048);
  EXPECT_EQ(prefill->verdict, "compute:tensor.bf16");
  EXPECT_GT(prefill->intensity, prefill->ridge);
  const ClassWhy* mm = ClassOfWhy(*prefill, KernelClass::kMatmul);
  ASSERT_NE(mm, nullptr);
  ASSERT_TRUE(mm->flip.found);
  EXPECT_GT(mm->flip.value, 200);
  EXPECT_LT(mm->flip.value, 400);
  Workload before = w, at = w;
  before.prompt = mm->flip.value - 1;
  at.prompt = mm->flip.value;
  EXPECT_EQ(KernelVerdict(c, before, model, Phase::kPrefill, mm->name), mm->flip.from);
  EXPECT_EQ(KernelVerdict(c, at, model, Phase::kPrefill, mm->name), mm->flip.to);
  // The step's own flip is exact too.
  ASSERT_TRUE(prefill->step.found);
  auto step = [&](int64_t prompt) {
    Workload p = w;
    p.prompt = prompt;
    Result<PhaseResult> r = AnalyzePhase(c, p, model, Phase::kPrefill);
    return r.ok() ? NameOf(r->totals.verdict, model.device()) : std::string("error");
  };
  EXPECT_EQ(step(prefill->step.value - 1), prefill->step.from);
  EXPECT_EQ(step(prefill->step.value), prefill->step.to);
}

// Each class's kernel is its largest by time x repeat, shares add up to at most one and are
// sorted; a class under 1% is left out unless it is matmuls or attention.
TEST(Why, NamesTheLargestKernelOfEachClass) {
  const TransformerConfig c = Preset("mixtral-8x7b");
  Workload w;
  w.batch = 16;
  const CostModel model(Dev("h100-sxm"));
  const ModelAnalysis a = Analyze(c, w, model);
  for (const PhaseResult& p : a.phases) {
    const StepWhy s = ExplainStep(p, model, "x");
    double total = 0;
    for (size_t i = 0; i < s.classes.size(); ++i) {
      const ClassWhy& cw = s.classes[i];
      total += cw.share;
      if (i > 0) {
        EXPECT_LE(cw.share, s.classes[i - 1].share);
      }
      const bool always = cw.cls == KernelClass::kMatmul || cw.cls == KernelClass::kAttention;
      if (!always) {
        EXPECT_GE(cw.share, 0.01);
      }
      ASSERT_GE(cw.kernel, 0);
      EXPECT_EQ(p.classes[cw.kernel], cw.cls);
      auto time = [&](size_t k) {
        return (p.costs[k].time_s - p.costs[k].overhead_s) *
               static_cast<double>(p.costs[k].repeat);
      };
      for (size_t k = 0; k < p.kernels.size(); ++k) {
        if (p.classes[k] == cw.cls) {
          EXPECT_LE(time(k), time(cw.kernel)) << p.costs[k].name;
        }
      }
      EXPECT_EQ(cw.name, p.costs[cw.kernel].name);
      EXPECT_EQ(cw.verdict, model.BoundName(p.costs[cw.kernel]));
    }
    EXPECT_LE(total, 1 + 1e-12);
    EXPECT_GT(total, 0.9);
  }
}

// tp 2 on a device without an interconnect is refused at every batch, as AnalyzeModel refuses
// it: the flips say "error" rather than a verdict.
TEST(Why, ARefusedWorkloadIsAnErrorNotAVerdict) {
  const TransformerConfig c = Preset("llama-3-8b");
  Workload w;
  w.tp = 2;
  const CostModel model(Dev("h100-sxm"));
  const ModelAnalysis a = Analyze(c, w, model);
  Device lonely = Dev("h100-sxm");
  lonely.links.clear();
  const Why why = ExplainModel(a, CostModel(lonely));
  const StepWhy* decode = StepOf(why, "decode");
  ASSERT_NE(decode, nullptr);
  EXPECT_EQ(decode->step.from, "error");
  EXPECT_FALSE(decode->step.found);
  EXPECT_NE(RenderWhy(why).find("refused at every batch from 1 to 65536"), std::string::npos) << RenderWhy(why);
}

// A network with a `batch` dimension gets exact flips along it. fc1 of the fixture block maps
// 256 to 1024 features over 128 tokens per sequence: with m = 128 x batch rows its intensity is
// 2mnk / (2(mk + kn + mn)) = 262144 m / (1280 m + 262144) FLOP/B (bf16 operands read once),
// which passes the A100's ridge (312 TFLOP/s / 2.039 TB/s = 153 FLOP/B, datasheet) at
// m = 605, so between batch 4 and 5.
TEST(Why, ANetworkFlipsAlongItsBatch) {
  Result<NetworkGraph> g =
      LoadGraphFile(std::string(ROOFLINE_SOURCE_DIR) + "/tests/fixtures/graphs/transformer_block.json");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const CostModel model(Dev("a100-sxm-80gb"));
  Result<NetworkAnalysis> a = AnalyzeNetwork(*g, {}, model);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const Why why = ExplainNetwork(
      *a, model, [&](int64_t) -> Result<NetworkGraph> { return *g; }, {});
  ASSERT_EQ(why.steps.size(), 1u);
  const StepWhy& s = why.steps[0];
  EXPECT_EQ(s.axis, "batch");
  const ClassWhy* mm = ClassOfWhy(s, KernelClass::kMatmul);
  ASSERT_NE(mm, nullptr);
  ASSERT_TRUE(mm->flip.found) << RenderWhy(why);
  auto verdict = [&](int64_t b) {
    Result<NetworkAnalysis> r = AnalyzeNetwork(*g, {{"batch", b}}, model);
    if (!r.ok()) {
      ADD_FAILURE() << r.status().ToString();
      return std::string("error");
    }
    for (const KernelCost& k : r->costs) {
      if (k.name == mm->name) return model.BoundName(k);
    }
    return std::string("none");
  };
  EXPECT_EQ(mm->name, "fc1");
  EXPECT_EQ(mm->flip.value, 5);
  EXPECT_EQ(verdict(mm->flip.value - 1), mm->flip.from);
  EXPECT_EQ(verdict(mm->flip.value), mm->flip.to);
  EXPECT_EQ(why.max_batch, -1);  // no KV cache line for a network
}

}  // namespace why_test
}  // namespace roofline
