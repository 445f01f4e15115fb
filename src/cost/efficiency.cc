// Parsing of data/efficiency.json and of the expected-time options.
#include "roofline/efficiency.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "roofline/suggest.h"
#include "src/cost/efficiency_json.h"
#include "src/cost/kernel_term.h"
#include "src/util/embedded_data.h"
#include "src/util/json_util.h"

namespace roofline {

using nlohmann::json;

const json& Need(const json& j, const char* key, const std::string& parent) {
  if (!j.contains(key)) throw JsonFieldError(JoinField(parent, key), "missing");
  return j.at(key);
}

Figure ParseFigure(const json& j, const std::string& field, double max, bool zero_ok,
                   const std::string& unit) {
  RequireObject(j, field);
  CheckKeys(j, field, {"value", "source"});
  Figure f;
  f.value = zero_ok ? RequireNonNegative(j, "value", field) : RequirePositive(j, "value", field);
  if (f.value > max) {
    const std::string what = !unit.empty() ? " " + unit + ")"
                             : max == 1    ? ": a fraction of a ceiling)"
                                           : " s)";
    throw JsonFieldError(
        field + ".value",
        FormatNumber(f.value) + " is out of range (expected at most " + FormatNumber(max) + what);
  }
  f.source = RequireString(j, "source", field, "every figure needs its source");
  return f;
}

Figure EntryFigure(const json& entry, const std::string& field, double max) {
  return ParseFigure(
      json{{"value", Need(entry, "value", field)}, {"source", Need(entry, "source", field)}},
      field, max, false);
}

namespace {

constexpr std::string_view kRuntimeNames[kNumRuntimes] = {"eager", "cuda-graph", "compiled"};

EfficiencyData ParseEfficiencyJson(const json& root) {
  RequireObject(root, "");
  CheckKeys(
      root, "",
      {"schema_version", "comment", "assumed", "matmul_tiles", "flash_attention", "attention_waves",
       "collective_latency", "launch", "weight_only_kernels", "module_launches"});
  if (RequireNumber(root, "schema_version", "") != 1) {
    throw JsonFieldError("schema_version", "unsupported schema_version (expected 1)");
  }
  EfficiencyData d;
  const json& assumed = Need(root, "assumed", "");
  RequireObject(assumed, "assumed");
  CheckKeys(assumed, "assumed", {"compute", "memory", "link"});
  d.assumed_compute = ParseFigure(Need(assumed, "compute", "assumed"), "assumed.compute", 1, false);
  d.assumed_memory = ParseFigure(Need(assumed, "memory", "assumed"), "assumed.memory", 1, false);
  d.assumed_link = ParseFigure(Need(assumed, "link", "assumed"), "assumed.link", 1, false);

  // Each kernel term's section is read beside its term (src/cost/kernel_terms/).
  ParseMatmulTiles(root, d);
  ParseFlashAttention(root, d);
  ParseAttentionWaves(root, d);
  ForEachEntry(Need(root, "collective_latency", ""), "collective_latency",
               {"device", "link", "call_s", "step_s"},
               [&](const json& f, const std::string& field) {
                 EfficiencyData::LinkLatency l;
                 l.device = RequireString(f, "device", field, "the device it was measured on");
                 l.link = RequireString(f, "link", field, "the link it was measured on");
                 l.call_s = ParseFigure(Need(f, "call_s", field), field + ".call_s", 1e-3, false);
                 l.step_s = ParseFigure(Need(f, "step_s", field), field + ".step_s", 1e-3, false);
                 d.collective_latency.push_back(std::move(l));
               });

  ParseLaunch(root, d);
  ParseWeightKernels(root, d);
  ParseModuleLaunches(root, d);
  return d;
}

}  // namespace

std::string_view NameOf(CeilingSet c) { return c == CeilingSet::kSpec ? "spec" : "achievable"; }

namespace {

// The --efficiency CLASS names, in KernelClass order.
constexpr std::array<std::string_view, kNumClasses> kOverrideClasses = {"matmul", "attention",
                                                                        "vector", "comm"};
static_assert(kNumClasses == 4, "a kernel class was added: name it in kOverrideClasses");

}  // namespace

std::string_view EfficiencyClassName(KernelClass c) {
  return kOverrideClasses[static_cast<size_t>(c)];
}

std::string DescribeExpectedOptions(const ExpectedOptions& o) {
  std::string s = fmt::format("{} ceilings, runtime {}", NameOf(o.ceilings), NameOf(o.runtime));
  if (!o.modules.empty()) s += ", --modules " + o.modules;
  if (!o.weight_kernel.empty()) s += ", --weight-kernel " + o.weight_kernel;
  if (o.fp16_accumulate) s += ", --accumulate fp16";
  for (size_t c = 0; c < o.class_efficiency.size(); ++c) {
    if (o.class_efficiency[c] > 0) {
      s += fmt::format(", --efficiency {}={}", kOverrideClasses[c], o.class_efficiency[c]);
    }
  }
  return s;
}

std::string_view NameOf(Runtime r) { return kRuntimeNames[static_cast<int>(r)]; }

Result<EfficiencyData> ParseEfficiencyData(std::string_view json_text, const std::string& origin) {
  Result<json> parsed = ParseJsonText(json_text, origin);
  if (!parsed.ok()) return parsed.status();
  try {
    EfficiencyData d = ParseEfficiencyJson(*parsed);
    d.origin = origin;
    return d;
  } catch (const JsonFieldError& e) {
    return Status::Invalid(origin + (e.field().empty() ? "" : ": " + e.field()), e.what());
  } catch (const json::exception& e) {
    return Status::Invalid(origin, std::string("malformed efficiency data: ") + e.what());
  }
}

Result<EfficiencyData> LoadDefaultEfficiencyData() {
  const char* dir = std::getenv("ROOFLINE_DATA_DIR");
  if (dir != nullptr && *dir != '\0') {
    const std::string path = std::string(dir) + "/efficiency.json";
    Result<std::string> text = ReadTextFile(path);
    if (!text.ok()) return text.status();
    return ParseEfficiencyData(*text, path);
  }
  if (const EmbeddedFile* f = FindEmbeddedFile("efficiency.json")) {
    return ParseEfficiencyData(f->content, "<embedded>/data/efficiency.json");
  }
  return Status::NotFound("<embedded>/data/efficiency.json", "not compiled into this build");
}

namespace {

// The entry of `list` named `name`, or an error naming `where`, the names there are and a
// near miss.
template <typename Entry>
Result<const Entry*> FindNamed(const std::vector<Entry>& list, std::string_view name,
                               const std::string& where, const std::string& what,
                               const std::string& origin) {
  std::vector<std::string> names;
  for (const Entry& e : list) {
    if (e.name == name) return &e;
    names.push_back(e.name);
  }
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  return Status::Invalid(
      where, "unknown " + what + " '" + std::string(name) + "'" +
                 DidYouMean(std::string(name), names) +
                 (names.empty() ? " (" + origin + " lists none)" : " (expected " + known + ")"));
}

}  // namespace

std::string RowsPhrase(const EfficiencyData::WeightKernelRegime& r) {
  const auto rows = [](int64_t n) { return fmt::format("{} row{}", n, n == 1 ? "" : "s"); };
  if (r.max_rows == 0) return "from " + rows(r.min_rows) + " on";
  if (r.max_rows == r.min_rows) return rows(r.min_rows);
  return fmt::format("{}-{} rows", r.min_rows, r.max_rows);
}

Result<const EfficiencyData::WeightKernel*> FindWeightKernel(const EfficiencyData& data,
                                                             std::string_view name,
                                                             const std::string& where) {
  return FindNamed(data.weight_kernels, name, where, "weight kernel", data.origin);
}

Result<const EfficiencyData::ModuleLaunches*> FindModuleLaunches(const EfficiencyData& data,
                                                                 std::string_view name,
                                                                 const std::string& where) {
  return FindNamed(data.module_launches, name, where, "modules", data.origin);
}

Result<CeilingSet> ParseCeilingSet(std::string_view text) {
  if (text == "spec") return CeilingSet::kSpec;
  if (text == "achievable") return CeilingSet::kAchievable;
  return Status::Invalid("--ceilings", "unknown ceiling set '" + std::string(text) +
                                           "' (expected spec or achievable)");
}

Result<Runtime> ParseRuntime(std::string_view text) {
  for (int r = 0; r < kNumRuntimes; ++r) {
    if (text == kRuntimeNames[r]) return static_cast<Runtime>(r);
  }
  const std::vector<std::string> names(std::begin(kRuntimeNames), std::end(kRuntimeNames));
  return Status::Invalid("--runtime", "unknown runtime '" + std::string(text) + "'" +
                                          DidYouMean(std::string(text), names) +
                                          " (expected eager, cuda-graph or compiled)");
}

Status ParseEfficiencyOverride(std::string_view text, ExpectedOptions& options) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return Status::Invalid("--efficiency",
                           "expected CLASS=F (e.g. matmul=0.7), got '" + std::string(text) + "'");
  }
  const std::string cls(text.substr(0, eq));
  const std::string value(text.substr(eq + 1));
  const auto found = std::find(kOverrideClasses.begin(), kOverrideClasses.end(), cls);
  if (found == kOverrideClasses.end()) {
    // Only the error needs the list of classes.
    const std::vector<std::string> classes(kOverrideClasses.begin(), kOverrideClasses.end());
    std::string listed;
    for (size_t i = 0; i < classes.size(); ++i) {
      listed += (i == 0 ? "" : i + 1 == classes.size() ? " or " : ", ") + classes[i];
    }
    return Status::Invalid("--efficiency", "unknown kernel class '" + cls + "'" +
                                               DidYouMean(cls, classes) + " (expected " + listed +
                                               ")");
  }
  const auto index = static_cast<size_t>(found - kOverrideClasses.begin());
  char* end = nullptr;
  const double f = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !(f >= 1e-3 && f <= 1)) {
    return Status::Invalid("--efficiency",
                           "efficiency of " + cls +
                               " must be a number in (0, 1], at least 0.001; got '" + value + "'");
  }
  options.class_efficiency[index] = f;
  return Status::Ok();
}

}  // namespace roofline
