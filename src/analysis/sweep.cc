// Sweeps over workload variables and the exact crossovers along each axis.
#include "roofline/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#ifdef __linux__
#include <sched.h>
#endif

#include "roofline/flip.h"
#include "roofline/suggest.h"
#include "src/analysis/graph_cache.h"

namespace roofline {
namespace {

struct VariableInfo {
  SweepVariable var;
  const char* name;
  int64_t max;  ///< largest accepted value (integers)
};

constexpr VariableInfo kVariables[] = {
    {SweepVariable::kBatch, "batch", int64_t{1} << 24},
    {SweepVariable::kPrompt, "prompt", int64_t{1} << 30},
    {SweepVariable::kContext, "context", int64_t{1} << 30},
    {SweepVariable::kTp, "tp", 4096},
    {SweepVariable::kDtype, "dtype", 0},
    {SweepVariable::kWeightDtype, "weight-dtype", 0},
    {SweepVariable::kKvDtype, "kv-dtype", 0},
};

/// The cores this process may run on: its affinity mask (`taskset -c 0` gives one), else every
/// core the machine has. Two threads on one core only take turns.
size_t UsableCores() {
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return static_cast<size_t>(std::max(1, CPU_COUNT(&set)));
  }
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

const VariableInfo& Info(SweepVariable v) {
  for (const auto& i : kVariables) {
    if (i.var == v) return i;
  }
  return kVariables[0];
}

/// How far out "as the variable grows" looks for a limit.
int64_t FarValue(SweepVariable v) {
  switch (v) {
    case SweepVariable::kBatch:
      return int64_t{1} << 20;
    case SweepVariable::kPrompt:
      return int64_t{1} << 22;
    case SweepVariable::kContext:
      return int64_t{1} << 26;
    default:
      return 0;
  }
}

/// An integer, with an optional k (x 1024) or M (x 1024^2) suffix: token counts are quoted
/// that way ("128k context" is 131,072 keys).
Result<int64_t> ParseInt(const std::string& text, const std::string& spec) {
  int64_t scale = 1;
  std::string digits = text;
  if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) {
    scale = int64_t{1} << 10;
    digits.pop_back();
  } else if (!digits.empty() && digits.back() == 'M') {
    scale = int64_t{1} << 20;
    digits.pop_back();
  }
  try {
    size_t used = 0;
    const long long v = std::stoll(digits, &used);
    if (used != digits.size() || digits.empty()) throw std::invalid_argument(text);
    if (v > (int64_t{1} << 40) || v < -(int64_t{1} << 40)) throw std::out_of_range(text);
    return static_cast<int64_t>(v) * scale;
  } catch (const std::exception&) {
    return Status::Invalid("--vary " + spec,
                           "'" + text + "' is not an integer (k and M suffixes: x1024, x1024^2)");
  }
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) break;
    start = p + 1;
  }
  return out;
}

/// Sets an integer variable (batch, prompt, context, tp); others are left alone.
void ApplyInt(Workload& w, SweepVariable v, int64_t value) {
  switch (v) {
    case SweepVariable::kBatch:
      w.batch = value;
      break;
    case SweepVariable::kPrompt:
      w.prompt = value;
      break;
    case SweepVariable::kContext:
      w.context = value;
      break;
    case SweepVariable::kTp:
      w.tp = value;
      break;
    default:
      break;
  }
}

void Apply(Workload& w, const SweepAxis& axis, size_t i) {
  switch (axis.variable) {
    case SweepVariable::kDtype:
      w.dtype = axis.dtypes[i];
      break;
    case SweepVariable::kWeightDtype:
      w.weight_dtype = axis.dtypes[i];
      break;
    case SweepVariable::kKvDtype:
      w.kv_dtype = axis.dtypes[i];
      break;
    default:
      ApplyInt(w, axis.variable, axis.values[i]);
      break;
  }
}

int64_t IntOf(const Workload& w, SweepVariable v) {
  switch (v) {
    case SweepVariable::kBatch:
      return w.batch;
    case SweepVariable::kPrompt:
      return w.prompt;
    case SweepVariable::kContext:
      return w.context;
    case SweepVariable::kTp:
      return w.tp;
    default:
      return 0;
  }
}

/// The signals a point carries, in the order they are reported.
std::vector<SignalId> SignalsOf(const SweepPoint& p, bool comm, bool chips) {
  std::vector<SignalId> s;
  for (const PhasePoint& ph : p.phases) {
    s.push_back({SignalKind::kStep, ph.phase});
    for (int c = 0; c < kNumClasses; ++c) {
      if (!ph.class_bound[c].has_value() || c == static_cast<int>(KernelClass::kComm)) continue;
      s.push_back({SignalKind::kClass, ph.phase, static_cast<KernelClass>(c)});
    }
    if (comm) s.push_back({SignalKind::kCommWall, ph.phase});
    s.push_back({SignalKind::kLargestShare, ph.phase});
  }
  s.push_back({SignalKind::kCapacity});
  if (chips) s.push_back({SignalKind::kChips});
  return s;
}

