// Shapes for the ONNX frontend: binding symbolic input dimensions and running ONNX shape
// inference (with the shapes of onnx_shape_fill.cc where the library stops).
#include <onnx/defs/schema.h>
#include <onnx/defs/tensor_proto_util.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>

#include "src/onnx/onnx_internal.h"

namespace roofline::onnx_frontend {
namespace {

std::string JoinNames(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Sets every bound symbolic dimension of `shape` to its value; returns false when a dimension
/// stays unknown afterwards.
bool SubstituteDims(onnx::TensorShapeProto* shape, const DimBindings& dims) {
  bool all_static = true;
  for (auto& d : *shape->mutable_dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) continue;
    auto it = d.has_dim_param() ? dims.find(d.dim_param()) : dims.end();
    if (it != dims.end()) {
      d.set_dim_value(it->second);
    } else {
      all_static = false;
    }
  }
  return all_static;
}

/// The library's message on one line, without its internal prefix.
std::string OneLine(std::string message) {
  for (auto& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  for (const std::string prefix :
       {"[ShapeInferenceError] ", "[TypeInferenceError] ", "Shape inference error(s): "}) {
    for (size_t p; (p = message.find(prefix)) != std::string::npos;) {
      message.erase(p, prefix.size());
    }
  }
  // "(op_type:MatMul, node name: mm): ..." -> "node 'mm' (MatMul): ..."
  const std::string op_key = "(op_type:", name_key = ", node name: ";
  for (size_t p = 0; (p = message.find(op_key, p)) != std::string::npos;) {
    const size_t comma = message.find(name_key, p);
    const size_t close = comma == std::string::npos ? comma : message.find("):", comma);
    if (close == std::string::npos) break;
    const std::string op = message.substr(p + op_key.size(), comma - p - op_key.size());
    const std::string node =
        message.substr(comma + name_key.size(), close - comma - name_key.size());
    const std::string text = "node '" + node + "' (" + op + "):";
    message.replace(p, close + 2 - p, text);
    p += text.size();
  }
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

/// Rank of an input type when known, else -1.
int RankOf(const onnx::TypeProto* t) {
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return -1;
  return t->tensor_type().shape().dim_size();
}

/// libonnx 1.12's Slice inference does not return on a step near INT64_MIN; real steps are
/// small, so a known step outside [-2^31, 2^31] is an inference error naming the node.
void CheckSliceSteps(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() < 5) return;
  const onnx::TensorProto* steps = ctx.getInputData(4);
  if (steps == nullptr) return;
  std::vector<int64_t> values;
  if (steps->data_type() == onnx::TensorProto::INT64) {
    const auto v = onnx::ParseData<int64_t>(steps);
    values.assign(v.begin(), v.end());
  } else if (steps->data_type() == onnx::TensorProto::INT32) {
    const auto v = onnx::ParseData<int32_t>(steps);
    values.assign(v.begin(), v.end());
  }
  constexpr int64_t kLimit = int64_t{1} << 31;
  for (int64_t v : values) {
    if (v < -kLimit || v > kLimit) {
      fail_shape_inference("steps value ", v, " is out of range [-2^31, 2^31]");
    }
  }
}

/// True when the library holds no type for the node's first input (an input it has not typed,
/// or an omitted optional first input: libonnx passes null for both). libonnx 1.12's Shape
/// inference reads that type without checking it (a fuzzed model crashed it,
/// tests/fixtures/onnx/fuzz_shape_untyped_input.onnx). Without the type the node is not
/// inferred; a later pass or the uncosted list takes it.
template <typename Context>
bool FirstInputUntyped(Context& ctx) {
  return ctx.getNumInputs() > 0 && ctx.getInputType(0) == nullptr;
}

/// The library's schemas, guarded where libonnx 1.12 trusts its input. Every inference and
/// data propagation function first checks that the first input has a type. Convolutions and
/// pooling also check ranks: libonnx indexes their input shapes without checking them (a scalar
/// ConvTranspose weight crashes it); Slice checks its steps. A bad rank or step becomes an
/// inference error naming the node.
class GuardedRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Instance()->GetSchema(key, max_version, domain);
    if (schema == nullptr || (!schema->has_type_and_shape_inference_function() &&
                              !schema->has_data_propagation_function())) {
      return schema;
    }
    auto& slot = guarded_[{schema->Name(), schema->SinceVersion(), schema->domain()}];
    if (slot) return slot.get();
    slot = std::make_unique<onnx::OpSchema>(*schema);
    if (schema->has_data_propagation_function()) {
      auto propagate = schema->GetDataPropagationFunction();
      slot->PartialDataPropagationFunction([propagate](onnx::DataPropagationContext& ctx) {
        if (!FirstInputUntyped(ctx)) propagate(ctx);
      });
    }
    if (!schema->has_type_and_shape_inference_function()) return slot.get();
    auto inner = schema->GetTypeAndShapeInferenceFunction();
    if (key == "Slice") {
      slot->TypeAndShapeInferenceFunction([inner](onnx::InferenceContext& ctx) {
        if (FirstInputUntyped(ctx)) return;
        CheckSliceSteps(ctx);
        inner(ctx);
      });
      return slot.get();
    }
    if (!RankGuarded(key)) {
      slot->TypeAndShapeInferenceFunction([inner](onnx::InferenceContext& ctx) {
        if (!FirstInputUntyped(ctx)) inner(ctx);
      });
      return slot.get();
    }
    const int weight = key == "QLinearConv" ? 3 : 1;  // input index of W (-1: none)
    const bool has_weight = key.find("Conv") != std::string::npos;
    slot->TypeAndShapeInferenceFunction([inner, weight, has_weight](onnx::InferenceContext& ctx) {
      if (FirstInputUntyped(ctx)) return;
      const int x = RankOf(ctx.getNumInputs() > 0 ? ctx.getInputType(0) : nullptr);
      const int w = has_weight && ctx.getNumInputs() > static_cast<size_t>(weight)
                        ? RankOf(ctx.getInputType(weight))
                        : -1;
      if (x >= 0 && x < 3) fail_shape_inference("input X has rank ", x, ", expected 3 or more");
      if (has_weight && w >= 0 && w < 3) {
        fail_shape_inference("weight W has rank ", w, ", expected 3 or more");
      }
      if (has_weight && x >= 0 && w >= 0 && x != w) {
        fail_shape_inference("X has rank ", x, " but W has rank ", w);
      }
      inner(ctx);
    });
    return slot.get();
  }

