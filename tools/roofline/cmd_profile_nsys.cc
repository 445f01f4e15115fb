// `roofline profile nsys FILE.csv`: Nsight Systems kernel time by op class.
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
#include "tools/roofline/profile_common.h"

namespace roofline::cli {

int RunProfileNsys(Context& ctx, const ProfileOptions& o) {
  Result<NsysReport> report = LoadNsysCsv(o.file);
  if (!report.ok()) return Fail(ctx, report.status());
  const bool json = o.model.format == "json";
  double total = 0;
  int64_t launches = 0;
  std::map<OpClass, std::pair<int64_t, double>> classes;
  for (const NsysKernel& k : report->kernels) {
    total += k.total_s;
    launches += k.instances;
    classes[k.op_class].first += k.instances;
    classes[k.op_class].second += k.total_s;
  }
  const bool ordered = !report->launches.empty();
  std::vector<MeasuredKernel> measured;
  if (ordered) {
    for (const NsysLaunch& l : report->launches) {
      measured.push_back({l.name, l.op_class, l.duration_s, 1});
    }
  } else {
    for (const NsysKernel& k : report->kernels) {
      measured.push_back({k.name, k.op_class, k.total_s, k.instances});
    }
  }
  nlohmann::json out_json;
  std::ostream& out = *ctx.out;
  if (json) {
    out_json["file"] = o.file;
    out_json["format"] = "nsys " + report->report;
    out_json["gpu_time_s"] = total;
    out_json["classes"] = ClassJson(classes, total);
    for (const NsysKernel& k : report->kernels) {
      out_json["kernels"].push_back({{"name", k.name},
                                     {"class", NameOf(k.op_class)},
                                     {"instances", k.instances},
                                     {"total_s", k.total_s},
                                     {"avg_s", k.avg_s},
                                     {"median_s", k.median_s},
                                     {"min_s", k.min_s},
                                     {"max_s", k.max_s}});
    }
  } else {
    out << fmt::format("profile: {}: Nsight Systems {}; {} kernels, {} launches, {} of GPU time\n",
                       o.file, report->report, report->kernels.size(), launches, Seconds(total));
    out << "\nby op class (name patterns: docs/profiles.md):\n";
    PrintClassTable(out, classes, total);
    const size_t shown =
        o.top > 0 ? std::min<size_t>(o.top, report->kernels.size()) : report->kernels.size();
    out << fmt::format("\nkernels by time ({} of {}):\n", shown, report->kernels.size());
    TextTable t({"kernel", "class", "launches", "total", "avg", "med", "share"},
                {false, false, true, true, true, true, true});
    for (size_t i = 0; i < shown; ++i) {
      const NsysKernel& k = report->kernels[i];
      t.AddRow({ShortKernelName(k.name, 52), std::string(NameOf(k.op_class)),
                std::to_string(k.instances), Seconds(k.total_s), Seconds(k.avg_s),
                Seconds(k.median_s), total > 0 ? Pct(k.total_s / total) : "-"});
    }
    out << t.Render(2);
  }
  if (o.model.model.empty() && o.plot.empty()) {
    if (json) *ctx.out << out_json.dump(2) << "\n";
    return kExitOk;
  }
  if (o.model.hw.empty()) {
    return Fail(ctx, Status::Invalid("--hw",
                                     "an nsys report does not name its GPU: pass --hw ID "
                                     "with --model or --plot"));
  }
  Result<Device> device = ctx.ResolveHw(o.model.hw);
  if (!device.ok()) return Fail(ctx, device.status());
  return FinishWithModel(ctx, o, *device, measured, ordered, {}, {}, json ? &out_json : nullptr,
                         fmt::format("{} on {} (Nsight Systems)", o.file, device->id));
}

}  // namespace roofline::cli
