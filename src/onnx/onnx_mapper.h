// The node mapper of the ONNX frontend, shared by onnx_ops.cc (most ops) and onnx_attention.cc
// (the attention ops), with the attribute helpers they use.
#ifndef ROOFLINE_SRC_ONNX_ONNX_MAPPER_H_
#define ROOFLINE_SRC_ONNX_ONNX_MAPPER_H_

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "src/onnx/onnx_internal.h"

namespace roofline::onnx_frontend {

using Ints = std::vector<int64_t>;

inline const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}
inline int64_t AttrInt(const onnx::NodeProto& n, const std::string& name, int64_t fallback) {
  const auto* a = FindAttr(n, name);
  return a != nullptr && a->type() == onnx::AttributeProto::INT ? a->i() : fallback;
}
inline Ints AttrInts(const onnx::NodeProto& n, const std::string& name) {
  const auto* a = FindAttr(n, name);
  return a == nullptr ? Ints{} : Ints(a->ints().begin(), a->ints().end());
}
inline std::string AttrString(const onnx::NodeProto& n, const std::string& name,
                              const std::string& fallback) {
  const auto* a = FindAttr(n, name);
  return a != nullptr && a->type() == onnx::AttributeProto::STRING ? a->s() : fallback;
}

inline void SetInts(NetAttrs& attrs, const std::string& key, const Ints& v) {
  attrs.numbers[key] = std::vector<double>(v.begin(), v.end());
}
inline void SetNumber(NetAttrs& attrs, const std::string& key, double v) {
  attrs.numbers[key] = {v};
}

/// Builds the NetNodes and tensors of one model.
class Mapper {
 public:
  Mapper(const onnx::GraphProto& graph, const ModelValues& values, NetworkGraph* out)
      : graph_(graph), values_(values), out_(out) {
    for (const auto& n : graph.node()) {
      if (n.op_type() == "BatchNormalization") {
        for (int i = 3; i < std::min(n.input_size(), 5); ++i) buffers_.insert(n.input(i));
      }
      if (n.op_type() == "Constant") {
        for (const auto& o : n.output()) constant_nodes_.insert(o);
      }
    }
  }

  Status Run() {
    std::map<int, const FusedActivation*> fused_at;  // last node of a pattern -> the pattern
    std::set<int> fused_member;
    const auto fused = FindFusedActivations(graph_, values_);
    for (const auto& f : fused) {
      fused_at[f.nodes.back()] = &f;
      fused_member.insert(f.nodes.begin(), f.nodes.end());
    }
    for (int i = 0; i < graph_.node_size(); ++i) {
      if (auto it = fused_at.find(i); it != fused_at.end()) {
        EmitFused(*it->second);
      } else if (fused_member.count(i) == 0) {
        MapNode(graph_.node(i), i);
      }
    }
    if (!fused.empty()) {
      out_->notes.push_back(std::to_string(fused.size()) +
                            " activation subgraphs (GELU / SiLU) fused into one elementwise "
                            "node each");
    }
    return Status::Ok();
  }

 private:
  const ValueInfo* Info(const std::string& name) const { return values_.Find(name); }
  Ints DimsOf(const std::string& name) const { return values_.Dims(name).value_or(Ints{}); }
  bool Known(const std::string& name) const {
    return values_.Dims(name).has_value() || synthetic_.count(name) > 0;
  }

  /// Adds tensor `name` to the graph once.
  void AddTensor(const std::string& name) {
    if (name.empty() || !added_.insert(name).second) return;
    NetTensor t;
    t.name = name;
    const ValueInfo* info = Info(name);
    if (info != nullptr) {
      t.dtype = DTypeOfElemType(info->elem_type);
      t.fixed_dtype = !IsFloatElemType(info->elem_type);
      if (info->known) {
        for (int64_t d : info->dims) t.shape.push_back(ShapeEntry::Const(d));
      }
    }
    if (values_.IsInitializer(name)) {
      const int32_t type = info != nullptr ? info->elem_type : 0;
      t.weight = true;
      // Parameters: learned tensors. Not: BatchNorm running statistics (buffers), integer
      // shape / index tensors and scalars (constants such as GELU's 0.5 or sqrt(2)).
      t.parameter = buffers_.count(name) == 0 && type != onnx::TensorProto::INT64 &&
                    type != onnx::TensorProto::BOOL && info != nullptr && !info->dims.empty();
    } else if (values_.constants.count(name) > 0 && constant_nodes_.count(name) == 0) {
      t.weight = true;  // computed at load time from initializers: read like a weight
      t.parameter = false;
    }
    out_->tensors.push_back(std::move(t));
  }

