// What the `roofline profile` subcommands share: the device, the --model join, the plot.
#include "tools/roofline/profile_common.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "roofline/plot.h"
#include "roofline/profile.h"
#include "roofline/profile_prediction.h"
#include "roofline/report.h"
#include "src/report/profile_json.h"
#include "tools/roofline/cli_util.h"

namespace roofline::cli {

/// The device: --hw, else matched from what the profile says. `how` is printed.
Result<Device> ResolveProfileDevice(Context& ctx, const std::string& hw, std::string_view name,
                                    std::string_view cc, std::string* how,
                                    const DeviceHints& hints) {
  if (!hw.empty()) {
    *how = "from --hw";
    return ctx.ResolveHw(hw);
  }
  Result<const DeviceDatabase*> db = ctx.Database();
  if (!db.ok()) return db.status();
  Result<const Device*> d = MatchDevice((*db)->devices(), name, cc, how, hints);
  if (!d.ok()) return d.status();
  return **d;
}

namespace {

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
                    nlohmann::json* json, const std::string& text, const std::string& title) {
  if (o.model.model.empty()) {
    *ctx.out << text;
  } else {
    Result<const DeviceDatabase*> db = ctx.Database();
    if (!db.ok()) return Fail(ctx, db.status());
    Result<std::unique_ptr<ProfilePrediction>> predicted = PredictForProfile(o.model, device, **db);
    if (!predicted.ok()) return Fail(ctx, predicted.status());
    const std::unique_ptr<ProfilePrediction>& p = *predicted;
    const ProfileJoin join = JoinWithPrediction(p->kernels, measured, ordered);
    if (json) {
      (*json)["prediction"] = ProfileJoinJson(join, p->title);
    } else {
      // A join that does not match says so before anything else.
      *ctx.out << RenderJoinMismatch(join.mismatch, p->title) << text
               << RenderProfileJoinTable(join, p->title);
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
        for (RooflinePoint& pt : JoinRooflinePoints(join)) points.push_back(std::move(pt));
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

}  // namespace roofline::cli
