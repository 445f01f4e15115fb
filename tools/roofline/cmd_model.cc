// `roofline model MODEL ...` and `roofline models list`.
#include <ostream>

#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/plot.h"
#include "roofline/report.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/workload_options.h"

namespace roofline::cli {

int RunModel(Context& ctx) {
  CLI::App app{
      "An LLM (HF config.json) on a device: per-kernel FLOPs, bytes, time bound and what "
      "binds it, for prefill and decode; latency and memory footprint.\n"
      "example: roofline model llama-3-8b --hw h100-sxm --batch 8 --prompt 2048",
      "roofline model"};
  ModelOptions o;
  app.add_option("MODEL", o.model,
                 "preset id (`roofline models list`), config.json, or a "
                 "directory holding one")
      ->required();
  app.add_option("--phase", o.phase, "prefill, decode or both")
      ->check(CLI::IsMember({"prefill", "decode", "both"}))
      ->capture_default_str();
  AddWorkloadOptions(app, o);
  AddFormatOption(app, o.format, {"table", "json", "csv"});
  std::string plot, report;
  app.add_option("--plot", plot, "write the roofline of every kernel as an SVG file");
  app.add_option("--report", report, "write a self-contained HTML report (tables and roofline)");
  if (auto done = ParseArgs(app, ctx)) return *done;

  Result<Setup> setup = Prepare(ctx, o);
  if (!setup.ok()) return Fail(ctx, setup.status());
  CostOptions options;
  options.launch_overhead_s = setup->workload.launch_overhead_s;
  const CostModel model(setup->device, options);
  Result<ModelAnalysis> a = AnalyzeModel(setup->config, setup->workload, model, Phases(o.phase));
  if (!a.ok()) return Fail(ctx, a.status());
  if (!plot.empty() || !report.empty()) {
    std::vector<std::string> engines;
    const std::vector<RooflinePoint> points = RooflinePoints(*a, model, &engines);
    const std::string title = o.model + " on " + setup->device.id + " (batch " +
                              std::to_string(setup->workload.batch) + ", prompt " +
                              std::to_string(setup->workload.prompt) + ")";
    const Chart chart = RooflineChart(setup->device, engines, points, title);
    if (!plot.empty()) {
      Status s = WriteFileAtomically(plot, chart.svg);
      if (!s.ok()) return Fail(ctx, s);
    }
    if (!report.empty()) {
      Status s =
          WriteFileAtomically(report, RenderHtml(title, RenderModelTable(*a, model), {chart.svg}));
      if (!s.ok()) return Fail(ctx, s);
    }
  }
  if (o.format == "json") {
    *ctx.out << RenderModelJson(*a, model);
  } else if (o.format == "csv") {
    *ctx.out << RenderModelCsv(*a, model);
  } else {
    *ctx.out << RenderModelTable(*a, model);
  }
  return kExitOk;
}

int RunModels(Context& ctx) {
  CLI::App app{"Model presets: data/models/*.json (HF config.json files with their source).",
               "roofline models"};
  app.require_subcommand(1, 1);
  app.add_subcommand("list", "ids, architectures, shapes and parameter counts");
  if (auto done = ParseArgs(app, ctx)) return *done;
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return Fail(ctx, registry.status());
  *ctx.out << RenderModelsList(*registry);
  return kExitOk;
}

}  // namespace roofline::cli
