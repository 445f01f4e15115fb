// Graph files (docs/graph-format.md): reading with field-accurate errors, and writing.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "roofline/network.h"
#include "roofline/op.h"
#include "roofline/suggest.h"
#include "src/util/json_util.h"

namespace roofline {
namespace {

using nlohmann::json;

constexpr int kGraphVersion = 1;

const std::vector<std::string>& OpNames() {
  static const std::vector<std::string> kOps = {
      "matmul", "linear", "conv",   "attention", "elementwise", "norm", "softmax",
      "pool",   "reduce", "resize", "embedding", "copy",        "view", "unknown"};
  return kOps;
}

std::string Index(const std::string& parent, size_t i) { return fmt::format("{}[{}]", parent, i); }

std::string RequireText(const json& j, const std::string& field) {
  if (!j.is_string()) {
    throw JsonFieldError(field, fmt::format("expected a string, got {}", TypeName(j)));
  }
  return j.get<std::string>();
}

bool OptionalBool(const json& obj, const char* key, bool fallback, const std::string& parent) {
  const auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (!it->is_boolean()) {
    throw JsonFieldError(JoinField(parent, key),
                         fmt::format("expected true or false, got {}", TypeName(*it)));
  }
  return it->get<bool>();
}

std::string OptionalText(const json& obj, const char* key, const std::string& parent) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return "";
  return RequireText(*it, JoinField(parent, key));
}

/// A whole number in [lo, hi] from a JSON number.
int64_t RequireInt(const json& j, const std::string& field, int64_t lo, int64_t hi) {
  if (!j.is_number()) {
    throw JsonFieldError(field, fmt::format("expected an integer, got {}", TypeName(j)));
  }
  const double v = j.get<double>();
  if (!std::isfinite(v) || v != std::floor(v) || v < static_cast<double>(lo) ||
      v > static_cast<double>(hi)) {
    throw JsonFieldError(
        field, fmt::format("expected an integer in {}..{}, got {}", lo, hi, FormatNumber(v)));
  }
  return static_cast<int64_t>(v);
}

bool IsDimName(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
    return false;
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

ShapeEntry ParseShapeEntry(const json& j, const std::string& field,
                           const std::vector<std::string>& dims) {
  if (j.is_number()) return ShapeEntry::Const(RequireInt(j, field, 0, kMaxDim));
  if (!j.is_string()) {
    throw JsonFieldError(field, fmt::format("expected an integer, a dimension name or an "
                                            "expression such as \"4*batch\", got {}",
                                            TypeName(j)));
  }
  const std::string text = j.get<std::string>();
  Result<ShapeEntry> e = ParseShapeExpression(text, dims);
  if (!e.ok()) {
    // An unknown name alone gets the did-you-mean of the declared names.
    const bool name = !text.empty() && text.find_first_of("*/+- 0123456789") == std::string::npos;
    if (name && e.status().what().find("unknown dimension") != std::string::npos) {
      throw JsonFieldError(field, fmt::format("unknown dimension '{}'{} (declare it in \"dims\")",
                                              text, DidYouMean(text, dims)));
    }
    throw JsonFieldError(field, e.status().what());
  }
  return std::move(e).value();
}

void ParseAttrs(const json& j, const std::string& field, NetAttrs& attrs) {
  if (!j.is_object()) {
    throw JsonFieldError(field, fmt::format("expected an object, got {}", TypeName(j)));
  }
  for (const auto& [key, value] : j.items()) {
    const std::string f = JoinField(field, key);
    std::vector<double> numbers;
    // Numbers, booleans and (nested) lists of them; strings; null is ignored.
    std::function<void(const json&, const std::string&)> collect = [&](const json& v,
                                                                       const std::string& at) {
      if (v.is_boolean()) {
        numbers.push_back(v.get<bool>() ? 1 : 0);
      } else if (v.is_number()) {
        const double d = v.get<double>();
        if (!std::isfinite(d)) throw JsonFieldError(at, "expected a finite number");
        numbers.push_back(d);
      } else if (v.is_array()) {
        for (size_t i = 0; i < v.size(); ++i) collect(v[i], Index(at, i));
      } else {
        throw JsonFieldError(at, fmt::format("expected a number, a boolean or a list of them, "
                                             "got {}",
                                             TypeName(v)));
      }
    };
    if (value.is_null()) continue;
    if (value.is_string()) {
      attrs.strings[key] = value.get<std::string>();
      continue;
    }
    if (value.is_array() && !value.empty() && value[0].is_string()) {
      // A list of strings (e.g. ONNX string lists): kept joined with commas.
      std::string joined;
      for (size_t i = 0; i < value.size(); ++i) {
        joined += (i ? "," : "") + RequireText(value[i], Index(f, i));
      }
      attrs.strings[key] = joined;
      continue;
    }
    collect(value, f);
    attrs.numbers[key] = std::move(numbers);
  }
}

NetworkGraph ParseGraph(const json& doc, const std::string& origin) {
  NetworkGraph g;
  g.origin = origin;
  RequireObject(doc, "");
  const auto format = doc.find("format");
  if (format == doc.end() || !format->is_string() || *format != "roofline-graph") {
    throw JsonFieldError("format", "expected \"roofline-graph\" (not a roofline graph file)");
  }
  const auto version = doc.find("version");
  if (version == doc.end()) throw JsonFieldError("version", "missing (expected 1)");
  const int64_t v = RequireInt(*version, "version", 1, int64_t{1} << 30);
  if (v > kGraphVersion) {
    throw JsonFieldError("version", fmt::format("version {} is newer than this reader "
                                                "understands ({}): upgrade roofline",
                                                v, kGraphVersion));
  }
  g.name = OptionalText(doc, "name", "");
  g.producer = OptionalText(doc, "producer", "");

  std::vector<std::string> dim_names;
  if (const auto dims = doc.find("dims"); dims != doc.end()) {
    RequireObject(*dims, "dims");
    for (const auto& [name, value] : dims->items()) {
      const std::string f = JoinField("dims", name);
      if (name.empty()) throw JsonFieldError(f, "a dimension needs a name");
      if (!IsDimName(name)) {
        throw JsonFieldError(f, fmt::format("'{}' is not a dimension name (letters, digits and "
                                            "_, not starting with a digit)",
                                            name));
      }
      // A default (or null), or {"default": N|null, "multiple": M}.
      const json* def = &value;
      if (value.is_object()) {
        for (const auto& [key, unused] : value.items()) {
          if (key != "default" && key != "multiple") {
            throw JsonFieldError(JoinField(f, key),
                                 fmt::format("unknown key '{}' (a dimension has \"default\" and "
                                             "\"multiple\"){}",
                                             key, DidYouMean(key, {"default", "multiple"})));
          }
        }
        const auto d = value.find("default");
        if (d == value.end()) throw JsonFieldError(JoinField(f, "default"), "missing (N or null)");
        def = &*d;
        if (const auto m = value.find("multiple"); m != value.end()) {
          g.dim_multiples[name] = RequireInt(*m, JoinField(f, "multiple"), 1, kMaxDim);
        }
      }
      const std::string df = value.is_object() ? JoinField(f, "default") : f;
      if (def->is_null()) {
        g.dims.emplace_back(name, std::nullopt);
      } else {
        const int64_t v = RequireInt(*def, df, 1, kMaxDim);
        if (const auto m = g.dim_multiples.find(name);
            m != g.dim_multiples.end() && v % m->second != 0) {
          throw JsonFieldError(df,
                               fmt::format("{} is not a multiple of {} (multiple)", v, m->second));
        }
        g.dims.emplace_back(name, v);
      }
      dim_names.push_back(name);
    }
  }

  const auto tensors = doc.find("tensors");
  if (tensors == doc.end()) throw JsonFieldError("tensors", "missing (an object of tensors)");
  RequireObject(*tensors, "tensors");
  for (const auto& [name, t] : tensors->items()) {
    const std::string f = JoinField("tensors", name);
    RequireObject(t, f);
    NetTensor tensor;
    tensor.name = name;
    const auto shape = t.find("shape");
    if (shape == t.end() || !shape->is_array()) {
      throw JsonFieldError(JoinField(f, "shape"), "missing or not a list");
    }
    for (size_t i = 0; i < shape->size(); ++i) {
      tensor.shape.push_back(
          ParseShapeEntry((*shape)[i], Index(JoinField(f, "shape"), i), dim_names));
    }
    const std::string dtype = RequireString(t, "dtype", f);
    if (!SetNetDType(tensor, dtype)) {
      throw JsonFieldError(
          JoinField(f, "dtype"),
          fmt::format("unknown dtype '{}' (expected one of {})", dtype, NetDTypeNames()));
    }
    tensor.weight = OptionalBool(t, "weight", false, f);
    tensor.parameter = OptionalBool(t, "parameter", true, f);
    g.tensors.push_back(std::move(tensor));
  }
  std::set<std::string> tensor_names;
  for (const NetTensor& t : g.tensors) tensor_names.insert(t.name);
  auto tensor_ref = [&](const json& j, const std::string& field) {
    const std::string name = RequireText(j, field);
    if (tensor_names.count(name) == 0) {
      throw JsonFieldError(field, fmt::format("unknown tensor '{}'", name));
    }
    return name;
  };
  for (const char* key : {"inputs", "outputs"}) {
    const auto list = doc.find(key);
    if (list == doc.end()) continue;
    if (!list->is_array()) throw JsonFieldError(key, "expected a list of tensor names");
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string name = tensor_ref((*list)[i], Index(key, i));
      (std::string(key) == "inputs" ? g.inputs : g.outputs).push_back(name);
    }
  }

  const auto nodes = doc.find("nodes");
  if (nodes == doc.end() || !nodes->is_array()) {
    throw JsonFieldError("nodes", "missing or not a list of nodes");
  }
  std::set<std::string> node_names;
  for (size_t i = 0; i < nodes->size(); ++i) {
    const json& n = (*nodes)[i];
    const std::string f = Index("nodes", i);
    RequireObject(n, f);
    NetNode node;
    node.name = RequireString(n, "name", f);
    // A capture on the meta or CPU device records PyTorch's CPU attention op; a GPU runs its own
    // fused kernel, so the node is named for what it computes.
    constexpr std::string_view kCpuAttention = "_scaled_dot_product_flash_attention_for_cpu";
    if (node.name.size() >= kCpuAttention.size() &&
        node.name.compare(node.name.size() - kCpuAttention.size(), kCpuAttention.size(),
                          kCpuAttention) == 0) {
      node.name.replace(node.name.size() - kCpuAttention.size(), kCpuAttention.size(),
                        "scaled_dot_product_attention");
    }
    if (!node_names.insert(node.name).second) {
      throw JsonFieldError(JoinField(f, "name"),
                           fmt::format("duplicate node name '{}'", node.name));
    }
    node.op = RequireString(n, "op", f);
    const auto& ops = OpNames();
    if (std::find(ops.begin(), ops.end(), node.op) == ops.end()) {
      throw JsonFieldError(JoinField(f, "op"),
                           fmt::format("node '{}': unknown op '{}'{} (use \"unknown\" for ops "
                                       "that cannot be costed)",
                                       node.name, node.op, DidYouMean(node.op, ops)));
    }
    node.module = OptionalText(n, "module", f);
    node.source = OptionalText(n, "source", f);
    for (const char* key : {"inputs", "outputs"}) {
      const std::string lf = JoinField(f, key);
      const auto list = n.find(key);
      if (list == n.end()) {
        if (std::string(key) == "outputs") throw JsonFieldError(lf, "missing");
        continue;
      }
      if (!list->is_array()) throw JsonFieldError(lf, "expected a list of tensor names");
      for (size_t k = 0; k < list->size(); ++k) {
        const std::string name = tensor_ref((*list)[k], Index(lf, k));
        (std::string(key) == "inputs" ? node.inputs : node.outputs).push_back(name);
      }
    }
    if (const auto attrs = n.find("attrs"); attrs != n.end()) {
      ParseAttrs(*attrs, JoinField(f, "attrs"), node.attrs);
    }
    g.nodes.push_back(std::move(node));
  }
  if (const auto notes = doc.find("notes"); notes != doc.end() && notes->is_array()) {
    for (size_t i = 0; i < notes->size(); ++i) {
      g.notes.push_back(RequireText((*notes)[i], Index("notes", i)));
    }
  }
  return g;
}

}  // namespace

