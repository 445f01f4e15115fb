// The network IR's small pieces: attributes, tensor dtypes, symbolic dimensions and shapes.
#include "roofline/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <numeric>
#include <optional>

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

/// Limits of a shape expression: terms, names per term, a divisor, the common divisor.
constexpr size_t kMaxTerms = 32;
constexpr size_t kMaxTermDims = 8;
constexpr int64_t kMaxDivisor = int64_t{1} << 20;

/// The value of a bound entry: its terms over a common divisor, in 128-bit integers with every
/// step checked against 2^100 (well inside the type; a whole value must fit in 2^40 anyway).
Result<int64_t> EvaluateEntry(const ShapeEntry& e, const DimBindings& dims,
                              const std::string& tensor) {
  using Wide = __int128;
  constexpr Wide kLimit = static_cast<Wide>(1) << 100;
  auto at = [&dims] {
    std::string out;
    for (const auto& [name, value] : dims) {
      out += fmt::format("{}{}={}", out.empty() ? "" : ", ", name, value);
    }
    return out;
  };
  int64_t common = 1;
  for (const ShapeTerm& t : e.terms) common = std::lcm(common, t.den);
  Wide sum = 0;
  for (const ShapeTerm& t : e.terms) {
    Wide v = static_cast<Wide>(t.num) * (common / t.den);
    for (const std::string& d : t.dims) {
      const auto it = dims.find(d);
      if (it == dims.end()) {
        return Status::Invalid(tensor, fmt::format("unbound symbolic dimension '{}': bind it with "
                                                   "--dim {}=N",
                                                   d, d));
      }
      // Checked before multiplying: v stays within 2^100 and a dimension is at most 2^40.
      const Wide size = it->second;
      if (size != 0 && (v > kLimit / size || v < -kLimit / size)) {
        return Status::Invalid(
            tensor, fmt::format("shape entry '{}' exceeds 2^40 at {}", e.ToString(), at()));
      }
      v *= size;
    }
    sum += v;
  }
  if (sum % common != 0) {
    return Status::Invalid(
        tensor, fmt::format("shape entry '{}' is not a whole number at {} (the graph's sizes are "
                            "exact at multiples of its dimensions' steps only)",
                            e.ToString(), at()));
  }
  const Wide v = sum / common;
  if (v < 0 || v > kMaxDim) {
    return Status::Invalid(tensor, fmt::format("shape entry '{}' {} at {}", e.ToString(),
                                               v < 0 ? "is negative" : "exceeds 2^40", at()));
  }
  return static_cast<int64_t>(v);
}

bool IsNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string ShapeEntry::ToString() const {
  if (terms.empty()) return std::to_string(value);
  std::string out;
  for (const ShapeTerm& t : terms) {
    const int64_t mag = t.num < 0 ? -t.num : t.num;
    if (t.num < 0) {
      out += "-";
    } else if (!out.empty()) {
      out += "+";
    }
    std::string body;
    if (mag != 1 || t.dims.empty()) body = std::to_string(mag);
    for (const std::string& d : t.dims) body += (body.empty() ? "" : "*") + d;
    out += body;
    if (t.den != 1) out += "/" + std::to_string(t.den);
  }
  return out;
}

