// Load-time evaluation of the small tensors that exported dynamic-shape models compute their
// shapes with: Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains, the Equal/Where chains of
// expand(n, -1, -1), head-size divisions and the 1/sqrt(d) of attention. libonnx 1.12's data
// propagation follows only part of them, so with the input dimensions bound the nodes downstream
// (the MatMuls and Convs that carry the FLOPs) would stay without shapes. Each node whose inputs
// are all known here is evaluated and replaced by a Constant holding its value, in the copy of the
// model that shape inference runs on.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/onnx/onnx_internal.h"

namespace roofline::onnx_frontend {
namespace {

/// Shape tensors are tiny; anything larger is data, not worth evaluating at load time.
constexpr int64_t kMaxFoldElements = 4096;

using Ints = std::vector<int64_t>;
using TP = onnx::TensorProto;

bool IsRealType(int32_t t) { return t == TP::FLOAT || t == TP::DOUBLE; }

bool IsIntType(int32_t t) {
  switch (t) {
    case TP::INT8:
    case TP::UINT8:
    case TP::INT16:
    case TP::UINT16:
    case TP::INT32:
    case TP::UINT32:
    case TP::INT64:
    case TP::UINT64:
    case TP::BOOL:
      return true;
    default:
      return false;
  }
}

/// A tensor evaluated at load time: integer and boolean types exactly in `ints`, float and double
/// in `reals`.
struct Small {
  int32_t type = 0;
  Ints dims;
  Ints ints;
  std::vector<double> reals;

