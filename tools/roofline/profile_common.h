// What the three `roofline profile` subcommands share: options, the device, the join with a
// prediction, the plot and the op-class summary.
#ifndef ROOFLINE_TOOLS_ROOFLINE_PROFILE_COMMON_H_
#define ROOFLINE_TOOLS_ROOFLINE_PROFILE_COMMON_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "roofline/plot.h"
#include "roofline/profile.h"
#include "tools/roofline/commands.h"
#include "roofline/output_format.h"
#include "roofline/scenario.h"

namespace roofline::cli {

/// Options every `profile` subcommand takes.
struct ProfileOptions {
  std::string file;
  std::string plot;
  int top = 30;
  bool top_given = false;  ///< JSON lists every kernel unless --top is given
  OutputFormat format = OutputFormat::kTable;
  /// --model (empty: none) and the workload flags; `hw` is --hw (empty: matched from the file).
  Scenario model;
};

/// The device: --hw, else matched from what the profile says (name, compute capability, and
/// the SM count and memory size when it gives them); `how` says which, for printing.
Result<Device> ResolveProfileDevice(Context& ctx, const std::string& hw, std::string_view name,
                                    std::string_view cc, std::string* how,
                                    const DeviceHints& hints = {});

/// The --model part shared by the subcommands: predicts, joins `measured` (in launch order when
/// `ordered`), prints `text` (the profile's own table; a warning first when the join does not
/// match) and the join, or adds the join to `json`; writes --plot; then prints `json` if set.
int FinishWithModel(Context& ctx, const ProfileOptions& o, const Device& device,
                    const std::vector<MeasuredKernel>& measured, bool ordered,
                    std::vector<RooflinePoint> points, std::vector<std::string> engines,
                    nlohmann::json* json, const std::string& text, const std::string& title);

int RunProfileNcu(Context& ctx, const ProfileOptions& o);
int RunProfileNsys(Context& ctx, const ProfileOptions& o);
int RunProfileTorch(Context& ctx, const ProfileOptions& o);

}  // namespace roofline::cli

#endif  // ROOFLINE_TOOLS_ROOFLINE_PROFILE_COMMON_H_