/// A signal's value at a point (none: the point does not carry it).
std::optional<SignalValue> ValueOf(const SweepPoint& p, const SignalId& id) {
  if (id.kind == SignalKind::kCapacity) return SignalValue{{}, p.fits};
  // Chips that hold the model; -1 where no count does (the capacity signal says so).
  if (id.kind == SignalKind::kChips) return SignalValue{{}, false, p.fits ? p.chips : -1};
  for (const PhasePoint& ph : p.phases) {
    if (ph.phase != id.phase) continue;
    switch (id.kind) {
      case SignalKind::kStep:
        return SignalValue{ph.bound, false};
      case SignalKind::kClass:
        if (!ph.class_bound[static_cast<int>(id.cls)].has_value()) return std::nullopt;
        return SignalValue{*ph.class_bound[static_cast<int>(id.cls)], false};
      case SignalKind::kCommWall:
        return SignalValue{{}, ph.comm_s > ph.compute_s};
      case SignalKind::kLargestShare:
        return SignalValue{{}, false, ph.LargestShare()};
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

int PhasePoint::LargestShare() const {
  int best = -1;
  for (int c = 0; c < kNumClasses; ++c) {
    if (!class_bound[static_cast<size_t>(c)].has_value()) continue;
    if (best < 0 ||
        class_time_s[static_cast<size_t>(c)] > class_time_s[static_cast<size_t>(best)]) {
      best = c;
    }
  }
  if (best < 0 || overhead_s > class_time_s[static_cast<size_t>(best)]) return kOverheadShare;
  return best;
}

std::string_view NameOf(SweepVariable v) { return Info(v).name; }

bool IsInteger(SweepVariable v) {
  return v == SweepVariable::kBatch || v == SweepVariable::kPrompt ||
         v == SweepVariable::kContext || v == SweepVariable::kTp;
}

std::string SweepAxis::Label(size_t i) const {
  if (IsInteger(variable)) return fmt::format("{}={}", NameOf(variable), values[i]);
  return fmt::format("{}={}", NameOf(variable), NameOf(dtypes[i]));
}

Result<SweepAxis> ParseSweepAxis(const std::string& spec) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos) {
    return Status::Invalid("--vary " + spec,
                           "expected NAME=FROM:TO[:xF|+S] or NAME=A,B,C (e.g. batch=1:512)");
  }
  const std::string name = spec.substr(0, eq);
  const std::string rest = spec.substr(eq + 1);
  SweepAxis axis;
  bool known = false;
  std::vector<std::string> names;
  for (const auto& i : kVariables) {
    names.emplace_back(i.name);
    if (name == i.name) {
      axis.variable = i.var;
      known = true;
    }
  }
  if (!known) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    return Status::Invalid(
        "--vary " + spec,
        "unknown variable '" + name + "'" + DidYouMean(name, names) + " (expected " + list + ")");
  }
  if (!IsInteger(axis.variable)) {
    for (const std::string& item : Split(rest, ',')) {
      Result<DType> d = ParseDType(item, "--vary " + spec);
      if (!d.ok()) return d.status();
      if (std::find(axis.dtypes.begin(), axis.dtypes.end(), *d) != axis.dtypes.end()) {
        return Status::Invalid("--vary " + spec, "lists " + item + " twice");
      }
      axis.dtypes.push_back(*d);
    }
    return axis;
  }
  const int64_t max = Info(axis.variable).max;
  auto check = [&](int64_t v) -> Status {
    if (v < 1 || v > max) {
      return Status::Invalid("--vary " + spec,
                             fmt::format("{} must be between 1 and {}, got {}", name, max, v));
    }
    return Status::Ok();
  };
  if (rest.find(',') != std::string::npos) {
    for (const std::string& item : Split(rest, ',')) {
      Result<int64_t> v = ParseInt(item, spec);
      if (!v.ok()) return v.status();
      Status s = check(*v);
      if (!s.ok()) return s;
      if (!axis.values.empty() && *v <= axis.values.back()) {
        return Status::Invalid("--vary " + spec, "list values must increase");
      }
      axis.values.push_back(*v);
    }
    return axis;
  }
  const std::vector<std::string> parts = Split(rest, ':');
  if (parts.size() < 2 || parts.size() > 3) {
    return Status::Invalid("--vary " + spec, "expected FROM:TO, FROM:TO:xF or FROM:TO:+S");
  }
  Result<int64_t> from = ParseInt(parts[0], spec);
  if (!from.ok()) return from.status();
  Result<int64_t> to = ParseInt(parts[1], spec);
  if (!to.ok()) return to.status();
  Status s = check(*from);
  if (s.ok()) s = check(*to);
  if (!s.ok()) return s;
  if (*to < *from) {
    return Status::Invalid("--vary " + spec,
                           fmt::format("the range runs backwards ({} > {}): write FROM:TO with "
                                       "FROM <= TO",
                                       *from, *to));
  }
  double factor = 2;
  int64_t step = 0;
  if (parts.size() == 3) {
    const std::string& st = parts[2];
    if (st.size() >= 2 && st[0] == 'x') {
      try {
        size_t used = 0;
        factor = std::stod(st.substr(1), &used);
        if (used != st.size() - 1) throw std::invalid_argument(st);
      } catch (const std::exception&) {
        factor = 0;
      }
      if (!(factor > 1) || factor > 1e6) {
        return Status::Invalid("--vary " + spec, "the factor after 'x' must be a number > 1");
      }
    } else if (st.size() >= 2 && st[0] == '+') {
      Result<int64_t> v = ParseInt(st.substr(1), spec);
      if (!v.ok()) return v.status();
      if (*v < 1) return Status::Invalid("--vary " + spec, "the step after '+' must be >= 1");
      step = *v;
    } else {
      return Status::Invalid("--vary " + spec, "the step must be xF (multiply) or +S (add)");
    }
  }
  int64_t v = *from;
  while (v <= *to) {
    axis.values.push_back(v);
    if (axis.values.size() > 1000000) {
      return Status::Invalid("--vary " + spec, "more than 1,000,000 points");
    }
    const int64_t next =
        step > 0 ? v + step
                 : std::max<int64_t>(
                       v + 1, static_cast<int64_t>(std::ceil(static_cast<double>(v) * factor)));
    if (next <= v) break;
    v = next;
  }
  if (axis.values.back() != *to) axis.values.push_back(*to);
  return axis;
}

