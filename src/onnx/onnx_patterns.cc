// Elementwise ops of the ONNX frontend and the activation patterns it fuses (GELU, SiLU).
#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "src/onnx/onnx_internal.h"

namespace roofline::onnx_frontend {
namespace {

/// FLOPs per output element, the convention of the PyTorch trace costing
/// (src/profile/torch_op_cost_pointwise.cc): a transcendental counts 1; sigmoid = neg, exp, add,
/// div (4); leaky/parametric relu = compare + multiply (2); hard sigmoid = mul, add, clip (3).
const std::map<std::string, int>& ElementwiseTable() {
  static const std::map<std::string, int> kTable = {
      {"Add", 1},         {"Sub", 1},         {"Mul", 1},
      {"Div", 1},         {"Neg", 1},         {"Abs", 1},
      {"Relu", 1},        {"Max", 1},         {"Min", 1},
      {"Sum", 1},         {"Mean", 1},        {"Where", 1},
      {"Equal", 1},       {"Greater", 1},     {"GreaterOrEqual", 1},
      {"Less", 1},        {"LessOrEqual", 1}, {"And", 1},
      {"Or", 1},          {"Xor", 1},         {"Not", 1},
      {"Sign", 1},        {"Floor", 1},       {"Ceil", 1},
      {"Round", 1},       {"Reciprocal", 1},  {"Sqrt", 1},
      {"Exp", 1},         {"Log", 1},         {"Tanh", 1},
      {"Erf", 1},         {"Pow", 1},         {"Sin", 1},
      {"Cos", 1},         {"Tan", 1},         {"Clip", 1},
      {"Mod", 1},         {"IsNaN", 1},       {"IsInf", 1},
      {"BitShift", 1},    {"BitwiseAnd", 1},  {"BitwiseOr", 1},
      {"BitwiseXor", 1},  {"BitwiseNot", 1},  {"ThresholdedRelu", 1},
      {"Sigmoid", 4},     {"LeakyRelu", 2},   {"PRelu", 2},
      {"Elu", 2},         {"Selu", 3},        {"Celu", 2},
      {"Softplus", 2},    {"Softsign", 2},    {"Shrink", 2},
      {"HardSigmoid", 3}, {"HardSwish", 4},   {"Mish", 4},
      {"Gelu", 5},        {"QuickGelu", 5},   {"FastGelu", 8},
      {"BiasGelu", 6},    {"Swish", 5},       {"BiasAdd", 2},
  };
  return kTable;
}

/// Union-find over node indices.
int Root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

bool IsPatternOp(const onnx::NodeProto& n) {
  static const std::set<std::string> kOps = {"Div", "Mul",  "Add", "Sub",
                                             "Erf", "Tanh", "Pow", "Sigmoid"};
  return (n.domain().empty() || n.domain() == "ai.onnx") && kOps.count(n.op_type()) > 0 &&
         n.output_size() == 1 && !n.output(0).empty();
}

}  // namespace

int ElementwiseFlops(const std::string& op_type) {
  auto it = ElementwiseTable().find(op_type);
  return it == ElementwiseTable().end() ? 0 : it->second;
}

std::vector<FusedActivation> FindFusedActivations(const onnx::GraphProto& graph,
                                                  const ModelValues& values) {
  const int count = graph.node_size();
  std::map<std::string, int> producer;
  std::map<std::string, std::vector<int>> readers;
  for (int i = 0; i < count; ++i) {
    for (const auto& o : graph.node(i).output()) producer[o] = i;
    for (const auto& in : graph.node(i).input()) {
      if (!in.empty()) readers[in].push_back(i);
    }
  }
  // Join pattern ops through values that only pattern ops read (and that are no graph output).
  std::vector<int> parent(count);
  std::iota(parent.begin(), parent.end(), 0);
  for (int i = 0; i < count; ++i) {
    const auto& n = graph.node(i);
    if (!IsPatternOp(n) || values.IsConstant(n.output(0))) continue;
    for (const auto& o : n.output()) {
      if (values.graph_outputs.count(o) > 0 || readers[o].empty()) continue;
      const auto& rs = readers[o];
      if (std::all_of(rs.begin(), rs.end(), [&](int r) { return IsPatternOp(graph.node(r)); })) {
        for (int r : rs) parent[Root(parent, r)] = Root(parent, i);
      }
    }
  }
  std::map<int, std::vector<int>> groups;
  for (int i = 0; i < count; ++i) {
    if (IsPatternOp(graph.node(i)) && !values.IsConstant(graph.node(i).output(0))) {
      groups[Root(parent, i)].push_back(i);
    }
  }
  std::vector<FusedActivation> found;
  for (auto& [root, members] : groups) {
    if (members.size() < 2) continue;
    std::set<int> inside(members.begin(), members.end());
    std::map<std::string, int> ops;
    std::set<std::string> external, escaping;
    std::vector<std::string> weights;
    int flops = 0;
    for (int i : members) {
      const auto& n = graph.node(i);
      ++ops[n.op_type()];
      flops += ElementwiseFlops(n.op_type());
      for (const auto& in : n.input()) {
        if (values.IsInitializer(in)) {
          const auto d = values.Dims(in);
          if (d && !d->empty() && std::find(weights.begin(), weights.end(), in) == weights.end()) {
            weights.push_back(in);
          }
        }
        if (in.empty() || values.IsConstant(in)) continue;
        auto p = producer.find(in);
        if (p == producer.end() || inside.count(p->second) == 0) external.insert(in);
      }
      for (const auto& o : n.output()) {
        bool leaves = values.graph_outputs.count(o) > 0;
        for (int r : readers[o]) leaves |= inside.count(r) == 0;
        if (leaves) escaping.insert(o);
      }
    }
    if (external.size() != 1 || escaping.size() != 1) continue;
    const auto in_dims = values.Dims(*external.begin());
    const auto out_dims = values.Dims(*escaping.begin());
    if (!in_dims || !out_dims || *in_dims != *out_dims) continue;
    const int n = static_cast<int>(members.size());
    std::string function;
    if (n == 2 && ops["Sigmoid"] == 1 && ops["Mul"] == 1) {
      function = "silu";
    } else if (ops["Erf"] == 1 && ops["Tanh"] == 0 && ops["Sigmoid"] == 0 && ops["Pow"] == 0 &&
               n <= 6) {
      function = "gelu";
    } else if (ops["Tanh"] == 1 && ops["Erf"] == 0 && ops["Sigmoid"] == 0 && n <= 9) {
      function = "gelu_tanh";
    } else {
      continue;
    }
    found.push_back({members, function, *external.begin(), weights, *escaping.begin(), flops});
  }
  return found;
}

}  // namespace roofline::onnx_frontend
