// `--explain`: the derivation of every number, ending with the verdict and where it flips.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "roofline/engine.h"
#include "roofline/report.h"
#include "roofline/suggest.h"
#include "roofline/units.h"

namespace roofline {

std::string RenderOpExplain(const OpAnalysis& a, const FlipAnalysis& flip, const CostModel& model) {
  const Device& d = model.device();
  std::string out;
  out += "Explanation (1 FLOP = one multiply or one add; a multiply-accumulate counts 2;\n";
  out += "             GB = 1e9 B, TFLOP/s = 1e12 FLOP/s)\n\n";
  out += fmt::format("Device {} ({}), from {}\n", d.name, d.id, d.origin);
  for (const auto& c : d.compute) {
    out += fmt::format("  peak {:<12} {:>14}   [{}]\n", c.engine, Si(c.peak.value, c.peak.unit),
                       c.peak.Describe());
  }
  for (const auto& m : d.memory) {
    out += fmt::format("  {:<8} capacity {}{}, bandwidth {}   [{}]\n", m.name,
                       Si(m.capacity.value, "B"),
                       m.instances > 1 ? fmt::format(" x {}", m.instances) : "",
                       m.bandwidth ? Si(m.bandwidth->value, "B/s") : "not listed",
                       m.bandwidth ? m.bandwidth->Describe() : m.capacity.Describe());
  }
  out += "\n";
  for (size_t k = 0; k < a.costs.size(); ++k) {
    const KernelCost& c = a.costs[k];
    out += fmt::format("Kernel {} ({} of {}):\n", c.name, k + 1, a.costs.size());
    if (k < a.traces.size()) {
      for (const auto& line : a.traces[k]) out += "  " + line + "\n";
    }
    for (int l = 0; l < c.num_levels; ++l) {
      if (c.bytes[l] <= 0) continue;
      const double ridge = model.Ridge(c, l);
      out += fmt::format(
          "  intensity at {} = {} FLOP / {} B = {} FLOP/B{}\n", d.memory[l].name, Sci(c.flops),
          Sci(c.bytes[l]), Num(c.Intensity(l)),
          ridge > 0 ? fmt::format("   ({} the {} ridge of {} FLOP/B)",
                                  c.Intensity(l) >= ridge ? "above" : "below",
                                  model.CeilingName(c.engines[model.DominantEngine(c)]), Num(ridge))
                    : "");
    }
    out += fmt::format("  attainable = FLOP / time bound = {} / {} = {}\n\n", Sci(c.flops),
                       Seconds(c.time_s), Si(c.attainable_flops_per_s, "FLOP/s"));
  }
  const Totals& t = a.totals;
  if (a.costs.size() > 1) {
    out += fmt::format("Kernels run one after another: total time bound = sum = {}\n",
                       Seconds(t.time_s));
  }
  out += fmt::format("Verdict: {} (time bound {})\n", NameOf(t.verdict, model.device()),
                     Seconds(t.time_s));
  out +=
      "  (the verdict compares time terms; compute adds the time of every engine, so a kernel\n"
      "  just below one engine's ridge can still be compute-bound when other engines add time)\n";
  if (t.verdict.kind == BoundKind::kCompute) {
    out +=
        "  The arithmetic takes longer than moving the bytes: faster memory would not help;\n"
        "  a lower-precision dtype with a higher peak would.\n";
  } else if (t.verdict.kind == BoundKind::kMemory) {
    out +=
        "  Moving the bytes takes longer than the arithmetic: more reuse per byte (a larger\n"
        "  batch, fusion) or fewer bytes (a narrower dtype) would help; more FLOP/s would not.\n";
  }
  out += "\n";
  // Where the verdict flips.
  out +=
      fmt::format("Where the verdict flips, varying {} (now {}):\n", flip.variable, flip.current);
  if (flip.down.found) {
    out += fmt::format("  below: {} < {} is {}; from {} on it is {}\n", flip.variable,
                       flip.down.value, flip.down.from, flip.down.value, flip.down.to);
  }
  if (flip.up.found) {
    out += fmt::format("  above: at {} >= {} it becomes {} (found by bisection: {} is still {})\n",
                       flip.variable, flip.up.value, flip.up.to, flip.up.value - 1, flip.up.from);
  } else {
    out += fmt::format(
        "  above: stays {} for every {} up to {}: its intensity at {} {} {} FLOP/B{}\n",
        flip.up.from, flip.variable,
        flip.hi == kMaxDim ? std::string("2^40") : std::to_string(flip.hi), d.memory[0].name,
        flip.hi == kMaxDim ? "tends to" : "there is", Num(flip.limit_intensity),
        flip.ridge > 0 ? fmt::format(" against a ridge of {} FLOP/B", Num(flip.ridge)) : "");
  }
  if (!flip.down.found && !flip.up.found) {
    out += fmt::format("  below: {} for every {} from 1\n", flip.up.from, flip.variable);
  }
  return out;
}


Result<std::string> RenderModelKernelExplain(const ModelAnalysis& a, const CostModel& model,
                                             const std::string& kernel) {
  std::string out;
  std::vector<std::string> names;
  for (const PhaseResult& p : a.phases) {
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      const std::string& name = p.costs[i].name;
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      if (name != kernel) continue;
      Trace trace;
      // A prefill under the engine's own prefill runtime, as the analysis costed it.
      std::optional<CostModel> prefill_model;
      if (p.phase == Phase::kPrefill) {
        if (std::optional<CostOptions> o = PrefillOptions(model.options())) {
          prefill_model.emplace(model.device(), *std::move(o));
        }
      }
      const KernelCost c =
          (prefill_model ? *prefill_model : model).Evaluate(p.graph.graph, p.kernels[i], &trace);
      out += fmt::format("\nKernel {} ({}{}{}, x{} per step):\n", c.name, NameOf(p.phase),
                         p.kernels[i].group.empty() ? "" : ", ", p.kernels[i].group, c.repeat);
      for (const auto& line : trace.lines) out += "  " + line + "\n";
    }
  }
  if (out.empty()) {
    return Status::NotFound("--explain",
                            "no kernel named '" + kernel + "'" + DidYouMean(kernel, names));
  }
  // The step's terms, each with what it did and its figures' sources.
  const Engine* engine = EngineOf(model.options().step_terms);
  for (const PhaseResult& p : a.phases) {
    if (!p.totals.has_expected) continue;
    StepTime step;
    step.gpu_s = p.totals.expected_gpu_s;
    step.host_s = p.totals.expected_host_s;
    step.requests = a.workload.batch;
    step.layers = a.config.layers;
    step.phase = p.phase;
    step.time_s = step.gpu_s;
    out += fmt::format("\nStep ({}): the kernels' expected times sum to {} of GPU time\n",
                       NameOf(p.phase), Seconds(step.gpu_s));
    for (const auto& term : model.options().step_terms) {
      term->Apply(step);
      out += "  " + term->Explain(step) + "\n";
    }
    out += fmt::format("  step: {}\n", Seconds(step.time_s));
  }
  if (engine != nullptr) {
    out += fmt::format("\nEngine {} {} ({}), from {}:\n", engine->name, engine->versions,
                       engine->chosen_as, engine->file);
    for (const std::string& line : DescribeHostWork(*engine)) out += "  " + line + "\n";
    if (!engine->notes.empty()) out += "  notes: " + engine->notes + "\n";
  }
  return "\nExplanation (1 FLOP = one multiply or one add; GB = 1e9 B)\n" + out;
}

