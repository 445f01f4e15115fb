// Costs of ops that touch each element a fixed number of times: pointwise arithmetic and
// activations, softmax, norms (FLOP = elements × a per-op count), and data movement (copies,
// casts, concatenation, embedding lookups: bytes only).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "src/profile/torch_op_cost_args.h"

namespace roofline::torch_cost {
namespace {

/// FLOP per output element of pointwise ops. A transcendental function (exp, log, erf, tanh,
/// sqrt...) counts 1; sigmoid = neg, exp, add, div (4); silu = sigmoid + mul (5); gelu (erf form
/// 0.5·x·(1 + erf(x/√2))) = 5; add/sub with alpha count 1 (the alpha multiply is not counted).
constexpr std::array<std::pair<std::string_view, int>, 32> kPointwise = {{
    {"add", 1},         {"sub", 1},     {"rsub", 1},    {"mul", 1},        {"div", 1},
    {"neg", 1},         {"abs", 1},     {"relu", 1},    {"clamp", 1},      {"clamp_min", 1},
    {"clamp_max", 1},   {"maximum", 1}, {"minimum", 1}, {"where", 1},      {"threshold", 1},
    {"exp", 1},         {"log", 1},     {"sqrt", 1},    {"rsqrt", 1},      {"reciprocal", 1},
    {"tanh", 1},        {"erf", 1},     {"pow", 1},     {"sin", 1},        {"cos", 1},
    {"sigmoid", 4},     {"silu", 5},    {"gelu", 5},    {"leaky_relu", 2}, {"hardtanh", 2},
    {"masked_fill", 1}, {"square", 1},
}};

/// Norms: FLOP per element (layer / group: mean 1 + variance 3 + normalize 2 + affine 2 = 8;
/// RMS: square-accumulate 2 + scale 1 + weight 1 = 4; batch norm in inference: scale + shift 2)
/// and the index of the `training` argument (-1: none).
struct NormRule {
  std::string_view name;
  int per_element, training;
};
constexpr std::array<NormRule, 13> kNorms = {{
    {"layer_norm", 8, -1},
    {"native_layer_norm", 8, -1},
    {"rms_norm", 4, -1},
    {"_fused_rms_norm", 4, -1},
    {"group_norm", 8, -1},
    {"native_group_norm", 8, -1},
    {"instance_norm", 8, -1},
    {"batch_norm", 8, 5},
    {"native_batch_norm", 8, 5},
    {"_batch_norm_impl_index", 8, 5},
    {"cudnn_batch_norm", 8, 5},
    {"_native_batch_norm_legit", 8, 5},
    {"_native_batch_norm_legit_no_training", 2, -1},
}};

/// The first tensor argument.
std::optional<size_t> FirstTensor(const Args& a) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.IsTensor(i)) return i;
  }
  return std::nullopt;
}

/// The broadcast shape of every tensor argument (numpy rules, right-aligned).
std::vector<int64_t> Broadcast(const Args& a) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a.IsTensor(i)) continue;
    const std::vector<int64_t>& d = a.Dims(i);
    if (d.size() > out.size()) out.insert(out.begin(), d.size() - out.size(), 1);
    for (size_t j = 0; j < d.size(); ++j) {
      int64_t& o = out[out.size() - d.size() + j];
      o = std::max(o, d[j]);
    }
  }
  return out;
}

/// Elements × per-element FLOP, every tensor argument read, the output (`out_dims`, dtype of the
/// first tensor or `out_type`) written.
TorchOpCost PerElement(std::string_view op, const Args& a, const std::vector<int64_t>& out_dims,
                       int per_element, std::string_view out_type, std::string_view why) {
  Bytes bytes;
  for (size_t i = 0; i < a.size(); ++i) bytes.AddArg(a, i);
  const double elems = Elems(out_dims);
  bytes.Add(elems, out_type);
  return Done(per_element * elems, bytes,
              fmt::format("{} output {}: {} FLOP/element × {} = {} FLOP ({}); inputs read + "
                          "output written once",
                          op, Shape(out_dims), per_element, elems, per_element * elems, why));
}

