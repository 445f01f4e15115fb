// `roofline profile ncu|nsys|torch`: a profile read, placed on its device's roofline and joined
// with a prediction, as views (roofline/views.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "roofline/plot.h"
#include "roofline/profile.h"
#include "roofline/profile_prediction.h"
#include "roofline/report.h"
#include "roofline/views.h"
#include "src/report/profile_json.h"

namespace roofline {
namespace {

// What the three kinds give the shared part: the text or JSON of the profile, its device, its
// measured kernels and their roofline points.
struct ReadProfile {
  std::string text;       // table format
  nlohmann::json json;    // json format
  std::optional<Device> device;
  std::vector<MeasuredKernel> measured;
  bool ordered = true;  // the measured kernels are in launch order
  std::vector<RooflinePoint> points;
  std::vector<std::string> engines;
  std::string tool;  // "Nsight Compute"
};

// The device: --hw, else matched from what the profile says. `how` is printed.
Result<Device> ProfileDevice(const DatabaseSource& db, const std::string& hw,
                             std::string_view name, std::string_view cc, std::string* how,
                             const DeviceHints& hints = {}) {
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  if (!hw.empty()) {
    *how = "from --hw";
    return ResolveDevice(hw, **loaded);
  }
  Result<const Device*> d = MatchDevice((*loaded)->devices(), name, cc, how, hints);
  if (!d.ok()) return d.status();
  return **d;
}

Status ReadNcu(const ProfileViewOptions& o, const ViewRequest& request, const DatabaseSource& db,
               ReadProfile& p) {
  Result<NcuReport> report = LoadNcuCsv(o.file);
  if (!report.ok()) return report.status();
  if (report->kernels.empty()) {
    return Status::Parse(o.file, "no kernel rows in the Nsight Compute CSV");
  }
  const NcuKernel& first = report->kernels.front();
  const bool named =
      !first.device.empty() && first.device.find_first_not_of("0123456789") != std::string::npos;
  std::string how;
  // The file's own device attributes tell variants of one name apart (an H100 80GB HBM3 is the
  // SXM5 part with 132 SMs, the PCIe card has 114).
  DeviceHints hints;
  if (const double* sms = first.Find("device__attribute_multiprocessor_count")) {
    hints.sms = static_cast<int64_t>(*sms);
  }
  Result<Device> device =
      ProfileDevice(db, o.model.hw, named ? first.device : "", first.cc, &how, hints);
  if (!device.ok() && o.model.hw.empty() && device.status().code() == StatusCode::kNotFound) {
    // No database device: the peaks the file measured itself (roofline ncu-command collects
    // them) make one.
    if (std::optional<Device> own = DeviceFromNcuPeaks(*report, named ? first.device : "")) {
      how = fmt::format(
          "no database device for compute capability {}; ceilings from the file's own "
          ".peak_sustained metrics",
          first.cc);
      device = std::move(*own);
    }
  }
  // Without a device the per-kernel figures are still reported; the roofline part needs one.
  const bool need_device = !o.model.hw.empty() || !o.model.model.empty() || !request.plot.empty();
  if (!device.ok() && (need_device || device.status().code() != StatusCode::kNotFound)) {
    return device.status();
  }
  const Device* dev = device.ok() ? &*device : nullptr;
  const std::string note = dev ? how : device.status().what();
  const NcuSummary summary = SummarizeNcu(*report, dev);
  if (request.format == OutputFormat::kJson) {
    p.json = NcuProfileJson(summary, o.file, report->layout, dev, note, o.top_given ? o.top : 0);
  } else {
    p.text = RenderNcuProfileTable(summary, o.file, report->layout, dev, note, o.top);
  }
  if (dev == nullptr) return Status::Ok();
  // The timed kernels with FLOPs and device-memory bytes, on the roofline plot.
  p.points = NcuRooflinePoints(summary, *dev, &p.engines);
  p.measured = summary.measured;
  p.device = *dev;
  p.tool = "Nsight Compute";
  return Status::Ok();
}

Status ReadNsys(const ProfileViewOptions& o, const ViewRequest& request, const DatabaseSource& db,
                ReadProfile& p) {
  Result<NsysReport> report = LoadNsysCsv(o.file);
  if (!report.ok()) return report.status();
  const NsysSummary summary = SummarizeNsys(*report);
  if (request.format == OutputFormat::kJson) {
    p.json = NsysProfileJson(*report, summary, o.file);
  } else {
    p.text = RenderNsysProfileTable(*report, summary, o.file, o.top);
  }
  if (o.model.model.empty() && request.plot.empty()) return Status::Ok();
  if (o.model.hw.empty()) {
    return Status::Invalid("--hw",
                           "an nsys report does not name its GPU: pass --hw ID with --model or "
                           "--plot");
  }
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<Device> device = ResolveDevice(o.model.hw, **loaded);
  if (!device.ok()) return device.status();
  p.device = std::move(device).value();
  p.measured = summary.measured;
  p.ordered = summary.ordered;
  p.tool = "Nsight Systems";
  return Status::Ok();
}

Status ReadTorch(const ProfileViewOptions& o, const ViewRequest& request, const DatabaseSource& db,
                 ReadProfile& p) {
  Result<TorchTrace> trace = LoadTorchTrace(o.file);
  if (!trace.ok()) return trace.status();
  std::string how;
  Result<Device> device = ProfileDevice(db, o.model.hw, trace->device_name, trace->cc, &how,
                                        DeviceHints{trace->num_sms, trace->device_memory_bytes});
  const bool need_device = !o.model.model.empty() || !request.plot.empty() || trace->has_shapes;
  if (!device.ok() && (need_device || !o.model.hw.empty())) return device.status();
  const Device* dev = device.ok() ? &*device : nullptr;
  const TorchSummary summary = SummarizeTorch(*trace, dev);
  if (request.format == OutputFormat::kJson) {
    p.json = TorchProfileJson(*trace, summary, o.file, dev);
  } else {
    p.text = RenderTorchProfileTable(*trace, summary, o.file, dev, how, o.top);
  }
  if (dev == nullptr) return Status::Ok();
  p.points = TorchRooflinePoints(summary, &p.engines);
  p.measured = summary.measured;
  p.device = *dev;
  p.tool = "PyTorch profiler";
  return Status::Ok();
}

// The --model part: the prediction joined to the measured kernels, its text or JSON, and its
// points beside the measured ones.
Status JoinPrediction(const ProfileViewOptions& o, const DatabaseSource& db, bool json,
                      ReadProfile& p) {
  Result<const DeviceDatabase*> loaded = db();
  if (!loaded.ok()) return loaded.status();
  Result<std::unique_ptr<ProfilePrediction>> predicted =
      PredictForProfile(o.model, *p.device, **loaded);
  if (!predicted.ok()) return predicted.status();
  const ProfilePrediction& pred = **predicted;
  const ProfileJoin join = JoinWithPrediction(pred.kernels, p.measured, p.ordered);
  if (json) {
    p.json["prediction"] = ProfileJoinJson(join, pred.title);
  } else {
    // A join that does not match says so before anything else.
    p.text = RenderJoinMismatch(join.mismatch, pred.title) + p.text +
             RenderProfileJoinTable(join, pred.title);
  }
  std::vector<std::string> predicted_engines;
  for (RooflinePoint& pt : RooflinePoints(pred.analysis, *pred.model, &predicted_engines)) {
    pt.series = std::string(NameOf(pred.analysis.phases.front().phase));
    p.points.push_back(pt);
  }
  p.engines.insert(p.engines.end(), predicted_engines.begin(), predicted_engines.end());
  // Measured kernels placed through the join replace the profile's own points only when the
  // profile had none (nsys, torch without shapes).
  if (p.ordered && std::none_of(p.points.begin(), p.points.end(), [](const RooflinePoint& x) {
        return x.series == "measured";
      })) {
    for (RooflinePoint& pt : JoinRooflinePoints(join)) p.points.push_back(std::move(pt));
  }
  return Status::Ok();
}

}  // namespace

Result<Views> ProfileViews(const ProfileViewOptions& o, const ViewRequest& request,
                           const DatabaseSource& db) {
  if (o.model.model.empty()) {
    // The workload describes the prediction the profile is joined to: nothing without one.
    for (const Field& f : ScenarioFields()) {
      if (f.id != FieldId::kHw && o.model.Given(f.id)) {
        return Status::Invalid(std::string(f.flag),
                               "describes the prediction joined with --model MODEL; give --model "
                               "or drop it");
      }
    }
  }
  if (o.model.phases == PhaseSelection::kBoth) {
    return Status::Invalid("--phase", "a profile ran one phase: prefill or decode");
  }
  if (!request.report.empty()) {
    return Status::Invalid("--report", "a profile writes its roofline with --plot");
  }
  auto p = std::make_shared<ReadProfile>();
  const bool json = request.format == OutputFormat::kJson;
  Status read = o.kind == ProfileKind::kNcu    ? ReadNcu(o, request, db, *p)
                : o.kind == ProfileKind::kNsys ? ReadNsys(o, request, db, *p)
                                               : ReadTorch(o, request, db, *p);
  if (!read.ok()) return read;
  if (p->device && !o.model.model.empty()) {
    if (Status joined = JoinPrediction(o, db, json, *p); !joined.ok()) return joined;
  }
  if (!request.plot.empty()) {
    if (p->points.empty()) {
      return Status::Invalid("--plot",
                             "nothing to plot: the profile has no FLOP and byte figures (pass "
                             "--model to place its kernels at the predicted intensities)");
    }
    if (!json) p->text += "\nwrote " + request.plot + "\n";
  }
  std::sort(p->engines.begin(), p->engines.end());
  p->engines.erase(std::unique(p->engines.begin(), p->engines.end()), p->engines.end());
  std::shared_ptr<const ReadProfile> r = p;
  Views v;
  // A roofline needs the device (a profile read without one has no chart; --plot asked for one).
  if (r->device) {
    v.chart = [r, file = o.file] {
    const std::string title = fmt::format("{} on {} ({})",
                                          std::filesystem::path(file).filename().string(),
                                          r->device->id, r->tool);
    return RooflineChart(*r->device, r->engines, r->points, title).svg;
    };
  }
  v.out = [r, json](std::ostream& out) { out << (json ? r->json.dump(2) + "\n" : r->text); };
  return v;
}

}  // namespace roofline
