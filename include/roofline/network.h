// General networks (CNNs, ViTs, diffusion UNets): the graph file format of docs/graph-format.md
// in memory, its readers (JSON graph files, ONNX models) and its lowering to the operator IR.
#ifndef ROOFLINE_NETWORK_H_
#define ROOFLINE_NETWORK_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/dtype.h"
#include "roofline/graph.h"
#include "roofline/status.h"

namespace roofline {

/// One term of a shape entry: num/den times the product of `dims` (none: a constant).
struct ShapeTerm {
  int64_t num = 0;
  int64_t den = 1;
  std::vector<std::string> dims;  ///< symbolic dimension names, repeats multiply
};

/// One entry of a tensor shape: a constant, or a sum of terms over symbolic dimensions, e.g.
/// "batch", "4*batch", "height*width/64+77" (it must be a whole number once bound).
struct ShapeEntry {
  int64_t value = 0;             ///< the constant (when `terms` is empty)
  std::vector<ShapeTerm> terms;  ///< empty: a constant

  bool symbolic() const { return !terms.empty(); }
  static ShapeEntry Const(int64_t v) { return {v, {}}; }
  /// factor x one dimension ("batch", "4*batch").
  static ShapeEntry Sym(std::string name, int64_t factor = 1) {
    return {0, {ShapeTerm{factor, 1, {std::move(name)}}}};
  }
  /// The graph-file text of a symbolic entry ("height*width/64+77"); a constant's digits.
  std::string ToString() const;
};

/// Parses a shape entry's text ("4*batch", "height*width/64+77", "height/8-1"): terms joined by
/// + or -, each integers and dimension names joined by *, optionally divided by an integer
/// (1..2^20). Every name must be in `dims`. The error says what is wrong (no file or field).
Result<ShapeEntry> ParseShapeExpression(std::string_view text,
                                        const std::vector<std::string>& dims);

struct NetTensor {
  std::string name;
  std::vector<ShapeEntry> shape;
  DType dtype = DType::kFp32;
  /// Storage bits of dtypes the cost model has no DType for (int64: 64, int32: 32, int16: 16,
  /// uint8 and bool: 8; `dtype` then holds kInt8); 0: BitsOf(dtype). Set both with SetNetDType.
  int bits = 0;
  /// An integer, boolean or complex tensor held under a floating-point DType of its size (ONNX
  /// INT64 as fp64, ...): never re-typed by RetypeNetwork.
  bool fixed_dtype = false;
  bool weight = false;    ///< a parameter or buffer: read once per pass
  bool parameter = true;  ///< counted in the parameter total (false for buffers); weights only

  /// Bytes per element (0.5 for 4-bit types).
  double ElementBytes() const { return (bits > 0 ? bits : BitsOf(dtype)) / 8.0; }
};

/// Sets `dtype` and `bits` of a tensor from a graph-file dtype name (fp64 fp32 tf32 bf16 fp16
/// fp8 fp4 int64 int32 int16 int8 uint8 int4 bool). False when the name is unknown.
bool SetNetDType(NetTensor& tensor, std::string_view name);
/// The graph-file dtype name of a tensor ("int64", "bf16").
std::string NetDTypeName(const NetTensor& tensor);
/// The accepted graph-file dtype names, space separated.
std::string NetDTypeNames();

/// Node attributes: numbers (ints, floats and bools as 0/1, lists as vectors) and strings.
struct NetAttrs {
  std::map<std::string, std::vector<double>> numbers;
  std::map<std::string, std::string> strings;

  bool Has(const std::string& key) const;
  /// The first number of `key`, or `fallback`.
  double Number(const std::string& key, double fallback) const;
  int64_t Int(const std::string& key, int64_t fallback) const;
  /// All numbers of `key` as integers (empty when absent).
  std::vector<int64_t> Ints(const std::string& key) const;
  std::string String(const std::string& key, const std::string& fallback = "") const;
};

struct NetNode {
  std::string name;
  std::string op;      ///< matmul, linear, conv, attention, elementwise, norm, softmax, pool,
                       ///< reduce, resize, embedding, copy, view, unknown (docs/graph-format.md)
  std::string module;  ///< module path that issued it ("layer1.0.conv1"), may be empty
  std::string source;  ///< the framework op ("aten::addmm", "Gemm")
  std::vector<std::string> inputs, outputs;  ///< tensor names
  NetAttrs attrs;
};

/// A whole network.
struct NetworkGraph {
  std::string name;
  std::string producer;
  std::string origin;  ///< the file it was read from (error messages)
  /// Symbolic dimensions and their defaults (nullopt: must be bound with --dim).
  std::vector<std::pair<std::string, std::optional<int64_t>>> dims;
  /// Dimensions whose values must be multiples of a number (the file's "multiple"): the sizes
  /// are exact there only (an image side that the network halves three times: 8).
  std::map<std::string, int64_t> dim_multiples;
  std::vector<NetTensor> tensors;
  std::vector<NetNode> nodes;
  std::vector<std::string> inputs, outputs;
  std::vector<std::string> notes;  ///< what a reader noticed (missing external data, ...)
  /// fp32 convolutions run on TF32 tensor cores (PyTorch's default for cuDNN convolutions; set
  /// by RetypeNetwork): their bytes stay fp32's.
  bool fp32_conv_on_tf32 = false;

