// Internals of the ONNX frontend shared by its files: the loader (onnx_frontend.cc), dimension
// binding and shape inference (onnx_shapes.cc, onnx_shape_fill.cc), tensor checks
// (onnx_tensors.cc) and the node mapping (onnx_ops.cc, onnx_attention.cc, onnx_patterns.cc).
#ifndef ROOFLINE_SRC_ONNX_ONNX_INTERNAL_H_
#define ROOFLINE_SRC_ONNX_ONNX_INTERNAL_H_

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "roofline/network.h"

namespace roofline::onnx_frontend {

/// What shape inference (or the file) says about one value.
struct ValueInfo {
  bool known = false;         ///< every dimension is a non-negative constant
  std::vector<int64_t> dims;  ///< valid when `known`
  int32_t elem_type = 0;      ///< onnx::TensorProto::DataType (0: unknown)
};

/// Everything the node mapping needs to know about the model's values.
struct ModelValues {
  std::map<std::string, ValueInfo> values;                       ///< by value name
  std::map<std::string, const onnx::TensorProto*> initializers;  ///< weights, by name
  std::set<std::string> constants;  ///< outputs of Constant nodes and of foldable subgraphs
  std::set<std::string> graph_outputs;
  int64_t opset = 0;  ///< version of the default ("" / ai.onnx) domain

  const ValueInfo* Find(const std::string& name) const;
  /// Known static dims of `name`, or nullopt.
  std::optional<std::vector<int64_t>> Dims(const std::string& name) const;
  bool IsInitializer(const std::string& name) const { return initializers.count(name) > 0; }
  /// An initializer or a constant computed at load time.
  bool IsConstant(const std::string& name) const {
    return IsInitializer(name) || constants.count(name) > 0;
  }
};

// ---- onnx_shapes.cc ----

/// Replaces the symbolic dimensions of the graph inputs with the bound values. Fails naming the
/// input and the dimension when one is unbound, and naming the binding when the model has no such
/// dimension. `used` receives the bindings that matched, in first-use order.
Status BindInputDims(onnx::ModelProto& model, const DimBindings& dims, const std::string& origin,
                     std::vector<std::pair<std::string, int64_t>>* used);

/// Runs ONNX shape inference (strict when the library knows the model's opset), then fills what
/// it cannot infer (MissingShapes) and folds what it could compute but does not
/// (FoldShapeComputations) and runs it again, until nothing changes. Inference runs on a copy of
/// the model without the data of large initializers (the folding rewrites nodes there); `model`
/// receives the inferred value_info and output types. Errors name the file and, when the
/// library's message has it, the node.
Status InferModelShapes(onnx::ModelProto& model, const std::string& origin,
                        std::vector<std::string>* notes);

/// Value infos of the graph after inference (inputs, outputs, value_info, initializers).
ModelValues CollectValues(const onnx::GraphProto& graph);

// ---- onnx_fold.cc ----

/// Evaluates the nodes of `graph` whose value is computable from constants and static shapes
/// (small integer and float tensors: Shape, Gather, Concat, Slice, Unsqueeze, Cast, arithmetic,
/// Equal/Where, ConstantOfShape, Range, Expand, Reshape...) and replaces each by a Constant node
/// with the same name and output, so that shape inference sees the data. `values` gives the
/// static shapes known so far. Returns the number of nodes replaced.
int FoldShapeComputations(onnx::GraphProto* graph, const ModelValues& values);

// ---- onnx_tensors.cc ----

/// Dims of an initializer, checked: non-negative, element count fits int64, stored data consistent
/// with the dims (external data: only the declared length is checked).
Status CheckInitializer(const onnx::TensorProto& t, const std::string& origin);

/// Fails naming the value and the node that writes it when inference gave a static shape whose
/// element count (or byte size) overflows: huge --dim values or hostile files.
Status CheckValueSizes(const onnx::GraphProto& graph, const std::string& origin);

/// Range checks of the window attributes of convolutions and pooling (kernel_shape, strides,
/// dilations, pads, output_padding), which libonnx's shape inference trusts: a hostile value
/// makes it loop for minutes. Errors name the node and the attribute.
Status CheckNodeAttributes(const onnx::GraphProto& graph, const std::string& origin);

/// The roofline dtype of an ONNX element type (unknown types map by byte size).
DType DTypeOfElemType(int32_t elem_type);
/// True for ONNX's floating-point element types (float, double, float16, bfloat16, float8):
/// the ones `--dtype` may re-type.
bool IsFloatElemType(int32_t elem_type);

/// Bytes per element of an ONNX element type (0 for strings and unknown types).
double ElemTypeBytes(int32_t elem_type);

/// Product of `dims`, or nullopt when it overflows int64.
std::optional<int64_t> ElementCount(const std::vector<int64_t>& dims);

// ---- onnx_shape_fill.cc ----

/// Shapes the library could not infer, for ops it does not know (newer opsets, com.microsoft
/// contrib ops) or infers only partly (Einsum) whose output shape follows simply from the
/// inputs: value name -> (dims, element type).
std::map<std::string, ValueInfo> MissingShapes(const onnx::GraphProto& graph,
                                               const ModelValues& values);

/// An Einsum equation resolved against its operand shapes: "..." expanded into digit labels.
struct EinsumSpec {
  std::vector<std::string> operands;  ///< one label per axis of each operand
  std::string output;                 ///< the output's labels (implicit form resolved)
  std::map<char, int64_t> extent;     ///< size of every label
};

/// Nullopt when the equation does not match the operand ranks.
std::optional<EinsumSpec> ParseEinsum(std::string equation,
                                      const std::vector<std::vector<int64_t>>& shapes);

/// Marks the values computable at load time (Constant outputs, shapes of static tensors and
/// whatever is computed only from those and from initializers).
void MarkConstantValues(const onnx::GraphProto& graph, ModelValues* values);

// ---- onnx_ops.cc (the Mapper of onnx_mapper.h; attention ops in onnx_attention.cc) ----

/// Maps every node of `graph` to NetNodes appended to `out->nodes` (adds the tensors they
/// reference, including synthetic ones, to `out->tensors`).
Status MapNodes(const onnx::GraphProto& graph, const ModelValues& values, NetworkGraph* out);

/// Module path of a PyTorch-exported node name ("/layer1/layer1.0/conv1/Conv" -> layer1.0.conv1).
std::string ModuleOfNodeName(const std::string& name);

// ---- onnx_patterns.cc ----

/// A group of ONNX nodes fused into one elementwise NetNode (GELU, SiLU).
struct FusedActivation {
  std::vector<int> nodes;            ///< indices into graph.node(), in graph order
  std::string function;              ///< "gelu", "gelu_tanh", "silu"
  std::string input;                 ///< the activation's input value
  std::vector<std::string> weights;  ///< non-scalar initializers read inside (a fused bias)
  std::string output;                ///< its output value
  int flops_per_element = 0;
};

/// Finds GELU (erf and tanh forms) and SiLU subgraphs: connected elementwise nodes whose
/// intermediates are used only inside, with one non-constant input and one output.
std::vector<FusedActivation> FindFusedActivations(const onnx::GraphProto& graph,
                                                  const ModelValues& values);

/// FLOPs per output element of an elementwise ONNX op (0 when `op_type` is not elementwise).
int ElementwiseFlops(const std::string& op_type);

}  // namespace roofline::onnx_frontend

#endif  // ROOFLINE_SRC_ONNX_ONNX_INTERNAL_H_