  bool real() const { return IsRealType(type); }
  size_t size() const { return real() ? reals.size() : ints.size(); }
  double Real(size_t i) const { return real() ? reals[i] : static_cast<double>(ints[i]); }
};

/// Element count of a tensor small enough to evaluate; every dim is bounded too, so that an
/// empty tensor cannot carry a huge dim into the loops below.
std::optional<int64_t> Count(const Ints& dims) {
  auto n = ElementCount(dims);
  if (!n || *n > kMaxFoldElements) return std::nullopt;
  for (int64_t d : dims) {
    if (d > kMaxFoldElements) return std::nullopt;
  }
  return n;
}

template <typename T>
void AppendRaw(const std::string& raw, int64_t n, std::vector<int64_t>* ints,
               std::vector<double>* reals) {
  for (int64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
    if constexpr (std::is_floating_point_v<T>) {
      reals->push_back(static_cast<double>(v));
    } else {
      ints->push_back(static_cast<int64_t>(v));
    }
  }
}

/// Reads a small integer or float tensor; nullopt for other types, external data, or sizes over
/// the limit.
std::optional<Small> FromProto(const TP& t) {
  if (t.data_location() == TP::EXTERNAL) return std::nullopt;
  Small s;
  s.type = t.data_type();
  if (!IsIntType(s.type) && !IsRealType(s.type)) return std::nullopt;
  s.dims.assign(t.dims().begin(), t.dims().end());
  for (int64_t d : s.dims) {
    if (d < 0) return std::nullopt;
  }
  const auto n = Count(s.dims);
  if (!n) return std::nullopt;
  if (!t.raw_data().empty()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != static_cast<size_t>(*n) * static_cast<size_t>(ElemTypeBytes(s.type))) {
      return std::nullopt;
    }
    switch (s.type) {
      case TP::INT8:
        AppendRaw<int8_t>(raw, *n, &s.ints, &s.reals);
        break;
      case TP::UINT8:
      case TP::BOOL:
        AppendRaw<uint8_t>(raw, *n, &s.ints, &s.reals);
        break;
      case TP::INT16:
        AppendRaw<int16_t>(raw, *n, &s.ints, &s.reals);
        break;
      case TP::UINT16:
        AppendRaw<uint16_t>(raw, *n, &s.ints, &s.reals);
        break;
      case TP::INT32:
        AppendRaw<int32_t>(raw, *n, &s.ints, &s.reals);
        break;
      case TP::UINT32:
        AppendRaw<uint32_t>(raw, *n, &s.ints, &s.reals);
        break;
      case TP::INT64:
        AppendRaw<int64_t>(raw, *n, &s.ints, &s.reals);
        break;
      case TP::UINT64:
        AppendRaw<int64_t>(raw, *n, &s.ints, &s.reals);
        break;
      case TP::FLOAT:
        AppendRaw<float>(raw, *n, &s.ints, &s.reals);
        break;
      default:
        AppendRaw<double>(raw, *n, &s.ints, &s.reals);
        break;
    }
  } else if (s.type == TP::INT64) {
    s.ints.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (s.type == TP::UINT32 || s.type == TP::UINT64) {
    for (uint64_t v : t.uint64_data()) s.ints.push_back(static_cast<int64_t>(v));
  } else if (s.type == TP::FLOAT) {
    s.reals.assign(t.float_data().begin(), t.float_data().end());
  } else if (s.type == TP::DOUBLE) {
    s.reals.assign(t.double_data().begin(), t.double_data().end());
  } else {
    s.ints.assign(t.int32_data().begin(), t.int32_data().end());
  }
  if (s.size() != static_cast<size_t>(*n)) return std::nullopt;
  return s;
}

TP ToProto(const Small& s) {
  TP t;
  t.set_data_type(s.type);
  for (int64_t d : s.dims) t.add_dims(d);
  switch (s.type) {
    case TP::INT64:
      for (int64_t v : s.ints) t.add_int64_data(v);
      break;
    case TP::UINT32:
    case TP::UINT64:
      for (int64_t v : s.ints) t.add_uint64_data(static_cast<uint64_t>(v));
      break;
    case TP::FLOAT:
      for (double v : s.reals) t.add_float_data(static_cast<float>(v));
      break;
    case TP::DOUBLE:
      for (double v : s.reals) t.add_double_data(v);
      break;
    default:
      for (int64_t v : s.ints) t.add_int32_data(static_cast<int32_t>(v));
  }
  return t;
}

/// The value of a Constant node, or nullopt (sparse or string values, sizes over the limit).
std::optional<Small> ConstantValue(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    Small s;
    if (a.name() == "value" && a.has_t()) return FromProto(a.t());
    if (a.name() == "value_int") {
      s.type = TP::INT64;
      s.ints = {a.i()};
    } else if (a.name() == "value_ints") {
      s.type = TP::INT64;
      s.dims = {a.ints_size()};
      s.ints.assign(a.ints().begin(), a.ints().end());
    } else if (a.name() == "value_float") {
      s.type = TP::FLOAT;
      s.reals = {a.f()};
    } else if (a.name() == "value_floats") {
      s.type = TP::FLOAT;
      s.dims = {a.floats_size()};
      s.reals.assign(a.floats().begin(), a.floats().end());
    } else {
      continue;
    }
    if (!Count(s.dims)) return std::nullopt;
    return s;
  }
  return std::nullopt;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t IntAttr(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = Attr(n, name);
  return a != nullptr ? a->i() : fallback;
}

/// Converts `s` to `type` (C++ conversions: reals truncate toward zero when cast to integers).
std::optional<Small> CastTo(const Small& s, int32_t type) {
  if (!IsIntType(type) && !IsRealType(type)) return std::nullopt;
  Small out;
  out.type = type;
  out.dims = s.dims;
  for (size_t i = 0; i < s.size(); ++i) {
    if (IsRealType(type)) {
      out.reals.push_back(s.Real(i));
    } else if (!s.real()) {
      out.ints.push_back(type == TP::BOOL ? s.ints[i] != 0 : s.ints[i]);
    } else {
      const double v = s.reals[i];
      if (!std::isfinite(v) || std::fabs(v) >= 9.2e18) return std::nullopt;
      out.ints.push_back(type == TP::BOOL ? v != 0 : static_cast<int64_t>(v));
    }
  }
  return out;
}

/// Numpy broadcasting of `shapes`; nullopt when they do not broadcast.
std::optional<Ints> Broadcast(const std::vector<Ints>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Ints out(rank, 1);
  for (const auto& s : shapes) {
    for (size_t j = 0; j < s.size(); ++j) {
      int64_t& o = out[rank - s.size() + j];
      if (s[j] < 0) return std::nullopt;
      if (s[j] == o || s[j] == 1) continue;
      if (o != 1) return std::nullopt;
      o = s[j];
    }
  }
  return out;
}

/// For every element of a tensor of shape `out`, the flat index of the element of a tensor of
/// shape `in` broadcast to it.
std::vector<size_t> SourceIndex(const Ints& out, const Ints& in) {
  const size_t n = static_cast<size_t>(*ElementCount(out));
  std::vector<size_t> index(n, 0);
  Ints coord(out.size(), 0);
  for (size_t flat = 0; flat < n; ++flat) {
    size_t src = 0;
    for (size_t j = 0; j < in.size(); ++j) {
      const size_t axis = out.size() - in.size() + j;
      src = src * static_cast<size_t>(in[j]) + static_cast<size_t>(in[j] == 1 ? 0 : coord[axis]);
    }
    index[flat] = src;
    for (size_t j = out.size(); j-- > 0;) {
      if (++coord[j] < out[j]) break;
      coord[j] = 0;
    }
  }
  return index;
}

using IntOp = std::function<std::optional<int64_t>(int64_t, int64_t)>;
using RealOp = std::function<double(double, double)>;

/// An elementwise op over broadcast inputs: `ints` on integer inputs, `reals` on floating ones;
/// the result has `result_type` (0: the first input's type).
std::optional<Small> Elementwise(const std::vector<const Small*>& in, const IntOp& ints,
                                 const RealOp& reals, int32_t result_type = 0) {
  std::vector<Ints> shapes;
  for (const Small* s : in) shapes.push_back(s->dims);
  const auto dims = Broadcast(shapes);
  if (!dims || !Count(*dims)) return std::nullopt;
  std::vector<std::vector<size_t>> src;
  for (const Small* s : in) src.push_back(SourceIndex(*dims, s->dims));
  const bool real = in[0]->real();
  Small out;
  out.type = result_type != 0 ? result_type : in[0]->type;
  out.dims = *dims;
  const size_t n = src[0].size();
  for (size_t i = 0; i < n; ++i) {
    if (real) {
      double acc = in[0]->Real(src[0][i]);
      for (size_t k = 1; k < in.size(); ++k) acc = reals(acc, in[k]->Real(src[k][i]));
      if (IsRealType(out.type)) {
        out.reals.push_back(acc);
      } else {
        out.ints.push_back(static_cast<int64_t>(acc));
      }
    } else {
      std::optional<int64_t> acc = in[0]->ints[src[0][i]];
      for (size_t k = 1; k < in.size() && acc; ++k) acc = ints(*acc, in[k]->ints[src[k][i]]);
      if (!acc) return std::nullopt;
      out.ints.push_back(*acc);
    }
  }
  return out;
}

std::optional<Small> Binary(const std::string& op, const std::vector<const Small*>& in) {
  using R = std::optional<int64_t>;
  auto cmp = [&](auto pred) {
    return Elementwise(
        in, [pred](int64_t a, int64_t b) -> R { return pred(a, b) ? 1 : 0; },
        [pred](double a, double b) { return pred(a, b) ? 1.0 : 0.0; }, TP::BOOL);
  };
  using Checked = bool (*)(int64_t, int64_t, int64_t*);
  static const std::map<std::string, std::pair<Checked, double (*)(double, double)>> kArith = {
      {"Add",
       {[](int64_t a, int64_t b, int64_t* r) { return __builtin_add_overflow(a, b, r); },
        [](double a, double b) { return a + b; }}},
      {"Sub",
       {[](int64_t a, int64_t b, int64_t* r) { return __builtin_sub_overflow(a, b, r); },
        [](double a, double b) { return a - b; }}},
      {"Mul",
       {[](int64_t a, int64_t b, int64_t* r) { return __builtin_mul_overflow(a, b, r); },
        [](double a, double b) { return a * b; }}}};
  if (auto it = kArith.find(op); it != kArith.end()) {
    const Checked checked = it->second.first;
    return Elementwise(
        in,
        [checked](int64_t a, int64_t b) -> R {
          int64_t r = 0;
          return checked(a, b, &r) ? R{} : R{r};
        },
        it->second.second);
  }
  if (op == "Div") {
    return Elementwise(
        in,
        [](int64_t a, int64_t b) -> R {
          if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return R{};
          return a / b;
        },
        std::divides<double>());
  }
  if (op == "Max" || op == "Min") {
    const bool max = op == "Max";
    return Elementwise(
        in, [max](int64_t a, int64_t b) -> R { return max ? std::max(a, b) : std::min(a, b); },
        [max](double a, double b) { return max ? std::max(a, b) : std::min(a, b); });
  }
  if (op == "Pow") {
    return Elementwise(
        in,
        [](int64_t a, int64_t b) -> R {
          if (b < 0 || b > 64) return R{};
          int64_t r = 1;
          for (int64_t i = 0; i < b; ++i) {
            if (__builtin_mul_overflow(r, a, &r)) return R{};
          }
          return r;
        },
        [](double a, double b) { return std::pow(a, b); });
  }
  if (op == "Equal") return cmp([](auto a, auto b) { return a == b; });
  if (op == "Less") return cmp([](auto a, auto b) { return a < b; });
  if (op == "Greater") return cmp([](auto a, auto b) { return a > b; });
  if (op == "LessOrEqual") return cmp([](auto a, auto b) { return a <= b; });
  if (op == "GreaterOrEqual") return cmp([](auto a, auto b) { return a >= b; });
  if (op == "And") return cmp([](auto a, auto b) { return a != 0 && b != 0; });
  if (op == "Or") return cmp([](auto a, auto b) { return a != 0 || b != 0; });
  return std::nullopt;
}

/// ONNX Mod: the remainder takes the divisor's sign (Python) unless `fmod` (C's fmod).
std::optional<Small> Mod(const std::vector<const Small*>& in, bool fmod) {
  if (in.size() != 2) return std::nullopt;
  return Elementwise(
      in,
      [fmod](int64_t a, int64_t b) -> std::optional<int64_t> {
        if (b == 0 || b == -1) return b == 0 ? std::nullopt : std::optional<int64_t>(0);
        int64_t r = a % b;
        if (!fmod && r != 0 && (r < 0) != (b < 0)) r += b;
        return r;
      },
      [fmod](double a, double b) {
        double r = std::fmod(a, b);
        if (!fmod && r != 0 && (r < 0) != (b < 0)) r += b;
        return r;
      });
}

std::optional<Small> Unary(const std::string& op, const Small& x) {
  static const std::map<std::string, double (*)(double)> kReal = {
      {"Sqrt", [](double v) { return std::sqrt(v); }},
      {"Reciprocal", [](double v) { return 1.0 / v; }},
      {"Floor", [](double v) { return std::floor(v); }},
      {"Ceil", [](double v) { return std::ceil(v); }},
      {"Neg", [](double v) { return -v; }},
      {"Abs", [](double v) { return std::fabs(v); }}};
  Small out = x;
  if (op == "Identity") return out;
  if (op == "Not") {
    if (x.real()) return std::nullopt;
    for (auto& v : out.ints) v = v == 0;
    return out;
  }
  if (x.real()) {
    auto it = kReal.find(op);
    if (it == kReal.end()) return std::nullopt;
    for (auto& v : out.reals) v = it->second(v);
    return out;
  }
  if (op == "Neg" || op == "Abs") {
    for (auto& v : out.ints) {
      if (v == std::numeric_limits<int64_t>::min()) return std::nullopt;
      v = op == "Neg" ? -v : std::abs(v);
    }
    return out;
  }
  if (op == "Floor" || op == "Ceil") return out;
  return std::nullopt;
}

/// Normalises a possibly negative axis against `rank`; nullopt when out of range.
std::optional<int64_t> Axis(int64_t axis, int64_t rank) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  return axis;
}

/// Values of an axes/ints input (index `i`) or, for older opsets, attribute `attr`.
std::optional<Ints> IntsOf(const onnx::NodeProto& n, int i, const std::string& attr,
                           const std::vector<const Small*>& in) {
  if (i < n.input_size() && !n.input(i).empty()) {
    if (in[i] == nullptr || in[i]->real()) return std::nullopt;
    return in[i]->ints;
  }
  if (const auto* a = Attr(n, attr)) return Ints(a->ints().begin(), a->ints().end());
  return std::nullopt;
}

/// `x` with other dims (the same elements in the same order).
Small Relabel(const Small& x, Ints dims) {
  Small out = x;
  out.dims = std::move(dims);
  return out;
}

std::optional<Small> Gather(const onnx::NodeProto& n, const Small& data, const Small& idx) {
  if (idx.real() || data.dims.empty()) return std::nullopt;
  const auto axis = Axis(IntAttr(n, "axis", 0), static_cast<int64_t>(data.dims.size()));
  if (!axis) return std::nullopt;
  const int64_t extent = data.dims[*axis];
  int64_t outer = 1, inner = 1;
  for (int64_t j = 0; j < *axis; ++j) outer *= data.dims[j];
  for (size_t j = *axis + 1; j < data.dims.size(); ++j) inner *= data.dims[j];
  if (outer * inner * static_cast<int64_t>(idx.ints.size()) > kMaxFoldElements) {
    return std::nullopt;
  }
  Small out;
  out.type = data.type;
  out.dims.assign(data.dims.begin(), data.dims.begin() + *axis);
  out.dims.insert(out.dims.end(), idx.dims.begin(), idx.dims.end());
  out.dims.insert(out.dims.end(), data.dims.begin() + *axis + 1, data.dims.end());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k : idx.ints) {
      if (k < 0) k += extent;
      if (k < 0 || k >= extent) return std::nullopt;
      for (int64_t i = 0; i < inner; ++i) {
        const size_t src = static_cast<size_t>((o * extent + k) * inner + i);
        if (data.real()) {
          out.reals.push_back(data.reals[src]);
        } else {
          out.ints.push_back(data.ints[src]);
        }
      }
    }
  }
  return out;
}