void GraphCache::PlanLine(SweepVariable variable, int64_t lo, int64_t hi,
                          std::vector<int64_t> checks) {
  line_ = IsInteger(variable) && variable != SweepVariable::kTp && lo < hi;
  line_variable_ = variable;
  line_lo_ = lo;
  line_hi_ = hi;
  line_checks_ = std::move(checks);
  for (Entry& e : entries_) {
    e.line_tried = false;
    e.affine.reset();
  }
}

void GraphCache::FixTwins(Entry& e) {
  e.twins_pending = false;
  GraphCosts& a = e.analysis;
  a.twins_fixed.assign(a.twins.size(), 0);
  if (!e.affine.has_value()) return;
  for (size_t i = 0; i < a.twins.size(); ++i) {
    const int j = a.twins[i];
    if (j < 0) continue;
    const Kernel& x = a.kernels[i];
    const Kernel& y = a.kernels[static_cast<size_t>(j)];
    // Twins are one-op kernels (SameWork); their ops changing alike keeps them equal.
    a.twins_fixed[i] = x.ops.size() == 1 && y.ops.size() == 1 &&
                       e.affine->SameForms(e.graph.graph, x.ops[0], y.ops[0]);
  }
}

void GraphCache::FuseEntry(Entry& e, FusionMode fusion) {
  e.fusion = fusion;
  e.weight_uses.reset();
  e.analysis = GraphCosts{};
  e.analysis.kernels = Fuse(e.graph.graph, fusion);
  for (const Kernel& k : e.analysis.kernels) {
    e.analysis.classes.push_back(ClassOf(e.graph.graph, k));
  }
  e.built = true;
}

bool GraphCache::FitLine(const TransformerConfig& c, const Workload& w, Phase phase, Entry& e) {
  e.line_tried = true;
  e.line_base = w;
  e.affine.reset();
  auto build_at = [&](int64_t v) {
    Workload wv = w;
    ApplyInt(wv, line_variable_, v);
    ++builds_;
    return BuildLlmGraph(c, wv, phase);
  };
  Result<LlmGraph> lo = build_at(line_lo_);
  Result<LlmGraph> hi = build_at(line_hi_);
  if (!lo.ok() || !hi.ok()) return false;
  Result<AffineGraph> fit = AffineGraph::Fit(lo->graph, line_lo_, hi->graph, line_hi_);
  const int64_t dv = line_hi_ - line_lo_;
  const int64_t dt = hi->tokens - lo->tokens;
  if (!fit.ok() || dt % dv != 0) return false;
  const int64_t tokens_slope = dt / dv;
  // The forms must reproduce the builder inside the range too (a sliding window bends a size).
  for (int64_t v : line_checks_) {
    if (v <= line_lo_ || v >= line_hi_) continue;
    Result<LlmGraph> built = build_at(v);
    if (!built.ok()) return false;
    Graph sized = lo->graph;
    fit->Apply(v, sized);
    if (!AffineGraph::Same(sized, built->graph) ||
        built->tokens != lo->tokens + tokens_slope * (v - line_lo_)) {
      return false;
    }
  }
  e.graph = std::move(lo).value();
  FuseEntry(e, w.fusion);
  e.affine = std::move(fit).value();
  e.twins_pending = true;
  e.tokens_at_lo = e.graph.tokens;
  e.tokens_slope = tokens_slope;
  return true;
}

