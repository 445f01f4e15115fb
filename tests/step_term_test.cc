// Step terms: what belongs to a whole step (the host's launching against the GPU's running
// today; an engine's host work or a pipeline's bubbles next) is a term applied to the step, not
// a special case in a kernel's expected time.
#include "roofline/step_term.h"

#include <gtest/gtest.h>

#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "tests/test_util.h"

namespace roofline {
namespace step_term_test {

TEST(StepTerms, HostOverlapTakesTheLongerOfHostAndGpu) {
  const HostOverlap overlap;
  StepTime gpu_bound;
  gpu_bound.gpu_s = 3e-3;
  gpu_bound.host_s = 2e-3;
  gpu_bound = ApplyStepTerms(gpu_bound, {std::make_shared<HostOverlap>()});
  EXPECT_EQ(gpu_bound.time_s, 3e-3);
  EXPECT_FALSE(gpu_bound.host_bound);
  EXPECT_NE(overlap.Explain(gpu_bound).find("hidden"), std::string::npos);
  StepTime host_bound;
  host_bound.gpu_s = 1e-3;
  host_bound.host_s = 4e-3;
  host_bound = ApplyStepTerms(host_bound, DefaultStepTerms());
  EXPECT_EQ(host_bound.time_s, 4e-3);
  EXPECT_TRUE(host_bound.host_bound);
  EXPECT_NE(overlap.Explain(host_bound).find("launch-bound"), std::string::npos);
}

/// A term of the kind a serving engine adds: a fixed host time per step, after the kernels.
class SerialHostWork final : public StepTerm {
 public:
  explicit SerialHostWork(double s) : s_(s) {}
  std::string_view name() const override { return "host work"; }
  void Apply(StepTime& step) const override { step.time_s += s_; }
  std::string Explain(const StepTime&) const override { return "host work per step"; }

 private:
  double s_;
};

// A new step term is one class and one entry in CostOptions: the step's expected time moves by
// exactly what it adds, and never below the bound.
TEST(StepTerms, ATermPluggedIntoTheCostModelMovesTheStep) {
  const TransformerConfig config =
      *ResolveModel("llama-3-8b", ModelRegistry::LoadEmbedded());
  Workload w;
  w.batch = 4;
  CostOptions plain;
  plain.efficiency = std::make_shared<const EfficiencyData>(*LoadDefaultEfficiencyData());
  CostOptions engine = plain;
  engine.step_terms.push_back(std::make_shared<SerialHostWork>(1.5e-3));
  const Device& h100 = testing::Dev("h100-sxm");
  const Result<PhaseResult> a = AnalyzePhase(config, w, CostModel(h100, plain), Phase::kDecode);
  const Result<PhaseResult> b = AnalyzePhase(config, w, CostModel(h100, engine), Phase::kDecode);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_DOUBLE_EQ(b->totals.expected_s, a->totals.expected_s + 1.5e-3);
  EXPECT_EQ(b->totals.time_s, a->totals.time_s);  // the bound is the kernels'
  EXPECT_GE(b->totals.expected_s, b->totals.time_s);
}

}  // namespace step_term_test
}  // namespace roofline
