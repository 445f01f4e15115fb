// Sweeps of a network over one symbolic dimension, with the exact values (bisected) at which
// the binding resource of the network, of its matrix kernels and of the other kernels changes.
#include <fmt/format.h>

#include "roofline/flip.h"
#include "roofline/network_analysis.h"

namespace roofline {
namespace {

constexpr SignalKind kSignals[] = {SignalKind::kNetwork, SignalKind::kMatrixKernels,
                                   SignalKind::kOtherKernels};

std::optional<Verdict> SignalOf(const NetSweepPoint& p, SignalKind signal) {
  switch (signal) {
    case SignalKind::kMatrixKernels:
      return p.matrix_bound;
    case SignalKind::kOtherKernels:
      return p.other_bound;
    default:
      return p.bound;
  }
}

Result<NetSweepPoint> Evaluate(const NetworkAtValue& graph_at, DimBindings bindings,
                               const CostModel& model, const std::string& variable, int64_t value,
                               std::string* name = nullptr) {
  bindings[variable] = value;
  Result<NetworkGraph> g = graph_at(value);
  if (!g.ok()) return g.status();
  if (name != nullptr) *name = g->name.empty() ? g->origin : g->name;
  Result<NetworkAnalysis> a = AnalyzeNetwork(*g, bindings, model);
  if (!a.ok()) return a.status();
  NetSweepPoint p;
  p.value = value;
  p.time_s = a->totals.time_s;
  p.flops = a->totals.flops;
  p.matrix_flops = a->matrix_flops;
  p.bytes = a->totals.bytes[0];
  p.bound = a->totals.verdict;
  p.compute_bound_s = a->compute_bound_s;
  p.memory_bound_s = a->memory_bound_s;
  ResourceTimes matrix, other;
  bool any_matrix = false, any_other = false;
  for (size_t i = 0; i < a->costs.size(); ++i) {
    const KernelCost& c = a->costs[i];
    // By node type (matmul, linear, conv, attention), not by ClassOf: a graph file's own node
    // names may start with "attn_", which ClassOf reads as part of an attention.
    const bool is_matrix = a->info[i].matrix;
    (is_matrix ? matrix : other).Add(c, static_cast<double>(c.repeat));
    (is_matrix ? any_matrix : any_other) = true;
  }
  if (any_matrix) p.matrix_bound = matrix.Classify();
  if (any_other) p.other_bound = other.Classify();
  return p;
}

}  // namespace

Result<std::pair<std::string, std::vector<int64_t>>> ParseDimAxis(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::Invalid("--vary " + spec,
                           "expected DIM=FROM:TO[:xF|+S] or DIM=A,B,C (e.g. batch=1:64)");
  }
  Result<SweepAxis> axis = ParseSweepAxis("batch=" + spec.substr(eq + 1));
  if (!axis.ok()) return Status::Invalid("--vary " + spec, axis.status().what());
  return std::pair<std::string, std::vector<int64_t>>{spec.substr(0, eq), axis->values};
}

Result<NetSweepResult> SweepNetwork(const NetworkGraph& g, const DimBindings& bindings,
                                    const CostModel& model, const std::string& variable,
                                    const std::vector<int64_t>& values) {
  bool known = false;
  std::string list;
  for (const auto& d : g.dims) {
    known = known || d.first == variable;
    list += (list.empty() ? "" : ", ") + d.first;
  }
  if (!known) {
    return Status::Invalid("--vary " + variable,
                           fmt::format("{} has no dimension '{}' (its dimensions: {})", g.origin,
                                       variable, list.empty() ? "none" : list));
  }
  return SweepNetwork([&g](int64_t) -> Result<NetworkGraph> { return g; }, bindings, model,
                      variable, values);
}

Result<NetSweepResult> SweepNetwork(const NetworkAtValue& graph_at, const DimBindings& bindings,
                                    const CostModel& model, const std::string& variable,
                                    const std::vector<int64_t>& values) {
  NetSweepResult r;
  r.variable = variable;
  r.names = ResourceNames::Of(model.device());
  for (int64_t v : values) {
    Result<NetSweepPoint> p =
        Evaluate(graph_at, bindings, model, variable, v, r.points.empty() ? &r.name : nullptr);
    if (!p.ok()) return p.status();
    r.points.push_back(*p);
    ++r.evaluations;
  }
  for (SignalKind s : kSignals) {
    std::vector<std::optional<Verdict>> line;
    line.reserve(r.points.size());
    for (const NetSweepPoint& p : r.points) line.push_back(SignalOf(p, s));
    // A kernel group absent on either side is no change.
    auto changes = [](const std::optional<Verdict>& a, const std::optional<Verdict>& b) {
      return a.has_value() && b.has_value() && *a != *b;
    };
    auto evaluate = [&](int64_t v) -> Result<std::optional<Verdict>> {
      ++r.evaluations;
      Result<NetSweepPoint> p = Evaluate(graph_at, bindings, model, variable, v);
      if (!p.ok()) return p.status();
      return SignalOf(*p, s);
    };
    Result<std::vector<GridChange<std::optional<Verdict>>>> found =
        FindGridChanges<std::optional<Verdict>>(
            line.size(), [&line](size_t k) -> const std::optional<Verdict>& { return line[k]; },
            changes, &values, true, evaluate);
    if (!found.ok()) return found.status();
    for (const auto& c : *found) {
      Crossover x;
      x.signal.kind = s;
      x.variable = variable;
      x.int_value = c.value;
      x.grid = c.k + 1;
      x.exact = c.exact;
      x.from.verdict = c.from.value_or(Verdict{});
      x.to.verdict = c.to.value_or(Verdict{});
      r.crossovers.push_back(std::move(x));
    }
    if (found->empty() && !line.empty() && line.front().has_value()) {
      NeverFlips n;
      n.signal.kind = s;
      n.variable = variable;
      n.value.verdict = *line.front();
      r.never.push_back(std::move(n));
    }
  }
  return r;
}

}  // namespace roofline