Result<std::string> RenderSweepKernelExplain(const TransformerConfig& config, const Workload& base,
                                             const CostModel& model, PhaseSelection phases,
                                             const SweepResult& sweep,
                                             const std::string& kernel) {
  Result<ModelAnalysis> at_base = AnalyzeModel(config, base, model, phases);
  if (!at_base.ok()) return at_base.status();
  // The kernel's class in each phase it runs in (a name not found is an error with suggestions).
  std::vector<std::pair<Phase, KernelClass>> where;
  std::vector<std::string> names;
  for (const PhaseResult& p : at_base->phases) {
    for (size_t i = 0; i < p.costs.size(); ++i) {
      if (std::find(names.begin(), names.end(), p.costs[i].name) == names.end()) {
        names.push_back(p.costs[i].name);
      }
      if (p.costs[i].name == kernel) where.emplace_back(p.phase, p.classes[i]);
    }
  }
  if (where.empty()) {
    return Status::NotFound("--explain",
                            "no kernel named '" + kernel + "'" + DidYouMean(kernel, names));
  }
  struct At {
    Workload w;
    std::string label;
  };
  std::vector<At> points;
  // The kernel's own flip along a single integer axis, in each phase it runs in (exact).
  if (sweep.axes.size() == 1 && IsInteger(sweep.axes[0].variable) &&
      sweep.axes[0].values.size() > 1) {
    const SweepAxis& axis = sweep.axes[0];
    for (const auto& phase_class : where) {
      // A plain variable: clang 14 (the fuzz build) does not capture structured bindings.
      const Phase phase = phase_class.first;
      const FlipPoint f = FindFlipUp(
          [&](int64_t v) -> std::string {
            Result<PhaseResult> r =
                AnalyzePhase(config, WorkloadWith(base, axis.variable, v), model, phase);
            if (!r.ok()) return "error";
            for (const KernelCost& c : r->costs) {
              if (c.name == kernel) return model.BoundName(c);
            }
            return "none";
          },
          axis.values.front(), axis.values.back());
      if (!f.found || f.to == "error" || f.to == "none") continue;
      for (int64_t v : {f.value - 1, f.value}) {
        points.push_back({WorkloadWith(base, axis.variable, v),
                          fmt::format("{} = {} ({} {}'s own {} verdict flips: {} -> {})",
                                      NameOf(axis.variable), v,
                                      v < f.value ? "just before" : "where", kernel,
                                      NameOf(phase), f.from, f.to)});
      }
    }
  }
  for (const Crossover& x : sweep.crossovers) {
    if (x.signal.kind != SignalKind::kClass || x.int_value <= 0) continue;
    const bool ours = std::any_of(where.begin(), where.end(), [&](const auto& pc) {
      return pc.first == x.signal.phase && pc.second == x.signal.cls;
    });
    if (!ours) continue;
    const SweepAxis& axis = sweep.axes[x.axis];
    Workload w = base;
    if (sweep.axes.size() == 2 && x.at) {
      std::vector<size_t> index(2, 0);
      index[1 - x.axis] = *x.at;
      w = WorkloadAt(base, sweep.axes, index);
    }
    const std::string at = sweep.axes.size() == 2 && x.at
                               ? ", " + sweep.axes[1 - x.axis].Label(*x.at)
                               : "";
    for (int64_t v : {x.int_value - 1, x.int_value}) {
      points.push_back({WorkloadWith(w, axis.variable, v),
                        fmt::format("{} = {}{} ({} the {} {} crossover)", NameOf(axis.variable), v,
                                    at, v < x.int_value ? "just before" : "at",
                                    NameOf(x.signal.phase), NameOf(x.signal.cls))});
    }
  }
  const bool flips = !points.empty();
  if (!flips && !sweep.points.empty()) {
    for (const SweepPoint* p : {&sweep.points.front(), &sweep.points.back()}) {
      std::string label;
      for (size_t a = 0; a < sweep.axes.size(); ++a) {
        label += (label.empty() ? "" : ", ") + sweep.axes[a].Label(p->index[a]);
      }
      points.push_back({WorkloadAt(base, sweep.axes, p->index),
                        label + (p == &sweep.points.front() ? " (the first grid point)"
                                                            : " (the last grid point)")});
      if (sweep.points.size() == 1) break;
    }
  }
  std::string out = fmt::format(
      "\nExplanation of {} (1 FLOP = one multiply or one add; GB = 1e9 B){}\n", kernel,
      flips ? ": on both sides of where its verdict flips and of each crossover of its class"
             : ": neither it nor its class flips in the sweep, so at the first and last grid "
               "points");
  for (const At& at : points) {
    Result<ModelAnalysis> a = AnalyzeModel(config, at.w, model, phases);
    if (!a.ok()) {
      out += fmt::format("\n== {} ==\n  refused: {}\n", at.label, a.status().what());
      continue;
    }
    Result<std::string> e = RenderModelKernelExplain(*a, model, kernel);
    if (!e.ok()) return e.status();
    // The header line of the one-point explanation is said once above.
    const std::string& text = *e;
    const size_t body = text.find("\nKernel ");
    out += "\n== " + at.label + " ==" + (body == std::string::npos ? text : text.substr(body));
  }
  return out;
}

}  // namespace roofline

