// Reading a run's scenario fields from JSON: shared by the published runs (step-level) and the
// serving runs (at a stated load). Internal to the validate layer.
#ifndef ROOFLINE_SRC_VALIDATE_RUN_FIELDS_H_
#define ROOFLINE_SRC_VALIDATE_RUN_FIELDS_H_

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/cost.h"
#include "roofline/device_db.h"
#include "roofline/model_registry.h"
#include "roofline/scenario.h"
#include "roofline/transformer.h"
#include "src/util/json_util.h"

namespace roofline {

/// A scenario field from its JSON value: sizes and counts as positive integers, flags as
/// booleans, the rest as strings; read by the field table (SetField) as the CLI reads it.
/// Throws JsonFieldError naming `where` and the key.
void ReadRunField(Scenario& s, const Field& f, const nlohmann::json& r, const std::string& where);

/// What a run needs to be costed: its model, device, cost options and workload (with the
/// engine's workload fields where the run does not give them, as `--engine` takes them).
struct RunSetup {
  TransformerConfig config;
  const Device* device = nullptr;
  CostOptions cost;
  Workload workload;
};
Result<RunSetup> ResolveRun(const Scenario& run, const std::string& where, const DeviceDatabase& db,
                            const ModelRegistry& registry,
                            std::shared_ptr<const EfficiencyData> efficiency);

/// A file of runs: `{"schema_version": 1, "comment": ..., "runs": [...]}`, each run read by
/// `parse(json, "runs[i]")` (a Run with `id` and `where`), ids unique; errors name `origin`, the
/// run and the field (`what`: "published runs", "serving runs").
template <typename Run, typename Parse>
Result<std::vector<Run>> ParseRunsFile(std::string_view text, const std::string& origin,
                                       const std::string& what, Parse parse) {
  Result<nlohmann::json> parsed = ParseJsonText(text, origin);
  if (!parsed.ok()) return parsed.status();
  try {
    const nlohmann::json& root = *parsed;
    RequireObject(root, "");
    CheckKeys(root, "", {"schema_version", "comment", "runs"});
    if (RequireNumber(root, "schema_version", "") != 1) {
      throw JsonFieldError("schema_version", "unsupported schema_version (expected 1)");
    }
    if (!root.contains("runs") || !root.at("runs").is_array() || root.at("runs").empty()) {
      throw JsonFieldError("runs", "expected a non-empty array of runs");
    }
    std::vector<Run> runs;
    for (size_t i = 0; i < root.at("runs").size(); ++i) {
      const std::string field = "runs[" + std::to_string(i) + "]";
      runs.push_back(parse(root.at("runs")[i], field));
      runs.back().where = origin + ": " + field + " (" + runs.back().id + ")";
      for (size_t j = 0; j + 1 < runs.size(); ++j) {
        if (runs[j].id == runs.back().id) {
          throw JsonFieldError(field + ".id", "duplicate id '" + runs.back().id + "'");
        }
      }
    }
    return runs;
  } catch (const JsonFieldError& e) {
    return Status::Invalid(origin + (e.field().empty() ? "" : ": " + e.field()), e.what());
  } catch (const nlohmann::json::exception& e) {
    return Status::Invalid(origin, "malformed " + what + ": " + e.what());
  }
}

/// The text of `validation/NAME` and its origin: `$ROOFLINE_DATA_DIR/validation/NAME` when that
/// variable is set, else the embedded copy (NotFound when not compiled in).
struct RunsText {
  std::string text, origin;
};
Result<RunsText> DefaultRunsText(const std::string& name);

}  // namespace roofline

#endif  // ROOFLINE_SRC_VALIDATE_RUN_FIELDS_H_
