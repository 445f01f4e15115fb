// Model presets (data/models/*.json: real HF config.json files) and MODEL argument resolution.
#ifndef ROOFLINE_MODEL_REGISTRY_H_
#define ROOFLINE_MODEL_REGISTRY_H_

#include <string>
#include <vector>

#include "roofline/status.h"
#include "roofline/transformer.h"

namespace roofline {

/// One preset: its id (file name without .json), where its config came from, and the text.
struct ModelPreset {
  std::string id;
  std::string source;  ///< the "_source" note of the file
  std::string origin;  ///< "<embedded>/data/models/llama-3-8b.json" or a path
  std::string text;
};

/// The presets, sorted by id.
class ModelRegistry {
 public:
  /// `$ROOFLINE_DATA_DIR/models` when set, else the copy embedded at build time.
  static Result<ModelRegistry> LoadDefault();
  /// Every *.json directly in `dir`.
  static Result<ModelRegistry> LoadDirectory(const std::string& dir);
  static ModelRegistry LoadEmbedded();

  const std::vector<ModelPreset>& presets() const { return presets_; }
  /// The preset with this id; NotFound with a "did you mean" otherwise.
  Result<const ModelPreset*> Find(const std::string& id) const;

 private:
  std::vector<ModelPreset> presets_;
};

/// MODEL: a preset id ("llama-3-8b"), a config.json path, or a directory holding config.json.
Result<TransformerConfig> ResolveModel(const std::string& spec, const ModelRegistry& registry);

}  // namespace roofline

#endif  // ROOFLINE_MODEL_REGISTRY_H_