Result<NetworkGraph> ParseGraphJson(std::string_view text, const std::string& origin) {
  Result<json> doc = ParseJsonText(text, origin);
  if (!doc.ok()) return doc.status();
  try {
    return ParseGraph(*doc, origin);
  } catch (const JsonFieldError& e) {
    return Status::Parse(e.field().empty() ? origin : origin + ": " + e.field(), e.what());
  }
}

Result<NetworkGraph> LoadGraphFile(const std::string& path) {
  Result<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParseGraphJson(*text, path);
}

std::string GraphToJson(const NetworkGraph& g) {
  using ojson = nlohmann::ordered_json;
  ojson doc;
  doc["format"] = "roofline-graph";
  doc["version"] = kGraphVersion;
  doc["name"] = g.name;
  if (!g.producer.empty()) doc["producer"] = g.producer;
  ojson dims = ojson::object();
  for (const auto& [name, def] : g.dims) {
    ojson value = def ? ojson(*def) : ojson(nullptr);
    if (const auto m = g.dim_multiples.find(name); m != g.dim_multiples.end()) {
      value = ojson{{"default", value}, {"multiple", m->second}};
    }
    dims[name] = value;
  }
  doc["dims"] = dims;
  ojson tensors = ojson::object();
  for (const NetTensor& t : g.tensors) {
    ojson shape = ojson::array();
    for (const ShapeEntry& e : t.shape) {
      if (e.symbolic()) {
        shape.push_back(e.ToString());
      } else {
        shape.push_back(e.value);
      }
    }
    ojson jt;
    jt["shape"] = shape;
    jt["dtype"] = NetDTypeName(t);
    if (t.weight) jt["weight"] = true;
    if (t.weight && !t.parameter) jt["parameter"] = false;
    tensors[t.name] = jt;
  }
  doc["tensors"] = tensors;
  doc["inputs"] = g.inputs;
  doc["outputs"] = g.outputs;
  ojson nodes = ojson::array();
  for (const NetNode& n : g.nodes) {
    ojson jn;
    jn["name"] = n.name;
    jn["op"] = n.op;
    if (!n.module.empty()) jn["module"] = n.module;
    if (!n.source.empty()) jn["source"] = n.source;
    jn["inputs"] = n.inputs;
    jn["outputs"] = n.outputs;
    ojson attrs = ojson::object();
    for (const auto& [k, v] : n.attrs.numbers) {
      if (v.size() == 1) {
        attrs[k] = v[0];
      } else {
        attrs[k] = v;
      }
    }
    for (const auto& [k, v] : n.attrs.strings) attrs[k] = v;
    if (!attrs.empty()) jn["attrs"] = attrs;
    nodes.push_back(jn);
  }
  doc["nodes"] = nodes;
  if (!g.notes.empty()) doc["notes"] = g.notes;
  return doc.dump(2) + "\n";
}

}  // namespace roofline