std::optional<Small> Concat(const onnx::NodeProto& n, const std::vector<const Small*>& in) {
  const Ints& first = in[0]->dims;
  const auto axis = Axis(IntAttr(n, "axis", 0), static_cast<int64_t>(first.size()));
  if (!axis) return std::nullopt;
  Small out;
  out.type = in[0]->type;
  out.dims = first;
  out.dims[*axis] = 0;
  int64_t outer = 1;
  for (int64_t j = 0; j < *axis; ++j) outer *= first[j];
  for (const Small* s : in) {
    if (s->dims.size() != first.size() || s->real() != in[0]->real()) return std::nullopt;
    for (size_t j = 0; j < first.size(); ++j) {
      if (static_cast<int64_t>(j) != *axis && s->dims[j] != first[j]) return std::nullopt;
    }
    out.dims[*axis] += s->dims[*axis];
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (const Small* s : in) {
      const size_t block = s->size() / static_cast<size_t>(std::max<int64_t>(outer, 1));
      for (size_t i = o * block; i < (o + 1) * block; ++i) {
        if (s->real()) {
          out.reals.push_back(s->reals[i]);
        } else {
          out.ints.push_back(s->ints[i]);
        }
      }
    }
  }
  return out;
}

std::optional<Small> Slice(const onnx::NodeProto& n, const std::vector<const Small*>& in,
                           int64_t opset) {
  const Small& x = *in[0];
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const bool attrs = opset < 10;
  const auto starts = IntsOf(n, attrs ? 99 : 1, "starts", in);
  const auto ends = IntsOf(n, attrs ? 99 : 2, "ends", in);
  if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
  Ints axes(starts->size()), steps(starts->size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (auto a = IntsOf(n, attrs ? 99 : 3, "axes", in)) axes = *a;
  if (!attrs && n.input_size() > 4 && !n.input(4).empty()) {
    if (in[4] == nullptr || in[4]->real()) return std::nullopt;
    steps = in[4]->ints;
  }
  if (axes.size() != starts->size() || steps.size() != starts->size()) return std::nullopt;
  // Per axis: the source indices kept.
  std::vector<Ints> keep(rank);
  for (int64_t j = 0; j < rank; ++j) {
    for (int64_t i = 0; i < x.dims[j]; ++i) keep[j].push_back(i);
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    const auto axis = Axis(axes[i], rank);
    if (!axis || steps[i] == 0) return std::nullopt;
    const int64_t dim = x.dims[*axis];
    // A step longer than the axis takes one element either way; clamping it keeps v += step from
    // overflowing.
    const int64_t step = std::clamp(steps[i], -(dim + 1), dim + 1);
    auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v = v < -dim ? -1 : v + dim;  // avoids overflow on INT64_MIN
      return std::clamp(v, lo, hi);
    };
    const int64_t start = step > 0 ? clamp((*starts)[i], 0, dim) : clamp((*starts)[i], -1, dim - 1);
    const int64_t end = step > 0 ? clamp((*ends)[i], 0, dim) : clamp((*ends)[i], -1, dim - 1);
    keep[*axis].clear();
    for (int64_t v = start; step > 0 ? v < end : v > end; v += step) keep[*axis].push_back(v);
  }
  Small out;
  out.type = x.type;
  for (const auto& k : keep) out.dims.push_back(static_cast<int64_t>(k.size()));
  const size_t total = static_cast<size_t>(*ElementCount(out.dims));
  Ints coord(rank, 0);
  for (size_t flat = 0; flat < total; ++flat) {
    size_t src = 0;
    for (int64_t j = 0; j < rank; ++j) src = src * x.dims[j] + keep[j][coord[j]];
    if (x.real()) {
      out.reals.push_back(x.reals[src]);
    } else {
      out.ints.push_back(x.ints[src]);
    }
    for (int64_t j = rank; j-- > 0;) {
      if (++coord[j] < out.dims[j]) break;
      coord[j] = 0;
    }
  }
  return out;
}

