// `roofline engines list|show`: the engine files, each figure with its source.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "roofline/engine.h"
#include "roofline/report.h"
#include "roofline/units.h"
#include "src/report/expected_report.h"

namespace roofline {
namespace {

std::string RuntimeText(const Engine& e) {
  auto name = [](const std::optional<Runtime>& r) {
    return r ? std::string(NameOf(*r)) : std::string("default");
  };
  return e.runtime[0] == e.runtime[1] ? name(e.runtime[1])
                                      : fmt::format("prefill {}, decode {}", name(e.runtime[0]),
                                                    name(e.runtime[1]));
}

std::string HostSummary(const Engine& e) {
  if (e.host.empty()) return "none counted";
  bool serial = false, overlapped = false;
  for (const HostPart& p : e.host) (p.mode == HostMode::kSerial ? serial : overlapped) = true;
  const double one = e.HostSeconds(HostMode::kSerial, 1, 0) + e.HostSeconds(HostMode::kOverlapped, 1, 0);
  return fmt::format("{} at 1 request ({})", Seconds(one),
                     serial && overlapped ? "serial and overlapped"
                     : serial             ? "serial"
                                          : "overlapped");
}

}  // namespace

std::string RenderEngineList(const std::vector<Engine>& engines) {
  std::string out = fmt::format("{:<22} {:<9} {:<44} {:<36} {}\n", "engine", "versions", "what",
                                "runtime", "host work per step");
  for (const Engine& e : engines) {
    out += fmt::format("{:<22} {:<9} {:<44} {:<36} {}\n", e.id, e.versions, e.label,
                       RuntimeText(e), HostSummary(e));
  }
  out += "`roofline engines show NAME[@VERSION]` lists each figure with its source; "
         "--engine NAME[@VERSION] uses one (docs/engines.md).\n";
  return out;
}

std::string RenderEngineListJson(const std::vector<Engine>& engines) {
  nlohmann::json j;
  j["engines"] = nlohmann::json::array();
  for (const Engine& e : engines) j["engines"].push_back(EngineJson(e));
  return j.dump(2) + "\n";
}

std::string RenderEngineShow(const Engine& e) {
  std::string out = fmt::format("{} {} ({}): {}\n", e.name, e.versions, e.chosen_as, e.label);
  out += fmt::format("file: {}\n", e.file);
  out += fmt::format("runtime: {}; fusion: {}", RuntimeText(e),
                     e.fused ? (*e.fused ? "fused" : "eager") : "default");
  if (e.fused_linears) {
    out += fmt::format("; fused linears: {}",
                       kLinearMergeNames[static_cast<int>(*e.fused_linears)]);
  }
  if (!e.modules.empty()) out += "; modules: " + e.modules;
  for (const auto& [dtype, names] : e.weight_kernels) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : " or ") + n;
    out += fmt::format("; {} weights: {}", dtype, list);
  }
  for (const auto& [dtype, names] : e.moe_kernels) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : " or ") + n;
    out += fmt::format("; {} routed experts: {}", dtype, list);
  }
  out += "\n";
  if (!e.source.empty()) out += "what it runs: " + e.source + "\n";
  out += "host work (step = max(GPU and launches, overlapped work) + serial work):\n";
  const std::vector<std::string> lines = DescribeHostWork(e);
  if (lines.empty()) out += "  none counted: no step-level figure for these versions\n";
  for (const std::string& l : lines) out += "  " + l + "\n";
  if (!e.notes.empty()) out += "notes: " + e.notes + "\n";
  return out;
}

std::string RenderEngineShowJson(const Engine& e) { return EngineJson(e).dump(2) + "\n"; }

}  // namespace roofline