  /// A synthetic tensor (the frontend's own intermediate), e.g. the Q of a contrib attention.
  std::string AddSynthetic(const std::string& name, const Ints& dims, int32_t elem_type) {
    synthetic_.insert(name);
    if (added_.insert(name).second) {
      NetTensor t;
      t.name = name;
      t.dtype = DTypeOfElemType(elem_type);
      t.fixed_dtype = !IsFloatElemType(elem_type);
      for (int64_t d : dims) t.shape.push_back(ShapeEntry::Const(d));
      out_->tensors.push_back(std::move(t));
    }
    return name;
  }

  std::string UniqueName(const onnx::NodeProto& n, int index) {
    std::string base = n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
    std::string name = base;
    for (int k = 2; !names_.insert(name).second; ++k) name = base + "#" + std::to_string(k);
    return name;
  }

  NetNode Begin(const onnx::NodeProto& n, int index, const std::string& op) {
    NetNode node;
    node.name = UniqueName(n, index);
    node.op = op;
    node.module = ModuleOfNodeName(n.name());
    node.source = (n.domain().empty() || n.domain() == "ai.onnx") ? n.op_type()
                                                                  : n.domain() + "::" + n.op_type();
    for (const auto& in : n.input()) {
      if (!in.empty()) node.inputs.push_back(in);
    }
    for (const auto& o : n.output()) {
      if (!o.empty()) node.outputs.push_back(o);
    }
    return node;
  }

  void Emit(NetNode node) {
    bool unknown_shape = false;
    for (const auto& t : node.inputs) {
      AddTensor(t);
      unknown_shape |= !Known(t);
    }
    for (const auto& t : node.outputs) {
      AddTensor(t);
      unknown_shape |= !Known(t);
    }
    if (unknown_shape) {
      node.attrs.numbers["unknown_shape"] = {1};
      if (node.op != "unknown" && node.op != "view") {
        // A costed op needs static shapes: list it instead of guessing.
        node.attrs.strings["op"] = node.source;
        node.attrs.strings["reason"] = "no static shape after shape inference";
        node.op = "unknown";
      }
    }
    out_->nodes.push_back(std::move(node));
  }

  void EmitFused(const FusedActivation& f) {
    const auto& last = graph_.node(f.nodes.back());
    NetNode node = Begin(last, f.nodes.back(), "elementwise");
    node.source.clear();
    for (int i : f.nodes)
      node.source += (node.source.empty() ? "" : "+") + graph_.node(i).op_type();
    node.inputs = {f.input};
    node.inputs.insert(node.inputs.end(), f.weights.begin(), f.weights.end());
    node.outputs = {f.output};
    node.attrs.strings["function"] = f.function;
    SetNumber(node.attrs, "flops_per_element", f.flops_per_element);
    SetNumber(node.attrs, "fused_nodes", static_cast<double>(f.nodes.size()));
    Emit(std::move(node));
  }

  void MapNode(const onnx::NodeProto& n, int index);
  void MapConv(const onnx::NodeProto& n, NetNode& node);
  void MapGemm(const onnx::NodeProto& n, NetNode& node);
  void MapMatMul(const onnx::NodeProto& n, NetNode& node);
  bool MapEinsum(const onnx::NodeProto& n, NetNode& node);
  void MapPool(const onnx::NodeProto& n, NetNode& node);
  bool MapContribAttention(const onnx::NodeProto& n, int index);
  bool MapAttention(const onnx::NodeProto& n, NetNode& node);

  const onnx::GraphProto& graph_;
  const ModelValues& values_;
  NetworkGraph* out_;
  std::set<std::string> added_, names_, buffers_, constant_nodes_, synthetic_;
};

}  // namespace roofline::onnx_frontend

#endif  // ROOFLINE_SRC_ONNX_ONNX_MAPPER_H_