Result<ShapeEntry> ParseShapeExpression(std::string_view text,
                                        const std::vector<std::string>& dims) {
  const std::string expect =
      "expected an integer, a dimension name or an expression of them such as \"4*batch\" or "
      "\"height*width/64+77\"";
  auto bad = [&](const std::string& why) {
    return Status::Invalid("", fmt::format("'{}': {} ({})", text, why, expect));
  };
  ShapeEntry e;
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  auto integer = [&](int64_t lo, int64_t hi, int64_t& out) -> bool {
    const size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start || i - start > 15) return false;
    int64_t v = 0;
    std::from_chars(text.data() + start, text.data() + i, v);
    out = v;
    return v >= lo && v <= hi;
  };
  skip();
  if (i == text.size()) return bad("empty");
  while (i < text.size()) {
    bool negative = false;
    if (text[i] == '+' || text[i] == '-') {
      if (e.terms.empty() && text[i] == '+') return bad("a leading '+'");
      negative = text[i] == '-';
      ++i;
      skip();
    } else if (!e.terms.empty()) {
      return bad(fmt::format("unexpected '{}'", text[i]));
    }
    ShapeTerm t;
    t.num = 1;
    bool any = false;
    for (;;) {
      skip();
      if (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        int64_t v = 0;
        if (!integer(0, kMaxDim, v)) return bad("an integer above 2^40");
        if (t.num > kMaxDim / std::max<int64_t>(v, 1)) return bad("a coefficient above 2^40");
        t.num *= v;
      } else if (i < text.size() && IsNameStart(text[i])) {
        const size_t start = i;
        while (i < text.size() && IsNameChar(text[i])) ++i;
        std::string name(text.substr(start, i - start));
        if (std::find(dims.begin(), dims.end(), name) == dims.end()) {
          std::string known;
          for (const std::string& d : dims) known += (known.empty() ? "" : ", ") + d;
          return Status::Invalid("", fmt::format("unknown dimension '{}' in '{}' (declare it in "
                                                 "\"dims\"; declared: {})",
                                                 name, text, known.empty() ? "none" : known));
        }
        if (t.dims.size() == kMaxTermDims) return bad("more than 8 dimensions in one term");
        t.dims.push_back(std::move(name));
      } else {
        return bad(i < text.size() ? fmt::format("unexpected '{}'", text[i]) : "ends early");
      }
      any = true;
      skip();
      if (i < text.size() && text[i] == '*') {
        ++i;
        continue;
      }
      break;
    }
    if (!any) return bad("an empty term");
    if (i < text.size() && text[i] == '/') {
      ++i;
      skip();
      if (!integer(1, kMaxDivisor, t.den)) return bad("a divisor outside 1..2^20");
      skip();
    }
    if (negative) t.num = -t.num;
    const int64_t g = std::gcd(t.num, t.den);
    if (g > 1) {
      t.num /= g;
      t.den /= g;
    }
    if (e.terms.size() == kMaxTerms) return bad("more than 32 terms");
    e.terms.push_back(std::move(t));
  }
  int64_t common = 1;
  bool symbolic = false;
  for (const ShapeTerm& t : e.terms) {
    common = std::lcm(common, t.den);
    if (common > kMaxDim) return bad("divisors whose common multiple is above 2^40");
    symbolic = symbolic || !t.dims.empty();
  }
  if (!symbolic) return bad("no dimension in it (write a constant as a number)");
  // Constant terms last, as the capture writes them.
  std::stable_partition(e.terms.begin(), e.terms.end(),
                        [](const ShapeTerm& t) { return !t.dims.empty(); });
  return e;
}

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
  // PyTorch's default: cuDNN convolutions on TF32, matmuls in FP32.
  graph.fp32_conv_on_tf32 = false;
  if (retype.conv_tf32 && !retype.tf32) {
    int convs = 0;
    for (const NetNode& n : graph.nodes) {
      if (n.op != "conv" || n.inputs.empty()) continue;
      const NetTensor* x = graph.FindTensor(n.inputs[0]);
      if (x != nullptr && x->dtype == DType::kFp32 && x->bits == 0) ++convs;
    }
    if (convs > 0) {
      graph.fp32_conv_on_tf32 = true;
      graph.notes.push_back(fmt::format(
          "{} fp32 convolution(s) run on TF32 tensor cores, as PyTorch runs them by default "
          "(torch.backends.cudnn.allow_tf32 is true; its matmuls stay FP32: "
          "torch.backends.cuda.matmul.allow_tf32 is false); --tf32=false keeps them in FP32, "
          "--tf32 runs the matmuls and attention on TF32 too",
          convs));
    }
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
    const auto multiple = graph.dim_multiples.find(name);
    if (it != bindings.end() && multiple != graph.dim_multiples.end() &&
        it->second % multiple->second != 0) {
      return Status::Invalid(
          "--dim " + name,
          fmt::format("{} is not a multiple of {} ({}: dims.{}.multiple: the graph's sizes are "
                      "exact at multiples of {} only)",
                      it->second, multiple->second, graph.origin, name, multiple->second));
    }
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
    if (e.symbolic()) {
      Result<int64_t> bound = EvaluateEntry(e, dims, tensor.name);
      if (!bound.ok()) return bound.status();
      v = *bound;
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

Result<double> PeakActivationBytes(const NetworkGraph& g, const DimBindings& dims) {
  std::map<std::string_view, size_t> index;
  for (size_t i = 0; i < g.tensors.size(); ++i) index.emplace(g.tensors[i].name, i);
  const size_t n = g.tensors.size();
  const int64_t end = static_cast<int64_t>(g.nodes.size());
  std::vector<size_t> root(n);
  for (size_t i = 0; i < n; ++i) root[i] = i;
  std::vector<int64_t> first(n, end + 1), last(n, -1);
  auto find = [&](const std::string& name) -> std::optional<size_t> {
    const auto it = index.find(name);
    if (it == index.end()) return std::nullopt;
    return root[it->second];
  };
  for (const std::string& in : g.inputs) {
    if (auto t = find(in)) first[*t] = 0;
  }
  for (int64_t k = 0; k < end; ++k) {
    const NetNode& node = g.nodes[static_cast<size_t>(k)];
    for (const std::string& in : node.inputs) {
      if (auto t = find(in)) {
        last[*t] = std::max(last[*t], k);
        first[*t] = std::min(first[*t], k);
      }
    }
    const bool view = node.op == "view" && !node.inputs.empty() && find(node.inputs[0]);
    for (const std::string& out : node.outputs) {
      const auto it = index.find(out);
      if (it == index.end()) continue;
      if (view) {
        root[it->second] = *find(node.inputs[0]);
        continue;
      }
      first[it->second] = std::min(first[it->second], k);
      last[it->second] = std::max(last[it->second], k);
    }
  }
  // The caller holds the inputs for the whole pass; the outputs outlive it.
  for (const std::string& in : g.inputs) {
    if (auto t = find(in)) last[*t] = end;
  }
  for (const std::string& out : g.outputs) {
    if (auto t = find(out)) last[*t] = end;
  }
  std::vector<double> delta(static_cast<size_t>(end) + 2, 0.0);
  for (size_t i = 0; i < n; ++i) {
    const NetTensor& t = g.tensors[i];
    if (t.weight || root[i] != i || last[i] < 0 || first[i] > end) continue;
    Result<std::vector<int64_t>> shape = ResolveShape(t, dims);
    if (!shape.ok()) return shape.status();
    double elements = 1;
    for (int64_t d : *shape) elements *= static_cast<double>(d);
    const double bytes = elements * t.ElementBytes();
    delta[static_cast<size_t>(first[i])] += bytes;
    delta[static_cast<size_t>(last[i]) + 1] -= bytes;
  }
  double live = 0, peak = 0;
  for (double d : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace roofline
