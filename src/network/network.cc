// The network IR's small pieces: attributes, tensor dtypes, symbolic dimensions and shapes.
#include "roofline/network.h"

#include <fmt/format.h>

#include <charconv>

#include "roofline/op.h"

namespace roofline {
namespace {

/// Graph-file dtype names, the cost-model dtype they map to, and their storage bits when the
/// cost model has no DType of that size (0: the DType's own).
struct NetDTypeInfo {
  const char* name;
  DType dtype;
  int bits;
};

constexpr NetDTypeInfo kNetDTypes[] = {
    {"fp64", DType::kFp64, 0},   {"fp32", DType::kFp32, 0},   {"tf32", DType::kTf32, 0},
    {"bf16", DType::kBf16, 0},   {"fp16", DType::kFp16, 0},   {"fp8", DType::kFp8, 0},
    {"fp4", DType::kFp4, 0},     {"int64", DType::kInt8, 64}, {"int32", DType::kInt8, 32},
    {"int16", DType::kInt8, 16}, {"int8", DType::kInt8, 0},   {"uint8", DType::kInt8, 8},
    {"int4", DType::kInt4, 0},   {"bool", DType::kInt8, 8},
};

/// Largest element count of one tensor (2^62).
constexpr int64_t kMaxElements = int64_t{1} << 62;

}  // namespace

bool NetAttrs::Has(const std::string& key) const {
  return numbers.count(key) > 0 || strings.count(key) > 0;
}

double NetAttrs::Number(const std::string& key, double fallback) const {
  const auto it = numbers.find(key);
  return it == numbers.end() || it->second.empty() ? fallback : it->second.front();
}

int64_t NetAttrs::Int(const std::string& key, int64_t fallback) const {
  return static_cast<int64_t>(Number(key, static_cast<double>(fallback)));
}

std::vector<int64_t> NetAttrs::Ints(const std::string& key) const {
  std::vector<int64_t> out;
  const auto it = numbers.find(key);
  if (it == numbers.end()) return out;
  for (double v : it->second) out.push_back(static_cast<int64_t>(v));
  return out;
}

std::string NetAttrs::String(const std::string& key, const std::string& fallback) const {
  const auto it = strings.find(key);
  return it == strings.end() ? fallback : it->second;
}

const NetTensor* NetworkGraph::FindTensor(std::string_view name) const {
  for (const NetTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string DescribeRetype(const NetRetype& retype) {
  std::string s;
  if (retype.dtype) s = "--dtype " + std::string(NameOf(*retype.dtype));
  if (retype.tf32) s += std::string(s.empty() ? "" : " ") + "--tf32";
  return s;
}

Result<int> RetypeNetwork(NetworkGraph& graph, const NetRetype& retype, const std::string& flag) {
  if (retype.dtype && *retype.dtype != DType::kFp32 && *retype.dtype != DType::kBf16 &&
      *retype.dtype != DType::kFp16 && *retype.dtype != DType::kFp8) {
    return Status::Invalid(flag,
                           "a graph re-types its floating-point tensors to fp32, bf16, "
                           "fp16 or fp8, not " +
                               std::string(NameOf(*retype.dtype)));
  }
  if (retype.tf32 && retype.dtype && *retype.dtype != DType::kFp32) {
    return Status::Invalid("--tf32", "runs fp32 products on TF32 tensor cores; with --dtype " +
                                         std::string(NameOf(*retype.dtype)) + " there are none");
  }
  auto floating = [](const NetTensor& t) {
    return t.bits == 0 && !t.fixed_dtype &&
           (t.dtype == DType::kFp64 || t.dtype == DType::kFp32 || t.dtype == DType::kTf32 ||
            t.dtype == DType::kBf16 || t.dtype == DType::kFp16);
  };
  int changed = 0;
  for (NetTensor& t : graph.tensors) {
    if (!floating(t)) continue;
    DType to = retype.dtype.value_or(t.dtype);
    if (retype.tf32 && to == DType::kFp32) to = DType::kTf32;
    if (to == t.dtype) continue;
    t.dtype = to;
    ++changed;
  }
  const std::string what = DescribeRetype(retype);
  if (!what.empty()) {
    graph.notes.push_back(
        fmt::format("{}: {} floating-point tensor(s) re-typed{}", what, changed,
                    retype.tf32 ? " (tf32: fp32 storage, products on TF32 tensor cores)" : ""));
  }
  return changed;
}

bool SetNetDType(NetTensor& tensor, std::string_view name) {
  for (const NetDTypeInfo& d : kNetDTypes) {
    if (name == d.name) {
      tensor.dtype = d.dtype;
      tensor.bits = d.bits;
      return true;
    }
  }
  return false;
}

std::string NetDTypeName(const NetTensor& tensor) {
  if (tensor.bits == 8) return "uint8";
  for (const NetDTypeInfo& d : kNetDTypes) {
    if (d.dtype == tensor.dtype && d.bits == tensor.bits) return d.name;
  }
  return std::string(NameOf(tensor.dtype));
}

std::string NetDTypeNames() {
  std::string out;
  for (const NetDTypeInfo& d : kNetDTypes) out += (out.empty() ? "" : " ") + std::string(d.name);
  return out;
}

Status ParseDimBinding(const std::string& text, DimBindings& dims) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::Invalid("--dim " + text, "expected NAME=VALUE (e.g. batch=8)");
  }
  const std::string name = text.substr(0, eq);
  const std::string value = text.substr(eq + 1);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size()) {
    return Status::Invalid("--dim " + text, "'" + value + "' is not an integer");
  }
  if (v < 1 || v > kMaxDim) {
    return Status::Invalid("--dim " + text,
                           fmt::format("{} must be between 1 and 2^40, got {}", name, v));
  }
  dims[name] = v;
  return Status::Ok();
}

