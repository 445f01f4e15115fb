// A lowered network costed on a device: each op its own (eager) kernel, totals, and the time
// bound by compute and by memory.
#include "roofline/network_analysis.h"

#include <utility>

namespace roofline {

Result<NetworkAnalysis> AnalyzeNetwork(const NetworkGraph& g, const DimBindings& bindings,
                                       const CostModel& model) {
  Result<LoweredNetwork> lowered = LowerNetwork(g, bindings);
  if (!lowered.ok()) return lowered.status();
  LoweredNetwork& l = *lowered;
  NetworkAnalysis a;
  a.name = std::move(l.name);
  a.dims = std::move(l.dims);
  a.graph = std::move(l.graph);
  a.info = std::move(l.info);
  a.matrix_flops = l.matrix_flops;
  a.parameters = l.parameters;
  a.weight_bytes = l.weight_bytes;
  a.nodes = l.nodes;
  a.views = l.views;
  a.uncosted = std::move(l.uncosted);
  a.notes = std::move(l.notes);
  a.kernels = Fuse(a.graph, FusionMode::kEager);
  a.costs.reserve(a.kernels.size());
  for (const Kernel& k : a.kernels) {
    a.costs.push_back(model.Evaluate(a.graph, k));
    const KernelCost& c = a.costs.back();
    if (c.bound.kind == BoundKind::kCompute) a.compute_bound_s += c.time_s;
    if (c.bound.kind == BoundKind::kMemory) a.memory_bound_s += c.time_s;
  }
  a.totals = Sum(a.costs);
  return a;
}

}  // namespace roofline
