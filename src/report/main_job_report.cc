// The `== why ==` section of the bare `roofline` main job.
#include <fmt/format.h>

#include <sstream>

#include "roofline/report.h"
#include "roofline/units.h"

namespace roofline {

std::string RenderMainJobWhy(const ModelAnalysis& a, const DecodeFlips& flips,
                             const Device& device) {
  std::ostringstream out;
  out << "\n== why ==\n";
  const ComputeCeiling* peak = device.FindCompute("tensor.bf16");
  const double ridge = peak ? peak->peak.value / device.device_memory().bandwidth_bytes_per_s() : 0;
  out << fmt::format(
      "A weight matmul does 2 FLOP per weight per token and reads each 2-byte weight once per "
      "step,\nso its intensity is about the number of tokens in the step. The {} ridge is {} "
      "FLOP/B:\nprefill ({} tokens) sits above it, decode (one token per sequence) far below.\n",
      device.id, Num(ridge), a.workload.batch * a.workload.prompt);
  auto say = [&](const FlipPoint& p, const std::string& what) {
    if (p.found) {
      out << fmt::format("- decode {}: {} until batch {}, {} from batch {} on\n", what, p.from,
                         p.value - 1, p.to, p.value);
    } else {
      out << fmt::format("- decode {}: {} at every batch up to {}\n", what, p.from, flips.top);
    }
  };
  say(flips.matmul, "gate_proj (a weight matmul)");
  say(flips.attention,
      "attention (reads every sequence's KV cache: about heads/kv-heads FLOP per byte)");
  say(flips.step, "step as a whole");
  out << fmt::format("- at context {} the KV cache limits the batch to {}{}\n", a.workload.prompt,
                     a.max_batch,
                     flips.matmul.found && a.max_batch < flips.matmul.value
                         ? ": memory capacity is hit before the matmuls become compute-bound"
                         : "");
  return out.str();
}

}  // namespace roofline
