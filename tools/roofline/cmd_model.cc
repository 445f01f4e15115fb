// `roofline model MODEL ...` and `roofline models list`.
#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/network_report.h"
#include "roofline/network_run.h"
#include "roofline/plot.h"
#include "roofline/report.h"
#include "roofline/setup.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {
namespace {

/// What `model` prints beside the scenario.
struct ModelView {
  OutputFormat format = OutputFormat::kTable;
  std::string plot, report, explain;
  int top = 0;
};

/// Writes the chart and the HTML report a view asks for (both or neither).
Status WriteFiles(const ModelView& v, const Chart& chart, HtmlDocument doc) {
  std::vector<std::pair<std::string, std::string>> files;
  if (!v.plot.empty()) files.emplace_back(v.plot, chart.svg);
  if (!v.report.empty()) {
    doc.charts = {chart.svg};
    files.emplace_back(v.report, RenderHtml(doc));
  }
  return WriteFilesAtomically(files);
}

int RunNetworkModel(Context& ctx, const Scenario& s, const ModelView& v) {
  if (v.format == OutputFormat::kCsv) {
    return Fail(ctx,
                Status::Invalid("--format csv", "graph files and ONNX models print table or json"));
  }
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return Fail(ctx, db.status());
  Result<std::unique_ptr<NetworkRun>> run = RunNetworkScenario(s, **db);
  if (!run.ok()) return Fail(ctx, run.status());
  const NetworkRun& r = **run;
  const CostModel& model = *r.model;
  const DiffusionRun* per_image = r.diffusion ? &*r.diffusion : nullptr;
  const std::string table = RenderNetworkTable(r.analysis, model, v.top, per_image);
  if (v.format == OutputFormat::kJson && v.report.empty() && v.plot.empty()) {
    *ctx.out << RenderNetworkJson(r.analysis, model, per_image);
    return kExitOk;
  }
  const Why why = ExplainNetworkRun(r, s.model);
  if (!v.plot.empty() || !v.report.empty()) {
    std::vector<std::string> engines;
    const std::vector<RooflinePoint> points = NetworkRooflinePoints(r.analysis, model, &engines);
    HtmlDocument doc;
    doc.title = r.title;
    doc.tables = {NetworkHtmlTable(r.analysis, model)};
    doc.why = RenderWhy(why);
    doc.assumptions = CostModelAssumptions(model);
    for (const std::string& n : r.analysis.notes) doc.assumptions.push_back(n);
    doc.text = table;
    Status w = WriteFiles(v, RooflineChart(r.device, engines, points, r.title), std::move(doc));
    if (!w.ok()) return Fail(ctx, w);
  }
  if (v.format == OutputFormat::kJson) {
    *ctx.out << RenderNetworkJson(r.analysis, model, per_image);
  } else {
    *ctx.out << table << RenderWhy(why);
    if (s.cfg) *ctx.out << "(--cfg: the batches of the why are pass batches, two inputs per image)\n";
  }
  return kExitOk;
}

}  // namespace

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
  ModelView v;
  AddFormatOption(app, v.format, {"table", "json", "csv"});
  app.add_option("--top", v.top,
                 "table: show only the N kernels of each phase with the most time (0: all)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--explain", v.explain,
                 "derive every figure of the kernel named KERNEL (bound and expected time, each "
                 "ceiling with its source)");
  app.add_option("--plot", v.plot, "write the roofline of every kernel as an SVG file");
  app.add_option("--report", v.report, "write a self-contained HTML report (tables and roofline)");
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (Status st = options.Read(s); !st.ok()) return Fail(ctx, st);
  if (v.top > 0 && v.format != OutputFormat::kTable) {
    return Fail(ctx, Status::Invalid("--top", "applies to --format table"));
  }
  if (!v.explain.empty() && v.format != OutputFormat::kTable) {
    return Fail(ctx, Status::Invalid("--explain", "prints with --format table"));
  }
  if (IsNetworkInput(s.model)) {
    if (!v.explain.empty()) {
      return Fail(ctx, Status::Invalid("--explain",
                                       "applies to LLM configs (graph files and ONNX models: not "
                                       "yet)"));
    }
    return RunNetworkModel(ctx, s, v);
  }
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return Fail(ctx, db.status());
  Result<Setup> setup = Resolve(s, **db);
  if (!setup.ok()) return Fail(ctx, setup.status());
  const CostModel model(setup->device, setup->cost);
  Result<ModelAnalysis> a = AnalyzeModel(setup->config, setup->workload, model, s.phases);
  if (!a.ok()) return Fail(ctx, a.status());
  // A bad --explain name fails before any file is written.
  std::string explanation;
  if (!v.explain.empty()) {
    Result<std::string> e = RenderModelKernelExplain(*a, model, v.explain);
    if (!e.ok()) return Fail(ctx, e.status());
    explanation = *e;
  }
  const CostModel bound_only = BoundOnly(setup->cost, setup->device);
  if (!v.plot.empty() || !v.report.empty()) {
    std::vector<std::string> engines;
    const std::vector<RooflinePoint> points = RooflinePoints(*a, model, &engines);
    HtmlDocument doc;
    doc.title = s.model + " on " + setup->device.id + " (" +
                DescribeWorkload(setup->workload, setup->config) + ")";
    doc.tables = ModelHtmlTables(*a, model);
    doc.why = RenderWhy(ExplainModel(*a, bound_only));
    doc.assumptions = CostModelAssumptions(model);
    for (const std::string& n : a->notes) doc.assumptions.push_back(n);
    doc.text = RenderModelTable(*a, model);
    const Chart chart = RooflineChart(setup->device, engines, points, doc.title);
    Status w = WriteFiles(v, chart, std::move(doc));
    if (!w.ok()) return Fail(ctx, w);
  }
  if (v.format == OutputFormat::kJson) {
    *ctx.out << RenderModelJson(*a, model);
  } else if (v.format == OutputFormat::kCsv) {
    *ctx.out << RenderModelCsv(*a, model);
  } else {
    *ctx.out << RenderModelTable(*a, model, v.top) << explanation
             << RenderWhy(ExplainModel(*a, bound_only));
  }
  return kExitOk;
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
