// The network presets of data/graphs/: embedded at build time, or read from
// $ROOFLINE_DATA_DIR/graphs.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "roofline/network.h"
#include "src/util/embedded_data.h"
#include "src/util/json_util.h"

namespace roofline {
namespace {

constexpr std::string_view kFolder = "graphs/";
constexpr std::string_view kExtension = ".json";

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

std::vector<std::string> GraphPresetIds() {
  std::vector<std::string> ids;
  const char* dir = std::getenv("ROOFLINE_DATA_DIR");
  if (dir != nullptr && *dir != '\0') {
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(std::string(dir) + "/graphs", ec)) {
      if (e.is_regular_file() && e.path().extension() == kExtension) {
        ids.push_back(e.path().stem().string());
      }
    }
  } else {
    for (const EmbeddedFile& f : EmbeddedFiles()) {
      if (f.path.substr(0, kFolder.size()) != kFolder || !EndsWith(f.path, kExtension)) continue;
      const std::string_view name = f.path.substr(kFolder.size());
      if (name.find('/') == std::string_view::npos) {
        ids.emplace_back(name.substr(0, name.size() - kExtension.size()));
      }
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<std::vector<GraphPreset>> LoadGraphPresets() {
  std::vector<GraphPreset> presets;
  const char* dir = std::getenv("ROOFLINE_DATA_DIR");
  if (dir != nullptr && *dir != '\0') {
    namespace fs = std::filesystem;
    const std::string folder = std::string(dir) + "/graphs";
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) return presets;
    for (const auto& e : fs::directory_iterator(folder, ec)) {
      if (!e.is_regular_file() || e.path().extension() != kExtension) continue;
      Result<std::string> text = ReadTextFile(e.path().string());
      if (!text.ok()) return text.status();
      presets.push_back({e.path().stem().string(), std::move(*text), e.path().string()});
    }
  } else {
    for (const EmbeddedFile& f : EmbeddedFiles()) {
      if (f.path.substr(0, kFolder.size()) != kFolder || !EndsWith(f.path, kExtension)) continue;
      const std::string_view name = f.path.substr(kFolder.size());
      if (name.find('/') != std::string_view::npos) continue;
      presets.push_back({std::string(name.substr(0, name.size() - kExtension.size())),
                         std::string(f.content), "<embedded>/data/" + std::string(f.path)});
    }
  }
  std::sort(presets.begin(), presets.end(),
            [](const GraphPreset& a, const GraphPreset& b) { return a.id < b.id; });
  return presets;
}

Result<std::optional<NetworkGraph>> FindGraphPreset(const std::string& id) {
  Result<std::vector<GraphPreset>> presets = LoadGraphPresets();
  if (!presets.ok()) return presets.status();
  for (const GraphPreset& p : *presets) {
    if (p.id != id) continue;
    Result<NetworkGraph> g = ParseGraphJson(p.text, p.origin);
    if (!g.ok()) return g.status();
    return std::optional<NetworkGraph>(std::move(*g));
  }
  return std::optional<NetworkGraph>();
}

Result<std::vector<GraphPresetInfo>> DescribeGraphPresets() {
  Result<std::vector<GraphPreset>> presets = LoadGraphPresets();
  if (!presets.ok()) return presets.status();
  std::vector<GraphPresetInfo> out;
  for (const GraphPreset& p : *presets) {
    Result<NetworkGraph> g = ParseGraphJson(p.text, p.origin);
    if (!g.ok()) return g.status();
    Result<LoweredNetwork> lowered = LowerNetwork(*g, {});
    if (!lowered.ok()) return lowered.status();
    GraphPresetInfo info;
    info.id = p.id;
    info.name = g->name;
    info.note = g->notes.empty() ? "" : g->notes.front();
    info.dims = lowered->dims;
    info.nodes = lowered->nodes;
    info.uncosted = lowered->uncosted.count;
    info.parameters = lowered->parameters;
    info.matrix_flops = lowered->matrix_flops;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace roofline
