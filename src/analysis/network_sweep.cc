// Sweeps of a network over one symbolic dimension (a follower such as width taking the same
// value), with the exact values (bisected, on the dimension's step) at which the binding resource
// of the network, of its matrix kernels and of the other kernels changes, where fused attention
// overtakes the other matrix kernels, and where weights and activations stop fitting.
#include <fmt/format.h>

#include <numeric>

#include "roofline/flip.h"
#include "roofline/network_analysis.h"

namespace roofline {
namespace {

constexpr SignalKind kSignals[] = {SignalKind::kNetwork, SignalKind::kMatrixKernels,
                                   SignalKind::kOtherKernels, SignalKind::kAttentionShare,
                                   SignalKind::kCapacity};

/// A signal at one point: a verdict, or a yes/no in SignalValue::yes (none: not defined there,
/// e.g. no attention kernels, or no capacity listed).
std::optional<SignalValue> SignalOf(const NetSweepPoint& p, SignalKind signal) {
  auto verdict = [](const std::optional<Verdict>& v) -> std::optional<SignalValue> {
    if (!v) return std::nullopt;
    SignalValue s;
    s.verdict = *v;
    return s;
  };
  SignalValue s;
  switch (signal) {
    case SignalKind::kMatrixKernels:
      return verdict(p.matrix_bound);
    case SignalKind::kOtherKernels:
      return verdict(p.other_bound);
    case SignalKind::kAttentionShare:
      if (p.attention_s <= 0 || p.conv_matmul_s <= 0) return std::nullopt;
      s.yes = p.attention_s > p.conv_matmul_s;
      return s;
    case SignalKind::kCapacity:
      if (p.capacity_bytes <= 0) return std::nullopt;
      s.yes = p.fits();
      return s;
    default:
      return verdict(p.bound);
  }
}

Result<NetSweepPoint> Evaluate(const NetworkAtValue& graph_at, DimBindings bindings,
                               const CostModel& model, const NetSweepAxis& axis, int64_t value,
                               std::string* name = nullptr) {
  bindings[axis.variable] = value;
  for (const std::string& f : axis.follow) bindings[f] = value;
  Result<NetworkGraph> g = graph_at(value);
  if (!g.ok()) return g.status();
  // The pass's batch: bound, else the graph's default; doubled under guidance.
  int64_t batch = 0;
  if (const auto it = bindings.find("batch"); it != bindings.end()) {
    batch = it->second;
  } else {
    for (const auto& [name, def] : g->dims) {
      if (name == "batch" && def.has_value()) batch = *def;
    }
  }
  if (axis.double_batch && batch > 0) {
    batch *= 2;
    bindings["batch"] = batch;
  }
  if (name != nullptr) *name = g->name.empty() ? g->origin : g->name;
  Result<NetworkAnalysis> a = AnalyzeNetwork(*g, bindings, model);
  if (!a.ok()) return a.status();
  NetSweepPoint p;
  p.value = value;
  p.pass_batch = batch;
  p.time_s = a->totals.time_s;
  p.has_expected = a->totals.has_expected;
  p.expected_time_s = a->totals.expected_s;
  p.flops = a->totals.flops;
  p.matrix_flops = a->matrix_flops;
  p.bytes = a->totals.bytes[0];
  p.bound = a->totals.verdict;
  p.compute_bound_s = a->compute_bound_s;
  p.memory_bound_s = a->memory_bound_s;
  p.weight_bytes = a->weight_bytes;
  p.activation_bytes = a->activation_bytes;
  p.capacity_bytes = model.device().device_memory().total_usable_bytes();
  ResourceTimes matrix, other;
  bool any_matrix = false, any_other = false;
  for (size_t i = 0; i < a->costs.size(); ++i) {
    const KernelCost& c = a->costs[i];
    // By node type (matmul, linear, conv, attention), not by ClassOf: a graph file's own node
    // names may start with "attn_", which ClassOf reads as part of an attention.
    const bool is_matrix = a->info[i].matrix;
    (is_matrix ? matrix : other).Add(c, static_cast<double>(c.repeat));
    (is_matrix ? any_matrix : any_other) = true;
    if (is_matrix) {
      const double t = c.time_s * static_cast<double>(c.repeat);
      (a->info[i].op == "attention" ? p.attention_s : p.conv_matmul_s) += t;
    }
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

Result<NetSweepAxis> MakeNetSweepAxis(const NetworkGraph& g, const std::string& variable,
                                      std::vector<int64_t> values, const DimBindings& given) {
  auto has = [&g](const std::string& name) {
    for (const auto& d : g.dims) {
      if (d.first == name) return true;
    }
    return false;
  };
  if (!has(variable)) {
    std::string list;
    for (const auto& d : g.dims) list += (list.empty() ? "" : ", ") + d.first;
    return Status::Invalid("--vary " + variable,
                           fmt::format("{} has no dimension '{}' (its dimensions: {})", g.origin,
                                       variable, list.empty() ? "none" : list));
  }
  NetSweepAxis axis;
  axis.variable = variable;
  const std::string partner = variable == "height"  ? "width"
                              : variable == "width" ? "height"
                                                    : std::string();
  if (!partner.empty() && has(partner) && given.count(partner) == 0) {
    axis.follow.push_back(partner);
  }
  std::string steps;
  for (const std::string& d : std::vector<std::string>{variable, partner}) {
    const auto m = g.dim_multiples.find(d);
    if (d.empty() || m == g.dim_multiples.end()) continue;
    if (d != variable && axis.follow.empty()) continue;
    axis.multiple = std::lcm(axis.multiple, m->second);
    steps += fmt::format("{}dims.{}.multiple {}", steps.empty() ? "" : ", ", d, m->second);
  }
  for (int64_t v : values) {
    if (v % axis.multiple != 0) {
      return Status::Invalid(
          "--vary " + variable,
          fmt::format("{} is not a multiple of {} ({}: {}: the graph's sizes are exact there "
                      "only)",
                      v, axis.multiple, g.origin, steps));
    }
  }
  axis.values = std::move(values);
  return axis;
}

Result<NetSweepResult> SweepNetwork(const NetworkGraph& g, const DimBindings& bindings,
                                    const CostModel& model, const NetSweepAxis& axis) {
  return SweepNetwork([&g](int64_t) -> Result<NetworkGraph> { return g; }, bindings, model, axis);
}

Result<NetSweepResult> SweepNetwork(const NetworkAtValue& graph_at, const DimBindings& bindings,
                                    const CostModel& model, const NetSweepAxis& axis) {
  NetSweepResult r;
  r.variable = axis.variable;
  r.follow = axis.follow;
  r.multiple = axis.multiple;
  r.names = ResourceNames::Of(model.device());
  for (int64_t v : axis.values) {
    Result<NetSweepPoint> p =
        Evaluate(graph_at, bindings, model, axis, v, r.points.empty() ? &r.name : nullptr);
    if (!p.ok()) return p.status();
    r.points.push_back(*p);
    ++r.evaluations;
  }
  // Bisection runs over the steps k of value k * multiple.
  const int64_t m = axis.multiple;
  std::vector<int64_t> steps;
  steps.reserve(axis.values.size());
  for (int64_t v : axis.values) steps.push_back(v / m);
  for (SignalKind s : kSignals) {
    std::vector<std::optional<SignalValue>> line;
    line.reserve(r.points.size());
    for (const NetSweepPoint& p : r.points) line.push_back(SignalOf(p, s));
    // A signal undefined on either side (no such kernels, no capacity) is no change.
    auto changes = [](const std::optional<SignalValue>& a, const std::optional<SignalValue>& b) {
      return a.has_value() && b.has_value() && *a != *b;
    };
    auto evaluate = [&](int64_t k) -> Result<std::optional<SignalValue>> {
      ++r.evaluations;
      Result<NetSweepPoint> p = Evaluate(graph_at, bindings, model, axis, k * m);
      if (!p.ok()) return p.status();
      return SignalOf(*p, s);
    };
    Result<std::vector<GridChange<std::optional<SignalValue>>>> found =
        FindGridChanges<std::optional<SignalValue>>(
            line.size(), [&line](size_t k) -> const std::optional<SignalValue>& { return line[k]; },
            changes, &steps, true, evaluate);
    if (!found.ok()) return found.status();
    for (const auto& c : *found) {
      Crossover x;
      x.signal.kind = s;
      x.variable = axis.variable;
      x.int_value = c.value * m;
      x.grid = c.k + 1;
      x.exact = c.exact;
      x.from = c.from.value_or(SignalValue{});
      x.to = c.to.value_or(SignalValue{});
      r.crossovers.push_back(std::move(x));
    }
    if (found->empty() && !line.empty() && line.front().has_value()) {
      NeverFlips n;
      n.signal.kind = s;
      n.variable = axis.variable;
      n.value = *line.front();
      r.never.push_back(std::move(n));
    }
  }
  return r;
}

}  // namespace roofline