 private:
  static bool RankGuarded(const std::string& op) {
    static const std::set<std::string> kOps = {"Conv",        "ConvTranspose", "ConvInteger",
                                               "QLinearConv", "MaxPool",       "AveragePool",
                                               "LpPool",      "MaxUnpool"};
    return kOps.count(op) > 0;
  }
  mutable std::map<std::tuple<std::string, int, std::string>, std::unique_ptr<onnx::OpSchema>>
      guarded_;
};

/// A copy of `model` for shape inference: initializers larger than a shape tensor keep their
/// name, type and dims but not their data (inference reads only small ones).
onnx::ModelProto InferenceCopy(onnx::ModelProto& model) {
  constexpr int64_t kKeepData = 4096;  // elements
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  initializers.Swap(model.mutable_graph()->mutable_initializer());
  onnx::ModelProto work = model;
  initializers.Swap(model.mutable_graph()->mutable_initializer());
  for (const auto& t : model.graph().initializer()) {
    onnx::TensorProto* copy = work.mutable_graph()->add_initializer();
    const auto n = ElementCount(std::vector<int64_t>(t.dims().begin(), t.dims().end()));
    if (n && *n <= kKeepData) {
      *copy = t;
      continue;
    }
    copy->set_name(t.name());
    copy->set_data_type(t.data_type());
    *copy->mutable_dims() = t.dims();
  }
  return work;
}

/// Sets the type of value `name` (a graph output or value_info entry, added when absent).
void SetValueInfo(onnx::GraphProto* graph, const std::string& name, const ValueInfo& info) {
  onnx::ValueInfoProto* target = nullptr;
  for (auto& o : *graph->mutable_output()) {
    if (o.name() == name) target = &o;
  }
  for (auto& vi : *graph->mutable_value_info()) {
    if (vi.name() == name) target = &vi;
  }
  if (target == nullptr) {
    target = graph->add_value_info();
    target->set_name(name);
  }
  auto* tt = target->mutable_type()->mutable_tensor_type();
  if (info.elem_type != 0) tt->set_elem_type(info.elem_type);
  tt->clear_shape();
  auto* shape = tt->mutable_shape();
  for (int64_t d : info.dims) shape->add_dim()->set_dim_value(d);
}

}  // namespace