/// Transpose by `perm` (default: the dims reversed), of a tensor small enough to evaluate.
std::optional<Small> Transpose(const onnx::NodeProto& n, const Small& x) {
  const size_t rank = x.dims.size();
  Ints perm(rank);
  for (size_t j = 0; j < rank; ++j) perm[j] = static_cast<int64_t>(rank - 1 - j);
  if (const auto* a = Attr(n, "perm")) perm = Ints(a->ints().begin(), a->ints().end());
  if (perm.size() != rank) return std::nullopt;
  std::vector<bool> used(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || used[p]) return std::nullopt;
    used[p] = true;
  }
  const auto count = Count(x.dims);
  if (!count || static_cast<size_t>(*count) != x.size()) return std::nullopt;
  Small out;
  out.type = x.type;
  for (int64_t p : perm) out.dims.push_back(x.dims[p]);
  // Strides of x, then each output index's source.
  Ints stride(rank, 1);
  for (size_t j = rank; j-- > 1;) stride[j - 1] = stride[j] * x.dims[j];
  Ints index(rank, 0);
  for (int64_t i = 0; i < *count; ++i) {
    int64_t src = 0;
    for (size_t j = 0; j < rank; ++j) src += index[j] * stride[perm[j]];
    if (x.real()) {
      out.reals.push_back(x.reals[src]);
    } else {
      out.ints.push_back(x.ints[src]);
    }
    for (size_t j = rank; j-- > 0;) {  // the next output index, last dim fastest
      if (++index[j] < out.dims[j]) break;
      index[j] = 0;
    }
  }
  return out;
}

