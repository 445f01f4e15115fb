// Maps ONNX nodes to the ops of docs/graph-format.md (one NetNode per ONNX node, except fused
// activations and the attention ops of onnx_attention.cc).
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "src/onnx/onnx_mapper.h"

namespace roofline::onnx_frontend {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// Explicit pads [begins..., ends...] of a conv or pool (ONNX's order, which is the
/// [top, left, bottom, right] of docs/graph-format.md in 2-D), resolving auto_pad.
Ints ResolvePads(const onnx::NodeProto& n, const Ints& in, const Ints& kernel, const Ints& stride,
                 const Ints& dilation, bool transposed) {
  const size_t rank = kernel.size();
  const std::string auto_pad = AttrString(n, "auto_pad", "NOTSET");
  Ints pads = AttrInts(n, "pads");
  if (auto_pad == "NOTSET") {
    if (pads.size() != 2 * rank) pads.assign(2 * rank, 0);
    return pads;
  }
  pads.assign(2 * rank, 0);
  if (auto_pad == "VALID" || in.size() != rank) return pads;
  const Ints out_pad = AttrInts(n, "output_padding");
  for (size_t i = 0; i < rank; ++i) {
    const int64_t k = (kernel[i] - 1) * dilation[i] + 1;
    int64_t total;
    if (transposed) {
      const int64_t op = i < out_pad.size() ? out_pad[i] : 0;
      total = stride[i] * (in[i] - 1) + op + k - in[i] * stride[i];
    } else {
      const int64_t out = (in[i] + stride[i] - 1) / stride[i];
      total = (out - 1) * stride[i] + k - in[i];
    }
    total = std::max<int64_t>(total, 0);
    const int64_t small = total / 2, large = total - small;
    pads[i] = auto_pad == "SAME_LOWER" ? large : small;
    pads[i + rank] = auto_pad == "SAME_LOWER" ? small : large;
  }
  return pads;
}

Ints OrOnes(Ints v, size_t rank) {
  if (v.size() != rank) v.assign(rank, 1);
  return v;
}

/// Ops with no kernel: metadata changes, constants and inference no-ops.
bool IsViewOp(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Reshape", "Flatten",  "Squeeze", "Unsqueeze", "Identity",          "Shape",
      "Size",    "Constant", "Dropout", "Optional",  "OptionalGetElement"};
  return kOps.count(op) > 0;
}

/// Ops that move or rearrange data and compute nothing.
bool IsCopyOp(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Concat",       "Transpose",       "Gather",          "GatherElements",
      "GatherND",     "Slice",           "Split",           "Pad",
      "Cast",         "CastLike",        "Expand",          "Tile",
      "ScatterND",    "ScatterElements", "Scatter",         "DepthToSpace",
      "SpaceToDepth", "ConstantOfShape", "Range",           "Trilu",
      "OneHot",       "Compress",        "ReverseSequence", "EyeLike",
      "CenterCropPad"};
  return kOps.count(op) > 0;
}

const std::map<std::string, std::string>& ReduceOps() {
  static const std::map<std::string, std::string> kOps = {{"ReduceSum", "sum"},
                                                          {"ReduceMean", "mean"},
                                                          {"ReduceMax", "max"},
                                                          {"ReduceMin", "min"},
                                                          {"ReduceProd", "prod"},
                                                          {"ReduceL1", "l1"},
                                                          {"ReduceL2", "l2"},
                                                          {"ReduceLogSum", "logsum"},
                                                          {"ReduceLogSumExp", "logsumexp"},
                                                          {"ReduceSumSquare", "sumsquare"},
                                                          {"ArgMax", "argmax"},
                                                          {"ArgMin", "argmin"},
                                                          {"CumSum", "cumsum"}};
  return kOps;
}

const std::map<std::string, std::string>& NormOps() {
  static const std::map<std::string, std::string> kOps = {
      {"LayerNormalization", "layer"},
      {"SkipLayerNormalization", "layer"},
      {"SimplifiedLayerNormalization", "rms"},
      {"SkipSimplifiedLayerNormalization", "rms"},
      {"RMSNormalization", "rms"},
      {"BatchNormalization", "batch"},
      {"InstanceNormalization", "instance"},
      {"GroupNormalization", "group"}};
  return kOps;
}

}  // namespace

