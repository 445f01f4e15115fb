// `roofline model MODEL ...` and `roofline models list`.
#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "roofline/model_registry.h"
#include "roofline/network_run.h"
#include "roofline/report.h"
#include "roofline/views.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {

int RunModel(Context& ctx) {
  CLI::App app{
      "An LLM (HF config.json) on a device: per-kernel FLOPs, bytes, time bound and what "
      "binds it, for prefill and decode; latency and memory footprint. Also a general network "
      "(graph file, docs/graph-format.md, ONNX model or network preset): every node costed.\n"
      "example: roofline model llama-3-8b --hw h100-sxm --batch 8 --prompt 2048\n"
      "example: roofline model resnet50.json --hw h100-sxm --dim batch=8",
      "roofline model"};
  Scenario s;
  app.add_option("MODEL", s.model, std::string(FieldOf(FieldId::kModel).help))->required();
  const ScenarioOptions options(app, WorkloadFields());
  ModelViewOptions v;
  ViewRequest request;
  AddFormatOption(app, request.format, {"table", "json", "csv"});
  CLI::Option* top = app.add_option(
      "--top", v.top,
      "table: show only the N kernels of each phase with the most time (0: all; default: all "
      "of an LLM, the 30 with the most time of a network of more than 60)");
  top->check(CLI::Range(0, 1000000));
  app.add_option("--explain", v.explain,
                 "derive every figure of the kernel named KERNEL (bound and expected time, each "
                 "ceiling with its source)");
  app.add_option("--plot", request.plot, "write the roofline of every kernel as an SVG file");
  app.add_option("--report", request.report, "write a self-contained HTML report (tables and roofline)");
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (Status st = options.Read(s); !st.ok()) return Fail(ctx, st);
  v.top_given = top->count() > 0;
  Result<Views> views = ModelViews(s, v, request, [&ctx] { return ctx.Database(); });
  if (!views.ok()) return Fail(ctx, views.status());
  return Emit(ctx, *views, request);
}

int RunModels(Context& ctx) {
  CLI::App app{
      "Model presets: LLMs (data/models/*.json, HF config.json files with their source) "
      "and networks (data/graphs/*.json, graphs captured by "
      "scripts/capture-presets.py).",
      "roofline models"};
  app.require_subcommand(1, 1);
  CLI::App* list = app.add_subcommand(
      "list",
      "ids, architectures, shapes and parameter counts of the LLM presets; then the "
      "network presets with nodes, parameters and matrix FLOPs per pass");
  OutputFormat format = OutputFormat::kTable;
  AddFormatOption(*list, format, {"table", "json"});
  if (auto done = ParseArgs(app, ctx)) return *done;
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return Fail(ctx, registry.status());
  Result<std::vector<GraphPresetInfo>> networks = DescribeGraphPresets();
  if (!networks.ok()) return Fail(ctx, networks.status());
  *ctx.out << (format == OutputFormat::kJson ? RenderModelsListJson(*registry, *networks)
                                             : RenderModelsList(*registry, *networks));
  return kExitOk;
}

}  // namespace roofline::cli