std::optional<Small> Reshape(const onnx::NodeProto& n, const Small& x, const Small& shape) {
  if (shape.real()) return std::nullopt;
  const bool allowzero = IntAttr(n, "allowzero", 0) != 0;
  Ints dims;
  int infer = -1;
  int64_t known = 1;
  for (size_t j = 0; j < shape.ints.size(); ++j) {
    int64_t d = shape.ints[j];
    if (d == 0 && !allowzero) {
      if (j >= x.dims.size()) return std::nullopt;
      d = x.dims[j];
    }
    if (d == -1) {
      if (infer >= 0) return std::nullopt;
      infer = static_cast<int>(j);
    } else if (d < 0 || __builtin_mul_overflow(known, d, &known)) {
      return std::nullopt;
    }
    dims.push_back(d);
  }
  const int64_t total = static_cast<int64_t>(x.size());
  if (infer >= 0) {
    if (known == 0 || total % known != 0) return std::nullopt;
    dims[infer] = total / known;
  } else if (known != total) {
    return std::nullopt;
  }
  return Relabel(x, dims);
}

std::optional<Small> Unsqueeze(const onnx::NodeProto& n, const std::vector<const Small*>& in) {
  const auto axes = IntsOf(n, 1, "axes", in);
  if (!axes) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in[0]->dims.size() + axes->size());
  std::vector<bool> unit(rank, false);
  for (int64_t a : *axes) {
    const auto axis = Axis(a, rank);
    if (!axis || unit[*axis]) return std::nullopt;
    unit[*axis] = true;
  }
  Ints dims;
  size_t next = 0;
  for (int64_t j = 0; j < rank; ++j) dims.push_back(unit[j] ? 1 : in[0]->dims[next++]);
  return Relabel(*in[0], dims);
}

