#include "roofline/profile_prediction.h"

#include <fmt/format.h>

namespace roofline {

Result<std::unique_ptr<ProfilePrediction>> PredictForProfile(Scenario o, const Device& device,
                                                             const DeviceDatabase& db) {
  auto owned = std::make_unique<ProfilePrediction>();  // built in place: the model points in
  ProfilePrediction& p = *owned;
  // The device as the database or its file names it (an embedded file by its id).
  o.hw = device.origin.empty() || device.origin.rfind("<embedded>", 0) == 0 ? device.id
                                                                            : device.origin;
  Result<Setup> setup = Resolve(o, db);
  if (!setup.ok()) return setup.status();
  p.setup = std::move(setup).value();
  p.model = std::make_unique<CostModel>(p.setup.device, p.setup.cost);
  Result<ModelAnalysis> a = AnalyzeModel(p.setup.config, p.setup.workload, *p.model, o.phases);
  if (!a.ok()) return a.status();
  p.analysis = std::move(a).value();
  p.kernels = PredictedKernelsOf(p.analysis.phases.front(), *p.model);
  p.title = fmt::format("{} {} on {} (batch {}, prompt {})", o.model,
                        NameOf(p.analysis.phases.front().phase), device.id,
                        p.setup.workload.batch, p.setup.workload.prompt);
  return owned;
}

}  // namespace roofline
