// `roofline profile ncu FILE.csv`: Nsight Compute kernels on the roofline of their device.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>

#include "roofline/plot.h"
#include "roofline/profile.h"
#include "roofline/report.h"
#include "src/report/profile_json.h"
#include "tools/roofline/cli_util.h"
#include "tools/roofline/profile_common.h"

namespace roofline::cli {

int RunProfileNcu(Context& ctx, const ProfileOptions& o) {
  Result<NcuReport> report = LoadNcuCsv(o.file);
  if (!report.ok()) return Fail(ctx, report.status());
  if (report->kernels.empty()) {
    return Fail(ctx, Status::Parse(o.file, "no kernel rows in the Nsight Compute CSV"));
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
      ResolveProfileDevice(ctx, o.model.hw, named ? first.device : "", first.cc, &how, hints);
  if (!device.ok() && o.model.hw.empty() && device.status().code() == StatusCode::kNotFound) {
    // No database device: the peaks the file measured itself (roofline ncu-command collects
    // them) make one.
    if (std::optional<Device> own = DeviceFromNcuPeaks(*report, named ? first.device : "")) {
      how = fmt::format(
          "no database device for compute capability {}; ceilings from the "
          "file's own .peak_sustained metrics",
          first.cc);
      device = std::move(*own);
    }
  }
  // Without a device the per-kernel figures are still reported; the roofline part needs one.
  const bool need_device = !o.model.hw.empty() || !o.model.model.empty() || !o.plot.empty();
  if (!device.ok() && (need_device || device.status().code() != StatusCode::kNotFound)) {
    return Fail(ctx, device.status());
  }
  const Device* dev = device.ok() ? &*device : nullptr;

  const std::string note = dev ? how : device.status().what();
  const NcuSummary summary = SummarizeNcu(*report, dev);

  const bool json = o.format == OutputFormat::kJson;
  nlohmann::json out_json;
  std::string text;
  if (json) {
    out_json = NcuProfileJson(summary, o.file, report->layout, dev, note, o.top_given ? o.top : 0);
  } else {
    text = RenderNcuProfileTable(summary, o.file, report->layout, dev, note, o.top);
  }
  if (!dev) {
    *ctx.out << (json ? out_json.dump(2) + "\n" : text);
    return kExitOk;
  }
  // The timed kernels with FLOPs and device-memory bytes, on the roofline plot.
  std::vector<std::string> engines;
  std::vector<RooflinePoint> points = NcuRooflinePoints(summary, *dev, &engines);
  return FinishWithModel(ctx, o, *dev, summary.measured, true, points, engines,
                         json ? &out_json : nullptr, text,
                         fmt::format("{} on {} (Nsight Compute)", std::filesystem::path(o.file).filename().string(), dev->id));
}

}  // namespace roofline::cli
