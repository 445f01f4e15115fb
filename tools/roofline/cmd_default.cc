// `roofline` with no arguments: the main job on embedded defaults - an LLM on a GPU, both phases,
// and where decode stops being memory-bound.
#include <ostream>

#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/report.h"
#include "tools/roofline/commands.h"
#include "tools/roofline/workload_options.h"

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
  CostOptions options;  // expected times on their defaults (achievable ceilings, eager)
  if (Status s = ApplyExpectedFlags(ExpectedFlags{}, *device, options); !s.ok()) return Fail(ctx, s);
  const CostModel model(*device, options);
  Workload w;
  w.batch = job.batch;
  w.prompt = job.prompt;
  Result<ModelAnalysis> a = AnalyzeModel(*config, w, model, PhaseSelection::kBoth);
  if (!a.ok()) return Fail(ctx, a.status());
  out << "roofline: " << job.model << " on " << device->name << ", batch " << job.batch
      << ", prompt " << job.prompt << " (defaults; `roofline model --help` to change them)\n\n";
  out << RenderModelTable(*a, model);

  // The flips are of the bound: search them without computing expected times at every probe.
  out << RenderMainJobWhy(*a, FindDecodeFlips(*config, w, CostModel(*device)), *device);
  return kExitOk;
}

}  // namespace roofline::cli
