// Helpers shared by the torch op cost rules (torch_op_cost*.cc): positional access to the
// recorded arguments, byte sums with dtype sizes, and the parsing of "Concrete Inputs" values.
#ifndef ROOFLINE_SRC_PROFILE_TORCH_OP_COST_ARGS_H_
#define ROOFLINE_SRC_PROFILE_TORCH_OP_COST_ARGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/profile/torch_op_cost.h"

namespace roofline::torch_cost {

inline double Elems(const std::vector<int64_t>& dims) {
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

inline std::string Shape(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(dims[i]);
  }
  s += "]";
  return s;
}

/// The op name without "aten::" and without the trailing "_" of in-place variants.
inline std::string_view BaseName(std::string_view name) {
  if (name.rfind("aten::", 0) == 0) name.remove_prefix(6);
  if (name.size() > 1 && name.back() == '_' && name != "copy_") name.remove_suffix(1);
  return name;
}

/// Positional access to the recorded arguments.
class Args {
 public:
  explicit Args(const TorchOpShapes& s) : s_(s) {}
  size_t size() const { return s_.dims.size(); }
  const std::vector<int64_t>& Dims(size_t i) const { return i < size() ? s_.dims[i] : kNone; }
  std::string_view Type(size_t i) const {
    return i < s_.types.size() ? std::string_view(s_.types[i]) : std::string_view();
  }
  std::string_view Concrete(size_t i) const {
    return i < s_.concrete.size() ? std::string_view(s_.concrete[i]) : std::string_view();
  }
  bool HasTypes() const { return !s_.types.empty(); }
  /// A tensor argument: its type is a dtype (or, without types, its dims are non-empty).
  bool IsTensor(size_t i) const {
    if (i >= size()) return false;
    if (!HasTypes()) return !s_.dims[i].empty();
    std::string_view t = Type(i);
    if (TorchDtypeBytes(t)) return true;
    return !t.empty() && (t.rfind("c10::", 0) == 0 || (t[0] >= 'a' && t[0] <= 'z'));
  }
  const std::vector<std::vector<int64_t>>& List(size_t i) const {
    return i < s_.lists.size() ? s_.lists[i] : kNoList;
  }

 private:
  static inline const std::vector<int64_t> kNone{};
  static inline const std::vector<std::vector<int64_t>> kNoList{};
  const TorchOpShapes& s_;
};

/// Sums tensor bytes; remembers the first dtype without a known size.
struct Bytes {
  double total = 0;
  std::string unknown;
  void Add(double elems, std::string_view type) {
    if (std::optional<int> b = TorchDtypeBytes(type)) {
      total += elems * *b;
    } else if (unknown.empty()) {
      unknown = type.empty() ? std::string("(not recorded)") : std::string(type);
    }
  }
  void AddArg(const Args& a, size_t i) {
    if (a.IsTensor(i)) Add(Elems(a.Dims(i)), a.Type(i));
  }
};

inline TorchOpCost Done(std::optional<double> flops, const Bytes& bytes, std::string note) {
  TorchOpCost c;
  c.flops = flops;
  c.note = std::move(note);
  if (bytes.unknown.empty()) {
    c.min_bytes = bytes.total;
  } else {
    c.note += "; min bytes unknown: dtype " + bytes.unknown + " has no known size";
  }
  return c;
}

inline TorchOpCost None(std::string why) {
  TorchOpCost c;
  c.note = std::move(why);
  return c;
}

/// Parses "[1, 2]", "1" or "(1, 2)" into integers; empty when it is neither.
inline std::vector<int64_t> IntList(std::string_view s) {
  std::vector<int64_t> out;
  int64_t v = 0;
  bool in = false, neg = false;
  for (char ch : s) {
    if (ch >= '0' && ch <= '9') {
      if (v > (INT64_MAX - 9) / 10) return {};  // too long for an int64: not a size
      v = v * 10 + (ch - '0');
      in = true;
    } else if (ch == '-') {
      neg = true;
    } else if (ch == ',' || ch == ']' || ch == ')' || ch == ' ' || ch == '[' || ch == '(') {
      if (in) out.push_back(neg ? -v : v);
      v = 0;
      in = neg = false;
    } else {
      return {};
    }
  }
  if (in) out.push_back(neg ? -v : v);
  return out;
}

inline std::optional<bool> Flag(std::string_view s) {
  if (s == "True" || s == "true" || s == "1") return true;
  if (s == "False" || s == "false" || s == "0") return false;
  return std::nullopt;
}

/// Costs of the conv ops (torch_op_cost_conv.cc).
TorchOpCost Conv(std::string_view op, const Args& a);
/// index_copy(self, dim, index, source): in place, the index and source read and as many
/// elements of self written; out of place, self copied whole around them
/// (torch_op_cost_pointwise.cc).
TorchOpCost IndexCopy(const Args& a, bool in_place);
/// Costs of pointwise, norm, softmax and copy ops (torch_op_cost_pointwise.cc).
TorchOpCost Pointwise(std::string_view op, const Args& a);

}  // namespace roofline::torch_cost

#endif  // ROOFLINE_SRC_PROFILE_TORCH_OP_COST_ARGS_H_
