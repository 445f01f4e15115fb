// The `== why ==` section of `roofline model` and of the main job.
#include <fmt/format.h>

#include <sstream>

#include "roofline/report.h"
#include "roofline/units.h"

namespace roofline {
namespace {

/// "above", "below" or "far below" (under a tenth of) the ridge.
std::string Against(double intensity, double ridge) {
  if (intensity >= ridge) return "above";
  return intensity < ridge / 10 ? "far below" : "below";
}

/// Where a verdict goes along the axis: "memory:hbm until batch 325, compute:tensor.bf16 from
/// batch 326 on", or "memory:hbm at every batch up to 65536".
std::string Along(const FlipPoint& f, const StepWhy& s) {
  if (!f.found) {
    if (f.from == "error") {
      return fmt::format("refused at every {} from {} to {}", s.axis, s.from, s.top);
    }
    return fmt::format("{} at every {} from {} to {}", f.from, s.axis, s.from, s.top);
  }
  std::string to;
  if (f.to == "error") {
    to = fmt::format("refused from {} {} on", s.axis, f.value);
  } else if (f.to == "none") {
    to = fmt::format("absent from {} {} on", s.axis, f.value);
  } else {
    to = fmt::format("{} from {} {} on", f.to, s.axis, f.value);
  }
  if (f.from == "error") return fmt::format("refused up to {} {}, ", s.axis, f.value - 1) + to;
  // The first change FindFlipUp's doubling probe meets (docs/llm-model.md, Why).
  return fmt::format("{} until {} {}, ", f.from, s.axis, f.value - 1) + to;
}

}  // namespace

std::string RenderWhy(const Why& why) {
  std::ostringstream out;
  out << "\n== why ==\n";
  if (why.weight_bytes > 0) {
    const double factor = 2 / why.weight_bytes;
    out << fmt::format(
        "A weight matmul does 2 FLOP per weight per token and reads each {}-byte weight once per "
        "step,\nso its intensity is about {}the number of tokens in the step; at the ridge a "
        "kernel's\nmemory and compute terms are equal.\n",
        Num(why.weight_bytes), factor == 1 ? "" : Num(factor) + " x ");
  }
  for (const StepWhy& s : why.steps) {
    std::string head = s.label.empty() ? "the whole graph" : s.label;
    if (s.tokens > 0) {
      head += fmt::format(" ({} token{} per step)", s.tokens, s.tokens == 1 ? "" : "s");
    }
    if (s.ridge > 0) {
      const std::string of = s.level == 0 ? "" : " of " + s.level_name;
      out << fmt::format("{}: {} FLOP/B{}, {} the {} {} ridge of {} FLOP/B{}: {}\n", head,
                         Num(s.intensity), of, Against(s.intensity, s.ridge), why.device,
                         s.engine, Num(s.ridge), of, s.verdict);
    } else {
      out << fmt::format("{}: {} FLOP/B (no ridge: the device lists no bandwidth or no ceiling "
                         "for its FLOPs): {}\n",
                         head, Num(s.intensity), s.verdict);
    }
    for (const ClassWhy& c : s.classes) {
      std::string line =
          fmt::format("- {} {:.1f}% of the time, largest {}", NameOf(c.cls), c.share * 100, c.name);
      // Communication has no FLOPs per byte to speak of.
      if (c.cls != KernelClass::kComm) {
        line += fmt::format(" at {} FLOP/B{}", Num(c.intensity),
                            c.level == 0 ? "" : " of " + c.level_name);
      }
      if (s.axis.empty()) {
        line += ": " + c.verdict;
      } else {
        line += ": " + Along(c.flip, s);
        if (c.cls == KernelClass::kAttention && s.label == "decode" && s.axis == "batch" &&
            !c.flip.found && c.flip.from.rfind("memory:", 0) == 0) {
          line += "\n  (attention reads every sequence's own KV cache: its FLOP per byte does not "
                  "grow with the batch)";
        }
      }
      out << line << "\n";
    }
    if (!s.axis.empty()) out << "- the step as a whole: " << Along(s.step, s) << "\n";
  }
  if (why.max_batch >= 0) {
    bool capacity_first = false;
    for (const StepWhy& s : why.steps) {
      if (s.label != "decode") continue;
      for (const ClassWhy& c : s.classes) {
        if (c.cls == KernelClass::kMatmul && c.flip.found && why.max_batch < c.flip.value) {
          capacity_first = true;
        }
      }
    }
    if (why.max_batch == 0) {
      out << fmt::format("- at context {} not even batch 1 fits the device's memory\n",
                         why.context);
    } else {
      out << fmt::format("- at context {} the KV cache limits the batch to {}{}\n", why.context,
                         why.max_batch,
                         capacity_first
                             ? ": memory capacity is hit before the matmuls become compute-bound"
                             : "");
    }
  }
  return out.str();
}

}  // namespace roofline
