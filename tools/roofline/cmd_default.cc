// `roofline` with no arguments: the main job on embedded defaults - an LLM on a GPU, both phases,
// and where decode stops being memory-bound.
#include <fmt/format.h>

#include <ostream>

#include "roofline/flip.h"
#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "tools/roofline/commands.h"

namespace roofline::cli {

/// The defaults of the main job.
struct DefaultJob {
  std::string model = "llama-3-8b";
  std::string device = "h100-sxm";
  int64_t batch = 1;
  int64_t prompt = 2048;
};

int RunDefault(Context& ctx) {
  const DefaultJob job;
  std::ostream& out = *ctx.out;
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return Fail(ctx, registry.status());
  Result<TransformerConfig> config = ResolveModel(job.model, *registry);
  if (!config.ok()) return Fail(ctx, config.status());
  Result<Device> device = ctx.ResolveHw(job.device);
  if (!device.ok()) return Fail(ctx, device.status());
  const CostModel model(*device);
  Workload w;
  w.batch = job.batch;
  w.prompt = job.prompt;
  Result<ModelAnalysis> a = AnalyzeModel(*config, w, model, PhaseSelection::kBoth);
  if (!a.ok()) return Fail(ctx, a.status());
  out << "roofline: " << job.model << " on " << device->name << ", batch " << job.batch
      << ", prompt " << job.prompt << " (defaults; `roofline model --help` to change them)\n\n";
  out << RenderModelTable(*a, model);

  // Where decode's verdict flips as the batch grows: one weight matmul, attention, the step.
  auto decode_bound = [&](int64_t b, const std::string& kernel) -> std::string {
    Workload wb = w;
    wb.batch = b;
    Result<ModelAnalysis> r = AnalyzeModel(*config, wb, model, PhaseSelection::kDecode);
    if (!r.ok()) return "error";
    if (kernel.empty()) return NameOf(r->phases[0].totals.verdict, model.device());
    for (const KernelCost& k : r->phases[0].costs) {
      if (k.name == kernel) return model.BoundName(k);
    }
    return "none";
  };
  const int64_t top = int64_t{1} << 16;
  const FlipPoint mlp = FindFlipUp([&](int64_t b) { return decode_bound(b, "gate_proj"); }, 1, top);
  const FlipPoint att = FindFlipUp([&](int64_t b) { return decode_bound(b, "attention"); }, 1, top);
  const FlipPoint step = FindFlipUp([&](int64_t b) { return decode_bound(b, ""); }, 1, top);
  out << "\n== why ==\n";
  const ComputeCeiling* peak = device->FindCompute("tensor.bf16");
  const double ridge =
      peak ? peak->peak.value / device->device_memory().bandwidth_bytes_per_s() : 0;
  out << fmt::format(
      "A weight matmul does 2 FLOP per weight per token and reads each 2-byte weight once per "
      "step,\nso its intensity is about the number of tokens in the step. The {} ridge is {} "
      "FLOP/B:\nprefill ({} tokens) sits above it, decode (one token per sequence) far below.\n",
      device->id, Num(ridge), job.batch * job.prompt);
  auto say = [&](const FlipPoint& p, const std::string& what) {
    if (p.found) {
      out << fmt::format("- decode {}: {} until batch {}, {} from batch {} on\n", what, p.from,
                         p.value - 1, p.to, p.value);
    } else {
      out << fmt::format("- decode {}: {} at every batch up to {}\n", what, p.from, top);
    }
  };
  say(mlp, "gate_proj (a weight matmul)");
  say(att, "attention (reads every sequence's KV cache: about heads/kv-heads FLOP per byte)");
  say(step, "step as a whole");
  out << fmt::format("- at context {} the KV cache limits the batch to {}{}\n", job.prompt,
                     a->max_batch,
                     mlp.found && a->max_batch < mlp.value
                         ? ": memory capacity is hit before the matmuls become compute-bound"
                         : "");
  return kExitOk;
}

}  // namespace roofline::cli
