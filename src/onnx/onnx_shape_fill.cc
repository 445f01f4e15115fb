// Shapes the ONNX library cannot infer (ops newer than libonnx 1.12, com.microsoft contrib ops,
// Einsum beyond its rank) and the values computable at load time.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "src/onnx/onnx_internal.h"

namespace roofline::onnx_frontend {
namespace {

bool IsShapeOp(const std::string& op) { return op == "Shape" || op == "Size"; }

bool IsNondeterministic(const std::string& op) {
  return op.rfind("Random", 0) == 0 || op == "Multinomial" || op == "Bernoulli";
}

/// Ops (any domain) whose first output has the shape and type of their first input.
bool PreservesShape(const std::string& op) {
  static const std::set<std::string> kOps = {"GroupNormalization",
                                             "Gelu",
                                             "FastGelu",
                                             "BiasGelu",
                                             "QuickGelu",
                                             "LayerNormalization",
                                             "SimplifiedLayerNormalization",
                                             "RMSNormalization",
                                             "SkipLayerNormalization",
                                             "SkipSimplifiedLayerNormalization",
                                             "Mish",
                                             "HardSwish",
                                             "Swish",
                                             "BiasAdd",
                                             "BiasSplitGelu"};
  return kOps.count(op) > 0;
}

int64_t IntAttrOr(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name && a.has_i()) return a.i();
  }
  return fallback;
}

std::vector<int64_t> IntsAttr(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  }
  return {};
}

/// Output shape of the attention ops the library may not know (com.microsoft Attention and
/// MultiHeadAttention, opset-23 Attention); nullopt when the inputs do not say.
std::optional<std::vector<int64_t>> AttentionOutputDims(const onnx::NodeProto& node,
                                                        const ModelValues& values) {
  auto in = [&](int i) -> std::optional<std::vector<int64_t>> {
    if (i >= node.input_size() || node.input(i).empty()) return std::nullopt;
    return values.Dims(node.input(i));
  };
  const auto q = in(0);
  if (!q) return std::nullopt;
  if (node.domain() == "com.microsoft" && node.op_type() == "Attention") {
    const auto w = in(1);
    if (q->size() != 3) return std::nullopt;
    const auto sizes = IntsAttr(node, "qkv_hidden_sizes");
    if (sizes.size() == 3) return std::vector<int64_t>{(*q)[0], (*q)[1], sizes[2]};
    if (!w || w->size() != 2 || (*w)[1] % 3 != 0) return std::nullopt;
    return std::vector<int64_t>{(*q)[0], (*q)[1], (*w)[1] / 3};
  }
  const auto v = in(2);
  if (!v) return std::nullopt;
  if (node.op_type() == "MultiHeadAttention") {
    if (q->size() != 3) return std::nullopt;
    if (v->size() == 3) return std::vector<int64_t>{(*q)[0], (*q)[1], (*v)[2]};
    if (v->size() == 4) return std::vector<int64_t>{(*q)[0], (*q)[1], (*v)[1] * (*v)[3]};
    return std::nullopt;
  }
  // ONNX Attention (opset 23): 4-D [B, H, S, D] or 3-D [B, S, H*D] with q/kv_num_heads.
  if (q->size() == 4 && v->size() == 4) {
    return std::vector<int64_t>{(*q)[0], (*q)[1], (*q)[2], (*v)[3]};
  }
  if (q->size() == 3 && v->size() == 3) {
    const int64_t hq = IntAttrOr(node, "q_num_heads", 0), hkv = IntAttrOr(node, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0 || (*v)[2] % hkv != 0) return std::nullopt;
    return std::vector<int64_t>{(*q)[0], (*q)[1], hq * ((*v)[2] / hkv)};
  }
  return std::nullopt;
}

}  // namespace

