// `roofline` with no arguments: the main job on embedded defaults - an LLM on a GPU, both phases,
// and where decode stops being memory-bound.
#include <ostream>

#include "roofline/device_db.h"
#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/report.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/commands.h"
#include "tools/roofline/network_input.h"
#include "tools/roofline/workload_options.h"

namespace roofline::cli {

/// The main job's model when none is given.
constexpr const char* kDefaultModel = "llama-3-8b";

int RunDefault(Context& ctx) {
  // The main job takes the model and workload options of `roofline model` (`roofline --hw
  // h200 --batch 8`); every default is `model`'s, and the model is llama-3-8b.
  CLI::App app{
      "The main job: an LLM on a device, both phases, and why each is bound where it is.\n"
      "example: roofline --model llama-3-70b --hw h200 --batch 8 --tp 2",
      "roofline"};
  ModelOptions o;
  o.model = kDefaultModel;
  app.add_option("--model", o.model,
                 "preset id (`roofline models list`), config.json, or a directory holding one")
      ->capture_default_str();
  AddWorkloadOptions(app, o);
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (IsNetworkInput(o.model)) {
    return Fail(ctx, Status::Invalid("--model",
                                     "the main job takes LLM configs; for a graph file "
                                     "or ONNX model use `roofline model " +
                                         o.model + "`"));
  }
  Result<Setup> setup = Prepare(ctx, o);
  if (!setup.ok()) return Fail(ctx, setup.status());
  const CostModel model(setup->device, setup->cost);
  const Workload& w = setup->workload;
  Result<ModelAnalysis> a = AnalyzeModel(setup->config, w, model, PhaseSelection::kBoth);
  if (!a.ok()) return Fail(ctx, a.status());
  std::ostream& out = *ctx.out;
  if (ctx.args.empty()) {
    out << "roofline: " << o.model << " on " << setup->device.name << ", batch " << w.batch
        << ", prompt " << w.prompt << " (defaults; `roofline model --help` to change them)\n\n";
  } else {
    out << "roofline: " << o.model << " on " << setup->device.name << ", "
        << DescribeWorkload(w, setup->config)
        << " (workload options as in `roofline model`; tables, plots and formats: `roofline "
           "model`)\n\n";
  }
  out << RenderModelTable(*a, model);

  // The flips are of the bound: search them without computing expected times at every probe.
  out << RenderWhy(ExplainModel(*a, BoundOnly(setup->cost, setup->device)));
  return kExitOk;
}

}  // namespace roofline::cli