Result<GraphCache::Entry*> GraphCache::Get(const TransformerConfig& c, const Workload& w,
                                           Phase phase, int slot) {
  Entry& e = entries_[static_cast<size_t>(slot * 2 + (phase == Phase::kDecode ? 1 : 0))];
  // Only the phase graphs follow a line: the footprint's graph (slot 1) is built at
  // max(prompt, context), which bends along a prompt row.
  const int64_t v = line_ && slot == 0 ? IntOf(w, line_variable_) : 0;
  const bool on_line = line_ && slot == 0 && v >= line_lo_ && v <= line_hi_;
  if (on_line) {
    // The same line: every workload field but the variable agrees with the fitted one.
    bool same_line = e.line_tried;
    if (same_line) {
      Workload x = w;
      ApplyInt(x, line_variable_, IntOf(e.line_base, line_variable_));
      same_line = x == e.line_base;
    }
    if (!same_line) FitLine(c, w, phase, e);
    if (e.affine.has_value() && (same_line || e.line_base == w)) {
      e.affine->Apply(v, e.graph.graph);
      e.graph.tokens = e.tokens_at_lo + e.tokens_slope * (v - line_lo_);
      ++affine_;
      return &e;
    }
  }
  if (!on_line) {
    // Re-sized for a workload off the line: the forms no longer describe the graph (a size they
    // hold constant may differ out there), so the next point of the line fits anew. On the line
    // the forms are absent here (the fit failed), and the line stays tried: replayed.
    e.affine.reset();
    e.line_tried = false;
  }
  // Replayed or built: no line vouches for the twins, and the roles may be new.
  e.analysis.twins_fixed.clear();
  e.twins_pending = false;
  e.weight_uses.reset();
  if (e.built && e.fusion == w.fusion && ReplayLlmGraph(c, w, e.graph).ok()) {
    ++replays_;
    return &e;
  }
  e.built = false;
  Result<LlmGraph> g = BuildLlmGraph(c, w, phase);
  if (!g.ok()) return g.status();
  ++builds_;
  e.graph = std::move(g).value();
  FuseEntry(e, w.fusion);
  return &e;
}

Result<std::vector<PhasePoint>> EvaluatePhases(const TransformerConfig& c, const Workload& given,
                                               const CostModel& model, PhaseSelection which,
                                               MemoryFootprint* footprint) {
  return EvaluatePhases(c, given, model, which, footprint, nullptr);
}

