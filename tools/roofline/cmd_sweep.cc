// `roofline sweep MODEL --vary NAME=FROM:TO[:xF|+S] [--vary ...]`.
#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "roofline/network_analysis.h"
#include "roofline/network_report.h"
#include "roofline/plot.h"
#include "roofline/report.h"
#include "roofline/sweep.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/network_input.h"
#include "tools/roofline/workload_options.h"

namespace roofline::cli {

/// Options of `roofline sweep` beyond the workload flags.
struct SweepOptions {
  std::vector<std::string> vary;  ///< one or two NAME=FROM:TO[:xF|+S] or NAME=A,B,C
  std::string plot;               ///< SVG of time against the first variable
  std::string report;             ///< self-contained HTML page
  std::vector<std::string> dims;  ///< graph files: --dim NAME=VALUE for the other dimensions
  std::string explain;            ///< LLM sweeps: a kernel to derive around its crossovers
};

namespace {

/// `roofline sweep MODEL --vary hw=A,B,... [--vary NAME=...]`: the same sweep on each device.
int RunDeviceSweepCommand(Context& ctx, const CLI::App& app, const ModelOptions& o,
                          const SweepOptions& so, const std::vector<std::string>& hw_ids,
                          const std::vector<std::string>& vary) {
  if (app.count("--hw") > 0) {
    return Fail(ctx, Status::Invalid("--hw", "the devices are the --vary hw=... list"));
  }
  if (!so.plot.empty()) {
    return Fail(ctx, Status::Invalid("--plot",
                                     "draws one device; with --vary hw use --report "
                                     "(a chart per device)"));
  }
  std::vector<SweepAxis> axes;
  for (const std::string& v : vary) {
    Result<SweepAxis> a = ParseSweepAxis(v);
    if (!a.ok()) return Fail(ctx, a.status());
    axes.push_back(std::move(a).value());
  }
  Result<Setup> setup = Prepare(ctx, o);
  if (!setup.ok()) return Fail(ctx, setup.status());
  std::vector<Device> devices;
  devices.reserve(hw_ids.size());  // the cost models point into it
  std::vector<CostModel> models;
  for (const std::string& id : hw_ids) {
    Result<Device> d = ctx.ResolveHw(id);
    if (!d.ok()) return Fail(ctx, Status::Invalid("--vary hw", d.status().what()));
    devices.push_back(std::move(d).value());
    Result<CostOptions> cost = MakeCostOptions(o, devices.back());
    if (!cost.ok()) return Fail(ctx, cost.status());
    models.emplace_back(devices.back(), *cost);
  }
  Result<DeviceSweep> r =
      RunDeviceSweep(setup->config, setup->workload, models, Phases(o.phase), axes);
  if (!r.ok()) return Fail(ctx, r.status());
  std::vector<SweepVariable> swept;
  for (const SweepAxis& a : axes) swept.push_back(a.variable);
  std::string title = o.model + ": sweep hw";
  for (const SweepAxis& a : axes) title += " " + std::string(NameOf(a.variable));
  title += " (" + DescribeWorkload(setup->workload, setup->config, swept) + ")";
  const std::string table = RenderDeviceSweepTable(*r, title);
  if (!so.report.empty()) {
    HtmlDocument doc;
    doc.title = title;
    for (size_t i = 0; i < r->devices.size(); ++i) {
      const std::string sub_title = r->devices[i] + ": " + title;
      if (!r->fixed) doc.charts.push_back(RenderSweepSvg(r->sweeps[i], sub_title, devices[i]));
      HtmlTable t = SweepHtmlTable(r->sweeps[i]);
      t.caption = r->devices[i];
      doc.tables.push_back(std::move(t));
      for (std::string& a : CostModelAssumptions(models[i])) doc.assumptions.push_back(a);
    }
    doc.text = table;
    Status s = WriteFileAtomically(so.report, RenderHtml(doc));
    if (!s.ok()) return Fail(ctx, s);
  }
  if (o.format == OutputFormat::kJson) {
    *ctx.out << RenderDeviceSweepJson(*r, o.model);
  } else if (o.format == OutputFormat::kCsv) {
    *ctx.out << RenderDeviceSweepCsv(*r);
  } else {
    *ctx.out << table;
  }
  return kExitOk;
}

/// `roofline sweep GRAPH.json|model.onnx --vary DIM=...`: one symbolic dimension.
int RunNetworkSweep(Context& ctx, const CLI::App& app, const ModelOptions& o,
                    const SweepOptions& so) {
  Status s = RejectLlmFlags(app);
  if (!s.ok()) return Fail(ctx, s);
  if (o.format == OutputFormat::kCsv) {
    return Fail(ctx, Status::Invalid("--format csv", "graph sweeps print table or json"));
  }
  if (so.vary.size() != 1) {
    return Fail(ctx, Status::Invalid("--vary", "graph sweeps vary one dimension"));
  }
  Result<std::pair<std::string, std::vector<int64_t>>> axis = ParseDimAxis(so.vary[0]);
  if (!axis.ok()) return Fail(ctx, axis.status());
  // An ONNX model's dimensions are bound before shape inference: it is loaded once per value
  // (the first load, at the first value, also checks that the model has the dimension).
  const bool onnx = IsOnnxFile(o.model);
  std::vector<std::string> dim_args = so.dims;
  if (onnx) dim_args.push_back(axis->first + "=" + std::to_string(axis->second.front()));
  Result<NetRetype> retype = NetRetypeOf(o);
  if (!retype.ok()) return Fail(ctx, retype.status());
  Result<NetworkInput> in = LoadNetworkInput(ctx, o.model, o.hw, dim_args, *retype);
  if (!in.ok()) return Fail(ctx, in.status());
  const Device* device = &in->device;
  Result<CostOptions> options = MakeCostOptions(o, *device);
  if (!options.ok()) return Fail(ctx, options.status());
  options->efficiency = nullptr;  // network sweeps report time bounds only (not expected times yet)
  const CostModel model(*device, *options);
  Result<DimBindings> given = ParseDims(so.dims);
  if (!given.ok()) return Fail(ctx, given.status());
  // An ONNX model's graph is bound at its first value: its dimensions are checked while loading,
  // and none follows another.
  NetworkGraph onnx_dims;  // names and origin only: the loaded graph is not copied
  onnx_dims.origin = in->graph.origin;
  onnx_dims.dims = {{axis->first, axis->second.front()}};
  Result<NetSweepAxis> sweep_axis =
      MakeNetSweepAxis(onnx ? onnx_dims : in->graph, axis->first, axis->second, *given);
  if (!sweep_axis.ok()) return Fail(ctx, sweep_axis.status());
  Result<NetSweepResult> r = onnx ? SweepNetwork(
                                        [&](int64_t v) -> Result<NetworkGraph> {
                                          if (v == axis->second.front()) return in->graph;
                                          Result<DimBindings> dims = ParseDims(dim_args);
                                          if (!dims.ok()) return dims.status();
                                          (*dims)[axis->first] = v;
                                          return LoadNetworkRetyped(o.model, *dims, *retype);
                                        },
                                        in->bound, model, *sweep_axis)
                                  : SweepNetwork(in->graph, in->bound, model, *sweep_axis);
  if (!r.ok()) return Fail(ctx, r.status());
  std::string follows;
  for (const std::string& f : r->follow) follows += (follows.empty() ? "" : ", ") + f;
  const std::string title = r->name + " on " + device->id + ": sweep " + axis->first +
                            (follows.empty() ? "" : " (" + follows + " follows)") +
                            RetypeSuffix(*retype);
  const std::string table = RenderNetSweepTable(*r, title);
  const std::string svg = NetSweepChart(*r, title).svg;
  if (!so.plot.empty()) {
    Status w = WriteFileAtomically(so.plot, svg);
    if (!w.ok()) return Fail(ctx, w);
  }
  if (!so.report.empty()) {
    HtmlDocument doc;
    doc.title = title;
    doc.charts = {svg};
    doc.text = table;
    const size_t why = table.find("\ncrossovers");
    if (why != std::string::npos) doc.why = table.substr(why + 1);
    doc.assumptions = CostModelAssumptions(model);
    Status w = WriteFileAtomically(so.report, RenderHtml(doc));
    if (!w.ok()) return Fail(ctx, w);
  }
  *ctx.out << (o.format == OutputFormat::kJson ? RenderNetSweepJson(*r, device->id) : table);
  return kExitOk;
}

}  // namespace

int RunSweepCommand(Context& ctx) {
  CLI::App app{
      "Vary one or two workload variables; find exactly where the binding resource "
      "changes, where memory runs out and where communication overtakes compute.\n"
      "example: roofline sweep llama-3-8b --hw h100-sxm --vary batch=1:1024 --phase "
      "decode\n"
      "example: roofline sweep resnet50.json --hw h100-sxm --vary batch=1:64:x2 (a graph "
      "file or ONNX model: NAME is any of its symbolic dimensions)",
      "roofline sweep"};
  ModelOptions o;
  SweepOptions so;
  app.add_option("MODEL", o.model,
                 "preset id, config.json, or a directory holding one; or a graph file / ONNX "
                 "model")
      ->required();
  app.add_option("--vary", so.vary,
                 "NAME=FROM:TO (doubling), NAME=FROM:TO:xF, NAME=FROM:TO:+S or NAME=A,B,C; NAME "
                 "is batch, prompt, context, tp, dtype, weight-dtype or kv-dtype; once or twice; "
                 "integers take k and M (x1024, x1024^2): context=1k:128k; hw=ID,ID,... sweeps "
                 "the devices (with at most one other variable)")
      ->required();
  app.add_option("--phase", o.phase, "prefill, decode or both")
      ->check(CLI::IsMember({"prefill", "decode", "both"}))
      ->capture_default_str();
  AddWorkloadOptions(app, o);
  AddFormatOption(app, o.format, {"table", "json", "csv"});
  app.add_option("--plot", so.plot, "write an SVG of time against the first variable");
  app.add_option("--report", so.report, "write a self-contained HTML report");
  app.add_option("--dim", so.dims,
                 "graph files and ONNX models: bind another symbolic dimension, NAME=VALUE");
  app.add_option("--explain", so.explain,
                 "LLM configs: derive every figure of the kernel named KERNEL on both sides of "
                 "each crossover of its class (else at the first and last grid points)");
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (!so.explain.empty() && o.format != OutputFormat::kTable) {
    return Fail(ctx, Status::Invalid("--explain", "prints with --format table"));
  }
  // --vary hw=A,B,...: the devices, apart from the workload variables.
  std::vector<std::string> hw_ids, vary;
  for (const std::string& v : so.vary) {
    if (v.rfind("hw=", 0) != 0) {
      vary.push_back(v);
      continue;
    }
    if (!hw_ids.empty()) return Fail(ctx, Status::Invalid("--vary hw", "given twice"));
    std::string list = v.substr(3);
    size_t start = 0;
    while (start <= list.size()) {
      const size_t comma = std::min(list.find(',', start), list.size());
      const std::string id = list.substr(start, comma - start);
      if (id.empty()) {
        return Fail(ctx, Status::Invalid("--vary " + v, "expected hw=ID,ID,... (no empty ids)"));
      }
      if (std::find(hw_ids.begin(), hw_ids.end(), id) != hw_ids.end()) {
        return Fail(ctx, Status::Invalid("--vary " + v, "lists " + id + " twice"));
      }
      hw_ids.push_back(id);
      start = comma + 1;
    }
  }
  if (!so.explain.empty() && (!hw_ids.empty() || IsNetworkInput(o.model))) {
    return Fail(ctx, Status::Invalid("--explain", "applies to LLM sweeps on one device"));
  }
  if (!hw_ids.empty()) {
    if (IsNetworkInput(o.model)) {
      return Fail(ctx, Status::Invalid("--vary hw",
                                       "applies to LLM configs (graph files and "
                                       "ONNX models: one --hw per run)"));
    }
    if (!so.dims.empty()) {
      return Fail(ctx, Status::Invalid("--dim", "applies to graph files and ONNX models"));
    }
    return RunDeviceSweepCommand(ctx, app, o, so, hw_ids, vary);
  }
  if (IsNetworkInput(o.model)) return RunNetworkSweep(ctx, app, o, so);
  if (!so.dims.empty()) {
    return Fail(ctx, Status::Invalid("--dim", "applies to graph files and ONNX models"));
  }

  std::vector<SweepAxis> axes;
  for (const std::string& v : so.vary) {
    Result<SweepAxis> a = ParseSweepAxis(v);
    if (!a.ok()) return Fail(ctx, a.status());
    axes.push_back(std::move(a).value());
  }
  if (axes.size() > 2) return Fail(ctx, Status::Invalid("--vary", "at most two variables"));
  Result<Setup> setup = Prepare(ctx, o);
  if (!setup.ok()) return Fail(ctx, setup.status());
  const CostModel model(setup->device, setup->cost);
  Result<SweepResult> r = RunSweep(setup->config, setup->workload, model, Phases(o.phase), axes);
  if (!r.ok()) return Fail(ctx, r.status());
  std::string title = o.model + " on " + setup->device.id + ": sweep";
  for (const SweepAxis& a : axes) title += " " + std::string(NameOf(a.variable));
  std::vector<SweepVariable> swept;
  for (const SweepAxis& a : axes) swept.push_back(a.variable);
  title += " (" + DescribeWorkload(setup->workload, setup->config, swept) + ")";
  if (!so.plot.empty()) {
    Status s = WriteFileAtomically(so.plot, RenderSweepSvg(*r, title, setup->device));
    if (!s.ok()) return Fail(ctx, s);
  }
  if (!so.report.empty()) {
    HtmlDocument doc;
    doc.title = title;
    doc.charts = {RenderSweepSvg(*r, title, setup->device)};
    doc.tables = {SweepHtmlTable(*r)};
    doc.text = RenderSweepTable(*r, title);
    // The crossovers and never-flips are the sweep's why.
    const size_t why = doc.text.find("\nCrossovers");
    if (why != std::string::npos) doc.why = doc.text.substr(why + 1);
    doc.assumptions = CostModelAssumptions(model);
    Status s = WriteFileAtomically(so.report, RenderHtml(doc));
    if (!s.ok()) return Fail(ctx, s);
  }
  if (o.format == OutputFormat::kJson) {
    *ctx.out << RenderSweepJson(*r, o.model, setup->device.id);
  } else if (o.format == OutputFormat::kCsv) {
    WriteSweepCsv(*r, *ctx.out);
  } else {
    std::string explanation;
    if (!so.explain.empty()) {
      Result<std::string> e = RenderSweepKernelExplain(setup->config, setup->workload, model,
                                                       Phases(o.phase), *r, so.explain);
      if (!e.ok()) return Fail(ctx, e.status());
      explanation = *e;
    }
    *ctx.out << RenderSweepTable(*r, title) << explanation;
  }
  return kExitOk;
}

}  // namespace roofline::cli