std::optional<Small> Squeeze(const onnx::NodeProto& n, const std::vector<const Small*>& in) {
  const Ints& x = in[0]->dims;
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<bool> drop(rank, false);
  if (const auto axes = IntsOf(n, 1, "axes", in)) {
    for (int64_t a : *axes) {
      const auto axis = Axis(a, rank);
      if (!axis || x[*axis] != 1) return std::nullopt;
      drop[*axis] = true;
    }
  } else {
    for (int64_t j = 0; j < rank; ++j) drop[j] = x[j] == 1;
  }
  Ints dims;
  for (int64_t j = 0; j < rank; ++j) {
    if (!drop[j]) dims.push_back(x[j]);
  }
  return Relabel(*in[0], dims);
}

std::optional<Small> ConstantOfShape(const onnx::NodeProto& n, const Small& shape) {
  if (shape.real()) return std::nullopt;
  for (int64_t d : shape.ints) {
    if (d < 0) return std::nullopt;
  }
  if (!Count(shape.ints)) return std::nullopt;
  Small fill;
  fill.type = TP::FLOAT;
  fill.reals = {0.0};
  if (const auto* a = Attr(n, "value"); a != nullptr && a->has_t()) {
    auto v = FromProto(a->t());
    if (!v || v->size() != 1) return std::nullopt;
    fill = *v;
  }
  Small out;
  out.type = fill.type;
  out.dims = shape.ints;
  const size_t total = static_cast<size_t>(*ElementCount(out.dims));
  if (fill.real()) {
    out.reals.assign(total, fill.reals[0]);
  } else {
    out.ints.assign(total, fill.ints[0]);
  }
  return out;
}

