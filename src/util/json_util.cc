#include "src/util/json_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "roofline/suggest.h"

namespace roofline {

using nlohmann::json;

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Io(path, "cannot open file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Io(path, "read error");
  return ss.str();
}

Result<json> ParseJsonText(std::string_view text, const std::string& origin) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::out_of_range& e) {
    // A number beyond double's range ("1e400"): nlohmann reports it as out_of_range.406, not as
    // a parse error (found by fuzz/fuzz_device.cc).
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    return Status::Parse(origin, what + " (a number outside the range of a double)");
  } catch (const json::parse_error& e) {
    // Turn the byte offset into line:column.
    size_t line = 1;
    size_t col = 1;
    const size_t end = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    const size_t colon = what.find(": ", what.find("parse error"));
    if (colon != std::string::npos) what = what.substr(colon + 2);
    if (text.empty() || end >= text.size()) what = "truncated or empty JSON: " + what;
    return Status::Parse(fmt::format("{}:{}:{}", origin, line, col), "malformed JSON: " + what);
  }
}

std::string JoinField(const std::string& parent, const std::string& key) {
  if (parent.empty()) return key;
  return parent + "." + key;
}

std::string FormatNumber(double v) { return fmt::format("{}", v); }

std::string TypeName(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "an array";
  return "an object";
}

void RequireObject(const json& j, const std::string& field) {
  if (!j.is_object()) {
    throw JsonFieldError(field, "expected an object, got " + TypeName(j));
  }
}

void CheckKeys(const json& j, const std::string& field, const std::vector<std::string>& allowed) {
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw JsonFieldError(
          JoinField(field, key),
          "unknown key '" + key + "'" + DidYouMean(key, allowed) + " (allowed: " + list + ")");
    }
  }
}

std::string RequireString(const json& j, const std::string& key, const std::string& parent,
                          const std::string& why_needed) {
  const std::string field = JoinField(parent, key);
  if (!j.contains(key)) {
    throw JsonFieldError(
        field, "missing" + (why_needed.empty() ? " (expected a string)" : " (" + why_needed + ")"));
  }
  const json& v = j.at(key);
  if (!v.is_string()) throw JsonFieldError(field, "expected a string, got " + TypeName(v));
  std::string s = v.get<std::string>();
  if (s.empty()) throw JsonFieldError(field, "empty string (expected text)");
  return s;
}

double RequireNumber(const json& j, const std::string& key, const std::string& parent) {
  const std::string field = JoinField(parent, key);
  if (!j.contains(key)) throw JsonFieldError(field, "missing (expected a number)");
  const json& v = j.at(key);
  if (!v.is_number()) throw JsonFieldError(field, "expected a number, got " + TypeName(v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw JsonFieldError(field, "not a finite number");
  return d;
}

double RequirePositive(const json& j, const std::string& key, const std::string& parent) {
  const double d = RequireNumber(j, key, parent);
  if (!(d > 0)) {
    throw JsonFieldError(JoinField(parent, key),
                         "must be a positive number, got " + FormatNumber(d));
  }
  return d;
}

double RequireNonNegative(const json& j, const std::string& key, const std::string& parent) {
  const double d = RequireNumber(j, key, parent);
  if (d < 0) {
    throw JsonFieldError(JoinField(parent, key), "must be >= 0, got " + FormatNumber(d));
  }
  return d;
}

int64_t RequirePositiveInteger(const json& j, const std::string& key, const std::string& parent) {
  const double d = RequireNumber(j, key, parent);
  if (d < 1 || d > 9007199254740992.0 || std::floor(d) != d) {
    throw JsonFieldError(JoinField(parent, key),
                         "must be a positive integer, got " + FormatNumber(d));
  }
  return static_cast<int64_t>(d);
}

}  // namespace roofline
