// Device JSON parsing and validation (schema: docs/hardware-schema.md).
#include "roofline/device.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "roofline/suggest.h"
#include "src/util/json_util.h"

namespace roofline {
namespace {

using nlohmann::json;

// Rejects values no real device has (a typo of a few orders of magnitude, or an overflow).
void CheckMagnitude(double value, const std::string& unit, const std::string& field) {
  struct Limit {
    const char* unit;
    double max;
    const char* what;
  };
  static const Limit kLimits[] = {{"FLOP/s", 1e20, "100 EFLOP/s"},
                                  {"OP/s", 1e20, "100 EOP/s"},
                                  {"B", 1e16, "10 PB"},
                                  {"B/s", 1e18, "1 EB/s"},  // wafer-scale SRAM: ~2e16
                                  {"s", 1e3, "1000 s"},
                                  {"Hz", 1e11, "100 GHz"},
                                  {"W", 1e7, "10 MW"},
                                  {"count", 1e9, "1e9"}};
  for (const auto& l : kLimits) {
    if (unit == l.unit && value > l.max) {
      throw JsonFieldError(field + ".value", "implausible value " + FormatNumber(value) + " " +
                                                 unit + " (expected at most " + l.what + ")");
    }
  }
}

const std::vector<std::string> kProvenanceNames = {"spec", "derived", "measured", "published",
                                                   "assumed"};

// Throws JsonFieldError (converted to Status at the entry point).
Quantity ParseQuantity(const json& j, const std::string& field,
                       const std::vector<std::string>& units) {
  RequireObject(j, field);
  CheckKeys(
      j, field,
      {"value", "unit", "provenance", "source", "formula", "method", "date", "spread", "note"});
  Quantity q;
  q.value = RequirePositive(j, "value", field);
  q.unit = RequireString(j, "unit", field);
  bool unit_ok = false;
  for (const auto& u : units) unit_ok = unit_ok || u == q.unit;
  if (unit_ok) CheckMagnitude(q.value, q.unit, field);
  if (!unit_ok) {
    std::string expected;
    for (const auto& u : units) expected += (expected.empty() ? "" : " or ") + ("'" + u + "'");
    throw JsonFieldError(field + ".unit",
                         "unit '" + q.unit + "' is wrong here (expected " + expected + ")");
  }
  const std::string prov = RequireString(j, "provenance", field);
  if (prov == "spec") {
    q.provenance = Provenance::kSpec;
    q.source = RequireString(j, "source", field, "a 'spec' value needs the document it came from");
  } else if (prov == "derived") {
    q.provenance = Provenance::kDerived;
    q.formula = RequireString(j, "formula", field, "a 'derived' value needs its formula");
  } else if (prov == "measured") {
    q.provenance = Provenance::kMeasured;
    q.method = RequireString(j, "method", field, "a 'measured' value needs its method");
    q.date = RequireString(j, "date", field, "a 'measured' value needs its date (YYYY-MM-DD)");
  } else if (prov == "published") {
    q.provenance = Provenance::kPublished;
    q.source =
        RequireString(j, "source", field, "a 'published' value needs who published it and where");
    q.method = RequireString(j, "method", field, "a 'published' value needs how it was measured");
    q.date =
        RequireString(j, "date", field, "a 'published' value needs its date (YYYY or YYYY-MM)");
  } else if (prov == "assumed") {
    q.provenance = Provenance::kAssumed;
    q.note = RequireString(j, "note", field, "an 'assumed' value needs a note saying why");
  } else {
    throw JsonFieldError(field + ".provenance",
                         "unknown provenance '" + prov + "'" + DidYouMean(prov, kProvenanceNames) +
                             " (expected spec, derived, measured, published or assumed)");
  }
  if (j.contains("source") && q.source.empty()) q.source = RequireString(j, "source", field);
  if (j.contains("formula") && q.formula.empty()) q.formula = RequireString(j, "formula", field);
  if (j.contains("method") && q.method.empty()) q.method = RequireString(j, "method", field);
  if (j.contains("date") && q.date.empty()) q.date = RequireString(j, "date", field);
  if (j.contains("spread")) q.spread = RequireNonNegative(j, "spread", field);
  if (j.contains("note")) q.note = RequireString(j, "note", field);
  return q;
}

const std::vector<std::string> kComputeUnitsFloat = {"FLOP/s"};
const std::vector<std::string> kComputeUnitsInt = {"OP/s", "FLOP/s"};

// An achievable figure: published or measured (or assumed), positive, at most its spec ceiling.
Quantity ParseAchievableFigure(const json& j, const std::string& field,
                               const std::vector<std::string>& units, double spec) {
  Quantity q = ParseQuantity(j, field, units);
  if (q.provenance == Provenance::kSpec || q.provenance == Provenance::kDerived) {
    throw JsonFieldError(field + ".provenance",
                         "an achievable figure is 'published', 'measured' or 'assumed', not '" +
                             std::string(NameOf(q.provenance)) + "'");
  }
  if (q.value > spec * (1 + 1e-12)) {
    throw JsonFieldError(field + ".value", "achievable " + FormatNumber(q.value) + " " + q.unit +
                                               " is above the datasheet ceiling " +
                                               FormatNumber(spec) + " (it must be at most it)");
  }
  return q;
}

// "achievable": {"compute": {engine: figure}, "memory": {level: figure}, "links": {link: figure}}
// against the ceilings already parsed into `d`.
void ParseAchievable(const json& a, Device& d) {
  RequireObject(a, "achievable");
  CheckKeys(a, "achievable", {"compute", "compute_fp16_accumulate", "memory", "links"});
  // "compute" is what kernels reach accumulating in FP32 (PyTorch's and cuBLAS's default);
  // "compute_fp16_accumulate" what they reach accumulating in FP16, on cards that run that
  // faster (GeForce).
  auto compute = [&](const char* name, std::vector<std::pair<std::string, Quantity>>& out) {
    if (!a.contains(name)) return;
    const std::string section = std::string("achievable.") + name;
    RequireObject(a.at(name), section);
    for (const auto& [key, value] : a.at(name).items()) {
      const std::string field = section + "." + key;
      const ComputeCeiling* c = d.FindCompute(key);
      if (c == nullptr) {
        throw JsonFieldError(field, "the device lists no compute ceiling '" + key + "'");
      }
      // FP16 accumulation is a property of floating-point matmuls: FLOP/s only there.
      const std::vector<std::string> units = &out == &d.achievable.compute
                                                 ? std::vector<std::string>{c->peak.unit}
                                                 : std::vector<std::string>{"FLOP/s"};
      out.emplace_back(key, ParseAchievableFigure(value, field, units, c->peak.value));
    }
  };
  compute("compute", d.achievable.compute);
  compute("compute_fp16_accumulate", d.achievable.compute_fp16_accumulate);
  if (a.contains("memory")) {
    RequireObject(a.at("memory"), "achievable.memory");
    for (const auto& [key, value] : a.at("memory").items()) {
      const std::string field = "achievable.memory." + key;
      const MemoryLevel* m = d.FindMemory(key);
      if (m == nullptr || !m->has_bandwidth()) {
        throw JsonFieldError(field,
                             "the device lists no memory level '" + key + "' with a bandwidth");
      }
      d.achievable.memory.emplace_back(
          key, ParseAchievableFigure(value, field, {"B/s"}, m->bandwidth_bytes_per_s()));
    }
  }
  if (a.contains("links")) {
    RequireObject(a.at("links"), "achievable.links");
    for (const auto& [key, value] : a.at("links").items()) {
      const std::string field = "achievable.links." + key;
      const Link* l = d.FindLink(key);
      if (l == nullptr) throw JsonFieldError(field, "the device lists no link '" + key + "'");
      d.achievable.links.emplace_back(
          key, ParseAchievableFigure(value, field, {"B/s"}, l->bandwidth.value));
    }
  }
}

Device ParseDeviceJson(const json& root) {
  RequireObject(root, "");
  CheckKeys(root, "",
            {"schema_version", "id", "name", "vendor", "kind", "notes", "compute", "memory",
             "links", "info", "achievable", "calibration", "model_split"});
  Device d;
  const double version = RequireNumber(root, "schema_version", "");
  if (version != 1) {
    throw JsonFieldError("schema_version",
                         "unsupported schema_version " + FormatNumber(version) + " (expected 1)");
  }
  d.id = RequireString(root, "id", "");
  for (size_t i = 0; i < d.id.size(); ++i) {
    const char c = d.id[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    (i > 0 && (c == '-' || c == '.' || c == '_'));
    if (!ok) {
      throw JsonFieldError("id", "id '" + d.id +
                                     "' must be lower-case letters, digits, '-', '.', '_' "
                                     "and start with a letter or digit");
    }
  }
  d.name = RequireString(root, "name", "");
  d.vendor = RequireString(root, "vendor", "");
  d.kind = RequireString(root, "kind", "");
  static const std::vector<std::string> kKinds = {"gpu", "tpu", "accelerator", "cpu"};
  if (std::find(kKinds.begin(), kKinds.end(), d.kind) == kKinds.end()) {
    throw JsonFieldError("kind", "unknown kind '" + d.kind + "'" + DidYouMean(d.kind, kKinds) +
                                     " (expected gpu, tpu, accelerator or cpu)");
  }
  if (root.contains("notes")) d.notes = RequireString(root, "notes", "");

  // Compute ceilings.
  if (!root.contains("compute")) throw JsonFieldError("compute", "missing (expected an object)");
  const json& compute = root.at("compute");
  RequireObject(compute, "compute");
  if (compute.empty()) {
    throw JsonFieldError("compute", "no ceilings (expected at least one, e.g. \"tensor.bf16\")");
  }
  for (const auto& [key, value] : compute.items()) {
    const std::string field = "compute." + key;
    const auto& known = KnownEngines();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw JsonFieldError(field, "unknown engine.dtype '" + key + "'" + DidYouMean(key, known) +
                                      " (expected one of: " + list + ")");
    }
    const bool integer = key.find("int") != std::string::npos;
    d.compute.push_back(
        {key, ParseQuantity(value, field, integer ? kComputeUnitsInt : kComputeUnitsFloat)});
  }

  // Memory levels.
  if (!root.contains("memory")) throw JsonFieldError("memory", "missing (expected an array)");
  const json& memory = root.at("memory");
  if (!memory.is_array() || memory.empty()) {
    throw JsonFieldError("memory", "expected a non-empty array of levels, far to near");
  }
  std::set<std::string> level_names;
  for (size_t i = 0; i < memory.size(); ++i) {
    const std::string field = "memory[" + std::to_string(i) + "]";
    const json& m = memory[i];
    RequireObject(m, field);
    CheckKeys(m, field, {"level", "capacity", "usable", "bandwidth", "instances", "holds"});
    MemoryLevel level;
    level.name = RequireString(m, "level", field);
    if (!level_names.insert(level.name).second) {
      throw JsonFieldError(field + ".level", "duplicate level '" + level.name + "'");
    }
    if (!m.contains("capacity")) {
      throw JsonFieldError(field + ".capacity", "missing (expected bytes per instance)");
    }
    level.capacity = ParseQuantity(m.at("capacity"), field + ".capacity", {"B"});
    if (m.contains("usable")) {
      if (i != 0) {
        throw JsonFieldError(field + ".usable", "only device memory (the first level) has one");
      }
      level.usable = ParseQuantity(m.at("usable"), field + ".usable", {"B"});
      // The driver's total is the whole memory less what it keeps: within a few percent of the
      // marketed figure (a part sold as 80 GB has 80 GiB = 85.9e9 B; its driver reports 85.5e9).
      const double ratio = level.usable->value / level.capacity.value;
      if (!(ratio >= 0.9 && ratio <= 1.08)) {
        throw JsonFieldError(field + ".usable.value",
                             FormatNumber(level.usable->value) +
                                 " B is not within 0.9 to 1.08 times the capacity " +
                                 FormatNumber(level.capacity.value) + " B");
      }
    }
    if (m.contains("instances")) {
      level.instances = RequirePositiveInteger(m, "instances", field);
    }
    if (m.contains("bandwidth")) {
      level.bandwidth = ParseQuantity(m.at("bandwidth"), field + ".bandwidth", {"B/s"});
    } else if (i == 0) {
      throw JsonFieldError(field + ".bandwidth",
                           "missing: device memory (the first level) needs a bandwidth in B/s");
    }
    if (m.contains("holds")) {
      const std::string holds = RequireString(m, "holds", field);
      if (holds != "weights" && holds != "all") {
        throw JsonFieldError(field + ".holds",
                             "unknown '" + holds + "' (expected \"weights\" or \"all\")");
      }
      level.weights_only = holds == "weights";
      if (level.weights_only && i != 0) {
        throw JsonFieldError(field + ".holds",
                             "only the first (farthest) level may hold the weights alone");
      }
      if (level.weights_only && memory.size() < 2) {
        throw JsonFieldError(field + ".holds",
                             "a level holding only weights needs a nearer level for the rest");
      }
    }
    if (i == 1 && d.memory[0].weights_only && !m.contains("bandwidth")) {
      throw JsonFieldError(field + ".bandwidth",
                           "missing: it holds the activations and KV cache (the first level "
                           "holds only weights), so it needs a bandwidth in B/s");
    }
    d.memory.push_back(std::move(level));
  }

  // Links.
  if (root.contains("links")) {
    const json& links = root.at("links");
    if (!links.is_array()) throw JsonFieldError("links", "expected an array");
    for (size_t i = 0; i < links.size(); ++i) {
      const std::string field = "links[" + std::to_string(i) + "]";
      const json& l = links[i];
      RequireObject(l, field);
      CheckKeys(l, field, {"name", "bandwidth", "latency", "max_devices", "note"});
      Link link;
      link.name = RequireString(l, "name", field);
      if (!l.contains("bandwidth")) {
        throw JsonFieldError(field + ".bandwidth", "missing (expected B/s per direction)");
      }
      link.bandwidth = ParseQuantity(l.at("bandwidth"), field + ".bandwidth", {"B/s"});
      if (l.contains("latency")) {
        link.latency = ParseQuantity(l.at("latency"), field + ".latency", {"s"});
      }
      if (l.contains("max_devices")) {
        link.max_devices = static_cast<int>(RequirePositiveInteger(l, "max_devices", field));
      }
      d.links.push_back(std::move(link));
    }
  }

  // Informational quantities.
  if (root.contains("info")) {
    const json& info = root.at("info");
    RequireObject(info, "info");
    for (const auto& [key, value] : info.items()) {
      d.info.emplace_back(key,
                          ParseQuantity(value, "info." + key, {"count", "Hz", "W", "B", "B/s"}));
    }
  }
  if (root.contains("achievable")) ParseAchievable(root.at("achievable"), d);
  if (root.contains("model_split")) {
    const json& ms = root.at("model_split");
    RequireObject(ms, "model_split");
    CheckKeys(ms, "model_split", {"source"});
    ModelSplit split;
    split.source = RequireString(ms, "source", "model_split");
    if (split.source.empty()) throw JsonFieldError("model_split.source", "empty");
    if (d.links.empty()) {
      throw JsonFieldError("model_split",
                           "needs a link between chips (the first of \"links\" joins the stages)");
    }
    if (d.memory[0].weights_only) {
      throw JsonFieldError("model_split",
                           "a device whose weights stream from an external store is not split");
    }
    d.model_split = std::move(split);
  }
  if (root.contains("calibration")) {
    const json& cal = root.at("calibration");
    RequireObject(cal, "calibration");
    CheckKeys(cal, "calibration", {"efficiency", "kernels", "method", "date"});
    if (!cal.contains("efficiency")) {
      throw JsonFieldError("calibration.efficiency",
                           "missing (expected {\"matmul\": x, \"attention\": y, \"vector\": z})");
    }
    const json& eff = cal.at("efficiency");
    RequireObject(eff, "calibration.efficiency");
    CheckKeys(eff, "calibration.efficiency", {"matmul", "attention", "vector"});
    Calibration c;
    for (auto [key, field] : {std::pair{"matmul", &c.matmul}, std::pair{"attention", &c.attention},
                              std::pair{"vector", &c.vector}}) {
      if (!eff.contains(key)) continue;
      const double v = RequirePositive(eff, key, "calibration.efficiency");
      if (v > 2) {
        throw JsonFieldError(std::string("calibration.efficiency.") + key,
                             "implausible efficiency " + FormatNumber(v) +
                                 " (expected a fraction of the bound, at most 2)");
      }
      *field = v;
    }
    c.kernels = static_cast<int>(RequirePositiveInteger(cal, "kernels", "calibration"));
    c.method = RequireString(cal, "method", "calibration");
    c.date = RequireString(cal, "date", "calibration");
    d.calibration = c;
  }
  return d;
}

json QuantityToJson(const Quantity& q) {
  json j;
  j["value"] = q.value;
  j["unit"] = q.unit;
  j["provenance"] = std::string(NameOf(q.provenance));
  if (!q.source.empty()) j["source"] = q.source;
  if (!q.formula.empty()) j["formula"] = q.formula;
  if (!q.method.empty()) j["method"] = q.method;
  if (!q.date.empty()) j["date"] = q.date;
  if (q.spread > 0) j["spread"] = q.spread;
  if (!q.note.empty()) j["note"] = q.note;
  return j;
}

}  // namespace

std::string_view NameOf(Provenance p) {
  switch (p) {
    case Provenance::kSpec:
      return "spec";
    case Provenance::kDerived:
      return "derived";
    case Provenance::kMeasured:
      return "measured";
    case Provenance::kPublished:
      return "published";
    case Provenance::kAssumed:
      return "assumed";
  }
  return "spec";
}

Quantity MeasuredQuantity(double value, const std::string& unit, const std::string& method,
                          const std::string& date, double spread) {
  Quantity q;
  q.value = value;
  q.unit = unit;
  q.provenance = Provenance::kMeasured;
  q.method = method;
  q.date = date;
  q.spread = spread > 0 ? spread : 0;
  return q;
}

Quantity SpecQuantity(double value, const std::string& unit, const std::string& source) {
  Quantity q;
  q.value = value;
  q.unit = unit;
  q.provenance = Provenance::kSpec;
  q.source = source;
  return q;
}

std::string Quantity::Describe() const {
  switch (provenance) {
    case Provenance::kSpec:
      return "spec: " + source;
    case Provenance::kDerived:
      return "derived: " + formula;
    case Provenance::kMeasured:
      return "measured: " + method + ", " + date;
    case Provenance::kPublished:
      return "published: " + source + "; " + method + ", " + date;
    case Provenance::kAssumed:
      return "assumed: " + note;
  }
  return "";
}

const std::vector<std::string>& KnownEngines() {
  static const std::vector<std::string> kEngines = {
      "tensor.fp64", "tensor.tf32", "tensor.bf16", "tensor.fp16", "tensor.fp8", "tensor.int8",
      "tensor.fp4",  "vector.fp64", "vector.fp32", "vector.fp16", "vector.bf16"};
  return kEngines;
}

const ComputeCeiling* Device::FindCompute(std::string_view engine) const {
  for (const auto& c : compute) {
    if (c.engine == engine) return &c;
  }
  return nullptr;
}

const MemoryLevel* Device::FindMemory(std::string_view level) const {
  for (const auto& m : memory) {
    if (m.name == level) return &m;
  }
  return nullptr;
}

namespace {
const Quantity* FindFigure(const std::vector<std::pair<std::string, Quantity>>& v,
                           std::string_view key) {
  for (const auto& [k, q] : v) {
    if (k == key) return &q;
  }
  return nullptr;
}
}  // namespace

const Quantity* AchievableCeilings::ComputeFigure(std::string_view engine) const {
  return FindFigure(compute, engine);
}
const Quantity* AchievableCeilings::Fp16AccumulateFigure(std::string_view engine) const {
  return FindFigure(compute_fp16_accumulate, engine);
}
const Quantity* AchievableCeilings::MemoryFigure(std::string_view level) const {
  return FindFigure(memory, level);
}
const Quantity* AchievableCeilings::LinkFigure(std::string_view link) const {
  return FindFigure(links, link);
}

const Link* Device::FindLink(std::string_view link_name) const {
  for (const auto& l : links) {
    if (l.name == link_name) return &l;
  }
  return nullptr;
}

Result<Device> ParseDevice(std::string_view json_text, const std::string& origin) {
  Result<json> parsed = ParseJsonText(json_text, origin);
  if (!parsed.ok()) return parsed.status();
  try {
    Device d = ParseDeviceJson(*parsed);
    d.origin = origin;
    return d;
  } catch (const JsonFieldError& e) {
    return Status::Invalid(origin + (e.field().empty() ? "" : ": " + e.field()), e.what());
  }
}

Result<Device> LoadDeviceFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParseDevice(*text, path);
}

