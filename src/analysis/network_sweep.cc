// Sweeps of a network over one symbolic dimension, with the exact values (bisected) at which
// the binding resource of the network, of its matrix kernels and of the other kernels changes.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "roofline/flip.h"
#include "roofline/network_analysis.h"
#include "roofline/units.h"

namespace roofline {
namespace {

constexpr const char* kSignals[] = {"network", "matrix kernels", "other kernels"};

std::string SignalOf(const NetSweepPoint& p, int signal) {
  return signal == 0 ? p.bound : (signal == 1 ? p.matrix_bound : p.other_bound);
}

std::string Plain(const std::string& bound) {
  if (bound.rfind("compute:", 0) == 0) return "compute-bound (" + bound.substr(8) + ")";
  if (bound.rfind("memory:", 0) == 0) return "memory-bound (" + bound.substr(7) + ")";
  return bound;
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
  p.bound = a->totals.bound;
  p.compute_bound_s = a->compute_bound_s;
  p.memory_bound_s = a->memory_bound_s;
  std::vector<KernelCost> matrix, other;
  for (size_t i = 0; i < a->costs.size(); ++i) {
    (a->info[i].matrix ? matrix : other).push_back(a->costs[i]);
  }
  if (!matrix.empty()) p.matrix_bound = Sum(matrix, model).bound;
  if (!other.empty()) p.other_bound = Sum(other, model).bound;
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
  for (int64_t v : values) {
    Result<NetSweepPoint> p =
        Evaluate(graph_at, bindings, model, variable, v, r.points.empty() ? &r.name : nullptr);
    if (!p.ok()) return p.status();
    r.points.push_back(*p);
    ++r.evaluations;
  }
  for (int s = 0; s < 3; ++s) {
    bool changed = false;
    for (size_t i = 0; i + 1 < r.points.size(); ++i) {
      const std::string a = SignalOf(r.points[i], s);
      const std::string b = SignalOf(r.points[i + 1], s);
      if (a.empty() || b.empty() || a == b) continue;
      changed = true;
      Status failure;
      auto verdict = [&](int64_t v) -> std::string {
        ++r.evaluations;
        Result<NetSweepPoint> p = Evaluate(graph_at, bindings, model, variable, v);
        if (!p.ok()) {
          failure = p.status();
          return a;
        }
        return SignalOf(*p, s);
      };
      const FlipPoint f = FindFlipUp(verdict, r.points[i].value, r.points[i + 1].value);
      if (!failure.ok()) return failure;
      Crossover x;
      x.what = kSignals[s];
      x.variable = variable;
      x.int_value = f.found ? f.value : r.points[i + 1].value;
      x.value = std::to_string(x.int_value);
      x.from = f.found ? f.from : a;
      x.to = f.found ? f.to : b;
      x.sentence = fmt::format("{}: {} until {} {}, {} from {} {} on", kSignals[s], Plain(x.from),
                               variable, x.int_value - 1, Plain(x.to), variable, x.int_value);
      r.crossovers.push_back(std::move(x));
    }
    if (!changed && !r.points.empty() && !SignalOf(r.points.front(), s).empty()) {
      NeverFlips n;
      n.what = kSignals[s];
      n.variable = variable;
      n.bound = SignalOf(r.points.front(), s);
      n.sentence = fmt::format("{}: {} at every {} from {} to {}", kSignals[s], Plain(n.bound),
                               variable, r.points.front().value, r.points.back().value);
      r.never.push_back(std::move(n));
    }
  }
  return r;
}

}  // namespace roofline
