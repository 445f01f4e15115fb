// A lowered network costed on a device: each op its own (eager) kernel, totals, and the time
// bound by compute and by memory.
#include "roofline/network_analysis.h"

#include <utility>

namespace roofline {

Result<NetworkAnalysis> AnalyzeNetwork(const NetworkGraph& g, const DimBindings& bindings,
                                       const CostModel& model) {
  Result<LoweredNetwork> lowered = LowerNetwork(g, bindings);
  if (!lowered.ok()) return lowered.status();
  NetworkAnalysis a;
  static_cast<LoweredNetwork&>(a) = std::move(lowered).value();
  static_cast<GraphCosts&>(a) = AnalyzeGraph(a.graph, model, FusionMode::kEager);
  return a;
}

}  // namespace roofline