Result<DimBindings> ResolveDims(const NetworkGraph& graph, const DimBindings& bindings) {
  DimBindings out;
  for (const auto& [name, value] : bindings) {
    bool known = false;
    for (const auto& d : graph.dims) known = known || d.first == name;
    if (!known) {
      std::string list;
      for (const auto& d : graph.dims) list += (list.empty() ? "" : ", ") + d.first;
      return Status::Invalid("--dim " + name,
                             fmt::format("{} has no dimension '{}' (its dimensions: {})",
                                         graph.origin, name, list.empty() ? "none" : list));
    }
    if (value < 1 || value > kMaxDim) {
      return Status::Invalid("--dim " + name,
                             fmt::format("must be between 1 and 2^40, got {}", value));
    }
  }
  for (const auto& [name, def] : graph.dims) {
    const auto it = bindings.find(name);
    if (it != bindings.end()) {
      out[name] = it->second;
    } else if (def) {
      out[name] = *def;
    } else {
      return Status::Invalid(graph.origin + ": dims." + name,
                             fmt::format("symbolic dimension '{}' has no default: bind it with "
                                         "--dim {}=N",
                                         name, name));
    }
  }
  return out;
}

Result<std::vector<int64_t>> ResolveShape(const NetTensor& tensor, const DimBindings& dims) {
  std::vector<int64_t> shape;
  int64_t elements = 1;
  for (const ShapeEntry& e : tensor.shape) {
    int64_t v = e.value;
    if (!e.dim.empty()) {
      const auto it = dims.find(e.dim);
      if (it == dims.end()) {
        return Status::Invalid(tensor.name,
                               fmt::format("unbound symbolic dimension '{}': bind it with "
                                           "--dim {}=N",
                                           e.dim, e.dim));
      }
      if (e.factor < 1 || e.factor > kMaxDim || it->second > kMaxDim / e.factor) {
        return Status::Invalid(tensor.name, fmt::format("{}*{} = {}*{} exceeds 2^40", e.factor,
                                                        e.dim, e.factor, it->second));
      }
      v = e.factor * it->second;
    }
    if (v < 0 || v > kMaxDim) {
      return Status::Invalid(tensor.name, fmt::format("shape entry {} is outside 0..2^40", v));
    }
    if (v > 0 && elements > kMaxElements / v) {
      return Status::Invalid(tensor.name, "the shape has more than 2^62 elements");
    }
    elements *= v;
    shape.push_back(v);
  }
  return shape;
}

}  // namespace roofline
