// `roofline model MODEL ...` and `roofline models list`.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <ostream>

#include "roofline/model_analysis.h"
#include "roofline/model_registry.h"
#include "roofline/network_analysis.h"
#include "roofline/network_report.h"
#include "roofline/plot.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/network_input.h"
#include "tools/roofline/workload_options.h"

namespace roofline::cli {
namespace {

/// `roofline model GRAPH.json|model.onnx`: every node costed on the device.
/// A diffusion run of the network: `steps` passes per image batch (0: none), with classifier-free
/// guidance doubling each pass's batch.
struct DiffusionFlags {
  int64_t steps = 0;
  bool cfg = false;
};

/// With --cfg the batch of images B (--dim batch, else the graph's default) runs as a pass at
/// batch 2B: the --dim list with batch=2B in place of any batch binding.
Result<std::vector<std::string>> PassDims(Context& ctx, const ModelOptions& o,
                                          const std::vector<std::string>& dim_args,
                                          const NetRetype& retype) {
  Result<NetworkInput> in = LoadNetworkInput(ctx, o.model, o.hw, dim_args, retype);
  if (!in.ok()) return in.status();
  Result<DimBindings> all = ResolveDims(in->graph, in->bound);
  if (!all.ok()) return all.status();
  const auto batch = all->find("batch");
  if (batch == all->end()) {
    return Status::Invalid("--cfg",
                           "the graph has no symbolic dimension 'batch' to run the "
                           "conditional and unconditional inputs together");
  }
  if (batch->second > (int64_t{1} << 39)) {
    return Status::Invalid("--cfg", "twice the batch would exceed 2^40");
  }
  std::vector<std::string> out;
  for (const std::string& d : dim_args) {
    if (d.rfind("batch=", 0) != 0) out.push_back(d);
  }
  out.push_back("batch=" + std::to_string(2 * batch->second));
  return out;
}

int RunNetworkModel(Context& ctx, const CLI::App& app, const ModelOptions& o,
                    const std::vector<std::string>& given_dims, const std::string& plot,
                    const std::string& report, int top, const DiffusionFlags& diffusion) {
  Status s = RejectLlmFlags(app);
  if (!s.ok()) return Fail(ctx, s);
  if (o.format == OutputFormat::kCsv) {
    return Fail(ctx, Status::Invalid("--format csv",
                                     "graph files and ONNX models print table or "
                                     "json"));
  }
  Result<NetRetype> retype = NetRetypeOf(o);
  if (!retype.ok()) return Fail(ctx, retype.status());
  std::vector<std::string> dim_args = given_dims;
  if (diffusion.cfg) {
    Result<std::vector<std::string>> pass = PassDims(ctx, o, given_dims, *retype);
    if (!pass.ok()) return Fail(ctx, pass.status());
    dim_args = *pass;
  }
  Result<NetworkInput> in = LoadNetworkInput(ctx, o.model, o.hw, dim_args, *retype);
  if (!in.ok()) return Fail(ctx, in.status());
  const NetworkGraph& graph = in->graph;
  const DimBindings& bound = in->bound;
  const Device* device = &in->device;
  Result<CostOptions> options = MakeCostOptions(o, *device);
  if (!options.ok()) return Fail(ctx, options.status());
  const CostModel model(*device, *options);
  Result<NetworkAnalysis> a = AnalyzeNetwork(graph, bound, model);
  if (!a.ok()) return Fail(ctx, a.status());
  std::optional<DiffusionRun> run;
  if (diffusion.steps > 0) {
    Result<DiffusionRun> r = DiffuseImages(*a, diffusion.steps, diffusion.cfg);
    if (!r.ok()) return Fail(ctx, r.status());
    run = *r;
  }
  const DiffusionRun* per_image = run ? &*run : nullptr;
  const std::string table = RenderNetworkTable(*a, model, top, per_image);
  std::string title, chart_svg;
  if (!plot.empty() || !report.empty()) {
    std::vector<std::string> engines;
    std::vector<RooflinePoint> points;
    for (const KernelCost& c : a->costs) {
      for (int e = 0; e < c.num_engines; ++e) {
        const std::string name = model.CeilingName(c.engines[e]);
        if (name != "none" && c.engines[e].flops > 0 &&
            std::find(engines.begin(), engines.end(), name) == engines.end()) {
          engines.push_back(name);
        }
      }
      if (c.flops <= 0 || c.bytes[0] <= 0 || c.time_s <= 0) continue;
      RooflinePoint pt{c.name, "network", c.Intensity(0), c.attainable_flops_per_s,
                       a->totals.time_s > 0 ? c.time_s / a->totals.time_s : 0};
      pt.tip = fmt::format(
          "{}\n{} FLOP, {} through {}, {} FLOP/B\ntime {} ({}), {:.1f}% of the "
          "pass",
          c.name, Si(c.flops, ""), Si(c.bytes[0], "B"), device->memory[0].name, Num(c.Intensity(0)),
          Seconds(c.time_s), model.BoundName(c), 100 * pt.share);
      points.push_back(std::move(pt));
    }
    std::string dims_text;
    for (const auto& [name, value] : a->dims) {
      dims_text += (dims_text.empty() ? " (" : ", ") + name + " " + std::to_string(value);
    }
    if (!dims_text.empty()) dims_text += ")";
    title = a->name + " on " + device->id + dims_text;
    chart_svg = RooflineChart(*device, engines, points, title).svg;
    if (!plot.empty()) {
      Status w = WriteFileAtomically(plot, chart_svg);
      if (!w.ok()) return Fail(ctx, w);
    }
  }
  if (o.format == OutputFormat::kJson && report.empty()) {
    *ctx.out << RenderNetworkJson(*a, model, per_image);
    return kExitOk;
  }
  // The why's flips are of the bound; an ONNX model is loaded again at each value searched.
  const Why why = ExplainNetwork(
      *a, BoundOnly(*options, *device),
      [&](int64_t v) -> Result<NetworkGraph> {
        if (!IsOnnxFile(o.model)) return graph;
        Result<DimBindings> dims = ParseDims(dim_args);
        if (!dims.ok()) return dims.status();
        (*dims)["batch"] = v;
        return LoadNetworkRetyped(o.model, *dims, *retype);
      },
      bound);
  if (!report.empty()) {
    HtmlDocument doc;
    doc.title = title;
    doc.charts = {chart_svg};
    doc.tables = {NetworkHtmlTable(*a, model)};
    doc.why = RenderWhy(why);
    doc.assumptions = CostModelAssumptions(model);
    for (const std::string& n : a->notes) doc.assumptions.push_back(n);
    doc.text = table;
    Status w = WriteFileAtomically(report, RenderHtml(doc));
    if (!w.ok()) return Fail(ctx, w);
  }
  if (o.format == OutputFormat::kJson) {
    *ctx.out << RenderNetworkJson(*a, model, per_image);
  } else {
    *ctx.out << table << RenderWhy(why);
    if (diffusion.cfg) {
      *ctx.out << "(--cfg: the batches of the why are pass batches, two inputs per image)\n";
    }
  }
  return kExitOk;
}

}  // namespace

int RunModel(Context& ctx) {
  CLI::App app{
      "An LLM (HF config.json) on a device: per-kernel FLOPs, bytes, time bound and what "
      "binds it, for prefill and decode; latency and memory footprint. Also a general network "
      "(graph file, docs/graph-format.md, or ONNX model): every node costed.\n"
      "example: roofline model llama-3-8b --hw h100-sxm --batch 8 --prompt 2048\n"
      "example: roofline model resnet50.json --hw h100-sxm --dim batch=8",
      "roofline model"};
  ModelOptions o;
  app.add_option("MODEL", o.model,
                 "preset id (`roofline models list`), config.json, or a "
                 "directory holding one; or a graph file (.json) or ONNX model (.onnx)")
      ->required();
  std::vector<std::string> dims;
  app.add_option("--dim", dims,
                 "graph files and ONNX models: bind a symbolic dimension, NAME=VALUE "
                 "(repeatable)");
  app.add_option("--phase", o.phase, "prefill, decode or both")
      ->check(CLI::IsMember({"prefill", "decode", "both"}))
      ->capture_default_str();
  AddWorkloadOptions(app, o);
  AddFormatOption(app, o.format, {"table", "json", "csv"});
  std::string plot, report, explain;
  int top = 0;
  app.add_option("--top", top,
                 "table: show only the N kernels of each phase with the most time (0: all)")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--explain", explain,
                 "derive every figure of the kernel named KERNEL (bound and expected time, each "
                 "ceiling with its source)");
  app.add_option("--plot", plot, "write the roofline of every kernel as an SVG file");
  app.add_option("--report", report, "write a self-contained HTML report (tables and roofline)");
  DiffusionFlags diffusion;
  app.add_option("--steps", diffusion.steps,
                 "graph files and presets of a diffusion denoiser: N passes per image (seconds "
                 "per image, images/s)");
  app.add_flag("--cfg", diffusion.cfg,
               "with --steps: classifier-free guidance, each pass at twice the batch of images "
               "(--dim batch = images per batch)");
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (diffusion.cfg && app.count("--steps") == 0) {
    return Fail(ctx, Status::Invalid("--cfg", "goes with --steps N (the denoising steps)"));
  }
  if (app.count("--steps") > 0 && (diffusion.steps < 1 || diffusion.steps > 100000)) {
    return Fail(ctx, Status::Invalid("--steps", "must be in 1..100000, got " +
                                                    std::to_string(diffusion.steps)));
  }
  if ((app.count("--steps") > 0 || diffusion.cfg) && !IsNetworkInput(o.model)) {
    // An unknown name gets the unknown-model error (with the network presets suggested).
    std::error_code ec;
    if (!std::filesystem::exists(o.model, ec)) {
      Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
      if (!registry.ok()) return Fail(ctx, registry.status());
      Result<const ModelPreset*> known = registry->Find(o.model);
      if (!known.ok()) return Fail(ctx, known.status());
    }
    return Fail(ctx, Status::Invalid(app.count("--steps") > 0 ? "--steps" : "--cfg",
                                     "applies to graph files, ONNX models and network presets "
                                     "(a diffusion denoiser), not to the LLM '" +
                                         o.model + "'"));
  }
  if (!explain.empty() && IsNetworkInput(o.model)) {
    return Fail(ctx, Status::Invalid("--explain",
                                     "applies to LLM configs (graph files and ONNX "
                                     "models: not yet)"));
  }
  if (top > 0 && o.format != OutputFormat::kTable) {
    return Fail(ctx, Status::Invalid("--top", "applies to --format table"));
  }
  if (!explain.empty() && o.format != OutputFormat::kTable) {
    return Fail(ctx, Status::Invalid("--explain", "prints with --format table"));
  }
  if (IsNetworkInput(o.model)) {
    return RunNetworkModel(ctx, app, o, dims, plot, report, top, diffusion);
  }
  if (!dims.empty()) {
    return Fail(ctx, Status::Invalid("--dim",
                                     "applies to graph files and ONNX models, not to "
                                     "the LLM config '" +
                                         o.model + "'"));
  }