std::optional<Small> Range(const Small& start, const Small& limit, const Small& delta) {
  if (start.size() != 1 || limit.size() != 1 || delta.size() != 1 || start.real() != delta.real() ||
      start.real() != limit.real()) {
    return std::nullopt;
  }
  const double d = delta.Real(0);
  if (d == 0) return std::nullopt;
  const double steps = std::ceil((limit.Real(0) - start.Real(0)) / d);
  if (!(steps <= static_cast<double>(kMaxFoldElements))) return std::nullopt;
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(steps));
  Small out;
  out.type = start.type;
  out.dims = {n};
  for (int64_t i = 0; i < n; ++i) {
    if (start.real()) {
      out.reals.push_back(start.reals[0] + static_cast<double>(i) * d);
    } else {
      int64_t v = 0;
      if (__builtin_mul_overflow(i, delta.ints[0], &v) ||
          __builtin_add_overflow(v, start.ints[0], &v)) {
        return std::nullopt;
      }
      out.ints.push_back(v);
    }
  }
  return out;
}

std::optional<Small> Expand(const Small& x, const Small& shape) {
  if (shape.real()) return std::nullopt;
  const auto dims = Broadcast({x.dims, shape.ints});
  if (!dims || !Count(*dims)) return std::nullopt;
  Small out;
  out.type = x.type;
  out.dims = *dims;
  for (size_t src : SourceIndex(*dims, x.dims)) {
    if (x.real()) {
      out.reals.push_back(x.reals[src]);
    } else {
      out.ints.push_back(x.ints[src]);
    }
  }
  return out;
}