  const NetTensor* FindTensor(std::string_view name) const;
};

/// Reads a graph file (docs/graph-format.md). Errors name the file and the JSON path
/// ("<file>: nodes[3].inputs[1]: ...").
Result<NetworkGraph> ParseGraphJson(std::string_view text, const std::string& origin);
Result<NetworkGraph> LoadGraphFile(const std::string& path);
/// Writes a graph in the file format (pretty JSON).
std::string GraphToJson(const NetworkGraph& graph);

/// How `--dtype` and `--tf32` re-type a graph (a capture in fp32 run as bf16, fp32 matmuls on
/// TF32 tensor cores).
struct NetRetype {
  std::optional<DType> dtype;  ///< every floating-point tensor: fp32, bf16, fp16 or fp8
  bool tf32 = false;           ///< then: fp32 tensors stay 4 bytes, their products run as TF32
  /// Without `tf32`: fp32 convolutions alone run as TF32, as PyTorch runs them by default
  /// (torch.backends.cudnn.allow_tf32 is true; torch.backends.cuda.matmul.allow_tf32 false).
  bool conv_tf32 = false;
};

/// The flags a re-typing stands for ("--dtype bf16 --tf32"; "" when it changes nothing).
std::string DescribeRetype(const NetRetype& retype);

/// Re-types `graph`'s floating-point tensors (fp64, fp32, tf32, bf16 and fp16: activations,
/// weights and buffers; integer, 8-bit and 4-bit tensors are left as they are) and adds a note
/// saying how many changed. Returns that number. Errors name `flag`: a dtype other than fp32,
/// bf16, fp16 or fp8.
Result<int> RetypeNetwork(NetworkGraph& graph, const NetRetype& retype,
                          const std::string& flag = "--dtype");

/// Symbolic dimensions bound from the command line (`--dim batch=8`).
using DimBindings = std::map<std::string, int64_t>;

/// Parses "name=value" (`--dim`) into `dims`; errors name the flag and the dimension.
Status ParseDimBinding(const std::string& text, DimBindings& dims);
/// The value of every symbolic dimension of `graph`: its binding, else its default. Errors name
/// the file and the dimension: unbound without a default, bound but unknown to the graph, or a
/// value outside 1..2^40, or not a multiple of the dimension's `multiple`.
Result<DimBindings> ResolveDims(const NetworkGraph& graph, const DimBindings& bindings);
/// The concrete shape of a tensor under resolved dims; errors on an unknown dimension, an entry
/// that is not a whole number there ("height/8" at height 100), or a size (any entry or the
/// element count) outside 0..2^40 per entry / above 2^62 in all.
Result<std::vector<int64_t>> ResolveShape(const NetTensor& tensor, const DimBindings& dims);

/// What a lowered node is besides its op.
struct NetKernelInfo {
  std::string node;    ///< node name
  std::string module;  ///< module path ("layer1.0.conv1"), may be empty
  std::string op;      ///< graph op kind ("conv", "norm", ...)
  std::string source;  ///< framework op
  /// FLOPs of the matrix part (matmul, linear, conv, attention: 2 per multiply-accumulate, no
  /// bias, no softmax): the torch.utils.flop_counter convention. 0 for other ops.
  double matrix_flops = 0;
  bool matrix = false;  ///< a matmul, linear, conv or attention node
};

/// The nodes that could not be costed (op `unknown`): never dropped silently.
struct UncostedNodes {
  int64_t count = 0;
  double output_bytes = 0;    ///< bytes of their outputs
  double share_of_nodes = 0;  ///< count / all nodes that are not views
  double share_of_bytes = 0;  ///< output bytes / output bytes of all nodes that are not views
  std::map<std::string, int64_t> by_op;  ///< source op ("aten::foo", attrs.op) -> count
};

/// A network lowered to the operator IR: one op per costed node, in node order, with what the
/// cost model needs beside the ops (matrix FLOPs, parameters, the nodes it could not cost).
struct LoweredNetwork {
  std::string name;
  DimBindings dims;                 ///< every symbolic dimension's value
  Graph graph;                      ///< one op per costed node
  std::vector<NetKernelInfo> info;  ///< parallel to graph.ops()
  double matrix_flops = 0;          ///< sum of NetKernelInfo::matrix_flops
  double parameters = 0;            ///< elements of weight tensors with parameter != false
  double weight_bytes = 0;          ///< bytes of every weight tensor (parameters and buffers)
  int64_t nodes = 0;                ///< all nodes of the graph
  int64_t views = 0;                ///< `view` nodes (no kernel)
  UncostedNodes uncosted;
  std::vector<std::string> notes;
};

/// Binds the graph's dims (`bindings` over defaults; errors name the dimension) and lowers
/// every node to an op of the IR. Errors name the file and the node.
Result<LoweredNetwork> LowerNetwork(const NetworkGraph& graph, const DimBindings& bindings);

/// The most bytes of activations alive at once in an eager forward pass at `dims` (resolved):
/// every node's outputs are allocated when it runs and freed after their last reader; a view
/// shares its input's storage; graph inputs live for the whole pass (the caller holds them),
/// outputs from their node to the end; weights are
/// not counted (LoweredNetwork::weight_bytes). No allocator rounding or caching. Errors as
/// ResolveShape's.
Result<double> PeakActivationBytes(const NetworkGraph& graph, const DimBindings& dims);

/// A network preset: a graph file of data/graphs/ (diffusion and vision models captured from
/// their libraries' own classes and configs by scripts/capture-presets.py).
struct GraphPreset {
  std::string id;      ///< the file name without .json ("sdxl-unet")
  std::string text;    ///< the graph file
  std::string origin;  ///< "<embedded>/data/graphs/sdxl-unet.json" or the file's path
};

/// The graph presets: $ROOFLINE_DATA_DIR/graphs/*.json when that variable is set (a missing
/// folder is no presets), else the copies embedded at build time; sorted by id.
Result<std::vector<GraphPreset>> LoadGraphPresets();

/// The ids of the graph presets (from the same place as LoadGraphPresets), without reading them.
std::vector<std::string> GraphPresetIds();

/// The preset called `id`, parsed; nullopt when no preset has that id.
Result<std::optional<NetworkGraph>> FindGraphPreset(const std::string& id);

/// What `roofline models list` shows of a graph preset, at its default dims.
struct GraphPresetInfo {
  std::string id;
  std::string name;  ///< the graph's name ("Stable Diffusion XL base UNet")
  std::string note;  ///< its first note: where it was captured from and what one pass costs
  DimBindings dims;  ///< the symbolic dimensions and their defaults
  int64_t nodes = 0;
  int64_t uncosted = 0;  ///< nodes that could not be costed
  double parameters = 0;
  double matrix_flops = 0;  ///< at the default dims
};

/// Every graph preset parsed and lowered at its default dims.
Result<std::vector<GraphPresetInfo>> DescribeGraphPresets();

/// Reads an ONNX model, binds its symbolic input dimensions from `dims` (every symbolic input
/// dimension must be bound, or the error names it), runs ONNX shape inference and maps nodes to
/// the ops of docs/graph-format.md. Only shapes are needed: external weight data need not be
/// present. Defined only when the project was built with the ONNX library (else an error).
Result<NetworkGraph> LoadOnnxModel(const std::string& path, const DimBindings& dims);
/// True when the ONNX frontend was compiled in.
bool OnnxFrontendAvailable();

/// True when MODEL names an ONNX model (`.onnx`).
bool IsOnnxFile(const std::string& model);
/// True when MODEL is the id of a graph preset and no file (or folder with a config.json) of
/// that name exists.
bool IsGraphPresetId(const std::string& model);
/// True when MODEL is an ONNX model, a graph file (JSON with "format": "roofline-graph") or the
/// id of a graph preset; false for everything that resolves as an LLM config.
bool IsNetworkInput(const std::string& model);

/// Loads a graph file, graph preset or ONNX model with `dims` bound, then re-types it
/// (RetypeNetwork; nothing when `retype` changes nothing). `analysis_dims` receives the bindings
/// the analysis should apply (an ONNX model's dims are bound while loading).
Result<NetworkGraph> LoadNetwork(const std::string& model, const DimBindings& dims,
                                 const NetRetype& retype, DimBindings* analysis_dims);

}  // namespace roofline

#endif  // ROOFLINE_NETWORK_H_
