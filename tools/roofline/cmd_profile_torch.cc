// `roofline profile torch TRACE.json[.gz]`: kernels joined to aten ops, FLOPs from shapes.
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

int RunProfileTorch(Context& ctx, const ProfileOptions& o) {
  Result<TorchTrace> trace = LoadTorchTrace(o.file);
  if (!trace.ok()) return Fail(ctx, trace.status());
  std::string how;
  Result<Device> device =
      ResolveProfileDevice(ctx, o.model.hw, trace->device_name, trace->cc, &how,
                           DeviceHints{trace->num_sms, trace->device_memory_bytes});
  const bool need_device = !o.model.model.empty() || !o.plot.empty() || trace->has_shapes;
  if (!device.ok() && (need_device || !o.model.hw.empty())) return Fail(ctx, device.status());
  const Device* dev = device.ok() ? &*device : nullptr;
  const TorchSummary summary = SummarizeTorch(*trace, dev);
  const bool json = o.format == OutputFormat::kJson;
  nlohmann::json out_json;
  std::string text;
  if (json) {
    out_json = TorchProfileJson(*trace, summary, o.file, dev);
  } else {
    text = RenderTorchProfileTable(*trace, summary, o.file, dev, how, o.top);
  }
  if (!dev) {
    *ctx.out << (json ? out_json.dump(2) + "\n" : text);
    return kExitOk;
  }
  std::vector<std::string> engines;
  std::vector<RooflinePoint> points = TorchRooflinePoints(summary, &engines);
  return FinishWithModel(ctx, o, *dev, summary.measured, true, points, engines,
                         json ? &out_json : nullptr, text,
                         fmt::format("{} on {} (PyTorch profiler)", std::filesystem::path(o.file).filename().string(), dev->id));
}

}  // namespace roofline::cli
