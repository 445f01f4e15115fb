// Internal helpers for reading JSON with field-accurate error messages.
#ifndef ROOFLINE_SRC_UTIL_JSON_UTIL_H_
#define ROOFLINE_SRC_UTIL_JSON_UTIL_H_

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/status.h"

namespace roofline {

/// Thrown inside parsers and converted to Status at their entry point. `field` is a dotted path
/// ("memory[0].bandwidth.value"); the message says what is wrong and what was expected.
class JsonFieldError : public std::runtime_error {
 public:
  JsonFieldError(std::string field, const std::string& what)
      : std::runtime_error(what), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

/// Reads a whole file; the error names the path.
Result<std::string> ReadTextFile(const std::string& path);
/// Parses JSON text; a syntax error becomes "<origin>:<line>:<column>: ...".
Result<nlohmann::json> ParseJsonText(std::string_view text, const std::string& origin);

/// "a.b" joined, with empty parents skipped.
std::string JoinField(const std::string& parent, const std::string& key);
/// A number printed the short way (1e+12 -> "1e+12", 3 -> "3").
std::string FormatNumber(double v);
/// A JSON value's type in words ("string", "number", ...), for error messages.
std::string TypeName(const nlohmann::json& j);

void RequireObject(const nlohmann::json& j, const std::string& field);
/// Rejects keys outside `allowed`, suggesting the closest allowed key.
void CheckKeys(const nlohmann::json& j, const std::string& field,
               const std::vector<std::string>& allowed);
std::string RequireString(const nlohmann::json& j, const std::string& key,
                          const std::string& parent, const std::string& why_needed = "");
double RequireNumber(const nlohmann::json& j, const std::string& key, const std::string& parent);
/// A finite number > 0.
double RequirePositive(const nlohmann::json& j, const std::string& key, const std::string& parent);
/// A finite number >= 0.
double RequireNonNegative(const nlohmann::json& j, const std::string& key,
                          const std::string& parent);
/// An integer in [1, 2^53].
int64_t RequirePositiveInteger(const nlohmann::json& j, const std::string& key,
                               const std::string& parent);

}  // namespace roofline

#endif  // ROOFLINE_SRC_UTIL_JSON_UTIL_H_
