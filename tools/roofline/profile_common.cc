// What the `roofline profile` subcommands share: the device, the --model join, the plot.
#include "tools/roofline/profile_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "roofline/model_analysis.h"
#include "roofline/plot.h"
#include "roofline/profile.h"
#include "roofline/units.h"
#include "src/report/table.h"
#include "tools/roofline/cli_util.h"

namespace roofline::cli {

std::string Pct(double fraction) { return fmt::format("{:.0f}%", 100 * fraction); }

std::string OptSi(const std::optional<double>& v, const char* unit) {
  return v ? Si(*v, unit) : "-";
}

/// The device: --hw, else matched from what the profile says. `how` is printed.
Result<Device> ResolveProfileDevice(Context& ctx, const std::string& hw, std::string_view name,
                                    std::string_view cc, std::string* how) {
  if (!hw.empty()) {
    *how = "from --hw";
    return ctx.ResolveHw(hw);
  }
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return db.status();
  Result<const Device*> d = MatchDevice((*db)->devices(), name, cc, how);
  if (!d.ok()) return d.status();
  return **d;
}

namespace {

/// The prediction for --model, on `device`.
struct Prediction {
  Setup setup;
  std::unique_ptr<CostModel> model;
  ModelAnalysis analysis;
  std::vector<PredictedKernel> kernels;
  std::string title;
};

/// Built in place: the cost model points into `setup.device`.
Result<std::unique_ptr<Prediction>> Predict(Context& ctx, ModelOptions o, const Device& device) {
  auto owned = std::make_unique<Prediction>();
  Prediction& p = *owned;
  o.hw = device.origin.empty() ? device.id : device.origin;
  if (device.origin.rfind("<embedded>", 0) == 0) o.hw = device.id;
  Result<Setup> setup = Prepare(ctx, o);
  if (!setup.ok()) return setup.status();
  p.setup = std::move(setup).value();
  p.model = std::make_unique<CostModel>(p.setup.device, p.setup.cost);
  Result<ModelAnalysis> a =
      AnalyzeModel(p.setup.config, p.setup.workload, *p.model, Phases(o.phase));
  if (!a.ok()) return a.status();
  p.analysis = std::move(a).value();
  p.kernels = PredictedKernelsOf(p.analysis.phases.front(), *p.model);
  p.title = fmt::format("{} {} on {} (batch {}, prompt {})", o.model, o.phase, device.id,
                        p.setup.workload.batch, p.setup.workload.prompt);
  return owned;
}

void PrintJoin(std::ostream& out, const ProfileJoin& join, const Prediction& p) {
  out << fmt::format("\nagainst the prediction: {}; {:.2f} steps found in the profile\n", p.title,
                     join.steps);
  TextTable c({"class", "predicted/step", "measured", "steps", "predicted time/step",
               "measured time/step", "efficiency"},
              {false, true, true, true, true, true, true});
  for (const ClassJoin& cj : join.classes) {
    // Less than one whole step in the profile: a per-step figure would be an extrapolation.
    const double per_step = join.steps >= 1 ? cj.measured_s / join.steps : 0;
    c.AddRow({std::string(NameOf(cj.op_class)), std::to_string(cj.predicted_per_step),
              std::to_string(cj.measured),
              cj.predicted_per_step ? fmt::format("{:.2f}", cj.steps) : "-",
              cj.predicted_per_step ? Seconds(cj.predicted_s_per_step) : "-",
              per_step > 0 ? Seconds(per_step) : "-",
              per_step > 0 && cj.predicted_s_per_step > 0 ? Pct(cj.predicted_s_per_step / per_step)
                                                          : "-"});
  }
  out << c.Render(2);
  if (join.steps < 1) {
    out << fmt::format(
        "  (the profile holds {:.2f} of one predicted step: no per-step measured time; compare "
        "per kernel below)\n",
        join.steps);
  }
  if (join.ordered) {
    out << "\nper predicted kernel (efficiency = predicted bound / measured mean):\n";
    TextTable k({"kernel", "group", "class", "x/step", "bound", "predicted", "measured", "matched",
                 "efficiency", "measured kernel"},
                {false, false, false, true, false, true, true, true, true, false});
    for (const JoinRow& r : join.rows) {
      k.AddRow({r.predicted.name, r.predicted.group.empty() ? "-" : r.predicted.group,
                std::string(NameOf(r.predicted.op_class)), std::to_string(r.predicted.repeat),
                r.predicted.bound, Seconds(r.predicted.bound_s),
                r.matched ? Seconds(r.measured_s) : "-", std::to_string(r.matched),
                r.matched ? Pct(r.efficiency) : "-",
                r.example.empty() ? "-" : ShortKernelName(r.example, 44)});
    }
    out << k.Render(2);
  }
  for (const std::string& n : join.notes) out << "note: " << n << "\n";
}

nlohmann::json JoinJson(const ProfileJoin& join) {
  nlohmann::json j;
  j["steps"] = join.steps;
  j["ordered"] = join.ordered;
  for (const ClassJoin& cj : join.classes) {
    j["classes"].push_back({{"class", NameOf(cj.op_class)},
                            {"predicted_per_step", cj.predicted_per_step},
                            {"predicted_s_per_step", cj.predicted_s_per_step},
                            {"measured", cj.measured},
                            {"measured_s", cj.measured_s},
                            {"steps", cj.steps}});
  }
  for (const JoinRow& r : join.rows) {
    j["kernels"].push_back({{"name", r.predicted.name},
                            {"group", r.predicted.group},
                            {"class", NameOf(r.predicted.op_class)},
                            {"repeat", r.predicted.repeat},
                            {"bound", r.predicted.bound},
                            {"predicted_s", r.predicted.bound_s},
                            {"matched", r.matched},
                            {"measured_s", r.measured_s},
                            {"efficiency", r.efficiency},
                            {"measured_kernel", r.example}});
  }
  j["notes"] = join.notes;
  return j;
}

/// Measured points from a join: each matched predicted kernel at its predicted intensity and the
/// FLOP/s its measured time gives.
void AddJoinPoints(const ProfileJoin& join, std::vector<RooflinePoint>* points) {
  double total = 0;
  for (const JoinRow& r : join.rows) total += r.measured_s * static_cast<double>(r.matched);
  for (const JoinRow& r : join.rows) {
    if (r.matched == 0 || r.measured_s <= 0 || r.predicted.flops <= 0 ||
        r.predicted.device_bytes <= 0) {
      continue;
    }
    RooflinePoint pt;
    pt.label = r.predicted.name;
    pt.series = "measured";
    pt.intensity = r.predicted.flops / r.predicted.device_bytes;
    pt.flops_per_s = r.predicted.flops / r.measured_s;
    pt.share = total > 0 ? r.measured_s * static_cast<double>(r.matched) / total : 0;
    points->push_back(pt);
  }
}

Status WritePlot(const std::string& path, const Device& device, std::vector<std::string> engines,
                 const std::vector<RooflinePoint>& points, const std::string& title) {
  if (points.empty()) {
    return Status::Invalid("--plot",
                           "nothing to plot: the profile has no FLOP and byte figures (pass "
                           "--model to place its kernels at the predicted intensities)");
  }
  std::sort(engines.begin(), engines.end());
  engines.erase(std::unique(engines.begin(), engines.end()), engines.end());
  return WriteFileAtomically(path, RooflineChart(device, engines, points, title).svg);
}

}  // namespace

/// Joins, prints and plots the --model part shared by the three subcommands.
int FinishWithModel(Context& ctx, const ProfileOptions& o, const Device& device,
                    const std::vector<MeasuredKernel>& measured, bool ordered,
                    std::vector<RooflinePoint> points, std::vector<std::string> engines,
                    nlohmann::json* json, const std::string& title) {
  if (!o.model.model.empty()) {
    Result<std::unique_ptr<Prediction>> predicted = Predict(ctx, o.model, device);
    if (!predicted.ok()) return Fail(ctx, predicted.status());
    const std::unique_ptr<Prediction>& p = *predicted;
    const ProfileJoin join = JoinWithPrediction(p->kernels, measured, ordered);
    if (json) {
      (*json)["prediction"] = JoinJson(join);
      (*json)["prediction"]["title"] = p->title;
    } else {
      PrintJoin(*ctx.out, join, *p);
    }
    std::vector<std::string> predicted_engines;
    for (RooflinePoint& pt : RooflinePoints(p->analysis, *p->model, &predicted_engines)) {
      pt.series = std::string(NameOf(p->analysis.phases.front().phase));
      points.push_back(pt);
    }
    engines.insert(engines.end(), predicted_engines.begin(), predicted_engines.end());
    if (ordered) {
      // Measured kernels placed through the join replace the profile's own points only when the
      // profile had none (nsys, torch without shapes).
      if (std::none_of(points.begin(), points.end(),
                       [](const RooflinePoint& x) { return x.series == "measured"; })) {
        AddJoinPoints(join, &points);
      }
    }
  }
  if (json) *ctx.out << json->dump(2) << "\n";
  if (!o.plot.empty()) {
    Status s = WritePlot(o.plot, device, engines, points, title);
    if (!s.ok()) return Fail(ctx, s);
    if (!json) *ctx.out << "\nwrote " << o.plot << "\n";
  }
  return kExitOk;
}

void PrintClassTable(std::ostream& out, const std::map<OpClass, std::pair<int64_t, double>>& c,
                     double total) {
  TextTable t({"class", "launches", "time", "share"}, {false, true, true, true});
  std::vector<std::pair<OpClass, std::pair<int64_t, double>>> rows(c.begin(), c.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  for (const auto& [cls, v] : rows) {
    t.AddRow({std::string(NameOf(cls)), std::to_string(v.first), Seconds(v.second),
              total > 0 ? Pct(v.second / total) : "-"});
  }
  out << t.Render(2);
}

nlohmann::json ClassJson(const std::map<OpClass, std::pair<int64_t, double>>& c, double total) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [cls, v] : c) {
    j.push_back({{"class", NameOf(cls)},
                 {"launches", v.first},
                 {"time_s", v.second},
                 {"share", total > 0 ? v.second / total : 0.0}});
  }
  return j;
}

}  // namespace roofline::cli
