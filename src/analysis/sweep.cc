// Sweeps over workload variables and the exact crossovers along each axis.
#include "roofline/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

#include "roofline/flip.h"
#include "roofline/suggest.h"
#include "roofline/units.h"

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

Result<int64_t> ParseInt(const std::string& text, const std::string& spec) {
  try {
    size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return static_cast<int64_t>(v);
  } catch (const std::exception&) {
    return Status::Invalid("--vary " + spec, "'" + text + "' is not an integer");
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

void Apply(Workload& w, const SweepAxis& axis, size_t i) {
  switch (axis.variable) {
    case SweepVariable::kBatch:
      w.batch = axis.values[i];
      break;
    case SweepVariable::kPrompt:
      w.prompt = axis.values[i];
      break;
    case SweepVariable::kContext:
      w.context = axis.values[i];
      break;
    case SweepVariable::kTp:
      w.tp = axis.values[i];
      break;
    case SweepVariable::kDtype:
      w.dtype = axis.dtypes[i];
      break;
    case SweepVariable::kWeightDtype:
      w.weight_dtype = axis.dtypes[i];
      break;
    case SweepVariable::kKvDtype:
      w.kv_dtype = axis.dtypes[i];
      break;
  }
}

void ApplyInt(Workload& w, SweepVariable v, int64_t value) {
  SweepAxis a;
  a.variable = v;
  a.values = {value};
  Apply(w, a, 0);
}

std::string Plain(const std::string& bound) {
  if (bound.rfind("compute:", 0) == 0) return "compute-bound (" + bound.substr(8) + ")";
  if (bound.rfind("memory:", 0) == 0) return "memory-bound (" + bound.substr(7) + ")";
  if (bound.rfind("comm:", 0) == 0) return "communication-bound (" + bound.substr(5) + ")";
  return bound;
}

/// The verdicts a point carries, each under a stable name.
std::vector<std::pair<std::string, std::string>> Signals(const SweepPoint& p, bool comm) {
  std::vector<std::pair<std::string, std::string>> s;
  for (const PhasePoint& ph : p.phases) {
    const std::string phase(NameOf(ph.phase));
    s.emplace_back(phase + " step", ph.bound);
    for (int c = 0; c < kNumClasses; ++c) {
      if (ph.class_bound[c].empty() || c == static_cast<int>(KernelClass::kComm)) continue;
      s.emplace_back(phase + " " + std::string(NameOf(static_cast<KernelClass>(c))),
                     ph.class_bound[c]);
    }
    if (comm) {
      s.emplace_back(phase + " comm wall",
                     ph.comm_s > ph.compute_s ? "comm > compute" : "comm <= compute");
    }
  }
  s.emplace_back("capacity", p.fits ? "fits" : "exceeds");
  return s;
}

/// "stays"/"stay", "becomes"/"become" for a signal name.
std::string Verb(const std::string& what, const std::string& singular) {
  const bool plural = what.size() >= 7 && (what.compare(what.size() - 7, 7, "matmuls") == 0 ||
                                           what.find("elementwise") != std::string::npos);
  return plural ? singular.substr(0, singular.size() - 1) : singular;
}

std::string SignalOf(const SweepPoint& p, const std::string& what) {
  for (const auto& [w, v] : Signals(p, true)) {
    if (w == what) return v;
  }
  return "";
}

}  // namespace

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

Result<std::vector<PhasePoint>> EvaluatePhases(const TransformerConfig& c, const Workload& w,
                                               const CostModel& model, PhaseSelection which,
                                               MemoryFootprint* footprint) {
  std::vector<PhasePoint> out;
  const Device& d = model.device();
  const int64_t context = std::max(w.prompt, w.DecodeContext());
  // The footprint's decode graph is built at the longer of prompt and context.
  auto footprint_from = [&](const Graph& decode) {
    if (footprint != nullptr) {
      *footprint = FootprintFromGraph(c, w, d, decode, w.batch, context);
    }
  };
  if (footprint != nullptr && (which == PhaseSelection::kPrefill || context != w.DecodeContext())) {
    Workload wf = w;
    wf.context = context;
    Result<LlmGraph> g = BuildLlmGraph(c, wf, Phase::kDecode);
    if (!g.ok()) return g.status();
    footprint_from(g->graph);
    footprint = nullptr;  // done
  }
  for (Phase p : {Phase::kPrefill, Phase::kDecode}) {
    if (which == PhaseSelection::kPrefill && p != Phase::kPrefill) continue;
    if (which == PhaseSelection::kDecode && p != Phase::kDecode) continue;
    Result<LlmGraph> g = BuildLlmGraph(c, w, p);
    if (!g.ok()) return g.status();
    if (p == Phase::kDecode) footprint_from(g->graph);
    const std::vector<Kernel> kernels = Fuse(g->graph, w.fusion);
    PhasePoint pp;
    pp.phase = p;
    // Per class: compute time per ceiling, memory time per level, comm time.
    struct Acc {
      bool present = false;
      std::array<double, 16> engine_time{};  ///< per ceiling index; slot 15: no ceiling
      std::array<double, kMaxLevels> memory{};
      double comm = 0;
      int link = -1;
    };
    std::array<Acc, kNumClasses> acc;
    std::vector<KernelCost> costs;
    costs.reserve(kernels.size());
    for (const Kernel& k : kernels) {
      KernelCost cost = model.Evaluate(g->graph, k);
      const double r = static_cast<double>(k.repeat);
      const int cls = static_cast<int>(ClassOf(g->graph, k));
      Acc& a = acc[cls];
      a.present = true;
      for (int e = 0; e < cost.num_engines; ++e) {
        const int ceiling = cost.engines[e].ceiling;
        a.engine_time[ceiling >= 0 && ceiling < 15 ? ceiling : 15] += cost.engines[e].time_s * r;
      }
      for (int l = 0; l < cost.num_levels; ++l) a.memory[l] += cost.memory_time_s[l] * r;
      a.comm += cost.comm_time_s * r;
      if (cost.link >= 0) a.link = cost.link;
      pp.class_flops[cls] += cost.flops * r;
      pp.class_bytes[cls] += cost.bytes[0] * r;
      pp.compute_s += cost.compute_time_s * r;
      pp.comm_s += cost.comm_time_s * r;
      switch (cost.bound.kind) {
        case BoundKind::kCompute:
          pp.compute_bound_s += cost.time_s * r;
          break;
        case BoundKind::kMemory:
          pp.memory_bound_s += cost.time_s * r;
          break;
        case BoundKind::kComm:
          pp.comm_bound_s += cost.time_s * r;
          break;
        case BoundKind::kOverhead:
          break;
      }
      costs.push_back(std::move(cost));
    }
    const Totals t = Sum(costs, model);
    pp.time_s = t.time_s;
    pp.bound = t.bound;
    pp.flops = t.flops;
    pp.bytes = t.bytes[0];
    const double tokens = p == Phase::kPrefill
                              ? static_cast<double>(w.batch) * static_cast<double>(w.prompt)
                              : static_cast<double>(w.batch);
    pp.tokens_per_s = t.time_s > 0 ? tokens / t.time_s : 0;
    for (int cls = 0; cls < kNumClasses; ++cls) {
      const Acc& a = acc[cls];
      if (!a.present) continue;
      double compute = 0;
      int best_engine = -1;
      double best_engine_time = -1;
      for (int ceiling = 0; ceiling < 16; ++ceiling) {
        const double time = a.engine_time[ceiling];
        compute += time;
        if (ceiling < 15 && time > 0 && time > best_engine_time) {
          best_engine_time = time;
          best_engine = ceiling;
        }
      }
      std::string bound =
          best_engine >= 0 ? "compute:" + d.compute[best_engine].engine : std::string("compute");
      double best = compute;
      for (int l = 0; l < kMaxLevels && l < static_cast<int>(d.memory.size()); ++l) {
        if (a.memory[l] > best) {
          best = a.memory[l];
          bound = "memory:" + d.memory[l].name;
        }
      }
      if (a.comm > best && a.link >= 0) bound = "comm:" + d.links[a.link].name;
      pp.class_bound[cls] = bound;
    }
    out.push_back(std::move(pp));
  }
  return out;
}

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
  const Device& d = model.device();

  std::atomic<int64_t> evaluations{0};
  auto evaluate = [&](const Workload& w, SweepPoint& p) -> Status {
    ++evaluations;
    MemoryFootprint m;
    Result<std::vector<PhasePoint>> ph = EvaluatePhases(c, w, model, phases, &m);
    if (!ph.ok()) return ph.status();
    p.phases = std::move(ph).value();
    p.footprint_bytes = m.total_bytes();
    p.capacity_bytes = m.capacity_bytes;
    p.fits = m.fits();
    return Status::Ok();
  };
  // The verdict `what` with the swept variable set to v and everything else as in `w`. An error
  // is kept in *failed (the verdict reads "error"); `keep`, when given, receives the point.
  auto signal_with = [&](const Workload& w, SweepVariable var, int64_t v, const std::string& what,
                         Status* failed, SweepPoint* keep) -> std::string {
    Workload wv = w;
    ApplyInt(wv, var, v);
    SweepPoint p;
    Status s = evaluate(wv, p);
    if (!s.ok()) {
      if (failed != nullptr) *failed = s;
      return "error";
    }
    std::string verdict = SignalOf(p, what);
    if (keep != nullptr) *keep = std::move(p);
    return verdict;
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
  auto worker = [&] {
    for (size_t idx = next++; idx < total; idx = next++) {
      const size_t i = idx / n1, j = idx % n1;
      SweepPoint& p = r.points[idx];
      p.index = axes.size() == 2 ? std::vector<size_t>{i, j} : std::vector<size_t>{i};
      Status s = evaluate(workload_at(p.index), p);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (idx < failed_at) {  // report the first failing point in grid order
          failed_at = idx;
          first_error = s.WithPrefix(axes.size() == 2 ? axes[0].Label(i) + ", " + axes[1].Label(j)
                                                      : axes[0].Label(i));
        }
      }
    }
  };
  const size_t threads =
      total < 64 ? 1 : std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), 16);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (!first_error.ok()) return first_error;
  auto point = [&](size_t i, size_t j) -> const SweepPoint& { return r.points[i * n1 + j]; };
  // The comm wall is tracked when tensor parallelism is on or swept.
  const bool comm_tracked =
      base.tp > 1 || std::any_of(axes.begin(), axes.end(), [](const SweepAxis& a) {
        return a.variable == SweepVariable::kTp;
      });
  std::vector<std::vector<std::pair<std::string, std::string>>> signals;
  signals.reserve(r.points.size());
  for (const SweepPoint& p : r.points) signals.push_back(Signals(p, comm_tracked));
  auto signal_at = [&](const SweepPoint& p, const std::string& what) -> const std::string& {
    static const std::string kNone;
    const auto& s = signals[static_cast<size_t>(&p - r.points.data())];
    for (const auto& [w, v] : s) {
      if (w == what) return v;
    }
    return kNone;
  };

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
        const auto idx = at_index(k);
        return axes.size() == 2 ? point(idx[0], idx[1]) : point(idx[0], 0);
      };
      const std::string at = axes.size() == 2 ? axes[1 - along].Label(line) : "";
      const std::string at_text = at.empty() ? "" : " (" + at + ")";
      // The comm wall is tracked when tensor parallelism is on or swept.
      const bool comm =
          base.tp > 1 || std::any_of(axes.begin(), axes.end(), [](const SweepAxis& a) {
            return a.variable == SweepVariable::kTp;
          });
      const auto first = Signals(pt(0), comm);
      for (const auto& signal : first) {
        const std::string& what = signal.first;  // a plain reference: lambdas below capture it
        const auto& verdict0 = signal.second;
        // Prefill does not depend on the decode context.
        if (ax.variable == SweepVariable::kContext && what.rfind("prefill", 0) == 0) continue;
        bool changed = false;
        for (size_t k = 0; k + 1 < ax.size(); ++k) {
          const std::string& a = signal_at(pt(k), what);
          const std::string& b = signal_at(pt(k + 1), what);
          if (a == b) continue;
          changed = true;
          Crossover x;
          x.what = what;
          x.variable = std::string(NameOf(ax.variable));
          x.at = at;
          x.from = a;
          x.to = b;
          if (IsInteger(ax.variable) && ax.variable != SweepVariable::kTp) {
            Workload w = workload_at(at_index(k));
            Status failed;
            auto verdict = [&](int64_t v) {
              return signal_with(w, ax.variable, v, what, &failed, nullptr);
            };
            const FlipPoint f = FindFlipUp(verdict, ax.values[k], ax.values[k + 1]);
            if (!failed.ok()) return failed;
            x.int_value = f.found ? f.value : ax.values[k + 1];
            x.to = f.found ? f.to : b;
            x.value = std::to_string(x.int_value);
          } else if (ax.variable == SweepVariable::kTp) {
            // Only degrees that divide the heads are valid: the change lies between grid points.
            x.int_value = ax.values[k + 1];
            x.value = std::to_string(x.int_value);
            x.at = at.empty() ? fmt::format("tp={} still {}", ax.values[k], a)
                              : at + fmt::format(", tp={} still {}", ax.values[k], a);
          } else {
            x.value = std::string(NameOf(ax.dtypes[k + 1]));
          }
          const std::string where = x.at.empty() ? "" : " (" + x.at + ")";
          // One plain sentence.
          if (what == "capacity") {
            x.sentence =
                x.to == "exceeds"
                    ? fmt::format(
                          "weights + KV cache + workspace no longer fit {} x {} "
                          "at {} {} {}{}",
                          Si(pt(k).capacity_bytes, "B"), base.tp, x.variable,
                          IsInteger(ax.variable) ? ">=" : "=", x.value, where)
                    : fmt::format("weights + KV cache + workspace fit from {} {} {} on{}",
                                  x.variable, IsInteger(ax.variable) ? ">=" : "=", x.value, where);
          } else if (what.find("comm wall") != std::string::npos) {
            x.sentence = fmt::format(
                "{}: all-reduce time {} compute time at {} {} {}{}", what.substr(0, what.find(' ')),
                x.to == "comm > compute" ? "exceeds" : "drops below", x.variable,
                IsInteger(ax.variable) ? ">=" : "=", x.value, where);
          } else {
            x.sentence = fmt::format(
                "{} {} {} at {} {} {}{} ({} before)", what, Verb(what, "becomes"), Plain(x.to),
                x.variable, IsInteger(ax.variable) ? ">=" : "=", x.value, where, Plain(x.from));
          }
          r.crossovers.push_back(std::move(x));
        }
        if (changed) continue;
        if (what == "capacity") {
          NeverFlips cap;
          cap.what = what;
          cap.variable = std::string(NameOf(ax.variable));
          cap.bound = verdict0;
          cap.at = at;
          const int64_t far = IsInteger(ax.variable) ? FarValue(ax.variable) : 0;
          std::string beyond;
          if (verdict0 == "fits" && far > 0 && far > ax.values.back()) {
            Workload w = workload_at(at_index(ax.size() - 1));
            auto verdict = [&](int64_t v) {
              return signal_with(w, ax.variable, v, what, nullptr, nullptr);
            };
            const FlipPoint f = FindFlipUp(verdict, ax.values.back(), far);
            if (f.found && f.to == "exceeds") {
              beyond = fmt::format("; the capacity wall lies beyond the range, at {} >= {}",
                                   cap.variable, f.value);
            }
          }
          cap.sentence =
              fmt::format("weights + KV cache + workspace fit at {} swept {}{}{}",
                          verdict0 == "fits" ? "every" : "no", cap.variable, at_text, beyond);
          r.never.push_back(std::move(cap));
          continue;
        }
        // Never flips along this axis within the range: look further out where that means
        // something, and explain the limit.
        NeverFlips nf;
        nf.what = what;
        nf.variable = std::string(NameOf(ax.variable));
        nf.bound = verdict0;
        nf.at = at;
        const int64_t far = IsInteger(ax.variable) ? FarValue(ax.variable) : 0;
        if (far > 0 && far > ax.values.back()) {
          Workload w = workload_at(at_index(ax.size() - 1));
          Status failed;
          SweepPoint far_point;
          auto verdict = [&](int64_t v) {
            return signal_with(w, ax.variable, v, what, &failed, v == far ? &far_point : nullptr);
          };
          const FlipPoint f = FindFlipUp(verdict, ax.values.back(), far);
          if (!failed.ok()) {
            nf.sentence = fmt::format("{} {} {} over the swept {}{}", what, Verb(what, "stays"),
                                      Plain(verdict0), nf.variable, at_text);
            r.never.push_back(std::move(nf));
            continue;
          }
          if (f.found) {
            nf.sentence =
                fmt::format("{} {} {} over the swept range{}; beyond it, {} at {} >= {}", what,
                            Verb(what, "stays"), Plain(verdict0), at_text,
                            Verb(what, "becomes") + " " + Plain(f.to), nf.variable, f.value);
            r.never.push_back(std::move(nf));
            continue;
          }
          if (far_point.phases.empty()) {
            Workload wv = w;
            ApplyInt(wv, ax.variable, far);
            (void)evaluate(wv, far_point);
          }
          // Intensity far out, for phase classes.
          for (const PhasePoint& ph : far_point.phases) {
            const std::string phase(NameOf(ph.phase));
            if (what == phase + " step" && ph.bytes > 0) nf.limit_intensity = ph.flops / ph.bytes;
            for (int cls = 0; cls < kNumClasses; ++cls) {
              if (what != phase + " " + std::string(NameOf(static_cast<KernelClass>(cls)))) {
                continue;
              }
              if (ph.class_bytes[cls] > 0) {
                nf.limit_intensity = ph.class_flops[cls] / ph.class_bytes[cls];
              }
            }
          }
          const DType act = base.dtype.value_or(c.torch_dtype);
          const bool vector = what.find("elementwise") != std::string::npos;
          const int ceiling = model.ResolveEngine({!vector, vector ? DType::kFp32 : act});
          if (ceiling >= 0) {
            nf.ridge = d.compute[ceiling].peak.value / d.device_memory().bandwidth_bytes_per_s();
          }
          std::string why;
          if (nf.limit_intensity > 0) {
            why = fmt::format(": its intensity tends to {} FLOP/B as {} grows ({} ridge {} FLOP/B)",
                              Num(nf.limit_intensity), nf.variable,
                              ceiling >= 0 ? d.compute[ceiling].engine : "", Num(nf.ridge));
            if (what.find("attention") != std::string::npos && what.rfind("decode", 0) == 0) {
              why += fmt::format(
                  ", set by the {} query heads sharing each K/V head and the KV "
                  "dtype, not by {}",
                  (c.heads / base.tp) / std::max<int64_t>(1, c.kv_heads / base.tp), nf.variable);
            }
          }
          if (what.find("comm wall") != std::string::npos) {
            nf.sentence =
                fmt::format("{}: all-reduce time stays {} compute time at any {}{}",
                            what.substr(0, what.find(' ')),
                            verdict0 == "comm > compute" ? "above" : "below", nf.variable, at_text);
          } else {
            nf.sentence = fmt::format("{} {} {} at any {}{}{}", what, Verb(what, "stays"),
                                      Plain(verdict0), nf.variable, at_text, why);
          }
        } else if (what.find("comm wall") != std::string::npos) {
          nf.sentence =
              fmt::format("{}: all-reduce time stays {} compute time over the swept {}{}",
                          what.substr(0, what.find(' ')),
                          verdict0 == "comm > compute" ? "above" : "below", nf.variable, at_text);
        } else {
          nf.sentence = fmt::format("{} {} {} over the swept {}{}", what, Verb(what, "stays"),
                                    Plain(verdict0), nf.variable, at_text);
        }
        r.never.push_back(std::move(nf));
      }
    }
  }
  r.evaluations = evaluations;
  return r;
}

}  // namespace roofline
