// Telling graph files, ONNX models and network presets from LLM configs, and loading them.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "roofline/network.h"

namespace roofline {

bool IsOnnxFile(const std::string& model) {
  const std::string ext = std::filesystem::path(model).extension().string();
  return ext == ".onnx" || ext == ".ONNX";
}

bool IsGraphPresetId(const std::string& model) {
  // A file of that name wins, and a folder holding a config.json (an LLM) does.
  std::error_code ec;
  if (std::filesystem::is_regular_file(model, ec) ||
      std::filesystem::is_regular_file(std::filesystem::path(model) / "config.json", ec)) {
    return false;
  }
  const std::vector<std::string> ids = GraphPresetIds();
  return std::binary_search(ids.begin(), ids.end(), model);
}

bool IsNetworkInput(const std::string& model) {
  if (IsOnnxFile(model)) return true;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(model, ec)) return IsGraphPresetId(model);
  std::ifstream in(model, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head.find("\"roofline-graph\"") != std::string::npos;
}

Result<NetworkGraph> LoadNetwork(const std::string& model, const DimBindings& dims,
                                 const NetRetype& retype, DimBindings* analysis_dims) {
  Result<NetworkGraph> g = Status::Invalid(model, "not loaded");
  if (IsOnnxFile(model)) {
    g = LoadOnnxModel(model, dims);
    if (!g.ok()) return g.status();
    // The loader bound the dims; pass on those the graph still lists.
    analysis_dims->clear();
    for (const auto& [name, def] : g->dims) {
      const auto it = dims.find(name);
      if (it != dims.end()) (*analysis_dims)[name] = it->second;
    }
    if (g->origin.empty()) g->origin = model;
  } else {
    *analysis_dims = dims;
    std::optional<NetworkGraph> found;
    if (IsGraphPresetId(model)) {
      Result<std::optional<NetworkGraph>> preset = FindGraphPreset(model);
      if (!preset.ok()) return preset.status();
      found = std::move(*preset);
    }
    g = found ? Result<NetworkGraph>(std::move(*found)) : LoadGraphFile(model);
    if (!g.ok()) return g.status();
  }
  Result<int> retyped = RetypeNetwork(*g, retype);
  if (!retyped.ok()) return retyped.status();
  return g;
}

}  // namespace roofline