Result<std::vector<PhasePoint>> EvaluatePhases(const TransformerConfig& c, const Workload& given,
                                               const CostModel& model, PhaseSelection which,
                                               MemoryFootprint* footprint, GraphCache* cache) {
  std::unique_ptr<GraphCache> local;  // made only when no cache is given (it is large)
  if (cache == nullptr) {
    local = std::make_unique<GraphCache>();
    cache = local.get();
  }
  std::vector<PhasePoint> out;
  out.reserve(2);
  const Device& d = model.device();
  const int64_t context = std::max(given.prompt, given.DecodeContext());
  Workload w = given;
  if (w.pp == 0) {
    // Stages as the device says: one, or the fewest chips that hold the model at this point
    // (from the one-stage decode graph, which the cache keeps in slot 1).
    w.pp = 1;
    if (d.model_split) {
      Workload wf = w;
      wf.context = context;
      Result<GraphCache::Entry*> g = cache->Get(c, wf, Phase::kDecode, 1);
      if (!g.ok()) return g.status();
      w.pp = FewestStages(FootprintFromGraph(c, wf, d, (*g)->graph.graph, w.batch, context));
      if (footprint != nullptr) {
        *footprint = FootprintFromGraph(c, w, d, (*g)->graph.graph, w.batch, context);
      }
      footprint = nullptr;  // done: the stages divide the weights and cache, not add to them
    }
  }
  if (w.Stages() > 1 && d.links.empty()) {
    return Status::Invalid("--pp", "device '" + d.id + "' lists no link between chips");
  }
  if (Status st = CheckTensorParallel(w, d); !st.ok()) return st;
  // The footprint's decode graph is built at the longer of prompt and context.
  auto footprint_from = [&](GraphCache::Entry& e) {
    if (footprint != nullptr) {
      if (!e.weight_uses) e.weight_uses = WeightUsesOf(e.graph.graph);
      *footprint = FootprintFromGraph(c, w, d, e.graph.graph, w.batch, context, &*e.weight_uses,
                                      &e.graph.layer_groups);
    }
  };
  if (footprint != nullptr && (which == PhaseSelection::kPrefill || context != w.DecodeContext())) {
    Workload wf = w;
    wf.context = context;
    Result<GraphCache::Entry*> g = cache->Get(c, wf, Phase::kDecode, 1);
    if (!g.ok()) return g.status();
    footprint_from(**g);
    footprint = nullptr;  // done
  }
  for (Phase p : {Phase::kPrefill, Phase::kDecode}) {
    if (which == PhaseSelection::kPrefill && p != Phase::kPrefill) continue;
    if (which == PhaseSelection::kDecode && p != Phase::kDecode) continue;
    Result<GraphCache::Entry*> entry = cache->Get(c, w, p, 0);
    if (!entry.ok()) return entry.status();
    const Graph& graph = (*entry)->graph.graph;
    if (p == Phase::kDecode) footprint_from(**entry);
    GraphCosts& a = (*entry)->analysis;
    a.step_requests = w.batch;
    a.step_layers = c.layers;
    a.step_phase = p;
    if (p == Phase::kPrefill && model.options().expected.prefill_runtime) {
      // The engine launches its prefill otherwise (made only under such an engine).
      std::optional<CostOptions> o = PrefillOptions(model.options());
      CostKernels(graph, o ? CostModel(model.device(), *std::move(o)) : model, a);
    } else {
      CostKernels(graph, model, a);
    }
    if ((*entry)->twins_pending) GraphCache::FixTwins(**entry);
    PhasePoint& pp = out.emplace_back();
    pp.phase = p;
    pp.time_s = a.totals.time_s;
    pp.bound = a.totals.verdict;
    pp.compute_bound_s = a.compute_bound_s;
    pp.memory_bound_s = a.memory_bound_s;
    pp.comm_bound_s = a.comm_bound_s;
    pp.flops = a.totals.flops;
    pp.bytes = a.totals.bytes[0];
    pp.compute_s = a.totals.compute_time_s;
    pp.comm_s = a.totals.comm_time_s;
    pp.class_flops = a.class_flops;
    pp.class_bytes = a.class_bytes;
    pp.class_time_s = a.class_time_s;
    pp.overhead_s = a.overhead_s;
    const double tokens = p == Phase::kPrefill
                              ? static_cast<double>(w.batch) * static_cast<double>(w.prompt)
                              : static_cast<double>(w.batch);
    pp.tokens_per_s = pp.time_s > 0 ? tokens / pp.time_s : 0;
    if (a.totals.has_expected) {
      pp.has_expected = true;
      pp.expected_time_s = a.totals.expected_s;
      pp.host_bound = a.totals.host_bound;
      pp.expected_tokens_per_s = pp.expected_time_s > 0 ? tokens / pp.expected_time_s : 0;
    }
    for (size_t cls = 0; cls < kNumClasses; ++cls) {
      if (a.class_present[cls]) pp.class_bound[cls] = a.class_times[cls].Classify();
    }
  }
  return out;
}

namespace {

/// A point that fails is named by its place on the grid ("--vary kv-dtype=int4"); the option
/// the error names stays after it unless it is the swept one (whose value the label gives).
Status PointError(const Status& s, const std::vector<SweepAxis>& axes,
                  const std::vector<size_t>& index) {
  std::string at = "--vary ";
  bool swept = false;
  for (size_t a = 0; a < axes.size(); ++a) {
    at += (a == 0 ? "" : ", ") + axes[a].Label(index[a]);
    swept = swept || s.where() == FieldOf(FieldOf(axes[a].variable)).flag;
  }
  return swept ? s.At(at) : s.WithPrefix(at);
}

}  // namespace