  Result<Setup> setup = Prepare(ctx, o);
  if (!setup.ok()) return Fail(ctx, setup.status());
  const CostModel model(setup->device, setup->cost);
  Result<ModelAnalysis> a = AnalyzeModel(setup->config, setup->workload, model, Phases(o.phase));
  if (!a.ok()) return Fail(ctx, a.status());
  // A bad --explain name fails before any file is written.
  std::string explanation;
  if (!explain.empty()) {
    Result<std::string> e = RenderModelKernelExplain(*a, model, explain);
    if (!e.ok()) return Fail(ctx, e.status());
    explanation = *e;
  }
  if (!plot.empty() || !report.empty()) {
    std::vector<std::string> engines;
    const std::vector<RooflinePoint> points = RooflinePoints(*a, model, &engines);
    const std::string title = o.model + " on " + setup->device.id + " (" +
                              DescribeWorkload(setup->workload, setup->config) + ")";
    const Chart chart = RooflineChart(setup->device, engines, points, title);
    if (!plot.empty()) {
      Status s = WriteFileAtomically(plot, chart.svg);
      if (!s.ok()) return Fail(ctx, s);
    }
    if (!report.empty()) {
      HtmlDocument doc;
      doc.title = title;
      doc.charts = {chart.svg};
      doc.tables = ModelHtmlTables(*a, model);
      doc.why = RenderWhy(ExplainModel(*a, BoundOnly(setup->cost, setup->device)));
      doc.assumptions = CostModelAssumptions(model);
      for (const std::string& n : a->notes) doc.assumptions.push_back(n);
      doc.text = RenderModelTable(*a, model);
      Status s = WriteFileAtomically(report, RenderHtml(doc));
      if (!s.ok()) return Fail(ctx, s);
    }
  }
  if (o.format == OutputFormat::kJson) {
    *ctx.out << RenderModelJson(*a, model);
  } else if (o.format == OutputFormat::kCsv) {
    *ctx.out << RenderModelCsv(*a, model);
  } else {
    *ctx.out << RenderModelTable(*a, model, top) << explanation
             << RenderWhy(ExplainModel(*a, BoundOnly(setup->cost, setup->device)));
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