TorchOpCost Copy(std::string_view op, const Args& a) {
  Bytes bytes;
  std::string what;
  if (op == "copy_") {
    bytes.AddArg(a, 0);
    bytes.AddArg(a, 1);
    what = fmt::format("copy_ {} <- {}: destination written + source read", Shape(a.Dims(0)),
                       Shape(a.Dims(1)));
  } else if (op == "fill" || op == "zero") {
    bytes.AddArg(a, 0);
    what = fmt::format("{} {}: output written", op, Shape(a.Dims(0)));
  } else if (op == "cat" || op == "stack") {
    double elems = 0;
    for (const std::vector<int64_t>& d : a.List(0)) elems += Elems(d);
    bytes.Add(2 * elems, a.Type(0) == "TensorList" ? "" : a.Type(0));
    what =
        fmt::format("{} of {} tensors, {} elements: read + written", op, a.List(0).size(), elems);
    if (!bytes.unknown.empty()) bytes.unknown = "of TensorList members (not recorded)";
  } else {  // to, _to_copy, clone, contiguous
    bytes.AddArg(a, 0);
    bytes.AddArg(a, 0);
    what = fmt::format("{} {}: read + written, output dtype taken as the input's", op,
                       Shape(a.Dims(0)));
  }
  return Done(0.0, bytes, what + "; no arithmetic");
}

TorchOpCost Lookup(std::string_view op, const Args& a) {
  // embedding(weight [V, D], indices); index_select(self, dim, index).
  const bool emb = op == "embedding";
  const std::vector<int64_t>& table = a.Dims(0);
  const size_t index_arg = emb ? 1 : 2;
  const std::vector<int64_t>& index = a.Dims(index_arg);
  std::vector<int64_t> out;
  if (emb) {
    if (table.size() != 2) return None("embedding weight is not 2D: " + Shape(table));
    out = index;
    out.push_back(table[1]);
  } else {
    std::vector<int64_t> dim = IntList(a.Concrete(1));
    const int64_t r = static_cast<int64_t>(table.size());
    int64_t d = dim.empty() ? 0 : dim[0];
    if (d < 0) d += r;
    if (d < 0 || d >= r || index.size() > 1) return None("index_select: dim or index unknown");
    out = table;
    out[d] = index.empty() ? 1 : index[0];
  }
  Bytes bytes;
  bytes.AddArg(a, index_arg);
  bytes.Add(2 * Elems(out), a.Type(0));
  return Done(0.0, bytes,
              fmt::format("{} output {}: indices read, rows read + output written once; no "
                          "arithmetic",
                          op, Shape(out)));
}

/// sum / mean / amax / amin (self, dim list, keepdim): 1 FLOP per input element, the input read
/// and the reduced output written. Without a recorded dim list the whole tensor is reduced.
TorchOpCost Reduction(std::string_view op, const Args& a) {
  const std::vector<int64_t>& in = a.Dims(0);
  if (!a.IsTensor(0)) return None(fmt::format("aten::{}: no tensor input recorded", op));
  const int64_t rank = static_cast<int64_t>(in.size());
  // The dims only when recorded as a list (sum(x, dtype=...) records a ScalarType there).
  std::vector<int64_t> dims;
  if (!a.HasTypes() || a.Type(1) == "ScalarList") dims = IntList(a.Concrete(1));
  const bool keep = Flag(a.Concrete(2)).value_or(false);
  std::vector<bool> reduced(in.size(), dims.empty());
  for (int64_t d : dims) {
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return None(fmt::format("aten::{}: dim out of range", op));
    reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!reduced[i]) out.push_back(in[i]);
    if (reduced[i] && keep) out.push_back(1);
  }
  Bytes bytes;
  bytes.AddArg(a, 0);
  bytes.Add(Elems(out), a.Type(0));
  const double flops = Elems(in);
  return Done(flops, bytes,
              fmt::format("{} {} -> {}: 1 FLOP per input element = {} FLOP; input read + output "
                          "written once",
                          op, Shape(in), Shape(out), flops));
}