Result<SweepResult> RunSweep(const TransformerConfig& c, const Workload& base,
                             const CostModel& model, PhaseSelection phases,
                             const std::vector<SweepAxis>& axes) {
  if (axes.empty() || axes.size() > 2) {
    return Status::Invalid("--vary", "give one or two --vary options");
  }
  if (axes.size() == 2 && axes[0].variable == axes[1].variable) {
    return Status::Invalid("--vary", "the two axes vary the same variable");
  }
  SweepResult r;
  r.axes = axes;
  // A swept prompt or context past the model's positions is costed, and said.
  for (const SweepAxis& a : axes) {
    if (a.variable != SweepVariable::kPrompt && a.variable != SweepVariable::kContext) continue;
    if (c.max_positions > 0 && !a.values.empty() && a.values.back() > c.max_positions) {
      r.notes.push_back(fmt::format(
          "{} up to {} exceeds the model's max_position_embeddings {} (from {} >= {} on, the "
          "model was not trained for that length; the figures are costed all the same)",
          NameOf(a.variable), a.values.back(), c.max_positions, NameOf(a.variable),
          c.max_positions + 1));
    }
  }
  r.names = ResourceNames::Of(model.device());
  r.tp = base.tp;
  r.has_expected = model.has_expected();
  r.expected = model.options().expected;
  const Device& d = model.device();

  std::atomic<int64_t> evaluations{0};
  // Each thread keeps its graphs and re-sizes them from point to point.
  GraphCache main_cache;
  auto evaluate = [&](const Workload& w, SweepPoint& p, GraphCache& cache) -> Status {
    ++evaluations;
    MemoryFootprint m;
    Result<std::vector<PhasePoint>> ph = EvaluatePhases(c, w, model, phases, &m, &cache);
    if (!ph.ok()) return ph.status();
    p.phases = std::move(ph).value();
    p.footprint_bytes = m.resident_bytes();
    p.capacity_bytes = m.capacity_bytes;
    p.fits = m.fits();
    p.chips = m.devices;
    p.stages = m.stages;
    return Status::Ok();
  };
  // The value of signal `id` with the swept variable set to v and everything else as in `w`;
  // `keep`, when given, receives the point.
  using Value = std::optional<SignalValue>;
  auto value_with = [&](const Workload& w, SweepVariable var, int64_t v, const SignalId& id,
                        SweepPoint* keep) -> Result<Value> {
    Workload wv = w;
    ApplyInt(wv, var, v);
    SweepPoint p;
    Status s = evaluate(wv, p, main_cache);
    if (!s.ok()) return s;
    Value out = ValueOf(p, id);
    if (keep != nullptr) *keep = std::move(p);
    return out;
  };
  auto workload_at = [&](const std::vector<size_t>& index) {
    Workload w = base;
    for (size_t a = 0; a < axes.size(); ++a) Apply(w, axes[a], index[a]);
    return w;
  };

  // The grid, row-major.
  const size_t n0 = axes[0].size();
  const size_t n1 = axes.size() == 2 ? axes[1].size() : 1;
  if (n0 * n1 > 2000000) return Status::Invalid("--vary", "more than 2,000,000 grid points");
  // Grid points are independent: evaluate them on every core (the cost model is read-only).
  const size_t total = n0 * n1;
  r.points.resize(total);
  std::atomic<size_t> next{0};
  std::mutex error_mutex;
  Status first_error;
  size_t failed_at = total;
  auto worker = [&](GraphCache& cache) {
    for (size_t idx = next++; idx < total; idx = next++) {
      const size_t i = idx / n1, j = idx % n1;
      SweepPoint& p = r.points[idx];
      p.index = axes.size() == 2 ? std::vector<size_t>{i, j} : std::vector<size_t>{i};
      Status s = evaluate(workload_at(p.index), p, cache);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (idx < failed_at) {  // report the first failing point in grid order
          failed_at = idx;
          first_error = PointError(s, axes, p.index);
        }
      }
    }
  };
  const size_t threads = total < 64 ? 1 : std::min<size_t>(UsableCores(), 16);
  std::vector<std::thread> pool;
  std::vector<GraphCache> caches(threads - 1);  // the calling thread uses main_cache
  // The grid's rows run along the last axis: where it varies batch, prompt or context, each
  // row's graphs are sized by affine forms fitted once per row (GraphCache::PlanLine). A device
  // that chooses its stages per point changes the graph's structure along a row: replayed.
  const SweepAxis& inner = axes.back();
  const bool lines = IsInteger(inner.variable) && inner.variable != SweepVariable::kTp &&
                     inner.size() >= 16 * threads && !(d.model_split.has_value() && base.pp == 0);
  if (lines) {
    const std::vector<int64_t> checks = {inner.values[1], inner.values[inner.size() / 4],
                                         inner.values[inner.size() / 2],
                                         inner.values[inner.size() - 2]};
    main_cache.PlanLine(inner.variable, inner.values.front(), inner.values.back(), checks);
    for (GraphCache& cache : caches) {
      cache.PlanLine(inner.variable, inner.values.front(), inner.values.back(), checks);
    }
  }
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker, std::ref(caches[t - 1]));
  worker(main_cache);
  for (std::thread& t : pool) t.join();
  if (!first_error.ok()) return first_error;
  // Bisecting along the first axis of two would fit a line per evaluation: replay instead.
  if (axes.size() == 2) main_cache.EndLines();
  auto point = [&](size_t i, size_t j) -> const SweepPoint& { return r.points[i * n1 + j]; };
  // The chip count is tracked when the device chooses it (a model split, no --pp).
  const bool chips_tracked = d.model_split.has_value() && base.pp == 0;
  r.chips_tracked = chips_tracked;
  r.pipelined = std::any_of(r.points.begin(), r.points.end(),
                            [](const SweepPoint& p) { return p.stages > 1; });
  // The comm wall is tracked when tensor parallelism is on or swept.
  const bool comm_tracked =
      base.tp > 1 || std::any_of(axes.begin(), axes.end(), [](const SweepAxis& a) {
        return a.variable == SweepVariable::kTp;
      });

  // Along each axis, for each value of the other axis.
  for (size_t along = 0; along < axes.size(); ++along) {
    const SweepAxis& ax = axes[along];
    const size_t lines = axes.size() == 2 ? axes[1 - along].size() : 1;
    for (size_t line = 0; line < lines; ++line) {
      auto at_index = [&](size_t k) {
        std::vector<size_t> idx(axes.size());
        idx[along] = k;
        if (axes.size() == 2) idx[1 - along] = line;
        return idx;
      };
      auto pt = [&](size_t k) -> const SweepPoint& {
        if (axes.size() == 1) return point(k, 0);
        return along == 0 ? point(k, line) : point(line, k);
      };
      const std::optional<size_t> at =
          axes.size() == 2 ? std::optional<size_t>(line) : std::nullopt;
      // The line's workload; the swept variable is set per evaluation.
      const Workload line_workload = workload_at(at_index(0));
      const bool integer = IsInteger(ax.variable);
      // The tp grid holds only the degrees that divide the heads: a change lies between grid
      // points and is not bisected.
      const bool bisect = integer && ax.variable != SweepVariable::kTp;
      const std::vector<SignalId> signals = SignalsOf(pt(0), comm_tracked, chips_tracked);
      // One walk along the line finds where each signal changes (each point read once, while
      // it is in cache); the changes are then resolved signal by signal.
      std::vector<std::vector<size_t>> change_at(signals.size());
      {
        std::vector<Value> last(signals.size());
        for (size_t s = 0; s < signals.size(); ++s) last[s] = ValueOf(pt(0), signals[s]);
        for (size_t k = 1; k < ax.size(); ++k) {
          const SweepPoint& p = pt(k);
          for (size_t s = 0; s < signals.size(); ++s) {
            Value v = ValueOf(p, signals[s]);
            if (v == last[s]) continue;
            change_at[s].push_back(k - 1);
            last[s] = std::move(v);
          }
        }
      }
      for (size_t s = 0; s < signals.size(); ++s) {
        const SignalId& id = signals[s];
        const bool memory_signal =
            id.kind == SignalKind::kCapacity || id.kind == SignalKind::kChips;
        // Prefill does not depend on the decode context.
        if (ax.variable == SweepVariable::kContext && !memory_signal &&
            id.phase == Phase::kPrefill) {
          continue;
        }
        std::vector<GridChange<Value>> changes;
        for (size_t k : change_at[s]) {
          Result<GridChange<Value>> ch = ResolveGridChange<Value>(
              k, ValueOf(pt(k), id), ValueOf(pt(k + 1), id), integer ? &ax.values : nullptr, bisect,
              [&](int64_t v) { return value_with(line_workload, ax.variable, v, id, nullptr); });
          if (!ch.ok()) return ch.status();
          changes.push_back(std::move(ch).value());
        }
        for (const GridChange<Value>& ch : changes) {
          Crossover x;
          x.signal = id;
          x.axis = along;
          x.variable = std::string(NameOf(ax.variable));
          x.at = at;
          x.grid = ch.k + 1;
          x.exact = ch.exact;
          x.int_value = integer ? ch.value : 0;
          x.from = ch.from.value_or(SignalValue{});
          x.to = ch.to.value_or(SignalValue{});
          r.crossovers.push_back(std::move(x));
        }
        if (!changes.empty()) continue;

        // Never flips along this axis within the range: look further out where that means
        // something, and keep what explains the limit.
        NeverFlips nf;
        nf.signal = id;
        nf.axis = along;
        nf.variable = std::string(NameOf(ax.variable));
        nf.value = ValueOf(pt(0), id).value_or(SignalValue{});
        nf.at = at;
        const int64_t far = integer ? FarValue(ax.variable) : 0;
        const bool look = far > 0 && far > ax.values.back();
        const Workload last = workload_at(at_index(ax.size() - 1));
        if (id.kind == SignalKind::kChips) {  // the count within the range is what is asked
          r.never.push_back(std::move(nf));
          continue;
        }
        if (id.kind == SignalKind::kCapacity) {
          // Only a wall beyond the range is looked for; a failed evaluation is no wall.
          if (look && nf.value.yes) {
            const Flip<int> f = FindFlip<int>(
                [&](int64_t v) {
                  Result<Value> got = value_with(last, ax.variable, v, id, nullptr);
                  return got.ok() && got->has_value() ? ((*got)->yes ? 1 : 0) : 2;
                },
                ax.values.back(), far);
            if (f.found && f.to == 0) {
              nf.reach = NeverFlips::Reach::kBeyond;
              nf.beyond_value = f.value;
              nf.beyond_to = SignalValue{{}, false};
            }
          }
          r.never.push_back(std::move(nf));
          continue;
        }
        if (look) {
          Status failed;
          SweepPoint far_point;
          const Flip<Value> f = FindFlip<Value>(
              [&](int64_t v) -> Value {
                Result<Value> got =
                    value_with(last, ax.variable, v, id, v == far ? &far_point : nullptr);
                if (!got.ok()) {
                  failed = got.status();
                  return std::nullopt;
                }
                return *got;
              },
              ax.values.back(), far);
          if (!failed.ok()) {
            nf.reach = NeverFlips::Reach::kLookFailed;
          } else if (f.found) {
            nf.reach = NeverFlips::Reach::kBeyond;
            nf.beyond_value = f.value;
            nf.beyond_to = f.to.value_or(SignalValue{});
          } else {
            nf.reach = NeverFlips::Reach::kAnyValue;
            if (far_point.phases.empty()) {
              Workload wv = last;
              ApplyInt(wv, ax.variable, far);
              (void)evaluate(wv, far_point, main_cache);
            }
            // Intensity far out, for the step and the classes.
            for (const PhasePoint& ph : far_point.phases) {
              if (ph.phase != id.phase) continue;
              if (id.kind == SignalKind::kStep && ph.bytes > 0) {
                nf.limit_intensity = ph.flops / ph.bytes;
              }
              const int cls = static_cast<int>(id.cls);
              if (id.kind == SignalKind::kClass && ph.class_bytes[cls] > 0) {
                nf.limit_intensity = ph.class_flops[cls] / ph.class_bytes[cls];
              }
            }
            const DType act = base.dtype.value_or(c.torch_dtype);
            const bool vector = id.kind == SignalKind::kClass && id.cls == KernelClass::kVector;
            const int ceiling = model.ResolveEngine({!vector, vector ? DType::kFp32 : act});
            const bool verdict = id.kind == SignalKind::kStep || id.kind == SignalKind::kClass;
            if (ceiling >= 0 && verdict) {
              nf.ridge = d.compute[ceiling].peak.value / d.device_memory().bandwidth_bytes_per_s();
              nf.ridge_ceiling = ceiling;
            }
            if (id.kind == SignalKind::kClass && id.cls == KernelClass::kAttention &&
                id.phase == Phase::kDecode) {
              nf.heads_per_kv = (c.heads / base.tp) / std::max<int64_t>(1, c.kv_heads / base.tp);
            }
          }
        }
        r.never.push_back(std::move(nf));
      }
    }
  }
  r.evaluations = evaluations;
  return r;
}

