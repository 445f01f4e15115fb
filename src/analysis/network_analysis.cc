// A lowered network costed on a device: each op its own (eager) kernel, totals, and the time
// bound by compute and by memory.
#include "roofline/network_analysis.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "roofline/units.h"

namespace roofline {

Result<NetworkAnalysis> AnalyzeNetwork(const NetworkGraph& g, const DimBindings& bindings,
                                       const CostModel& model) {
  Result<LoweredNetwork> lowered = LowerNetwork(g, bindings);
  if (!lowered.ok()) return lowered.status();
  NetworkAnalysis a;
  static_cast<LoweredNetwork&>(a) = std::move(lowered).value();
  static_cast<GraphCosts&>(a) = AnalyzeGraph(a.graph, model, FusionMode::kEager);
  Result<double> activations = PeakActivationBytes(g, a.dims);
  if (!activations.ok()) return activations.status();
  a.activation_bytes = *activations;
  const Device& d = model.device();
  for (const auto& [engine, flops] : UntimedFlops(a.costs)) {
    a.notes.push_back(
        fmt::format("{} requested at {} have no ceiling on {} (none listed to fall "
                    "back on), so only their bytes are timed",
                    Si(flops, "FLOP"), engine, d.id));
  }
  for (const FallbackFlops& f : FallbackTensorFlops(a.costs, d)) {
    a.notes.push_back(fmt::format(
        "{} requested at {} run at {}: {} lists no {} ceiling, and {} is the next in the "
        "fallback order (docs/cost-model.md, section 4)",
        Si(f.flops, "FLOP"), f.requested, f.used, d.id, f.requested, f.used));
  }
  if (d.model_split) {
    const double cap = d.device_memory().total_usable_bytes();
    a.notes.push_back(fmt::format(
        "costed on one chip: weights {} of a chip's {} {} ({}); graph inputs are not split "
        "over chips (the pipeline-stage model covers LLM configs)",
        Si(a.weight_bytes, "B"), Si(cap, "B"), d.device_memory().name,
        a.weight_bytes <= cap
            ? std::string("they fit")
            : fmt::format("they need at least {} chips", Num(std::ceil(a.weight_bytes / cap)))));
  }
  return a;
}

Result<DiffusionRun> DiffuseImages(const NetworkAnalysis& pass, int64_t steps, bool cfg) {
  if (steps < 1 || steps > 100000) {
    return Status::Invalid("--steps", fmt::format("must be in 1..100000, got {}", steps));
  }
  DiffusionRun run;
  run.steps = steps;
  run.cfg = cfg;
  const auto batch = pass.dims.find("batch");
  if (batch == pass.dims.end()) {
    if (cfg) {
      return Status::Invalid("--cfg",
                             "the graph has no symbolic dimension 'batch' to run the "
                             "conditional and unconditional inputs together");
    }
    run.pass_batch = 1;
    run.batchless = true;
  } else {
    run.pass_batch = batch->second;
  }
  if (cfg && run.pass_batch % 2 != 0) {
    return Status::Invalid("--cfg", fmt::format("the pass batch {} is odd: with classifier-free "
                                                "guidance it holds two inputs per image",
                                                run.pass_batch));
  }
  run.images = cfg ? run.pass_batch / 2 : run.pass_batch;
  const double n = static_cast<double>(steps);
  run.time_s = n * pass.totals.time_s;
  run.expected_time_s = pass.totals.has_expected ? n * pass.totals.expected_s : 0;
  return run;
}

}  // namespace roofline
