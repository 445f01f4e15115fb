// `model` and `sweep` as one library call each: the scenario checked against what is asked to be
// written, run, and handed back as views (roofline/views.h).
#include "roofline/views.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "roofline/model_analysis.h"
#include "roofline/network_report.h"
#include "roofline/network_run.h"
#include "roofline/report.h"
#include "roofline/setup.h"
#include "roofline/sweep.h"
#include "roofline/trust.h"
#include "roofline/units.h"
#include "roofline/why.h"

namespace roofline {

namespace {

// `f` computed on its first call and kept: a chart is both the --plot file and part of the
// --report page, a why both the table's end and the page's.
template <typename F>
auto Once(F f) {
  using T = decltype(f());
  auto kept = std::make_shared<std::optional<T>>();
  return [f = std::move(f), kept] {
    if (!kept->has_value()) kept->emplace(f());
    return **kept;
  };
}

// An LLM's analysis, kept in place (the cost models point into the setup's device).
struct LlmModelRun {
  Setup setup;
  std::optional<CostModel> model;
  std::optional<CostModel> bound_only;
  ModelAnalysis analysis;
  std::string title, explanation;
};

Result<Views> NetworkModelViews(const Scenario& s, const ModelViewOptions& o,
                                const ViewRequest& request, const DatabaseSource& db) {
  if (request.format == OutputFormat::kCsv) {
    return Status::Invalid("--format csv", "graph files and ONNX models print table or json");
  }
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<std::unique_ptr<NetworkRun>> run = RunNetworkScenario(s, **loaded);
  if (!run.ok()) return run.status();
  std::shared_ptr<const NetworkRun> r = std::move(run).value();
  const DiffusionRun* per_image = r->diffusion ? &*r->diffusion : nullptr;
  const int top = o.top_given || r->analysis.kernels.size() <= 2 * kNetworkTopDefault
                      ? o.top
                      : kNetworkTopDefault;
  auto table = Once([r, per_image, top] {
    return RenderNetworkTable(r->analysis, *r->model, top, per_image);
  });
  auto why = Once([r, model = s.model] { return RenderWhy(ExplainNetworkRun(*r, model)); });
  Views v;
  v.chart = Once([r] {
    std::vector<std::string> engines;
    const std::vector<RooflinePoint> points = NetworkRooflinePoints(r->analysis, *r->model, &engines);
    return RooflineChart(r->device, engines, points, r->title).svg;
  });
  v.report = [r, table, why, chart = v.chart] {
    HtmlDocument doc;
    doc.title = r->title;
    doc.tables = {NetworkHtmlTable(r->analysis, *r->model)};
    doc.why = why();
    doc.assumptions = CostModelAssumptions(*r->model);
    for (const std::string& n : r->analysis.notes) doc.assumptions.push_back(n);
    doc.text = table();
    doc.charts = {chart()};
    return doc;
  };
  if (request.format == OutputFormat::kJson) {
    v.out = [r, per_image](std::ostream& out) {
      out << RenderNetworkJson(r->analysis, *r->model, per_image);
    };
  } else {
    v.out = [table, why, cfg = s.cfg](std::ostream& out) {
      out << table() << why();
      if (cfg) out << "(--cfg: the batches of the why are pass batches, two inputs per image)\n";
    };
  }
  return v;
}

}  // namespace

Result<Views> ModelViews(const Scenario& s, const ModelViewOptions& o, const ViewRequest& request,
                         const DatabaseSource& db) {
  if (o.top > 0 && request.format != OutputFormat::kTable) {
    return Status::Invalid("--top", "applies to --format table");
  }
  if (!o.explain.empty() && request.format != OutputFormat::kTable) {
    return Status::Invalid("--explain", "prints with --format table");
  }
  if (IsNetworkInput(s.model)) {
    if (!o.explain.empty()) {
      return Status::Invalid("--explain",
                             "applies to LLM configs (graph files and ONNX models: not yet)");
    }
    return NetworkModelViews(s, o, request, db);
  }
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<Setup> setup = Resolve(s, **loaded);
  if (!setup.ok()) return setup.status();
  auto r = std::make_shared<LlmModelRun>();
  r->setup = std::move(setup).value();
  const Setup& st = r->setup;
  r->model.emplace(st.device, st.cost);
  Result<ModelAnalysis> a = AnalyzeModel(st.config, st.workload, *r->model, s.phases);
  if (!a.ok()) return a.status();
  r->analysis = std::move(a).value();
  // How far to trust each expected time; without the published runs (a data directory that
  // lacks them), said in a note rather than failing the analysis.
  if (r->model->has_expected()) {
    if (Status b = AttachBands(r->analysis, st.device, st.cost, **loaded); !b.ok()) {
      r->analysis.notes.push_back("no trust band: " + b.ToString());
    }
  }
  // A bad --explain name fails before any file is written.
  if (!o.explain.empty()) {
    Result<std::string> e = RenderModelKernelExplain(r->analysis, *r->model, o.explain);
    if (!e.ok()) return e.status();
    r->explanation = std::move(e).value();
    for (const PhaseResult& p : r->analysis.phases) {
      if (!p.band.has_value() || p.band->empty()) continue;
      r->explanation += fmt::format("\n{} trust: {}\npublished runs behind the {} trust band ({}):\n",
                                    NameOf(p.phase), DescribeBand(*p.band, p.totals.expected_s),
                                    NameOf(p.phase), DescribeTrustGroup(p.band->key, p.band->level));
      r->explanation += RenderBandRuns(*p.band);
    }
  }
  r->bound_only.emplace(BoundOnly(st.cost, st.device));
  r->title = s.model + " on " + st.device.id + " (" + DescribeWorkload(st.workload, st.config) + ")";
  std::shared_ptr<const LlmModelRun> run = r;
  auto why = Once([run] { return RenderWhy(ExplainModel(run->analysis, *run->bound_only)); });
  Views v;
  v.chart = Once([run] {
    std::vector<std::string> engines;
    const std::vector<RooflinePoint> points = RooflinePoints(run->analysis, *run->model, &engines);
    return RooflineChart(run->setup.device, engines, points, run->title).svg;
  });
  v.report = [run, why, chart = v.chart] {
    HtmlDocument doc;
    doc.title = run->title;
    doc.tables = ModelHtmlTables(run->analysis, *run->model);
    doc.why = why();
    for (const PhaseResult& p : run->analysis.phases) {
      if (!p.band.has_value() || !p.totals.has_expected) continue;
      doc.trust.push_back(fmt::format("{}: expected {}; {}", NameOf(p.phase),
                                      Seconds(p.totals.expected_s),
                                      DescribeBand(*p.band, p.totals.expected_s)));
    }
    doc.assumptions = CostModelAssumptions(*run->model);
    for (const std::string& n : run->analysis.notes) doc.assumptions.push_back(n);
    doc.text = RenderModelTable(run->analysis, *run->model);
    doc.charts = {chart()};
    return doc;
  };
  switch (request.format) {
    case OutputFormat::kJson:
      v.out = [run](std::ostream& out) { out << RenderModelJson(run->analysis, *run->model); };
      break;
    case OutputFormat::kCsv:
      v.out = [run](std::ostream& out) { out << RenderModelCsv(run->analysis, *run->model); };
      break;
    default:
      if (!o.explain.empty()) {
        // The derivation asked for, under the lines that say what ran (not the whole table).
        v.out = [run](std::ostream& out) {
          out << RenderModelHeader(run->analysis, *run->model) << run->explanation;
        };
        break;
      }
      v.out = [run, why, top = o.top](std::ostream& out) {
        out << RenderModelTable(run->analysis, *run->model, top) << why();
      };
  }
  return v;
}

namespace {

// An LLM sweep on one device, kept in place.
struct LlmSweepRun {
  Setup setup;
  std::optional<CostModel> model;
  SweepResult sweep;
  std::string title, explanation;
};

// `--vary hw=A,B,...`: the same sweep on each device.
struct DeviceSweepRun {
  std::vector<Device> devices;
  std::vector<CostModel> models;  // point into devices
  DeviceSweep sweep;
  std::string title;
};

Result<Views> DeviceSweepViews(const Scenario& s, const ViewRequest& request,
                               const DatabaseSource& db, const std::vector<std::string>& hw_ids,
                               const std::vector<SweepAxis>& axes) {
  if (s.Given(FieldId::kHw)) return Status::Invalid("--hw", "the devices are the --vary hw=... list");
  if (request.format == OutputFormat::kNpy) {
    return Status::Invalid("--format npy",
                           "writes one device's sweep; with --vary hw use csv or json");
  }
  if (!request.plot.empty()) {
    return Status::Invalid("--plot",
                           "draws one device; with --vary hw use --report (a chart per device)");
  }
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<Setup> setup = Resolve(s, **loaded);
  if (!setup.ok()) return setup.status();
  auto r = std::make_shared<DeviceSweepRun>();
  r->devices.reserve(hw_ids.size());  // the cost models point into it
  for (const std::string& id : hw_ids) {
    Result<Device> d = ResolveDevice(id, **loaded);
    if (!d.ok()) return Status::Invalid("--vary hw", d.status().what());
    r->devices.push_back(std::move(d).value());
    Result<CostOptions> cost = MakeCostOptions(s, r->devices.back(), setup->cost.efficiency);
    if (!cost.ok()) return cost.status();
    if (setup->config.experts == 0) cost->expected.moe_kernel.clear();  // dense: no call
    r->models.emplace_back(r->devices.back(), *cost);
  }
  Result<DeviceSweep> swept = RunDeviceSweep(setup->config, setup->workload, r->models, s.phases, axes);
  if (!swept.ok()) return swept.status();
  r->sweep = std::move(swept).value();
  for (size_t i = 0; i < r->sweep.sweeps.size() && i < r->devices.size(); ++i) {
    if (Status b = AttachBands(r->sweep.sweeps[i], setup->config, setup->workload, r->devices[i],
                                  r->models[i].options(), **loaded);
        !b.ok()) {
      r->sweep.sweeps[i].notes.push_back("no trust band: " + b.ToString());
    }
  }
  r->title = SweepTitle(s.model + ": sweep hw", axes, *setup);
  std::shared_ptr<const DeviceSweepRun> run = r;
  Views v;
  v.report = [run] {
    HtmlDocument doc;
    doc.title = run->title;
    const DeviceSweep& ds = run->sweep;
    for (size_t i = 0; i < ds.devices.size(); ++i) {
      const std::string sub_title = ds.devices[i] + ": " + run->title;
      if (!ds.fixed) doc.charts.push_back(RenderSweepSvg(ds.sweeps[i], sub_title, run->devices[i]));
      HtmlTable t = SweepHtmlTable(ds.sweeps[i]);
      t.caption = ds.devices[i];
      doc.tables.push_back(std::move(t));
      for (std::string& a : CostModelAssumptions(run->models[i])) doc.assumptions.push_back(a);
      for (int ph = 0; ph < 2; ++ph) {
        for (int layout = 0; layout < 2; ++layout) {
          const std::optional<TrustBand>& b = ds.sweeps[i].bands[ph][layout];
          if (!b.has_value()) continue;
          doc.trust.push_back(fmt::format("{}, {} on {}: {}", ds.devices[i],
                                          ph == 0 ? "prefill" : "decode",
                                          layout == 0 ? "one chip" : "several chips",
                                          DescribeBand(*b, 0)));
        }
      }
    }
    doc.text = RenderDeviceSweepTable(ds, run->title);
    return doc;
  };
  switch (request.format) {
    case OutputFormat::kJson:
      v.out = [run, model = s.model, layout = request.layout](std::ostream& out) {
        out << RenderDeviceSweepJson(run->sweep, model, layout);
      };
      break;
    case OutputFormat::kCsv:
      v.out = [run](std::ostream& out) { out << RenderDeviceSweepCsv(run->sweep); };
      break;
    default:
      v.out = [run](std::ostream& out) { out << RenderDeviceSweepTable(run->sweep, run->title); };
  }
  return v;
}

Result<Views> NetworkSweepViews(const Scenario& s, const SweepViewOptions& o,
                                const ViewRequest& request, const DatabaseSource& db) {
  if (o.vary.size() != 1) return Status::Invalid("--vary", "graph sweeps vary one dimension");
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<NetSweepRun> swept = SweepNetworkScenario(s, o.vary[0], **loaded);
  if (!swept.ok()) return swept.status();
  std::shared_ptr<const NetSweepRun> r = std::make_shared<NetSweepRun>(std::move(swept).value());
  Views v;
  v.chart = Once([r] { return NetSweepChart(r->sweep, r->title).svg; });
  v.report = [r, chart = v.chart] {
    HtmlDocument doc;
    doc.title = r->title;
    doc.charts = {chart()};
    doc.text = RenderNetSweepTable(r->sweep, r->title);
    doc.assumptions = CostModelAssumptions(CostModel(r->device, r->cost));
    doc.why = NetSweepWhy(r->sweep).substr(1);
    return doc;
  };
  switch (request.format) {
    case OutputFormat::kJson:
      v.out = [r, layout = request.layout](std::ostream& out) {
        WriteNetSweepJson(r->sweep, r->device.id, layout, out);
      };
      break;
    case OutputFormat::kCsv:
      v.out = [r](std::ostream& out) { WriteNetSweepCsv(r->sweep, out); };
      break;
    case OutputFormat::kNpy:
      v.out = [r](std::ostream& out) { WriteNetSweepNpy(r->sweep, out); };
      break;
    default:
      v.out = [r](std::ostream& out) { out << RenderNetSweepTable(r->sweep, r->title); };
  }
  return v;
}

}  // namespace

Result<Views> SweepViews(const Scenario& s, const SweepViewOptions& o, const ViewRequest& request,
                         const DatabaseSource& db) {
  if (!o.explain.empty() && request.format != OutputFormat::kTable) {
    return Status::Invalid("--explain", "prints with --format table");
  }
  Result<SweepRequest> parsed = ParseSweepRequest(o.vary);
  if (!parsed.ok()) return parsed.status();
  const bool network = IsNetworkInput(s.model);
  if (!o.explain.empty() && (!parsed->devices.empty() || network)) {
    return Status::Invalid("--explain", "applies to LLM sweeps on one device");
  }
  if (!parsed->devices.empty() && network) {
    return Status::Invalid("--vary hw",
                           "applies to LLM configs (graph files and ONNX models: one --hw per run)");
  }
  if (network) return NetworkSweepViews(s, o, request, db);
  Result<std::vector<SweepAxis>> axes = ParseSweepAxes(s, parsed->specs);
  if (!axes.ok()) return axes.status();
  if (!parsed->devices.empty()) return DeviceSweepViews(s, request, db, parsed->devices, *axes);
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<Setup> setup = Resolve(s, **loaded);
  if (!setup.ok()) return setup.status();
  auto r = std::make_shared<LlmSweepRun>();
  r->setup = std::move(setup).value();
  const Setup& st = r->setup;
  r->model.emplace(st.device, st.cost);
  Result<SweepResult> swept = RunSweep(st.config, st.workload, *r->model, s.phases, *axes);
  if (!swept.ok()) return swept.status();
  r->sweep = std::move(swept).value();
  if (Status b = AttachBands(r->sweep, st.config, st.workload, st.device, st.cost, **loaded); !b.ok()) {
    r->sweep.notes.push_back("no trust band: " + b.ToString());
  }
  r->title = SweepTitle(s.model + " on " + st.device.id + ": sweep", *axes, st);
  // A bad --explain name fails before any file is written.
  if (!o.explain.empty()) {
    Result<std::string> e =
        RenderSweepKernelExplain(st.config, st.workload, *r->model, s.phases, r->sweep, o.explain);
    if (!e.ok()) return e.status();
    r->explanation = std::move(e).value();
  }
  std::shared_ptr<const LlmSweepRun> run = r;
  Views v;
  v.chart = Once([run] { return RenderSweepSvg(run->sweep, run->title, run->setup.device); });
  v.report = [run, chart = v.chart] {
    HtmlDocument doc;
    doc.title = run->title;
    doc.charts = {chart()};
    doc.tables = {SweepHtmlTable(run->sweep)};
    doc.text = RenderSweepTable(run->sweep, run->title);
    doc.assumptions = CostModelAssumptions(*run->model);
    doc.why = RenderSweepWhy(run->sweep).substr(1);
    for (int ph = 0; ph < 2; ++ph) {
      for (int layout = 0; layout < 2; ++layout) {
        const std::optional<TrustBand>& b = run->sweep.bands[ph][layout];
        if (!b.has_value()) continue;
        doc.trust.push_back(fmt::format(
            "{} on {}: {} (the JSON columns expected_low_s and expected_high_s give the range at "
            "each point)",
            ph == 0 ? "prefill" : "decode", layout == 0 ? "one chip" : "several chips",
            DescribeBand(*b, 0)));
      }
    }
    return doc;
  };
  switch (request.format) {
    case OutputFormat::kJson:
      v.out = [run, model = s.model, layout = request.layout](std::ostream& out) {
        WriteSweepJson(run->sweep, model, run->setup.device.id, layout, out);
      };
      break;
    case OutputFormat::kCsv:
      v.out = [run](std::ostream& out) { WriteSweepCsv(run->sweep, out); };
      break;
    case OutputFormat::kNpy:
      v.out = [run](std::ostream& out) { WriteSweepNpy(run->sweep, out); };
      break;
    default:
      v.out = [run](std::ostream& out) {
        out << RenderSweepTable(run->sweep, run->title) << run->explanation;
      };
  }
  return v;
}

}  // namespace roofline