const ValueInfo* ModelValues::Find(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? nullptr : &it->second;
}

std::optional<std::vector<int64_t>> ModelValues::Dims(const std::string& name) const {
  const ValueInfo* v = Find(name);
  if (v == nullptr || !v->known) return std::nullopt;
  return v->dims;
}

Status BindInputDims(onnx::ModelProto& model, const DimBindings& dims, const std::string& origin,
                     std::vector<std::pair<std::string, int64_t>>* used) {
  onnx::GraphProto* graph = model.mutable_graph();
  std::set<std::string> init_names;
  for (const auto& t : graph->initializer()) init_names.insert(t.name());
  for (const auto& [name, value] : dims) {
    if (value < 0) {
      return Status::Invalid(origin, "--dim " + name + " must be a non-negative integer, got " +
                                         std::to_string(value));
    }
  }
  std::set<std::string> symbolic;
  for (auto& input : *graph->mutable_input()) {
    if (init_names.count(input.name()) > 0) continue;  // IR < 4 lists initializers as inputs
    if (!input.type().has_tensor_type()) {
      return Status::Unsupported(origin, "input '" + input.name() +
                                             "' is not a tensor (sequences, maps and optionals "
                                             "are not modelled)");
    }
    auto* tensor_type = input.mutable_type()->mutable_tensor_type();
    if (!tensor_type->has_shape()) {
      return Status::Invalid(origin, "input '" + input.name() + "' has no shape");
    }
    int axis = 0;
    for (auto& d : *tensor_type->mutable_shape()->mutable_dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          return Status::Invalid(origin, "input '" + input.name() + "' dimension " +
                                             std::to_string(axis) + " is negative (" +
                                             std::to_string(d.dim_value()) + ")");
        }
      } else if (d.has_dim_param() && !d.dim_param().empty()) {
        const std::string& sym = d.dim_param();
        symbolic.insert(sym);
        auto it = dims.find(sym);
        if (it == dims.end()) {
          return Status::Invalid(origin, "input '" + input.name() + "' dimension '" + sym +
                                             "' is symbolic: bind it with --dim " + sym + "=N");
        }
        if (std::none_of(used->begin(), used->end(),
                         [&](const auto& u) { return u.first == sym; })) {
          used->emplace_back(sym, it->second);
        }
        d.set_dim_value(it->second);
      } else {
        return Status::Invalid(origin, "input '" + input.name() + "' dimension " +
                                           std::to_string(axis) +
                                           " has neither a size nor a name, so it cannot be "
                                           "bound with --dim");
      }
      ++axis;
    }
  }
  for (const auto& [name, value] : dims) {
    if (symbolic.count(name) == 0) {
      return Status::Invalid(
          origin, "--dim " + name + ": the model has no symbolic input dimension '" + name + "' (" +
                      (symbolic.empty() ? std::string("its inputs have none")
                                        : "its symbolic dimensions: " + JoinNames(symbolic)) +
                      ")");
    }
  }
  // Exporters annotate outputs and intermediates with their own symbols ("batch", "s0*4"):
  // substitute the bound ones and drop the rest, so inference derives them from the inputs.
  for (auto& output : *graph->mutable_output()) {
    if (output.type().has_tensor_type() && output.type().tensor_type().has_shape() &&
        !SubstituteDims(output.mutable_type()->mutable_tensor_type()->mutable_shape(), dims)) {
      output.mutable_type()->mutable_tensor_type()->clear_shape();
    }
  }
  auto* infos = graph->mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i) {
    auto* vi = infos->Mutable(i);
    if (!vi->type().has_tensor_type() || !vi->type().tensor_type().has_shape() ||
        !SubstituteDims(vi->mutable_type()->mutable_tensor_type()->mutable_shape(), dims)) {
      infos->DeleteSubrange(i, 1);
    }
  }
  return Status::Ok();
}

