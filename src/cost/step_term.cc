// The step terms of expected times.
#include "roofline/step_term.h"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/units.h"

namespace roofline {

void HostOverlap::Apply(StepTime& step) const {
  step.host_bound = step.host_s > step.time_s;
  step.time_s = std::max(step.time_s, step.host_s);
}

std::string HostOverlap::Explain(const StepTime& step) const {
  return step.host_bound
             ? fmt::format("host overlap: the host needs {} to launch the step's kernels, longer "
                           "than the GPU's {}: the step takes the host's time (launch-bound)",
                           Seconds(step.host_s), Seconds(step.gpu_s))
             : fmt::format("host overlap: the host launches the kernels ({}) while the GPU runs "
                           "earlier ones ({}): hidden",
                           Seconds(step.host_s), Seconds(step.gpu_s));
}

std::vector<std::shared_ptr<const StepTerm>> DefaultStepTerms() {
  static const std::vector<std::shared_ptr<const StepTerm>> terms = {
      std::make_shared<const HostOverlap>()};
  return terms;
}

StepTime ApplyStepTerms(StepTime step, const std::vector<std::shared_ptr<const StepTerm>>& terms) {
  step.time_s = step.gpu_s;
  for (const auto& t : terms) t->Apply(step);
  return step;
}

}  // namespace roofline
