// Serving engines read from data/engines/*.json, and their host work as a step term.
#include "roofline/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "roofline/dtype.h"
#include "roofline/units.h"
#include "src/util/embedded_data.h"
#include "src/util/json_util.h"

namespace roofline {
namespace {

using nlohmann::json;

constexpr std::string_view kHostPerKeys[kNumHostPer] = {"per_step_s", "per_request_s",
                                                        "per_layer_s"};

/// "0.6.3.post1" -> {0, 6, 3}: the leading dot-separated numbers; empty when none.
std::vector<int64_t> VersionNumbers(std::string_view text) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    int64_t v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (v > 1000000) return {};
      v = v * 10 + (text[i] - '0');
      ++i;
    }
    out.push_back(v);
    if (i + 1 < text.size() && text[i] == '.' &&
        std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  return out;
}

/// a <=> b on the first n components of each (missing components are 0).
int CompareVersions(const std::vector<int64_t>& a, const std::vector<int64_t>& b, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

struct VersionRange {
  std::vector<int64_t> low, high;  // high empty: open
};

/// Digits and single dots, starting and ending with a digit ("0.6", "1.2.3").
bool PlainVersion(std::string_view text) {
  if (text.empty() || text.front() == '.' || text.back() == '.' || text.size() > 32) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' ? text[i - 1] == '.' : !std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

/// "0.4-0.5" (0.4.0 up to every 0.5.x), "0.8-" (0.8.0 on), "1.2" (every 1.2.x).
std::optional<VersionRange> ParseRange(std::string_view text) {
  const size_t dash = text.find('-');
  VersionRange r;
  const std::string_view low = dash == std::string_view::npos ? text : text.substr(0, dash);
  if (!PlainVersion(low)) return std::nullopt;
  r.low = VersionNumbers(low);
  if (r.low.empty()) return std::nullopt;  // a number too large to read
  if (dash == std::string_view::npos) {
    r.high = r.low;
  } else {
    const std::string_view high = text.substr(dash + 1);
    if (!high.empty()) {
      if (!PlainVersion(high)) return std::nullopt;
      r.high = VersionNumbers(high);
      if (r.high.empty()) return std::nullopt;
      if (CompareVersions(r.high, r.low, std::max(r.low.size(), r.high.size())) < 0 &&
          CompareVersions(r.high, r.low, r.high.size()) < 0) {
        return std::nullopt;
      }
    }
  }
  return r;
}

bool InRange(const VersionRange& r, const std::vector<int64_t>& v) {
  if (CompareVersions(v, r.low, std::max(v.size(), r.low.size())) < 0) return false;
  return r.high.empty() || CompareVersions(v, r.high, r.high.size()) <= 0;
}

HostFigure ReadFigure(const json& j, const std::string& where) {
  RequireObject(j, where);
  CheckKeys(j, where, {"value", "provenance", "source"});
  HostFigure f;
  f.value_s = RequireNonNegative(j, "value", where);
  if (f.value_s > 1.0) throw JsonFieldError(where + ".value", "above 1 s of host work");
  f.provenance = RequireString(j, "provenance", where);
  f.source = RequireString(j, "source", where);
  if (f.source.empty()) throw JsonFieldError(where + ".source", "empty: every figure has a source");
  return f;
}

Engine ReadEntry(const json& j, const std::string& where, const std::string& id,
                 const std::string& name) {
  RequireObject(j, where);
  CheckKeys(j, where,
            {"versions", "label", "runtime", "fusion", "fused_linears", "modules", "weight_kernels", "moe_kernels", "host",
             "source", "notes", "calibrated"});
  Engine e;
  e.id = id;
  e.name = name;
  e.versions = RequireString(j, "versions", where);
  if (!ParseRange(e.versions)) {
    throw JsonFieldError(where + ".versions",
                         "'" + e.versions + "' is not a version range (\"0.4-0.5\", \"0.8-\", \"1.2\")");
  }
  if (j.contains("label")) e.label = RequireString(j, "label", where);
  if (j.contains("runtime")) {
    const std::string rw = where + ".runtime";
    RequireObject(j.at("runtime"), rw);
    CheckKeys(j.at("runtime"), rw, {"prefill", "decode"});
    int i = 0;
    for (const char* phase : {"prefill", "decode"}) {
      if (j.at("runtime").contains(phase)) {
        const std::string text = RequireString(j.at("runtime"), phase, rw);
        Result<Runtime> r = ParseRuntime(text);
        if (!r.ok()) throw JsonFieldError(rw + "." + phase, r.status().what());
        e.runtime[static_cast<size_t>(i)] = *r;
      }
      ++i;
    }
  }
  if (j.contains("fusion")) {
    const std::string f = RequireString(j, "fusion", where);
    if (f != "fused" && f != "eager") {
      throw JsonFieldError(where + ".fusion", "'" + f + "': expected fused or eager");
    }
    e.fused = f == "fused";
  }
  if (j.contains("fused_linears")) {
    const std::string f = RequireString(j, "fused_linears", where);
    e.fused_linears = ParseLinearMerge(f);
    if (!e.fused_linears || *e.fused_linears == LinearMerge::kAuto) {
      throw JsonFieldError(where + ".fused_linears",
                           "'" + f + "': expected none, qkv, gate-up or qkv,gate-up");
    }
  }
  if (j.contains("modules")) e.modules = RequireString(j, "modules", where);
  // Kernels by weight dtype: one kernel's name, or a list of names (one per kind of GPU), first
  // choice first.
  auto kernels = [&](const char* key, std::map<std::string, std::vector<std::string>>& into) {
    if (!j.contains(key)) return;
    const std::string ww = where + "." + key;
    RequireObject(j.at(key), ww);
    for (const auto& [key_text, kernel] : j.at(key).items()) {
      // The key is a weight dtype, kept by its canonical name ("bfloat16" is bf16).
      Result<DType> parsed = ParseDType(key_text, ww);
      if (!parsed.ok() || (*parsed != DType::kInt4 && *parsed != DType::kInt8 &&
                           *parsed != DType::kFp8 && *parsed != DType::kBf16 &&
                           *parsed != DType::kFp16)) {
        throw JsonFieldError(ww + "." + key_text.substr(0, 40),
                             "expected a weight dtype as the key (int4, int8, fp8, bf16, fp16)");
      }
      const std::string dtype(NameOf(*parsed));
      if (into.count(dtype) != 0) {
        throw JsonFieldError(ww + "." + key_text.substr(0, 40),
                             "names the " + dtype + " weights a second time");
      }
      std::vector<std::string>& names = into[dtype];
      if (kernel.is_array()) {
        if (kernel.empty() || kernel.size() > 16) {
          throw JsonFieldError(ww + "." + dtype, "expected 1 to 16 kernel names");
        }
        for (size_t i = 0; i < kernel.size(); ++i) {
          if (!kernel[i].is_string() || kernel[i].get<std::string>().empty()) {
            throw JsonFieldError(fmt::format("{}.{}[{}]", ww, dtype, i),
                                 "expected a kernel's name");
          }
          if (std::find(names.begin(), names.end(), kernel[i].get<std::string>()) !=
              names.end()) {
            throw JsonFieldError(fmt::format("{}.{}[{}]", ww, dtype, i),
                                 "'" + kernel[i].get<std::string>() + "' is listed twice");
          }
          names.push_back(kernel[i].get<std::string>());
        }
      } else {
        names.push_back(RequireString(j.at(key), dtype, ww));
      }
    }
  };
  kernels("weight_kernels", e.weight_kernels);
  kernels("moe_kernels", e.moe_kernels);
  if (j.contains("host")) {
    const std::string hw = where + ".host";
    if (!j.at("host").is_array()) throw JsonFieldError(hw, "expected a list of parts");
    size_t i = 0;
    for (const json& p : j.at("host")) {
      const std::string pw = fmt::format("{}[{}]", hw, i++);
      RequireObject(p, pw);
      CheckKeys(p, pw, {"name", "mode", "phase", "per_step_s", "per_request_s", "per_layer_s"});
      HostPart part;
      part.name = RequireString(p, "name", pw);
      const std::string mode = RequireString(p, "mode", pw);
      if (mode == "serial") {
        part.mode = HostMode::kSerial;
      } else if (mode == "overlapped") {
        part.mode = HostMode::kOverlapped;
      } else {
        throw JsonFieldError(pw + ".mode", "'" + mode + "': expected serial or overlapped");
      }
      if (p.contains("phase")) {
        const std::string ph = RequireString(p, "phase", pw);
        if (ph == "prefill") {
          part.phase = Phase::kPrefill;
        } else if (ph == "decode") {
          part.phase = Phase::kDecode;
        } else {
          throw JsonFieldError(pw + ".phase", "'" + ph + "': expected prefill or decode");
        }
      }
      bool any = false;
      for (int k = 0; k < kNumHostPer; ++k) {
        const std::string key(kHostPerKeys[k]);
        if (p.contains(key)) {
          part.per[static_cast<size_t>(k)] = ReadFigure(p.at(key), pw + "." + key);
          any = true;
        }
      }
      if (!any) throw JsonFieldError(pw, "no figure: give per_step_s, per_request_s or per_layer_s");
      e.host.push_back(std::move(part));
    }
  }
  if (j.contains("source")) e.source = RequireString(j, "source", where);
  if (j.contains("notes")) e.notes = RequireString(j, "notes", where);
  if (j.contains("calibrated")) {
    if (!j.at("calibrated").is_boolean()) {
      throw JsonFieldError(where + ".calibrated", "expected true or false");
    }
    e.calibrated = j.at("calibrated").get<bool>();
  }
  return e;
}

/// The entry of `entries` that `version` falls in (empty: the last entry).
Result<Engine> Choose(const std::vector<Engine>& entries, std::string_view version,
                      const std::string& spec, const std::string& where) {
  if (entries.empty()) return Status::Invalid(where, "'" + spec + "' has no entries");
  if (version.empty()) {
    Engine e = entries.back();
    e.chosen_as = fmt::format("{}: its latest entry", spec);
    return e;
  }
  const std::vector<int64_t> v = VersionNumbers(version);
  if (v.empty()) {
    return Status::Invalid(where, "'" + std::string(version) +
                                      "' is not a version (numbers and dots: 0.6.3)");
  }
  std::string ranges;
  for (const Engine& e : entries) {
    if (InRange(*ParseRange(e.versions), v)) {
      Engine out = e;
      out.chosen_as = fmt::format("{}@{}", e.id, version);
      return out;
    }
    ranges += (ranges.empty() ? "" : ", ") + e.versions;
  }
  return Status::Invalid(where, fmt::format("{} {} is not described (its file covers {})",
                                            entries.front().id, version, ranges));
}

}  // namespace

std::string_view NameOf(HostMode m) { return m == HostMode::kSerial ? "serial" : "overlapped"; }

std::string_view NameOf(HostPer p) {
  switch (p) {
    case HostPer::kStep:
      return "step";
    case HostPer::kRequest:
      return "request";
    case HostPer::kLayer:
      return "layer";
  }
  return "";
}

double Engine::HostSeconds(HostMode mode, int64_t requests, int64_t layers,
                           std::optional<Phase> phase) const {
  double s = 0;
  const std::array<double, kNumHostPer> times = {1.0, static_cast<double>(requests),
                                                 static_cast<double>(layers)};
  for (const HostPart& p : host) {
    if (p.mode != mode || (p.phase && phase && *p.phase != *phase)) continue;
    for (int k = 0; k < kNumHostPer; ++k) {
      if (p.per[static_cast<size_t>(k)]) s += p.per[static_cast<size_t>(k)]->value_s * times[k];
    }
  }
  return s;
}

Result<std::vector<Engine>> ParseEngineFile(std::string_view text, const std::string& origin) {
  Result<json> parsed = ParseJsonText(text, origin);
  if (!parsed.ok()) return parsed.status();
  try {
    const json& j = *parsed;
    RequireObject(j, "");
    CheckKeys(j, "", {"schema_version", "id", "name", "comment", "entries"});
    if (RequirePositiveInteger(j, "schema_version", "") != 1) {
      throw JsonFieldError("schema_version", "expected 1");
    }
    const std::string id = RequireString(j, "id", "");
    if (id.empty() || id.find('@') != std::string::npos) {
      throw JsonFieldError("id", "'" + id + "': a name without '@'");
    }
    const std::string name = RequireString(j, "name", "");
    if (!j.contains("entries") || !j.at("entries").is_array() || j.at("entries").empty()) {
      throw JsonFieldError("entries", "expected a non-empty list of version entries");
    }
    std::vector<Engine> out;
    size_t i = 0;
    for (const json& e : j.at("entries")) {
      out.push_back(ReadEntry(e, fmt::format("entries[{}]", i++), id, name));
      out.back().file = origin;
    }
    return out;
  } catch (const JsonFieldError& e) {
    return Status::Invalid(origin + (e.field().empty() ? "" : ": " + e.field()), e.what());
  } catch (const json::exception& e) {
    return Status::Invalid(origin, std::string("malformed engine file: ") + e.what());
  }
}

std::string EngineFileText(const Engine& e) {
  json entry;
  entry["versions"] = e.versions;
  if (!e.label.empty()) entry["label"] = e.label;
  json runtime = json::object();
  if (e.runtime[0]) runtime["prefill"] = std::string(NameOf(*e.runtime[0]));
  if (e.runtime[1]) runtime["decode"] = std::string(NameOf(*e.runtime[1]));
  if (!runtime.empty()) entry["runtime"] = runtime;
  if (e.fused) entry["fusion"] = *e.fused ? "fused" : "eager";
  if (e.fused_linears) {
    entry["fused_linears"] = std::string(kLinearMergeNames[static_cast<int>(*e.fused_linears)]);
  }
  if (!e.modules.empty()) entry["modules"] = e.modules;
  for (const auto& [key, map] : {std::pair{"weight_kernels", &e.weight_kernels},
                                  std::pair{"moe_kernels", &e.moe_kernels}}) {
    if (map->empty()) continue;
    json kernels = json::object();
    for (const auto& [dtype, names] : *map) {
      if (names.size() == 1) {
        kernels[dtype] = names.front();
      } else {
        kernels[dtype] = names;
      }
    }
    entry[key] = kernels;
  }
  if (!e.source.empty()) entry["source"] = e.source;
  if (!e.notes.empty()) entry["notes"] = e.notes;
  if (e.calibrated) entry["calibrated"] = true;
  json host = json::array();
  for (const HostPart& p : e.host) {
    json part = {{"name", p.name}, {"mode", std::string(NameOf(p.mode))}};
    if (p.phase) part["phase"] = std::string(NameOf(*p.phase));
    for (int k = 0; k < kNumHostPer; ++k) {
      if (const auto& f = p.per[static_cast<size_t>(k)]) {
        part[std::string(kHostPerKeys[k])] = {
            {"value", f->value_s}, {"provenance", f->provenance}, {"source", f->source}};
      }
    }
    host.push_back(part);
  }
  if (!host.empty()) entry["host"] = host;
  json file = {{"schema_version", 1}, {"id", e.id}, {"name", e.name}};
  file["entries"] = json::array({entry});
  return file.dump(1) + "\n";
}

Result<std::vector<Engine>> ListEngines() {
  std::vector<Engine> out;
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    if (f.path.rfind("engines/", 0) != 0) continue;
    Result<std::vector<Engine>> e = ParseEngineFile(f.content, "<embedded>/data/" + std::string(f.path));
    if (!e.ok()) return e.status();
    for (Engine& x : *e) out.push_back(std::move(x));
  }
  return out;
}

Result<Engine> LoadEngine(std::string_view spec, const std::string& where) {
  const std::string text(spec);
  const size_t at = text.rfind('@');
  const std::string id = at == std::string::npos ? text : text.substr(0, at);
  const std::string version = at == std::string::npos ? "" : text.substr(at + 1);
  if (id.empty()) return Status::Invalid(where, "empty engine name");
  if (at != std::string::npos && version.empty()) {
    return Status::Invalid(where, "'" + text + "': no version after '@'");
  }
  const bool is_path = id.find('/') != std::string::npos ||
                       (id.size() > 5 && id.substr(id.size() - 5) == ".json");
  if (is_path) {
    Result<std::string> body = ReadTextFile(id);
    if (!body.ok()) return body.status();
    Result<std::vector<Engine>> entries = ParseEngineFile(*body, id);
    if (!entries.ok()) return entries.status();
    return Choose(*entries, version, id, where);
  }
  Result<std::vector<Engine>> all = ListEngines();
  if (!all.ok()) return all.status();
  std::vector<Engine> entries;
  std::vector<std::string> ids;
  for (const Engine& e : *all) {
    if (e.id == id) entries.push_back(e);
    if (std::find(ids.begin(), ids.end(), e.id) == ids.end()) ids.push_back(e.id);
  }
  if (entries.empty()) {
    std::string known;
    for (const std::string& i : ids) known += (known.empty() ? "" : ", ") + i;
    return Status::NotFound(where, "unknown engine '" + id + "' (known: " + known +
                                       "; or a path to an engine file)");
  }
  return Choose(entries, version, id, where);
}

void EngineHost::Apply(StepTime& step) const {
  const double over =
      engine_->HostSeconds(HostMode::kOverlapped, step.requests, step.layers, step.phase);
  const double serial =
      engine_->HostSeconds(HostMode::kSerial, step.requests, step.layers, step.phase);
  const double before = step.time_s;
  step.engine_bound = over > step.time_s;
  step.time_s = std::max(step.time_s, over) + serial;
  step.engine_host_s = serial + over;
  step.engine_exposed_s = step.time_s - before;
}

std::string EngineHost::Explain(const StepTime& step) const {
  const Engine& e = *engine_;
  const double over = e.HostSeconds(HostMode::kOverlapped, step.requests, step.layers, step.phase);
  const double serial = e.HostSeconds(HostMode::kSerial, step.requests, step.layers, step.phase);
  std::string out = fmt::format("engine host work ({} {}, {}): ", e.name, e.versions,
                                e.label.empty() ? "as its file says" : e.label);
  if (e.host.empty()) {
    return out + "none counted (no step-level figure for these versions; see `roofline engines "
                 "show " + e.id + "`)";
  }
  if (serial + over == 0) return out + "none in this phase";
  if (serial > 0) out += fmt::format("{} serial, added to the step", Seconds(serial));
  if (over > 0) {
    out += fmt::format("{}{} overlapped with the GPU's work{}", serial > 0 ? "; " : "",
                       Seconds(over), step.engine_bound ? " (longer: it sets the pace)"
                                                        : " (hidden)");
  }
  return out + fmt::format(" at {} {} and {} layers", step.requests,
                           step.requests == 1 ? "request" : "requests", step.layers);
}

const Engine* EngineOf(const std::vector<std::shared_ptr<const StepTerm>>& terms) {
  for (const auto& t : terms) {
    if (const auto* e = dynamic_cast<const EngineHost*>(t.get())) return &e->engine();
  }
  return nullptr;
}

std::vector<std::string> DescribeHostWork(const Engine& e) {
  std::vector<std::string> out;
  for (const HostPart& p : e.host) {
    for (int k = 0; k < kNumHostPer; ++k) {
      const auto& f = p.per[static_cast<size_t>(k)];
      if (!f) continue;
      out.push_back(fmt::format("{}: {}{}, {} per {} ({}: {})", p.name, NameOf(p.mode),
                                p.phase ? fmt::format(", {} only", NameOf(*p.phase)) : "",
                                Seconds(f->value_s), NameOf(static_cast<HostPer>(k)),
                                f->provenance, f->source));
    }
  }
  return out;
}

}  // namespace roofline