/// Nodes of the standard domain must name an operator the library knows at the model's opset:
/// libonnx 1.12's strict inference dereferences a null pointer on one it does not (found by
/// fuzz/fuzz_onnx.cc: a MatMul block with "Reshape" mutated to "Rewhape"). Subgraphs too.
static Status CheckStandardOps(const onnx::GraphProto& g, int64_t opset,
                               const std::string& origin) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    const bool standard = n.domain().empty() || n.domain() == "ai.onnx";
    if (standard &&
        onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(opset), "") == nullptr) {
      return Status::Invalid(origin, "node " + std::to_string(i) + " ('" + n.name() + "'): '" +
                                         n.op_type() + "' is not an ONNX operator at opset " +
                                         std::to_string(opset));
    }
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.has_g()) {
        if (Status s = CheckStandardOps(a.g(), opset, origin); !s.ok()) return s;
      }
      for (const onnx::GraphProto& sub : a.graphs()) {
        if (Status s = CheckStandardOps(sub, opset, origin); !s.ok()) return s;
      }
    }
  }
  return Status::Ok();
}

Status InferModelShapes(onnx::ModelProto& model, const std::string& origin,
                        std::vector<std::string>* notes) {
  int64_t opset = 0;
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  }
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(onnx::ONNX_DOMAIN);
  const int64_t known = it == ranges.end() ? 0 : it->second.second;
  const bool strict = opset <= known;
  if (!strict) {
    notes->push_back("opset " + std::to_string(opset) + " is newer than this ONNX library's (" +
                     std::to_string(known) +
                     "): shape inference ran in lenient mode, ops it does not know may be "
                     "uncosted");
  }
  if (strict && opset > 0) {
    if (Status s = CheckStandardOps(model.graph(), opset, origin); !s.ok()) return s;
  }
  onnx::ModelProto work = InferenceCopy(model);
  // The library infers node by node in one pass; where it stops (an op it does not know, a shape
  // computed by a chain its data propagation does not follow), the shapes filled and the values
  // folded here let the next pass go on.
  constexpr int kMaxPasses = 400;
  const GuardedRegistry registry;
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    try {
      onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                          /*strict_mode_val=*/strict ? 1 : 0,
                                          /*data_prop_val=*/true);
      onnx::shape_inference::InferShapes(work, &registry, options);
    } catch (const std::exception& e) {
      return Status::Invalid(origin, "shape inference failed: " + OneLine(e.what()));
    } catch (...) {
      return Status::Invalid(origin, "shape inference failed (unknown error)");
    }
    ModelValues values = CollectValues(work.graph());
    values.opset = opset;
    const auto missing = MissingShapes(work.graph(), values);
    onnx::GraphProto* graph = work.mutable_graph();
    const int folded = FoldShapeComputations(graph, values);
    if (missing.empty() && folded == 0) break;
    for (const auto& [name, info] : missing) SetValueInfo(graph, name, info);
  }
  // Back to the model: what inference found (the rewritten nodes stay in the copy).
  *model.mutable_graph()->mutable_value_info() = work.graph().value_info();
  for (int i = 0; i < model.graph().output_size(); ++i) {
    *model.mutable_graph()->mutable_output(i)->mutable_type() = work.graph().output(i).type();
  }
  return Status::Ok();
}

ModelValues CollectValues(const onnx::GraphProto& graph) {
  ModelValues out;
  auto add = [&](const onnx::ValueInfoProto& vi) {
    ValueInfo info;
    if (vi.type().has_tensor_type()) {
      const auto& tt = vi.type().tensor_type();
      info.elem_type = tt.elem_type();
      if (tt.has_shape()) {
        info.known = true;
        for (const auto& d : tt.shape().dim()) {
          if (!d.has_dim_value() || d.dim_value() < 0) {
            info.known = false;
            break;
          }
          info.dims.push_back(d.dim_value());
        }
        if (info.known && !ElementCount(info.dims)) info.known = false;
      }
    }
    auto& slot = out.values[vi.name()];
    if (!slot.known) slot = info;
  };
  for (const auto& vi : graph.input()) add(vi);
  for (const auto& vi : graph.output()) {
    add(vi);
    out.graph_outputs.insert(vi.name());
  }
  for (const auto& vi : graph.value_info()) add(vi);
  for (const auto& t : graph.initializer()) {
    ValueInfo info;
    info.known = true;
    info.dims.assign(t.dims().begin(), t.dims().end());
    info.elem_type = t.data_type();
    out.values[t.name()] = info;
    out.initializers[t.name()] = &t;
  }
  return out;
}

}  // namespace roofline::onnx_frontend
