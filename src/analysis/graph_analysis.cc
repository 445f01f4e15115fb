// A graph's kernels fused, classified and costed, with the sums every report needs.
#include "roofline/graph_analysis.h"

#include <algorithm>
#include <utility>

namespace roofline {

GraphCosts AnalyzeGraph(const Graph& graph, const CostModel& model, FusionMode fusion,
                        bool with_trace) {
  GraphCosts g;
  g.kernels = Fuse(graph, fusion);
  g.classes.reserve(g.kernels.size());
  for (const Kernel& k : g.kernels) g.classes.push_back(ClassOf(graph, k));
  CostKernels(graph, model, g, with_trace);
  return g;
}

void CostKernels(const Graph& graph, const CostModel& model, GraphCosts& g, bool with_trace) {
  const size_t n = g.kernels.size();
  if (g.classes.size() != n) {  // kernels set without their classes: classify them
    g.classes.clear();
    for (const Kernel& k : g.kernels) g.classes.push_back(ClassOf(graph, k));
  }
  g.costs.resize(n);
  g.traces.clear();
  g.compute_bound_s = g.memory_bound_s = g.comm_bound_s = 0;
  g.class_times = {};
  g.class_present = {};
  g.class_flops = {};
  g.class_bytes = {};
  g.class_time_s = {};
  g.overhead_s = 0;
  g.totals = Totals{};
  ResourceTimes all;  // the step's time per resource, for its verdict
  for (size_t i = 0; i < n; ++i) {
    if (with_trace) {
      Trace trace;
      g.costs[i] = model.Evaluate(graph, g.kernels[i], &trace);
      g.traces.push_back(std::move(trace.lines));
    } else {
      model.EvaluateInto(graph, g.kernels[i], g.classes[i], g.costs[i]);
    }
    const KernelCost& c = g.costs[i];
    const double r = static_cast<double>(c.repeat);
    const double t = c.time_s * r;
    g.totals.flops += c.flops * r;
    g.totals.time_s += t;
    for (int l = 0; l < c.num_levels; ++l) g.totals.bytes[l] += c.bytes[l] * r;
    g.totals.comm_bytes += c.comm_bytes * r;
    all.Add(c, r);
    switch (c.bound.kind) {
      case BoundKind::kCompute:
        g.compute_bound_s += t;
        break;
      case BoundKind::kMemory:
        g.memory_bound_s += t;
        break;
      case BoundKind::kComm:
        g.comm_bound_s += t;
        break;
      case BoundKind::kOverhead:
        break;
    }
    if (c.has_expected) {
      const ExpectedCost& e = c.expected;
      g.totals.has_expected = true;
      g.totals.expected_gpu_s += e.time_s * r;
      g.totals.expected_roofline_s += e.roofline_s * r;
      g.totals.expected_host_s += e.host_s * r;
      g.totals.expected_by_bound[static_cast<size_t>(e.bound.kind)] += e.time_s * r;
    }
    const auto cls = static_cast<size_t>(g.classes[i]);
    g.class_present[cls] = true;
    g.class_times[cls].Add(c, r);
    g.class_flops[cls] += c.flops * r;
    g.class_bytes[cls] += c.bytes[0] * r;
    g.class_time_s[cls] += (c.time_s - c.overhead_s) * r;
    g.overhead_s += c.overhead_s * r;
  }
  g.totals.compute_time_s = all.compute_s;
  g.totals.memory_time_s = all.memory_s;
  g.totals.comm_time_s = all.comm_s;
  g.totals.verdict = all.Classify();
  g.totals.expected_s = std::max(g.totals.expected_gpu_s, g.totals.expected_host_s);
}

}  // namespace roofline