std::string DeviceToJson(const Device& d) {
  json root;
  root["schema_version"] = 1;
  root["id"] = d.id;
  root["name"] = d.name;
  root["vendor"] = d.vendor;
  root["kind"] = d.kind;
  if (!d.notes.empty()) root["notes"] = d.notes;
  json compute = json::object();
  for (const auto& c : d.compute) compute[c.engine] = QuantityToJson(c.peak);
  root["compute"] = compute;
  json memory = json::array();
  for (const auto& m : d.memory) {
    json jm;
    jm["level"] = m.name;
    jm["capacity"] = QuantityToJson(m.capacity);
    if (m.usable) jm["usable"] = QuantityToJson(*m.usable);
    if (m.instances != 1) jm["instances"] = m.instances;
    if (m.bandwidth) jm["bandwidth"] = QuantityToJson(*m.bandwidth);
    if (m.weights_only) jm["holds"] = "weights";
    memory.push_back(jm);
  }
  root["memory"] = memory;
  json links = json::array();
  for (const auto& l : d.links) {
    json jl;
    jl["name"] = l.name;
    jl["bandwidth"] = QuantityToJson(l.bandwidth);
    if (l.latency) jl["latency"] = QuantityToJson(*l.latency);
    if (l.max_devices > 0) jl["max_devices"] = l.max_devices;
    links.push_back(jl);
  }
  root["links"] = links;
  if (!d.info.empty()) {
    json info = json::object();
    for (const auto& [k, q] : d.info) info[k] = QuantityToJson(q);
    root["info"] = info;
  }
  if (!d.achievable.empty()) {
    json a = json::object();
    auto section = [&](const char* name, const std::vector<std::pair<std::string, Quantity>>& v) {
      if (v.empty()) return;
      json s = json::object();
      for (const auto& [k, q] : v) s[k] = QuantityToJson(q);
      a[name] = s;
    };
    section("compute", d.achievable.compute);
    section("compute_fp16_accumulate", d.achievable.compute_fp16_accumulate);
    section("memory", d.achievable.memory);
    section("links", d.achievable.links);
    root["achievable"] = a;
  }
  if (d.model_split) {
    root["model_split"] = {{"source", d.model_split->source}};
  }
  if (d.calibration) {
    json cal;
    cal["efficiency"] = {{"matmul", d.calibration->matmul},
                         {"attention", d.calibration->attention},
                         {"vector", d.calibration->vector}};
    cal["kernels"] = d.calibration->kernels;
    cal["method"] = d.calibration->method;
    cal["date"] = d.calibration->date;
    root["calibration"] = cal;
  }
  return root.dump(2);
}

}  // namespace roofline