/// arange(end) or arange(start, end[, step]) from the concrete inputs: the output written, 8-byte
/// integers (torch's default dtype for integer bounds). The overload follows from the argument
/// count: arange, arange.start and arange.start_step take 1, 2 or 3 bounds then dtype, layout,
/// device and pin_memory (recorded as Scalars too); the out variants end with the out tensor.
TorchOpCost Arange(const Args& a) {
  const size_t args = a.size();
  const size_t count = args > 0 && a.IsTensor(args - 1) ? args - 1 : args >= 5 ? args - 4 : 0;
  std::vector<int64_t> bounds;
  for (size_t i = 0; i < count && i < 3; ++i) {
    const std::vector<int64_t> v = IntList(a.Concrete(i));
    if (v.size() != 1 || a.Type(i) != "Scalar") break;
    bounds.push_back(v[0]);
  }
  if (bounds.size() != count) bounds.clear();
  int64_t start = 0, end = 0, step = 1;
  if (bounds.size() == 1) {
    end = bounds[0];
  } else if (bounds.size() >= 2) {
    start = bounds[0];
    end = bounds[1];
    if (bounds.size() == 3) step = bounds[2];
  } else {
    return None("arange: integer bounds not recorded");
  }
  if (step == 0) return None("arange: step 0");
  const double n = std::max(0.0, std::ceil((static_cast<double>(end) - static_cast<double>(start)) /
                                           static_cast<double>(step)));
  Bytes bytes;
  bytes.Add(n, "long int");
  return Done(0.0, bytes,
              fmt::format("arange of {} elements: output written (int64); no arithmetic", n));
}

}  // namespace

TorchOpCost IndexCopy(const Args& a, bool in_place) {
  const std::vector<int64_t>& source = a.Dims(3);
  if (!a.IsTensor(3)) return None("index_copy: no source shape recorded");
  Bytes bytes;
  bytes.AddArg(a, 2);
  bytes.AddArg(a, 3);
  if (in_place) {
    bytes.Add(Elems(source), a.Type(0));
    return Done(0.0, bytes,
                fmt::format("index_copy_ source {}: index and source read, as many elements of "
                            "self written; no arithmetic",
                            Shape(source)));
  }
  bytes.AddArg(a, 0);
  bytes.AddArg(a, 0);
  return Done(0.0, bytes,
              fmt::format("index_copy source {} into a copy of {}: self read and the copy "
                          "written whole, index and source read; no arithmetic",
                          Shape(source), Shape(a.Dims(0))));
}

TorchOpCost Pointwise(std::string_view op, const Args& a) {
  if (op == "sum" || op == "mean" || op == "amax" || op == "amin") return Reduction(op, a);
  if (op == "arange") return Arange(a);
  if (op == "copy_" || op == "to" || op == "_to_copy" || op == "clone" || op == "contiguous" ||
      op == "cat" || op == "stack" || op == "fill" || op == "zero") {
    return Copy(op, a);
  }
  if (op == "embedding" || op == "index_select") return Lookup(op, a);
  const std::optional<size_t> first = FirstTensor(a);
  if (!first) return None(fmt::format("aten::{}: no tensor input recorded", op));
  const std::string_view type = a.Type(*first);
  for (const auto& [name, per_element] : kPointwise) {
    if (name == op) {
      return PerElement(op, a, Broadcast(a), per_element, type, "pointwise, broadcast output");
    }
  }
  if (op == "softmax" || op == "_softmax" || op == "log_softmax" || op == "_log_softmax" ||
      op == "_safe_softmax") {
    // _softmax(self, dim, half_to_float): the output is float when half_to_float.
    const bool to_float = op[0] == '_' && Flag(a.Concrete(2)).value_or(false);
    TorchOpShapes x;
    x.dims = {a.Dims(0)};
    x.types = {std::string(type)};
    return PerElement(op, Args(x), a.Dims(0), 5, to_float ? "float" : type,
                      "max, subtract, exp, sum, divide");
  }
  for (const NormRule& n : kNorms) {
    if (n.name != op) continue;
    int per_element = n.per_element;
    std::string why = "per-element count of the norm";
    if (n.training >= 0) {
      std::optional<bool> training = Flag(a.Concrete(n.training));
      if (training == false) per_element = 2;
      why = !training ? "training flag not recorded: statistics counted"
                      : (*training ? "training: statistics + normalize + affine"
                                   : "inference: scale + shift");
    }
    return PerElement(op, a, a.Dims(0), per_element, type, why);
  }
  return None(fmt::format("no cost rule for aten::{}", op));
}

}  // namespace roofline::torch_cost
