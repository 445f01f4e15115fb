// Tensor-core matmuls accumulating in FP16 (--accumulate fp16): they run at the device's
// FP16-accumulate figure where it lists one (GeForce cards run FP16 accumulation at twice the
// FP32 rate; device files' achievable.compute_fp16_accumulate). Attention and the bound keep
// their ceilings. CostModel::used_compute_fp16_accumulate() holds the figures.
#include "src/cost/kernel_term.h"

namespace roofline {
namespace {

class Fp16Accumulate final : public KernelTerm {
 public:
  std::string_view name() const override { return "fp16 accumulate"; }
  Phase phase() const override { return Phase::kTerms; }
  bool Apply(KernelTermContext& k, ExpectedCost&) const override {
    if (k.cls != KernelClass::kMatmul) return false;
    k.matmul_ceilings = &k.model.used_compute_fp16_accumulate();
    return true;
  }
};

}  // namespace

std::shared_ptr<const KernelTerm> MakeFp16AccumulateTerm(const CostModel& model) {
  for (const UsedCeiling& u : model.used_compute_fp16_accumulate()) {
    if (u.value > 0) return std::make_shared<const Fp16Accumulate>();
  }
  return nullptr;
}

}  // namespace roofline
