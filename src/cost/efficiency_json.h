// Reading data/efficiency.json: the shapes its sections share (a figure with its source, a list
// of entries). Each kernel term parses its own section with these (src/cost/kernel_terms/);
// errors are JsonFieldError naming the field.
#ifndef ROOFLINE_SRC_COST_EFFICIENCY_JSON_H_
#define ROOFLINE_SRC_COST_EFFICIENCY_JSON_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "roofline/efficiency.h"
#include "src/util/json_util.h"

namespace roofline {

/// `j[key]`, or an error naming `parent.key` as missing.
const nlohmann::json& Need(const nlohmann::json& j, const char* key, const std::string& parent);

/// {"value": v, "source": "..."} at `field`; `max` bounds the value (a fraction: 1; a time:
/// 1e-3 s; a rate: `unit` names it); `zero_ok`: 0 is allowed.
Figure ParseFigure(const nlohmann::json& j, const std::string& field, double max, bool zero_ok,
                   const std::string& unit = "");

/// An entry's own "value" and "source" keys as a figure of at most `max`.
Figure EntryFigure(const nlohmann::json& entry, const std::string& field, double max);

/// A non-empty array (at most 64) of objects with no keys but `keys`; `entry(object, field)`
/// reads each ("name[i]").
template <typename Entry>
void ForEachEntry(const nlohmann::json& list, const std::string& name,
                  const std::vector<std::string>& keys, Entry entry) {
  if (!list.is_array() || list.empty() || list.size() > 64) {
    std::string shape;
    for (const std::string& k : keys) shape += (shape.empty() ? "\"" : ", \"") + k + "\"";
    throw JsonFieldError(name, "expected a non-empty array of {" + shape + "}");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = name + "[" + std::to_string(i) + "]";
    RequireObject(list[i], field);
    CheckKeys(list[i], field, keys);
    entry(list[i], field);
  }
}

}  // namespace roofline

#endif  // ROOFLINE_SRC_COST_EFFICIENCY_JSON_H_
