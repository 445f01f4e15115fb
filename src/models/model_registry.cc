#include "roofline/model_registry.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "roofline/network.h"
#include "roofline/suggest.h"
#include "src/util/embedded_data.h"
#include "src/util/json_util.h"

namespace roofline {
namespace {

std::string SourceOf(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_object() && j.contains("_source") && j["_source"].is_string()) {
    return j["_source"].get<std::string>();
  }
  return "";
}

}  // namespace

ModelRegistry ModelRegistry::LoadEmbedded() {
  ModelRegistry r;
  for (const auto& f : EmbeddedFiles()) {
    if (f.path.rfind("models/", 0) != 0) continue;
    const std::string name(f.path.substr(7));
    if (name.find('/') != std::string::npos || name.size() < 6) continue;
    ModelPreset p;
    p.id = name.substr(0, name.size() - 5);
    p.text = std::string(f.content);
    p.origin = "<embedded>/data/models/" + name;
    p.source = SourceOf(p.text);
    r.presets_.push_back(std::move(p));
  }
  return r;
}

Result<ModelRegistry> ModelRegistry::LoadDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::Io(dir, "not a directory");
  ModelRegistry r;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    Result<std::string> text = ReadTextFile(e.path().string());
    if (!text.ok()) return text.status();
    ModelPreset p;
    p.id = e.path().stem().string();
    p.text = *text;
    p.origin = e.path().string();
    p.source = SourceOf(p.text);
    r.presets_.push_back(std::move(p));
  }
  std::sort(r.presets_.begin(), r.presets_.end(),
            [](const ModelPreset& a, const ModelPreset& b) { return a.id < b.id; });
  return r;
}

Result<ModelRegistry> ModelRegistry::LoadDefault() {
  const char* dir = std::getenv("ROOFLINE_DATA_DIR");
  if (dir != nullptr && *dir != '\0') return LoadDirectory(std::string(dir) + "/models");
  return LoadEmbedded();
}

Result<const ModelPreset*> ModelRegistry::Find(const std::string& id) const {
  for (const auto& p : presets_) {
    if (p.id == id) return &p;
  }
  std::vector<std::string> ids;
  for (const auto& p : presets_) ids.push_back(p.id);
  const std::vector<std::string> networks = GraphPresetIds();
  if (std::binary_search(networks.begin(), networks.end(), id)) {
    return Status::Invalid("MODEL", "'" + id +
                                        "' is a network preset (a graph): this command takes an "
                                        "LLM config; `roofline model " +
                                        id + "` analyses the network");
  }
  ids.insert(ids.end(), networks.begin(), networks.end());
  return Status::NotFound("MODEL", "unknown model '" + id + "'" + DidYouMean(id, ids) +
                                       " (see `roofline models list`, or pass a config.json path "
                                       "or a directory holding one)");
}

Result<TransformerConfig> ResolveModel(const std::string& spec, const ModelRegistry& registry) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool looks_like_path = spec.find('/') != std::string::npos ||
                               (spec.size() > 5 && spec.substr(spec.size() - 5) == ".json") ||
                               fs::exists(spec, ec);
  if (looks_like_path) {
    std::string path = spec;
    if (fs::is_directory(spec, ec)) path = (fs::path(spec) / "config.json").string();
    Result<std::string> text = ReadTextFile(path);
    if (!text.ok()) return text.status();
    return ParseHfConfig(*text, path);
  }
  Result<const ModelPreset*> p = registry.Find(spec);
  if (!p.ok()) return p.status();
  return ParseHfConfig((*p)->text, (*p)->origin);
}

}  // namespace roofline
