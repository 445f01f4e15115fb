// `op`, `plan` and `validate` as one library call each: the parsed request checked, run, and
// handed back as views (roofline/views.h).
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "roofline/calibrate.h"
#include "roofline/published.h"
#include "roofline/report.h"
#include "roofline/setup.h"
#include "roofline/trust.h"
#include "roofline/views.h"
#include "src/measure/cpu/timing.h"
#include "src/util/json_util.h"

namespace roofline {
namespace {

/// Whether --hw names a file (a path or a .json name) rather than a database id.
bool IsFile(const std::string& hw) {
  return hw.find('/') != std::string::npos || hw.find(".json") != std::string::npos;
}

/// The validate request's checks, and --save-calibration's (a file to store it in).
Status CheckValidate(const ValidateViewOptions& o, const std::string& hw) {
  if (o.save_calibration && !IsFile(hw)) {
    return Status::Invalid("--save-calibration",
                           "--hw must be a device JSON file to store the calibration in (e.g. "
                           "one written by `roofline measure`)");
  }
  return Check(o.run);
}

/// The views of a validation: its table (with a line saying where the calibration went) or
/// JSON, and the device file with the calibration when asked to save it.
Views ValidationViews(std::shared_ptr<const ValidationReport> r, const Device& device,
                      const std::string& hw, const ValidateViewOptions& o,
                      const ViewRequest& request) {
  Views v;
  if (request.format == OutputFormat::kJson) {
    v.out = [r](std::ostream& out) { out << RenderValidationJson(*r); };
  } else {
    v.out = [r, hw, save = o.save_calibration](std::ostream& out) {
      out << RenderValidationTable(*r);
      if (save) out << "saved the calibration in " << hw << "\n";
    };
  }
  if (o.save_calibration) {
    Device d = device;
    d.calibration = r->fit.calibration;
    d.calibration->method = "roofline validate --device " + o.run.device + ": " + r->title;
    d.calibration->date = measure_internal::TodayUtc();
    v.files.emplace_back(hw, [d = std::move(d)] { return DeviceToJson(d) + "\n"; });
  }
  return v;
}

}  // namespace

Result<Views> OpViews(const OpRequest& op, const OpViewOptions& options, const ViewRequest& request,
                      const DatabaseSource& db) {
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<Device> device = ResolveDevice(options.hw, **loaded);
  if (!device.ok()) return device.status();
  Result<CostOptions> cost = MakeCostOptions(options.expected, *device);
  if (!cost.ok()) return cost.status();
  if (!cost->expected.modules.empty() && op.attention_impl == AttentionImpl::kEager &&
      std::holds_alternative<AttentionSpec>(op.spec)) {
    return Status::Invalid("--modules", "'" + cost->expected.modules +
                                            "' counts a fused attention call: use --impl flash");
  }
  // The cost model points into the device: both kept together, for the views to render from.
  struct Run {
    Device device;
    std::optional<CostModel> model;
    std::optional<OpAnalysis> analysis;
    std::optional<FlipAnalysis> flip;
  };
  auto run = std::make_shared<Run>();
  run->device = std::move(device).value();
  run->model.emplace(run->device, std::move(cost).value());
  Result<OpAnalysis> analysis = AnalyzeOp(op, *run->model, options.explain);
  if (!analysis.ok()) return analysis.status();
  run->analysis = std::move(analysis).value();
  if (options.explain || request.format == OutputFormat::kJson) {
    Result<FlipAnalysis> flip = AnalyzeFlip(op, *run->model);
    if (!flip.ok()) return flip.status();
    run->flip = std::move(flip).value();
  }
  Views v;
  std::shared_ptr<const Run> r = run;
  if (request.format == OutputFormat::kJson) {
    v.out = [r, explain = options.explain](std::ostream& out) {
      out << RenderOpJson(*r->analysis, *r->model, &*r->flip, explain);
    };
  } else {
    v.out = [r, explain = options.explain](std::ostream& out) {
      out << RenderOpTable(*r->analysis, *r->model);
      if (explain) out << "\n" << RenderOpExplain(*r->analysis, *r->flip, *r->model);
    };
  }
  return v;
}

Result<Views> PlanViews(const Scenario& s, PlanRequest fleet, const ViewRequest& request,
                        const DatabaseSource& db) {
  fleet.prompt = s.workload.prompt;
  fleet.tp = s.Given(FieldId::kTp) ? s.workload.tp : 0;
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<Setup> setup = Resolve(s, **loaded);
  if (!setup.ok()) return setup.status();
  fleet.cost = setup->cost;
  Result<Plan> made = MakePlan(setup->config, setup->workload, setup->device, fleet);
  if (!made.ok()) return made.status();
  auto plan = std::make_shared<Plan>(std::move(made).value());
  plan->model = s.model;
  if (Status b = AttachBands(*plan, setup->config, setup->device, **loaded); !b.ok()) {
    plan->assumptions.push_back("no trust band: " + b.ToString());
  }
  Views v;
  v.chart = [plan] {
    const std::string fleet = plan->request.gpus > 0
                                  ? fmt::format("{} x {}", plan->request.gpus, plan->device)
                                  : plan->device + ", the fleet sized for the load";
    return PlanParetoChart(*plan, fmt::format("{}: serving plans on {}", plan->model, fleet)).svg;
  };
  switch (request.format) {
    case OutputFormat::kJson:
      v.out = [plan](std::ostream& out) { out << RenderPlanJson(*plan); };
      break;
    case OutputFormat::kCsv:
      v.out = [plan](std::ostream& out) { WriteCsv(PlanTable(*plan), out, 1); };
      break;
    case OutputFormat::kNpy:
      v.out = [plan](std::ostream& out) { WriteNpy(PlanTable(*plan), out); };
      break;
    default:
      v.out = [plan](std::ostream& out) { out << RenderPlanTable(*plan); };
      break;
  }
  return v;
}

Result<Views> ValidateModelViews(const Scenario& given, const ValidateViewOptions& options,
                                 const ViewRequest& request, const DatabaseSource& db) {
  if (Status st = CheckValidate(options, given.hw); !st.ok()) return st;
  Scenario s = given;
  // The host computes in fp32 (a GPU runs the model's own dtype).
  if (!s.Given(FieldId::kDtype) && !options.run.IsCuda()) s.workload.dtype = DType::kFp32;
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<Setup> setup = Resolve(s, **loaded);
  if (!setup.ok()) return setup.status();
  const CostModel model(setup->device);
  Result<ValidationReport> r = ValidateModel(
      setup->config, setup->workload, model, s.phases, options.run,
      fmt::format("{} (batch {}, prompt {}, context {})", s.model, setup->workload.batch,
                  setup->workload.prompt, setup->workload.DecodeContext()));
  if (!r.ok()) return r.status();
  return ValidationViews(std::make_shared<const ValidationReport>(std::move(r).value()),
                         setup->device, s.hw, options, request);
}

Result<Views> ValidateOpViews(const OpRequest& op, const std::string& hw,
                              const ValidateViewOptions& options, const ViewRequest& request,
                              const DatabaseSource& db) {
  if (Status st = CheckValidate(options, hw); !st.ok()) return st;
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<Device> device = ResolveDevice(hw, **loaded);
  if (!device.ok()) return device.status();
  const CostModel model(*device);
  Result<OpAnalysis> a = AnalyzeOp(op, model);
  if (!a.ok()) return a.status();
  Result<ValidationReport> r = ValidateGraph(a->graph, model, options.run, DescribeOp(op));
  if (!r.ok()) return r.status();
  return ValidationViews(std::make_shared<const ValidationReport>(std::move(r).value()), *device,
                         hw, options, request);
}

Result<Views> PublishedViews(const std::string& file, const ViewRequest& request) {
  Result<std::vector<PublishedRun>> runs =
      file.empty() ? LoadDefaultPublishedRuns() : LoadPublishedRunsFile(file);
  if (!runs.ok()) return runs.status();
  Result<PublishedValidation> checked = ValidatePublished(*runs);
  if (!checked.ok()) return checked.status();
  auto result = std::make_shared<const PublishedValidation>(std::move(checked).value());
  Views v;
  switch (request.format) {
    case OutputFormat::kJson:
      v.out = [result](std::ostream& out) { out << RenderPublishedJson(*result); };
      break;
    case OutputFormat::kCsv:
      v.out = [result](std::ostream& out) { WriteCsv(PublishedTable(*result), out, 1); };
      break;
    case OutputFormat::kNpy:
      v.out = [result](std::ostream& out) { WriteNpy(PublishedTable(*result), out); };
      break;
    default:
      v.out = [result](std::ostream& out) { out << RenderPublishedTable(*result); };
      break;
  }
  // A bound above a real run is a counting error.
  v.check_failed = result->bounds_above != 0;
  if (v.check_failed) {
    v.check_message =
        fmt::format("the time bound is above {} of the published measurements: a counting error",
                    result->bounds_above);
  }
  return v;
}

Result<Views> ServingViews(const std::string& file, const ViewRequest& request) {
  Result<std::vector<ServingRun>> runs =
      file.empty() ? LoadDefaultServingRuns() : LoadServingRunsFile(file);
  if (!runs.ok()) return runs.status();
  Result<ServingValidation> checked = ValidateServing(*runs);
  if (!checked.ok()) return checked.status();
  auto result = std::make_shared<const ServingValidation>(std::move(checked).value());
  Views v;
  if (request.format == OutputFormat::kJson) {
    v.out = [result](std::ostream& out) { out << RenderServingJson(*result); };
  } else {
    v.out = [result](std::ostream& out) { out << RenderServingTable(*result); };
  }
  v.check_failed = result->bounds_broken != 0;
  if (v.check_failed) {
    v.check_message = fmt::format(
        "the ideal bound is not above {} of the measured serving runs: a counting error",
        result->bounds_broken);
  }
  return v;
}

Result<Views> CalibrateViews(const Scenario& defaults, const CalibrateViewOptions& options,
                             const ViewRequest& request, const DatabaseSource& db) {
  if (options.files.empty()) return Status::Invalid("RUNS", "give one or more files of runs");
  if (options.output.empty()) {
    return Status::Invalid("-o", "give the engine file to write (-o engine.json)");
  }
  if (request.format != OutputFormat::kTable && request.format != OutputFormat::kJson) {
    return Status::Invalid("--format", "calibrate prints a table or JSON");
  }
  auto read = [&](const std::vector<std::string>& files,
                  std::vector<CalibrationRun>& out) -> Status {
    for (const std::string& f : files) {
      Result<std::string> text = ReadTextFile(f);
      if (!text.ok()) return text.status();
      Result<std::vector<CalibrationRun>> runs = ReadCalibrationRuns(*text, f, defaults);
      if (!runs.ok()) return runs.status();
      out.insert(out.end(), runs->begin(), runs->end());
      if (out.size() > 2000) {
        return Status::Invalid(f, "more than 2000 runs in all: at most 2000 are fitted");
      }
    }
    return Status::Ok();
  };
  std::vector<CalibrationRun> runs, check;
  if (Status st = read(options.files, runs); !st.ok()) return st;
  if (Status st = read(options.check, check); !st.ok()) return st;
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<ModelRegistry> registry = ModelRegistry::LoadDefault();
  if (!registry.ok()) return registry.status();
  Result<EfficiencyData> data = LoadDefaultEfficiencyData();
  if (!data.ok()) return data.status();
  Result<EngineCalibration> cal = Calibrate(
      runs, check, defaults.expected.engine, options.files, measure_internal::TodayUtc(), **loaded,
      *registry, std::make_shared<const EfficiencyData>(std::move(data).value()));
  if (!cal.ok()) return cal.status();
  auto result = std::make_shared<const EngineCalibration>(std::move(cal).value());
  Views v;
  const std::string written = options.output;
  v.out = [result, written, json = request.format == OutputFormat::kJson](std::ostream& out) {
    out << (json ? RenderCalibrationJson(*result) : RenderCalibration(*result, written));
  };
  v.files.emplace_back(written, [result] { return EngineFileText(result->engine); });
  return v;
}

}  // namespace roofline
