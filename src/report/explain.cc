// `--explain`: the derivation of every number, ending with the verdict and where it flips.
#include <fmt/format.h>

#include <algorithm>

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
      const KernelCost c = model.Evaluate(p.graph.graph, p.kernels[i], &trace);
      out += fmt::format("\nKernel {} ({}{}{}, x{} per step):\n", c.name, NameOf(p.phase),
                         p.kernels[i].group.empty() ? "" : ", ", p.kernels[i].group, c.repeat);
      for (const auto& line : trace.lines) out += "  " + line + "\n";
    }
  }
  if (out.empty()) {
    return Status::NotFound("--explain",
                            "no kernel named '" + kernel + "'" + DidYouMean(kernel, names));
  }
  return "\nExplanation (1 FLOP = one multiply or one add; GB = 1e9 B)\n" + out;
}

}  // namespace roofline
