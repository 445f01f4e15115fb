// `roofline sweep MODEL --vary NAME=FROM:TO[:xF|+S] [--vary ...]`.
#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "roofline/network_report.h"
#include "roofline/network_run.h"
#include "roofline/plot.h"
#include "roofline/report.h"
#include "roofline/setup.h"
#include "roofline/sweep.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/scenario_options.h"

namespace roofline::cli {

/// Options of `roofline sweep` beyond the scenario's.
struct SweepOptions {
  std::vector<std::string> vary;  ///< one or two NAME=FROM:TO[:xF|+S] or NAME=A,B,C
  OutputFormat format = OutputFormat::kTable;
  JsonLayout layout = JsonLayout::kColumns;
  std::string plot;     ///< SVG of time against the first variable
  std::string report;   ///< self-contained HTML page
  std::string explain;  ///< LLM sweeps: a kernel to derive around its crossovers
};

namespace {

/// `roofline sweep MODEL --vary hw=A,B,... [--vary NAME=...]`: the same sweep on each device.
int RunDeviceSweepCommand(Context& ctx, const Scenario& s, const SweepOptions& so,
                          const std::vector<std::string>& hw_ids,
                          const std::vector<SweepAxis>& axes) {
  if (s.Given(FieldId::kHw)) {
    return Fail(ctx, Status::Invalid("--hw", "the devices are the --vary hw=... list"));
  }
  if (so.format == OutputFormat::kNpy) {
    return Fail(ctx, Status::Invalid("--format npy",
                                     "writes one device's sweep; with --vary hw use csv or json"));
  }
  if (!so.plot.empty()) {
    return Fail(ctx, Status::Invalid("--plot",
                                     "draws one device; with --vary hw use --report "
                                     "(a chart per device)"));
  }
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return Fail(ctx, db.status());
  Result<Setup> setup = Resolve(s, **db);
  if (!setup.ok()) return Fail(ctx, setup.status());
  std::vector<Device> devices;
  devices.reserve(hw_ids.size());  // the cost models point into it
  std::vector<CostModel> models;
  for (const std::string& id : hw_ids) {
    Result<Device> d = ResolveDevice(id, **db);
    if (!d.ok()) return Fail(ctx, Status::Invalid("--vary hw", d.status().what()));
    devices.push_back(std::move(d).value());
    Result<CostOptions> cost = MakeCostOptions(s, devices.back(), setup->cost.efficiency);
    if (!cost.ok()) return Fail(ctx, cost.status());
    models.emplace_back(devices.back(), *cost);
  }
  Result<DeviceSweep> r = RunDeviceSweep(setup->config, setup->workload, models, s.phases, axes);
  if (!r.ok()) return Fail(ctx, r.status());
  const std::string title = SweepTitle(s.model + ": sweep hw", axes, *setup);
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
    Status w = WriteFileAtomically(so.report, RenderHtml(doc));
    if (!w.ok()) return Fail(ctx, w);
  }
  if (so.format == OutputFormat::kJson) {
    *ctx.out << RenderDeviceSweepJson(*r, s.model, so.layout);
  } else if (so.format == OutputFormat::kCsv) {
    *ctx.out << RenderDeviceSweepCsv(*r);
  } else {
    *ctx.out << table;
  }
  return kExitOk;
}

/// `roofline sweep GRAPH.json|model.onnx|PRESET --vary DIM=...`: one symbolic dimension.
int RunNetworkSweepCommand(Context& ctx, const Scenario& s, const SweepOptions& so) {
  if (so.vary.size() != 1) {
    return Fail(ctx, Status::Invalid("--vary", "graph sweeps vary one dimension"));
  }
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return Fail(ctx, db.status());
  Result<NetSweepRun> r = SweepNetworkScenario(s, so.vary[0], **db);
  if (!r.ok()) return Fail(ctx, r.status());
  const std::string table = RenderNetSweepTable(r->sweep, r->title);
  const std::string svg = NetSweepChart(r->sweep, r->title).svg;
  std::vector<std::pair<std::string, std::string>> files;
  if (!so.plot.empty()) files.emplace_back(so.plot, svg);
  if (!so.report.empty()) {
    HtmlDocument doc;
    doc.title = r->title;
    doc.charts = {svg};
    doc.text = table;
    doc.assumptions = CostModelAssumptions(CostModel(r->device, r->cost));
    doc.why = NetSweepWhy(r->sweep).substr(1);
    files.emplace_back(so.report, RenderHtml(doc));
  }
  if (Status w = WriteFilesAtomically(files); !w.ok()) return Fail(ctx, w);
  if (so.format == OutputFormat::kJson) {
    WriteNetSweepJson(r->sweep, r->device.id, so.layout, *ctx.out);
  } else if (so.format == OutputFormat::kCsv) {
    WriteNetSweepCsv(r->sweep, *ctx.out);
  } else if (so.format == OutputFormat::kNpy) {
    WriteNetSweepNpy(r->sweep, *ctx.out);
  } else {
    *ctx.out << table;
  }
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
  Scenario s;
  SweepOptions so;
  app.add_option("MODEL", s.model, std::string(FieldOf(FieldId::kModel).help))->required();
  app.add_option("--vary", so.vary,
                 "NAME=FROM:TO (doubling), NAME=FROM:TO:xF, NAME=FROM:TO:+S or NAME=A,B,C; NAME "
                 "is batch, prompt, context, tp, dtype, weight-dtype or kv-dtype; once or twice; "
                 "integers take k and M (x1024, x1024^2): context=1k:128k; hw=ID,ID,... sweeps "
                 "the devices (with at most one other variable)")
      ->required();
  const ScenarioOptions options(app, WorkloadFields());
  AddFormatOption(app, so.format, {"table", "json", "csv", "npy"});
  std::string layout = "columns";
  app.add_option("--json-layout", layout,
                 "--format json: columns (\"schema\": 2, one array per column; default) or rows "
                 "(one object per point)")
      ->check(CLI::IsMember({"columns", "rows"}));
  app.add_option("--plot", so.plot, "write an SVG of time against the first variable");
  app.add_option("--report", so.report, "write a self-contained HTML report");
  app.add_option("--explain", so.explain,
                 "LLM configs: derive every figure of the kernel named KERNEL on both sides of "
                 "each crossover of its class (else at the first and last grid points)");
  if (auto done = ParseArgs(app, ctx)) return *done;
  if (Status st = options.Read(s); !st.ok()) return Fail(ctx, st);
  so.layout = layout == "rows" ? JsonLayout::kRows : JsonLayout::kColumns;
  if (app.count("--json-layout") > 0 && so.format != OutputFormat::kJson) {
    return Fail(ctx, Status::Invalid("--json-layout", "goes with --format json"));
  }
  if (!so.explain.empty() && so.format != OutputFormat::kTable) {
    return Fail(ctx, Status::Invalid("--explain", "prints with --format table"));
  }
  Result<SweepRequest> request = ParseSweepRequest(so.vary);
  if (!request.ok()) return Fail(ctx, request.status());
  const bool network = IsNetworkInput(s.model);
  if (!so.explain.empty() && (!request->devices.empty() || network)) {
    return Fail(ctx, Status::Invalid("--explain", "applies to LLM sweeps on one device"));
  }
  if (!request->devices.empty() && network) {
    return Fail(ctx, Status::Invalid("--vary hw",
                                     "applies to LLM configs (graph files and ONNX models: one "
                                     "--hw per run)"));
  }
  if (network) return RunNetworkSweepCommand(ctx, s, so);
  Result<std::vector<SweepAxis>> parsed = ParseSweepAxes(s, request->specs);
  if (!parsed.ok()) return Fail(ctx, parsed.status());
  const std::vector<SweepAxis>& axes = *parsed;
  if (!request->devices.empty()) return RunDeviceSweepCommand(ctx, s, so, request->devices, axes);
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return Fail(ctx, db.status());
  Result<Setup> setup = Resolve(s, **db);
  if (!setup.ok()) return Fail(ctx, setup.status());
  const CostModel model(setup->device, setup->cost);
  Result<SweepResult> r = RunSweep(setup->config, setup->workload, model, s.phases, axes);
  if (!r.ok()) return Fail(ctx, r.status());
  const std::string title = SweepTitle(s.model + " on " + setup->device.id + ": sweep", axes,
                                       *setup);
  // A bad --explain name fails before any file is written.
  std::string explanation;
  if (!so.explain.empty()) {
    Result<std::string> e = RenderSweepKernelExplain(setup->config, setup->workload, model,
                                                     s.phases, *r, so.explain);
    if (!e.ok()) return Fail(ctx, e.status());
    explanation = *e;
  }
  std::vector<std::pair<std::string, std::string>> files;
  if (!so.plot.empty() || !so.report.empty()) {
    const std::string svg = RenderSweepSvg(*r, title, setup->device);
    if (!so.plot.empty()) files.emplace_back(so.plot, svg);
    if (!so.report.empty()) {
      HtmlDocument doc;
      doc.title = title;
      doc.charts = {svg};
      doc.tables = {SweepHtmlTable(*r)};
      doc.text = RenderSweepTable(*r, title);
      doc.assumptions = CostModelAssumptions(model);
      doc.why = RenderSweepWhy(*r).substr(1);
      files.emplace_back(so.report, RenderHtml(doc));
    }
  }
  if (Status w = WriteFilesAtomically(files); !w.ok()) return Fail(ctx, w);
  if (so.format == OutputFormat::kJson) {
    WriteSweepJson(*r, s.model, setup->device.id, so.layout, *ctx.out);
  } else if (so.format == OutputFormat::kCsv) {
    WriteSweepCsv(*r, *ctx.out);
  } else if (so.format == OutputFormat::kNpy) {
    WriteSweepNpy(*r, *ctx.out);
  } else {
    *ctx.out << RenderSweepTable(*r, title) << explanation;
  }
  return kExitOk;
}

}  // namespace roofline::cli