/// The value of node `n` when it can be computed; `in[i]` is the value of input i (nullptr when
/// unknown or absent), `dims0` the static shape of input 0 when inference knows it.
std::optional<Small> Evaluate(const onnx::NodeProto& n, const std::vector<const Small*>& in,
                              const std::optional<Ints>& dims0, int64_t opset) {
  const std::string& op = n.op_type();
  if (op == "Shape" || op == "Size") {
    if (!dims0) return std::nullopt;
    Small out;
    out.type = TP::INT64;
    if (op == "Size") {
      out.ints = {*ElementCount(*dims0)};
      return out;
    }
    const int64_t rank = static_cast<int64_t>(dims0->size());
    auto clamp = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
    const int64_t start = clamp(IntAttr(n, "start", 0)), end = clamp(IntAttr(n, "end", rank));
    for (int64_t j = start; j < end; ++j) out.ints.push_back((*dims0)[j]);
    out.dims = {static_cast<int64_t>(out.ints.size())};
    return out;
  }
  // Everything else needs its (non-optional) inputs' values.
  for (int i = 0; i < n.input_size(); ++i) {
    if (!n.input(i).empty() && in[i] == nullptr) return std::nullopt;
  }
  if (in.empty() || in[0] == nullptr) return std::nullopt;
  // An optional input left out (an empty name: Clip's min in torch's clamp(max=...)) is null.
  // Only Slice reads optional inputs (its axes and steps); every other fold needs all the inputs
  // it is given.
  if (op != "Slice" && std::any_of(in.begin(), in.end(), [](const Small* s) { return !s; })) {
    return std::nullopt;
  }
  const Small& x = *in[0];
  if (op == "Cast") return CastTo(x, static_cast<int32_t>(IntAttr(n, "to", 0)));
  if (op == "Gather" && in.size() == 2) return Gather(n, x, *in[1]);
  if (op == "Concat") return Concat(n, in);
  if (op == "Slice") return Slice(n, in, opset);
  if (op == "Reshape" && in.size() == 2) return Reshape(n, x, *in[1]);
  if (op == "Transpose") return Transpose(n, x);
  if (op == "Unsqueeze") return Unsqueeze(n, in);
  if (op == "Squeeze") return Squeeze(n, in);
  if (op == "ConstantOfShape") return ConstantOfShape(n, x);
  if (op == "Range" && in.size() == 3) return Range(x, *in[1], *in[2]);
  if (op == "Expand" && in.size() == 2) return Expand(x, *in[1]);
  if (op == "Where" && in.size() == 3) {
    if (x.real() || in[1]->real() != in[2]->real()) return std::nullopt;
    std::vector<Ints> shapes = {x.dims, in[1]->dims, in[2]->dims};
    const auto dims = Broadcast(shapes);
    if (!dims || !Count(*dims)) return std::nullopt;
    const auto c = SourceIndex(*dims, x.dims), a = SourceIndex(*dims, in[1]->dims),
               b = SourceIndex(*dims, in[2]->dims);
    Small out;
    out.type = in[1]->type;
    out.dims = *dims;
    for (size_t i = 0; i < c.size(); ++i) {
      const Small& pick = x.ints[c[i]] != 0 ? *in[1] : *in[2];
      const size_t src = x.ints[c[i]] != 0 ? a[i] : b[i];
      if (pick.real()) {
        out.reals.push_back(pick.reals[src]);
      } else {
        out.ints.push_back(pick.ints[src]);
      }
    }
    return out;
  }
  if (in.size() >= 2) {
    for (const Small* s : in) {
      if (s->real() != x.real()) return std::nullopt;
    }
    if (op == "Mod") return Mod(in, IntAttr(n, "fmod", 0) != 0);
    return Binary(op, in);
  }
  return Unary(op, x);
}

}  // namespace

int FoldShapeComputations(onnx::GraphProto* graph, const ModelValues& values) {
  std::map<std::string, Small> known;
  for (const auto& t : graph->initializer()) {
    if (auto v = FromProto(t)) known[t.name()] = std::move(*v);
  }
  int folded = 0;
  for (auto& n : *graph->mutable_node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    if (n.op_type() == "Constant") {
      if (n.output_size() == 1) {
        if (auto v = ConstantValue(n)) known[n.output(0)] = std::move(*v);
      }
      continue;
    }
    if (n.output_size() != 1 || n.output(0).empty()) continue;
    bool has_subgraph = false;
    for (const auto& a : n.attribute()) has_subgraph |= a.has_g() || a.graphs_size() > 0;
    if (has_subgraph) continue;
    std::vector<const Small*> in;
    for (const auto& name : n.input()) {
      auto it = known.find(name);
      in.push_back(it == known.end() ? nullptr : &it->second);
    }
    const auto dims0 = n.input_size() > 0 ? values.Dims(n.input(0)) : std::nullopt;
    auto value = Evaluate(n, in, dims0, values.opset);
    if (!value || !Count(value->dims) ||
        value->size() != static_cast<size_t>(*ElementCount(value->dims))) {
      continue;
    }
    // The node becomes a Constant with the same name and output.
    const std::string output = n.output(0);
    const std::string op = n.op_type();
    n.clear_input();
    n.clear_attribute();
    n.set_op_type("Constant");
    n.set_domain("");
    n.set_doc_string("folded " + op);
    auto* attr = n.add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    *attr->mutable_t() = ToProto(*value);
    known[output] = std::move(*value);
    ++folded;
  }
  return folded;
}

}  // namespace roofline::onnx_frontend
