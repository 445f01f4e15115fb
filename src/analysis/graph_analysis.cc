// A graph's kernels fused, classified and costed, with the sums every report needs.
#include "roofline/graph_analysis.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace roofline {
namespace {

/// Whether one-op kernels a and b cost the same per instance: the cost engine reads only the
/// op's spec and its operands' sizes, dtypes, roles and bindings (a transformer's q, k, v and o
/// projections of one shape, its two norms, its two residual adds).
bool SameWork(const Graph& g, const Kernel& a, const Kernel& b) {
  if (a.ops.size() != 1 || b.ops.size() != 1) return false;
  const Op& x = g.ops()[static_cast<size_t>(a.ops[0])];
  const Op& y = g.ops()[static_cast<size_t>(b.ops[0])];
  if (x.operands.size() != y.operands.size() || x.num_inputs != y.num_inputs ||
      x.input_twice != y.input_twice) {
    return false;
  }
  // Operand sizes first: they tell most kernels apart without comparing the specs.
  const std::vector<Tensor>& t = g.tensors();
  for (size_t j = 0; j < x.operands.size(); ++j) {
    const Tensor& tx = t[static_cast<size_t>(x.operands[j])];
    const Tensor& ty = t[static_cast<size_t>(y.operands[j])];
    if (tx.elements != ty.elements || tx.bytes_per_element != ty.bytes_per_element ||
        tx.dtype != ty.dtype || tx.role != ty.role || x.roles[j] != y.roles[j]) {
      return false;
    }
    for (size_t i = 0; x.input_twice && i < j; ++i) {
      if ((x.operands[i] == x.operands[j]) != (y.operands[i] == y.operands[j])) return false;
    }
  }
  return x.spec == y.spec;
}

}  // namespace

GraphCosts AnalyzeGraph(const Graph& graph, const CostModel& model, FusionMode fusion,
                        bool with_trace, int64_t step_requests, int64_t step_layers,
                        std::optional<Phase> step_phase) {
  GraphCosts g;
  g.step_requests = step_requests;
  g.step_layers = step_layers;
  g.step_phase = step_phase;
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
  const bool named = g.named_kernels == g.kernels.data() && g.named_count == n;
  // Sums start from zeros made once (a temporary built here would stall as it is copied).
  static const std::array<ResourceTimes, kNumClasses> kNoClassTimes{};
  static const Totals kNoTotals{};
  ResourceTimes all;  // the step's time per resource, for its verdict
  // A kernel that does the same work as an earlier one of its class is costed once: its figures
  // are copied (bit for bit what costing it again gives). The first costing of `g` looks for
  // each kernel's twin among the earlier ones; later costings (a sweep's next points) try only
  // that twin, and cost the kernel when it no longer matches.
  if (!with_trace && g.twins.size() != n) {
    g.twins_fixed.clear();
    g.twins.assign(n, -1);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < i && g.twins[i] < 0; ++j) {
        if (g.classes[j] == g.classes[i] && SameWork(graph, g.kernels[i], g.kernels[j])) {
          g.twins[i] = static_cast<int>(j);
        }
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (with_trace) {
      Trace trace;
      g.costs[i] = model.Evaluate(graph, g.kernels[i], &trace);
      g.traces.push_back(std::move(trace.lines));
    } else {
      int& twin = g.twins[i];
      const bool fixed = i < g.twins_fixed.size() && g.twins_fixed[i] != 0;
      if (twin >= 0 && !fixed &&
          (static_cast<size_t>(twin) >= i || g.classes[twin] != g.classes[i] ||
           !SameWork(graph, g.kernels[i], g.kernels[static_cast<size_t>(twin)]))) {
        twin = -1;
      }
      if (twin >= 0) {
        KernelCost& c = g.costs[i];
        c.AssignFigures(g.costs[static_cast<size_t>(twin)]);
        if (!named) c.SetName(g.kernels[i].name);
        c.repeat = g.kernels[i].repeat;
      } else {
        model.EvaluateInto(graph, g.kernels[i], g.classes[i], g.costs[i], named);
      }
    }
  }
  g.named_kernels = g.kernels.data();
  g.named_count = n;
  // The sums, kept in locals (which nothing else can alias) and stored once; each is added in
  // kernel order.
  Totals totals = kNoTotals;
  double compute_bound = 0, memory_bound = 0, comm_bound = 0, overhead = 0;
  std::array<ResourceTimes, kNumClasses> class_times = kNoClassTimes;
  std::array<bool, kNumClasses> class_present{};
  std::array<double, kNumClasses> class_flops{}, class_bytes{}, class_time_s{};
  for (size_t i = 0; i < n; ++i) {
    const KernelCost& c = g.costs[i];
    const double r = static_cast<double>(c.repeat);
    const double t = c.time_s * r, f = c.flops * r;
    totals.flops += f;
    totals.time_s += t;
    for (int l = 0; l < c.num_levels; ++l) totals.bytes[l] += c.bytes[l] * r;
    totals.comm_bytes += c.comm_bytes * r;
    const auto cls = static_cast<size_t>(g.classes[i]);
    ResourceTimes::AddToBoth(all, class_times[cls], c, r);
    switch (c.bound.kind) {
      case BoundKind::kCompute:
        compute_bound += t;
        break;
      case BoundKind::kMemory:
        memory_bound += t;
        break;
      case BoundKind::kComm:
        comm_bound += t;
        break;
      case BoundKind::kOverhead:
        break;
    }
    if (c.has_expected) {
      const ExpectedCost& e = c.expected;
      totals.has_expected = true;
      totals.expected_gpu_s += e.time_s * r;
      totals.expected_roofline_s += e.roofline_s * r;
      totals.expected_host_s += e.host_s * r;
      totals.expected_by_bound[static_cast<size_t>(e.bound.kind)] += e.time_s * r;
    }
    class_present[cls] = true;
    class_flops[cls] += f;
    class_bytes[cls] += c.bytes[0] * r;
    class_time_s[cls] += (c.time_s - c.overhead_s) * r;
    overhead += c.overhead_s * r;
  }
  totals.compute_time_s = all.compute_s;
  totals.memory_time_s = all.memory_s;
  totals.comm_time_s = all.comm_s;
  totals.verdict = all.Classify();
  if (totals.has_expected) {
    StepTime step;
    step.gpu_s = totals.expected_gpu_s;
    step.host_s = totals.expected_host_s;
    step.requests = g.step_requests;
    step.layers = g.step_layers;
    step.phase = g.step_phase;
    step = ApplyStepTerms(step, model.options().step_terms);
    totals.expected_s = step.time_s;
    totals.host_bound = step.host_bound;
    totals.engine_host_s = step.engine_host_s;
    totals.engine_exposed_s = step.engine_exposed_s;
    totals.engine_bound = step.engine_bound;
  } else {
    totals.expected_s = std::max(totals.expected_gpu_s, totals.expected_host_s);
  }
  g.totals = totals;
  g.compute_bound_s = compute_bound;
  g.memory_bound_s = memory_bound;
  g.comm_bound_s = comm_bound;
  g.overhead_s = overhead;
  g.class_times = class_times;
  g.class_present = class_present;
  g.class_flops = class_flops;
  g.class_bytes = class_bytes;
  g.class_time_s = class_time_s;
}

}  // namespace roofline