Result<DeviceSweep> RunDeviceSweep(const TransformerConfig& config, const Workload& base,
                                   const std::vector<CostModel>& models, PhaseSelection phases,
                                   const std::vector<SweepAxis>& axes) {
  if (models.empty()) return Status::Invalid("--vary hw", "name at least one device");
  if (axes.size() > 1) {
    return Status::Invalid("--vary", "with hw, at most one other variable");
  }
  DeviceSweep d;
  d.fixed = axes.empty();
  std::vector<SweepAxis> used = axes;
  if (d.fixed) {
    SweepAxis one;
    one.variable = SweepVariable::kBatch;
    one.values = {base.batch};
    used = {one};
  }
  for (const CostModel& model : models) {
    Result<SweepResult> r = RunSweep(config, base, model, phases, used);
    if (!r.ok()) {
      return Status::Invalid(r.status().where(),
                             "on " + model.device().id + ": " + r.status().what());
    }
    d.devices.push_back(model.device().id);
    d.sweeps.push_back(std::move(r).value());
  }
  return d;
}

Workload WorkloadAt(const Workload& base, const std::vector<SweepAxis>& axes,
                    const std::vector<size_t>& index) {
  Workload w = base;
  for (size_t a = 0; a < axes.size() && a < index.size(); ++a) Apply(w, axes[a], index[a]);
  return w;
}

Workload WorkloadWith(const Workload& base, SweepVariable variable, int64_t value) {
  Workload w = base;
  ApplyInt(w, variable, value);
  return w;
}

}  // namespace roofline