std::map<std::string, ValueInfo> MissingShapes(const onnx::GraphProto& graph,
                                               const ModelValues& values) {
  std::map<std::string, ValueInfo> found;
  for (const auto& n : graph.node()) {
    if (n.output_size() == 0 || n.output(0).empty()) continue;
    const ValueInfo* have = values.Find(n.output(0));
    if (have != nullptr && have->known) continue;
    std::optional<std::vector<int64_t>> dims;
    if (PreservesShape(n.op_type()) && n.input_size() > 0) {
      dims = values.Dims(n.input(0));
    } else if (n.op_type() == "Attention" || n.op_type() == "MultiHeadAttention") {
      dims = AttentionOutputDims(n, values);
    } else if (n.op_type() == "Einsum") {
      std::vector<std::vector<int64_t>> shapes;
      for (const auto& in : n.input()) {
        if (auto d = values.Dims(in)) shapes.push_back(*d);
      }
      std::string eq;
      for (const auto& a : n.attribute()) {
        if (a.name() == "equation") eq = a.s();
      }
      if (shapes.size() == static_cast<size_t>(n.input_size())) {
        if (auto spec = ParseEinsum(eq, shapes)) {
          dims.emplace();
          for (char c : spec->output) dims->push_back(spec->extent[c]);
        }
      }
    }
    if (!dims || !ElementCount(*dims)) continue;
    ValueInfo info;
    info.known = true;
    info.dims = *dims;
    const ValueInfo* in0 = n.input_size() > 0 ? values.Find(n.input(0)) : nullptr;
    info.elem_type = (have != nullptr && have->elem_type != 0) ? have->elem_type
                     : in0 != nullptr                          ? in0->elem_type
                                                               : 0;
    found[n.output(0)] = info;
  }
  return found;
}

std::optional<EinsumSpec> ParseEinsum(std::string eq,
                                      const std::vector<std::vector<int64_t>>& shapes) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  EinsumSpec spec;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    spec.operands.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (spec.operands.size() != shapes.size()) return std::nullopt;
  // "..." stands for the leading axes not named by letters, right-aligned like numpy
  // broadcasting; they get the labels '0', '1', ...
  size_t ellipsis_rank = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (spec.operands[i].find("...") == std::string::npos) continue;
    const size_t letters = spec.operands[i].size() - 3;
    if (shapes[i].size() < letters) return std::nullopt;
    ellipsis_rank = std::max(ellipsis_rank, shapes[i].size() - letters);
  }
  if (ellipsis_rank > 10) return std::nullopt;
  auto expand = [&](std::string& s, size_t rank) {
    const size_t dots = s.find("...");
    if (dots == std::string::npos) return;
    std::string labels;
    for (size_t j = ellipsis_rank - rank; j < ellipsis_rank; ++j) {
      labels += static_cast<char>('0' + j);
    }
    s.replace(dots, 3, labels);
  };
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (spec.operands[i].find("...") != std::string::npos) {
      expand(spec.operands[i], shapes[i].size() - (spec.operands[i].size() - 3));
    }
    if (spec.operands[i].size() != shapes[i].size()) return std::nullopt;
    for (size_t j = 0; j < shapes[i].size(); ++j) {
      const char c = spec.operands[i][j];
      if (!std::isalnum(static_cast<unsigned char>(c))) return std::nullopt;
      auto& e = spec.extent[c];
      e = std::max(e, shapes[i][j]);  // broadcasting: a 1 takes the other operand's size
    }
  }
  if (arrow != std::string::npos) {
    spec.output = eq.substr(arrow + 2);
    expand(spec.output, ellipsis_rank);
  } else {
    // Implicit output: the labels that occur once, in alphabetical order (ellipsis first).
    std::map<char, int> seen;
    for (const auto& o : spec.operands) {
      for (char c : o) ++seen[c];
    }
    for (const auto& [c, k] : seen) {
      if (k == 1) spec.output += c;
    }
  }
  for (char c : spec.output) {
    if (spec.extent.count(c) == 0) return std::nullopt;
  }
  return spec;
}

void MarkConstantValues(const onnx::GraphProto& graph, ModelValues* values) {
  for (const auto& n : graph.node()) {
    bool constant = false;
    if (n.op_type() == "Constant" && n.domain().empty()) {
      constant = true;
    } else if (IsShapeOp(n.op_type()) && n.input_size() > 0) {
      constant = values->Dims(n.input(0)).has_value();
    } else if (!IsNondeterministic(n.op_type()) && n.input_size() > 0) {
      bool has_subgraph = false;
      for (const auto& a : n.attribute()) has_subgraph |= a.has_g() || a.graphs_size() > 0;
      constant = !has_subgraph;
      for (const auto& in : n.input()) {
        if (!in.empty() && !values->IsConstant(in)) constant = false;
      }
    }
    if (!constant) continue;
    for (const auto& out : n.output()) {
      if (!out.empty()) values->constants.insert(out);
    }
  }
}

}  // namespace roofline::onnx_frontend