void Mapper::MapNode(const onnx::NodeProto& n, int index) {
  const std::string& op = n.op_type();
  const bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
  const bool contrib = n.domain() == "com.microsoft";
  if ((!onnx_domain && !contrib) || n.output_size() == 0 || n.output(0).empty()) {
    NetNode node = Begin(n, index, "unknown");
    node.attrs.strings["op"] = node.source;
    Emit(std::move(node));
    return;
  }
  // Computed once at load time (constant folding): no kernel per pass.
  bool folded = !n.output().empty() && !n.output(0).empty() && values_.IsConstant(n.output(0));
  if (folded || IsViewOp(op)) {
    NetNode node = Begin(n, index, "view");
    if (folded && op != "Constant") node.attrs.strings["folded"] = "constant";
    Emit(std::move(node));
    return;
  }
  if (contrib && (op == "Attention" || op == "MultiHeadAttention") &&
      MapContribAttention(n, index)) {
    return;
  }
  NetNode node = Begin(n, index, "unknown");
  node.attrs.strings["op"] = node.source;
  const Ints x = n.input_size() > 0 ? DimsOf(n.input(0)) : Ints{};
  if (op == "Conv" || op == "ConvTranspose") {
    MapConv(n, node);
  } else if (op == "Gemm") {
    MapGemm(n, node);
  } else if (op == "MatMul") {
    MapMatMul(n, node);
  } else if (op == "Einsum") {
    MapEinsum(n, node);
  } else if (op == "Attention" && onnx_domain) {
    MapAttention(n, node);
  } else if (const int flops = ElementwiseFlops(op); flops > 0) {
    node.op = "elementwise";
    node.attrs.strings["function"] = Lower(op);
    int per_element = flops;
    const int operands = static_cast<int>(node.inputs.size());
    if (op == "Sum" || op == "Max" || op == "Min") per_element = std::max(1, operands - 1);
    if (op == "Mean") per_element = std::max(1, operands);
    SetNumber(node.attrs, "flops_per_element", per_element);
  } else if (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") {
    node.op = "softmax";
    int64_t axis = AttrInt(n, "axis", values_.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += static_cast<int64_t>(x.size());
    SetNumber(node.attrs, "axis", static_cast<double>(axis));
    if (op != "Softmax") node.attrs.strings["function"] = Lower(op);
  } else if (auto norm = NormOps().find(op); norm != NormOps().end()) {
    node.op = "norm";
    node.attrs.strings["kind"] = norm->second;
    if (op == "GroupNormalization") SetNumber(node.attrs, "groups", AttrInt(n, "num_groups", 1));
    if (norm->second == "layer" || norm->second == "rms") {
      int64_t axis = AttrInt(n, "axis", -1);
      if (axis < 0) axis += static_cast<int64_t>(x.size());
      SetNumber(node.attrs, "axis", static_cast<double>(axis));
      SetNumber(node.attrs, "normalized_dims", static_cast<double>(x.size()) - axis);
    }
    // Only the normalized output is costed: drop the optional mean / inv-std-dev outputs.
    node.outputs.resize(std::min<size_t>(node.outputs.size(), 1));
  } else if (op == "MaxPool" || op == "AveragePool" || op == "LpPool" || op == "GlobalMaxPool" ||
             op == "GlobalAveragePool" || op == "GlobalLpPool") {
    MapPool(n, node);
  } else if (auto reduce = ReduceOps().find(op); reduce != ReduceOps().end()) {
    node.op = "reduce";
    node.attrs.strings["function"] = reduce->second;
    Ints axes = AttrInts(n, "axes");
    if (const auto* a = FindAttr(n, "axis"); a != nullptr) axes = {a->i()};
    if (!axes.empty()) SetInts(node.attrs, "axes", axes);
  } else if (op == "Resize" || op == "Upsample") {
    node.op = "resize";
    std::string mode = AttrString(n, "mode", "nearest");
    if (mode == "bilinear" || mode == "trilinear") mode = "linear";
    node.attrs.strings["mode"] = mode;
    node.inputs.resize(1);  // roi, scales and sizes are parameters of the op, not data
  } else if (op == "Gather" && n.input_size() == 2 && values_.IsInitializer(n.input(0)) &&
             DimsOf(n.input(0)).size() == 2 && AttrInt(n, "axis", 0) == 0) {
    node.op = "embedding";
  } else if (IsCopyOp(op)) {
    node.op = "copy";
    node.attrs.strings["function"] = Lower(op);
  }
  if (node.op != "unknown") node.attrs.strings.erase("op");
  if (node.op == "unknown" && !n.domain().empty()) node.attrs.strings["domain"] = n.domain();
  Emit(std::move(node));
}

void Mapper::MapConv(const onnx::NodeProto& n, NetNode& node) {
  const bool transposed = n.op_type() == "ConvTranspose";
  if (n.input_size() < 2) return;
  const Ints x = DimsOf(n.input(0)), w = DimsOf(n.input(1));
  if (w.size() < 3 || x.size() != w.size()) return;  // shapes unknown: stays unknown
  const size_t rank = w.size() - 2;
  Ints kernel = AttrInts(n, "kernel_shape");
  if (kernel.size() != rank) kernel.assign(w.begin() + 2, w.end());
  const Ints stride = OrOnes(AttrInts(n, "strides"), rank);
  const Ints dilation = OrOnes(AttrInts(n, "dilations"), rank);
  const Ints in(x.begin() + 2, x.end());
  node.op = "conv";
  SetInts(node.attrs, "kernel", kernel);
  SetInts(node.attrs, "stride", stride);
  SetInts(node.attrs, "dilation", dilation);
  SetInts(node.attrs, "padding", ResolvePads(n, in, kernel, stride, dilation, transposed));
  SetNumber(node.attrs, "groups", static_cast<double>(AttrInt(n, "group", 1)));
  if (transposed) {
    SetNumber(node.attrs, "transposed", 1);
    const Ints out_pad = AttrInts(n, "output_padding");
    if (!out_pad.empty()) SetInts(node.attrs, "output_padding", out_pad);
  }
}

void Mapper::MapGemm(const onnx::NodeProto& n, NetNode& node) {
  if (n.input_size() < 2) return;
  const Ints a = DimsOf(n.input(0)), b = DimsOf(n.input(1));
  if (a.size() != 2 || b.size() != 2) return;
  const bool ta = AttrInt(n, "transA", 0) != 0, tb = AttrInt(n, "transB", 0) != 0;
  if (tb && !ta && values_.IsInitializer(n.input(1))) {
    node.op = "linear";  // Y = X W^T + C with W [n, k]: nn.Linear as exported
    return;
  }
  // alpha and beta scale the result: not counted (the FLOP counter convention).
  node.op = "matmul";
  const int64_t m = ta ? a[1] : a[0], k = ta ? a[0] : a[1], cols = tb ? b[0] : b[1];
  if (ta) SetNumber(node.attrs, "transpose_a", 1);
  if (tb) SetNumber(node.attrs, "transpose_b", 1);
  SetNumber(node.attrs, "batch", 1);
  SetNumber(node.attrs, "m", static_cast<double>(m));
  SetNumber(node.attrs, "n", static_cast<double>(cols));
  SetNumber(node.attrs, "k", static_cast<double>(k));
}

void Mapper::MapMatMul(const onnx::NodeProto& n, NetNode& node) {
  if (n.input_size() < 2) return;
  const auto a = values_.Dims(n.input(0)), b = values_.Dims(n.input(1));
  const auto y = values_.Dims(n.output(0));
  if (!a || !b || !y || a->empty() || b->empty()) return;
  node.op = "matmul";
  if (a->size() == 1 || b->size() == 1) {
    // numpy semantics: a vector operand gains a unit row / column that the output drops.
    const int64_t k = a->back();
    const int64_t m = a->size() == 1 ? 1 : (*a)[a->size() - 2];
    const int64_t cols = b->size() == 1 ? 1 : b->back();
    const int64_t out = ElementCount(*y).value_or(0);
    const int64_t per = m * cols;
    SetNumber(node.attrs, "batch", per > 0 ? static_cast<double>(out / per) : 0);
    SetNumber(node.attrs, "m", static_cast<double>(m));
    SetNumber(node.attrs, "n", static_cast<double>(cols));
    SetNumber(node.attrs, "k", static_cast<double>(k));
  }
}

/// Einsum with two operands: every index is a batch (in A, B and the output), m (A and output),
/// n (B and output) or k (summed). An index in one operand only and not in the output is summed
/// too and counted into k, so FLOPs = 2 x batch x m x n x k = 2 x the product of all extents.
bool Mapper::MapEinsum(const onnx::NodeProto& n, NetNode& node) {
  std::string eq = AttrString(n, "equation", "");
  node.attrs.strings["equation"] = eq;
  std::vector<Ints> shapes;
  for (const auto& in : n.input()) {
    auto d = values_.Dims(in);
    if (!d) return false;
    shapes.push_back(*d);
  }
  const auto spec = ParseEinsum(eq, shapes);
  if (!spec) return false;
  auto in = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  if (spec->operands.size() == 1) {
    // One operand: a transpose (a permutation) or a reduction over the dropped indices.
    const bool permutation = spec->output.size() == spec->operands[0].size();
    node.op = permutation ? "copy" : "reduce";
    node.attrs.strings["function"] = permutation ? "transpose" : "sum";
    return true;
  }
  if (spec->operands.size() != 2) return false;
  double batch = 1, m = 1, cols = 1, k = 1;
  for (const auto& [c, e] : spec->extent) {
    const bool a = in(spec->operands[0], c), b = in(spec->operands[1], c), y = in(spec->output, c);
    if (a && b && y) {
      batch *= static_cast<double>(e);
    } else if (a && y) {
      m *= static_cast<double>(e);
    } else if (b && y) {
      cols *= static_cast<double>(e);
    } else {
      k *= static_cast<double>(e);
    }
  }
  node.op = "matmul";
  // B laid out as [batch..., n, k] (q.k^T): the transpose_b of a plain matmul.
  const std::string& b_labels = spec->operands[1];
  if (b_labels.size() >= 2 && !in(spec->operands[0], b_labels[b_labels.size() - 2]) &&
      in(spec->operands[0], b_labels.back()) && !in(spec->output, b_labels.back())) {
    SetNumber(node.attrs, "transpose_b", 1);
  }
  SetNumber(node.attrs, "batch", batch);
  SetNumber(node.attrs, "m", m);
  SetNumber(node.attrs, "n", cols);
  SetNumber(node.attrs, "k", k);
  return true;
}

void Mapper::MapPool(const onnx::NodeProto& n, NetNode& node) {
  const std::string& op = n.op_type();
  const Ints x = n.input_size() > 0 ? DimsOf(n.input(0)) : Ints{};
  if (x.size() < 3) return;
  const size_t rank = x.size() - 2;
  const Ints in(x.begin() + 2, x.end());
  node.op = "pool";
  node.attrs.strings["kind"] = op.find("Max") != std::string::npos  ? "max"
                               : op.find("Lp") != std::string::npos ? "lp"
                                                                    : "avg";
  if (op.rfind("Global", 0) == 0) {
    SetNumber(node.attrs, "global", 1);
    SetInts(node.attrs, "kernel", in);
    SetInts(node.attrs, "stride", Ints(rank, 1));
    SetInts(node.attrs, "padding", Ints(2 * rank, 0));
    return;
  }
  const Ints kernel = AttrInts(n, "kernel_shape");
  if (kernel.size() != rank) {
    node.op = "unknown";
    return;
  }
  const Ints stride = OrOnes(AttrInts(n, "strides"), rank);
  const Ints dilation = OrOnes(AttrInts(n, "dilations"), rank);
  SetNumber(node.attrs, "global", 0);
  SetInts(node.attrs, "kernel", kernel);
  SetInts(node.attrs, "stride", stride);
  SetInts(node.attrs, "padding", ResolvePads(n, in, kernel, stride, dilation, false));
  node.outputs.resize(1);  // MaxPool's optional indices output is not modelled
}

std::string ModuleOfNodeName(const std::string& name) {
  // PyTorch's exporter names nodes by scope: "/layer1/layer1.0/conv1/Conv" -- each component
  // after the first repeats its parent's path, the last is the op.
  if (name.empty() || name[0] != '/') return "";
  std::vector<std::string> parts;
  for (size_t start = 1; start <= name.size();) {
    size_t slash = name.find('/', start);
    if (slash == std::string::npos) slash = name.size();
    if (slash > start) parts.push_back(name.substr(start, slash - start));
    start = slash + 1;
  }
  if (parts.size() < 2) return "";
  parts.pop_back();  // the op ("Conv", "Conv_1")
  std::string module;
  for (const auto& p : parts) {
    if (!module.empty() && p.rfind(module + ".", 0) == 0) {
      module = p;  // "layer1" then "layer1.0": the full path
    } else {
      module += (module.empty() ? "" : ".") + p;
    }
  }
  return module;
}

Status MapNodes(const onnx::GraphProto& graph, const ModelValues& values, NetworkGraph* out) {
  Mapper mapper(graph, values, out);
  return mapper.Run();
}

}  // namespace roofline::onnx_frontend
