// `roofline` with no arguments: the main job on embedded defaults - an LLM on a GPU, both phases,
// and where decode stops being memory-bound.
#include <ostream>

#include "roofline/model_analysis.h"
#include "roofline/network.h"
#include "roofline/report.h"
#include "roofline/setup.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/commands.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {

int RunDefault(Context& ctx) {
  // The main job takes the model and workload options of `roofline model` (`roofline --hw
  // h200 --batch 8`); every default is `model`'s, and the model is llama-3-8b.
  CLI::App app{
      "The main job: an LLM on a device, both phases, and why each is bound where it is.\n"
      "example: roofline --model llama-3-70b --hw h200 --batch 8 --tp 2",
      "roofline"};
  const ScenarioOptions options(
      app, Without(ScenarioFieldsOf(kScopeLlm), {FieldId::kPhase}) |
               FieldSet().set(static_cast<size_t>(FieldId::kModel)));
  if (auto done = ParseArgs(app, ctx)) return *done;
  Scenario s;
  if (Status st = options.Read(s); !st.ok()) return Fail(ctx, st);
  if (IsNetworkInput(s.model)) {
    return Fail(ctx, Status::Invalid("--model",
                                     "the main job takes LLM configs; for a graph file "
                                     "or ONNX model use `roofline model " +
                                         s.model + "`"));
  }
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return Fail(ctx, db.status());
  Result<Setup> setup = Resolve(s, **db);
  if (!setup.ok()) return Fail(ctx, setup.status());
  const CostModel model(setup->device, setup->cost);
  const Workload& w = setup->workload;
  Result<ModelAnalysis> a = AnalyzeModel(setup->config, w, model, PhaseSelection::kBoth);
  if (!a.ok()) return Fail(ctx, a.status());
  std::ostream& out = *ctx.out;
  if (ctx.args.empty()) {
    out << "roofline: " << s.model << " on " << setup->device.name << ", batch " << w.batch
        << ", prompt " << w.prompt << " (defaults; `roofline model --help` to change them)\n\n";
  } else {
    out << "roofline: " << s.model << " on " << setup->device.name << ", "
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
