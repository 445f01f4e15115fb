// `roofline profile nsys FILE.csv`: Nsight Systems kernel time by op class.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "roofline/profile.h"
#include "roofline/report.h"
#include "src/report/profile_json.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/profile_common.h"

namespace roofline::cli {

int RunProfileNsys(Context& ctx, const ProfileOptions& o) {
  Result<NsysReport> report = LoadNsysCsv(o.file);
  if (!report.ok()) return Fail(ctx, report.status());
  const NsysSummary summary = SummarizeNsys(*report);
  const bool json = o.format == OutputFormat::kJson;
  nlohmann::json out_json;
  std::string text;
  if (json) {
    out_json = NsysProfileJson(*report, summary, o.file);
  } else {
    text = RenderNsysProfileTable(*report, summary, o.file, o.top);
  }
  if (o.model.model.empty() && o.plot.empty()) {
    *ctx.out << (json ? out_json.dump(2) + "\n" : text);
    return kExitOk;
  }
  if (o.model.hw.empty()) {
    return Fail(ctx, Status::Invalid("--hw",
                                     "an nsys report does not name its GPU: pass --hw ID "
                                     "with --model or --plot"));
  }
  Result<Device> device = ctx.ResolveHw(o.model.hw);
  if (!device.ok()) return Fail(ctx, device.status());
  return FinishWithModel(ctx, o, *device, summary.measured, summary.ordered, {}, {},
                         json ? &out_json : nullptr, text,
                         fmt::format("{} on {} (Nsight Systems)", std::filesystem::path(o.file).filename().string(), device->id));
}

}  // namespace roofline::cli
